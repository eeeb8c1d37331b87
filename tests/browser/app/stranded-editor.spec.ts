// An editor is never stranded: while one person edits a page in one browser, another
// renames it, moves it and deletes it in theirs. The editor learns of each (when its
// window gets the focus back, or at the latest on saving), says what happened and who did
// it, and saves the text where the page now is; after the delete it offers to restore
// the page and save into it, or to save the text as a new page. No text is lost, and
// nothing suggests creating the page again at its old address.
import type { APIRequestContext, Browser, Page } from "@playwright/test";
import { source, typeAtEnd } from "../editing";
import { axe, createPage, expect, fmt, member, pageUrl, test, type Messages, type TestUser } from "../fixtures";

/** Alice: a member of `owner`'s workspace, signed in in a browser context of her own. */
async function secondPerson(browser: Browser, page: Page, owner: TestUser): Promise<{ alice: Page; api: APIRequestContext }> {
  const alice = await member(browser, page, owner.workspace, "Alice");
  return { alice, api: alice.request };
}

/** The person returns to the editor's window (from the other one): it gets the focus. */
async function returnTo(page: Page): Promise<void> {
  await page.bringToFront();
  await page.evaluate(() => window.dispatchEvent(new FocusEvent("focus")));
}

const content = async (api: APIRequestContext, slug: string, ws: string) =>
  (await (await api.get(`/api/pages/${slug}?ws=${ws}`)).json()) as { content: string; parent: string | null; title: string };

async function neverOffersCreate(page: Page, en: Messages): Promise<void> {
  await expect(page.getByText(en["page.not_found"]!)).toHaveCount(0);
  await expect(page.getByTestId("page-missing")).toHaveCount(0);
}

test("renamed, moved, then deleted while edited in another browser: the text is saved each time", async ({
  page,
  browser,
  en,
  user,
}) => {
  const ws = user.workspace;
  await createPage(page.request, { title: "Operations", content: "# Operations\n" });
  await createPage(page.request, { title: "Archive", content: "# Archive\n" });
  await createPage(page.request, { title: "Runbook", parent: "operations", content: "# Runbook\n\nStep one.\n" });
  const { alice, api } = await secondPerson(browser, page, user);

  // I am editing the runbook.
  await page.goto(`/app/@${ws}/runbook/edit`);
  await expect(source(page)).toContainText("Step one.");
  await typeAtEnd(page, "My note one.");

  // Alice renames it in her browser.
  await alice.goto(`/app/@${ws}/runbook`);
  await alice.getByTestId("page-more").click();
  await alice.getByRole("menuitem", { name: en["page.rename"] }).click();
  const rename = alice.getByRole("dialog", { name: en["page.rename"] });
  await rename.getByLabel(en["page.title_placeholder"]!).fill("Playbook");
  await rename.getByRole("button", { name: en["page.rename"] }).click();
  await expect(alice).toHaveURL(pageUrl("playbook", "", ws));

  // Back in my window, the editor says so at once and follows the page.
  await returnTo(page);
  const notice = page.getByTestId("editor-notice");
  await expect(notice).toHaveText(
    fmt(en["editor.renamed"]!, { name: "Alice", title: "Playbook", address: `/app/@${ws}/playbook` }),
  );
  await expect(page).toHaveURL(pageUrl("playbook", "edit", ws));
  await page.keyboard.press("Control+s");
  await expect.poll(async () => (await content(page.request, "playbook", ws)).content).toContain("My note one.");
  // Merged with the rename's own change of the first heading.
  expect((await content(page.request, "playbook", ws)).content).toMatch(/^# Playbook\n/);

  // Alice moves it; I learn of it when I save, and the save lands all the same.
  await typeAtEnd(page, "\nMy note two.");
  const moved = await api.post(`/api/pages/playbook/move?ws=${ws}`, { data: { parent: "archive" } });
  expect(moved.status(), await moved.text()).toBe(200);
  await page.keyboard.press("Control+s");
  await expect(notice).toHaveText(fmt(en["editor.moved"]!, { name: "Alice", parent: "Archive" }));
  await expect.poll(async () => (await content(page.request, "playbook", ws)).content).toContain("My note two.");
  expect((await content(page.request, "playbook", ws)).parent).toBe("archive");

  // Alice deletes it in her browser.
  await typeAtEnd(page, "\nMy note three.");
  await alice.reload();
  await alice.getByTestId("page-more").click();
  await alice.getByRole("menuitem", { name: en["page.delete"] }).click();
  await alice.getByRole("dialog", { name: en["common.confirm"] }).getByRole("button", { name: en["page.delete"] }).click();
  await expect(alice).not.toHaveURL(/playbook/);

  // Back in my window: who deleted it, and my text kept; restore it and save into it.
  await returnTo(page);
  const gone = page.getByTestId("editor-gone");
  await expect(gone).toContainText("Alice");
  await expect(source(page)).toContainText("My note three.");
  await neverOffersCreate(page, en);
  await axe(page, "editor, page deleted meanwhile");
  await gone.getByRole("button", { name: en["editor.restore_and_save"] }).click();
  await expect(gone).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  const restored = await content(page.request, "playbook", ws);
  expect(restored.content).toContain("My note one.");
  expect(restored.content).toContain("My note two.");
  expect(restored.content).toContain("My note three.");
  expect(restored.parent).toBe("archive");
  await neverOffersCreate(page, en);
  await alice.context().close();
});

test("deleted while edited: the text can be saved as a new page, at a new address", async ({ page, browser, en, user }) => {
  const ws = user.workspace;
  await createPage(page.request, { title: "Handover", content: "# Handover\n\nKeys are in the drawer.\n" });
  const { alice, api } = await secondPerson(browser, page, user);

  await page.goto(`/app/@${ws}/handover/edit`);
  await expect(source(page)).toContainText("Keys are in the drawer.");
  await typeAtEnd(page, "The alarm code changed.");
  expect((await api.delete(`/api/pages/handover?ws=${ws}`)).status()).toBe(204);

  // Learned on saving at the latest: nothing is saved over nothing, and the text stays.
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  const gone = page.getByTestId("editor-gone");
  await expect(gone).toContainText("Alice");
  await expect(page).toHaveURL(pageUrl("handover", "edit", ws));
  await neverOffersCreate(page, en);
  await gone.getByRole("button", { name: en["editor.save_as_new"] }).click();

  // A new page with its own address (the deleted one keeps "handover" in the trash).
  await expect(page).toHaveURL(pageUrl("handover-2", "", ws));
  await expect(page.locator(".page-content")).toContainText("The alarm code changed.");
  const made = await content(page.request, "handover-2", ws);
  expect(made.title).toBe("Handover");
  expect(made.content).toContain("Keys are in the drawer.");
  const trash = (await (await page.request.get("/api/trash")).json()).items as { slug: string }[];
  expect(trash.map((t) => t.slug)).toContain("handover");
  await alice.context().close();
});
