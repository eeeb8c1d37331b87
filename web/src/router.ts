// Client-side routing under /app/. The server answers index.html for every unknown
// /app/... path, so any URL the app shows can be reloaded or shared.
//
// URL scheme (docs/web.md): /app/<slug> is a page; /app/<slug>/edit, /history,
// /history/<sha> act on it; app screens live under /app/-/..., a prefix no slug can
// take (slugs never start with "-"); /app/login and /app/register are fixed by the
// server's redirects, so pages with those two slugs are linked as /app/-/page/<slug>.
import { store } from "./store";

export const BASE = "/app/";
const RESERVED = new Set(["login", "register"]);

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
  void navigate(to.pathname + to.search + to.hash);
});

// Links --------------------------------------------------------------------------------

export function pageHref(slug: string, sub = ""): string {
  const s = encodeURIComponent(slug);
  const head = RESERVED.has(slug) ? `${BASE}-/page/${s}` : `${BASE}${s}`;
  return sub ? `${head}/${sub}` : head;
}

export function appHref(path: string, query?: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) params.set(k, v);
  const qs = params.toString();
  return BASE + path + (qs ? `?${qs}` : "");
}
