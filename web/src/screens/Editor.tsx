// The editor: title field, CodeMirror source (loaded on demand) with a formatting toolbar
// beside a live preview that follows its scroll (two tabs, Write and Preview, on narrow
// screens), explicit Save against base_revision, Ctrl/Cmd+S, an unsaved-changes guard,
// conflict resolution, [[ and # completion, image upload (button, paste, drop).
//
// Saves send merge: true: an edit made on a stale base is merged three-way by the server
// and only overlapping changes answer 409 — then the conflict dialog shows the other
// person's text, yours and the merged text (with markers) to resolve (docs/api.md, "Pages").
//
// A page renamed, moved or deleted by someone else while it is edited never strands the
// editor: it looks where the page is now every 10 s, when the window gets the focus back
// and before every save, and says what happened; a renamed or moved page is saved where
// it now is (through the same merge), a deleted one can be restored and saved, or the
// text saved as a new page. A new page's address is shown and can be chosen before its
// first save.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, ApiError, theirsOf, trashedOf, type Page, type TheirSave, type TrashedInfo } from "../api";
import { confirmDialog, Dialog } from "../components/Dialog";
import { LargePreview, LARGE_PAGE } from "../components/LargePreview";
import { MarkdownBody, useRendered } from "../components/Markdown";
import { lastRenderMs } from "../markdown/render";
import { savedTitle, type SavedTitle } from "../markdown/title";
import type { LiveSession, LiveStatus, SourceEditor } from "../editor/codemirror";
import { AddressField, addressBlocks, useNewAddress } from "../editor/AddressField";
import { FormError } from "../components/Form";
import { Presence, type Present } from "../components/Presence";
import { failure, type ErrorText } from "../errors";
import { catalogue, formatDate, t, useI18n } from "../i18n";
import { appHref, location, navigate, pageHref, replaceUrl, setNavigationGuard } from "../router";
import { currentWorkspace, knownTags, loadTags, pageExists, pagesChanged, reloadTree, titles, user } from "../session";
import { NotFound } from "./PageView";
import { useStore } from "../store";
import { theme } from "../theme";

type EditorModule = typeof import("../editor/codemirror");

interface Conflict {
  /** The text of revision `current`. */
  theirs: string;
  /** The person's own text, as they first tried to save it. */
  yours: string;
  /** The server's three-way merge (with conflict markers), editable in the dialog. */
  merged: string;
  /** The revision every choice saves over. */
  current: string;
  /** Who made that revision, and when (the 409's `theirs`; null from a server without it). */
  by: TheirSave | null;
}

/** How often an open editor looks whether its page was renamed, moved or deleted. */
const WHERE_POLL_MS = 10_000;
/** How long the editor waits for the page's co-editing session before it edits without
 *  one (a proxy that does not pass WebSockets; sooner when the connection is refused):
 *  saves then go through the Save button. */
const LIVE_WAIT_MS = 5_000;

/** How an existing page is edited: together with everyone in its session (each change
 *  kept as it is typed), or alone with explicit saves (new pages, and where the session
 *  cannot be reached). */
type Mode = "live" | "alone";

/** A page deleted while it was edited: `trashed` says by whom and when (null: it is not
 *  in the trash either — purged, or the server does not say). */
interface Gone {
  trashed: TrashedInfo | null;
}

/** An href as a person reads it (letters of any script, not %-escapes). */
function readable(href: string): string {
  try {
    return decodeURI(href);
  } catch {
    return href;
  }
}

/** When another save was made, in the reader's language: the time alone for today. */
function whenSaved(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = d.toDateString() === new Date().toDateString();
  return new Intl.DateTimeFormat(catalogue.get().language, today ? { timeStyle: "short" } : { dateStyle: "medium", timeStyle: "short" }).format(d);
}

/** A page read at an old address of it, kept for the editor at its current one (screens
 *  are keyed by slug, so the address change starts a new editor): no second request. */
let handedOver: Page | null = null;

const idle: (fn: () => void) => number =
  typeof window.requestIdleCallback === "function"
    ? (fn) => window.requestIdleCallback(fn, { timeout: 1000 })
    : (fn) => window.setTimeout(fn, 0);
const cancelIdle: (id: number) => void =
  typeof window.cancelIdleCallback === "function" ? (id) => window.cancelIdleCallback(id) : (id) => window.clearTimeout(id);

/** The text the preview shows: `content` (itself read from the source 100 ms after typing
 *  pauses) a little later for pages that take long to render (four times the last render's
 *  cost), and then in an idle callback, so a keystroke never waits for the preview. Large
 *  pages are rendered in pieces (LargePreview). */
function usePreviewSource(content: string): string {
  const [shown, setShown] = useState(content);
  useEffect(() => {
    if (content === shown) return;
    let idleId = 0;
    const timer = window.setTimeout(() => {
      idleId = idle(() => setShown(content));
    }, content.length > LARGE_PAGE ? 0 : Math.max(20, lastRenderMs() * 4 - 100));
    return () => {
      window.clearTimeout(timer);
      if (idleId) cancelIdle(idleId);
    };
  }, [content]);
  return shown;
}

/** The title a save of `content` will give (see savedTitle); `base` is the revision the
 *  edit started from (null for a new page). Recomputed only when an input changes: the
 *  source is read 100 ms after typing pauses, and a heading is found from the block
 *  structure alone. */
function useSavedTitle(content: string, typed: string | null, base: Page | null, slug: string): SavedTitle {
  return useMemo(() => savedTitle(content, typed, base, slug), [content, typed, base, slug]);
}

/** Says where the title shown comes from when it is not the field's own text or the
 *  page's title: a first heading (which renames the page) or the front matter. */
function TitleSource({ shown, id }: { shown: SavedTitle; id: string }) {
  if (shown.source !== "heading" && shown.source !== "front_matter") return null;
  return (
    <span class="editor-title-source muted" id={id} data-testid="title-source">
      {t(shown.source === "heading" ? "editor.title_from_heading" : "editor.title_from_front_matter")}
    </span>
  );
}

/** The 1-based numbers of the lines that are conflict markers (`<<<<<<<`, `|||||||`,
 *  `=======`, `>>>>>>>`, as a three-way merge writes them). A `=======` line left in the
 *  text would make the line above it a heading — and so perhaps the page's title. */
export function markerLines(text: string): number[] {
  const out: number[] = [];
  text.split("\n").forEach((line, i) => {
    if (/^(<{7}|\|{7}|>{7})(\s|$)|^={7}\s*$/.test(line)) out.push(i + 1);
  });
  return out;
}

/** Which side a conflict is resolved with. */
type Resolution = "theirs" | "yours" | "merged";

/** Whether the window is as narrow as a phone (the editor then shows Write and Preview
 *  as two tabs). */
const NARROW = "(max-width: 700px)";
function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW).matches);
  useEffect(() => {
    const query = window.matchMedia(NARROW);
    const changed = () => setNarrow(query.matches);
    query.addEventListener("change", changed);
    changed();
    return () => query.removeEventListener("change", changed);
  }, []);
  return narrow;
}

type Tab = "write" | "preview";

/** The Write / Preview tabs of a narrow screen (WAI-ARIA tabs: arrow keys switch). */
function EditorTabs({ tab, onChange }: { tab: Tab; onChange: (tab: Tab) => void }) {
  const tabs: [Tab, string][] = [
    ["write", t("editor.tab.write")],
    ["preview", t("editor.preview")],
  ];
  return (
    <div class="editor-tabs" role="tablist" aria-label={t("editor.tabs")}>
      {tabs.map(([id, label]) => (
        <button
          key={id}
          type="button"
          role="tab"
          id={`editor-tab-${id}`}
          aria-selected={tab === id}
          aria-controls={`editor-panel-${id}`}
          tabIndex={tab === id ? 0 : -1}
          onClick={() => onChange(id)}
          onKeyDown={(e) => {
            if (e.key !== "ArrowLeft" && e.key !== "ArrowRight" && e.key !== "Home" && e.key !== "End") return;
            e.preventDefault();
            const next: Tab = e.key === "Home" ? "write" : e.key === "End" ? "preview" : id === "write" ? "preview" : "write";
            onChange(next);
            document.getElementById(`editor-tab-${next}`)?.focus();
          }}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

function ConflictDialog({
  conflict,
  onResolve,
  onCancel,
}: {
  conflict: Conflict;
  onResolve: (how: Resolution, content: string) => void;
  onCancel: () => void;
}) {
  const [merged, setMerged] = useState(conflict.merged);
  const markers = markerLines(merged);
  // The other side is called by the name of who made it, never "theirs".
  const by = conflict.by;
  /** Saving the merge while markers are left takes a second, explicit yes that names them. */
  async function saveMerged() {
    if (markers.length > 0) {
      const shown = markers.length > 10 ? markers.slice(0, 10).join(", ") + ", …" : markers.join(", ");
      const key = markers.length === 1 ? "page.conflict.markers_confirm_one" : "page.conflict.markers_confirm";
      const ok = await confirmDialog(t(key, { count: markers.length, lines: shown }), {
        confirmLabel: t("page.conflict.save_with_markers"),
        danger: true,
      });
      if (!ok) return;
    }
    onResolve("merged", merged);
  }
  return (
    <Dialog title={t("page.merge_conflict.title")} onClose={onCancel} wide>
      <p data-testid="conflict-intro">{by ? t("page.conflict.by", { name: by.author.name, time: whenSaved(by.at) }) : t("page.merge_conflict.body")}</p>
      <div class="conflict-panes">
        <div>
          <h3>{by ? t("page.conflict.their_edit", { name: by.author.name, time: whenSaved(by.at) }) : t("page.conflict.theirs")}</h3>
          <pre data-testid="conflict-theirs">{conflict.theirs}</pre>
        </div>
        <div>
          <h3>{t("page.conflict.yours")}</h3>
          <pre data-testid="conflict-yours">{conflict.yours}</pre>
        </div>
        <div>
          <h3>{t("page.conflict.merged")}</h3>
          <textarea
            data-testid="conflict-merged"
            aria-label={t("page.conflict.merged")}
            aria-describedby={markers.length > 0 ? "conflict-markers-left" : undefined}
            value={merged}
            onInput={(e) => setMerged(e.currentTarget.value)}
          />
        </div>
      </div>
      {markers.length > 0 && (
        <p class="hint" id="conflict-markers-left">
          {t("page.conflict.markers_left")}
        </p>
      )}
      <div class="dialog-actions">
        <button type="button" onClick={onCancel}>
          {t("common.cancel")}
        </button>
        <button type="button" onClick={() => onResolve("theirs", conflict.theirs)}>
          {by ? t("page.conflict.keep_named", { name: by.author.name }) : t("page.conflict.take_theirs")}
        </button>
        <button type="button" onClick={() => onResolve("yours", conflict.yours)}>
          {t("page.conflict.keep_yours")}
        </button>
        <button type="button" class="primary" onClick={() => void saveMerged()}>
          {t("page.conflict.save_merged")}
        </button>
      </div>
    </Dialog>
  );
}

/** What the status line says of a session: saved means stored by the server. */
function liveStatusText(s: LiveStatus | null): string {
  if (!s) return t("live.connecting");
  if (!s.online) return s.kept > 0 ? t("live.offline_kept", { count: s.kept }) : t("live.offline");
  return s.pending > 0 ? t("page.saving") : t("page.saved");
}

/** A page deleted while it was edited: who did it and when, and the two ways to keep the
 *  text — restore the page and save into it, or save the text as a new page (under its
 *  own, numbered address: never a new page at the deleted one's). */
function GoneBanner({
  gone,
  busy,
  onRestore,
  onSaveAsNew,
}: {
  gone: Gone;
  busy: boolean;
  onRestore: () => void;
  onSaveAsNew: () => void;
}) {
  const { trashed } = gone;
  return (
    <div class="notice" role="alert" data-testid="editor-gone">
      <p>
        {trashed
          ? t("editor.deleted", { name: trashed.deleted_by.name, date: formatDate(trashed.deleted_at) })
          : t("editor.gone")}
      </p>
      <div class="editor-bar">
        {trashed && (
          <button type="button" class="primary" disabled={busy} onClick={onRestore}>
            {t("editor.restore_and_save")}
          </button>
        )}
        <button type="button" class={trashed ? "" : "primary"} disabled={busy} onClick={onSaveAsNew}>
          {t("editor.save_as_new")}
        </button>
      </div>
    </div>
  );
}

export function Editor({ slug }: { slug: string | null }) {
  useI18n();
  const dark = useStore(theme) === "dark";
  const known = useStore(titles);
  const ws = useStore(currentWorkspace);
  const query = location.get().query;
  const isNew = slug === null;
  const parent = isNew ? query.get("parent") : null;

  const [page, setPage] = useState<Page | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [title, setTitle] = useState(isNew ? (query.get("title") ?? "") : "");
  // Whether the person typed in the title field (or a new page's came filled): only then
  // is it sent as the request's `title`; else the field shows the title the rule gives.
  const [titleTouched, setTitleTouched] = useState(isNew && !!query.get("title"));
  // A new page's address as typed (a wanted page's comes filled); null follows the title.
  const [typedSlug, setTypedSlug] = useState<string | null>(isNew ? query.get("slug") || null : null);
  const [content, setContent] = useState("");
  const [saved, setSaved] = useState<{ title: string; content: string }>({ title: title, content: "" });
  const [status, setStatus] = useState("");
  const [error, setError] = useState<ErrorText>("");
  const [busy, setBusyState] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  // What happened to the page meanwhile (renamed, moved), and whether it is gone.
  const [notice, setNotice] = useState("");
  const [gone, setGone] = useState<Gone | null>(null);
  const [editorReady, setEditorReady] = useState(false);
  const [mode, setMode] = useState<Mode | null>(isNew ? "alone" : null);
  const live = useRef<LiveSession | null>(null);
  const [liveStatus, setLiveStatus] = useState<LiveStatus | null>(null);
  const [peers, setPeers] = useState<Present[]>([]);
  // Text this device kept that the server's session no longer knew (shown, never dropped).
  const [kept, setKept] = useState<string | null>(null);
  // Changes a new session makes the editor again (after the device's copy was set aside).
  const [generation, setGeneration] = useState(0);
  const [cmModule, setCmModule] = useState<EditorModule | null>(null);
  const narrow = useNarrow();
  const narrowRef = useRef(narrow);
  narrowRef.current = narrow;
  const [tab, setTab] = useState<Tab>("write");
  const shown: Record<Tab, boolean> = { write: !narrow || tab === "write", preview: !narrow || tab === "preview" };

  const host = useRef<HTMLDivElement>(null);
  const previewPane = useRef<HTMLElement>(null);
  const cm = useRef<SourceEditor | null>(null);
  // Set at once, not at the next render: a save that follows a restore must not find the
  // editor still busy.
  const busyRef = useRef(false);
  function setBusy(b: boolean) {
    busyRef.current = b;
    setBusyState(b);
  }
  // The page as last seen where it is now (slug, parent): saves go there. `page` stays the
  // revision the edit is based on, the base of the three-way merge.
  const where = useRef<Page | null>(null);
  // The source is read into `content` 100 ms after typing pauses, not on every keystroke.
  const [pending, setPending] = useState(false);
  const flushTimer = useRef(0);
  // The title this save will give, as the server decides it: the typed title,
  // else front matter, else a first level-1 heading that is new or changed since the
  // revision the edit started from, else the title the page has.
  // A rename meanwhile changed the title the page has now (`titleNow`): that is what
  // the rule falls back on, while its first heading is still compared with the base.
  const [titleNow, setTitleNow] = useState<string | null>(null);
  const titleBase = useMemo(() => (page && titleNow !== null ? { ...page, title: titleNow } : page), [page, titleNow]);
  const shownTitle = useSavedTitle(content, titleTouched ? title : null, titleBase, slug ?? typedSlug ?? "");
  // The address a new page will get (asked of the server as the title changes).
  const address = useNewAddress(isNew ? shownTitle.title : "", isNew ? typedSlug : null);
  const state = useRef({ title, content, titleTouched, page, titleBase, address });
  state.current = { title, content, titleTouched, page, titleBase, address };
  function flush(): string {
    window.clearTimeout(flushTimer.current);
    const doc = cm.current?.getDoc();
    if (doc !== undefined) setContent(doc);
    setPending(false);
    return doc ?? state.current.content;
  }
  useEffect(() => () => window.clearTimeout(flushTimer.current), []);
  /** Replaces the source with a text the server answered (merged, or a conflict's choice):
   *  read back at once, as it is no edit of the user's (else leaving within the next
   *  100 ms asked about unsaved changes). */
  function replaceSource(text: string) {
    cm.current?.setDoc(text);
    flush();
    setContent(text);
  }
  const titleDirty = titleTouched && title !== saved.title;
  const dirty = mode === "live" ? (liveStatus?.pending ?? 0) > 0 || titleDirty : pending || content !== saved.content || titleDirty;
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;

  // The page (when editing an existing one).
  useEffect(() => {
    if (isNew) {
      setPage(null);
      return;
    }
    const given = handedOver?.slug === slug ? handedOver : null;
    handedOver = null;
    (given ? Promise.resolve(given) : api.page(slug!)).then(
      (p) => {
        if (p.slug !== slug) {
          // An old address (the page was renamed): edit it at its current one, #fragment kept.
          handedOver = p;
          void navigate(pageHref(p.slug, "edit") + window.location.hash, { replace: true, force: true });
          return;
        }
        where.current = p;
        setPage(p);
        setTitle(p.title);
        setContent(p.content);
        setSaved({ title: p.title, content: p.content });
      },
      (e) => setLoadError(e),
    );
  }, [slug]);

  useEffect(() => {
    document.title = `${t("page.edit")} · ${shownTitle.title || t("page.new")}`;
  }, [shownTitle.title]);

  useEffect(() => void loadTags(), []);

  // The unsaved-changes guard, for in-app navigation and for leaving the site.
  useEffect(() => {
    setNavigationGuard(async () => !dirtyRef.current || (await confirmDialog(t("page.discard_changes_confirm"))));
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      if (!dirtyRef.current) return;
      e.preventDefault();
      e.returnValue = "";
    };
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => {
      setNavigationGuard(null);
      window.removeEventListener("beforeunload", onBeforeUnload);
    };
  }, []);

  // CodeMirror, loaded on demand once the document is known.
  const ready = isNew || page !== null;
  useEffect(() => {
    if (!ready || !host.current) return;
    let cancelled = false;
    void import("../editor/codemirror").then(async (mod) => {
      if (cancelled || !host.current) return;
      const session = isNew ? null : await joinSession(mod);
      if (cancelled || !host.current) {
        session?.destroy();
        return;
      }
      live.current = session;
      setMode(session ? "live" : "alone");
      cm.current = mod.createEditor({
        parent: host.current,
        doc: session ? session.text.toString() : state.current.content,
        extensions: session ? [mod.collab(session)] : [],
        dark,
        label: t("editor.source"),
        onChange: () => {
          setPending(true);
          window.clearTimeout(flushTimer.current);
          flushTimer.current = window.setTimeout(flush, 100);
        },
        onSave: () => void save(false),
        titles: () => [...titles.get().values()],
        tags: () => knownTags.get(),
        onFiles: (files, at) => void upload(files, at),
      });
      // The session's text may hold edits not yet a revision: the preview shows it too.
      if (session) setContent(session.text.toString());
      setCmModule(mod);
      setEditorReady(true);
      if (!isNew) cm.current.focus();
    });
    return () => {
      cancelled = true;
      cm.current?.destroy();
      cm.current = null;
      live.current?.destroy();
      live.current = null;
    };
  }, [ready, generation]);

  /** Joins the page's co-editing session; null when it cannot be reached in
   *  LIVE_WAIT_MS and this device keeps no copy of it (the editor then saves alone). */
  async function joinSession(mod: EditorModule): Promise<LiveSession | null> {
    const p = state.current.page;
    const me = user.get();
    if (!p || !me) return null;
    const session = new mod.LiveSession({
      slug: p.slug,
      workspace: p.workspace,
      key: `cairn-live:${p.workspace}:${p.slug}`,
      user: { id: me.id, name: me.name },
      onStatus: setLiveStatus,
      onPeers: setPeers,
      onClosed: (why) => {
        if (why === "policy") setError(t("live.removed"));
        else void locate().catch(() => undefined);
      },
      onDiverged: (text) => {
        if (text !== null) setKept(text);
        setGeneration((g) => g + 1);
      },
    });
    const joined = await Promise.race([
      session.ready,
      new Promise<boolean>((resolve) => window.setTimeout(() => resolve(false), LIVE_WAIT_MS)),
    ]);
    if (joined) return session;
    session.destroy();
    setNotice(t("live.unavailable"));
    return null;
  }

  useEffect(() => cm.current?.setDark(dark), [dark]);

  // Where both show, the preview follows the source's scroll.
  useEffect(() => {
    if (!cmModule || !cm.current || !previewPane.current) return;
    return cmModule.followScroll(cm.current.view, previewPane.current, () => !narrowRef.current);
  }, [cmModule]);

  /** Switches the narrow screen's tab; the preview opens where the source was. */
  function switchTab(next: Tab) {
    if (next === tab) return;
    const view = cm.current?.view;
    const at = view && cmModule?.sourcePosition(view);
    setTab(next);
    if (next === "preview" && at) requestAnimationFrame(() => previewPane.current && cmModule!.scrollPreviewTo(previewPane.current, at));
  }

  // Ctrl/Cmd+S also outside the source (e.g. in the title field), from the first paint.
  useLayoutEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && (e.key === "s" || e.key === "S")) {
        e.preventDefault();
        void save(false);
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  /** Says what changed about the page since `before` (renamed, moved) and follows it: the
   *  address bar gets its current address, the tree reloads. The name is that of the
   *  person who did it: a rename and a move are each a revision of theirs. */
  async function follow(before: Page, now: Page) {
    where.current = now;
    if (now.title !== before.title) setTitleNow(now.title);
    const renamed = now.slug !== before.slug;
    const moved = (now.parent ?? null) !== (before.parent ?? null);
    if (!renamed && !moved) return;
    if (renamed) {
      replaceUrl(pageHref(now.slug, "edit"));
      live.current?.follow(now.slug);
    }
    await pagesChanged();
    const name = now.updated_by.name;
    if (renamed) setNotice(t("editor.renamed", { name, title: now.title, address: readable(pageHref(now.slug)) }));
    else if (now.parent) setNotice(t("editor.moved", { name, parent: titles.get().get(now.parent) ?? now.parent }));
    else setNotice(t("editor.moved_top", { name }));
  }

  /** Where the page is now (following a rename: the API answers an old slug with a 308
   *  to the current one), noting any change; null when it is gone, which the banner then
   *  says. Other failures (offline) are thrown. */
  async function locate(): Promise<Page | null> {
    const before = where.current;
    if (!before) return null;
    try {
      const now = await api.page(before.slug);
      await follow(before, now);
      setGone(null);
      return now;
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
      setGone({ trashed: trashedOf(e) });
      return null;
    }
  }

  // Looks where the page is every 10 s while the window shows, and whenever it gets the
  // focus back (the person returns from another window or tab): someone may have renamed,
  // moved or deleted it meanwhile. Not during a save, which looks for itself.
  const editing = page !== null;
  useEffect(() => {
    if (!editing || gone) return;
    let looking = false;
    const look = () => {
      if (looking || busyRef.current || document.visibilityState !== "visible") return;
      looking = true;
      locate()
        .catch(() => undefined)
        .finally(() => (looking = false));
    };
    const timer = window.setInterval(look, WHERE_POLL_MS);
    window.addEventListener("focus", look);
    document.addEventListener("visibilitychange", look);
    return () => {
      window.clearInterval(timer);
      window.removeEventListener("focus", look);
      document.removeEventListener("visibilitychange", look);
    };
  }, [editing, gone]);

  /** Uploads files (the toolbar's button, paste, drop) one by one and inserts each as
   *  `![name](url)` at `at` — a spot that follows the edits made meanwhile. A refused
   *  file (too large, not an image) says so by name; the others still go in. */
  async function upload(files: File[], at: number) {
    const spot = cm.current?.track(at);
    setError("");
    try {
      for (const file of files) {
        const name = file.name || "image";
        setStatus(t("upload.uploading"));
        try {
          const up = await api.upload(file, name);
          const alt = name.replace(/\.[a-z0-9]+$/i, "").replace(/[\[\]\\]/g, "");
          cm.current?.insertBlock(`![${alt}](${up.url})`, spot?.pos ?? at);
          setStatus("");
        } catch (e) {
          setStatus("");
          const why = failure(e);
          setError({ message: t("upload.failed", { name, reason: why.message }), detail: why.detail });
        }
      }
    } finally {
      spot?.release();
    }
  }

  /** The `title` a save of `body` sends: the typed title, and only when the rule would
   *  not give it anyway — never the title the page had when the editor opened, which
   *  would undo a rename made meanwhile. */
  function requestedTitle(body: string): string | undefined {
    const s = state.current;
    if (!s.titleTouched || !s.title.trim()) return undefined;
    const typed = savedTitle(body, s.title, s.titleBase, s.page?.slug ?? "");
    return typed.title !== savedTitle(body, null, s.titleBase, s.page?.slug ?? "").title ? typed.title : undefined;
  }

  /** Saves; `leave` goes to the page afterwards. */
  async function save(leave: boolean) {
    const s = state.current;
    const body = flush();
    if (busyRef.current) return;
    setError("");
    // A new page takes the rule's title (typed, front matter or first heading); the
    // server needs a title or a slug to make one.
    const newTitle = s.page ? "" : savedTitle(body, s.titleTouched ? s.title : null, null, "").title;
    const newSlug = s.address.typed ? s.address.slug.trim() : "";
    if (!s.page && !newTitle && !newSlug) {
      setError(t("editor.title_required"));
      return;
    }
    if (!s.page && addressBlocks(s.address)) {
      // The field says what is wrong with the address.
      document.getElementById("editor-address")?.focus();
      return;
    }
    setBusy(true);
    setStatus(t("page.saving"));
    try {
      if (live.current && s.page) await revision(body, leave);
      else await store(body, leave, s.page, newTitle, newSlug);
    } finally {
      setBusy(false);
    }
  }

  /** Save in a session: everything typed is kept already; this makes the text a revision
   *  now (with the typed title) instead of when editing pauses, then goes to the page. */
  async function revision(body: string, leave: boolean) {
    try {
      const here = await locate();
      if (!here) {
        setStatus("");
        return;
      }
      const title = requestedTitle(body);
      const result =
        body === here.content && title === undefined
          ? here
          : await api.updatePage(here.slug, { content: body, base_revision: here.revision, merge: true, title });
      took(result);
      setStatus("");
      await pagesChanged();
      if (leave) await navigate(pageHref(result.slug), { force: true });
    } catch (e) {
      setStatus("");
      if (e instanceof ApiError && e.status === 404) setGone({ trashed: trashedOf(e) });
      else setError(failure(e));
    }
  }

  /** The save itself (the editor is busy meanwhile): a new page is created (its slug sent
   *  only when the person typed one; else the server numbers a taken one); an existing one
   *  is saved where it is now, merged against the revision the edit started from. */
  async function store(body: string, leave: boolean, base: Page | null, newTitle = "", newSlug = "") {
    try {
      let result: Page;
      if (!base) {
        result = await api.createPage({
          title: newTitle || undefined,
          content: body,
          parent: parent || undefined,
          slug: newSlug || undefined,
        });
      } else {
        const here = await locate();
        if (!here) {
          setStatus("");
          return;
        }
        result = await api.updatePage(here.slug, {
          content: body,
          base_revision: base.revision,
          merge: true,
          title: requestedTitle(body),
        });
        // Renamed in the moment between looking and saving: the save followed it.
        if (result.slug !== here.slug) replaceUrl(pageHref(result.slug, "edit"));
      }
      afterSave(result, body);
      await pagesChanged();
      if (!base || leave) await navigate(pageHref(result.slug), { replace: !base, force: true });
    } catch (e) {
      setStatus("");
      if (base && e instanceof ApiError && e.status === 404) {
        setGone({ trashed: trashedOf(e) });
      } else if (e instanceof ApiError && e.status === 409 && base && (e.code === "merge_conflict" || e.code === "stale_revision")) {
        await openConflict(base, body, e);
      } else {
        setError(failure(e));
      }
    }
  }

  /** A saved revision becomes the edit's base, and its title the field's. */
  function took(result: Page) {
    where.current = result;
    setTitleNow(null);
    setPage(result);
    setTitle(result.title);
    setTitleTouched(false);
    setSaved({ title: result.title, content: result.content });
  }

  function afterSave(result: Page, sent: string) {
    took(result);
    if (result.content !== sent) {
      // The server merged in someone else's change: show the merged text.
      replaceSource(result.content);
      setStatus(t("editor.merged"));
    } else {
      setStatus(t("page.saved"));
    }
  }

  /** "Restore it and save my text": the page comes back from the trash (with the pages
   *  deleted with it) and the text is saved into it through the usual merge against the
   *  revision the edit started from. */
  async function restoreAndSave() {
    const trashed = gone?.trashed;
    const base = state.current.page;
    if (!trashed || !base || busyRef.current) return;
    const body = flush();
    setBusy(true);
    setError("");
    setStatus(t("page.saving"));
    try {
      const restored = await api.restoreFromTrash(trashed.slug);
      where.current = restored;
      replaceUrl(pageHref(restored.slug, "edit"));
      setGone(null);
      if (live.current) {
        // The session resumes from its log (what was typed meanwhile included); the
        // text is made a revision at once, as a save is.
        live.current.follow(restored.slug);
        live.current.reconnect();
        await revision(body, false);
      } else await store(body, false, base);
    } catch (e) {
      setStatus("");
      setError(failure(e));
    } finally {
      setBusy(false);
    }
  }

  /** "Save my text as a new page": created with the page's title (the server gives it the
   *  first free address, as the deleted page keeps its own in the trash) where the page
   *  was, when that parent is still there; then shown. */
  async function saveAsNew() {
    const s = state.current;
    if (!s.page || busyRef.current) return;
    const body = flush();
    setBusy(true);
    setError("");
    setStatus(t("page.saving"));
    try {
      await reloadTree();
      const from = where.current?.parent ?? s.page.parent ?? null;
      const created = await api.createPage({
        title: savedTitle(body, s.titleTouched ? s.title : null, s.titleBase, s.page.slug).title || s.page.title,
        content: body,
        parent: from && pageExists(from) ? from : undefined,
      });
      await pagesChanged();
      await navigate(pageHref(created.slug), { replace: true, force: true });
    } catch (e) {
      setStatus("");
      setError(failure(e));
    } finally {
      setBusy(false);
    }
  }

  /** Opens the conflict dialog for a 409: their text is that of the revision the answer
   *  names (the one the merge was made against, and the base every choice saves on), read
   *  by its id, so "Keep …'s version" saves exactly the text shown. `yours` is the person's
   *  own text, kept as it was through repeated conflicts; `merged` the fallback for the
   *  merge pane when the answer carries none. */
  async function openConflict(p: Page, yours: string, e: ApiError, merged = yours) {
    const at = where.current?.slug ?? p.slug;
    try {
      const now = await api.page(at);
      const current = typeof e.problem.current_revision === "string" ? e.problem.current_revision : now.revision;
      const theirs = current === now.revision ? now.content : (await api.revision(now.slug, current)).content;
      setConflict({
        theirs,
        yours,
        merged: typeof e.problem.merged === "string" ? e.problem.merged : merged,
        current,
        by: theirsOf(e),
      });
    } catch (err) {
      // Their side could not be read: say so; the editor still holds the person's text.
      setError(failure(err));
    }
  }

  /** Saves the chosen text over their revision as it is (no merge: "Keep my version"
   *  stores exactly mine); a newer change meanwhile opens the dialog again. */
  async function resolve(c: Conflict, how: Resolution, body: string) {
    const p = state.current.page;
    if (!p) return;
    setConflict(null);
    setBusy(true);
    setStatus(t("page.saving"));
    try {
      const result = await api.updatePage(where.current?.slug ?? p.slug, {
        content: body,
        base_revision: c.current,
        title: how === "theirs" ? undefined : requestedTitle(body),
      });
      replaceSource(result.content);
      afterSave(result, result.content);
      await pagesChanged();
    } catch (e) {
      setStatus("");
      if (e instanceof ApiError && e.status === 409) await openConflict(p, c.yours, e, how === "merged" ? body : c.yours);
      else if (e instanceof ApiError && e.status === 404) setGone({ trashed: trashedOf(e) });
      else setError(failure(e));
    } finally {
      setBusy(false);
    }
  }

  const previewSource = usePreviewSource(content);
  const large = previewSource.length > LARGE_PAGE;
  const preview = useRendered(large ? "" : previewSource, slug ?? undefined, undefined, true);
  void known;

  if (loadError) {
    // A page that is not there: one in the trash says so and offers it back.
    if (slug && loadError instanceof ApiError && loadError.status === 404) return <NotFound slug={slug} error={loadError} />;
    return <FormError error={failure(loadError)} />;
  }

  const blocked = isNew && addressBlocks(address);
  return (
    <div class="editor" data-testid="editor">
      <div class="editor-bar">
        <input
          class="editor-title"
          name="title"
          aria-label={t("page.title_placeholder")}
          aria-describedby={shownTitle.source === "heading" || shownTitle.source === "front_matter" ? "editor-title-source" : undefined}
          placeholder={titleTouched && shownTitle.title ? shownTitle.title : t("page.title_placeholder")}
          value={titleTouched ? title : isNew || page ? shownTitle.title : ""}
          autoFocus={isNew}
          onInput={(e) => {
            setTitle(e.currentTarget.value);
            setTitleTouched(true);
          }}
        />
        <TitleSource shown={shownTitle} id="editor-title-source" />
        <span class="editor-status" role="status" data-testid="editor-status">
          {mode === "live" ? status || liveStatusText(liveStatus) : dirty && !busy ? t("page.unsaved_changes") : status}
        </span>
        <button
          type="button"
          onClick={() => {
            const at = where.current?.slug ?? page?.slug;
            void navigate(at ? pageHref(at) : parent ? pageHref(parent) : appHref(""));
          }}
        >
          {t("page.cancel")}
        </button>
        <button type="button" class="primary" disabled={busy || blocked} onClick={() => void save(true)} title="Ctrl+S">
          {t("page.save")}
        </button>
      </div>
      <Presence people={peers} label={t("live.here")} />
      {kept !== null && (
        <div class="notice" role="alert" data-testid="editor-kept">
          <p>{t("live.diverged")}</p>
          <pre>{kept}</pre>
          <button type="button" onClick={() => setKept(null)}>
            {t("common.close")}
          </button>
        </div>
      )}
      {isNew && <AddressField address={address} title={shownTitle.title} workspace={ws} onType={setTypedSlug} />}
      {notice && !gone && (
        <p class="notice" role="status" data-testid="editor-notice">
          {notice}
        </p>
      )}
      {gone && <GoneBanner gone={gone} busy={busy} onRestore={() => void restoreAndSave()} onSaveAsNew={() => void saveAsNew()} />}
      <FormError error={error} />
      {narrow && <EditorTabs tab={tab} onChange={switchTab} />}
      <div class="editor-panes">
        <div
          class="editor-write"
          id="editor-panel-write"
          role={narrow ? "tabpanel" : undefined}
          aria-labelledby={narrow ? "editor-tab-write" : undefined}
          hidden={!shown.write}
        >
          {cmModule && cm.current && <cmModule.Toolbar view={cm.current.view} onFiles={(files, at) => void upload(files, at)} />}
          <div class="editor-source" ref={host}>
            {!editorReady && <p class="muted pad">{t("common.loading")}</p>}
          </div>
        </div>
        <section
          class="editor-preview"
          ref={previewPane}
          id="editor-panel-preview"
          role={narrow ? "tabpanel" : undefined}
          aria-labelledby={narrow ? "editor-tab-preview" : undefined}
          aria-label={narrow ? undefined : t("editor.preview")}
          hidden={!shown.preview}
        >
          {large ? (
            <LargePreview source={previewSource} slug={slug ?? undefined} />
          ) : (
            <MarkdownBody html={preview.html} class="page-content" />
          )}
        </section>
      </div>
      {conflict && (
        <ConflictDialog
          conflict={conflict}
          onResolve={(how, body) => void resolve(conflict, how, body)}
          onCancel={() => setConflict(null)}
        />
      )}
    </div>
  );
}
