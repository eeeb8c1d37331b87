// Markdown → safe HTML for pages and the editor's preview: markdown-it (tables built in)
// with wikilinks, task lists, footnotes, heading anchors and code highlighting, Obsidian's
// callouts, embeds, highlights, block ids and image sizes, front matter left out, and
// DOMPurify over every result.
import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";
import anchor from "markdown-it-anchor";
import footnote from "markdown-it-footnote";
import mark from "markdown-it-mark";
import taskLists from "markdown-it-task-lists";
import DOMPurify from "dompurify";
import { pageHref } from "../router";
import { externalImages } from "../limits";
import { store } from "../store";
import { boundedInline, cutLines, newBudget, type Budget } from "./budget";
import { splitFrontMatter } from "./frontmatter";
import { blockIds, callouts, imageSizes, liftEmbeds } from "./obsidian";
import { deriveSlug, resolveTarget } from "./slug";
import { imageMissing, sectionAnchor, wikilinks, type EmbedTarget, type WikiEnv } from "./wikilinks";

interface TocEntry {
  level: number;
  text: string;
  anchor: string;
}

export interface Rendered {
  html: string;
  headings: TocEntry[];
}

// highlight.js (~30 KB gzip with its languages) is loaded only once a page has a fenced
// code block with a language; `highlighter` changes then, and renders are redone.
type Highlight = (code: string, lang: string) => string;
let highlightFn: Highlight | null = null;
let wantsHighlight = false;
let highlightLoading = false;
/** 1 once highlight.js has loaded (renders depend on it). */
export const highlighter = store(0);

function loadHighlighter(): void {
  if (highlightLoading) return;
  highlightLoading = true;
  void import("./highlight").then((m) => {
    highlightFn = m.highlight;
    highlighter.set(1);
  });
}

let wikiEnv: WikiEnv = { href: (s) => pageHref(s), missingTitle: (t) => t };
let headings: TocEntry[] = [];

const md = new MarkdownIt({
  html: true,
  linkify: true,
  typographer: false,
  highlight: (code, lang) => {
    if (highlightFn) return highlightFn(code, lang);
    if (lang.trim()) wantsHighlight = true;
    return "";
  },
});
md.use(wikilinks, () => wikiEnv);
md.use(imageMissing);
md.use(mark);
md.use(callouts, () => wikiEnv);
md.use(blockIds);
md.use(taskLists, { enabled: false, label: true });
md.use(footnote);
md.use(anchor, {
  // The server's rule for heading anchors (its `headings` agree with these ids).
  slugify: (s: string) => deriveSlug(s) || "section",
  uniqueSlugStartIndex: 1,
  tabIndex: false,
  callback: (token, info) => {
    // Trimmed as the server's are: an image or inline HTML that leaves nothing leaves its space.
    headings.push({ level: Number(token.tag.slice(1)), text: info.title.trim(), anchor: info.slug });
  },
});
md.use(imageSizes);
md.use(liftEmbeds); // after the task-list plugin, so that it runs before it
md.use(boundedInline);
md.renderer.rules.note_embed = (tokens, idx, _options, _env, slf) => renderEmbed(tokens[idx]!, slf.renderAttrs(tokens[idx]!));
md.renderer.rules.render_notice = () =>
  `<div class="embed-note render-notice" role="note">${md.utils.escapeHtml((wikiEnv.text ?? ((k: string) => k))("render.plain_notice"))}</div>\n`;

md.renderer.rules.plain_rest = (tokens, idx) => `<div class="md-plain md-rest">${md.utils.escapeHtml(tokens[idx]!.content)}</div>\n`;

/** The budget of the render under way (a page and everything it embeds share it). */
let budget: Budget = newBudget();

/** Parses markdown within the render's budget; a part shown as plain text is said at its top. */
function parseBounded(body: string, env: Record<string, unknown>, dropTitle?: string): Token[] {
  const plainBefore = budget.plain;
  const [head, rest] = cutLines(body, budget);
  const tokens = md.parse(head, { ...env, budget });
  if (rest) {
    const tok = new TokenClass("plain_rest", "div", 0);
    tok.content = rest;
    tokens.push(tok);
  }
  if (dropTitle !== undefined && tokens[0]?.type === "heading_open" && tokens[0].tag === "h1" && tokens[1]?.content.trim() === dropTitle.trim()) {
    tokens.splice(0, 3);
    if (headings[0]?.level === 1) headings.shift();
  }
  if (budget.plain > plainBefore) tokens.unshift(new TokenClass("render_notice", "div", 0));
  return tokens;
}

// ---------------------------------------------------------------------------------------
// Note embeds: the embedded page's markdown (all of it, one heading's section, or the
// block carrying a block id) rendered inside a frame that links to it. The page comes
// from `wikiEnv.embed` (the current workspace's API; "loading" until it has arrived).
// Embeds inside embeds go EMBED_DEPTH deep at most, and an embed of a page (or section)
// already being shown around it is a placeholder: a cycle never loops.

const EMBED_DEPTH = 3;
/** Embeds a page shows (at any depth, counted in the order they are rendered); the
 *  rest are links, after a note. Every one shown may cost a request and a render. */
export const EMBED_CAP = 50;
/** Characters of embedded pages' markdown one page renders at most (then: links). */
const EMBED_CHARS = 2 * 1024 * 1024;
/** What is being rendered, outermost first: "slug#" for a whole page, "slug#anchor" for a part. */
let embedChain: string[] = [];
/** How many embeds deep the renderer is (0: the page itself). */
let embedDepth = 0;
let embedCount = 0;
/** Embeds shown by the render under way, their characters, and whether the cap's note is out. */
let embedsShown = 0;
let embedChars = 0;
let capNoted = false;

const esc = md.utils.escapeHtml;
const TokenClass = new md.core.State("", md, {}).Token;

function embedKey(slug: string, section: string): string {
  return `${slug}#${section.startsWith("^") ? section : section ? resolveTarget(section) || section : ""}`;
}

/** The tokens of `section` (a heading's text or slug, or `^block-id`) in `tokens`, or null. */
function sectionOf(tokens: Token[], section: string): Token[] | null {
  const end = (from: number) => {
    const level = tokens[from]!.level;
    for (let j = from + 1; j < tokens.length; j++) if (tokens[j]!.level === level && tokens[j]!.nesting === -1) return j;
    return tokens.length - 1;
  };
  if (section.startsWith("^")) {
    const at = tokens.findIndex((t) => t.nesting === 1 && t.attrGet("id") === section);
    if (at < 0) return null;
    const part = tokens.slice(at, end(at) + 1);
    if (tokens[at]!.type !== "list_item_open") return part;
    // A list item is shown in a list of its kind.
    let list = at - 1;
    while (list >= 0 && !(tokens[list]!.nesting === 1 && tokens[list]!.level === tokens[at]!.level - 1)) list--;
    const kind = tokens[list];
    if (!kind) return part;
    return [new TokenClass(kind.type, kind.tag, 1), ...part, new TokenClass(kind.type.replace(/_open$/, "_close"), kind.tag, -1)];
  }
  const anchor = resolveTarget(section) || section;
  const derived = deriveSlug(section);
  const at = tokens.findIndex((t) => t.type === "heading_open" && (t.attrGet("id") === anchor || t.attrGet("id") === derived));
  if (at < 0) return null;
  const rank = Number(tokens[at]!.tag.slice(1));
  let stop = at + 1;
  for (; stop < tokens.length; stop++) {
    const t = tokens[stop]!;
    if (t.type === "footnote_block_open") break;
    if (t.type === "heading_open" && t.level === tokens[at]!.level && Number(t.tag.slice(1)) <= rank) break;
  }
  return tokens.slice(at, stop);
}

function renderEmbed(token: Token, attrs: string): string {
  const target = token.meta as unknown as EmbedTarget;
  const e = wikiEnv;
  const text = e.text ?? ((key: string) => key);
  const slug = target.slug;
  const name = target.target || slug;
  const label = (title: string) => (target.section ? `${title} › ${target.section}` : title);
  const href = e.href(slug) + sectionAnchor(target.section);
  const link = (missing: boolean) =>
    missing
      ? `<a class="wikilink wikilink-missing" href="${esc(e.href(slug, name))}" data-slug="${esc(slug)}" title="${esc(e.missingTitle(name))}">${esc(label(name))}</a>`
      : `<a class="wikilink" href="${esc(href)}" data-slug="${esc(slug)}">${esc(label(name))}</a>`;
  const note = (kind: string, message: string, missing = false) =>
    `<div${attrs} class="embed-note embed-${kind}" data-embed="${esc(slug)}"><span class="embed-note-icon"></span>${esc(message)} ${link(missing)}</div>\n`;
  // Past the cap: a plain wikilink in a paragraph of its own, the first one after a note.
  const capped = () => {
    const head = capNoted ? "" : `<div class="embed-note embed-capped" role="note">${esc(text("embed.capped", { count: EMBED_CAP }))}</div>\n`;
    capNoted = true;
    return `${head}<p${attrs} class="embed-link">${link(e.exists?.(slug) === false)}</p>\n`;
  };
  const key = embedKey(slug, target.section);
  if (embedChain.includes(key)) return note("cycle", text("embed.cycle"));
  if (embedDepth >= EMBED_DEPTH) return note("deep", text("embed.too_deep", { depth: EMBED_DEPTH }));
  if (embedsShown >= EMBED_CAP) return capped();
  const got = e.embed ? e.embed(slug) : ({ state: "failed" } as const);
  if (got.state === "page" && embedChars + got.content.length > EMBED_CHARS) return capped();
  embedsShown++;
  // `data-embed-load`: the page is wanted once this is near the viewport (fetched, or
  // fetched again when old; src/embeds.ts watches for it).
  attrs += ` data-embed-load="${esc(slug)}"`;
  if (got.state === "loading") return note("loading", text("common.loading"));
  if (got.state === "missing") return note("missing", text("embed.missing"), true);
  if (got.state === "failed") return note("failed", text("embed.failed"));
  embedChars += got.content.length;

  const saved = { env: wikiEnv, headings };
  wikiEnv = { ...e, self: slug };
  headings = [];
  embedChain.push(key);
  embedDepth++;
  try {
    const env = { docId: `embed${++embedCount}` };
    const [, body] = splitFrontMatter(got.content);
    // A whole page's title heading is left out: the frame names the page already.
    const tokens = parseBounded(body, env, target.section ? undefined : got.title);
    const part = target.section ? sectionOf(tokens, target.section) : tokens;
    if (!part) return note("nosection", text("embed.section_missing"));
    // Ids belong to the page itself: inside the frame they would clash with the page's own.
    for (const t of part) if (t.attrs) t.attrs = t.attrs.filter(([k]) => k !== "id");
    const inner = md.renderer.render(part, md.options, env);
    return (
      `<div${attrs} class="embed" data-embed="${esc(slug)}">` +
      `<div class="embed-head"><a class="embed-source" href="${esc(href)}" data-slug="${esc(slug)}">${esc(label(got.title))}</a></div>` +
      `<div class="embed-body">${inner}</div></div>\n`
    );
  } finally {
    wikiEnv = saved.env;
    headings = saved.headings;
    embedChain.pop();
    embedDepth--;
  }
}

// Style that takes content out of the page's flow: with it a writer could lay a fake
// "session expired" form over the whole app. Colours, sizes and the like stay.
const PLACING = ["position", "inset", "top", "right", "bottom", "left", "z-index", "transform", "translate", "rotate", "scale"];

// ---------------------------------------------------------------------------------------
// Images from other sites (`![](https://…)`, or `<img>` in the page's HTML). The app's CSP
// allows `https:` images unless the server runs with BLOCK_EXTERNAL_IMAGES=1, when GET
// /api/system says `external_images: false`. Then, and for `http:` images (which the CSP
// never allows), the renderer leaves no `src` to fetch and shows a placeholder naming the
// link instead, which the reader can open. Until the report has arrived (`null`) images
// are held back the same way, so no other site is asked for one by a render that came
// before the report. Shown images are fetched lazily and without a Referer (the other site
// is not told which page shows them).

/** The address of an image on another site (http or https), else null. */
function externalSource(src: string): URL | null {
  if (!src.trim()) return null;
  let url: URL;
  try {
    url = new URL(src.trim(), window.location.href);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  return url.origin === window.location.origin ? null : url;
}

/** The candidates' addresses of a `srcset`. */
function srcsetSources(srcset: string): string[] {
  return srcset
    .split(",")
    .map((c) => c.trim().split(/\s+/)[0] ?? "")
    .filter(Boolean);
}

/** The placeholder of a held-back image: an icon, what it is, and its address as a link
 *  (text only inside another link, which cannot hold a link). Built with DOM calls: the
 *  address and the alt text are text, never markup. */
function placeholder(img: Element, url: URL, text: (key: string, vars?: Record<string, string>) => string): HTMLElement {
  const alt = (img.getAttribute("alt") ?? "").trim();
  const box = document.createElement("span");
  box.className = "image-external";
  box.title = text("image.external_hint");
  const icon = document.createElement("span");
  icon.className = "image-external-icon";
  const label = document.createElement("span");
  label.textContent = alt ? text("image.external_blocked_named", { name: alt }) : text("image.external_blocked");
  const link = document.createElement(img.closest("a") ? "span" : "a");
  link.className = "image-external-link";
  link.textContent = url.href;
  if (link instanceof HTMLAnchorElement) {
    link.href = url.href;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
  }
  box.append(icon, label, " ", link);
  return box;
}

/** Only markup with an image is parsed again (an attribute's text may hold `>`, so the
 *  images themselves are judged by the parser, not by a pattern). */
const HAS_IMAGE = /<img\b/i;

/** Shows or holds back the images of other sites in sanitised markup (see above). The
 *  markup is parsed in an inert template: nothing is fetched while it is looked at. */
function externalImagePass(html: string, text: (key: string, vars?: Record<string, string>) => string): string {
  if (!HAS_IMAGE.test(html)) return html;
  const allowed = externalImages.get() === true;
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  let changed = false;
  for (const img of tpl.content.querySelectorAll("img")) {
    const url = externalSource(img.getAttribute("src") ?? "");
    const others = srcsetSources(img.getAttribute("srcset") ?? "").map(externalSource).filter((u) => u !== null);
    if (!url && others.length === 0) continue;
    changed = true;
    if (allowed && [url, ...others].every((u) => !u || u.protocol === "https:")) {
      img.setAttribute("referrerpolicy", "no-referrer");
      img.setAttribute("loading", "lazy");
    } else if (url || !img.getAttribute("src")) {
      img.replaceWith(placeholder(img, (url ?? others[0])!, text));
    } else {
      img.removeAttribute("srcset"); // its own src stays; the other sites' candidates go
    }
  }
  return changed ? tpl.innerHTML : html;
}

// External links open in a new tab, without handing over the opener.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node instanceof HTMLElement && node.hasAttribute("style")) {
    for (const name of PLACING) node.style.removeProperty(name);
    if (node.style.length === 0) node.removeAttribute("style");
  }
  if (node.tagName === "A") {
    const href = node.getAttribute("href") ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith(window.location.origin)) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  }
});

/** `dropTitle`: leave out a first level-1 heading with this text (the page view shows
 *  the title above the content already). */
let renderMs = 0;
/** How long the last render took (ms): the editor waits longer before re-rendering slow pages. */
export function lastRenderMs(): number {
  return renderMs;
}

/** Marks blocks with the source line they start at (`data-line`, 0-based, counted in
 *  `source` with its front matter): every block when `all` (the editor's preview follows
 *  the source's scroll by them), else only task-list items (the page view ticks their
 *  checkboxes in the source by them). */
function markLines(tokens: ReturnType<typeof md.parse>, offset: number, all: boolean): void {
  for (const tok of tokens) {
    if (!tok.map || tok.nesting < 0 || tok.type === "inline") continue;
    if (all || (tok.type === "list_item_open" && /\btask-list-item\b/.test(String(tok.attrGet("class") ?? "")))) {
      tok.attrSet("data-line", String(tok.map[0] + offset));
    }
  }
}

function linesIn(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

export function renderMarkdown(source: string, env: WikiEnv, dropTitle?: string, lines = false): Rendered {
  const started = performance.now();
  const [, body] = splitFrontMatter(source);
  wikiEnv = env;
  headings = [];
  wantsHighlight = false;
  embedChain = env.self ? [`${env.self}#`] : [];
  embedDepth = 0;
  embedsShown = 0;
  embedChars = 0;
  capNoted = false;
  budget = newBudget();
  const tokens = parseBounded(body, {}, dropTitle);
  markLines(tokens, body.length === source.length ? 0 : linesIn(source.slice(0, source.length - body.length)), lines);
  const raw = md.renderer.render(tokens, md.options, {});
  if (wantsHighlight && !highlightFn) loadHighlighter();
  const out = headings;
  headings = [];
  const html = externalImagePass(
    DOMPurify.sanitize(raw, {
      ADD_ATTR: ["target"],
      FORBID_TAGS: ["style", "form"],
    }),
    env.text ?? ((key) => key),
  );
  // The DOM update of the result costs about as much again.
  renderMs = (performance.now() - started) * 2;
  return { html, headings: out };
}

/** A search snippet: only <mark> survives (highlighted terms), everything else is text. */
export function sanitizeSnippet(snippet: string): string {
  return DOMPurify.sanitize(snippet, { ALLOWED_TAGS: ["mark", "b", "em"], ALLOWED_ATTR: [] });
}
