// The app: routes (router.ts explains the URL scheme), the shell around signed-in screens.
import type { ComponentType } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { CommandPalette } from "./components/CommandPalette";
import { ConfirmHost } from "./components/Dialog";
import { api, ApiError } from "./api";
import { loadYaml } from "./markdown/frontmatter";
import { deriveSlug } from "./markdown/slug";
import { FormError, useAction } from "./components/Form";
import { Header } from "./components/Header";
import { InvitationsForYou } from "./components/InvitationsForYou";
import { OrderStatus, Sidebar, SidebarResizer, sidebarWidth } from "./components/Sidebar";
import { t, useI18n } from "./i18n";
import { failure } from "./errors";
import { appHref, location, navigate, pageHref, pageRoute } from "./router";
import { Login, Register } from "./screens/Auth";
import { PageView } from "./screens/PageView";
import { SearchPage } from "./screens/SearchPage";
import { Trash } from "./screens/Trash";
import { currentWorkspace, openWorkspace, pagesChanged, tree, user } from "./session";
import { useStore } from "./store";

/** An empty workspace offers a first page: a short welcome (in the reader's language)
 *  that explains wikilinks, tags, search and history, made with one click — or a page of
 *  one's own. (The sidebar already says there are no pages; this does not repeat it.) */
function FirstPage() {
  const action = useAction();
  async function createWelcome() {
    await action.run(async () => {
      const body = { title: t("welcome.title"), content: t("welcome.content") };
      // Slugs stay taken in the trash: a welcome page made and deleted before keeps its
      // slug there, so a second one gets a numbered slug rather than an error.
      const page = await api.createPage(body).catch(async (e: unknown) => {
        if (!(e instanceof ApiError && e.code === "page_exists")) throw e;
        const slug = `${deriveSlug(body.title) || "welcome"}-${Date.now().toString(36).slice(-4)}`;
        return api.createPage({ ...body, slug });
      });
      await pagesChanged();
      await navigate(pageHref(page.slug), { replace: true });
    });
  }
  return (
    <div class="empty-state" data-testid="empty-workspace">
      <h1>{t("welcome.heading")}</h1>
      <p>{t("welcome.offer")}</p>
      <div class="actions">
        <button type="button" class="primary" disabled={action.busy} onClick={() => void createWelcome()}>
          {t("welcome.create")}
        </button>
        <a class="button" href={appHref("-/new")}>
          {t("page.create_first")}
        </a>
      </div>
      <FormError error={action.error} />
    </div>
  );
}

function Home() {
  useI18n();
  const nodes = useStore(tree);
  useStore(currentWorkspace);
  useEffect(() => {
    document.title = t("app.name");
    if (nodes && nodes.length) {
      const home = nodes.find((n) => n.slug === "home") ?? nodes[0]!;
      void navigate(pageHref(home.slug), { replace: true });
    }
  }, [nodes]);
  if (nodes === null || nodes.length) return <p class="muted pad">{t("common.loading")}</p>;
  return <FirstPage />;
}

// Screens a first page view does not need, each downloaded when it is first opened (a
// chunk of its own): the graph (with d3-force), the editor, history and the settings.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Screen = ComponentType<any>;
const loadGraph = () => import("./screens/Graph").then((m): Screen => m.default);
// The title a save sends follows the front matter's `title:` (savedTitle): the YAML
// parser is there before the editor opens.
const loadEditor = () => Promise.all([import("./screens/Editor"), loadYaml()]).then(([m]): Screen => m.Editor);
const loadHistory = () => import("./screens/History").then((m): Screen => m.History);
const loadInsights = () => import("./screens/Insights").then((m): Screen => m.Insights);
const loadSettings = () => import("./screens/Settings").then((m): Screen => m.Settings);
const loadWorkspaceSettings = () => import("./screens/WorkspaceSettings").then((m): Screen => m.WorkspaceSettings);
const loadInvitation = () => import("./screens/Invitation").then((m): Screen => m.Invitation);
const loadAuthorize = () => import("./screens/Authorize").then((m): Screen => m.Authorize);

/** A screen from `load`, shown with `props` once its chunk has arrived. */
function Lazy({ load, props = {} }: { load: () => Promise<Screen>; props?: Record<string, unknown> }) {
  useI18n();
  const [Loaded, setLoaded] = useState<Screen | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    load().then(
      (c) => setLoaded(() => c),
      () => setFailed(true),
    );
  }, [load]);
  if (failed) return <FormError error={t("common.offline")} />;
  return Loaded ? <Loaded {...props} /> : <p class="muted pad">{t("common.loading")}</p>;
}

function NotFoundScreen() {
  useI18n();
  return (
    <div class="empty-state">
      <h1>{t("common.not_found")}</h1>
      <p>{t("common.not_found_hint")}</p>
      <a class="button" href={appHref("")}>
        {t("common.back")}
      </a>
    </div>
  );
}

/** The screen for a page's URL: a page of the current workspace, and what follows its slug. */
function pageScreen(ws: string | null, slug: string, rest: string[]) {
  // Keyed by workspace too: the same slug is another page in another workspace.
  const key = `${ws ?? ""}/${slug}`;
  if (rest.length === 0) return <PageView key={key} slug={slug} />;
  if (rest[0] === "edit" && rest.length === 1) return <Lazy key={"edit:" + key} load={loadEditor} props={{ slug }} />;
  if (rest[0] === "history" && rest.length <= 2) return <Lazy key={"h:" + key} load={loadHistory} props={{ slug, sha: rest[1] ?? null }} />;
  return <NotFoundScreen />;
}

/** A page URL of another workspace than the current one: "pending" while it is switched
 *  to, "unknown" when the user is not a member of it (the not-found page, as the API
 *  answers 404), or the error of asking. */
type Switching = { ws: string; state: "pending" | "unknown" } | { ws: string; state: "failed"; error: unknown };

/** Switches to the workspace a page URL names, and puts old workspace-less page URLs in
 *  the full form (/app/<slug> → /app/@<workspace>/<slug>) so that what the address bar
 *  shows can be shared. Acts when the URL changes only: the workspace menu switches while
 *  the old URL is still shown, and must not be switched back by it. */
function useUrlWorkspace(): Switching | null {
  const loc = useStore(location);
  const current = useStore(currentWorkspace);
  const [switching, setSwitching] = useState<Switching | null>(null);
  const route = pageRoute(loc.segments);
  useEffect(() => {
    if (!route) return;
    const { ws, slug, rest } = route;
    const now = currentWorkspace.get();
    if (!ws && slug && now) {
      const full = pageHref(slug, rest.map(encodeURIComponent).join("/"), now);
      void navigate(full + window.location.search + window.location.hash, { replace: true, force: true });
      return;
    }
    if (!ws || ws === now) return;
    let live = true;
    setSwitching({ ws, state: "pending" });
    openWorkspace(ws).then(
      (member) => live && setSwitching(member ? null : { ws, state: "unknown" }),
      (error: unknown) => live && setSwitching({ ws, state: "failed", error }),
    );
    return () => {
      live = false;
    };
  }, [loc]);
  if (!route?.ws || route.ws === current) return null;
  return switching?.ws === route.ws ? switching : { ws: route.ws, state: "pending" };
}

function Screen() {
  const loc = useStore(location);
  const current = useStore(currentWorkspace);
  const switching = useUrlWorkspace();
  const [seg0, ...rest] = loc.segments;
  if (switching?.state === "unknown") return <NotFoundScreen />;
  if (switching?.state === "failed") return <FormError error={failure(switching.error)} />;
  if (switching) return <p class="muted pad">{t("common.loading")}</p>;
  if (!seg0) return <Home />;
  // Signed in on the sign-in or register screen: App is about to leave it (?next=); it is
  // no page (asking for one named "login" was a 404 after every sign-in).
  if (seg0 === "login" || seg0 === "register") return null;
  if (seg0 === "-") {
    const [what, ...more] = rest;
    if (what === "new" && more.length === 0) return <Lazy key={"new:" + loc.query.toString()} load={loadEditor} props={{ slug: null }} />;
    if (what === "search" && more.length === 0) return <SearchPage />;
    if (what === "trash" && more.length === 0) return <Trash />;
    if (what === "settings" && more.length === 0) return <Lazy key="settings" load={loadSettings} />;
    if (what === "workspace" && more.length === 0) return <Lazy key="workspace" load={loadWorkspaceSettings} />;
    if (what === "insights" && more.length === 0) return <Lazy key="insights" load={loadInsights} />;
    if (what === "graph" && more.length === 0) return <Lazy key="graph" load={loadGraph} />;
    if (what === "authorize" && more.length === 0) return <Lazy key="authorize" load={loadAuthorize} />;
  }
  const route = pageRoute(loc.segments);
  if (!route) return <NotFoundScreen />;
  // /app/@<workspace>: that workspace's home.
  if (route.slug === null) return <Home />;
  return pageScreen(route.ws ?? current, route.slug, route.rest);
}

const NARROW = window.matchMedia("(max-width: 900px)");

/** Whether the window is narrow (the sidebar is then a drawer over the content). */
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(NARROW.matches);
  useEffect(() => {
    const on = () => setNarrow(NARROW.matches);
    NARROW.addEventListener("change", on);
    return () => NARROW.removeEventListener("change", on);
  }, []);
  return narrow;
}

function Shell() {
  useI18n();
  // Wide: the sidebar is a column, shown unless hidden. Narrow: a drawer, closed unless opened.
  const [hidden, setHidden] = useState(false);
  const [drawer, setDrawer] = useState(false);
  const narrow = useNarrow();
  const ws = useStore(currentWorkspace);
  const loc = useStore(location);
  // Close the drawer when the page or the window's width changes — only on a change: an
  // effect's first run comes after the first paint, and closing then would undo a tap
  // on the drawer button made in between.
  const where = `${loc.path}?${loc.query.toString()}|${narrow}`;
  const shown = useRef(where);
  useEffect(() => {
    if (shown.current === where) return;
    shown.current = where;
    setDrawer(false);
  }, [where]);
  // A layout effect, so Escape closes the drawer from the paint that shows it on.
  useLayoutEffect(() => {
    if (!drawer) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setDrawer(false);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [drawer]);
  const open = narrow ? drawer : !hidden;
  const width = useStore(sidebarWidth);
  return (
    <div
      class={"shell" + (hidden ? " sidebar-hidden" : "") + (drawer ? " drawer-open" : "")}
      style={{ "--sidebar": `${width}px` }}
    >
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById("main")?.focus();
        }}
      >
        {t("nav.skip_to_content")}
      </a>
      <Header onToggleSidebar={() => (narrow ? setDrawer(!drawer) : setHidden(!hidden))} sidebarOpen={open} />
      <Sidebar key={ws ?? ""} />
      <OrderStatus />
      {!narrow && !hidden && <SidebarResizer />}
      {drawer && <div class="drawer-backdrop" onClick={() => setDrawer(false)} />}
      <main class="main" id="main" tabIndex={-1}>
        <InvitationsForYou />
        <Screen />
      </main>
      <CommandPalette />
    </div>
  );
}

/** Where to go after signing in: ?next= when it is an app URL other than the auth screens. */
function nextUrl(next: string | null): string {
  return next && /^\/app\/(?!login|register)/.test(next) ? next : appHref("");
}

export function App() {
  useI18n();
  const loc = useStore(location);
  const u = useStore(user);
  const seg0 = loc.segments[0];
  const authScreen = seg0 === "login" || seg0 === "register";
  // An invitation link opens for anyone: it offers to register or sign in.
  const invitation = seg0 === "-" && loc.segments[1] === "invitation" && loc.segments.length === 2;

  useEffect(() => {
    if (!u && !authScreen && !invitation) {
      // Unauthenticated: sign in first, then come back here.
      const here = window.location.pathname + window.location.search + window.location.hash;
      void navigate(appHref("login", { next: here === "/app/" ? undefined : here }), { replace: true, force: true });
    } else if (u && authScreen) {
      void navigate(nextUrl(loc.query.get("next")), { replace: true, force: true });
    }
  }, [u, authScreen, invitation]);

  return (
    <>
      {invitation ? (
        <Lazy load={loadInvitation} />
      ) : authScreen && !u ? (
        seg0 === "login" ? (
          <Login />
        ) : (
          <Register />
        )
      ) : u ? (
        <Shell />
      ) : null}
      <ConfirmHost />
    </>
  );
}
