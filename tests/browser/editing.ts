// Shared steps of the editor's specs: the source editor, replacing its text as a person
// types it, and bringing up the merge-conflict dialog.
import type { Locator, Page } from "@playwright/test";
import { createPage, expect, fmt, type Messages } from "./fixtures";

export const source = (page: Page): Locator => page.getByTestId("source-editor");

/** Selects everything in the source editor and types `text` in its place. */
export async function replaceText(page: Page, text: string): Promise<void> {
  await source(page).click();
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Delete");
  await page.keyboard.type(text);
}

/** Types `text` at the very end of the source editor, as a person adding a line. */
export async function typeAtEnd(page: Page, text: string): Promise<void> {
  await source(page).click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type(text);
}

/** The conflict dialog's button that keeps the other person's version, named after them. */
export function keepTheirs(dialog: Locator, en: Messages, name: string): Locator {
  return dialog.getByRole("button", { name: fmt(en["page.conflict.keep_named"]!, { name }), exact: true });
}

/** Opens `slug` in the editor, lets someone else change its middle line, types our own
 *  change of that line and saves: the conflict dialog opens. Answers the dialog and the
 *  revision the other save made. */
export async function conflicting(page: Page, en: Messages, slug: string): Promise<{ dialog: Locator; theirs: string }> {
  await createPage(page.request, { title: slug, slug, content: "alpha\nbeta\ngamma\n" });
  await page.goto(`/app/${slug}/edit`);
  await expect(source(page)).toContainText("gamma");
  const other = await page.request.put(`/api/pages/${slug}`, { data: { content: "alpha\nTHEIR BETA\ngamma\n" } });
  expect(other.status()).toBe(200);
  await replaceText(page, "alpha\nMY BETA\ngamma\n");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  const dialog = page.getByRole("dialog", { name: en["page.merge_conflict.title"] });
  await expect(dialog.getByTestId("conflict-theirs")).toContainText("THEIR BETA");
  return { dialog, theirs: (await other.json()).revision as string };
}
