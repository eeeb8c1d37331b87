// The renderer's work is bounded (src/markdown/budget.ts, render.ts): pathological
// markup is shown as plain text with a notice, a page parses so many lines at most, our
// own rules are linear, and a page shows at most EMBED_CAP embeds (at any depth), the
// rest as links. Normal pages are rendered as ever.
import { expect, test } from "vitest";
import { LINES_PER_PAGE, MARKS_PER_BLOCK, MARKS_PER_PAGE } from "./budget";
import { EMBED_CAP, renderMarkdown } from "./render";
import type { Embedded, WikiEnv } from "./wikilinks";

const env = (embed?: (slug: string) => Embedded): WikiEnv => ({
  href: (slug: string) => `/p/${slug}`,
  missingTitle: (target: string) => target,
  exists: () => true,
  text: (key: string, vars?: Record<string, string | number>) => (vars ? `${key} ${JSON.stringify(vars)}` : key),
  ...(embed ? { embed } : {}),
});
const dom = (md: string, e = env()) => {
  const box = document.createElement("div");
  box.innerHTML = renderMarkdown(md, e).html;
  return box;
};
/** The notice of plain text, at the top of the page. (happy-dom's DOMPurify unwraps a
 *  page's first element, so the text is looked for, not the element.) */
const noticed = (box: HTMLElement) => (box.textContent ?? "").split("render.plain_notice").length - 1;
const timed = <T>(f: () => T): [T, number] => {
  const t = performance.now();
  const r = f();
  return [r, performance.now() - t];
};

test("a normal page is formatted in full, without a notice", () => {
  const para = Array.from({ length: 200 }, (_, i) => `**b${i}** [[p${i}]] \`c\``).join(" ");
  const box = dom(`# Title\n\n${para}\n\n- *x*\n- [link](https://example.org)`);
  expect(box.querySelectorAll("strong")).toHaveLength(200);
  expect(box.querySelectorAll("a.wikilink")).toHaveLength(200);
  expect(box.querySelector(".md-plain")).toBeNull();
  expect(noticed(box)).toBe(0);
});

test("1 MiB of '[' is one paragraph of plain text, quickly, and the page says so", () => {
  const [box, ms] = timed(() => dom(`before *it*\n\n${"[".repeat(1 << 20)}\n\nafter *it*`));
  const plain = box.querySelector("p.md-plain")!;
  expect(plain.textContent).toHaveLength(1 << 20);
  expect(box.textContent!.startsWith("render.plain_notice")).toBe(true);
  expect(box.querySelectorAll("em")).toHaveLength(2); // its neighbours are formatted
  expect(ms).toBeLessThan(3000); // was 20 s and more (our wikilink rule was quadratic)
});

test("500,000 '*a' are plain text; so is a block over the per-block allowance", () => {
  const [box, ms] = timed(() => dom("*a".repeat(500_000)));
  expect(box.querySelector("em")).toBeNull();
  expect(box.querySelector("p.md-plain")!.textContent).toHaveLength(1_000_000);
  expect(ms).toBeLessThan(5000); // was 16 s in a browser
  const edge = "*a* ".repeat(MARKS_PER_BLOCK / 2);
  expect(dom(edge).querySelectorAll("em")).toHaveLength(MARKS_PER_BLOCK / 2); // just within
  expect(dom(edge + "*a*").querySelector("em")).toBeNull();
});

test("wikilink-like runs are linear: '![[' and '[[' without an end", () => {
  for (const run of ["![[".repeat(300_000), "[[a".repeat(300_000), "[[a]".repeat(250_000)]) {
    const [, ms] = timed(() => dom(run));
    expect(ms).toBeLessThan(3000);
  }
});

test("the page's allowance: blocks past it are plain text", () => {
  const block = "a: ".repeat(1000); // 1,000 marks each (":" may start a link)
  const n = MARKS_PER_PAGE / 1000 + 5;
  const box = dom(`start\n\n${Array.from({ length: n }, () => block).join("\n\n")}\n\n*end*`);
  const paras = [...box.querySelectorAll("p")];
  expect(paras.filter((p) => p.classList.contains("md-plain"))).toHaveLength(6); // 5 blocks and "*end*"
  expect(paras.at(-1)!.classList.contains("md-plain")).toBe(true); // even a small one, once it ran out
  expect(noticed(box)).toBe(1);
});

test("lines past the page's allowance are shown as plain text, cut at a blank line", () => {
  const md = Array.from({ length: LINES_PER_PAGE }, (_, i) => `para ${i}`).join("\n\n");
  const [box, ms] = timed(() => dom(md));
  const rest = box.querySelector(".md-rest")!;
  const parsed = box.querySelectorAll("p").length;
  expect(parsed).toBeGreaterThan(LINES_PER_PAGE / 2 - 2);
  expect(rest.textContent!.startsWith(`para ${parsed}\n\npara ${parsed + 1}`)).toBe(true); // from a paragraph on
  expect(rest.textContent!.endsWith(`para ${LINES_PER_PAGE - 1}`)).toBe(true);
  expect(noticed(box)).toBe(1);
  expect(ms).toBeLessThan(5000);
});

test("a page shows EMBED_CAP embeds, at any depth; the rest are links after one note", () => {
  const pages: Record<string, string> = { inner: "inner text" };
  for (let i = 0; i < 40; i++) pages[`mid${i}`] = `mid ${i}\n\n![[inner]]`;
  const lookup = (slug: string): Embedded =>
    pages[slug] !== undefined ? { state: "page", title: slug, content: pages[slug]! } : { state: "missing" };
  const md = "start\n\n" + Array.from({ length: 40 }, (_, i) => `![[mid${i}]]`).join("\n\n");
  const box = dom(md, env(lookup));
  expect(box.querySelectorAll(".embed")).toHaveLength(EMBED_CAP); // 25 mids, each with its inner
  expect(box.querySelectorAll(".embed-capped")).toHaveLength(1);
  const links = box.querySelectorAll(".embed-link a.wikilink");
  expect(links).toHaveLength(15);
  expect(links[0]!.getAttribute("href")).toBe("/p/mid25");
  expect(box.querySelectorAll("[data-embed-load]")).toHaveLength(EMBED_CAP);
});

test("20,000 embeds: a loading placeholder each for the first EMBED_CAP, links after", () => {
  const md = "start\n\n" + Array.from({ length: 20_000 }, () => "![[target]]").join("\n\n");
  const box = dom(md, env(() => ({ state: "loading" })));
  expect(box.querySelectorAll(".embed-loading[data-embed-load='target']")).toHaveLength(EMBED_CAP);
  expect(box.querySelectorAll(".embed-capped")).toHaveLength(1);
});
