// On a wide screen, where the source and the preview show side by side, the preview
// follows the source's scroll by source line: the section at the top of the source is the
// one at the top of the preview, also when the sections differ in height.
import type { Page } from "@playwright/test";
import { createPage, expect, test } from "../fixtures";

test.use({ viewport: { width: 1280, height: 800 } });

/** The number of the first "Section N" heading whose top is inside `scroller` (the
 *  source's lines or the preview's headings). */
async function firstSection(page: Page, scroller: string, items: string): Promise<number> {
  return page.evaluate(
    ([scroller, items]) => {
      const top = document.querySelector(scroller)!.getBoundingClientRect().top;
      for (const el of document.querySelectorAll(items)) {
        const m = /^#* ?Section (\d+)$/.exec(el.textContent ?? "");
        if (m && el.getBoundingClientRect().top >= top - 2) return Number(m[1]);
      }
      return -1;
    },
    [scroller, items] as const,
  );
}

test("the preview follows the source's scroll, by section", async ({ page, en, user }) => {
  void user;
  // Sections of very different heights (a long paragraph, a table, short lines), so a
  // merely proportional scroll would be off by several sections.
  let body = "";
  for (let i = 1; i <= 60; i++) {
    body += `## Section ${i}\n\n`;
    if (i % 3 === 0) body += "Long text. ".repeat(120) + "\n\n";
    else if (i % 3 === 1) body += "| a | b |\n|---|---|\n" + "| 1 | 2 |\n".repeat(8) + "\n";
    else body += "short\n\n";
  }
  await createPage(page.request, { title: "Long Read", content: "# Long Read\n\n" + body });
  await page.goto("/app/long-read/edit");
  const preview = page.getByRole("region", { name: en["editor.preview"] });
  await expect(preview.getByRole("heading", { name: "Section 60" })).toBeAttached();
  const scroller = ".editor-source .cm-scroller";
  expect(await preview.evaluate((el) => el.scrollTop)).toBe(0);

  // Scrolling the source with the mouse wheel brings the preview along, section by section.
  await page.getByTestId("source-editor").hover();
  let seen = 0;
  for (let step = 0; step < 8; step++) {
    await page.mouse.wheel(0, 700);
    // The section at the top of the source is at the top of the preview (give or take one).
    await expect
      .poll(async () => {
        const src = await firstSection(page, scroller, ".cm-line");
        seen = Math.max(seen, src);
        if (src <= 0) return Infinity;
        return Math.abs((await firstSection(page, ".editor-preview", ".editor-preview h2")) - src);
      })
      .toBeLessThanOrEqual(1);
  }
  expect(seen).toBeGreaterThan(10);

  // At the end of the source, the end of the preview.
  await page.getByTestId("source-editor").click();
  await page.keyboard.press("Control+End");
  await expect.poll(() => preview.evaluate((el) => el.scrollHeight - el.clientHeight - el.scrollTop)).toBeLessThanOrEqual(2);
  // And back at the top.
  await page.keyboard.press("Control+Home");
  await expect.poll(() => preview.evaluate((el) => el.scrollTop)).toBe(0);
});
