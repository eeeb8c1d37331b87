// Markdown → safe HTML for pages and the editor's preview: markdown-it (tables built in)
// with wikilinks, task lists, footnotes, heading anchors and code highlighting, front
// matter left out, and DOMPurify over every result.
import MarkdownIt from "markdown-it";
import anchor from "markdown-it-anchor";
import footnote from "markdown-it-footnote";
import taskLists from "markdown-it-task-lists";
import DOMPurify from "dompurify";
import { pageHref } from "../router";
import { store } from "../store";
import { splitFrontMatter } from "./frontmatter";
import { deriveSlug } from "./slug";
import { wikilinks, type WikiEnv } from "./wikilinks";

export interface TocEntry {
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
md.use(taskLists, { enabled: false, label: true });
md.use(footnote);
md.use(anchor, {
  // The server's rule for heading anchors (its `headings` agree with these ids).
  slugify: (s: string) => deriveSlug(s) || "section",
  uniqueSlugStartIndex: 1,
  tabIndex: false,
  callback: (token, info) => {
    headings.push({ level: Number(token.tag.slice(1)), text: info.title, anchor: info.slug });
  },
});

// Style that takes content out of the page's flow: with it a writer could lay a fake
// "session expired" form over the whole app. Colours, sizes and the like stay.
const PLACING = ["position", "inset", "top", "right", "bottom", "left", "z-index", "transform", "translate", "rotate", "scale"];

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
  const tokens = md.parse(body, {});
  markLines(tokens, body.length === source.length ? 0 : linesIn(source.slice(0, source.length - body.length)), lines);
  const first = tokens[0];
  if (dropTitle !== undefined && first?.type === "heading_open" && first.tag === "h1" && tokens[1]?.content.trim() === dropTitle.trim()) {
    tokens.splice(0, 3);
    if (headings[0]?.level === 1) headings.shift();
  }
  const raw = md.renderer.render(tokens, md.options, {});
  if (wantsHighlight && !highlightFn) loadHighlighter();
  const out = headings;
  headings = [];
  const html = DOMPurify.sanitize(raw, {
    ADD_ATTR: ["target"],
    FORBID_TAGS: ["style", "form"],
  });
  // The DOM update of the result costs about as much again.
  renderMs = (performance.now() - started) * 2;
  return { html, headings: out };
}

/** A search snippet: only <mark> survives (highlighted terms), everything else is text. */
export function sanitizeSnippet(snippet: string): string {
  return DOMPurify.sanitize(snippet, { ALLOWED_TAGS: ["mark", "b", "em"], ALLOWED_ATTR: [] });
}
