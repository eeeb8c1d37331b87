// Editing together: people who open the same page's editor share its markdown as it is
// typed (a Yjs session over the page's WebSocket), see each other's names and who is
// typing, and never lose a keystroke — not when they type at the same spot at the same
// time, not when one of them goes offline and reloads, not when the page is renamed or
// deleted under them. Someone reading the page sees who edits it and their saves appear.
// Each person is a browser context of their own.
import type { Page, WebSocketRoute } from "@playwright/test";
import { source } from "../editing";
import { createPage, expect, fmt, member, test, type Messages } from "../fixtures";

/** Opens `slug`'s editor and waits for the session's text. */
async function edit(page: Page, ws: string, slug: string, text: string): Promise<void> {
  await page.goto(`/app/@${ws}/${slug}/edit`);
  await expect(source(page)).toContainText(text);
}

/** The editor's text, without the other people's cursors and name labels drawn in it. */
const textOf = (page: Page) =>
  source(page).evaluate((el) => {
    const copy = el.cloneNode(true) as HTMLElement;
    copy.querySelectorAll(".cm-ySelectionCaret, .cm-ySelectionInfo, .cm-widgetBuffer").forEach((w) => w.remove());
    return [...copy.querySelectorAll(".cm-line")].map((line) => line.textContent ?? "").join("\n");
  });

const stored = async (page: Page, ws: string, slug: string) =>
  ((await (await page.request.get(`/api/pages/${slug}?ws=${ws}`)).json()) as { content: string }).content;

/** Everyone types at the end of the same line at the same time; then all editors show one
 *  text holding every person's words, and so does the revision the session saves. */
async function typeTogether(people: Page[], en: Messages, ws: string, slug: string): Promise<string> {
  for (const p of people) {
    await source(p).click();
    await p.keyboard.press("Control+End");
  }
  const words = people.map((_, i) => ` words-of-${i}`);
  await Promise.all(people.map((p, i) => p.keyboard.type(words[i]!, { delay: 15 })));
  for (const p of people) await expect(p.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect.poll(async () => new Set(await Promise.all(people.map(textOf))).size).toBe(1);
  const text = await textOf(people[0]!);
  const line = text.trimEnd().split("\n").pop()!;
  for (const w of words) expect(line.split(w).length, `${w} once in ${line}`).toBe(2);
  // The session saves when typing pauses (3 s): the revision ends with that very line.
  await expect.poll(async () => (await stored(people[0]!, ws, slug)).trimEnd().split("\n").pop(), { timeout: 15_000 }).toBe(line);
  return text;
}

test("two people type at the same spot at the same time: one text, in both and in the revision", async ({ page, browser, en, user }) => {
  const ws = user.workspace;
  await createPage(page.request, { title: "Runbook", content: "# Runbook\n\nStep one." });
  const alice = await member(browser, page, ws, "Alice");
  await edit(page, ws, "runbook", "Step one.");
  await edit(alice, ws, "runbook", "Step one.");
  // Each sees the other.
  await expect(page.getByTestId("presence")).toContainText("Alice");
  await expect(alice.getByTestId("presence")).toContainText(user.name);
  const text = await typeTogether([page, alice], en, ws, "runbook");
  expect(text.startsWith("# Runbook\n\nStep one.")).toBe(true);
  await alice.context().close();
});

test("three people type at the same spot at the same time: one text in all three", async ({ page, browser, en, user }) => {
  const ws = user.workspace;
  await createPage(page.request, { title: "Notes", content: "# Notes\n\nAgenda:" });
  const alice = await member(browser, page, ws, "Alice");
  const bob = await member(browser, page, ws, "Bob");
  for (const p of [page, alice, bob]) await edit(p, ws, "notes", "Agenda:");
  await expect(page.getByTestId("presence-person")).toHaveCount(2);
  await typeTogether([page, alice, bob], en, ws, "notes");
  await alice.context().close();
  await bob.context().close();
});

test("presence: who has the page open, who is typing, gone soon after leaving", async ({ page, browser, user }) => {
  const ws = user.workspace;
  await createPage(page.request, { title: "Plan", content: "# Plan\n" });
  const alice = await member(browser, page, ws, "Alice");
  await edit(page, ws, "plan", "# Plan");
  const presence = page.getByTestId("presence");
  await expect(presence).toHaveCount(0);
  await edit(alice, ws, "plan", "# Plan");
  await expect(presence).toContainText("Alice");
  await source(alice).click();
  await alice.keyboard.type("Hello");
  await expect(presence).toContainText("typing");
  // Her edit shows in my editor and preview as she types.
  await expect(source(page)).toContainText("Hello");
  await expect(page.locator(".editor-preview")).toContainText("Hello");
  await alice.close();
  await expect(presence).toHaveCount(0, { timeout: 5_000 });
  await alice.context().close();
});

test("the page view shows who is editing, and their saved changes without a reload", async ({ page, browser, user }) => {
  const ws = user.workspace;
  await createPage(page.request, { title: "Rota", content: "# Rota\n\nMonday: Ann." });
  const alice = await member(browser, page, ws, "Alice");
  await page.goto(`/app/@${ws}/rota`);
  await expect(page.locator(".page-content")).toContainText("Monday: Ann.");
  const presence = page.getByTestId("presence");
  await expect(presence).toHaveCount(0);
  await edit(alice, ws, "rota", "Monday: Ann.");
  await expect(presence).toContainText("Alice");
  await source(alice).click();
  await alice.keyboard.press("Control+End");
  await alice.keyboard.type(" Tuesday: Bob.");
  await expect(presence).toContainText("typing");
  // Saved (here at once; else when she pauses): it appears in my view, no reload.
  await alice.keyboard.press("Control+s");
  await expect(page.locator(".page-content")).toContainText("Tuesday: Bob.");
  await alice.close();
  await expect(presence).toHaveCount(0, { timeout: 5_000 });
  await alice.context().close();
});

test("offline: typing is kept on the device across a reload and merges when the connection is back", async ({ page, browser, en, guard, user }) => {
  const ws = user.workspace;
  await createPage(page.request, { title: "Trip", content: "# Trip\n\nPack." });
  const alice = await member(browser, page, ws, "Alice");
  guard.allowed.push(/WebSocket/);
  // Alice's connection to the session can be cut, as a network or a closed lid cuts it:
  // while "offline", a new connection is never answered.
  let offline = false;
  const open: WebSocketRoute[] = [];
  const held: WebSocketRoute[] = [];
  await alice.routeWebSocket(/\/live/, (route) => {
    if (offline) held.push(route);
    else open.push(route, route.connectToServer());
  });
  await edit(page, ws, "trip", "Pack.");
  await edit(alice, ws, "trip", "Pack.");
  await expect(alice.getByTestId("editor-status")).toHaveText(en["page.saved"]!);

  offline = true;
  for (const route of open.splice(0)) await route.close();
  await source(alice).click();
  await alice.keyboard.press("Control+End");
  await alice.keyboard.type(" Passport.");
  // One change a keystroke, each kept on the device.
  const kept = fmt(en["live.offline_kept_other"]!, { count: 10 });
  await expect(alice.getByTestId("editor-status")).toHaveText(kept);
  // Reloaded while still offline: her text is still there, from this device.
  await alice.reload();
  await expect(source(alice)).toContainText("Pack. Passport.");
  await expect(alice.getByTestId("editor-status")).toHaveText(kept);
  // Meanwhile I type too.
  await source(page).click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type(" Tickets.");
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);

  // Back online: both edits, in both editors and in the revision.
  offline = false;
  for (const route of held.splice(0)) await route.close();
  await expect(alice.getByTestId("editor-status")).toHaveText(en["page.saved"]!, { timeout: 15_000 });
  for (const p of [page, alice]) {
    await expect(source(p)).toContainText("Passport.");
    await expect(source(p)).toContainText("Tickets.");
  }
  await expect.poll(async () => (await textOf(page)) === (await textOf(alice))).toBe(true);
  await expect.poll(() => stored(page, ws, "trip"), { timeout: 15_000 }).toContain("Passport.");
  expect(await stored(page, ws, "trip")).toContain("Tickets.");
  await alice.context().close();
});

test("renamed, then deleted during a session: it follows the page, says who deleted it, and no text is lost", async ({
  page,
  browser,
  en,
  user,
}) => {
  const ws = user.workspace;
  await createPage(page.request, { title: "Handbook", content: "# Handbook\n\nWelcome." });
  const alice = await member(browser, page, ws, "Alice");
  await edit(page, ws, "handbook", "Welcome.");
  await edit(alice, ws, "handbook", "Welcome.");

  // Alice renames it: the session goes on for both (it is the page's, whatever its address).
  const renamed = await alice.request.post(`/api/pages/handbook/rename?ws=${ws}`, { data: { new_slug: "guide" } });
  expect(renamed.status(), await renamed.text()).toBe(200);
  await page.evaluate(() => window.dispatchEvent(new FocusEvent("focus")));
  await expect(page).toHaveURL(new RegExp(`/app/@${ws}/guide/edit`));
  await source(page).click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type(" After the rename.");
  await expect(source(alice)).toContainText("After the rename.");

  // Alice deletes it: I am told at once, by name, with my text still in the editor.
  await page.keyboard.type(" Just before the delete.");
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  expect((await alice.request.delete(`/api/pages/guide?ws=${ws}`)).status()).toBe(204);
  const gone = page.getByTestId("editor-gone");
  await expect(gone).toContainText("Alice");
  await expect(source(page)).toContainText("Just before the delete.");
  await gone.getByRole("button", { name: en["editor.restore_and_save"] }).click();
  await expect(gone).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect.poll(() => stored(page, ws, "guide")).toContain("After the rename. Just before the delete.");
  await alice.context().close();
});

