// A bound on the renderer's work. markdown-it's inline parser tries its rules at every
// markup character, and some inputs make it do much work per character: a paragraph of
// 1 MiB of "[" (every "[" opens a link label searched for up to 100 levels deep), or of
// 500,000 "*a" (as many emphasis delimiters, then as many elements for the browser to
// build). No real paragraph holds thousands of them, so the inline markup of a block is
// parsed only while it stays within MARKS_PER_BLOCK such characters and the page (with
// what it embeds) within MARKS_PER_PAGE; a block past either is shown as its plain text
// (class "md-plain"), and the page says so once (a notice at its top, render.ts). So is
// the text past the page's allowance of lines (LINES_PER_PAGE).
import type { MarkdownIt, StateCore, Token } from "markdown-it";

/** Characters that start (or may start) inline markup: each is where rules are tried. */
const MARKS = new Uint8Array(128);
for (const c of "[]*_~=`<>!\\&:") MARKS[c.charCodeAt(0)] = 1;

/** Markup characters one block (a paragraph, heading, table cell) may have and be formatted. */
export const MARKS_PER_BLOCK = 4_000;
/** Markup characters formatted in a whole page, embedded pages included. */
export const MARKS_PER_PAGE = 60_000;

/** Lines of markdown a page (with what it embeds) is parsed for: each line can be a block
 *  (a paragraph, a list item, a table row), and a page of 350,000 tiny paragraphs took
 *  seconds to parse however cheap each is. The text past it is shown as plain text. A
 *  line starting with "|" or ">" counts twice. */
export const LINES_PER_PAGE = 10_000;

/** What is left of a render's allowance; one object for a page and all it embeds. */
export interface Budget {
  marks: number;
  lines: number;
  /** Parts shown as plain text so far. */
  plain: number;
}

export const newBudget = (): Budget => ({ marks: MARKS_PER_PAGE, lines: LINES_PER_PAGE, plain: 0 });

/** `body` cut where the budget's lines run out: the markdown to parse, and the rest (""
 *  when all of it fits). The cut is made at a blank line when one is close before the
 *  limit, so that a paragraph or list is not split. Takes the lines from the budget. */
export function cutLines(body: string, budget: Budget): [string, string] {
  let at = -1;
  let n = 0;
  for (let i = body.indexOf("\n"); i >= 0; i = body.indexOf("\n", i + 1)) {
    // A table row or a quote's line costs about twice another (more elements each).
    const next = body.charCodeAt(i + 1);
    n += next === 0x7c /* | */ || next === 0x3e /* > */ ? 2 : 1;
    if (n > budget.lines) {
      at = i;
      break;
    }
  }
  if (at < 0) {
    budget.lines -= n;
    return [body, ""];
  }
  const blank = body.lastIndexOf("\n\n", at);
  if (blank > 0 && at - blank < 20_000) at = blank + 1;
  budget.lines = 0;
  budget.plain++;
  return [body.slice(0, at + 1), body.slice(at + 1)];
}

/** How many markup characters `text` has, counting no further than `limit` + 1. */
function countMarks(text: string, limit: number): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 128 && MARKS[c] === 1 && ++n > limit) break;
  }
  return n;
}

/** The rule: before the inline pass, each inline token over the allowance becomes an
 *  `inline_plain` token, which no inline or later core rule reads (linkify among them:
 *  80,000 addresses in one paragraph took 11 s); after the pass it gets its content as
 *  one text child (for the heading anchors' text), and it renders as that text. The
 *  budget is `env.budget` (none: a fresh one for this parse). */
export function boundedInline(md: MarkdownIt): void {
  const PLAIN = "inline_plain";
  md.core.ruler.before("inline", "inline_budget", (state: StateCore) => {
    const env = state.env as { budget?: Budget };
    const budget = (env.budget ??= newBudget());
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      const tok = tokens[i]!;
      if (tok.type !== "inline") continue;
      const marks = countMarks(tok.content, Math.min(MARKS_PER_BLOCK, budget.marks));
      if (marks <= MARKS_PER_BLOCK && marks <= budget.marks) {
        budget.marks -= marks;
        continue;
      }
      tok.type = PLAIN;
      tok.hidden = true; // as an inline token: no line break after its block's opening tag
      budget.plain++;
      const open: Token | undefined = tokens[i - 1];
      if (open && open.nesting === 1) open.attrJoin("class", "md-plain");
    }
  });
  md.core.ruler.after("inline", "inline_budget_text", (state: StateCore) => {
    for (const tok of state.tokens) {
      if (tok.type !== PLAIN) continue;
      const text = new state.Token("text", "", 0);
      text.content = tok.content;
      tok.children = [text];
    }
  });
  md.renderer.rules[PLAIN] = (tokens, idx) => md.utils.escapeHtml(tokens[idx]!.content);
}
