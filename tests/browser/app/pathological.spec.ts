// Pages that used to make every reader's browser hammer the server or freeze (docs/web.md,
// "Bounded rendering"): many embeds load lazily, in a few batched
// GET /api/embeds requests and never one per page, and past a cap show as links; and each
// pathological page (20,000 embeds, 1 MiB of "[", 500,000 "*a", a deeply nested list and
// quote; a page-sized flood of table rows, callouts or addresses) renders within a second
// and a half of the page's API answer.
import type { Page, Request } from "@playwright/test";
import { createPage, expect, fmt, test } from "../fixtures";

/** Generous for a 2-core machine; the renders measure well under a second. */
const RENDER_MS = 1500;
const END = "End of the pathological page";

/** Records (in the page) when the rendered markdown holds `END` (the whole of it is
 *  inserted at once). */
async function watchForEnd(page: Page): Promise<void> {
  await page.addInitScript((end: string) => {
    const w = window as unknown as { __shown?: number };
    const check = () => {
      if (w.__shown !== undefined) return;
      if (document.querySelector(".page-content")?.textContent?.includes(end)) w.__shown = performance.now();
    };
    new MutationObserver(check).observe(document, { childList: true, subtree: true, characterData: true });
  }, END);
}

/** Opens the page and answers how long after its API answer its content was on screen (ms). */
async function timeRender(page: Page, slug: string): Promise<number> {
  await watchForEnd(page);
  await page.goto(`/app/${slug}`);
  await expect(page.locator(".page-content")).toContainText(END, { timeout: 20_000 });
  const ms = await page.evaluate((slug: string) => {
    const answered = performance
      .getEntriesByType("resource")
      .filter((e) => new URL(e.name).pathname.startsWith(`/api/pages/${slug}`))
      .map((e) => (e as PerformanceResourceTiming).responseEnd);
    return (window as unknown as { __shown: number }).__shown - Math.max(...answered);
  }, slug);
  console.log(`${slug}: rendered ${Math.round(ms)} ms after the API answer`);
  return ms;
}

const withEnd = (body: string) => `Start of the page.\n\n${body}\n\n${END}\n`;

test("2,000 embeds: those in view load in one batched request, the rest later as scrolled to, past 50 they are links", async ({
  page,
  en,
  user,
}) => {
  void user;
  // 60 small pages, embedded in turn 2,000 times.
  for (let i = 1; i <= 60; i++) await createPage(page.request, { title: `Part ${i}`, slug: `part-${i}`, content: `Text of part ${i}.` });
  const body = Array.from({ length: 2000 }, (_, i) => `![[part-${(i % 60) + 1}]]`).join("\n\n");
  await createPage(page.request, { title: "Many embeds", slug: "many-embeds", content: withEnd(body) });

  const batches: string[][] = [];
  const single: string[] = [];
  page.on("request", (r: Request) => {
    const url = new URL(r.url());
    if (url.pathname === "/api/embeds") batches.push((url.searchParams.get("slugs") ?? "").split(","));
    if (/^\/api\/pages\/part-\d+/.test(url.pathname)) single.push(url.pathname);
  });
  await page.goto("/app/many-embeds");
  const content = page.locator(".page-content");
  const frames = content.locator(".embed");
  await expect(frames.first()).toContainText("Text of part 1.");
  // One request for every embed near the viewport, not all 50 at once.
  expect(batches.length).toBe(1);
  expect(batches[0]!.length).toBeGreaterThan(1);
  expect(batches[0]!.length).toBeLessThan(50);
  expect(batches[0]).toContain("part-1");
  expect(batches[0]).not.toContain("part-50");

  // Past the cap: one note, then plain links (a click away from the page).
  await expect(content.locator(".embed-capped")).toHaveCount(1);
  await expect(content.locator(".embed-capped")).toContainText(fmt(en["embed.capped"]!, { count: 50 }));
  await expect(content.locator(".embed-link a.wikilink")).toHaveCount(1950);
  await expect(content.locator(".embed-link a.wikilink").first()).toHaveAttribute("href", /\/part-51$/);

  // The 50th embed loads when scrolled to, with the others not yet loaded, in one more request.
  const fiftieth = content.locator('[data-embed-load="part-50"]');
  await fiftieth.scrollIntoViewIfNeeded();
  await expect(fiftieth).toContainText("Text of part 50.");
  // Those scrolled past without stopping may still wait; nothing was asked for one by one.
  expect(batches.length).toBeLessThanOrEqual(3);
  for (const b of batches) expect(b.length).toBeLessThanOrEqual(50);
  expect(new Set(batches.flat()).size).toBe(batches.flat().length);
  expect(single).toEqual([]);

  // A capped link leads to its page.
  await content.locator(".embed-link a.wikilink").first().click();
  await expect(page.locator("h1")).toHaveText("Part 51");
});

test("20,000 embeds render within a second and a half, capped", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Target", slug: "target", content: "The target's text." });
  const body = Array.from({ length: 20000 }, () => "![[target]]").join("\n\n");
  await createPage(page.request, { title: "Embeds galore", slug: "embeds-galore", content: withEnd(body) });
  expect(await timeRender(page, "embeds-galore")).toBeLessThan(RENDER_MS);
  const content = page.locator(".page-content");
  await expect(content.locator(".embed").first()).toContainText("The target's text.");
  await expect(content.locator(".embed-capped")).toContainText(fmt(en["embed.capped"]!, { count: 50 }));
  // Past what one page parses, the rest is its plain text, said at the top.
  await expect(content.locator(".render-notice")).toHaveText(en["render.plain_notice"]!);
});

test("1 MiB of '[' renders within a second and a half, as plain text with a notice", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Brackets", slug: "brackets", content: withEnd("[".repeat(1_048_000)) });
  expect(await timeRender(page, "brackets")).toBeLessThan(RENDER_MS);
  const content = page.locator(".page-content");
  await expect(content.locator(".render-notice")).toHaveText(en["render.plain_notice"]!);
  await expect(content.locator("p.md-plain")).toHaveCount(1);
  await expect(content.locator("p").first()).toHaveText("Start of the page.");
});

test("500,000 '*a' render within a second and a half", async ({ page, en, user }) => {
  void user;
  await createPage(page.request, { title: "Stars", slug: "stars", content: withEnd(`Some *formatted* words.\n\n${"*a".repeat(500_000)}`) });
  expect(await timeRender(page, "stars")).toBeLessThan(RENDER_MS);
  await expect(page.locator(".page-content .render-notice")).toHaveText(en["render.plain_notice"]!);
  // A normal paragraph beside it is still formatted.
  await expect(page.locator(".page-content em")).toHaveCount(1);
  await expect(page.locator(".page-content em")).toHaveText("formatted");
});

test("a deeply nested list and quote render within a second and a half", async ({ page, user }) => {
  void user;
  // markdown-it stops nesting at 100 levels (and drops what follows), so the end mark
  // comes first here; it is inserted with the rest in one go.
  const list = Array.from({ length: 700 }, (_, i) => "  ".repeat(i) + `- level ${i}`).join("\n");
  await createPage(page.request, { title: "Nested list", slug: "nested-list", content: `${END}\n\n${list}\n` });
  await createPage(page.request, { title: "Nested quote", slug: "nested-quote", content: `${END}\n\n${">".repeat(500_000)} deep\n` });
  expect(await timeRender(page, "nested-list")).toBeLessThan(RENDER_MS);
  await expect(page.locator(".page-content li").first()).toContainText("level 0");
  expect(await timeRender(page, "nested-quote")).toBeLessThan(RENDER_MS);
  await expect(page.locator(".page-content blockquote").first()).toBeVisible();
});

test("a page-sized flood of table rows, callouts or addresses renders within a second and a half", async ({ page, en, user }) => {
  void user;
  const floods: Record<string, string> = {
    rows: "|a|b|\n|-|-|\n" + "|a|b|\n".repeat(170_000),
    callouts: "> [!note] x\n\n".repeat(80_000),
    addresses: "http://a.example/ ".repeat(55_000), // each one a link, were it formatted
  };
  for (const [slug, body] of Object.entries(floods)) {
    await createPage(page.request, { title: slug, slug, content: withEnd(body) });
    expect(await timeRender(page, slug)).toBeLessThan(RENDER_MS);
    await expect(page.locator(".page-content .render-notice")).toHaveText(en["render.plain_notice"]!);
  }
  // The addresses' paragraph is over a block's allowance: text, not 55,000 links.
  await expect(page.locator(".page-content a[href^='http://a.example']")).toHaveCount(0);
  await expect(page.locator(".page-content p.md-plain")).toContainText("http://a.example/ http://a.example/");
});
