// Page data fetched before it is needed: hovering or focusing a link to a page (the tree,
// wikilinks, lists, search results) starts GET /api/pages/{slug}/view, and the page view
// uses that answer when the link is followed, so a click shows the page at once.
//
// Answers are kept for a short while and dropped whenever pages change (pagesVersion), so
// a prefetched page is never older than what the screen would fetch itself.
import { api, type PageViewData } from "./api";
import { BASE } from "./router";
import { pagesVersion } from "./session";

interface Entry {
  at: number;
  promise: Promise<PageViewData>;
  data?: PageViewData;
}

const FRESH_MS = 15_000;
const cache = new Map<string, Entry>();
pagesVersion.subscribe(() => cache.clear());

function fresh(slug: string): Entry | undefined {
  const e = cache.get(slug);
  if (e && performance.now() - e.at < FRESH_MS) return e;
  if (e) cache.delete(slug);
  return undefined;
}

/** Starts fetching a page's view (once; repeated calls are free). */
export function prefetchView(slug: string): void {
  if (fresh(slug)) return;
  const entry: Entry = { at: performance.now(), promise: api.view(slug) };
  entry.promise.then(
    (d) => (entry.data = d),
    () => cache.delete(slug),
  );
  cache.set(slug, entry);
}

/** The prefetched answer for `slug` if it has arrived (for a first render without a wait). */
export function peekView(slug: string): PageViewData | undefined {
  return fresh(slug)?.data;
}

/** The view of `slug`: the prefetched request when there is one, else a new one. */
export function loadView(slug: string): Promise<PageViewData> {
  const e = fresh(slug);
  if (e) return e.promise;
  return api.view(slug);
}

/** The slug of the page a link shows (page views only, not /edit or /history). */
export function slugOfHref(href: string): string | null {
  let url: URL;
  try {
    url = new URL(href, window.location.href);
  } catch {
    return null;
  }
  if (url.origin !== window.location.origin || !url.pathname.startsWith(BASE) || url.search) return null;
  const seg = url.pathname.slice(BASE.length).split("/").filter(Boolean);
  let slug: string | undefined;
  if (seg.length === 1 && seg[0] !== "-" && seg[0] !== "login" && seg[0] !== "register") slug = seg[0];
  else if (seg.length === 3 && seg[0] === "-" && seg[1] === "page") slug = seg[2];
  if (!slug) return null;
  try {
    return decodeURIComponent(slug);
  } catch {
    return null;
  }
}

// Hover (after a short pause, so sweeping the pointer over the tree fetches nothing) or
// keyboard focus on any link to a page.
const HOVER_MS = 60;
let hoverTimer = 0;
function linkSlug(target: EventTarget | null): string | null {
  const a = (target as Element | null)?.closest?.("a[href]");
  return a ? slugOfHref(a.getAttribute("href")!) : null;
}
document.addEventListener("pointerover", (e) => {
  const slug = linkSlug(e.target);
  window.clearTimeout(hoverTimer);
  if (slug) hoverTimer = window.setTimeout(() => prefetchView(slug), HOVER_MS);
});
document.addEventListener("focusin", (e) => {
  const slug = linkSlug(e.target);
  if (slug) prefetchView(slug);
});
// A press starts the fetch at once (the click follows ~100 ms later).
document.addEventListener("pointerdown", (e) => {
  const slug = linkSlug(e.target);
  if (slug) prefetchView(slug);
});
