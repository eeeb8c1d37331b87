// Screen 6: search — instant results while typing, highlighted snippets rendered
// safely, modes, keyboard navigation, the full results page.
import { createPage, expect, fmt, pageUrl, test } from "../fixtures";

test("instant results with highlighted snippets; arrows and Enter open one", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Volcano Notes", content: "# Volcano Notes\n\nMagma rises <b>through</b> the crust of a volcano." });
  await createPage(page.request, { title: "Volcano Trips", content: "# Volcano Trips\n\nWe hiked the volcano rim." });
  await createPage(page.request, { title: "Gardening", content: "# Gardening\n\nTomatoes." });
  await page.goto("/app/gardening");
  await expect(page.locator(".page-title")).toHaveText("Gardening");

  const box = page.getByRole("searchbox", { name: en["nav.search"] });
  await page.keyboard.press("/");
  await page.keyboard.type("volcano");
  const results = page.getByRole("listbox", { name: en["nav.search"] });
  await expect(results.getByRole("option")).toHaveCount(2);
  // The snippet marks the match; the page's own "<b>" is text, not markup.
  await expect(results.locator("mark").first()).toHaveText(/volcano/i);
  await expect(results.locator("b")).toHaveCount(0);

  await expect(results.getByRole("option").first()).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowDown");
  await expect(results.getByRole("option").nth(1)).toHaveAttribute("aria-selected", "true");
  const second = (await results.getByRole("option").nth(1).locator(".search-result-title").textContent())!;
  await page.keyboard.press("Enter");
  await expect(page.locator(".page-title")).toHaveText(second);
  await expect(box).not.toBeFocused();

  // No results.
  await page.keyboard.press("/");
  await page.keyboard.type("zzzqqq");
  await expect(page.locator(".search-popup")).toContainText(fmt(en["search.no_results"]!, { query: "zzzqqq" }));
});

test("modes and the full results page", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Harbour Log", content: "# Harbour Log\n\nShips enter the harbour at dawn." });
  await page.goto("/app/");
  const mode = page.getByRole("combobox", { name: en["search.mode"] }).first();
  for (const m of ["semantic", "hybrid", "keyword"]) {
    await mode.selectOption(m);
    const answered = page.waitForResponse((r) => r.url().includes("/api/search") && r.url().includes(`mode=${m}`));
    await page.getByRole("searchbox", { name: en["nav.search"] }).fill(`harbour ${m === "keyword" ? "" : "ships"}`.trim());
    expect((await answered).status()).toBe(200);
    await expect(page.getByRole("listbox").getByRole("option").first()).toContainText("Harbour Log");
  }
  await page.getByRole("searchbox", { name: en["nav.search"] }).fill("harbour");
  await page.getByRole("link", { name: en["search.all_results"] }).click();
  await expect(page).toHaveURL(/\/app\/-\/search\?q=harbour&mode=keyword$/);
  await expect(page.locator(".results")).toContainText("Harbour Log");
  await page.reload();
  await expect(page.locator(".results")).toContainText("Harbour Log");
  await page.locator(".results").getByRole("link", { name: "Harbour Log" }).click();
  await expect(page).toHaveURL(pageUrl("harbour-log"));
});
