// The words that changed within a changed line: a removed line and the added line paired
// with it are split into words (and the spaces and punctuation between them) and compared
// by their longest common subsequence, so the history's diff can mark just the words
// that differ instead of leaving the reader to spot one changed word in a long line.

/** A piece of a line: `changed` when it is not in the other line. */
export interface Piece {
  text: string;
  changed: boolean;
}

/** Words (letters, digits, `_`), runs of spaces, and single other characters. */
export function tokens(line: string): string[] {
  return line.match(/[\p{L}\p{N}_]+|\s+|[^\p{L}\p{N}_\s]/gu) ?? [];
}

/** Beyond this many token pairs the table would cost too much (two 500-word lines):
 *  such lines are shown as wholly changed, as before. */
const MAX_CELLS = 250_000;

/** Merges neighbours of the same kind, so the markup has one span per changed run. */
function merge(pieces: Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if (last && last.changed === p.changed) last.text += p.text;
    else out.push({ ...p });
  }
  return out;
}

/** A space between two changed runs joins them: "a b c" → "x y z" reads as one change,
 *  not three words changed with unchanged spaces between. */
function bridge(pieces: Piece[]): Piece[] {
  return pieces.map((p, i) =>
    !p.changed && /^\s+$/.test(p.text) && pieces[i - 1]?.changed && pieces[i + 1]?.changed ? { ...p, changed: true } : p,
  );
}

/** Spaces at the ends of a changed run are left unmarked: the mark covers words. */
function trimRuns(pieces: Piece[]): Piece[] {
  return pieces.flatMap((p) => {
    if (!p.changed || !p.text.trim()) return [p];
    const [, lead, core, tail] = /^(\s*)([\s\S]*?)(\s*)$/.exec(p.text)!;
    return [
      { text: lead!, changed: false },
      { text: core!, changed: true },
      { text: tail!, changed: false },
    ].filter((x) => x.text);
  });
}

/** The removed line and the added line as pieces, the words each does not share with the
 *  other marked; null when the lines share too little for marks to help (less than a
 *  third of their text), or are too long to compare. */
export function wordDiff(before: string, after: string): { removed: Piece[]; added: Piece[] } | null {
  const a = tokens(before);
  const b = tokens(after);
  if (a.length === 0 || b.length === 0 || a.length * b.length > MAX_CELLS) return null;
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], one row at a time.
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const removed: Piece[] = [];
  const added: Piece[] = [];
  let same = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      removed.push({ text: a[i]!, changed: false });
      added.push({ text: b[j]!, changed: false });
      same += a[i]!.trim() ? a[i]!.length : 0;
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) removed.push({ text: a[i++]!, changed: true });
    else added.push({ text: b[j++]!, changed: true });
  }
  while (i < a.length) removed.push({ text: a[i++]!, changed: true });
  while (j < b.length) added.push({ text: b[j++]!, changed: true });
  const visible = (s: string) => s.replace(/\s+/g, "").length;
  if (same * 3 < Math.max(visible(before), visible(after))) return null;
  const tidy = (pieces: Piece[]) => merge(trimRuns(merge(bridge(merge(pieces)))));
  return { removed: tidy(removed), added: tidy(added) };
}
