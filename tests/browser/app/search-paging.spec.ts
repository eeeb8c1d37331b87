// Search results page through all the matches, with the server's total,
// and a tag filter is a visible, removable chip that stays while the query changes and
// narrows the query's results (q= with tag=).
import { createPage, expect, fmt, test } from "../fixtures";
import type { APIRequestContext } from "@playwright/test";

/** 60 pages with "lantern" (the even ones tagged #lamp, the odd ones #wick, so every page
 *  is as long and ranks the same: the database ranks a workspace's first queries, the
 *  process once its statistics are built, and the two break ties differently) and 5
 *  tagged #lamp without it. */
async function lanterns(request: APIRequestContext): Promise<void> {
  const bodies: { title: string; content: string }[] = [];
  for (let i = 1; i <= 60; i++) {
    const n = String(i).padStart(2, "0");
    const tag = i % 2 === 0 ? " #lamp" : " #wick";
    bodies.push({ title: `Lantern ${n}`, content: `# Lantern ${n}\n\nA lantern for the path.${tag}\n` });
  }
  for (let i = 1; i <= 5; i++) bodies.push({ title: `Oil ${i}`, content: `# Oil ${i}\n\nWick and oil. #lamp\n` });
  // A few at a time: each save is a commit; the server takes them in turn anyway.
  for (let i = 0; i < bodies.length; i += 5) await Promise.all(bodies.slice(i, i + 5).map((b) => createPage(request, b)));
}

test("results page through every match and the header says the real total", async ({ page, en, user }) => {
  void user;
  await lanterns(page.request);
  await page.goto("/app/-/search?q=lantern");
  const count = page.getByTestId("results-count");
  await expect(count).toContainText(fmt(en["search.results_count"]!, { count: 60 }));
  const results = page.locator(".results > li");
  await expect(results).toHaveCount(50);
  const pager = page.getByRole("navigation", { name: en["search.pages"] });
  await expect(pager).toContainText(fmt(en["search.page_of"]!, { page: 1, pages: 2 }));
  const firstPage = await results.locator("a").allTextContents();

  await pager.getByRole("link", { name: en["search.next"] }).click();
  await expect(page).toHaveURL(/[?&]page=2(&|$)/);
  await expect(results).toHaveCount(10);
  await expect(count).toContainText(fmt(en["search.results_count"]!, { count: 60 }));
  await expect(pager).toContainText(fmt(en["search.page_of"]!, { page: 2, pages: 2 }));
  await expect(pager.getByRole("link", { name: en["search.next"] })).toHaveCount(0);
  // Together the two pages hold every match once.
  const all = new Set([...firstPage, ...(await results.locator("a").allTextContents())]);
  expect(all.size).toBe(60);

  await pager.getByRole("link", { name: en["search.previous"] }).click();
  await expect(results).toHaveCount(50);

  // The header's box says how many there are in all.
  await page.getByRole("searchbox", { name: en["nav.search"] }).first().fill("lantern");
  await expect(page.getByRole("link", { name: `${en["search.all_results"]} (60)` })).toBeVisible();
});

test("a tag chip opens a removable tag filter that stays while the query changes", async ({ page, en, user }) => {
  void user;
  await lanterns(page.request);
  await page.goto("/app/lantern-02");
  await page.getByRole("list", { name: en["page.tags"] }).getByRole("link", { name: "#lamp" }).click();

  // The tag alone: its pages, with a visible chip.
  await expect(page).toHaveURL(/\/app\/-\/search\?.*tag=lamp/);
  const chip = page.getByTestId("tag-filter");
  await expect(chip).toBeVisible();
  await expect(chip).toContainText("#lamp");
  const count = page.getByTestId("results-count");
  await expect(count).toContainText(fmt(en["search.results_count"]!, { count: 35 }));

  // A query narrows the tag's pages (both sent), and the chip stays.
  const box = page.getByRole("main").getByRole("searchbox", { name: en["nav.search"] });
  const asked = page.waitForRequest((r) => r.url().includes("/api/search?"));
  await box.fill("lantern");
  await box.press("Enter");
  const url = new URL((await asked).url());
  expect(url.searchParams.get("q")).toBe("lantern");
  expect(url.searchParams.get("tag")).toBe("lamp");
  await expect(chip).toBeVisible();
  await expect(count).toContainText(fmt(en["search.results_count"]!, { count: 30 }));
  await expect(page.locator(".results > li")).toHaveCount(30);
  await expect(page.locator(".results")).not.toContainText("Oil");
  await expect(page.locator(".results")).not.toContainText("Lantern 01");

  // Another query: still filtered.
  await box.fill("path");
  await box.press("Enter");
  await expect(page).toHaveURL(/q=path/);
  await expect(chip).toBeVisible();
  await expect(count).toContainText(fmt(en["search.results_count"]!, { count: 30 }));

  // The header's box searches within the filter too while it is shown.
  await page.getByRole("banner").getByRole("searchbox", { name: en["nav.search"] }).fill("lantern");
  await page.getByRole("link", { name: `${en["search.all_results"]} (30)` }).click();
  await expect(page).toHaveURL(/q=lantern/);
  await expect(chip).toBeVisible();
  await expect(count).toContainText(fmt(en["search.results_count"]!, { count: 30 }));

  // Removing the chip keeps the query and drops the filter.
  await chip.getByRole("button", { name: fmt(en["search.remove_tag_filter"]!, { tag: "lamp" }) }).click();
  await expect(chip).toHaveCount(0);
  await expect(page).not.toHaveURL(/tag=/);
  await expect(count).toContainText(fmt(en["search.results_count"]!, { count: 60 }));
});
