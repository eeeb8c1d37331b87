// Siblings ordered by hand: "Move up"/"Move down" in the page's menu,
// Alt+ArrowUp/Down in the tree, and drops between rows; the server keeps the order.
import type { APIRequestContext, Locator, Page } from "@playwright/test";
import { createPage, expect, fmt, type Messages, test } from "../fixtures";

/** The titles of the pages right under `parent` in the tree (not deeper), in the order shown. */
function shownUnder(page: Page, en: Messages, parent: string): Locator {
  const tree = page.getByRole("tree", { name: en["nav.pages"] });
  const item = tree.getByRole("treeitem", { name: parent, exact: true });
  return item.locator(":scope > [role=group] > [role=treeitem] > .tree-row .tree-link");
}

/** The slugs of `parent`'s children as the API lists them. */
async function childrenOf(request: APIRequestContext, parent: string): Promise<string[]> {
  const res = await request.get(`/api/pages/${parent}/children`);
  expect(res.ok()).toBeTruthy();
  return ((await res.json()).items as { slug: string }[]).map((p) => p.slug);
}

async function threeSiblings(request: APIRequestContext): Promise<void> {
  await createPage(request, { title: "Shelf", content: "# Shelf" });
  // Made out of title order: the tree still lists them by title until ordered by hand.
  for (const title of ["Gamma", "Alpha", "Beta"])
    await createPage(request, { title, parent: "shelf", content: `# ${title}` });
}

test("siblings are ordered by the menu, the keyboard and a drag, and the order is kept", async ({ page, en, user }) => {
  void user;
  await threeSiblings(page.request);
  const status = page.getByTestId("order-status");
  const order = shownUnder(page, en, "Shelf");
  const more = page.getByTestId("page-more");
  const menuItem = (key: string) => page.getByRole("menuitem", { name: en[key], exact: true });

  await page.goto("/app/alpha");
  await expect(order).toHaveText(["Alpha", "Beta", "Gamma"]);
  expect(await childrenOf(page.request, "shelf")).toEqual(["alpha", "beta", "gamma"]);
  // The first page cannot go up; the last cannot go down.
  await more.click();
  await expect(menuItem("page.move_up")).toBeDisabled();
  await expect(menuItem("page.move_down")).toBeEnabled();
  await page.keyboard.press("Escape");

  // 1. The menu: Gamma up one place.
  await order.getByText("Gamma", { exact: true }).click();
  await expect(page.locator(".page-title")).toHaveText("Gamma");
  await more.click();
  await expect(menuItem("page.move_down")).toBeDisabled();
  await menuItem("page.move_up").click();
  await expect(order).toHaveText(["Alpha", "Gamma", "Beta"]);
  await expect(status).toHaveText(fmt(en["tree.moved_to_position"]!, { position: 2, count: 3 }));
  expect(await childrenOf(page.request, "shelf")).toEqual(["alpha", "gamma", "beta"]);
  await page.reload();
  await expect(order).toHaveText(["Alpha", "Gamma", "Beta"]);

  // 2. The keyboard: Beta up twice with Alt+ArrowUp on its tree item; focus stays on it.
  const beta = page.getByRole("tree").getByRole("treeitem", { name: "Beta", exact: true });
  await beta.focus();
  await page.keyboard.press("Alt+ArrowUp");
  await expect(order).toHaveText(["Alpha", "Beta", "Gamma"]);
  await expect(status).toHaveText(fmt(en["tree.moved_to_position"]!, { position: 2, count: 3 }));
  await expect(beta).toBeFocused();
  await page.keyboard.press("Alt+ArrowUp");
  await expect(order).toHaveText(["Beta", "Alpha", "Gamma"]);
  await expect(status).toHaveText(fmt(en["tree.moved_to_position"]!, { position: 1, count: 3 }));
  await expect(beta).toBeFocused();
  // Already first: nothing changes, nothing is sent.
  let sent = 0;
  page.on("request", (r) => void (r.url().includes("/position") && sent++));
  await page.keyboard.press("Alt+ArrowUp");
  await expect(order).toHaveText(["Beta", "Alpha", "Gamma"]);
  // Plain arrows still move the focus, not the page.
  await page.keyboard.press("ArrowDown");
  await expect(page.getByRole("tree").getByRole("treeitem", { name: "Alpha", exact: true })).toBeFocused();
  expect(sent).toBe(0);
  expect(await childrenOf(page.request, "shelf")).toEqual(["beta", "alpha", "gamma"]);
  await page.reload();
  await expect(order).toHaveText(["Beta", "Alpha", "Gamma"]);

  // 3. A drag: Gamma onto the upper edge of Alpha's row goes between Beta and Alpha, with an
  // insertion line shown there while dragging.
  const row = (slug: string) => page.locator(`.tree-row[data-slug="${slug}"]`);
  await row("gamma").hover();
  await page.mouse.down();
  const box = (await row("alpha").boundingBox())!;
  await page.mouse.move(box.x + 60, box.y + 3, { steps: 5 });
  await expect(row("alpha")).toHaveClass(/\bdrop-before\b/);
  await expect(row("alpha")).not.toHaveClass(/\bdrop-target\b/);
  await page.mouse.up();
  await expect(order).toHaveText(["Beta", "Gamma", "Alpha"]);
  await expect(status).toHaveText(fmt(en["tree.moved_to_position"]!, { position: 2, count: 3 }));
  expect(await childrenOf(page.request, "shelf")).toEqual(["beta", "gamma", "alpha"]);
  // Its parent did not change: a drop between siblings orders, it does not make a child.
  expect((await (await page.request.get("/api/pages/gamma")).json()).parent).toBe("shelf");
  await page.reload();
  await expect(order).toHaveText(["Beta", "Gamma", "Alpha"]);
  // The tree as the API answers it, in the same order.
  const nodes = await (await page.request.get("/api/pages")).json();
  const shelf = nodes.find((n: { slug: string }) => n.slug === "shelf");
  expect(shelf.children.map((n: { slug: string }) => n.slug)).toEqual(["beta", "gamma", "alpha"]);
});

test("a drop on a row's lower edge goes after it; from another parent the page is moved there first", async ({
  page,
  en,
  user,
}) => {
  void user;
  await threeSiblings(page.request);
  await createPage(page.request, { title: "Loose", content: "# Loose" });
  const order = shownUnder(page, en, "Shelf");
  const row = (slug: string) => page.locator(`.tree-row[data-slug="${slug}"]`);

  await page.goto("/app/alpha");
  await expect(order).toHaveText(["Alpha", "Beta", "Gamma"]);

  // A top-level page dropped on the lower edge of Alpha's row: now under Shelf, after Alpha.
  await row("loose").hover();
  await page.mouse.down();
  const box = (await row("alpha").boundingBox())!;
  await page.mouse.move(box.x + 60, box.y + box.height - 3, { steps: 5 });
  await expect(row("alpha")).toHaveClass(/\bdrop-after\b/);
  await page.mouse.up();
  await expect(order).toHaveText(["Alpha", "Loose", "Beta", "Gamma"]);
  expect((await (await page.request.get("/api/pages/loose")).json()).parent).toBe("shelf");
  expect(await childrenOf(page.request, "shelf")).toEqual(["alpha", "loose", "beta", "gamma"]);

  // A page dropped in the middle of a row still becomes its child (ordered by title there).
  await row("gamma").dragTo(row("beta"));
  await expect.poll(async () => (await (await page.request.get("/api/pages/gamma")).json()).parent).toBe("beta");
  await expect(order).toHaveText(["Alpha", "Loose", "Beta"]);
  await expect(shownUnder(page, en, "Beta")).toHaveText(["Gamma"]);
  expect(await childrenOf(page.request, "shelf")).toEqual(["alpha", "loose", "beta"]);

  // Shelf dropped between its own children is refused by the server and nothing changes.
  await row("shelf").hover();
  await page.mouse.down();
  const a = (await row("alpha").boundingBox())!;
  await page.mouse.move(a.x + 60, a.y + a.height - 3, { steps: 5 });
  await page.mouse.up();
  await expect(page.getByRole("navigation", { name: en["nav.pages"] }).getByRole("alert")).toHaveText(
    en["error.move_cycle"]!,
  );
  expect((await (await page.request.get("/api/pages/shelf")).json()).parent).toBeNull();
  await page.reload();
  await expect(order).toHaveText(["Alpha", "Loose", "Beta"]);
});

test("Alt+ArrowDown pressed twice quickly moves the page two places", async ({ page, en, user }) => {
  void user;
  await threeSiblings(page.request);
  const order = shownUnder(page, en, "Shelf");
  await page.goto("/app/beta");
  await expect(order).toHaveText(["Alpha", "Beta", "Gamma"]);
  const alpha = page.getByRole("tree").getByRole("treeitem", { name: "Alpha", exact: true });
  await alpha.focus();
  // The second press comes before the first reorder's answer: it must start from its result.
  await page.keyboard.press("Alt+ArrowDown");
  await page.keyboard.press("Alt+ArrowDown");
  await expect(order).toHaveText(["Beta", "Gamma", "Alpha"]);
  await expect(page.getByTestId("order-status")).toHaveText(
    fmt(en["tree.moved_to_position"]!, { position: 3, count: 3 }),
  );
  await expect(alpha).toBeFocused();
  expect(await childrenOf(page.request, "shelf")).toEqual(["beta", "gamma", "alpha"]);
});
