// Screen 4: the page view — rendered markdown (sanitised), table of contents,
// breadcrumbs, children, backlinks, tags, last editor; wikilinks in the app; a broken
// link offers to create its page; the home route; deep links survive a reload.
import { createPage, expect, fmt, pageUrl, test } from "../fixtures";

const RICH = `---
title: Rich Page
tags: [alpha]
---
# Rich Page

Intro with [[Linked Page]], [[Linked Page|a custom label]] and [[Missing Page]].

## Section One

| Name | Value |
|------|-------|
| one  | 1     |

- [x] done task
- [ ] open task

A claim[^1].

\`\`\`rust
fn main() { let x = 1; }
\`\`\`

<img src="/nowhere.png" onerror="window.__xss = 1">
<script>window.__xss = 2</script>
<a href="javascript:window.__xss = 3">bad link</a>

Tagged #inline-tag here.

## Section Two

The end.

[^1]: The footnote text.
`;

test("a page renders its markdown safely, with outline, tags and meta", async ({ page, en, user, guard }) => {
  // Chromium reports an inline handler in parsed HTML as a CSP violation even when the
  // document is inert (DOMPurify's parse) — the policy blocking it is what we want.
  guard.allowed.push(/Executing inline event handler violates the following Content Security Policy/);
  await createPage(page.request, { title: "Home Parent", content: "# Home Parent" });
  await createPage(page.request, { title: "Rich Page", parent: "home-parent", content: RICH });
  await createPage(page.request, { title: "Linked Page", content: "# Linked Page\n\nTarget." });
  await createPage(page.request, { title: "Rich Child", parent: "rich-page", content: "child" });

  await page.goto("/app/rich-page");
  const body = page.locator(".page-content");
  await expect(page.locator(".page-title")).toHaveText("Rich Page");
  // Front matter is not shown.
  await expect(body).not.toContainText("tags: [alpha]");
  await expect(body).not.toContainText("title: Rich Page");
  // Tables, task lists, footnotes, highlighted code.
  await expect(body.locator("table td").first()).toHaveText("one");
  await expect(body.locator('input[type="checkbox"]')).toHaveCount(2);
  await expect(body.locator('input[type="checkbox"]').first()).toBeChecked();
  await expect(body.locator(".footnotes")).toContainText("The footnote text.");
  await expect(body.locator("pre code .hljs-keyword").first()).toBeVisible();
  // Sanitised: no handler, no script, no javascript: URL ran or survived.
  await expect(body.locator("script")).toHaveCount(0);
  await expect(body.locator("img[onerror]")).toHaveCount(0);
  await expect(body.getByText("bad link")).not.toHaveAttribute("href", /javascript:/);
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();

  // Tags, last editor, breadcrumbs, children.
  await expect(page.getByRole("list", { name: en["page.tags"] })).toContainText("#alpha");
  await expect(page.getByRole("list", { name: en["page.tags"] })).toContainText("#inline-tag");
  await expect(page.locator(".page-meta")).toContainText(fmt(en["page.last_edited"]!, { author: user.name, date: "" }).trim());
  await expect(page.getByRole("navigation", { name: en["page.breadcrumbs"] }).getByRole("link", { name: "Home Parent" })).toBeVisible();
  await expect(page.locator(".page-children").getByRole("link", { name: "Rich Child" })).toBeVisible();

  // The outline links to the headings.
  const toc = page.getByRole("complementary", { name: en["page.outline"] });
  await toc.getByRole("link", { name: "Section Two" }).click();
  await expect(page).toHaveURL(/#section-two$/);
  await expect(page.locator("h2#section-two")).toBeInViewport();

  // Existing and missing wikilinks look different.
  const missing = body.getByRole("link", { name: "Missing Page" });
  await expect(missing).toHaveClass(/wikilink-missing/);
  await expect(missing).toHaveAttribute("title", fmt(en["page.wikilink_missing"]!, { title: "Missing Page" }));
  await expect(body.getByRole("link", { name: "a custom label" })).not.toHaveClass(/wikilink-missing/);

  // A wikilink navigates inside the app (no reload: the marker survives).
  await page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 42));
  await body.getByRole("link", { name: "Linked Page" }).first().click();
  await expect(page).toHaveURL(pageUrl("linked-page"));
  await expect(page.locator(".page-title")).toHaveText("Linked Page");
  expect(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(42);
  // ... and the target lists its backlink.
  await expect(page.locator(".page-backlinks").getByRole("link", { name: "Rich Page" })).toBeVisible();

  // Back, then the broken link offers to create the page.
  await page.goBack();
  await expect(page.locator(".page-title")).toHaveText("Rich Page");
  await body.getByRole("link", { name: "Missing Page" }).click();
  await expect(page.getByTestId("page-missing")).toContainText(en["page.not_found"]!);
  await page.getByRole("link", { name: fmt(en["page.create_named"]!, { title: "Missing Page" }) }).click();
  await expect(page.getByLabel(en["page.title_placeholder"]!)).toHaveValue("Missing Page");
  await page.getByRole("button", { name: en["page.save"], exact: true }).click();
  await expect(page).toHaveURL(pageUrl("missing-page"));
  await page.goto("/app/rich-page");
  await expect(page.locator(".page-content").getByRole("link", { name: "Missing Page" })).not.toHaveClass(/wikilink-missing/);
});

test("home goes to the first page; deep links survive a reload", async ({ page, user }) => {
  void user;
  await createPage(page.request, { title: "Start Here", content: "# Start Here\n\nWelcome." });
  await page.goto("/app/");
  await expect(page).toHaveURL(pageUrl("start-here"));
  await page.reload();
  await expect(page.locator(".page-content")).toContainText("Welcome.");
  await page.goto("/app/start-here/history");
  await expect(page.getByTestId("history-list")).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("history-list")).toBeVisible();
});

test("viewing a page does not download the editor", async ({ page, user }) => {
  void user;
  await createPage(page.request, { title: "Light Page", content: "# Light Page\n\nJust text." });
  const scripts: string[] = [];
  page.on("request", (r) => {
    if (r.resourceType() === "script") scripts.push(r.url());
  });
  await page.goto("/app/light-page");
  await expect(page.locator(".page-content")).toContainText("Just text.");
  const before = scripts.length;
  await page.getByTestId("edit-page").click();
  await expect(page.getByTestId("source-editor")).toBeVisible();
  expect(scripts.length, "the editor chunk loads on demand").toBeGreaterThan(before);
});
