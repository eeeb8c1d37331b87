// Who is signed in, their workspaces, the current one and its page tree.
import { api, ApiError, setApiWorkspace, setUnauthorizedHandler, type TreeNode, type User, type Workspace } from "./api";
import { loadSystem } from "./limits";
import { deriveSlug } from "./markdown/slug";
import { loadMessages, storedLanguage } from "./i18n";
import { appHref, location, navigate, pageRoute, setLinkWorkspace } from "./router";
import { store } from "./store";

export const user = store<User | null>(null);
export const workspaces = store<Workspace[]>([]);
export const currentWorkspace = store<string | null>(null);
// Page links name the current workspace (router.ts builds them).
currentWorkspace.subscribe(setLinkWorkspace);

/** The page tree of the current workspace (GET /api/pages), and every page by slug. */
export const tree = store<TreeNode[] | null>(null);
export const titles = store<Map<string, string>>(new Map());
/** Bumped after any change to pages, so screens showing them reload. */
export const pagesVersion = store(0);

function index(nodes: TreeNode[], into: Map<string, string>): void {
  for (const n of nodes) {
    into.set(n.slug, n.title);
    index(n.children ?? [], into);
  }
}

let treeLoading: Promise<void> | null = null;

// The first tree load waits for the first page view when the app opens on a page: in a
// big wiki the tree is hundreds of KB of JSON, and fetched, parsed and rendered beside
// the page it slowed the page's first view (p95 586 ms at 10,000 pages). It waits at most
// a second; any other first screen loads the tree at once.
let treeGate: Promise<void> | null = null;
let releaseTreeGate: () => void = () => undefined;

/** main.tsx: the app opens on a page view; hold the tree back until it is shown. */
export function holdTreeForFirstPage(): void {
  treeGate = new Promise<void>((resolve) => {
    releaseTreeGate = resolve;
    window.setTimeout(resolve, 1000);
  });
}

/** The page view: its content is on screen. */
export function firstPageShown(): void {
  releaseTreeGate();
}
export function reloadTree(): Promise<void> {
  const ws = currentWorkspace.get();
  const p = api.tree().then(
    (nodes) => {
      if (ws !== currentWorkspace.get()) return;
      const m = new Map<string, string>();
      index(nodes, m);
      titles.set(m);
      tree.set(nodes);
    },
    () => undefined,
  );
  treeLoading = p;
  return p;
}

export function treeReady(): Promise<void> {
  return treeLoading ?? reloadTree();
}

/** After creating, saving, moving, renaming, trashing or restoring a page. */
export function pagesChanged(): Promise<void> {
  pagesVersion.set(pagesVersion.get() + 1);
  return reloadTree();
}

export function pageExists(slug: string): boolean | undefined {
  if (tree.get() === null) return undefined;
  return titles.get().has(slug);
}

async function loadWorkspaces(u: User): Promise<void> {
  const list = (await api.workspaces()).items;
  workspaces.set(list);
  // The app opens on a page URL of one of the user's workspaces: start in that one (and
  // make it the default, as a switch would) rather than switch once the default is shown.
  const named = pageRoute(location.get().segments)?.ws;
  const opened = named && list.some((w) => w.slug === named) ? named : null;
  if (opened && opened !== u.default_workspace) rememberWorkspace(opened);
  const current = opened ?? list.find((w) => w.slug === u.default_workspace)?.slug ?? list[0]?.slug ?? null;
  setApiWorkspace(current);
  currentWorkspace.set(current);
  tree.set(null);
  titles.set(new Map());
  // Not awaited: a page shows without waiting for the whole tree (large in a big wiki).
  const gate = treeGate;
  treeGate = null;
  if (gate) treeLoading = gate.then(() => reloadTree());
  else void reloadTree();
}

/** At start-up: the session (if any), the messages, the workspaces. */
export async function boot(): Promise<void> {
  setUnauthorizedHandler(() => {
    if (user.get()) void signedOut(true);
  });
  let u: User | null = null;
  try {
    u = await api.me();
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401) throw e;
  }
  if (u) await Promise.all([loadMessages(undefined), signedIn(u)]);
  else await loadMessages(storedLanguage());
}

export async function signedIn(u: User): Promise<void> {
  loadSystem();
  await loadWorkspaces(u);
  user.set(u);
}

/** The session ended (signed out here, or expired): back to the sign-in screen. */
async function signedOut(expired = false): Promise<void> {
  user.set(null);
  workspaces.set([]);
  currentWorkspace.set(null);
  setApiWorkspace(null);
  tree.set(null);
  treeLoading = null;
  const loc = location.get();
  const next = expired && loc.path !== "login" ? window.location.pathname + window.location.search : undefined;
  await navigate(appHref("login", { next }), { replace: true, force: true });
  await loadMessages(storedLanguage());
}

export async function signOut(): Promise<void> {
  try {
    await api.logout();
  } catch {
    /* already gone */
  }
  await signedOut();
}

/** Makes `slug` the current (and default) workspace, then shows its home. */
export async function switchWorkspace(slug: string): Promise<void> {
  const res = await api.switchWorkspace(slug);
  const u = user.get();
  if (u) user.set({ ...u, default_workspace: res.default_workspace });
  setApiWorkspace(slug);
  tree.set(null);
  titles.set(new Map());
  treeLoading = null;
  currentWorkspace.set(slug);
  await navigate(appHref(""), { force: true });
  await reloadTree();
  pagesVersion.set(pagesVersion.get() + 1);
}

/** A page URL names workspace `slug` (a shared link, the back button): make it the
 *  current one, as the workspace menu would, but stay on that URL. Resolves false when
 *  the user is not a member (the list is asked again first: they may have been added
 *  since the app loaded). */
export async function openWorkspace(slug: string): Promise<boolean> {
  if (currentWorkspace.get() === slug) return true;
  if (!workspaces.get().some((w) => w.slug === slug)) workspaces.set((await api.workspaces()).items);
  if (!workspaces.get().some((w) => w.slug === slug)) return false;
  setApiWorkspace(slug);
  tree.set(null);
  titles.set(new Map());
  treeLoading = null;
  currentWorkspace.set(slug);
  void reloadTree();
  rememberWorkspace(slug);
  return true;
}

/** Makes `slug` the user's default workspace in the background, like a switch from the
 *  workspace menu: /app/ (here, after a reload, on another device) opens it from now on. */
function rememberWorkspace(slug: string): void {
  api.switchWorkspace(slug).then(
    (res) => {
      const u = user.get();
      if (u) user.set({ ...u, default_workspace: res.default_workspace });
    },
    () => undefined,
  );
}

/** Creates a workspace. Its slug is derived from the name by the server; workspace slugs
 *  are unique in the whole instance (most of which the user cannot see), so a taken one is
 *  retried with a short random suffix rather than shown as an error. */
export async function createWorkspace(name: string): Promise<Workspace> {
  let ws: Workspace;
  try {
    ws = await api.createWorkspace(name);
  } catch (e) {
    const base = deriveSlug(name).slice(0, 120);
    if (!(e instanceof ApiError && e.code === "workspace_slug_taken") || !base) throw e;
    ws = await api.createWorkspace(name, `${base}-${Math.random().toString(36).slice(2, 7)}`);
  }
  workspaces.set([...workspaces.get(), ws]);
  return ws;
}

/** Tags used in the workspace, for "#" completion in the editor. */
export const knownTags = store<string[]>([]);
/** The workspace and pages version the tags were read at: every page is read for them
 *  (500 a request), so an editor opened again with nothing changed reads none again. */
let tagsRead: { key: string; done: Promise<void> } | null = null;
export function loadTags(): Promise<void> {
  const key = `${currentWorkspace.get()}|${pagesVersion.get()}`;
  if (tagsRead?.key === key) return tagsRead.done;
  const done = (async () => {
    try {
      const notes = await api.allNotes();
      const all = new Set<string>();
      for (const n of notes.items) for (const tag of n.tags ?? []) all.add(tag);
      knownTags.set([...all].sort());
    } catch {
      tagsRead = null; // completion without tags; asked again next time
    }
  })();
  tagsRead = { key, done };
  return done;
}
