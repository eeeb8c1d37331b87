// The title a save gives a page, decided as the server decides it (docs/api.md, "Pages";
// src/core/pages/ops.rs decide_title): the request's title, else front-matter `title:`,
// else the first level-1 heading outside code when the page is new or this save changed
// that heading (compared with the first level-1 heading of the revision the edit started
// from), else the page's previous title, else the slug. The editor shows it, so nobody
// learns only after saving that a heading renamed the page (or did not).
import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";
import { frontMatterText, splitFrontMatter } from "./frontmatter";
import { wikilinks } from "./wikilinks";

// Block structure only: finding the first heading must not cost a full render of a
// 1 MiB page. Only that heading's text is then parsed inline (wikilinks included, so
// `# [[Some Page|Label]]` reads "Label", as on the server).
const md = new MarkdownIt({ html: true });
md.use(wikilinks, () => ({ href: () => "", missingTitle: (t: string) => t }));
md.core.ruler.enableOnly(["normalize", "block"]);

/** The text of a heading's inline content with its markup flattened (images, embeds and inline
 *  HTML leave nothing, line breaks become spaces), trimmed. */
function flatten(source: string): string {
  const children: Token[] = [];
  md.inline.parse(source, md, {}, children);
  let out = "";
  let embed = false;
  for (const c of children) {
    // An embed (`![[Page]]`) leaves nothing, as images do (the server reads it as one).
    if (c.type === "link_open" && c.meta?.embed) embed = true;
    else if (c.type === "link_close" && embed) embed = false;
    else if (embed) continue;
    else if (c.type === "text" || c.type === "text_special" || c.type === "code_inline") out += c.content;
    else if (c.type === "softbreak" || c.type === "hardbreak") out += " ";
  }
  return out.trim();
}

/** One line, as the server stores titles: lines trimmed, blank ones dropped, joined by spaces. */
export function oneLine(text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .join(" ");
}

/** Lines that could end a level-1 heading, inside any blockquotes and list items: an ATX
 *  `# ` line or a setext `===` underline. A superset: the parser decides. */
const CANDIDATE = /^[ \t]*(?:(?:>|[-+*]|\d{1,9}[.)])[ \t]*)*(?:#(?:[ \t\r]|$)|=+[ \t\r]*$)/gm;

/** The end of the line at `at` (past its "\n"), or the text's end. */
function lineEnd(text: string, at: number): number {
  const nl = text.indexOf("\n", at);
  return nl < 0 ? text.length : nl + 1;
}

/** The first level-1 heading with text among `tokens`, or null. */
function h1In(tokens: Token[]): string | null {
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok.type !== "heading_open" || tok.tag !== "h1") continue;
    const text = flatten(tokens[i + 1]?.content ?? "");
    if (text) return text;
  }
  return null;
}

// The last few answers: the editor asks for its text's heading and its base's, in turn.
const cache: { markdown: string; h1: string | null }[] = [];

/** The text of the first level-1 heading (ATX or setext) outside code, or null. An
 *  empty `#` is passed over for a later one.
 *
 *  Only the text up to that heading is parsed: a block's reading depends on the lines
 *  before it and on the next one, never on text further on, so a heading found in a
 *  prefix cut at a line end is one in the whole text. The prefix ends a line after the
 *  next line that could be a heading, and at least doubles each time, so a page whose
 *  code is full of `# comments` costs at most about twice one parse, and a page with
 *  none costs a regular expression's scan. */
function firstH1(markdown: string): string | null {
  const hit = cache.find((c) => c.markdown === markdown);
  if (hit) return hit.h1;
  const [, raw] = splitFrontMatter(markdown);
  const body = raw.startsWith("\uFEFF") ? raw.slice(1) : raw;
  let h1: string | null = null;
  let parsed = 0;
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(body); m; m = CANDIDATE.exec(body)) {
    let end = lineEnd(body, lineEnd(body, m.index));
    if (end < parsed * 2) end = lineEnd(body, Math.min(parsed * 2, body.length));
    h1 = h1In(md.parse(body.slice(0, end), {}));
    if (h1 !== null || end >= body.length) break;
    parsed = end;
    CANDIDATE.lastIndex = end;
  }
  cache.unshift({ markdown, h1 });
  cache.length = Math.min(cache.length, 3);
  return h1;
}

/** The front matter's `title:` as the server reads it (a string or a number; not a list,
 *  a mapping, a boolean or null), trimmed; null when there is none or it is empty. */
export function frontMatterTitle(markdown: string): string | null {
  const text = frontMatterText(markdown, "title");
  return text === null ? null : oneLine(text);
}

/** Where the title a save will give comes from. */
type TitleSource = "field" | "front_matter" | "heading" | "previous" | "slug";

export interface SavedTitle {
  title: string;
  source: TitleSource;
}

/** The title a save of `content` will give the page. `requested`: the title field's text
 *  when the person typed in it (sent as the request's `title`), else null. `base`: the
 *  revision the edit started from (its content and the page's title then), null for a
 *  new page. */
export function savedTitle(
  content: string,
  requested: string | null,
  base: { content: string; title: string } | null,
  slug: string,
): SavedTitle {
  const asked = requested === null ? "" : oneLine(requested);
  if (asked) return { title: asked, source: "field" };
  const front = frontMatterTitle(content);
  if (front) return { title: front, source: "front_matter" };
  const h1 = firstH1(content);
  if (h1 !== null && (base === null || (h1 !== base.title && h1 !== firstH1(base.content)))) {
    const title = oneLine(h1);
    if (title) return { title, source: "heading" };
  }
  if (base && oneLine(base.title)) return { title: oneLine(base.title), source: "previous" };
  return { title: slug, source: "slug" };
}
