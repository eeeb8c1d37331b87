// The merge-conflict dialog: "Save merged result" never stores conflict
// markers without a second, explicit yes that names them; "Keep my version" and "Keep
// <name>'s version" store exactly that side's text, also when yet another change comes
// in while the dialog is open. (editor.spec.ts has the dialog's basic three choices,
// conflict-names.spec.ts how it names the other person.)
import type { Page } from "@playwright/test";
import { conflicting, keepTheirs, replaceText, source } from "../editing";
import { expect, fmt, test } from "../fixtures";

// Editing alone (no co-editing session, as where WebSockets do not pass): explicit saves
// against base_revision, the unsaved-changes guard, conflicts. Editing together:
// co-editing.spec.ts.
test.use({ editAlone: true });

const raw = async (page: Page, slug: string) => (await page.request.get(`/api/pages/${slug}/raw`)).text();

/** The 1-based numbers of the marker lines of a merge, as a person would count them. */
function markerLines(text: string): number[] {
  return text
    .split("\n")
    .map((l, i) => (/^(<{7}|\|{7}|={7}|>{7})/.test(l) ? i + 1 : 0))
    .filter((n) => n > 0);
}

test("saving a merge that still has conflict markers asks again, naming them", async ({ page, en, user }) => {
  void user;
  const { dialog } = await conflicting(page, en, "marked");
  const merged = dialog.getByTestId("conflict-merged");
  const text = await merged.inputValue();
  const lines = markerLines(text);
  expect(lines.length).toBeGreaterThanOrEqual(3);
  await expect(dialog).toContainText(en["page.conflict.markers_left"]!);

  // All markers left: the question names how many and where; cancelling saves nothing.
  const confirm = page.getByRole("dialog", { name: en["common.confirm"] });
  await dialog.getByRole("button", { name: en["page.conflict.save_merged"] }).click();
  await expect(confirm).toContainText(fmt(en["page.conflict.markers_confirm"]!, { count: lines.length, lines: lines.join(", ") }));
  await confirm.getByRole("button", { name: en["common.cancel"] }).click();
  await expect(confirm).toHaveCount(0);
  await expect(dialog).toBeVisible();
  await expect(merged).toHaveValue(text);
  expect(await raw(page, "marked")).toBe("alpha\nTHEIR BETA\ngamma\n");

  // One `=======` left (it would make the line above it a heading): asked again, in the singular.
  await merged.fill("alpha\nMY BETA\n=======\ngamma\n");
  await dialog.getByRole("button", { name: en["page.conflict.save_merged"] }).click();
  await expect(confirm).toContainText(fmt(en["page.conflict.markers_confirm_one"]!, { lines: 3 }));
  await page.keyboard.press("Escape");
  await expect(confirm).toHaveCount(0);
  await expect(dialog).toBeVisible();
  expect(await raw(page, "marked")).toBe("alpha\nTHEIR BETA\ngamma\n");

  // Resolved by hand: saved at once, exactly as written.
  await merged.fill("alpha\nOUR BETA\ngamma\n");
  await expect(dialog).not.toContainText(en["page.conflict.markers_left"]!);
  await dialog.getByRole("button", { name: en["page.conflict.save_merged"] }).click();
  await expect(dialog).toHaveCount(0);
  await expect(confirm).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  expect(await raw(page, "marked")).toBe("alpha\nOUR BETA\ngamma\n");
});

test("conflict markers are saved only after saying yes to them", async ({ page, en, user }) => {
  void user;
  const { dialog } = await conflicting(page, en, "marked-anyway");
  const text = await dialog.getByTestId("conflict-merged").inputValue();
  await dialog.getByRole("button", { name: en["page.conflict.save_merged"] }).click();
  const confirm = page.getByRole("dialog", { name: en["common.confirm"] });
  await confirm.getByRole("button", { name: en["page.conflict.save_with_markers"] }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  expect(await raw(page, "marked-anyway")).toBe(text);
});

test("a change made while the dialog is open: mine is kept, and stored exactly", async ({ page, en, user }) => {
  void user;
  const { dialog } = await conflicting(page, en, "moving-target");
  // Someone saves again while we decide.
  const newest = await page.request.put("/api/pages/moving-target", { data: { content: "alpha\nNEWEST BETA\ngamma\n" } });
  expect(newest.status()).toBe(200);

  // Their side as shown is out of date: keeping it asks again, with the newest text as
  // theirs and my own text still mine (not the text just tried).
  await keepTheirs(dialog, en, "Test User").click();
  await expect(dialog.getByTestId("conflict-theirs")).toContainText("NEWEST BETA");
  await expect(dialog.getByTestId("conflict-yours")).toHaveText("alpha\nMY BETA\ngamma\n");
  expect(await raw(page, "moving-target")).toBe("alpha\nNEWEST BETA\ngamma\n");

  // Keep mine: exactly my text, over the newest revision (which stays in the history).
  await dialog.getByRole("button", { name: en["page.conflict.keep_yours"] }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  expect(await raw(page, "moving-target")).toBe("alpha\nMY BETA\ngamma\n");
  await expect(source(page)).toContainText("MY BETA");
  const history = (await (await page.request.get("/api/pages/moving-target/history")).json()).items;
  expect(history.length).toBe(4); // created, theirs, the newest, mine
});

test("discarding mine stores exactly their text and nothing of mine", async ({ page, en, user }) => {
  void user;
  const { dialog } = await conflicting(page, en, "theirs-exactly");
  const theirs = await dialog.getByTestId("conflict-theirs").textContent();
  await keepTheirs(dialog, en, "Test User").click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  expect(await raw(page, "theirs-exactly")).toBe(theirs);
  await expect(source(page)).not.toContainText("MY BETA");
  // Their revision is still the newest: discarding adds no revision of mine.
  const history = (await (await page.request.get("/api/pages/theirs-exactly/history")).json()).items;
  expect(history.length).toBe(2);
});
