// An empty workspace offers a first page: one click makes a short
// welcome page, in the reader's language, explaining wikilinks, tags, search and history;
// "no pages yet" is said once (the sidebar), not twice.
import { expect, messages, test } from "../fixtures";

test("a new workspace offers a welcome page, made with one click", async ({ page, en, user }) => {
  void user;
  await page.goto("/app/");
  const empty = page.getByTestId("empty-workspace");
  await expect(empty).toBeVisible();
  await expect(page.getByText(en["page.empty_workspace"]!, { exact: true })).toHaveCount(1);
  await expect(empty).toContainText(en["welcome.offer"]!);

  const made = page.waitForResponse((r) => r.url().includes("/api/pages") && r.request().method() === "POST");
  await empty.getByRole("button", { name: en["welcome.create"] }).click();
  expect((await made).status()).toBe(201);
  await expect(page.locator(".page-title")).toHaveText(en["welcome.title"]!);
  // It explains the four things, in four sections, and shows them working.
  const body = page.locator(".page-content");
  await expect(body.getByRole("heading", { level: 2 })).toHaveCount(4);
  await expect(body.locator("code", { hasText: "[[" }).first()).toBeVisible();
  await expect(body.getByRole("link", { name: en["welcome.title"], exact: true })).toBeVisible(); // a real wikilink
  await expect(page.getByRole("list", { name: en["page.tags"] }).getByRole("link")).toHaveCount(1);
  await expect(page.getByRole("tree").getByRole("link", { name: en["welcome.title"] })).toBeVisible();
  const pages = await (await page.request.get("/api/pages")).json();
  expect(pages).toHaveLength(1);

  // Deleted, its slug stays taken in the trash: the offer still works, under another slug.
  expect((await page.request.delete(`/api/pages/${pages[0].slug}`)).status()).toBe(204);
  await page.goto("/app/");
  await page.getByTestId("empty-workspace").getByRole("button", { name: en["welcome.create"] }).click();
  await expect(page.locator(".page-title")).toHaveText(en["welcome.title"]!);
  expect(await (await page.request.get("/api/pages")).json()).toHaveLength(1);
});

test("the welcome page is written in the reader's language", async ({ page, user }) => {
  void user;
  const de = await messages(page.request, "de");
  expect((await page.request.post("/api/lang/de")).ok()).toBeTruthy();
  await page.goto("/app/");
  await page.getByTestId("empty-workspace").getByRole("button", { name: de["welcome.create"] }).click();
  await expect(page.locator(".page-title")).toHaveText(de["welcome.title"]!);
  const saved = (await (await page.request.get("/api/notes")).json()).items[0];
  expect(saved.title).toBe(de["welcome.title"]);
  expect(saved.tags).toEqual(["willkommen"]);
});
