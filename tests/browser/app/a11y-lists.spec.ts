// axe-core over the newer screens: the grouped trash and its
// preview dialog, the delete question that names subpages, search results with the tag
// filter and the pager, and the empty workspace's first-page offer. Any "serious" or
// "critical" violation fails (as in a11y.spec.ts).
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { createPage, expect, fmt, test } from "../fixtures";

async function axe(page: Page, where: string): Promise<void> {
  await page.waitForTimeout(150); // let late renders settle
  const tags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];
  const result = await new AxeBuilder({ page }).withTags(tags).analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" "))}`);
  expect.soft(bad, bad.join("\n")).toEqual([]);
}

test("axe: first-page offer, delete question, grouped trash and preview, paged search", async ({ page, en, user }) => {
  void user;
  await page.goto("/app/");
  await expect(page.getByTestId("empty-workspace")).toBeVisible();
  await axe(page, "first page offer");

  await createPage(page.request, { title: "Guide", content: "# Guide\n\nA guide. #docs" });
  await createPage(page.request, { title: "Guide Part", parent: "guide", content: "# Guide Part\n\nMore. #docs" });
  for (let i = 0; i < 55; i += 5) {
    await Promise.all(
      Array.from({ length: 5 }, (_, k) =>
        createPage(page.request, { title: `Note ${i + k}`, content: `# Note ${i + k}\n\nA guide note. #docs` }),
      ),
    );
  }
  await page.goto("/app/-/search?q=guide&tag=docs");
  await expect(page.getByTestId("tag-filter")).toBeVisible();
  await expect(page.getByRole("navigation", { name: en["search.pages"] })).toBeVisible();
  await axe(page, "search with tag filter and pager");

  await page.goto("/app/guide");
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.delete"] }).click();
  const ask = page.getByRole("dialog", { name: en["common.confirm"] });
  await expect(ask.getByRole("listitem")).toHaveText(["Guide Part"]);
  await axe(page, "delete question naming subpages");
  const gone = page.waitForResponse((r) => r.request().method() === "DELETE" && r.url().includes("/api/pages/guide"));
  await ask.getByRole("button", { name: en["page.delete"] }).click();
  expect((await gone).status()).toBe(204);

  await page.goto("/app/-/trash");
  await expect(page.getByTestId("trash-list").locator("tr")).toHaveCount(2);
  await axe(page, "grouped trash");
  await page.getByRole("button", { name: `${en["trash.preview"]}: Guide Part` }).click();
  const preview = page.getByRole("dialog", { name: fmt(en["trash.preview_title"]!, { title: "Guide Part" }) });
  await expect(preview).toContainText("More.");
  await axe(page, "trash preview");
});
