// The command palette (Ctrl/Cmd+K): jump to pages by title or by their text, create a
// page with the typed title, run actions; arrows, Enter, Escape.
import { createPage, expect, fmt, pageUrl, test } from "../fixtures";

test("jump to a page by title or by text, with arrows and Enter", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Gardening Notes", content: "Tomatoes and basil." });
  await createPage(page.request, { title: "Kitchen", content: "We cook with zucchini every summer." });
  await page.goto("/app/kitchen");
  await expect(page.locator(".page-title")).toHaveText("Kitchen");

  await page.keyboard.press("Control+k");
  const palette = page.getByRole("dialog", { name: en["palette.title"] });
  const input = palette.getByRole("combobox");
  await expect(input).toBeFocused();
  // Empty: the actions.
  await expect(palette.getByRole("option", { name: en["nav.settings"], exact: true })).toBeVisible();

  // A title match comes first and Enter opens it.
  await input.fill("garden");
  await expect(palette.getByRole("option").first()).toContainText("Gardening Notes");
  await expect(palette.getByRole("option").first()).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(palette).toHaveCount(0);
  await expect(page).toHaveURL(pageUrl("gardening-notes"));

  // A word of the text only: keyword search finds the page; arrows move the selection.
  await page.keyboard.press("Control+k");
  await input.fill("zucchini");
  const hit = palette.getByRole("option", { name: /Kitchen/ });
  await expect(hit).toBeVisible();
  const create = palette.getByRole("option", { name: fmt(en["palette.create"]!, { title: "zucchini" }) });
  await expect(create).toBeVisible();
  await page.keyboard.press("ArrowDown");
  await expect(create).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowUp");
  await expect(hit).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(pageUrl("kitchen"));
});

test("create a page, run actions, Escape closes", async ({ page, en, user }) => {
  void user;
  await page.goto("/app/");
  await expect(page.getByTestId("empty-workspace")).toBeVisible();
  await page.keyboard.press("Control+k");
  const palette = page.getByRole("dialog", { name: en["palette.title"] });
  const input = palette.getByRole("combobox");

  await input.fill("Brand New Idea");
  await palette.getByRole("option", { name: fmt(en["palette.create"]!, { title: "Brand New Idea" }) }).click();
  await expect(page).toHaveURL(/\/app\/-\/new\?title=Brand\+New\+Idea$/);
  await expect(page.getByLabel(en["page.title_placeholder"]!)).toHaveValue("Brand New Idea");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page).toHaveURL(pageUrl("brand-new-idea"));

  // Actions are filtered by the text.
  await page.keyboard.press("Control+k");
  await input.fill("trash");
  await expect(palette.getByRole("option", { name: en["palette.go_trash"] })).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/app\/-\/trash$/);

  const html = page.locator("html");
  const before = await html.getAttribute("data-theme");
  await page.keyboard.press("Control+k");
  await input.fill(en["palette.toggle_theme"]!.slice(0, 6));
  await palette.getByRole("option", { name: en["palette.toggle_theme"] }).click();
  await expect(html).not.toHaveAttribute("data-theme", before!);

  await page.keyboard.press("Control+k");
  await input.fill("workspace");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/app\/-\/workspace$/);

  // Escape closes without doing anything; the header button opens it too.
  await page.getByRole("button", { name: en["palette.title"] }).click();
  await expect(input).toBeFocused();
  await input.fill("settings");
  await page.keyboard.press("Escape");
  await expect(palette).toHaveCount(0);
  await expect(page).toHaveURL(/\/app\/-\/workspace$/);
});
