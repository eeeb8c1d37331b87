// The insights dashboard (/app/-/insights): pages linked from nowhere, wanted pages
// (create one), most linked, stale pages (none: see below), tags with their pages.
// Lists past their first 20 items: lists.spec.ts.
import { createPage, expect, fmt, pageUrl, test } from "../fixtures";

test("orphans, wanted pages, most linked, tags", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Compost", content: "# Compost\n\nScraps into soil. #garden" });
  await createPage(page.request, { title: "Hub", content: "# Hub\n\nSee [[Compost]] and [[Missing Thing]]. #garden #hub" });
  await createPage(page.request, { title: "Lonely", content: "# Lonely\n\nNobody links here." });

  await page.goto("/app/lonely");
  await page.getByRole("navigation", { name: en["nav.pages"] }).getByRole("link", { name: en["nav.insights"] }).click();
  await expect(page).toHaveURL(/\/app\/-\/insights$/);
  await expect(page.getByTestId("insights-totals")).toContainText(fmt(en["count.pages_other"]!, { count: 3 }));

  // Compost is linked; Hub and Lonely are not (the home page, where the app opens — here
  // the first top-level page, Compost — would be left out).
  const orphans = page.getByRole("region", { name: en["insights.orphans"] });
  await expect(orphans.getByRole("link", { name: "Lonely" })).toBeVisible();
  await expect(orphans.getByRole("link", { name: "Hub" })).toBeVisible();
  await expect(orphans.getByRole("link", { name: "Compost" })).toHaveCount(0);
  await expect(orphans).toContainText(fmt(en["count.pages_other"]!, { count: 2 }));

  const linked = page.getByRole("region", { name: en["intel.most_linked"] });
  await expect(linked.getByRole("listitem").first()).toContainText("Compost");
  await expect(linked).toContainText(fmt(en["insights.link_count_one"]!, { count: 1 }));
  await expect(linked).toContainText(fmt(en["count.pages_one"]!, { count: 1 }));

  // Stale pages: none, as every page was just written. A stale one (not updated for 180
  // days) cannot be made from here: `updated_at` is the server's clock, which only the
  // Rust tests move, so the list is checked empty, with its explanation, as answered.
  const stale = page.getByRole("region", { name: en["intel.stale_pages"] });
  await expect(stale).toContainText(en["insights.stale_hint"]!);
  await expect(stale).toContainText(en["insights.none"]!);
  await expect(stale.getByRole("link")).toHaveCount(0);
  expect((await (await page.request.get("/api/insights")).json()).stale).toEqual([]);

  // Tags: clicking one lists its pages.
  const tags = page.getByRole("region", { name: en["page.tags"] });
  await tags.getByRole("button", { name: /#garden/ }).click();
  const tagged = page.getByTestId("tag-pages");
  await expect(tagged.getByRole("heading")).toHaveText(fmt(en["insights.pages_tagged"]!, { tag: "garden" }));
  await expect(tagged.getByRole("link")).toHaveText(["Hub", "Compost"]);

  // A wanted page, created from here.
  const wanted = page.getByRole("region", { name: en["insights.wanted"] });
  await expect(wanted).toContainText("missing-thing");
  await expect(wanted.getByRole("link", { name: "Hub" })).toBeVisible();
  await wanted.getByRole("link", { name: `${en["insights.create"]}: missing-thing` }).click();
  await expect(page).toHaveURL(/\/app\/-\/new\?slug=missing-thing&title=Missing\+thing$/);
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page).toHaveURL(pageUrl("missing-thing"));

  await page.goto("/app/-/insights");
  await expect(page.getByRole("region", { name: en["insights.wanted"] })).toContainText(en["insights.none"]!);
});
