// [[target]], [[target|label]], [[target#section|label]] and ![[embed]]: a markdown-it
// inline rule that reads wikilinks the way the server's link extractor does
// (src/markdown/mod.rs): the target is the text before "|" cut at the first "#", trimmed;
// it resolves to itself when it is a valid slug, else to its derived slug. In a table a
// label's pipe is written "\|", and the "\" is not part of the target.
//
// Embeds (Obsidian's syntax): `![[file.png]]`, `![[file.png|600]]`, `![[file.png|600x400]]`
// are images when the file is an upload of the workspace (its name `<sha256>.<ext>`, with
// or without `/uploads/`), else a "missing image" placeholder — never a link to a page
// named like the file. `![[Note]]`, `![[Note#Heading]]`, `![[Note#^block-id]]` are a link
// whose token carries `meta.embed`; render.ts lifts those standing in a paragraph out of
// it and shows the page (or its part) in a frame. A `#^block-id` section links to the
// element carrying that block id (its id is "^block-id").
import type { MarkdownIt } from "markdown-it";
import type { StateInline } from "markdown-it";
import { resolveTarget } from "./slug";

/** What an embed of another page is, as the page's source must be fetched to show it. */
export type Embedded =
  | { state: "loading" }
  | { state: "missing" }
  | { state: "failed" }
  | { state: "page"; title: string; content: string };

/** A note embed's target, carried by its link_open token as `meta.embed`. */
export interface EmbedTarget {
  /** The slug of the embedded page (the page itself for `![[#Heading]]`). */
  slug: string;
  /** As written (empty for `![[#Heading]]`). */
  target: string;
  /** The heading or `^block-id` after "#", as written ("" = the whole page). */
  section: string;
}

/** File names an embed shows as an image (Obsidian's image types). */
const IMAGE_FILE = /\.(png|jpe?g|gif|webp|avif|svg|bmp)$/i;
/** An upload's name (src/ids.rs is_upload_name): the content's SHA-256 and a known type. */
const UPLOAD_NAME = /^[0-9a-f]{64}\.(png|jpg|gif|webp|avif|svg)$/;
/** `600` or `600x400` after a "|" of an image embed: its width (and height). */
export const IMAGE_SIZE = /^(\d{1,5})(?:x(\d{1,5}))?$/;

/** The anchor of a wikilink's section: a block id is "^id" as written, a heading the
 *  server's heading rule. */
export function sectionAnchor(section: string): string {
  if (!section) return "";
  if (section.startsWith("^")) return "#" + encodeURIComponent(section);
  return "#" + encodeURIComponent(resolveTarget(section) || section);
}

/** What the inside of `[[…]]` names, read as the server reads it (src/markdown/mod.rs
 *  wikilink_target): the target is the text before the first "|" cut at the first "#",
 *  trimmed (a "\" ending it escaped a table's "|" and is not part of it); the section
 *  is the text after that "#" (null without one), the label the text after the "|",
 *  trimmed; `options` that text as written (an image embed's size and alt), null
 *  without a "|". */
export function wikilinkParts(inner: string): { target: string; section: string | null; label: string; options: string | null } {
  const pipe = inner.indexOf("|");
  let dest = pipe < 0 ? inner : inner.slice(0, pipe);
  if (pipe >= 0 && dest.endsWith("\\")) dest = dest.slice(0, -1);
  const hashAt = dest.indexOf("#");
  return {
    target: (hashAt < 0 ? dest : dest.slice(0, hashAt)).trim(),
    section: hashAt < 0 ? null : dest.slice(hashAt + 1).trim(),
    label: pipe < 0 ? "" : inner.slice(pipe + 1).trim(),
    options: pipe < 0 ? null : inner.slice(pipe + 1),
  };
}

export interface WikiEnv {
  /** Whether a page with this slug exists; undefined = unknown (shown as a plain link). */
  exists?: (slug: string) => boolean | undefined;
  /** The href of a page (the router's scheme). */
  href: (slug: string, title?: string) => string;
  /** The tooltip of a link to a missing page. */
  missingTitle: (target: string) => string;
  /** Slug of the page being rendered, for [[#section]]. */
  self?: string;
  /** A message of the catalogue (callout titles, embed placeholders); absent: the key. */
  text?: (key: string, vars?: Record<string, string | number>) => string;
  /** The page `slug` of the rendered page's workspace, for an embed (absent: none shown). */
  embed?: (slug: string) => Embedded;
}

// The rule is tried at every "[[" (and, while markdown-it looks for a link's label, again
// at every position inside it): searching the rest of the text each time made a paragraph
// of 1 MiB of "[" take seconds (quadratic). The next occurrence of a needle at or after a
// position is the same for every position up to that occurrence, so one search answers all
// of them: each needle is searched for across the text about once (per inline parse).
type Memo = Map<string, { from: number; at: number }>;
const memos = new WeakMap<StateInline, Memo>();

/** `src.indexOf(needle, from)` of the state's text, remembered (-1: none). */
function scan(state: StateInline, needle: string, from: number): number {
  let memo = memos.get(state);
  if (!memo) memos.set(state, (memo = new Map()));
  const hit = memo.get(needle);
  if (hit && hit.from <= from && (from <= hit.at || hit.at < 0)) return hit.at;
  const at = state.src.indexOf(needle, from);
  memo.set(needle, { from, at });
  return at;
}

export function wikilinks(md: MarkdownIt, env: () => WikiEnv): void {
  md.inline.ruler.before("link", "wikilink", (state: StateInline, silent: boolean): boolean => {
    const src = state.src;
    let pos = state.pos;
    let embed = false;
    if (src.charCodeAt(pos) === 0x21 /* ! */) {
      embed = true;
      pos++;
    }
    if (src.charCodeAt(pos) !== 0x5b || src.charCodeAt(pos + 1) !== 0x5b) return false;
    const close = scan(state, "]]", pos + 2);
    if (close < 0) return false;
    // Neither a line break nor another "[[" inside (found by the same memo: linear).
    const within = (needle: string) => {
      const at = scan(state, needle, pos + 2);
      return at >= 0 && at < close;
    };
    if (within("\n") || within("[[")) return false;
    const inner = src.slice(pos + 2, close);
    if (inner.trim() === "") return false;

    const { target, section: hashed, label, options } = wikilinkParts(inner);
    const section = hashed ?? "";

    if (!silent) {
      const e = env();
      if (embed && IMAGE_FILE.test(target) && hashed === null) {
        image(state, e, target, options ?? "");
        state.pos = close + 2;
        return true;
      }
      const text = label || (target ? target + (section ? ` › ${section}` : "") : section);
      const slug = target ? resolveTarget(target) : e.self ?? "";
      const anchor = sectionAnchor(section);
      if (!target && !section) return false;
      if (target && !slug) {
        // [[???]] points nowhere: shown as text.
        const tok = state.push("text", "", 0);
        tok.content = src.slice(state.pos, close + 2);
      } else {
        const exists = target ? e.exists?.(slug) : true;
        const classes = ["wikilink"];
        if (embed) classes.push("wikilink-embed");
        if (exists === false) classes.push("wikilink-missing");
        const open = state.push("link_open", "a", 1);
        const href = target ? (exists === false ? e.href(slug, target) : e.href(slug)) : "";
        open.attrs = [
          ["href", href + anchor],
          ["class", classes.join(" ")],
          ["data-slug", slug],
        ];
        if (exists === false) open.attrs.push(["title", e.missingTitle(target)]);
        if (embed) open.meta = { embed: { slug, target, section } satisfies EmbedTarget };
        const tok = state.push("text", "", 0);
        tok.content = text;
        state.push("link_close", "a", -1);
      }
    }
    state.pos = close + 2;
    return true;
  });
}

/** `![[file.png|options]]`: an image when the file is an upload, else a placeholder.
 *  Options (after "|", "|"-separated): a size `600` or `600x400`, else the alt text. */
function image(state: StateInline, e: WikiEnv, file: string, options: string): void {
  let alt = "";
  let size: RegExpExecArray | null = null;
  for (const part of options.split("|").map((p) => p.trim())) {
    const m = IMAGE_SIZE.exec(part);
    if (m) size = m;
    else if (part) alt = alt ? `${alt}|${part}` : part;
  }
  const name = file.startsWith("/uploads/") ? file.slice("/uploads/".length) : file;
  if (!UPLOAD_NAME.test(name)) {
    const tok = state.push("image_missing", "span", 0);
    tok.content = file;
    tok.meta = { title: e.text ? e.text("embed.image_missing", { name: file }) : file };
    return;
  }
  const tok = state.push("image", "img", 0);
  tok.attrs = [
    ["src", `/uploads/${name}`],
    ["alt", ""],
  ];
  if (size) {
    tok.attrs.push(["width", size[1]!]);
    if (size[2]) tok.attrs.push(["height", size[2]]);
  }
  const text = new state.Token("text", "", 0);
  text.content = alt || file;
  tok.children = [text];
  tok.content = alt || file;
}

/** The placeholder of an image embed whose file is not an upload of the workspace: an
 *  icon and the file name, titled as missing. */
export function imageMissing(md: MarkdownIt): void {
  md.renderer.rules.image_missing = (tokens, idx) => {
    const tok = tokens[idx]!;
    const esc = md.utils.escapeHtml;
    const title = esc(String(tok.meta?.title ?? tok.content));
    return `<span class="image-missing" role="img" title="${title}" aria-label="${title}"><span class="image-missing-icon"></span><span class="image-missing-name">${esc(tok.content)}</span></span>`;
  };
}
