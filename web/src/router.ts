// Client-side routing under /app/. The server answers index.html for every unknown
// /app/... path, so any URL the app shows can be reloaded or shared.
//
// URL scheme (docs/web.md): /app/@<workspace>/<slug> is a page of that workspace;
// /app/@<workspace>/<slug>/edit, /history, /history/<sha> act on it. "@" can start
// neither a page slug nor a workspace slug, so the form never shadows a page. The app
// shows only that form; the older workspace-less /app/<slug> (and /app/-/page/<slug>,
// for the slugs login and register) still open the page in the current workspace. App
// screens live under /app/-/..., a prefix no slug can take (slugs never start with "-");
// /app/login and /app/register are fixed by the server's redirects.
import { deriveSlug } from "./markdown/slug";
import { store } from "./store";

export const BASE = "/app/";
const RESERVED = new Set(["login", "register"]);
const WORKSPACE_MARK = "@";

export interface Location {
  path: string; // without BASE, no leading slash, decoded segments joined by "/"
  segments: string[];
  query: URLSearchParams;
  hash: string;
}

function read(): Location {
  const raw = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : "";
  const segments = raw
    .split("/")
    .filter((s) => s !== "")
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  return {
    path: segments.join("/"),
    segments,
    query: new URLSearchParams(window.location.search),
    hash: window.location.hash,
  };
}

export const location = store<Location>(read());

/** Asked before leaving the current screen; resolves false to stay. */
type Guard = () => Promise<boolean>;
let guard: Guard | null = null;
export function setNavigationGuard(fn: Guard | null): void {
  guard = fn;
}

/** Asks the guard (unsaved changes) whether the current screen may be left. */
export async function mayLeave(): Promise<boolean> {
  return !guard || (await guard());
}

function currentUrl(): string {
  return window.location.pathname + window.location.search;
}

/** Goes to an app URL (absolute, e.g. "/app/foo?x=1"). */
export async function navigate(to: string, opts: { replace?: boolean; force?: boolean } = {}): Promise<boolean> {
  const target = new URL(to, window.location.href);
  const same = target.pathname + target.search === currentUrl();
  if (!same && guard && !opts.force && !(await guard())) return false;
  if (opts.replace) history.replaceState(null, "", target.pathname + target.search + target.hash);
  else if (!same || target.hash !== window.location.hash)
    history.pushState(null, "", target.pathname + target.search + target.hash);
  location.set(read());
  if (!target.hash && !same) window.scrollTo(0, 0);
  return true;
}

let shown = currentUrl();
location.subscribe(() => {
  shown = currentUrl();
});

/** Puts `to` in the address bar (replacing the entry) without changing screens: for an
 *  editor whose page was renamed while it was open. Screens are keyed by the slug of
 *  their URL, so routing to the new address would start a new editor and drop the
 *  person's unsaved text; the address still has to be the page's, for a reload, a copy
 *  or the back button. The next navigation routes from the real URL again. */
export function replaceUrl(to: string): void {
  const target = new URL(to, window.location.href);
  history.replaceState(null, "", target.pathname + target.search + target.hash);
  shown = currentUrl();
}

window.addEventListener("popstate", () => {
  const next = currentUrl();
  if (next === shown) {
    location.set(read()); // only the hash moved
    return;
  }
  if (!guard) {
    location.set(read());
    return;
  }
  // Put the screen's URL back while asking, then go if the user agrees.
  const wanted = next + window.location.hash;
  history.pushState(null, "", shown);
  void guard().then((ok) => {
    if (ok) void navigate(wanted, { force: true });
  });
});

/** In-app links: a plain click on <a href="/app/..."> routes without reloading. */
document.addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest?.("a");
  if (!a || a.target || a.hasAttribute("download")) return;
  const href = a.getAttribute("href");
  if (!href || href.startsWith("#")) return;
  const to = new URL(href, window.location.href);
  if (to.origin !== window.location.origin || !to.pathname.startsWith(BASE)) return;
  e.preventDefault();
  const slug = a.classList.contains("wikilink") ? a.getAttribute("data-slug") : null;
  followedWikilink = slug ? { slug, text: a.textContent ?? "" } : null;
  void navigate(to.pathname + to.search + to.hash);
});

/** The wikilink last followed by a click: its slug and the text it showed. */
let followedWikilink: { slug: string; text: string } | null = null;

/** The text a wikilink to `slug` was written with, when the last link followed was one and
 *  showed its target as written (`[[Capacity Plan]]`, not a `|label`): a link rendered
 *  before the app knew its page was missing carries no `?title=`, and the "create this
 *  page" screen should still offer the link's exact words as the title, not the slug. */
export function wikilinkText(slug: string): string | null {
  if (followedWikilink?.slug !== slug) return null;
  const text = followedWikilink.text.split(" › ")[0]!.trim();
  return text && deriveSlug(text) === slug ? text : null;
}

// Links --------------------------------------------------------------------------------

/** The workspace page links name by default: the app's current one (session.ts keeps it). */
let linkWorkspace: string | null = null;
export function setLinkWorkspace(ws: string | null): void {
  linkWorkspace = ws;
}

/** What a page URL names: its workspace (null: the current one, an old workspace-less
 *  link), the page (null: the workspace's home, /app/@<workspace>) and what follows
 *  (["edit"], ["history"], ["history", sha]). */
export interface PageRoute {
  ws: string | null;
  slug: string | null;
  rest: string[];
}

/** The page route of a URL's (decoded) segments, or null when they name no page. */
export function pageRoute(segments: string[]): PageRoute | null {
  const [seg0, ...rest] = segments;
  if (!seg0) return null;
  if (seg0.startsWith(WORKSPACE_MARK)) {
    const ws = seg0.slice(WORKSPACE_MARK.length);
    if (!ws) return null;
    const [slug, ...more] = rest;
    return { ws, slug: slug ?? null, rest: more };
  }
  if (seg0 === "-") return rest[0] === "page" && rest[1] ? { ws: null, slug: rest[1], rest: rest.slice(2) } : null;
  if (RESERVED.has(seg0)) return null;
  return { ws: null, slug: seg0, rest };
}

/** The one way the app builds a link to a page: /app/@<workspace>/<slug>[/<sub>], in the
 *  current workspace unless `ws` says otherwise. `sub` is "edit", "history" or
 *  "history/<sha>" (already URL-safe). Without any workspace (a user in none) the old
 *  workspace-less form is the only one that can be built. */
export function pageHref(slug: string, sub = "", ws: string | null = linkWorkspace): string {
  const s = encodeURIComponent(slug);
  const head = ws
    ? `${BASE}${WORKSPACE_MARK}${encodeURIComponent(ws)}/${s}`
    : RESERVED.has(slug)
      ? `${BASE}-/page/${s}`
      : `${BASE}${s}`;
  return sub ? `${head}/${sub}` : head;
}

export function appHref(path: string, query?: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) params.set(k, v);
  const qs = params.toString();
  return BASE + path + (qs ? `?${qs}` : "");
}
