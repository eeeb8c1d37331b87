// Screen 5: the editor — live preview, Save and Ctrl/Cmd+S with base_revision, the
// unsaved-changes guard, conflicts (merged silently when they do not overlap, resolved
// in a dialog when they do: save the merge, keep mine, or keep the other person's), [[ and #
// completion, image paste and drop → upload.
import type { Page } from "@playwright/test";
import { conflicting, keepTheirs, replaceText, source } from "../editing";
import { createPage, expect, fmt, pageUrl, test } from "../fixtures";

// Editing alone (no co-editing session, as where WebSockets do not pass): explicit saves
// against base_revision, the unsaved-changes guard, conflicts. Editing together:
// co-editing.spec.ts.
test.use({ editAlone: true });


test("edit with live preview; Ctrl+S saves against the base revision", async ({ page, en, user }) => {
  void user;
  const created = await createPage(page.request, { title: "Draft", content: "# Draft\n\nfirst words" });
  await page.goto("/app/draft");
  await page.getByTestId("edit-page").click();
  await expect(page).toHaveURL(pageUrl("draft", "edit"));
  await expect(source(page)).toContainText("first words");

  await replaceText(page, "# Draft\n\nsecond **words**");
  const preview = page.getByRole("region", { name: en["editor.preview"] });
  await expect(preview.locator("strong")).toHaveText("words");
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.unsaved_changes"]!);

  const put = page.waitForRequest((r) => r.method() === "PUT" && r.url().includes("/api/pages/draft"));
  await page.keyboard.press("Control+s");
  const body = (await put).postDataJSON();
  expect(body.base_revision).toBe(created.revision);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect(page).toHaveURL(pageUrl("draft", "edit")); // Ctrl+S stays in the editor
  const saved = await (await page.request.get("/api/pages/draft")).json();
  expect(saved.content).toBe("# Draft\n\nsecond **words**");

  // The title field renames the title; Save returns to the page.
  await page.getByLabel(en["page.title_placeholder"]!).fill("Draft Two");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page).toHaveURL(pageUrl("draft"));
  await expect(page.locator(".page-title")).toHaveText("Draft Two");
});

test("Cmd+S (Meta+S) saves and stays, like Ctrl+S", async ({ page, en, user }) => {
  void user;
  const created = await createPage(page.request, { title: "Mac Draft", content: "# Mac Draft\n\nold" });
  await page.goto("/app/mac-draft/edit");
  await expect(source(page)).toContainText("old");
  await replaceText(page, "# Mac Draft\n\nnew words");
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.unsaved_changes"]!);

  const put = page.waitForRequest((r) => r.method() === "PUT" && r.url().includes("/api/pages/mac-draft"));
  await page.keyboard.press("Meta+s");
  expect((await put).postDataJSON().base_revision).toBe(created.revision);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect(page).toHaveURL(pageUrl("mac-draft", "edit"));
  const raw = await page.request.get("/api/pages/mac-draft/raw");
  expect(await raw.text()).toBe("# Mac Draft\n\nnew words"); // saved, and no stray "s" typed

  // From the title field too (the shortcut is the document's, not only CodeMirror's).
  await page.getByLabel(en["page.title_placeholder"]!).fill("Mac Draft Two");
  const again = page.waitForRequest((r) => r.method() === "PUT" && r.url().includes("/api/pages/mac-draft"));
  await page.keyboard.press("Meta+s");
  await again;
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect(page.getByLabel(en["page.title_placeholder"]!)).toHaveValue("Mac Draft Two");
  expect((await (await page.request.get("/api/pages/mac-draft")).json()).title).toBe("Mac Draft Two");
});

test("unsaved changes are guarded", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Guarded", content: "# Guarded\n\ntext" });
  await createPage(page.request, { title: "Elsewhere", content: "# Elsewhere" });
  await page.goto("/app/guarded");
  await page.getByTestId("edit-page").click();
  await expect(source(page)).toContainText("text");
  await source(page).click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type(" more");

  // In-app navigation asks first; Cancel stays.
  await page.getByRole("tree").getByRole("link", { name: "Elsewhere" }).click();
  const ask = page.getByRole("dialog");
  await expect(ask).toContainText(en["page.discard_changes_confirm"]!);
  await ask.getByRole("button", { name: en["common.cancel"] }).click();
  await expect(page).toHaveURL(pageUrl("guarded", "edit"));
  await expect(source(page)).toContainText("text more");

  // The browser's back button asks too.
  await page.goBack();
  await expect(page.getByRole("dialog")).toBeVisible();
  await page.getByRole("dialog").getByRole("button", { name: en["common.cancel"] }).click();
  await expect(page).toHaveURL(pageUrl("guarded", "edit"));

  // Leaving the site asks the browser's question. (Accepted, so the page really closes:
  // a dismissed one stays open with `close` pending, which raced the test's teardown.)
  const asked = new Promise<string>((resolve) => page.once("dialog", (d) => (resolve(d.type()), void d.accept())));
  const closed = page.waitForEvent("close");
  await page.close({ runBeforeUnload: true });
  expect(await asked).toBe("beforeunload");
  await closed;
});

test("the guard lets go after confirming", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Leave Me", content: "# Leave Me\n\ntext" });
  await createPage(page.request, { title: "Other Place", content: "# Other Place" });
  await page.goto("/app/leave-me/edit");
  await expect(source(page)).toContainText("text");
  await source(page).click();
  await page.keyboard.type("x");
  await page.getByRole("tree").getByRole("link", { name: "Other Place" }).click();
  await page.getByRole("dialog").getByRole("button", { name: en["common.confirm"] }).click();
  await expect(page).toHaveURL(pageUrl("other-place"));
  const kept = await (await page.request.get("/api/pages/leave-me")).json();
  expect(kept.content).toBe("# Leave Me\n\ntext");
});

test("a stale save that does not overlap is merged", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Shared", content: "line one\nline two\nline three\n" });
  await page.goto("/app/shared/edit");
  await expect(source(page)).toContainText("line three");
  // Someone else changes the first line meanwhile.
  const other = await page.request.put("/api/pages/shared", { data: { content: "LINE ONE\nline two\nline three\n" } });
  expect(other.status()).toBe(200);
  // We change the last line.
  await replaceText(page, "line one\nline two\nline THREE\n");
  await page.keyboard.press("Control+s");
  await expect(page.getByTestId("editor-status")).toHaveText(en["editor.merged"]!);
  await expect(source(page)).toContainText("LINE ONE");
  const saved = await (await page.request.get("/api/pages/shared")).json();
  expect(saved.content).toBe("LINE ONE\nline two\nline THREE\n");
});

test("an overlapping stale save shows theirs, yours and the merge to resolve", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Contested", content: "alpha\nbeta\ngamma\n" });
  await page.goto("/app/contested/edit");
  await expect(source(page)).toContainText("gamma");
  const other = await page.request.put("/api/pages/contested", { data: { content: "alpha\nTHEIR BETA\ngamma\n" } });
  expect(other.status()).toBe(200);
  await replaceText(page, "alpha\nMY BETA\ngamma\n");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();

  const dialog = page.getByRole("dialog", { name: en["page.merge_conflict.title"] });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId("conflict-theirs")).toContainText("THEIR BETA");
  await expect(dialog.getByTestId("conflict-yours")).toContainText("MY BETA");
  const merged = dialog.getByTestId("conflict-merged");
  await expect(merged).toHaveValue(/<<<<<<<[\s\S]*MY BETA[\s\S]*THEIR BETA|<<<<<<<[\s\S]*THEIR BETA[\s\S]*MY BETA/);
  await expect(page).toHaveURL(pageUrl("contested", "edit"));

  await merged.fill("alpha\nOUR BETA\ngamma\n");
  await dialog.getByRole("button", { name: en["page.conflict.save_merged"] }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect(source(page)).toContainText("OUR BETA");
  const saved = await (await page.request.get("/api/pages/contested")).json();
  expect(saved.content).toBe("alpha\nOUR BETA\ngamma\n");
  const history = await (await page.request.get("/api/pages/contested/history")).json();
  expect(history.items.length).toBe(3); // nothing was lost: both saves are in the history
});


const raw = async (page: Page, slug: string) => (await page.request.get(`/api/pages/${slug}/raw`)).text();

test("the conflict dialog: keep my version saves mine over theirs", async ({ page, en, user }) => {
  void user;
  const { dialog, theirs } = await conflicting(page, en, "keep-mine");
  const put = page.waitForRequest((r) => r.method() === "PUT" && r.url().includes("/api/pages/keep-mine"));
  await dialog.getByRole("button", { name: en["page.conflict.keep_yours"] }).click();
  expect((await put).postDataJSON().base_revision).toBe(theirs); // over their revision, knowingly
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect.poll(() => raw(page, "keep-mine")).toBe("alpha\nMY BETA\ngamma\n");
  await expect(source(page)).toContainText("MY BETA");
  await expect(source(page)).not.toContainText("THEIR BETA");
  // Theirs is not lost: it is the revision before ours.
  const history = (await (await page.request.get("/api/pages/keep-mine/history")).json()).items;
  expect(history.length).toBe(3);
});

test("the conflict dialog: keeping the other person's version keeps theirs", async ({ page, en, user }) => {
  void user;
  const { dialog } = await conflicting(page, en, "take-theirs");
  await keepTheirs(dialog, en, "Test User").click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect(source(page)).toContainText("THEIR BETA");
  await expect(source(page)).not.toContainText("MY BETA");
  expect(await raw(page, "take-theirs")).toBe("alpha\nTHEIR BETA\ngamma\n");
  // Nothing is left unsaved: leaving asks nothing.
  await page.getByRole("button", { name: en["page.cancel"] }).click();
  await expect(page).toHaveURL(pageUrl("take-theirs"));
  await expect(page.locator(".page-content")).toContainText("THEIR BETA");
});

test("[[ completes page titles and # completes tags", async ({ page, user }) => {
  void user;
  await createPage(page.request, { title: "Linked Target", content: "# Linked Target\n\nabout #projectx" });
  await createPage(page.request, { title: "Writer", content: "# Writer\n\n" });
  await page.goto("/app/writer/edit");
  await expect(source(page)).toContainText("Writer");
  await source(page).click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("See [[Linked T");
  const option = page.locator(".cm-tooltip-autocomplete").getByText("Linked Target");
  await expect(option).toBeVisible();
  // CodeMirror ignores Enter for 75 ms after the list changes (interactionDelay), so
  // that fast typing does not pick an option by accident.
  await page.waitForTimeout(150);
  await page.keyboard.press("Enter");
  await expect(source(page)).toContainText("See [[Linked Target]]");
  // The cursor is after the link's "]]" (typed "[[" got its "]]" at once; it is not doubled).
  await page.keyboard.type(" and #proj");
  await expect(source(page).locator(".cm-line").last()).toHaveText("See [[Linked Target]] and #proj");
  await expect(page.locator(".cm-tooltip-autocomplete").getByText("projectx")).toBeVisible();
  await page.waitForTimeout(150);
  await page.keyboard.press("Enter");
  await expect(source(page)).toContainText("and #projectx");
  // The preview shows the wikilink as an existing page.
  await expect(page.locator(".editor-preview a.wikilink", { hasText: "Linked Target" })).not.toHaveClass(/wikilink-missing/);
});

// A 1×1 PNG.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

test("pasting an image uploads it and inserts the markdown", async ({ page, user }) => {
  void user;
  await createPage(page.request, { title: "Gallery", content: "# Gallery\n\n" });
  await page.goto("/app/gallery/edit");
  await expect(source(page)).toContainText("Gallery");
  await source(page).click();
  await page.keyboard.press("Control+End");
  const uploaded = page.waitForResponse((r) => r.url().includes("/api/uploads") && r.request().method() === "POST");
  await page.evaluate((b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const file = new File([bytes], "dot.png", { type: "image/png" });
    const dt = new DataTransfer();
    dt.items.add(file);
    const ev = new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true });
    document.querySelector(".cm-content")!.dispatchEvent(ev);
  }, PNG);
  expect((await uploaded).status()).toBe(201);
  await expect(source(page)).toContainText(/!\[dot\]\(\/uploads\/[^)]+\.png\)/);
  const img = page.locator(".editor-preview img");
  await expect(img).toHaveCount(1);
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(1);
});

test("dropping an image uploads it and inserts the markdown at the drop point", async ({ page, user }) => {
  void user;
  await createPage(page.request, { title: "Drop Zone", content: "# Drop Zone\n\nbefore\nafter\n" });
  await page.goto("/app/drop-zone/edit");
  await expect(source(page)).toContainText("after");
  // Dropped at the start of the line "after".
  const line = await source(page).locator(".cm-line", { hasText: /^after$/ }).boundingBox();
  expect(line).not.toBeNull();
  const uploaded = page.waitForResponse((r) => r.url().includes("/api/uploads") && r.request().method() === "POST");
  await page.evaluate(
    ({ b64, x, y }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], "dropped.png", { type: "image/png" }));
      const target = document.querySelector(".cm-content")!;
      for (const type of ["dragenter", "dragover", "drop"]) {
        target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, clientX: x, clientY: y, bubbles: true, cancelable: true }));
      }
    },
    { b64: PNG, x: line!.x + 2, y: line!.y + line!.height / 2 },
  );
  expect((await uploaded).status()).toBe(201);
  await expect(source(page)).toContainText(/!\[dropped\]\(\/uploads\/[^)]+\.png\)/);
  await expect(page.locator(".editor-preview img")).toHaveCount(1);
  await page.keyboard.press("Control+s");
  await expect.poll(() => raw(page, "drop-zone")).toMatch(/^# Drop Zone\n\nbefore\n!\[dropped\]\(\/uploads\/[^)]+\.png\)\nafter\n$/);
});

test("a new page needs a title", async ({ page, en, user }) => {
  void user;
  await page.goto("/app/-/new");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page.getByRole("alert")).toHaveText(en["editor.title_required"]!);
  await page.getByLabel(en["page.title_placeholder"]!).fill("Fresh Page");
  await source(page).click();
  await page.keyboard.type("Body text");
  await page.keyboard.press("Control+s");
  await expect(page).toHaveURL(pageUrl("fresh-page"));
  await expect(page.locator(".page-content")).toContainText("Body text");
  void fmt;
});
