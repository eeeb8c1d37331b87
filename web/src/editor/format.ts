// Markdown formatting commands of the editor's toolbar and shortcuts (Ctrl/Cmd+B, +I):
// each applies to the selection or the current lines in one transaction that is its own
// undo step (isolateHistory), so Ctrl+Z restores exactly the text before it.
import { startCompletion } from "@codemirror/autocomplete";
import { isolateHistory } from "@codemirror/commands";
import { EditorSelection, type ChangeSpec, type EditorState, type Line, type SelectionRange } from "@codemirror/state";
import type { EditorView } from "@codemirror/view";

export type FormatAction = "heading" | "bold" | "italic" | "link" | "bullets" | "checklist" | "code" | "table";

export interface FormatOptions {
  /** The header of a new table's column `n` (1-based), in the user's language. */
  column: (n: number) => string;
}

function apply(view: EditorView, changes: ChangeSpec[], selection: (map: (pos: number, assoc: number) => number) => EditorSelection) {
  const set = view.state.changes(changes);
  view.dispatch({
    changes: set,
    selection: selection((pos, assoc) => set.mapPos(pos, assoc)),
    annotations: isolateHistory.of("full"),
    userEvent: "input.format",
    scrollIntoView: true,
  });
  view.focus();
}

// ---- Inline markers (**bold**, *italic*, `code`) ----

/** How many `ch` run from `pos` backwards (dir -1) or forwards (dir 1), at most 3. */
function run(state: EditorState, pos: number, dir: -1 | 1, ch: string, limit: number): number {
  let n = 0;
  while (n < 3) {
    const at = dir < 0 ? pos - n - 1 : pos + n;
    if (dir < 0 ? at < limit : at >= limit) break;
    if (state.sliceDoc(at, at + 1) !== ch) break;
    n++;
  }
  return n;
}

/** Whether runs of `before` and `after` marker characters close `marker` around a text:
 *  `**` needs two on each side (`***x***` is bold too), `*` an odd count (so `**x**` is
 *  not italic), a backtick exactly one. */
function closes(marker: string, before: number, after: number): boolean {
  if (marker === "**") return before >= 2 && after >= 2;
  if (marker === "*") return before % 2 === 1 && after % 2 === 1;
  return before === 1 && after === 1;
}

interface Segment {
  from: number;
  to: number;
}

/** The non-blank part of each line a range covers (whitespace at its ends left out:
 *  `**word **` would not be bold). An empty range is one empty segment. */
function segments(state: EditorState, range: SelectionRange): Segment[] {
  if (range.empty) return [{ from: range.from, to: range.to }];
  const out: Segment[] = [];
  for (let pos = range.from; pos <= range.to; ) {
    const line = state.doc.lineAt(pos);
    let from = Math.max(range.from, line.from);
    let to = Math.min(range.to, line.to);
    const text = state.sliceDoc(from, to);
    from += text.length - text.trimStart().length;
    to -= text.length - text.trimEnd().length;
    if (to > from) out.push({ from, to });
    pos = line.to + 1;
  }
  return out.length ? out : [{ from: range.from, to: range.from }];
}

/** The segment without the marker characters at its ends (its text proper), and whether
 *  the runs of marker characters around that text — inside the segment or just outside
 *  it — close `marker`. */
function wrapping(state: EditorState, s: Segment, marker: string): { from: number; to: number; wrapped: boolean } {
  const ch = marker[0]!;
  const line = state.doc.lineAt(s.from);
  const from = s.from + run(state, s.from, 1, ch, s.to);
  const to = Math.max(from, s.to - run(state, s.to, -1, ch, from));
  return { from, to, wrapped: closes(marker, run(state, from, -1, ch, line.from), run(state, to, 1, ch, line.to)) };
}

/** Wraps the selection in `marker`, or unwraps it when every part of it is wrapped
 *  already (the markers may be just outside the selection or its own first and last
 *  characters). A selection over several lines is wrapped line by line (emphasis does not
 *  span paragraphs). An empty selection gets an empty pair with the cursor inside. */
export function toggleWrap(view: EditorView, marker: string): boolean {
  const { state } = view;
  const len = marker.length;
  const changes: ChangeSpec[] = [];
  const ranges = state.selection.ranges.map((range) => {
    const parts = segments(state, range);
    const cores = parts.map((s) => wrapping(state, s, marker));
    const unwrap = cores.every((c) => c.wrapped);
    parts.forEach((s, i) => {
      const core = cores[i]!;
      if (unwrap) changes.push({ from: core.from - len, to: core.from }, { from: core.to, to: core.to + len });
      else if (!core.wrapped) changes.push({ from: s.from, insert: marker }, { from: s.to, insert: marker });
    });
    return { range, parts, cores, unwrap };
  });
  apply(view, changes, (map) =>
    EditorSelection.create(
      ranges.map(({ range, parts, cores, unwrap }) => {
        if (range.empty) return EditorSelection.cursor(unwrap ? map(range.from, 1) : map(range.from, -1) + len);
        // The text stays selected: inside the new markers, or where the old were.
        const [first, last] = unwrap ? [cores[0]!, cores[cores.length - 1]!] : [parts[0]!, parts[parts.length - 1]!];
        return EditorSelection.range(map(first.from, 1), map(last.to, -1));
      }),
      state.selection.mainIndex,
    ),
  );
  return true;
}

// ---- Line prefixes (heading, bulleted list, checklist) ----

/** The lines the selection touches (blank ones left out when there are others). */
function selectedLines(state: EditorState): Line[] {
  const seen = new Set<number>();
  const lines: Line[] = [];
  for (const range of state.selection.ranges) {
    const last = state.doc.lineAt(range.to).number;
    for (let n = state.doc.lineAt(range.from).number; n <= last; n++) {
      // A selection ending at the very start of a line does not take that line.
      if (n === last && n > state.doc.lineAt(range.from).number && range.to === state.doc.line(n).from) continue;
      if (seen.has(n)) continue;
      seen.add(n);
      lines.push(state.doc.line(n));
    }
  }
  const filled = lines.filter((l) => l.text.trim() !== "");
  return filled.length ? filled : lines;
}

const HEADING = /^ {0,3}#{1,6}(?:[ \t]+|$)/;
// An item's marker, with a task box: indent, `-`/`*`/`+` or `1.`/`1)`, spaces, `[ ]`.
const ITEM = /^([ \t]*(?:>[ \t]?)*)((?:[-*+]|\d{1,9}[.)])[ \t]+)(\[[ xX]\][ \t]+)?/;

function linePrefix(view: EditorView, action: "heading" | "bullets" | "checklist"): boolean {
  const { state } = view;
  const lines = selectedLines(state);
  const changes: ChangeSpec[] = [];
  if (action === "heading") {
    // Level 2 (a level 1 may become the page's title): other levels become
    // level 2, and level 2 goes back to plain text.
    const all = lines.every((l) => /^ {0,3}##(?:[ \t]|$)/.test(l.text));
    for (const l of lines) {
      const old = HEADING.exec(l.text)?.[0].length ?? 0;
      changes.push({ from: l.from, to: l.from + old, insert: all ? "" : "## " });
    }
  } else {
    const isItem = (l: Line) => {
      const m = ITEM.exec(l.text);
      return m !== null && (action === "checklist" ? m[3] !== undefined : m[3] === undefined);
    };
    const all = lines.every(isItem);
    for (const l of lines) {
      const m = ITEM.exec(l.text);
      const indent = m ? m[1]!.length : /^[ \t]*/.exec(l.text)![0].length;
      const end = m ? m[0].length : indent;
      if (all) changes.push({ from: l.from + indent, to: l.from + end });
      else if (action === "bullets") changes.push({ from: l.from + indent, to: l.from + end, insert: "- " });
      else if (!isItem(l)) changes.push({ from: l.from + indent, to: l.from + end, insert: "- [ ] " });
    }
  }
  apply(view, changes, (map) =>
    EditorSelection.create(
      state.selection.ranges.map((r) => EditorSelection.range(map(r.anchor, 1), map(r.head, 1))),
      state.selection.mainIndex,
    ),
  );
  return true;
}

// ---- Link, code, table ----

/** With a selection: `[selection](https://)`, the address selected to type over. Without
 *  one: `[[` `]]` with the page completion open (a link to a page of the wiki). */
function link(view: EditorView): boolean {
  const { state } = view;
  const range = state.selection.main;
  if (range.empty) {
    apply(view, [{ from: range.from, insert: "[[]]" }], () => EditorSelection.single(range.from + 2));
    startCompletion(view);
    return true;
  }
  const text = state.sliceDoc(range.from, range.to);
  const insert = `[${text}](https://)`;
  const url = range.from + text.length + 3;
  apply(view, [{ from: range.from, to: range.to, insert }], () => EditorSelection.single(url, url + "https://".length));
  return true;
}

/** Inline code for a selection within a line; a fenced block for one over several lines
 *  (removed again when the lines are fenced already). */
function code(view: EditorView): boolean {
  const { state } = view;
  const range = state.selection.main;
  const first = state.doc.lineAt(range.from);
  const last = state.doc.lineAt(range.to);
  if (first.number === last.number) return toggleWrap(view, "`");
  const before = first.number > 1 ? state.doc.line(first.number - 1) : null;
  const after = last.number < state.doc.lines ? state.doc.line(last.number + 1) : null;
  if (before && after && /^```/.test(before.text) && /^```\s*$/.test(after.text)) {
    apply(view, [{ from: before.from, to: first.from }, { from: last.to, to: after.to }], (map) =>
      EditorSelection.single(map(first.from, 1), map(last.to, -1)),
    );
    return true;
  }
  apply(view, [{ from: first.from, insert: "```\n" }, { from: last.to, insert: "\n```" }], (map) =>
    EditorSelection.single(map(first.from, 1), map(last.to, -1)),
  );
  return true;
}

/** A two-column table below the current line (blank lines around it, so it is a block
 *  of its own), with the first header cell selected to type over. */
function table(view: EditorView, opts: FormatOptions): boolean {
  const { state } = view;
  const line = state.doc.lineAt(state.selection.main.head);
  const blank = line.text.trim() === "";
  const at = blank ? line.from : line.to;
  const head = `| ${opts.column(1)} | ${opts.column(2)} |`;
  const body = `${head}\n| --- | --- |\n|  |  |`;
  const next = line.number < state.doc.lines ? state.doc.line(line.number + 1) : null;
  const prefix = blank ? (line.number > 1 && state.doc.line(line.number - 1).text.trim() !== "" ? "\n" : "") : "\n\n";
  // A line right after a table would be a row of it: a blank line ends the table.
  const suffix = next && next.text.trim() !== "" ? "\n" : "";
  const insert = prefix + body + suffix;
  const cell = at + prefix.length + 2;
  apply(view, [{ from: at, to: blank ? line.to : at, insert }], () => EditorSelection.single(cell, cell + opts.column(1).length));
  return true;
}

export function format(view: EditorView, action: FormatAction, opts: FormatOptions): boolean {
  switch (action) {
    case "bold":
      return toggleWrap(view, "**");
    case "italic":
      return toggleWrap(view, "*");
    case "heading":
    case "bullets":
    case "checklist":
      return linePrefix(view, action);
    case "link":
      return link(view);
    case "code":
      return code(view);
    case "table":
      return table(view, opts);
  }
}
