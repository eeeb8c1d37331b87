// Page data fetched before it is needed: hovering or focusing a link to a page (the tree,
// wikilinks, lists, search results) starts GET /api/pages/{slug}/view, and the page view
// uses that answer when the link is followed, so a click shows the page at once.
//
// Answers are kept for a short while and dropped whenever pages change (pagesVersion), so
// a prefetched page is never older than what the screen would fetch itself.
import { api, type PageViewData } from "./api";
import { BASE, pageRoute } from "./router";
import { currentWorkspace, pagesVersion, user } from "./session";

interface Entry {
  at: number;
  promise: Promise<PageViewData>;
  data?: PageViewData;
}

const FRESH_MS = 15_000;
/** By workspace and slug: the same slug is another page in another workspace. The
 *  workspace "" is the user's default, before the app knows which one that is (the
 *  first page of an old workspace-less link, fetched while the session loads). */
const cache = new Map<string, Entry>();
pagesVersion.subscribe(() => cache.clear());

const key = (ws: string | null, slug: string) => `${ws ?? ""}/${slug}`;

function fresh(slug: string, ws: string | null): Entry | undefined {
  const k = cache.has(key(ws, slug)) || !ws || ws !== user.get()?.default_workspace ? key(ws, slug) : key(null, slug);
  const e = cache.get(k);
  if (e && performance.now() - e.at < FRESH_MS) return e;
  if (e) cache.delete(k);
  return undefined;
}

/** Starts fetching a page's view (once; repeated calls are free), in the current
 *  workspace unless `ws` names one. */
export function prefetchView(slug: string, ws: string | null = currentWorkspace.get()): void {
  if (fresh(slug, ws)) return;
  const entry: Entry = { at: performance.now(), promise: api.view(slug, ws) };
  entry.promise.then(
    (d) => (entry.data = d),
    () => cache.delete(key(ws, slug)),
  );
  cache.set(key(ws, slug), entry);
}

/** The prefetched answer for `slug` if it has arrived (for a first render without a wait). */
export function peekView(slug: string, ws: string | null): PageViewData | undefined {
  return fresh(slug, ws)?.data;
}

/** The view of `slug` in workspace `ws`: the prefetched request when there is one, else a new one. */
export function loadView(slug: string, ws: string | null): Promise<PageViewData> {
  const e = fresh(slug, ws);
  if (e) return e.promise;
  return api.view(slug, ws);
}

/** The page a link shows (page views only, not /edit or /history): its workspace (null:
 *  the current one) and slug. */
export function pageOfHref(href: string): { ws: string | null; slug: string } | null {
  let url: URL;
  try {
    url = new URL(href, window.location.href);
  } catch {
    return null;
  }
  if (url.origin !== window.location.origin || !url.pathname.startsWith(BASE) || url.search) return null;
  let segments: string[];
  try {
    segments = url.pathname.slice(BASE.length).split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return null;
  }
  const route = pageRoute(segments);
  return route?.slug && route.rest.length === 0 ? { ws: route.ws, slug: route.slug } : null;
}

// Hover (after a short pause, so sweeping the pointer over the tree fetches nothing) or
// keyboard focus on any link to a page.
const HOVER_MS = 60;
let hoverTimer = 0;
/** The slug of a link to a page of the current workspace (links to another workspace
 *  are not prefetched: following one switches workspaces first). */
function linkSlug(target: EventTarget | null): string | null {
  const a = (target as Element | null)?.closest?.("a[href]");
  const page = a ? pageOfHref(a.getAttribute("href")!) : null;
  return page && (page.ws === null || page.ws === currentWorkspace.get()) ? page.slug : null;
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
