// The editor's formatting: Ctrl/Cmd+B and +I wrap the selection (and unwrap it again),
// the toolbar (heading, bold, italic, link, bulleted list, checklist, code, table, image)
// applies to the selection or the current lines, is reachable by keyboard (one Tab stop,
// arrow keys inside), and every change is one undo step that restores exactly the text
// before it.
import type { Page } from "@playwright/test";
import { createPage, expect, test, type Messages } from "../fixtures";

const source = (page: Page) => page.getByTestId("source-editor");

/** The source's text as CodeMirror holds it (every line of a short page is rendered). */
const doc = (page: Page) =>
  source(page).evaluate((el) => [...el.querySelectorAll(".cm-line")].map((l) => l.textContent).join("\n"));

/** Opens a page with `content` in the editor. */
async function editing(page: Page, slug: string, content: string) {
  await createPage(page.request, { title: slug, slug, content });
  await page.goto(`/app/${slug}/edit`);
  await expect(source(page)).toContainText(content.split("\n")[0]!);
  await expect(page.getByRole("toolbar")).toBeVisible();
}

/** Puts the cursor at the end of the line holding `text`. */
async function endOf(page: Page, text: string) {
  await source(page).locator(".cm-line", { hasText: text }).click();
  await page.keyboard.press("End");
}

/** Selects the word before the cursor. */
async function selectWordBefore(page: Page) {
  await page.keyboard.press("Control+Shift+ArrowLeft");
}

const button = (page: Page, en: Messages, key: string) =>
  page.getByRole("toolbar", { name: en["editor.toolbar"] }).getByRole("button", { name: en[key], exact: true });

test("Ctrl+B and Ctrl+I wrap the selection, toggle off, and undo in one step", async ({ page, user }) => {
  void user;
  await editing(page, "shortcuts", "Shortcuts\n\nplain words\n");
  await endOf(page, "plain words");
  await selectWordBefore(page);
  await page.keyboard.press("Control+b");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain **words**\n");
  // The text stays selected: a second press takes the markers off again.
  await page.keyboard.press("Control+b");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain words\n");
  await page.keyboard.press("Control+i");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain *words*\n");
  // Bold over italic, then italic off leaves bold.
  await page.keyboard.press("Control+b");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain ***words***\n");
  await page.keyboard.press("Control+i");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain **words**\n");
  // Each was one undo step.
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain ***words***\n");
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain *words*\n");

  // Typed text and the bold that follows at once are separate steps: undo keeps the typing.
  await page.keyboard.press("Control+End");
  await page.keyboard.type("fresh");
  await selectWordBefore(page);
  await page.keyboard.press("Meta+b"); // Cmd+B, as on a Mac
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain *words*\n**fresh**");
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain *words*\nfresh");

  // No selection: an empty pair with the cursor inside, ready to type.
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Enter");
  await page.keyboard.press("Control+b");
  await page.keyboard.type("bold");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain *words*\nfresh\n**bold**");
  // The typing that follows is a step of its own too.
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain *words*\nfresh\n****");
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain *words*\nfresh\n");
  await page.keyboard.press("Control+y");
  await page.keyboard.press("Control+y");
  await expect.poll(() => doc(page)).toBe("Shortcuts\n\nplain *words*\nfresh\n**bold**");
  // Saved as shown.
  await page.keyboard.press("Control+s");
  await expect
    .poll(async () => (await page.request.get("/api/pages/shortcuts/raw")).text())
    .toBe("Shortcuts\n\nplain *words*\nfresh\n**bold**");
});

test("toolbar: every button applies to the selection or line, one undo step each", async ({ page, en, user }) => {
  void user;
  const start = "Toolbar\n\nintro words\nfirst\nsecond\n";
  await createPage(page.request, { title: "Target Page", content: "# Target Page" });
  await editing(page, "toolbar", start);
  const bar = page.getByRole("toolbar", { name: en["editor.toolbar"] });
  for (const key of [
    "editor.format.heading",
    "editor.format.bold",
    "editor.format.italic",
    "editor.format.link",
    "editor.format.bullets",
    "editor.format.checklist",
    "editor.format.code",
    "editor.format.table",
    "upload.image",
  ]) {
    await expect(bar.getByRole("button", { name: en[key], exact: true })).toBeVisible();
  }

  /** Clicks a button, checks the text, undoes and checks the text is back as before. */
  async function applies(key: string, after: string) {
    const before = await doc(page);
    await button(page, en, key).click();
    await expect.poll(() => doc(page)).toBe(after);
    // The focus stayed in (or went back to) the source.
    await expect(source(page)).toBeFocused();
    await page.keyboard.press("Control+z");
    await expect.poll(() => doc(page)).toBe(before);
  }

  // Heading: the current line becomes a level-2 heading (a level 1 would retitle the page).
  await endOf(page, "intro words");
  await applies("editor.format.heading", "Toolbar\n\n## intro words\nfirst\nsecond\n");
  // A second press takes it off again; another level becomes level 2.
  await button(page, en, "editor.format.heading").click();
  await expect.poll(() => doc(page)).toBe("Toolbar\n\n## intro words\nfirst\nsecond\n");
  await applies("editor.format.heading", start);
  await page.keyboard.press("Control+z");
  await page.keyboard.press("Home");
  await page.keyboard.type("#### ");
  await applies("editor.format.heading", "Toolbar\n\n## intro words\nfirst\nsecond\n");
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe(start);
  await endOf(page, "intro words");
  await selectWordBefore(page);
  await applies("editor.format.bold", "Toolbar\n\nintro **words**\nfirst\nsecond\n");
  await applies("editor.format.italic", "Toolbar\n\nintro *words*\nfirst\nsecond\n");
  await applies("editor.format.code", "Toolbar\n\nintro `words`\nfirst\nsecond\n");

  // Link with a selection: the address is selected, so typing replaces it.
  await button(page, en, "editor.format.link").click();
  await expect.poll(() => doc(page)).toBe("Toolbar\n\nintro [words](https://)\nfirst\nsecond\n");
  await page.keyboard.type("https://example.org/w");
  await expect.poll(() => doc(page)).toBe("Toolbar\n\nintro [words](https://example.org/w)\nfirst\nsecond\n");
  await page.keyboard.press("Control+z");
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe(start);

  // Lists over the two selected lines; the checklist over a bulleted list makes tasks of it.
  await endOf(page, "second");
  await page.keyboard.press("Shift+ArrowUp");
  await page.keyboard.press("Shift+Home");
  await applies("editor.format.bullets", "Toolbar\n\nintro words\n- first\n- second\n");
  await applies("editor.format.checklist", "Toolbar\n\nintro words\n- [ ] first\n- [ ] second\n");
  await button(page, en, "editor.format.bullets").click();
  await applies("editor.format.checklist", "Toolbar\n\nintro words\n- [ ] first\n- [ ] second\n");
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe(start);
  // Code over several lines: a fenced block.
  await endOf(page, "second");
  await page.keyboard.press("Shift+ArrowUp");
  await page.keyboard.press("Shift+Home");
  await applies("editor.format.code", "Toolbar\n\nintro words\n```\nfirst\nsecond\n```\n");
  // Bold over two lines wraps each (emphasis does not span lines); a second press unwraps both.
  await endOf(page, "second");
  await page.keyboard.press("Shift+ArrowUp");
  await page.keyboard.press("Shift+Home");
  await button(page, en, "editor.format.bold").click();
  await expect.poll(() => doc(page)).toBe("Toolbar\n\nintro words\n**first**\n**second**\n");
  await button(page, en, "editor.format.bold").click();
  await expect.poll(() => doc(page)).toBe(start);

  // A table below the current line, its first header cell selected to type over.
  await endOf(page, "intro words");
  await button(page, en, "editor.format.table").click();
  const col = (n: number) => en["editor.table_column"]!.replace("{n}", String(n));
  await expect
    .poll(() => doc(page))
    .toBe(`Toolbar\n\nintro words\n\n| ${col(1)} | ${col(2)} |\n| --- | --- |\n|  |  |\n\nfirst\nsecond\n`);
  await page.keyboard.type("Name");
  await expect(page.locator(".editor-preview table th").first()).toHaveText("Name");
  await page.keyboard.press("Control+z");
  await page.keyboard.press("Control+z");
  await expect.poll(() => doc(page)).toBe(start);

  // Link without a selection: [[ ]] with the page completion open.
  await endOf(page, "first");
  await page.keyboard.type(" ");
  await button(page, en, "editor.format.link").click();
  await expect(page.locator(".cm-tooltip-autocomplete")).toBeVisible();
  await page.keyboard.type("Targ");
  const option = page.locator(".cm-tooltip-autocomplete").getByText("Target Page");
  await expect(option).toBeVisible();
  await page.waitForTimeout(150);
  await page.keyboard.press("Enter");
  await page.keyboard.type(" after");
  await expect.poll(() => doc(page)).toBe("Toolbar\n\nintro words\nfirst [[Target Page]] after\nsecond\n");
});

test("toolbar: keyboard reachable, one Tab stop, arrows move, Enter applies", async ({ page, en, user }) => {
  void user;
  await editing(page, "keys", "Keys\n\nsome text\n");
  await endOf(page, "some text");
  await selectWordBefore(page);
  // From the Save button, Tab enters the toolbar at its first button.
  await page.getByRole("button", { name: en["page.save"], exact: true }).focus();
  await page.keyboard.press("Tab");
  await expect(button(page, en, "editor.format.heading")).toBeFocused();
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await expect(button(page, en, "editor.format.italic")).toBeFocused();
  await page.keyboard.press("End");
  await expect(button(page, en, "upload.image")).toBeFocused();
  await page.keyboard.press("ArrowRight"); // wraps around
  await expect(button(page, en, "editor.format.heading")).toBeFocused();
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  await expect(button(page, en, "editor.format.table")).toBeFocused();
  await page.keyboard.press("Home");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("Enter");
  await expect.poll(() => doc(page)).toBe("Keys\n\nsome **text**\n");
  await expect(source(page)).toBeFocused();
  // One Tab stop: Shift+Tab from the source goes back to the button used last, not the first.
  await page.keyboard.press("Shift+Tab");
  await expect(button(page, en, "editor.format.bold")).toBeFocused();
  await page.keyboard.press("Shift+Tab");
  await expect(page.getByRole("button", { name: en["page.save"], exact: true })).toBeFocused();
});
