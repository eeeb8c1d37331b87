// A page's title (docs/api.md, "Pages"): the first level-1 heading sets it
// only when the page is new or a save changed that heading, so a rename is not undone by
// the next edit and a section heading does not rename the page; the editor shows the
// title the save will give, and where it comes from. A rename keeps the text of links to
// the page that other pages show.
import type { Page } from "@playwright/test";
import { replaceText, source } from "../editing";
import { createPage, expect, test, type Messages, pageUrl } from "../fixtures";

// Editing alone (no co-editing session, as where WebSockets do not pass): explicit saves
// against base_revision, the unsaved-changes guard, conflicts. Editing together:
// co-editing.spec.ts.
test.use({ editAlone: true });

const titleField = (page: Page, en: Messages) => page.getByLabel(en["page.title_placeholder"]!, { exact: true });
const titleOf = async (page: Page, slug: string): Promise<string> => (await (await page.request.get(`/api/pages/${slug}`)).json()).title;


/** Renames the page on screen through its "⋯" menu. */
async function renameInUi(page: Page, en: Messages, title: string) {
  await page.getByTestId("page-more").click();
  await page.getByRole("menuitem", { name: en["page.rename"] }).click();
  const dialog = page.getByRole("dialog", { name: en["page.rename"] });
  await dialog.getByLabel(en["page.title_placeholder"]!).fill(title);
  await dialog.getByRole("button", { name: en["page.rename"] }).click();
  await expect(dialog).toHaveCount(0);
}

test("a rename is kept by the next edit, and the editor says so before saving", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Getting Started", content: "# Getting Started\n\nInstall it.\nRun it.\n" });
  await page.goto("/app/getting-started");
  await renameInUi(page, en, "Onboarding Guide");
  await expect(page).toHaveURL(pageUrl("onboarding-guide"));
  await expect(page.locator(".page-title")).toHaveText("Onboarding Guide");

  // Edit one line, not the heading: the editor shows the title the save keeps.
  await page.getByTestId("edit-page").click();
  await expect(source(page)).toContainText("Run it.");
  await expect(titleField(page, en)).toHaveValue("Onboarding Guide");
  await source(page).click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("Then use it.\n");
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.unsaved_changes"]!);
  await expect(titleField(page, en)).toHaveValue("Onboarding Guide");
  await expect(page.getByTestId("title-source")).toHaveCount(0);

  // The app sends no title of its own (one read when the editor opened would undo a
  // rename made meanwhile); the server keeps the renamed title.
  const put = page.waitForRequest((r) => r.method() === "PUT" && r.url().includes("/api/pages/onboarding-guide"));
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  expect((await put).postDataJSON().title).toBeUndefined();
  await expect(page).toHaveURL(pageUrl("onboarding-guide"));
  await expect(page.locator(".page-title")).toHaveText("Onboarding Guide");
  await expect(page.locator(".page-content")).toContainText("Then use it.");
  expect(await titleOf(page, "onboarding-guide")).toBe("Onboarding Guide");
});

test("a section heading does not rename the page; changing the first heading does", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Handbook", content: "# Handbook\n\nIntro.\n" });
  await page.goto("/app/handbook/edit");
  await expect(source(page)).toContainText("Intro.");
  await expect(titleField(page, en)).toHaveValue("Handbook");

  // Level-1 and level-2 section headings below a different first heading.
  await source(page).click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("\n# Introduction\n\nMore.\n\n## x\n\nEven more.\n");
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.unsaved_changes"]!);
  await expect(titleField(page, en)).toHaveValue("Handbook");
  await expect(page.getByTestId("title-source")).toHaveCount(0);
  await page.keyboard.press("Control+s");
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  expect(await titleOf(page, "handbook")).toBe("Handbook");

  // The first heading itself changes: the field follows it and says why, before saving.
  await replaceText(page, "# Staff Handbook\n\nIntro.\n\n# Introduction\n\nMore.\n");
  await expect(titleField(page, en)).toHaveValue("Staff Handbook");
  await expect(page.getByTestId("title-source")).toHaveText(en["editor.title_from_heading"]!);
  await expect(titleField(page, en)).toHaveAccessibleDescription(en["editor.title_from_heading"]!);
  const put = page.waitForRequest((r) => r.method() === "PUT" && r.url().includes("/api/pages/handbook"));
  await page.keyboard.press("Control+s");
  expect((await put).postDataJSON().title).toBeUndefined();
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  await expect(titleField(page, en)).toHaveValue("Staff Handbook");
  await expect(page.getByTestId("title-source")).toHaveCount(0); // saved: now simply the page's title
  expect(await titleOf(page, "handbook")).toBe("Staff Handbook");

  // Front matter's `title:` comes before any heading.
  await replaceText(page, "---\ntitle: From the Front\n---\n# Staff Handbook\n\nIntro.\n");
  await expect(titleField(page, en)).toHaveValue("From the Front");
  await expect(page.getByTestId("title-source")).toHaveText(en["editor.title_from_front_matter"]!);

  // A title typed in the field wins over both, and is what the save sends.
  await titleField(page, en).fill("Typed Title");
  await expect(page.getByTestId("title-source")).toHaveCount(0);
  const typed = page.waitForRequest((r) => r.method() === "PUT" && r.url().includes("/api/pages/handbook"));
  await page.keyboard.press("Control+s");
  expect((await typed).postDataJSON().title).toBe("Typed Title");
  await expect(page.getByTestId("editor-status")).toHaveText(en["page.saved"]!);
  expect(await titleOf(page, "handbook")).toBe("Typed Title");
});

test("a new page without a typed title takes its first heading", async ({ page, en, user }) => {
  void user;
  await page.goto("/app/-/new");
  await expect(titleField(page, en)).toHaveValue("");
  await source(page).click();
  await page.keyboard.type("# Fresh Heading\n\nBody text\n");
  await expect(titleField(page, en)).toHaveValue("Fresh Heading");
  await expect(page.getByTestId("title-source")).toHaveText(en["editor.title_from_heading"]!);
  await page.keyboard.press("Control+s");
  await expect(page).toHaveURL(pageUrl("fresh-heading"));
  await expect(page.locator(".page-title")).toHaveText("Fresh Heading");
});

test("a rename keeps the text of links to the page", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Getting Started", content: "# Getting Started\n\nInstall it.\n" });
  await createPage(page.request, {
    title: "Reader",
    content: "# Reader\n\nStart with [[Getting Started]] today.\n\nOr read [[getting-started|the guide]].\n",
  });
  await page.goto("/app/getting-started");
  await renameInUi(page, en, "Onboarding Guide");
  await expect(page).toHaveURL(pageUrl("onboarding-guide"));

  // The reader sees the same words, leading to the page under its new slug.
  await page.getByRole("tree").getByRole("link", { name: "Reader" }).click();
  await expect(page).toHaveURL(pageUrl("reader"));
  const body = page.locator(".page-content");
  const plain = body.getByRole("link", { name: "Getting Started", exact: true });
  await expect(plain).toHaveAttribute("href", pageUrl("onboarding-guide"));
  await expect(plain).not.toHaveClass(/wikilink-missing/);
  const labelled = body.getByRole("link", { name: "the guide", exact: true });
  await expect(labelled).toHaveAttribute("href", pageUrl("onboarding-guide"));
  await expect(body).not.toContainText("onboarding-guide");
  const reader = await (await page.request.get("/api/pages/reader")).json();
  expect(reader.content).toContain("[[onboarding-guide|Getting Started]]");
  expect(reader.content).toContain("[[onboarding-guide|the guide]]");

  await plain.click();
  await expect(page).toHaveURL(pageUrl("onboarding-guide"));
  await expect(page.locator(".page-title")).toHaveText("Onboarding Guide");
});
