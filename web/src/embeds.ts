// The pages that rendered markdown embeds (`![[Note]]`, `![[Note#Heading]]`,
// `![[Note#^block-id]]`): fetched with GET /api/pages/{slug}?ws=<the current workspace>,
// so an embed only ever shows a page of the workspace on screen, and only one the reader
// may see (any other answer shows the "not found" placeholder). Rendering asks
// synchronously (`lookupEmbed`); a page not fetched yet is "loading", and `embedsVersion`
// changes when an answer arrives, so the markdown is rendered again with it.
//
// Answers are kept by workspace and slug, dropped whenever pages change (pagesVersion),
// and fetched again in the background once older than FRESH_MS (the old text shows
// until the new one arrives).
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
const cache = new Map<string, Entry>();
pagesVersion.subscribe(() => cache.clear());

/** Changes whenever a fetched page arrives (renders of markdown depend on it). */
export const embedsVersion = store(0);

const key = (ws: string, slug: string) => `${ws}/${slug}`;

function fetchInto(ws: string, slug: string, entry: Entry): void {
  entry.pending = true;
  api.page(slug, ws).then(
    (page) => {
      // Belt and braces: a page of another workspace is never shown.
      entry.value =
        page.workspace && page.workspace !== ws
          ? { state: "missing" }
          : { state: "page", title: page.title, content: page.content };
    },
    (e) => {
      entry.value = e instanceof ApiError && (e.status === 404 || e.status === 403) ? { state: "missing" } : { state: "failed" };
    },
  ).finally(() => {
    entry.pending = false;
    entry.at = performance.now();
    if (cache.get(key(ws, slug)) === entry) embedsVersion.set(embedsVersion.get() + 1);
  });
}

/** What the page `slug` of the current workspace is for an embed, right now. */
export function lookupEmbed(slug: string): Embedded {
  const ws = currentWorkspace.get();
  if (!ws) return { state: "failed" };
  const k = key(ws, slug);
  const hit = cache.get(k);
  if (hit) {
    if (!hit.pending && performance.now() - hit.at > FRESH_MS) fetchInto(ws, slug, hit);
    return hit.value;
  }
  // The page tree says it does not exist: no request (its 404 would say the same).
  if (pageExists(slug) === false) return { state: "missing" };
  const entry: Entry = { at: performance.now(), value: { state: "loading" }, pending: false };
  cache.set(k, entry);
  fetchInto(ws, slug, entry);
  return entry.value;
}
