// A phone-sized window (360×740): no screen scrolls sideways, the sidebar is a drawer
// opened by a labelled button, and the editor stacks the source above the preview.
import type { Page } from "@playwright/test";
import { createPage, expect, test } from "../fixtures";

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

test("phone: no horizontal overflow, a drawer for the tree, a stacked editor", async ({ page, en, user }) => {
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

  // The editor: source above preview, both full width.
  await page.goto("/app/runbooks/edit");
  const source = page.getByTestId("source-editor");
  await expect(source).toBeVisible();
  await noSidewaysScroll(page, "editor");
  const src = (await page.locator(".editor-source").boundingBox())!;
  const pre = (await page.locator(".editor-preview").boundingBox())!;
  expect(pre.y).toBeGreaterThanOrEqual(src.y + src.height - 1);
  expect(src.width).toBeGreaterThan(300);
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
