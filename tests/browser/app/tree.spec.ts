// Screen 3: the page tree — top-level pages, expand/collapse, new page, new child page.
import { createPage, errorLine, expect, pageUrl, test } from "../fixtures";

test("the tree shows top-level pages and expands children", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Alpha", content: "# Alpha" });
  await createPage(page.request, { title: "Beta", content: "# Beta" });
  await createPage(page.request, { title: "Beta Child", parent: "beta", content: "child" });
  await createPage(page.request, { title: "Beta Grandchild", parent: "beta-child", content: "grandchild" });

  await page.goto("/app/alpha");
  const tree = page.getByRole("tree", { name: en["nav.pages"] });
  await expect(tree.getByRole("link", { name: "Alpha", exact: true })).toBeVisible();
  await expect(tree.getByRole("link", { name: "Beta", exact: true })).toBeVisible();
  await expect(tree.getByRole("link", { name: "Beta Child" })).toHaveCount(0);

  const beta = tree.getByRole("treeitem").filter({ has: page.getByRole("link", { name: "Beta", exact: true }) }).first();
  await expect(beta).toHaveAttribute("aria-expanded", "false");
  await beta.getByRole("button", { name: en["tree.expand"] }).first().click();
  await expect(beta).toHaveAttribute("aria-expanded", "true");
  await expect(tree.getByRole("link", { name: "Beta Child" })).toBeVisible();
  await expect(tree.getByRole("link", { name: "Beta Grandchild" })).toHaveCount(0);

  await beta.getByRole("button", { name: en["tree.collapse"] }).first().click();
  await expect(tree.getByRole("link", { name: "Beta Child" })).toHaveCount(0);

  // Opening a deep page expands the path to it.
  await page.goto("/app/beta-grandchild");
  await expect(tree.getByRole("link", { name: "Beta Grandchild" })).toBeVisible();
  await expect(tree.getByRole("link", { name: "Beta Grandchild" })).toHaveAttribute("aria-current", "page");
  // Links in the tree navigate in the app.
  await tree.getByRole("link", { name: "Alpha" }).click();
  await expect(page).toHaveURL(pageUrl("alpha"));
  await expect(page.locator(".page-title")).toHaveText("Alpha");
});

test("new page and new child page from the tree", async ({ page, en, user }) => {
  void user;
  await page.goto("/app/");
  await page.getByTestId("new-page").click();
  await expect(page).toHaveURL(/\/app\/-\/new$/);
  await page.getByLabel(en["page.title_placeholder"]!).fill("Parent Page");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page).toHaveURL(pageUrl("parent-page"));
  const tree = page.getByRole("tree");
  await expect(tree.getByRole("link", { name: "Parent Page" })).toBeVisible();

  await tree.getByRole("treeitem").first().hover();
  await tree.getByRole("link", { name: `${en["page.new_child"]}: Parent Page` }).click();
  await expect(page).toHaveURL(/\/app\/-\/new\?parent=parent-page$/);
  await page.getByLabel(en["page.title_placeholder"]!).fill("Child Page");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page).toHaveURL(pageUrl("child-page"));
  await expect(page.getByRole("navigation", { name: en["page.breadcrumbs"] })).toContainText("Parent Page");
  await expect(tree.getByRole("link", { name: "Child Page" })).toBeVisible();
  const res = await page.request.get("/api/pages/child-page");
  expect((await res.json()).parent).toBe("parent-page");
});

test("drag a page onto another to move it there; cycles are refused; top-level zone", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Alpha", content: "a" });
  await createPage(page.request, { title: "Beta", content: "b" });
  await page.goto("/app/alpha");
  const tree = page.getByRole("tree", { name: en["nav.pages"] });
  const row = (slug: string) => tree.locator(`.tree-row[data-slug="${slug}"]`);
  const parentOf = async (slug: string) => (await (await page.request.get(`/api/pages/${slug}`)).json()).parent;

  // Alpha onto Beta: Alpha becomes Beta's child, shown expanded under it.
  await row("alpha").dragTo(row("beta"));
  await expect.poll(() => parentOf("alpha")).toBe("beta");
  const beta = tree.getByRole("treeitem").filter({ has: page.getByRole("link", { name: "Beta", exact: true }) }).first();
  await expect(beta).toHaveAttribute("aria-expanded", "true");
  await expect(beta.getByRole("treeitem").getByRole("link", { name: "Alpha", exact: true })).toBeVisible();

  // Beta onto its own child: the server's refusal is shown.
  await row("beta").dragTo(row("alpha"));
  const refused = errorLine(page.getByRole("navigation", { name: en["nav.pages"] }));
  await expect(refused.message).toHaveText(en["error.move_cycle"]!);
  await expect(refused.detail).toHaveCount(0); // said once, not again in the server's English
  expect(await parentOf("beta")).toBeNull();

  // Alpha back to the top level through the zone shown while dragging.
  await row("alpha").hover();
  await page.mouse.down();
  await page.mouse.move(20, 300, { steps: 4 });
  const zone = page.getByTestId("drop-top-level");
  await expect(zone).toHaveText(en["tree.drop_top_level"]!);
  await zone.hover();
  await page.mouse.up();
  await expect.poll(() => parentOf("alpha")).toBeNull();
  await expect(zone).toHaveCount(0);
  await expect(tree.getByRole("treeitem", { level: 1 })).toHaveCount(2);
});
