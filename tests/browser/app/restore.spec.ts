// Restoring an old revision: the dialog says which title the page will
// have — the one the revision had (the default), or the current one if the person keeps
// it — and the restore does that (`POST …/restore/{sha}` with `keep_title`).
import type { Page } from "@playwright/test";
import { createPage, expect, fmt, test, type Messages, pageUrl } from "../fixtures";

/** "Recipe Notes" (version one), then retitled "Kitchen Notes" with version two. */
async function retitledPage(page: Page): Promise<void> {
  await createPage(page.request, { title: "Recipe Notes", slug: "notes", content: "# Recipe Notes\n\nversion one\n" });
  const put = await page.request.put("/api/pages/notes", {
    data: { title: "Kitchen Notes", content: "# Kitchen Notes\n\nversion two\n" },
  });
  expect(put.status()).toBe(200);
  expect((await put.json()).title).toBe("Kitchen Notes");
}

/** Opens the oldest revision of /app/notes and its restore dialog. */
async function openRestore(page: Page, en: Messages) {
  await page.goto("/app/notes/history");
  const rows = page.getByTestId("history-list").locator("tbody tr");
  await expect(rows).not.toHaveCount(0);
  await rows.last().getByRole("link").click();
  await expect(page.getByTestId("revision")).toBeVisible();
  await page.getByTestId("restore-revision").click();
  return page.getByRole("dialog", { name: en["history.restore_revision"] });
}

test("restoring a revision brings back the title it had, by default", async ({ page, en, user }) => {
  void user;
  await retitledPage(page);
  const dialog = await openRestore(page, en);
  const choice = dialog.getByRole("group", { name: en["history.restore_title"] });
  const theirs = choice.getByRole("radio", { name: fmt(en["history.restore_title_revision"]!, { title: "Recipe Notes" }) });
  const current = choice.getByRole("radio", { name: fmt(en["history.restore_title_current"]!, { title: "Kitchen Notes" }) });
  await expect(theirs).toBeChecked();
  await expect(current).not.toBeChecked();

  const post = page.waitForRequest((r) => r.method() === "POST" && r.url().includes("/api/pages/notes/restore/"));
  await dialog.getByRole("button", { name: en["page.restore"] }).click();
  expect((await post).postDataJSON()).toEqual({ keep_title: false });
  await expect(page).toHaveURL(pageUrl("notes"));
  await expect(page.locator(".page-title")).toHaveText("Recipe Notes");
  await expect(page.locator(".page-content")).toContainText("version one");
  expect((await (await page.request.get("/api/pages/notes")).json()).title).toBe("Recipe Notes");

  // That revision's title is now the page's: the dialog says so, with nothing to choose.
  const again = await openRestore(page, en);
  await expect(again).toContainText(fmt(en["history.restore_title_same"]!, { title: "Recipe Notes" }));
  await expect(again.getByRole("radio")).toHaveCount(0);
  await again.getByRole("button", { name: en["common.cancel"] }).click();
  await expect(again).toHaveCount(0);
});

test("restoring a revision can keep the current title", async ({ page, en, user }) => {
  void user;
  await retitledPage(page);
  const dialog = await openRestore(page, en);
  await dialog.getByRole("radio", { name: fmt(en["history.restore_title_current"]!, { title: "Kitchen Notes" }) }).check();

  const post = page.waitForRequest((r) => r.method() === "POST" && r.url().includes("/api/pages/notes/restore/"));
  await dialog.getByRole("button", { name: en["page.restore"] }).click();
  expect((await post).postDataJSON()).toEqual({ keep_title: true });
  await expect(page).toHaveURL(pageUrl("notes"));
  await expect(page.locator(".page-content")).toContainText("version one");
  await expect(page.locator(".page-title")).toHaveText("Kitchen Notes");
  const notes = await (await page.request.get("/api/pages/notes")).json();
  expect(notes.title).toBe("Kitchen Notes");
  expect(notes.content).toBe("# Recipe Notes\n\nversion one\n");
});
