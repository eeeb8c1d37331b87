// A phone-sized window (360×740): no screen scrolls sideways, the sidebar is a drawer
// opened by a labelled button; the editor's source and preview are two tabs (390×844).
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { createPage, expect, test } from "../fixtures";

/** axe-core's serious and critical findings (WCAG 2.1 A/AA and best practice) in the editor. */
async function axeFindings(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page })
    .include(".editor")
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"])
    .analyze();
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.help} ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

test.use({ viewport: { width: 360, height: 740 } });

async function noSidewaysScroll(page: Page, where: string): Promise<void> {
  await page.waitForTimeout(100);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  const wide = await page.evaluate(() =>
    [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > 361 && getComputedStyle(el).position !== "fixed")
      .slice(0, 6)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).replace(/ /g, ".")} → ${Math.round(el.getBoundingClientRect().right)}`),
  );
  expect(width, `${where}: page is ${width}px wide; ${wide.join("; ")}`).toBeLessThanOrEqual(360);
}

test("phone: no horizontal overflow, a drawer for the tree, a tabbed editor", async ({ page, en, user }) => {
  void user;
  const long = "A rather long paragraph with a very-long-unbroken-identifier-that-could-overflow-the-narrow-column-easily and a table.\n\n| Column one | Column two | Column three | Column four |\n|---|---|---|---|\n| a | b | c | d |\n\n```\nsome code with a long line that should scroll inside its block and not push the page sideways at all\n```\n";
  await createPage(page.request, { title: "Runbooks", content: "# Runbooks\n\n" + long + "\nSee [[Deploy]]." });
  await createPage(page.request, { title: "Deploy", parent: "runbooks", content: "# Deploy\n\nShip it. Back to [[Runbooks]]." });
  await page.request.put("/api/pages/deploy", { data: { content: "# Deploy\n\nShip it carefully." } });

  await page.goto("/app/runbooks");
  await expect(page.locator(".page-title")).toHaveText("Runbooks");
  await noSidewaysScroll(page, "page view");

  // The tree is a drawer: hidden, then opened by the labelled button, closed on navigation.
  const nav = page.getByRole("navigation", { name: en["nav.pages"] });
  const toggle = page.getByRole("button", { name: en["nav.pages"], exact: true });
  await expect(nav).toBeHidden();
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await toggle.click();
  await expect(nav).toBeVisible();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  const box = (await nav.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(360);
  await noSidewaysScroll(page, "drawer open");
  await nav.getByRole("button", { name: en["tree.expand"] }).first().click();
  await nav.getByRole("link", { name: "Deploy", exact: true }).click();
  await expect(page.locator(".page-title")).toHaveText("Deploy");
  await expect(nav).toBeHidden();
  // Escape closes it too.
  await toggle.click();
  await expect(nav).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(nav).toBeHidden();

  // The editor: Write and Preview tabs, each full width (editor-tabs below for more).
  await page.goto("/app/runbooks/edit");
  const source = page.getByTestId("source-editor");
  await expect(source).toBeVisible();
  await expect(page.getByRole("toolbar")).toBeVisible();
  await noSidewaysScroll(page, "editor");
  expect((await page.locator(".editor-source").boundingBox())!.width).toBeGreaterThan(300);
  await page.getByRole("tab", { name: en["editor.preview"] }).click();
  await expect(page.locator(".editor-preview table")).toBeVisible();
  await noSidewaysScroll(page, "editor preview");
  await page.getByRole("button", { name: en["page.cancel"] }).click();

  for (const [url, ready] of [
    ["/app/-/search?q=deploy&mode=keyword", ".results li"],
    ["/app/deploy/history", "table"],
    ["/app/-/trash", "h1"],
    ["/app/-/settings", ".settings h1"],
    ["/app/-/workspace", ".settings h1"],
    ["/app/-/insights", ".insights-grid"],
    ["/app/-/graph", ".graph .node"],
  ] as const) {
    await page.goto(url);
    await expect(page.locator(ready).first()).toBeVisible();
    await noSidewaysScroll(page, url);
  }
  const history = await page.request.get("/api/pages/deploy/history");
  const sha = (await history.json()).items[0].sha;
  await page.goto(`/app/deploy/history/${sha}`);
  await expect(page.locator(".diff, .diff-split").first()).toBeVisible();
  await noSidewaysScroll(page, "revision with diff");

  await page.goto("/app/runbooks");
  await expect(page.locator(".page-title")).toHaveText("Runbooks");
  await page.keyboard.press("Control+k");
  await expect(page.locator(".palette")).toBeVisible();
  await noSidewaysScroll(page, "palette");
});

test("phone: sign-in and register fit", async ({ page }) => {
  for (const url of ["/app/login", "/app/register"]) {
    await page.goto(url);
    await expect(page.locator("form")).toBeVisible();
    await noSidewaysScroll(page, url);
  }
});

test.describe("a phone's editor", () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test("Write and Preview are two tabs, and the source fills the screen", async ({ page, en, user }) => {
    void user;
    await createPage(page.request, { title: "Notes", content: "# Notes\n\nSome **bold** words.\n" });
    await page.goto("/app/notes/edit");
    const tabs = page.getByRole("tablist", { name: en["editor.tabs"] });
    const write = tabs.getByRole("tab", { name: en["editor.tab.write"] });
    const previewTab = tabs.getByRole("tab", { name: en["editor.preview"] });
    const source = page.getByTestId("source-editor");
    const preview = page.getByRole("tabpanel", { name: en["editor.preview"] });
    await expect(source).toBeVisible();
    await expect(write).toHaveAttribute("aria-selected", "true");
    await expect(previewTab).toHaveAttribute("aria-selected", "false");
    await expect(page.getByRole("tabpanel", { name: en["editor.tab.write"] })).toBeVisible();
    await expect(preview).toBeHidden();
    await expect(page.getByRole("toolbar", { name: en["editor.toolbar"] })).toBeVisible();
    expect(await axeFindings(page)).toEqual([]);

    // The source takes the height of the screen, not a small box above a stacked preview.
    const box = (await page.locator(".editor-source").boundingBox())!;
    expect(box.width).toBeGreaterThan(340);
    expect(box.y + box.height).toBeGreaterThan(844 - 40);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    expect(box.height).toBeGreaterThan(500);
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(844);

    // Type, then look at the preview: the source is hidden, the preview fills the screen.
    await source.click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("A new line.");
    await previewTab.click();
    await expect(previewTab).toHaveAttribute("aria-selected", "true");
    await expect(preview).toBeVisible();
    await expect(source).toBeHidden();
    await expect(preview.locator("strong")).toHaveText("bold");
    await expect(preview).toContainText("A new line.");
    const pre = (await preview.boundingBox())!;
    expect(pre.y + pre.height).toBeGreaterThan(844 - 40);
    expect(await axeFindings(page)).toEqual([]);

    // Arrow keys switch tabs (WAI-ARIA tabs); back in Write, typing goes on where it was.
    await previewTab.focus();
    await page.keyboard.press("ArrowLeft");
    await expect(write).toHaveAttribute("aria-selected", "true");
    await expect(write).toBeFocused();
    await expect(source).toBeVisible();
    await page.keyboard.press("ArrowRight");
    await expect(previewTab).toBeFocused();
    await expect(preview).toBeVisible();
    await page.keyboard.press("Home");
    await expect(source).toBeVisible();
    await source.click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type(" More.");
    await page.keyboard.press("Control+s");
    await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
    expect(await (await page.request.get("/api/pages/notes/raw")).text()).toBe("# Notes\n\nSome **bold** words.\nA new line. More.");
  });

  test("the preview opens at the part of the page the source showed", async ({ page, en, user }) => {
    void user;
    let body = "";
    for (let i = 1; i <= 40; i++) body += `## Section ${i}\n\n` + "Some text here. ".repeat(20) + "\n\n";
    await createPage(page.request, { title: "Long", content: "# Long\n\n" + body });
    await page.goto("/app/long/edit");
    await page.getByTestId("source-editor").hover();
    for (let i = 0; i < 6; i++) await page.mouse.wheel(0, 800);
    /** The number of the first section heading whose top shows in `scroller`. */
    const first = (scroller: string, items: string) =>
      page.evaluate(
        ([scroller, items]) => {
          const top = document.querySelector(scroller)!.getBoundingClientRect().top;
          const el = [...document.querySelectorAll(items)].find((l) => l.getBoundingClientRect().top >= top - 2 && /Section \d+$/.test(l.textContent!));
          return el ? Number(/(\d+)$/.exec(el.textContent!)![1]) : -1;
        },
        [scroller, items] as const,
      );
    // Once the wheel's scrolling has come to rest.
    const scrolled = () => page.locator(".cm-scroller").evaluate((el) => el.scrollTop);
    await expect
      .poll(async () => {
        const before = await scrolled();
        await page.waitForTimeout(150);
        return before > 0 && before === (await scrolled());
      })
      .toBe(true);
    const source = await first(".cm-scroller", ".cm-line");
    expect(source).toBeGreaterThan(5);
    await page.getByRole("tab", { name: en["editor.preview"] }).click();
    await expect.poll(async () => Math.abs((await first(".editor-preview", ".editor-preview h2")) - source)).toBeLessThanOrEqual(1);
  });
});
