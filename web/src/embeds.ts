// The pages that rendered markdown embeds (`![[Note]]`, `![[Note#Heading]]`,
// `![[Note#^block-id]]`): fetched with GET /api/embeds?ws=<the current workspace>&slugs=…,
// so an embed only ever shows a page of the workspace on screen, and only one the reader
// may see (a slug the server lists as missing shows the "not found" placeholder).
// Rendering asks synchronously (`lookupEmbed`); a page not fetched yet is "loading", and
// `embedsVersion` changes when an answer arrives, so the markdown is rendered again with it.
//
// Nothing is fetched while rendering: the renderer marks each embed it shows with
// `data-embed-load`, and `watchEmbeds` asks for a page only once its embed comes near the
// viewport. Every page asked for within one task goes into one request (at most
// BATCH slugs each), so a page of many embeds costs a reader a few requests, not one each
// (render.ts also shows at most EMBED_CAP embeds on a page).
//
// Answers are kept by workspace and slug, dropped whenever pages change (pagesVersion),
// and fetched again (when seen again) once older than FRESH_MS; the old text shows until
// the new one arrives.
import { api, ApiError } from "./api";
import type { Embedded } from "./markdown/wikilinks";
import { currentWorkspace, pageExists, pagesVersion } from "./session";
import { store } from "./store";

interface Entry {
  at: number;
  value: Embedded;
  pending: boolean;
}

const FRESH_MS = 30_000;
/** The most slugs one GET /api/embeds takes (the server answers 400 beyond). */
export const BATCH = 50;
/** How far outside the viewport an embed starts loading (px): it is there when scrolled to. */
const AHEAD = "600px";

const cache = new Map<string, Entry>();
pagesVersion.subscribe(() => cache.clear());

/** Changes whenever fetched pages arrive (renders of markdown depend on it). */
export const embedsVersion = store(0);

const key = (ws: string, slug: string) => `${ws}/${slug}`;

/** Slugs wanted in this task, by workspace; sent together when the task is over. */
const queue = new Map<string, Set<string>>();
let flushing = false;

function settle(ws: string, slug: string, value: Embedded): void {
  const entry = cache.get(key(ws, slug));
  if (!entry) return; // dropped meanwhile (pages changed): the answer may be old
  entry.value = value;
  entry.pending = false;
  entry.at = performance.now();
}

async function fetchBatch(ws: string, slugs: string[]): Promise<void> {
  try {
    const got = await api.embeds(ws, slugs);
    const seen = new Set<string>();
    for (const item of got.items) {
      if (!slugs.includes(item.slug)) continue; // only what was asked for
      seen.add(item.slug);
      settle(ws, item.slug, { state: "page", title: item.title, content: item.content });
    }
    // Listed as missing, or (never expected) not answered at all.
    for (const slug of slugs) if (!seen.has(slug)) settle(ws, slug, { state: "missing" });
  } catch (e) {
    const value: Embedded = e instanceof ApiError && (e.status === 404 || e.status === 403) ? { state: "missing" } : { state: "failed" };
    for (const slug of slugs) settle(ws, slug, value);
  }
  embedsVersion.set(embedsVersion.get() + 1);
}

function flush(): void {
  flushing = false;
  for (const [ws, slugs] of queue) {
    const all = [...slugs];
    for (let i = 0; i < all.length; i += BATCH) void fetchBatch(ws, all.slice(i, i + BATCH));
  }
  queue.clear();
}

/** Asks for the page `slug` of the current workspace unless it is known and fresh, or on
 *  its way: batched with every other slug wanted in the same task. */
export function wantEmbed(slug: string): void {
  const ws = currentWorkspace.get();
  if (!ws || !slug) return;
  const k = key(ws, slug);
  let entry = cache.get(k);
  if (entry && (entry.pending || performance.now() - entry.at <= FRESH_MS)) return;
  if (!entry) {
    // The page tree says it does not exist: no request (the answer would say the same).
    if (pageExists(slug) === false) return;
    entry = { at: performance.now(), value: { state: "loading" }, pending: false };
    cache.set(k, entry);
  }
  entry.pending = true;
  let slugs = queue.get(ws);
  if (!slugs) queue.set(ws, (slugs = new Set()));
  slugs.add(slug);
  if (!flushing) {
    flushing = true;
    // After the task: an observer's callback (or several in one frame) asks for all it sees.
    setTimeout(flush, 0);
  }
}

/** What the page `slug` of the current workspace is for an embed, right now (no request:
 *  see `watchEmbeds`). */
export function lookupEmbed(slug: string): Embedded {
  const ws = currentWorkspace.get();
  if (!ws) return { state: "failed" };
  const hit = cache.get(key(ws, slug));
  if (hit) return hit.value;
  if (pageExists(slug) === false) return { state: "missing" };
  return { state: "loading" };
}

/** Loads the embeds inside `host` as they come near the viewport, including those that
 *  later renders put there (its markup is replaced on each). Returns the cleanup. */
export function watchEmbeds(host: HTMLElement): () => void {
  const seen = new WeakSet<Element>();
  const io =
    typeof IntersectionObserver === "function"
      ? new IntersectionObserver(
          (entries) => {
            for (const en of entries) {
              if (!en.isIntersecting) continue;
              io!.unobserve(en.target);
              wantEmbed((en.target as HTMLElement).dataset.embedLoad ?? "");
            }
          },
          { rootMargin: `${AHEAD} 0px` },
        )
      : null;
  const scan = () => {
    for (const el of host.querySelectorAll<HTMLElement>("[data-embed-load]")) {
      if (seen.has(el)) continue;
      seen.add(el);
      if (io) io.observe(el);
      else wantEmbed(el.dataset.embedLoad ?? ""); // no observer (old browsers, tests): now
    }
  };
  scan();
  const mo = new MutationObserver(scan);
  mo.observe(host, { childList: true, subtree: true });
  return () => {
    mo.disconnect();
    io?.disconnect();
  };
}
