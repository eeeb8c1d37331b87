// Screen 2: the shell — workspace switcher (switch, create), theme toggle remembered,
// language switch, search focus and palette shortcuts.
import { createPage, expect, messages, pageUrl, test } from "../fixtures";

test("workspaces: create one, switch between them", async ({ page, en, user }) => {
  await createPage(page.request, { title: "Personal Notes", content: "mine" });
  await page.goto("/app/");
  await expect(page).toHaveURL(pageUrl("personal-notes"));
  const tree = page.getByRole("tree");
  await expect(tree.getByRole("link", { name: "Personal Notes" })).toBeVisible();

  await page.getByTestId("workspace-switcher").click();
  await page.getByRole("menuitem", { name: `+ ${en["workspace.create"]}` }).click();
  const dialog = page.getByRole("dialog", { name: en["workspace.create"] });
  await dialog.getByLabel(en["workspace.name"]!).fill("Team Space");
  await dialog.getByRole("button", { name: en["workspace.create"] }).click();
  await expect(dialog).toHaveCount(0);

  // The new workspace is current and empty.
  await expect(page.getByTestId("workspace-switcher")).toContainText("Team Space");
  await expect(page.getByTestId("empty-workspace")).toBeVisible();
  await expect(page.getByRole("link", { name: "Personal Notes" })).toHaveCount(0);
  const me = await (await page.request.get("/api/me")).json();
  expect(me.default_workspace).not.toBe(user.workspace);

  // It stays current after a reload (it became the default).
  await page.reload();
  await expect(page.getByTestId("workspace-switcher")).toContainText("Team Space");

  // Back to the personal workspace.
  await page.getByTestId("workspace-switcher").click();
  await page.getByRole("menuitemradio").filter({ hasNotText: "Team Space" }).click();
  await expect(page.getByRole("tree").getByRole("link", { name: "Personal Notes" })).toBeVisible();
  await expect(page.getByTestId("workspace-switcher")).not.toContainText("Team Space");
});

test("theme: follows the system, toggle is remembered", async ({ page, user }) => {
  void user;
  await page.emulateMedia({ colorScheme: "dark" });
  await page.goto("/app/");
  const html = page.locator("html");
  await expect(html).toHaveAttribute("data-theme", "dark");
  await page.emulateMedia({ colorScheme: "light" });
  await expect(html).toHaveAttribute("data-theme", "light");

  await page.getByTestId("user-menu").click();
  await page.getByTestId("theme-toggle").click();
  await expect(html).toHaveAttribute("data-theme", "dark");
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.reload();
  await expect(html).toHaveAttribute("data-theme", "dark");
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(bg);
});

test("language: switching reloads the messages and is stored on the user", async ({ page, en, user }) => {
  void user;
  const de = await messages(page.request, "de");
  await page.goto("/app/");
  await expect(page.getByRole("link", { name: `+ ${en["page.new"]}` })).toBeVisible();
  await page.getByTestId("user-menu").click();
  await page.getByLabel(en["settings.language"]!).selectOption("de");
  await expect(page.getByRole("link", { name: `+ ${de["page.new"]}` })).toBeVisible();
  await expect(page.locator("html")).toHaveAttribute("lang", "de");
  const me = await (await page.request.get("/api/me")).json();
  expect(me.language).toBe("de");
  await page.reload();
  await expect(page.getByRole("link", { name: `+ ${de["page.new"]}` })).toBeVisible();
});

test("'/' focuses the search box; Ctrl+K opens the command palette instead", async ({ page, en, user }) => {
  void user;
  await page.goto("/app/");
  const box = page.getByRole("searchbox", { name: en["nav.search"] });
  await expect(box).toBeVisible();
  await page.locator("body").click();
  await page.keyboard.press("/");
  await expect(box).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(box).not.toBeFocused();
  await page.keyboard.press("Control+k");
  await expect(page.getByRole("combobox", { name: en["palette.title"] })).toBeFocused();
  await expect(box).not.toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog", { name: en["palette.title"] })).toHaveCount(0);
});
