// Obsidian's markdown beyond wikilinks, as markdown-it rules (docs/import.md, "Obsidian
// notes"): callouts, block ids, image sizes in the alt text, and note embeds lifted out of
// their paragraph (render.ts renders them). Highlights (`==text==`) are markdown-it-mark.
import type { MarkdownIt, StateCore, Token } from "markdown-it";
import { IMAGE_SIZE, type EmbedTarget, type WikiEnv } from "./wikilinks";

// ---------------------------------------------------------------------------------------
// Callouts: a blockquote whose first line is `[!type]`, `[!type]+` or `[!type]-`, then an
// optional title. Each type belongs to a family (its colour and icon); an unknown type is
// a note. `+`/`-` make it foldable (open/closed): <details>/<summary>, no script.

/** Obsidian's callout types and their families. */
const CALLOUT_FAMILIES: Record<string, string> = {
  note: "note",
  abstract: "abstract",
  summary: "abstract",
  tldr: "abstract",
  info: "info",
  todo: "todo",
  tip: "tip",
  hint: "tip",
  important: "tip",
  success: "success",
  check: "success",
  done: "success",
  question: "question",
  help: "question",
  faq: "question",
  warning: "warning",
  caution: "warning",
  attention: "warning",
  failure: "failure",
  fail: "failure",
  missing: "failure",
  danger: "danger",
  error: "danger",
  bug: "bug",
  example: "example",
  quote: "quote",
  cite: "quote",
};

const CALLOUT = /^\[!([\p{L}\p{N}_-]+)\]([+-]?)[ \t]*(.*)$/u;

interface Callout {
  type: string;
  family: string;
  fold: "" | "+" | "-";
  /** No title was written: the type's name is shown. */
  untitled: boolean;
}

/** The index of the token closing the block opened at `open`. */
function closing(tokens: Token[], open: number): number {
  const level = tokens[open]!.level;
  for (let j = open + 1; j < tokens.length; j++) {
    if (tokens[j]!.level === level && tokens[j]!.nesting === -1) return j;
  }
  return tokens.length - 1;
}

export function callouts(md: MarkdownIt, env: () => WikiEnv): void {
  md.core.ruler.after("block", "callouts", (state: StateCore) => {
    const tokens = state.tokens;
    // Built anew rather than spliced in place (a page of many callouts: quadratic).
    const out: Token[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const open = tokens[i]!;
      out.push(open);
      if (open.type !== "blockquote_open") continue;
      const inline = tokens[i + 2];
      if (tokens[i + 1]?.type !== "paragraph_open" || inline?.type !== "inline") continue;
      const nl = inline.content.indexOf("\n");
      const m = CALLOUT.exec(nl < 0 ? inline.content : inline.content.slice(0, nl));
      if (!m) continue;
      const type = m[1]!.toLowerCase();
      const title = m[3]!.trim();
      const close = tokens[closing(tokens, i)]!;
      open.type = "callout_open";
      close.type = "callout_close";
      open.meta = close.meta = {
        type,
        family: CALLOUT_FAMILIES[type] ?? "note",
        fold: m[2] as Callout["fold"],
        untitled: title === "",
      } satisfies Callout;
      // The title: inline markdown, between the callout's opening and its content.
      const head = new state.Token("inline", "", 0);
      head.content = title;
      head.children = [];
      head.level = open.level + 1;
      const sep = new state.Token("callout_body", "", 0);
      sep.level = open.level + 1;
      out.push(head, sep);
      const rest = nl < 0 ? "" : inline.content.slice(nl + 1);
      if (rest.trim() === "") {
        i += 3; // the first paragraph held only the title
      } else {
        inline.content = rest;
      }
    }
    state.tokens = out;
  });

  const esc = md.utils.escapeHtml;
  md.renderer.rules.callout_open = (tokens, idx, _o, _e, slf) => {
    const tok = tokens[idx]!;
    const c = tok.meta as unknown as Callout;
    tok.attrJoin("class", `callout callout-${c.family}`);
    tok.attrSet("data-callout", c.type);
    if (c.fold === "+") tok.attrSet("open", "");
    const outer = c.fold ? "details" : "div";
    const title = c.fold ? "summary" : "div";
    let name = "";
    if (c.untitled) {
      const e = env();
      name = CALLOUT_FAMILIES[c.type] && e.text ? e.text(`callout.${c.type}`) : c.type.charAt(0).toUpperCase() + c.type.slice(1);
    }
    return `<${outer}${slf.renderAttrs(tok)}><${title} class="callout-title"><span class="callout-icon"></span><span class="callout-title-text">${esc(name)}`;
  };
  // Right after the title, which is right after the callout's opening.
  md.renderer.rules.callout_body = (tokens, idx) => {
    const fold = (tokens[idx - 2]?.meta as unknown as Callout | undefined)?.fold;
    return `</span></${fold ? "summary" : "div"}><div class="callout-content">`;
  };
  md.renderer.rules.callout_close = (tokens, idx) =>
    `</div></${(tokens[idx]!.meta as unknown as Callout).fold ? "details" : "div"}>\n`;
}

// ---------------------------------------------------------------------------------------
// Block ids: a trailing ` ^block-id` at the end of a paragraph or list item is not shown;
// it becomes the id ("^block-id") of the list item, else of the paragraph. A paragraph of
// only `^block-id` right after a block (a table, a quote, a list) names that block.

const BLOCK_ID = /(?:^|[ \t\n])\^([A-Za-z0-9-]+)[ \t]*$/;

export function blockIds(md: MarkdownIt): void {
  md.core.ruler.after("callouts", "block_ids", (state: StateCore) => {
    const tokens = state.tokens;
    // One pass that builds the list anew and pairs each block's closing token with its
    // opening one as it goes: no splices, no searches back (linear on any page).
    const out: Token[] = [];
    const opens: Token[] = [];
    const openOf = new Map<Token, Token>();
    for (let i = 0; i < tokens.length; i++) {
      const tok = tokens[i]!;
      if (tok.nesting === 1) opens.push(tok);
      else if (tok.nesting === -1) {
        const o = opens.pop();
        if (o) openOf.set(tok, o);
      }
      out.push(tok);
      const para = tokens[i - 1];
      if (tok.type !== "inline" || para?.type !== "paragraph_open") continue;
      const m = BLOCK_ID.exec(tok.content);
      if (!m) continue;
      const id = "^" + m[1];
      const text = tok.content.slice(0, m.index).replace(/\s+$/, "");
      if (text !== "") {
        tok.content = text;
        const item = tokens[i - 2];
        (item?.type === "list_item_open" ? item : para).attrSet("id", id);
        continue;
      }
      // Only the id: it names the block just before (what is left of the page before
      // it), at the same level.
      const before = out[out.length - 3];
      const named = before && before.nesting === -1 && before.level === para.level ? openOf.get(before) : undefined;
      if (!named) continue;
      named.attrSet("id", id);
      out.length -= 2; // the paragraph's opening and its text…
      opens.pop();
      const end = tokens[i + 1];
      if (end?.nesting === -1) i++; // … and its closing go
    }
    state.tokens = out;
  });
}

// ---------------------------------------------------------------------------------------
// Image sizes in a markdown image's alt text: `![alt|600](x.png)`, `![alt|600x400](x.png)`
// set width (and height); the size is not part of the alt text.

function sizeImages(children: Token[]): void {
  for (const tok of children) {
    if (tok.type !== "image" || !tok.children) continue;
    const last = tok.children[tok.children.length - 1];
    if (last?.type !== "text") continue;
    const bar = last.content.lastIndexOf("|");
    if (bar < 0) continue;
    const m = IMAGE_SIZE.exec(last.content.slice(bar + 1).trim());
    if (!m) continue;
    last.content = last.content.slice(0, bar).replace(/\s+$/, "");
    tok.content = tok.content.slice(0, tok.content.lastIndexOf("|")).replace(/\s+$/, "");
    tok.attrSet("width", m[1]!);
    if (m[2]) tok.attrSet("height", m[2]);
  }
}

export function imageSizes(md: MarkdownIt): void {
  md.core.ruler.push("image_sizes", (state: StateCore) => {
    for (const tok of state.tokens) if (tok.type === "inline" && tok.children) sizeImages(tok.children);
  });
}

// ---------------------------------------------------------------------------------------
// Note embeds stand as blocks: a paragraph holding `![[Note]]` is cut around it, and the
// embed becomes a `note_embed` token (meta: its EmbedTarget) between the pieces. An embed
// elsewhere (a heading, a table cell) stays a link.

const isBreak = (t: Token) => t.type === "softbreak" || t.type === "hardbreak" || (t.type === "text" && t.content.trim() === "");

export function liftEmbeds(md: MarkdownIt): void {
  // Right after the inline pass, before the task-list rule, so that a task item's label
  // wraps its own text only, never an embedded page.
  md.core.ruler.after("inline", "lift_embeds", (state: StateCore) => {
    const tokens = state.tokens;
    // Built anew rather than spliced in place: a page of 20,000 embeds made 20,000
    // splices of the whole token list (quadratic).
    const result: Token[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const para = tokens[i]!;
      const inline = tokens[i + 1];
      const children = inline?.children ?? [];
      if (
        para.type !== "paragraph_open" ||
        inline?.type !== "inline" ||
        tokens[i + 2]?.type !== "paragraph_close" ||
        !children.some((c) => c.type === "link_open" && c.meta?.embed)
      ) {
        result.push(para);
        continue;
      }
      const out: Token[] = [];
      let run: Token[] = [];
      let first = true;
      const flush = () => {
        while (run.length && isBreak(run[0]!)) run.shift();
        while (run.length && isBreak(run[run.length - 1]!)) run.pop();
        if (!run.length) return;
        const open = new state.Token("paragraph_open", "p", 1);
        Object.assign(open, { level: para.level, hidden: para.hidden, block: true, map: first ? para.map : null, attrs: first ? para.attrs : null });
        const text = new state.Token("inline", "", 0);
        Object.assign(text, { level: inline.level, children: run, content: first ? inline.content : "", block: true });
        const end = new state.Token("paragraph_close", "p", -1);
        Object.assign(end, { level: para.level, hidden: para.hidden, block: true });
        out.push(open, text, end);
        first = false;
        run = [];
      };
      for (let c = 0; c < children.length; c++) {
        const child = children[c]!;
        const target = child.type === "link_open" ? (child.meta?.embed as EmbedTarget | undefined) : undefined;
        if (!target) {
          run.push(child);
          continue;
        }
        flush();
        const embed = new state.Token("note_embed", "div", 0);
        Object.assign(embed, { level: para.level, block: true, meta: target, map: out.length === 0 ? para.map : null });
        out.push(embed);
        while (c < children.length && children[c]!.type !== "link_close") c++;
      }
      flush();
      // A block id the paragraph carried goes to the embed when no text is left.
      if (first && para.attrs && out[0]) out[0].attrs = [...para.attrs];
      for (const t of out) result.push(t);
      i += 2;
    }
    state.tokens = result;
  });
}
