// Screen 7: history (list, a revision, its diff inline and side by side, restore), trash (restore, purge after
// confirming), rename and move dialogs.
import { createPage, errorLine, expect, fmt, pageUrl, test } from "../fixtures";

test("history: list, view a revision, diff, restore", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Evolving", content: "# Evolving\n\nversion one\n" });
  const put = await page.request.put("/api/pages/evolving", { data: { content: "# Evolving\n\nversion two\n", message: "second go" } });
  expect(put.status()).toBe(200);

  await page.goto("/app/evolving");
  await page.getByRole("link", { name: en["page.history"] }).click();
  await expect(page).toHaveURL(pageUrl("evolving", "history"));
  const rows = page.getByTestId("history-list").locator("tbody tr");
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toContainText("second go");
  await expect(rows.first()).toContainText(user.name);

  // The newest revision's diff against the one before.
  await rows.first().getByRole("link").click();
  await expect(page).toHaveURL(pageUrl("evolving", "history/[0-9a-f]{7,}"));
  const diff = page.getByTestId("diff");
  await expect(diff.locator(".del")).toContainText("version one");
  await expect(diff.locator(".add")).toContainText("version two");

  // Side by side: the old line on the left, the new one on the right of the same row;
  // the choice is remembered.
  const layout = page.getByRole("group", { name: en["history.diff_layout"] });
  await expect(layout.getByRole("button", { name: en["history.diff_inline"] })).toHaveAttribute("aria-pressed", "true");
  await layout.getByRole("button", { name: en["history.diff_side_by_side"] }).click();
  const split = page.getByTestId("diff-split");
  await expect(page.getByTestId("diff")).toHaveCount(0);
  const changed = split.locator("tr").filter({ has: page.locator("td.del") });
  await expect(changed).toHaveCount(1);
  await expect(changed.locator("td.del").last()).toHaveText("version one");
  await expect(changed.locator("td.add").last()).toHaveText("version two");
  await expect(changed.locator("td.ln")).toHaveText(["3", "3"]);
  await page.reload();
  await expect(page.getByTestId("diff-split")).toBeVisible();
  await layout.getByRole("button", { name: en["history.diff_inline"] }).click();
  await expect(page.getByTestId("diff")).toBeVisible();

  // The first revision: its content, and restoring it.
  await rows.nth(1).getByRole("link").click();
  await page.getByRole("button", { name: en["page.view"], exact: true }).click();
  await expect(page.getByTestId("revision").locator(".page-content")).toContainText("version one");
  await page.getByTestId("restore-revision").click();
  await page.getByRole("dialog").getByRole("button", { name: en["page.restore"] }).click();
  await expect(page).toHaveURL(pageUrl("evolving"));
  await expect(page.locator(".page-content")).toContainText("version one");
  const history = await (await page.request.get("/api/pages/evolving/history")).json();
  expect(history.items.length).toBe(3);
});

test("trash: delete, restore, purge with confirmation", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Keep Me", content: "# Keep Me" });
  await createPage(page.request, { title: "Bin Me", content: "# Bin Me" });

  // Delete from the page's menu.
  await page.goto("/app/keep-me");
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.delete"] }).click();
  await page.getByRole("dialog").getByRole("button", { name: en["page.delete"] }).click();
  await expect(page.getByRole("tree").getByRole("link", { name: "Keep Me" })).toHaveCount(0);
  await page.goto("/app/bin-me");
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.delete"] }).click();
  await page.getByRole("dialog").getByRole("button", { name: en["page.delete"] }).click();
  await expect(page.getByRole("tree").getByRole("link", { name: "Bin Me" })).toHaveCount(0);

  await page.getByRole("link", { name: en["nav.trash"] }).first().click();
  await expect(page).toHaveURL(/\/app\/-\/trash$/);
  const list = page.getByTestId("trash-list");
  await expect(list.locator("tr")).toHaveCount(2);

  await list.locator("tr", { hasText: "Keep Me" }).getByRole("button", { name: en["trash.restore"] }).click();
  await expect(page.getByRole("status")).toContainText(fmt(en["trash.restored"]!, { title: "Keep Me" }));
  await expect(page.getByRole("tree").getByRole("link", { name: "Keep Me" })).toBeVisible();
  await expect(list.locator("tr")).toHaveCount(1);

  // Purge asks first; cancelling keeps the page.
  const bin = list.locator("tr", { hasText: "Bin Me" });
  await bin.getByRole("button", { name: en["trash.delete_forever"] }).click();
  const ask = page.getByRole("dialog");
  await expect(ask).toContainText(fmt(en["trash.delete_forever_confirm"]!, { title: "Bin Me" }));
  await ask.getByRole("button", { name: en["common.cancel"] }).click();
  await expect(list.locator("tr")).toHaveCount(1);
  await bin.getByRole("button", { name: en["trash.delete_forever"] }).click();
  await page.getByRole("dialog").getByRole("button", { name: en["trash.delete_forever"] }).click();
  await expect(page.getByTestId("trash-empty")).toHaveText(en["trash.empty"]!);
  expect((await page.request.get("/api/pages/bin-me")).status()).toBe(404);
});

test("rename and move dialogs", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Folder", content: "# Folder" });
  await createPage(page.request, { title: "Old Name", content: "# Old Name\n\nbody" });
  await createPage(page.request, { title: "Linker", content: "See [[old-name]]." });

  await page.goto("/app/old-name");
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.rename"] }).click();
  const rename = page.getByRole("dialog", { name: en["page.rename"] });

  // A slug that is taken: the server's 409 is shown as the catalogue's message, once.
  await rename.getByLabel(en["page.title_placeholder"]!).fill("Folder");
  await expect(rename.getByLabel(en["page.path"]!)).toHaveValue("folder");
  const answered = page.waitForResponse((r) => r.url().includes("/api/pages/old-name/rename"));
  await rename.getByRole("button", { name: en["page.rename"] }).click();
  const refused = await answered;
  expect(refused.status()).toBe(409);
  const problem = await refused.json();
  expect(problem.code).toBe("page_exists");
  expect(problem.detail).toContain("folder");
  const error = errorLine(rename);
  await expect(error.message).toHaveText(en["error.page_exists"]!);
  // Said once, translated: the problem's English detail is not shown under it.
  await expect(error.alert).toHaveText(en["error.page_exists"]!);
  await expect(error.detail).toHaveCount(0);
  await expect(rename.getByRole("button", { name: en["page.rename"] })).toBeEnabled();

  await rename.getByLabel(en["page.title_placeholder"]!).fill("New Name");
  await expect(rename.getByLabel(en["page.path"]!)).toHaveValue("new-name");
  await rename.getByRole("button", { name: en["page.rename"] }).click();
  await expect(page).toHaveURL(pageUrl("new-name"));
  await expect(page.locator(".page-title")).toHaveText("New Name");
  // Links elsewhere follow.
  const linker = await (await page.request.get("/api/pages/linker")).json();
  expect(linker.content).toContain("[[new-name]]");

  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.move"], exact: true }).click();
  const move = page.getByRole("dialog", { name: en["page.move"] });
  await move.getByRole("combobox", { name: en["page.move.parent"] }).fill("Fold");
  await move.getByRole("option", { name: "Folder", exact: true }).click();
  await move.getByRole("button", { name: en["page.move"] }).click();
  await expect(move).toHaveCount(0);
  await expect(page.getByRole("navigation", { name: en["page.breadcrumbs"] }).getByRole("link", { name: "Folder" })).toBeVisible();
  expect((await (await page.request.get("/api/pages/new-name")).json()).parent).toBe("folder");
});
