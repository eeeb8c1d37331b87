// [[target]], [[target|label]], [[target#section|label]] and ![[embed]]: a markdown-it
// inline rule that reads wikilinks the way the server's link extractor does
// (src/markdown/mod.rs): the target is the text before "|" cut at the first "#", trimmed;
// it resolves to itself when it is a valid slug, else to its derived slug. In a table a
// label's pipe is written "\|", and the "\" is not part of the target.
import type { MarkdownIt } from "markdown-it";
import type { StateInline } from "markdown-it";
import { resolveTarget } from "./slug";

export interface WikiEnv {
  /** Whether a page with this slug exists; undefined = unknown (shown as a plain link). */
  exists?: (slug: string) => boolean | undefined;
  /** The href of a page (the router's scheme). */
  href: (slug: string, title?: string) => string;
  /** The tooltip of a link to a missing page. */
  missingTitle: (target: string) => string;
  /** Slug of the page being rendered, for [[#section]]. */
  self?: string;
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
    const close = src.indexOf("]]", pos + 2);
    if (close < 0) return false;
    const inner = src.slice(pos + 2, close);
    if (inner.includes("\n") || inner.includes("[[") || inner.trim() === "") return false;

    const pipe = inner.indexOf("|");
    let dest = pipe < 0 ? inner : inner.slice(0, pipe);
    const label = pipe < 0 ? "" : inner.slice(pipe + 1).trim();
    if (pipe >= 0 && dest.endsWith("\\")) dest = dest.slice(0, -1);
    const hashAt = dest.indexOf("#");
    const target = (hashAt < 0 ? dest : dest.slice(0, hashAt)).trim();
    const section = hashAt < 0 ? "" : dest.slice(hashAt + 1).trim();

    if (!silent) {
      const e = env();
      const text = label || (target ? target + (section ? ` › ${section}` : "") : section);
      const slug = target ? resolveTarget(target) : e.self ?? "";
      const anchor = section ? "#" + encodeURIComponent(resolveTarget(section) || section) : "";
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
        const tok = state.push("text", "", 0);
        tok.content = text;
        state.push("link_close", "a", -1);
      }
    }
    state.pos = close + 2;
    return true;
  });
}
