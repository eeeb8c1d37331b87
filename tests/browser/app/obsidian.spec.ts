// Obsidian's markdown as a person sees it in the page view (docs/import.md, "Obsidian
// notes"): callouts (titled, default-titled, folded), note and section embeds framed with
// a link to their source, placeholders for a missing page, a cycle and too deep a chain,
// embeds that never reach into another workspace, image sizes, ==highlights==, block ids
// as anchors and embeds, and a placeholder (not a wikilink) for an image that is no upload.
// And axe over all of it in both themes (every callout family's colours included).
import AxeBuilder from "@axe-core/playwright";
import type { APIRequestContext, Page } from "@playwright/test";
import { createPage, expect, pageUrl, test } from "../fixtures";

// A 1×1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

const content = (page: Page) => page.locator(".page-content");

async function upload(request: APIRequestContext): Promise<string> {
  const res = await request.post("/api/uploads", {
    multipart: { file: { name: "shot.png", mimeType: "image/png", buffer: PNG } },
  });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()).name as string;
}

test("callouts: a titled warning, a type's own title, a folded one that opens on click, markdown inside", async ({
  page,
  en,
  user,
}) => {
  void user;
  await createPage(page.request, {
    title: "Callouts",
    content: [
      "# Callouts",
      "",
      "> [!warning] Mind the gap",
      "> Stand behind the **yellow** line.",
      "",
      "> [!tip]",
      "> A tip without a title.",
      "",
      "> [!faq]- Why is the sky blue?",
      "> Because of Rayleigh scattering.",
      "> - first reason",
      ">   - nested reason",
      ">",
      "> ```",
      "> code inside",
      "> ```",
      ">",
      "> > [!note] Inner",
      "> > A nested callout.",
      "",
      "> [!example]+ Open by default",
      "> Shown until folded.",
      "",
      "> [!custom-kind] Unknown type",
      "> Shown as a note.",
      "",
      "> A plain quote stays a quote.",
      "",
    ].join("\n"),
  });
  await page.goto("/app/callouts");
  const warning = content(page).locator(".callout-warning");
  await expect(warning.locator(".callout-title")).toHaveText("Mind the gap");
  await expect(warning.locator(".callout-content strong")).toHaveText("yellow");
  await expect(content(page)).not.toContainText("[!warning]");
  await expect(content(page)).not.toContainText("[!");

  // No title: the type's name from the catalogue.
  await expect(content(page).locator(".callout-tip .callout-title")).toHaveText(en["callout.tip"]!);
  await expect(content(page).locator(".callout-tip")).toContainText("A tip without a title.");

  // Folded ("-"): closed until its title is clicked; lists, code and a nested callout inside.
  const faq = content(page).locator("details.callout-question");
  await expect(faq).not.toHaveAttribute("open", /.*/);
  await expect(faq.getByText("Because of Rayleigh scattering.")).toBeHidden();
  await faq.getByText("Why is the sky blue?").click();
  await expect(faq).toHaveAttribute("open", "");
  await expect(faq.getByText("Because of Rayleigh scattering.")).toBeVisible();
  await expect(faq.locator("li li")).toHaveText("nested reason");
  await expect(faq.locator("pre code")).toHaveText("code inside\n");
  await expect(faq.locator(".callout-note .callout-title")).toHaveText("Inner");
  await expect(faq.locator(".callout-note")).toContainText("A nested callout.");

  // Foldable and open ("+"): shown, and folded by a click.
  const example = content(page).locator("details.callout-example");
  await expect(example.getByText("Shown until folded.")).toBeVisible();
  await example.getByText("Open by default").click();
  await expect(example.getByText("Shown until folded.")).toBeHidden();

  // An unknown type is a note, titled as written.
  await expect(content(page).locator('.callout-note[data-callout="custom-kind"] .callout-title')).toHaveText("Unknown type");
  await expect(content(page).locator("blockquote")).toHaveText("A plain quote stays a quote.");
});

test("embeds show a page, a section and a block in a frame linking to the source; a missing page is a placeholder", async ({
  page,
  en,
  user,
}) => {
  await createPage(page.request, {
    title: "Source Note",
    content: [
      "# Source Note",
      "",
      "Intro paragraph.",
      "",
      "## Alpha",
      "",
      "Alpha text.",
      "",
      "### Alpha child",
      "",
      "Child text.",
      "",
      "## Beta",
      "",
      "Beta text. ^beta-block",
      "",
      "- first item",
      "- second item ^item-two",
      "",
    ].join("\n"),
  });
  await createPage(page.request, {
    title: "Host",
    content: [
      "# Host",
      "",
      "Before the embeds.",
      "![[Source Note]]",
      "",
      "![[Source Note#Alpha]]",
      "",
      "![[Source Note#^item-two]]",
      "",
      "![[Nowhere To Be Found]]",
      "",
      "- [ ] a task with ![[Source Note#^beta-block]]",
      "",
    ].join("\n"),
  });
  await page.goto("/app/host");
  await expect(content(page)).toContainText("Before the embeds.");
  const frames = content(page).locator(".embed");
  await expect(frames).toHaveCount(4);

  // The whole page (its title heading is the frame's link).
  const whole = frames.nth(0);
  await expect(whole.locator(".embed-body")).toContainText("Intro paragraph.");
  await expect(whole.locator(".embed-body")).toContainText("Beta text.");
  await expect(whole.locator(".embed-body")).not.toContainText("^beta-block");
  await expect(whole.locator(".embed-source")).toHaveText("Source Note");
  await expect(whole.locator(".embed-source")).toHaveAttribute("href", `/app/@${user.workspace}/source-note`);

  // The section: its heading down to the next heading of the same level.
  const section = frames.nth(1).locator(".embed-body");
  await expect(section.getByRole("heading", { name: "Alpha", exact: true })).toBeVisible();
  await expect(section).toContainText("Alpha text.");
  await expect(section).toContainText("Child text.");
  await expect(section).not.toContainText("Beta text.");
  await expect(section).not.toContainText("Intro paragraph.");
  await expect(frames.nth(1).locator(".embed-source")).toHaveText("Source Note › Alpha");

  // The list item carrying the block id.
  const block = frames.nth(2).locator(".embed-body");
  await expect(block.locator("li")).toHaveText("second item");
  await expect(block).not.toContainText("first item");

  // In a task item the embed stands beside the box's label, not inside it (a click on
  // the embedded text must not tick the box).
  const task = content(page).locator("li.task-list-item");
  await expect(task.locator("label")).toHaveText("a task with");
  await expect(task.locator(".embed .embed-body")).toHaveText("Beta text.");
  await task.locator(".embed-body").click();
  await expect(task.getByRole("checkbox")).not.toBeChecked();

  // A missing page: a placeholder saying so, with a link to create it.
  const missing = content(page).locator(".embed-missing");
  await expect(missing).toContainText(en["embed.missing"]!);
  await expect(missing.getByRole("link", { name: "Nowhere To Be Found" })).toHaveAttribute("href", /\/nowhere-to-be-found\?title=/);

  // The frame's link opens the source page.
  await whole.locator(".embed-source").click();
  await expect(page).toHaveURL(pageUrl("source-note"));
  await expect(content(page)).toContainText("Intro paragraph.");
});

test("embed cycles and chains stop: a page embedding itself, two pages embedding each other, depth 3", async ({
  page,
  en,
  user,
}) => {
  void user;
  await createPage(page.request, { title: "Mirror", content: "Mirror text.\n\n![[Mirror]]\n" });
  await createPage(page.request, { title: "Ping", content: "Ping text.\n\n![[Pong]]\n" });
  await createPage(page.request, { title: "Pong", content: "Pong text.\n\n![[Ping]]\n" });
  for (let i = 1; i <= 5; i++) {
    await createPage(page.request, { title: `Level ${i}`, content: `Level ${i} text.\n\n${i < 5 ? `![[Level ${i + 1}]]` : ""}\n` });
  }

  await page.goto("/app/mirror");
  await expect(content(page)).toContainText("Mirror text.");
  await expect(content(page).locator(".embed-cycle")).toContainText(en["embed.cycle"]!);
  await expect(content(page).locator(".embed")).toHaveCount(0);

  // Ping shows Pong, whose embed of Ping stops.
  await page.goto("/app/ping");
  await expect(content(page).locator(".embed")).toHaveCount(1);
  await expect(content(page).locator(".embed .embed-body")).toContainText("Pong text.");
  await expect(content(page).locator(".embed .embed-cycle")).toContainText(en["embed.cycle"]!);
  await expect(content(page).getByText("Ping text.")).toHaveCount(1);

  // Level 1 shows levels 2, 3 and 4 nested; level 5 would be a fourth embed.
  await page.goto("/app/level-1");
  await expect(content(page)).toContainText("Level 4 text.");
  await expect(content(page).locator(".embed")).toHaveCount(3);
  await expect(content(page)).not.toContainText("Level 5 text.");
  const deep = content(page).locator(".embed-deep");
  await expect(deep).toContainText(en["embed.too_deep"]!.replace("{depth}", "3"));
  await expect(deep.getByRole("link", { name: "Level 5" })).toBeVisible();
});

test("an embed never shows a page of another workspace with the same slug", async ({ page, en, user }) => {
  const api = page.request;
  const other = await (await api.post("/api/workspaces", { data: { name: `Other ${Date.now().toString(36)}` } })).json();
  const res = await api.post(`/api/pages?ws=${other.slug}`, {
    data: { title: "Shared Name", content: "# Shared Name\n\nSecret of the other workspace.\n" },
  });
  expect(res.status(), await res.text()).toBe(201);
  await createPage(api, { title: "Embedder", content: "Embedding below.\n\n![[Shared Name]]\n" });

  // The current workspace has no such page: the placeholder, not the other's content.
  await page.goto("/app/embedder");
  await expect(content(page).locator(".embed-missing")).toContainText(en["embed.missing"]!);
  await expect(content(page)).not.toContainText("Secret of the other workspace.");

  // Once the current workspace has its own page of that slug, that one is shown.
  await createPage(api, { title: "Shared Name", content: "# Shared Name\n\nThis workspace's own text.\n" });
  await page.reload();
  await expect(content(page).locator(".embed .embed-body")).toHaveText("This workspace's own text.");
  await expect(content(page)).not.toContainText("Secret of the other workspace.");
  await expect(content(page).locator(".embed-source")).toHaveAttribute("href", `/app/@${user.workspace}/shared-name`);
});

test("image sizes, ==highlights==, and images that are no upload shown as missing, not as links", async ({ page, en, user }) => {
  void user;
  const name = await upload(page.request);
  await createPage(page.request, {
    title: "Pictures",
    content: [
      "# Pictures",
      "",
      `![[${name}|600]]`,
      "",
      `![[/uploads/${name}|320x200]]`,
      "",
      `![A small one|150](/uploads/${name})`,
      "",
      "This is ==very important== text, but `==not in code==`.",
      "",
      "![[diagram.svg]]",
      "",
      `![[${"0".repeat(64)}.png]]`,
      "",
    ].join("\n"),
  });
  await page.goto("/app/pictures");
  const imgs = content(page).locator("img");
  await expect(imgs).toHaveCount(3);
  await expect(imgs.nth(0)).toHaveAttribute("width", "600");
  await expect(imgs.nth(0)).not.toHaveAttribute("height", /.*/);
  await expect(imgs.nth(0)).toHaveAttribute("src", `/uploads/${name}`);
  await expect.poll(() => imgs.nth(0).evaluate((el: HTMLImageElement) => el.naturalWidth)).toBe(1);
  expect((await imgs.nth(0).boundingBox())!.width).toBeCloseTo(600, 0);
  await expect(imgs.nth(1)).toHaveAttribute("width", "320");
  await expect(imgs.nth(1)).toHaveAttribute("height", "200");
  await expect(imgs.nth(2)).toHaveAttribute("width", "150");
  await expect(imgs.nth(2)).toHaveAttribute("alt", "A small one");
  // The size is no caption.
  await expect(content(page)).not.toContainText("|600");

  await expect(content(page).locator("mark")).toHaveText("very important");
  await expect(content(page).locator("code")).toHaveText("==not in code==");

  // An SVG (refused as an upload) and an upload name this workspace does not have.
  const missing = content(page).locator(".image-missing");
  await expect(missing).toHaveCount(2);
  await expect(missing.nth(0)).toHaveText("diagram.svg");
  await expect(missing.nth(0)).toHaveAttribute("title", en["embed.image_missing"]!.replace("{name}", "diagram.svg"));
  await expect(missing.nth(1)).toHaveAttribute("title", /^Missing image: /);
  await expect(content(page).locator("a.wikilink")).toHaveCount(0);
  await expect(content(page).getByRole("img", { name: en["embed.image_missing"]!.replace("{name}", "diagram.svg") })).toBeVisible();
});

test("a block id is hidden, anchors its paragraph or list item, and [[Page#^id]] jumps to it", async ({ page, user }) => {
  void user;
  const filler = Array.from({ length: 40 }, (_, i) => `Filler paragraph ${i + 1}.`).join("\n\n");
  await createPage(page.request, {
    title: "Facts",
    content: `# Facts\n\n${filler}\n\nThe sky is blue. ^sky-fact\n\n- water is wet ^wet\n- fire is hot\n`,
  });
  await createPage(page.request, { title: "Linker", content: "See [[Facts#^sky-fact]] and [[Facts#^wet|wet things]].\n" });

  await page.goto("/app/facts");
  const sky = content(page).locator('[id="^sky-fact"]');
  await expect(sky).toHaveText("The sky is blue.");
  expect(await sky.evaluate((el) => el.tagName)).toBe("P");
  await expect(content(page).locator('li[id="^wet"]')).toHaveText("water is wet");
  await expect(content(page)).not.toContainText("^sky-fact");
  await expect(content(page)).not.toContainText("^wet");

  await page.goto("/app/linker");
  await content(page).getByRole("link", { name: "Facts › ^sky-fact" }).click();
  await expect(page).toHaveURL(/\/facts#%5Esky-fact$/);
  await expect(content(page).locator('[id="^sky-fact"]')).toBeInViewport();
  await expect(content(page).getByText("Filler paragraph 1.", { exact: true })).not.toBeInViewport();
});

for (const theme of ["light", "dark"] as const) {
  test(`axe: callouts of every family, embeds and placeholders (${theme})`, async ({ page, user }) => {
    void user;
    await page.addInitScript((t) => localStorage.setItem("cairn.theme", t), theme);
    await page.emulateMedia({ colorScheme: theme });
    const families = ["note", "abstract", "info", "todo", "tip", "success", "question", "warning", "failure", "danger", "bug", "example", "quote"];
    await createPage(page.request, { title: "Embedded", content: "# Embedded\n\nSome ==marked== text and a [[Missing one]].\n" });
    await createPage(page.request, {
      title: "Everything",
      content: [
        "# Everything",
        "",
        ...families.map((f) => `> [!${f}]\n> Text of ${f} with a [link](https://example.org) and ==mark==.\n`),
        "> [!faq]- Folded",
        "> Inside.",
        "",
        "![[Embedded]]",
        "",
        "![[Embedded#Nowhere]]",
        "",
        "![[Not there]]",
        "",
        "A picture: ![[diagram.svg]]",
        "",
      ].join("\n"),
    });
    await page.goto("/app/everything");
    await expect(page.locator(".page-content .embed-body")).toContainText("marked");
    await expect(page.locator(".page-content .callout")).toHaveCount(14);
    await page.waitForTimeout(150);
    const builder = new AxeBuilder({ page }).include(".page-content");
    if (theme === "dark") builder.withRules(["color-contrast", "link-in-text-block"]);
    else builder.withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]);
    const bad = (await builder.analyze()).violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.help} — ${v.nodes.slice(0, 4).map((n) => n.target.join(" ")).join(", ")}`);
    expect(bad, bad.join("\n")).toEqual([]);
  });
}
