// Lists that never quietly cut: insights say how many each list holds and
// show every item ("Show N more", read through GET /api/insights/<list>), with orphans
// presented as decided (top-level pages nothing links to, apart from subpages reached
// only from their parent; the home page in neither); and siblings without an order set
// by hand sort naturally (Sprint 1, 2 … 10) in the tree, the children list and the move
// dialog.
import { createPage, expect, fmt, test } from "../fixtures";

test("insights: every orphan and every broken link, with their totals", async ({ page, en, user }) => {
  void user;
  // The home page links to the parent and to 23 pages that do not exist; nothing links
  // to 25 other top-level pages, nor to the parent's two subpages.
  const wanted = Array.from({ length: 23 }, (_, i) => `[[Wanted ${i + 1}]]`).join(" ");
  await createPage(page.request, { title: "Home", slug: "home", content: `# Home\n\nSee [[Parent]]. ${wanted}` });
  await createPage(page.request, { title: "Parent", content: "# Parent" });
  await createPage(page.request, { title: "Child A", parent: "parent", content: "a" });
  await createPage(page.request, { title: "Child B", parent: "parent", content: "b" });
  // Created out of order: the list is by title, numbers by their value.
  const order = [7, 1, 25, 12, 3, 18, 9, 22, 2, 14, 5, 20, 11, 24, 6, 16, 10, 23, 4, 19, 13, 8, 21, 15, 17];
  for (const n of order) await createPage(page.request, { title: `Loose ${n}`, content: `Nothing links here (${n}).` });

  await page.goto("/app/-/insights");
  const loose = page.getByRole("region", { name: en["insights.orphans"] });
  await expect(loose).toContainText(fmt(en["count.pages_other"]!, { count: 25 }));
  const titles = Array.from({ length: 25 }, (_, i) => `Loose ${i + 1}`);
  await expect(loose.getByRole("link")).toHaveText(titles.slice(0, 20));
  await loose.getByRole("button", { name: fmt(en["insights.show_more"]!, { count: 5 }) }).click();
  await expect(loose.getByRole("link")).toHaveText(titles);
  await expect(loose.getByRole("button", { name: /.+/ })).toHaveCount(0);

  // Subpages reached only from their parent are apart; the home page is in neither list.
  const underParent = page.getByRole("region", { name: en["insights.parent_only"] });
  await expect(underParent).toContainText(fmt(en["count.pages_other"]!, { count: 2 }));
  await expect(underParent.getByRole("link")).toHaveText(["Child A", "Child B"]);

  // Wanted pages: all 23 broken links, 20 first.
  const broken = page.getByRole("region", { name: en["insights.wanted"] });
  await expect(broken).toContainText(fmt(en["count.broken_links_other"]!, { count: 23 }));
  const create = broken.getByRole("link", { name: new RegExp(`^${en["insights.create"]}: `) });
  await expect(create).toHaveCount(20);
  await broken.getByRole("button", { name: fmt(en["insights.show_more"]!, { count: 3 }) }).click();
  await expect(create).toHaveCount(23);
  for (let i = 1; i <= 23; i++) await expect(broken).toContainText(`wanted-${i}`);
});

test("siblings sort naturally: the tree, the children list, the move dialog", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Sprints", content: "# Sprints" });
  await createPage(page.request, { title: "Backlog", content: "# Backlog" });
  for (const n of [10, 2, 12, 1, 11, 3, 9, 4, 8, 5, 7, 6]) {
    await createPage(page.request, { title: `Sprint ${n}`, parent: "sprints", content: `Sprint ${n}.` });
  }
  const sprints = Array.from({ length: 12 }, (_, i) => `Sprint ${i + 1}`);

  // The tree (the path to the page on screen is expanded), and the page's children.
  await page.goto("/app/sprint-5");
  const tree = page.getByRole("tree", { name: en["nav.pages"] });
  await expect(tree.getByRole("group").getByRole("link", { name: /^Sprint \d+$/ })).toHaveText(sprints);
  await tree.getByRole("link", { name: "Sprints", exact: true }).click();
  await expect(page.locator(".page-children").getByRole("link", { name: /^Sprint \d+$/ })).toHaveText(sprints);

  // The move dialog lists them in the same order.
  await page.goto("/app/backlog");
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.move"], exact: true }).click();
  const dialog = page.getByRole("dialog", { name: en["page.move"] });
  await dialog.getByRole("combobox", { name: en["page.move.parent"] }).fill("sprint ");
  await expect(dialog.getByRole("option", { name: /^Sprint \d+/ }).locator(".choice-title")).toHaveText(sprints);
});
