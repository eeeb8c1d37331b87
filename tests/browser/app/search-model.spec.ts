// Without the embedding model (`semantic_search: false` in /api/system), the search
// screen says plainly that search by meaning needs it and how to install it:
// one command, then a setting. The browser suite's servers run without the
// model; one with it says nothing.
import { createPage, expect, fmt, test } from "../fixtures";

test("semantic and hybrid search say what they need without the model", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Deploy", content: "# Deploy\n\nShip the release." });
  const { semantic_search } = await (await page.request.get("/api/system")).json();

  await page.goto("/app/-/search?q=release&mode=semantic");
  await expect(page.locator(".results").getByRole("link", { name: "Deploy" })).toBeVisible();
  const note = page.getByTestId("no-model");
  if (semantic_search) {
    await expect(note).toHaveCount(0);
    return;
  }
  await expect(note).toContainText(en["search.no_model"]!);
  await expect(note.locator("code")).toHaveText(["./scripts/get-model", "SEMANTIC_SEARCH=1"]);
  await expect(note).toContainText(fmt(en["search.no_model_install"]!, { command: "./scripts/get-model", setting: "SEMANTIC_SEARCH=1" }));

  // Hybrid leans on the model too; keyword search does not, and says nothing.
  await page.locator(".search-page").getByLabel(en["search.mode"]!).selectOption("hybrid");
  await expect(page).toHaveURL(/mode=hybrid/);
  await expect(note).toBeVisible();
  await page.locator(".search-page").getByLabel(en["search.mode"]!).selectOption("keyword");
  await expect(page).toHaveURL(/mode=keyword/);
  await expect(note).toHaveCount(0);
});
