// Navigation: anchor jumps land below the sticky header; the page tree is an ARIA tree
// driven by the keyboard, with a filter box; the move dialog searches pages; the sidebar
// can be resized (and keeps its width).
import type { Locator, Page } from "@playwright/test";
import { createPage, expect, fmt, pageUrl, test } from "../fixtures";

/** The heading is on screen, and its top is not under the sticky header. */
async function expectBelowHeader(page: Page, heading: Locator): Promise<void> {
  await expect(heading).toBeInViewport();
  await expect
    .poll(async () => {
      const header = (await page.locator("header.header").boundingBox())!;
      const box = (await heading.boundingBox())!;
      return box.y >= header.y + header.height;
    })
    .toBe(true);
  // ... and the jump did move the page (the heading is far down).
  expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(500);
}

test("outline and anchor jumps land below the sticky header", async ({ page, en, user }) => {
  void user;
  const filler = Array.from({ length: 60 }, (_, i) => `Paragraph ${i + 1} of the introduction.`).join("\n\n");
  await createPage(page.request, {
    title: "Long Read",
    content: `# Long Read\n\n## Opening\n\n${filler}\n\n## Far Section\n\nThe end.\n\n${filler}`,
  });
  await page.goto("/app/long-read");
  const toc = page.getByRole("complementary", { name: en["page.outline"] });
  await toc.getByRole("link", { name: "Far Section" }).click();
  await expect(page).toHaveURL(/#far-section$/);
  await expectBelowHeader(page, page.locator("h2#far-section"));

  // Opening the URL with the anchor lands there too.
  const url = page.url();
  await page.goto("/app/-/settings");
  await page.goto(url);
  await expectBelowHeader(page, page.locator("h2#far-section"));
});

async function seedTree(page: Page): Promise<void> {
  await createPage(page.request, { title: "Alpha", content: "# Alpha" });
  await createPage(page.request, { title: "Beta", content: "# Beta" });
  await createPage(page.request, { title: "Beta Child", parent: "beta", content: "child" });
  await createPage(page.request, { title: "Beta Grandchild", parent: "beta-child", content: "grandchild" });
  await createPage(page.request, { title: "Gamma", content: "# Gamma" });
}

test("the page tree is an ARIA tree driven by the keyboard", async ({ page, en, user }) => {
  void user;
  await seedTree(page);
  await page.goto("/app/alpha");
  const tree = page.getByRole("tree", { name: en["nav.pages"] });
  const item = (name: string) => tree.getByRole("treeitem", { name, exact: true });
  await expect(item("Alpha")).toHaveAttribute("aria-selected", "true");

  // The tree is one Tab stop, the page on screen: Tab from the filter box lands on it.
  await page.getByRole("textbox", { name: en["tree.filter"] }).focus();
  await page.keyboard.press("Tab");
  await expect(item("Alpha")).toBeFocused();
  await expect(tree.locator('[role="treeitem"][tabindex="0"]')).toHaveCount(1);

  await page.keyboard.press("ArrowDown");
  await expect(item("Beta")).toBeFocused();
  await expect(item("Beta")).toHaveAttribute("aria-expanded", "false");
  await expect(item("Beta")).toHaveAttribute("aria-level", "1");
  // ArrowRight expands, then goes to the first child.
  await page.keyboard.press("ArrowRight");
  await expect(item("Beta")).toHaveAttribute("aria-expanded", "true");
  await expect(item("Beta")).toBeFocused();
  await expect(item("Beta").getByRole("group").getByRole("treeitem", { name: "Beta Child" })).toBeVisible();
  await page.keyboard.press("ArrowRight");
  await expect(item("Beta Child")).toBeFocused();
  await expect(item("Beta Child")).toHaveAttribute("aria-level", "2");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await expect(item("Beta Grandchild")).toBeFocused();
  await expect(item("Beta Grandchild")).toHaveAttribute("aria-level", "3");
  // ArrowLeft goes to the parent, then collapses it, then goes to its parent.
  await page.keyboard.press("ArrowLeft");
  await expect(item("Beta Child")).toBeFocused();
  await page.keyboard.press("ArrowLeft");
  await expect(item("Beta Child")).toHaveAttribute("aria-expanded", "false");
  await expect(item("Beta Grandchild")).toHaveCount(0);
  await page.keyboard.press("ArrowLeft");
  await expect(item("Beta")).toBeFocused();
  // Down walks the visible rows; Home and End; only one Tab stop all along.
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await expect(item("Gamma")).toBeFocused();
  await page.keyboard.press("Home");
  await expect(item("Alpha")).toBeFocused();
  await page.keyboard.press("End");
  await expect(item("Gamma")).toBeFocused();
  await expect(tree.locator('[role="treeitem"][tabindex="0"]')).toHaveCount(1);
  // A letter goes to the next page starting with it.
  await page.keyboard.press("b");
  await expect(item("Beta")).toBeFocused();

  // Enter opens the focused page; the focus stays in the tree.
  await page.keyboard.press("ArrowDown");
  await expect(item("Beta Child")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(pageUrl("beta-child"));
  await expect(page.locator(".page-title")).toHaveText("Beta Child");
  await expect(item("Beta Child")).toBeFocused();
  await expect(item("Beta Child")).toHaveAttribute("aria-selected", "true");
});

test("the tree's filter box shows matching pages with their ancestors", async ({ page, en, user }) => {
  void user;
  await seedTree(page);
  await page.goto("/app/alpha");
  const tree = page.getByRole("tree", { name: en["nav.pages"] });
  const filter = page.getByRole("textbox", { name: en["tree.filter"] });
  await expect(tree.getByRole("treeitem")).toHaveCount(3); // Alpha, Beta, Gamma

  await filter.fill("grandch");
  await expect(tree.getByRole("treeitem")).toHaveCount(3);
  for (const name of ["Beta", "Beta Child", "Beta Grandchild"]) {
    await expect(tree.getByRole("treeitem", { name, exact: true })).toBeVisible();
  }
  await expect(tree.getByRole("treeitem", { name: "Alpha" })).toHaveCount(0);
  await expect(tree.getByRole("treeitem", { name: "Gamma" })).toHaveCount(0);
  await expect(tree.getByRole("treeitem", { name: "Beta Grandchild" }).locator("mark")).toHaveText("Grandch");
  // ArrowDown from the box goes into the (filtered) tree.
  await filter.press("ArrowDown");
  await expect(tree.getByRole("treeitem", { name: "Beta", exact: true })).toBeFocused();

  // Case does not matter.
  await filter.fill("GAMMA");
  await expect(tree.getByRole("treeitem")).toHaveCount(1);
  await filter.fill("zzz");
  const none = fmt(en["tree.filter_none"]!, { query: "zzz" });
  await expect(page.getByRole("status").filter({ hasText: none })).toBeVisible();
  await expect(page.getByRole("tree")).toHaveCount(0);
  // Escape clears it: the whole tree again.
  await filter.press("Escape");
  await expect(filter).toHaveValue("");
  await expect(tree.getByRole("treeitem")).toHaveCount(3);
});

test("the move dialog finds the new parent by searching", async ({ page, en, user }) => {
  void user;
  await seedTree(page);
  for (let i = 1; i <= 60; i++) await createPage(page.request, { title: `Filler ${i}`, content: "x" });
  await page.goto("/app/alpha");
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.move"], exact: true }).click();
  const dialog = page.getByRole("dialog", { name: en["page.move"] });
  const search = dialog.getByRole("combobox", { name: en["page.move.parent"] });
  await expect(search).toBeFocused();
  const list = dialog.getByRole("listbox", { name: en["page.move.parent"] });
  // Not every page at once: the first 50 and how many more there are.
  await expect(list.getByRole("option")).toHaveCount(51);
  await expect(dialog).toContainText(fmt(en["page.move.more_other"]!, { count: 14 }));
  await expect(list.getByRole("option", { name: "Alpha", exact: true })).toHaveCount(0); // not into itself
  await expect(list.getByRole("option", { name: en["page.move.top_level"] })).toHaveAttribute("aria-selected", "true");

  // Typing narrows the list; each page shows its ancestors.
  await search.fill("grand");
  await expect(list.getByRole("option")).toHaveCount(2);
  const grandchild = list.getByRole("option", { name: /Beta Grandchild/ });
  await expect(grandchild).toContainText("Beta › Beta Child");
  await search.fill("nothing like it");
  await expect(dialog).toContainText(en["page.move.none"]!);
  await search.fill("grand");

  // Arrows move, Enter chooses, Enter again moves.
  await search.press("ArrowDown");
  await expect(search).toHaveAttribute("aria-activedescendant", (await grandchild.getAttribute("id"))!);
  await search.press("Enter");
  await expect(grandchild).toHaveAttribute("aria-selected", "true");
  await expect(dialog.getByRole("status")).toHaveText(fmt(en["page.move.chosen"]!, { title: "Beta Grandchild" }));
  await search.press("Enter");
  await expect(dialog).toHaveCount(0);
  await expect
    .poll(async () => (await (await page.request.get("/api/pages/alpha")).json()).parent)
    .toBe("beta-grandchild");
  await expect(page.getByRole("navigation", { name: en["page.breadcrumbs"] })).toContainText("Beta Grandchild");

  // A click chooses too; back to the top level.
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.move"], exact: true }).click();
  await dialog.getByRole("option", { name: en["page.move.top_level"] }).click();
  await expect(dialog.getByRole("status")).toHaveText(en["page.move.chosen_top"]!);
  await dialog.getByRole("button", { name: en["page.move"] }).click();
  await expect(dialog).toHaveCount(0);
  await expect.poll(async () => (await (await page.request.get("/api/pages/alpha")).json()).parent).toBeNull();
});

test("the sidebar can be resized by dragging or by keyboard, and keeps its width", async ({ page, en, user }) => {
  void user;
  await seedTree(page);
  await page.goto("/app/alpha");
  const sidebar = page.getByRole("navigation", { name: en["nav.pages"] });
  const handle = page.getByRole("separator", { name: en["nav.resize_sidebar"] });
  await expect(handle).toHaveAttribute("aria-valuenow", "270");
  const width = async () => Math.round((await sidebar.boundingBox())!.width);
  expect(await width()).toBe(270);

  // By keyboard: arrows in steps of 10 (Shift: 50).
  await handle.focus();
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("Shift+ArrowRight");
  await expect(handle).toHaveAttribute("aria-valuenow", "340");
  expect(await width()).toBe(340);
  await page.keyboard.press("ArrowLeft");
  await expect(handle).toHaveAttribute("aria-valuenow", "330");

  // By dragging.
  const box = (await handle.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + 200);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 70, box.y + 220, { steps: 5 });
  await page.mouse.up();
  await expect(handle).toHaveAttribute("aria-valuenow", "400");
  expect(await width()).toBe(400);
  // The page still opens from the tree after a drag.
  await sidebar.getByRole("link", { name: "Gamma" }).click();
  await expect(page.locator(".page-title")).toHaveText("Gamma");

  // Kept across a reload; bounded.
  await page.reload();
  await expect(handle).toHaveAttribute("aria-valuenow", "400");
  expect(await width()).toBe(400);
  await handle.focus();
  await page.keyboard.press("Home");
  await expect(handle).toHaveAttribute("aria-valuenow", "180");
  expect(await width()).toBe(180);
});
