// The editor's preview of a large page (over LARGE_PAGE characters), rendered in pieces so
// that typing never waits for it: the source is cut into sections (at a blank line before
// a heading once a section has 600 characters, or after 32 KB at any blank line, never inside a
// fenced block); each section
// is rendered (markdown-it + DOMPurify) into its own element, a few at a time in 8 ms
// tasks, and only sections whose text changed are rendered again — a keystroke in a 1 MiB
// page re-renders one section. (Reference-style links and footnotes resolve within their
// section only; the page view renders the whole page at once.)
import { useEffect, useRef } from "preact/hooks";
import { embedsVersion, watchEmbeds } from "../embeds";
import { catalogue } from "../i18n";
import { highlighter, renderMarkdown } from "../markdown/render";
import { titles } from "../session";
import { useStore } from "../store";
import { watchImages, wikiEnv } from "./Markdown";

export const LARGE_PAGE = 100_000;
const MIN_SECTION = 600;
const MAX_SECTION = 32_000;
const SLICE_MS = 8;

// Yields to the event loop without setTimeout's 4 ms clamp (input is handled in between).
const channel = new MessageChannel();
const queued: (() => void)[] = [];
channel.port1.onmessage = () => queued.shift()?.();
function yieldThen(fn: () => void): () => void {
  let live = true;
  queued.push(() => live && fn());
  channel.port2.postMessage(0);
  return () => {
    live = false;
  };
}

function sections(source: string): string[] {
  // One native regex pass over fence markers and headings (a 1 MiB page takes a few ms).
  const out: string[] = [];
  const marks = /^ {0,3}(`{3,}|~{3,})|^#{1,6}[ \t]/gm;
  let start = 0;
  let fence: string | null = null;
  for (let m = marks.exec(source); m; m = marks.exec(source)) {
    const at = m.index;
    // Outside fences, a section past its size limit ends at the next blank line.
    while (!fence && at - start > MAX_SECTION) {
      const blank = source.indexOf("\n\n", start + MAX_SECTION);
      if (blank < 0 || blank >= at) break;
      out.push(source.slice(start, blank + 2));
      start = blank + 2;
    }
    const marker = m[1];
    if (marker) {
      if (!fence) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    } else if (!fence && at - start >= MIN_SECTION && source[at - 1] === "\n" && source[at - 2] === "\n") {
      out.push(source.slice(start, at));
      start = at;
    }
  }
  while (!fence && source.length - start > MAX_SECTION) {
    const blank = source.indexOf("\n\n", start + MAX_SECTION);
    if (blank < 0) break;
    out.push(source.slice(start, blank + 2));
    start = blank + 2;
  }
  if (start < source.length) out.push(source.slice(start));
  return out;
}

export function LargePreview({ source, slug }: { source: string; slug?: string }) {
  const host = useRef<HTMLDivElement>(null);
  const done = useRef<string[]>([]);
  // The section elements (el.children[i] would walk the live collection after each append).
  const nodes = useRef<HTMLElement[]>([]);
  const known = useStore(titles);
  const hl = useStore(highlighter);
  const embeds = useStore(embedsVersion);
  const messages = useStore(catalogue);

  // Link styles, highlighting, an embedded page or the language changed: every section
  // is rendered again.
  useEffect(() => {
    done.current = [];
  }, [known, hl, embeds, messages, slug]);
  useEffect(() => watchImages(host.current!), []);
  useEffect(() => watchEmbeds(host.current!), []);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const parts = sections(source);
    let i = 0;
    let cancel = () => {};
    el.dataset.state = "rendering";
    const step = () => {
      const started = performance.now();
      while (i < parts.length && performance.now() - started < SLICE_MS) {
        const text = parts[i]!;
        let div = nodes.current[i];
        if (!div) {
          div = document.createElement("div");
          div.className = "preview-section";
          el.appendChild(div);
          nodes.current.push(div);
        }
        if (done.current[i] !== text) {
          div.innerHTML = renderMarkdown(text, wikiEnv(slug)).html;
          done.current[i] = text;
        }
        i++;
      }
      if (i < parts.length) {
        cancel = yieldThen(step);
        return;
      }
      while (nodes.current.length > parts.length) nodes.current.pop()!.remove();
      done.current.length = parts.length;
      el.dataset.state = "done";
    };
    step();
    return () => cancel();
  }, [source, known, hl, embeds, messages, slug]);

  return <div ref={host} class="markdown page-content large-preview" data-testid="large-preview" />;
}
