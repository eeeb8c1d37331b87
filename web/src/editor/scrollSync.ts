// The preview follows the source's scroll by source line: the preview's blocks carry the
// line they start at (`data-line`, renderMarkdown's `lines` option), and the preview is
// scrolled so that the position of the source's top line, interpolated between the
// blocks around it, is at its top. A preview without line marks (a large page, rendered
// in sections) follows proportionally. Only source → preview: scrolling the preview by
// hand does not move the source.
import type { EditorView } from "@codemirror/view";

/** Where the source is scrolled to: the line (0-based, with the fraction of it scrolled
 *  past) at the top of its visible area, of how many, and whether it is at its very top
 *  or end (the preview then is too). */
export interface SourcePosition {
  line: number;
  lines: number;
  edge: "top" | "bottom" | null;
}

export function sourcePosition(view: EditorView): SourcePosition {
  const s = view.scrollDOM;
  const lines = view.state.doc.lines;
  // The height of the document at the scroller's top edge (≤ 0: the first line shows whole).
  const height = s.getBoundingClientRect().top - view.documentTop;
  if (height <= 0) return { line: 0, lines, edge: "top" };
  if (s.scrollTop + s.clientHeight >= s.scrollHeight - 2) return { line: lines, lines, edge: "bottom" };
  const block = view.lineBlockAtHeight(height);
  const line = view.state.doc.lineAt(block.from).number - 1;
  const fraction = block.height > 0 ? Math.min(1, Math.max(0, (height - block.top) / block.height)) : 0;
  return { line: line + fraction, lines, edge: null };
}

/** Scrolls the preview to the source's position. */
export function scrollPreviewTo(preview: HTMLElement, { line, lines, edge }: SourcePosition): void {
  const room = preview.scrollHeight - preview.clientHeight;
  if (room <= 0 || edge) {
    preview.scrollTop = edge === "bottom" ? room : 0;
    return;
  }
  const base = preview.getBoundingClientRect().top - preview.scrollTop;
  // [line, offset in the preview] of each block, lines increasing (nested blocks that
  // start on their parent's line are left out).
  let before: [number, number] = [0, 0];
  let after: [number, number] = [Math.max(lines, 1), preview.scrollHeight];
  let last = -1;
  for (const el of preview.querySelectorAll<HTMLElement>("[data-line]")) {
    const l = Number(el.dataset.line);
    if (!(l > last)) continue;
    last = l;
    const mark: [number, number] = [l, el.getBoundingClientRect().top - base];
    if (l <= line) before = mark;
    else {
      after = mark;
      break;
    }
  }
  const span = after[0] - before[0];
  const y = before[1] + (span > 0 ? ((line - before[0]) / span) * (after[1] - before[1]) : 0);
  preview.scrollTop = Math.max(0, Math.min(room, y - parseFloat(getComputedStyle(preview).paddingTop || "0")));
}

/** Makes `preview` follow the source's scroll while `active()` (both are on screen), also
 *  when the preview's content changes. Returns the function that stops it. */
export function followScroll(view: EditorView, preview: HTMLElement, active: () => boolean): () => void {
  let frame = 0;
  const sync = () => {
    frame = 0;
    if (active()) scrollPreviewTo(preview, sourcePosition(view));
  };
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(sync);
  };
  view.scrollDOM.addEventListener("scroll", schedule, { passive: true });
  const changed = new MutationObserver(schedule);
  changed.observe(preview, { childList: true, subtree: true });
  return () => {
    cancelAnimationFrame(frame);
    view.scrollDOM.removeEventListener("scroll", schedule);
    changed.disconnect();
  };
}
