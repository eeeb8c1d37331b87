// The editor: title field, CodeMirror source (loaded on demand) with a formatting toolbar
// beside a live preview that follows its scroll (two tabs, Write and Preview, on narrow
// screens), explicit Save against base_revision, Ctrl/Cmd+S, an unsaved-changes guard,
// conflict resolution, [[ and # completion, image upload (button, paste, drop).
//
// Saves send merge: true: an edit made on a stale base is merged three-way by the server
// and only overlapping changes answer 409 — then the conflict dialog shows theirs, yours
// and the merged text (with markers) to resolve (CONTRACT §5).
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, type Page } from "../api";
import { confirmDialog, Dialog } from "../components/Dialog";
import { LargePreview, LARGE_PAGE } from "../components/LargePreview";
import { MarkdownBody, useRendered } from "../components/Markdown";
import { lastRenderMs } from "../markdown/render";
import type { SourceEditor } from "../editor/codemirror";
import { FormError } from "../components/Form";
import { failure, type ErrorText } from "../errors";
import { t, useI18n } from "../i18n";
import { location, navigate, pageHref, setNavigationGuard } from "../router";
import { knownTags, loadTags, pagesChanged, titles } from "../session";
import { useStore } from "../store";
import { theme } from "../theme";

type EditorModule = typeof import("../editor/codemirror");

interface Conflict {
  theirs: string;
  yours: string;
  merged: string;
  current: string;
}

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
  onResolve: (content: string, base: string) => void;
  onCancel: () => void;
}) {
  const [merged, setMerged] = useState(conflict.merged);
  const markers = /^(<<<<<<<|=======|>>>>>>>)/m.test(merged);
  return (
    <Dialog title={t("page.merge_conflict.title")} onClose={onCancel} wide>
      <p>{t("page.merge_conflict.body")}</p>
      <div class="conflict-panes">
        <div>
          <h3>{t("page.conflict.theirs")}</h3>
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
            value={merged}
            onInput={(e) => setMerged(e.currentTarget.value)}
          />
        </div>
      </div>
      {markers && <p class="hint">{t("page.conflict.markers_left")}</p>}
      <div class="dialog-actions">
        <button type="button" onClick={onCancel}>
          {t("common.cancel")}
        </button>
        <button type="button" onClick={() => onResolve(conflict.theirs, conflict.current)}>
          {t("page.conflict.take_theirs")}
        </button>
        <button type="button" onClick={() => onResolve(conflict.yours, conflict.current)}>
          {t("page.conflict.keep_yours")}
        </button>
        <button type="button" class="primary" onClick={() => onResolve(merged, conflict.current)}>
          {t("page.conflict.save_merged")}
        </button>
      </div>
    </Dialog>
  );
}

export function Editor({ slug }: { slug: string | null }) {
  useI18n();
  const dark = useStore(theme) === "dark";
  const known = useStore(titles);
  const query = location.get().query;
  const isNew = slug === null;
  const parent = isNew ? query.get("parent") : null;
  const newSlug = isNew ? query.get("slug") : null;

  const [page, setPage] = useState<Page | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [title, setTitle] = useState(isNew ? (query.get("title") ?? "") : "");
  const [titleTouched, setTitleTouched] = useState(isNew);
  const [content, setContent] = useState("");
  const [saved, setSaved] = useState<{ title: string; content: string }>({ title: title, content: "" });
  const [status, setStatus] = useState("");
  const [error, setError] = useState<ErrorText>("");
  const [busy, setBusy] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [editorReady, setEditorReady] = useState(false);
  const [cmModule, setCmModule] = useState<EditorModule | null>(null);
  const narrow = useNarrow();
  const narrowRef = useRef(narrow);
  narrowRef.current = narrow;
  const [tab, setTab] = useState<Tab>("write");
  const shown: Record<Tab, boolean> = { write: !narrow || tab === "write", preview: !narrow || tab === "preview" };

  const host = useRef<HTMLDivElement>(null);
  const previewPane = useRef<HTMLElement>(null);
  const cm = useRef<SourceEditor | null>(null);
  const state = useRef({ title, content, titleTouched, page, busy });
  state.current = { title, content, titleTouched, page, busy };
  // The source is read into `content` 100 ms after typing pauses, not on every keystroke.
  const [pending, setPending] = useState(false);
  const flushTimer = useRef(0);
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
  const dirty = pending || content !== saved.content || (titleTouched && title !== saved.title);
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;

  // The page (when editing an existing one).
  useEffect(() => {
    if (isNew) {
      setPage(null);
      return;
    }
    api.page(slug!).then(
      (p) => {
        setPage(p);
        setTitle(p.title);
        setContent(p.content);
        setSaved({ title: p.title, content: p.content });
      },
      (e) => setLoadError(e),
    );
  }, [slug]);

  useEffect(() => {
    document.title = `${t("page.edit")} · ${title || t("page.new")}`;
  }, [title]);

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
    void import("../editor/codemirror").then((mod) => {
      if (cancelled || !host.current) return;
      cm.current = mod.createEditor({
        parent: host.current,
        doc: state.current.content,
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
      setCmModule(mod);
      setEditorReady(true);
      if (!isNew) cm.current.focus();
    });
    return () => {
      cancelled = true;
      cm.current?.destroy();
      cm.current = null;
    };
  }, [ready]);

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

  async function put(p: Page, body: string, base: string, newTitle?: string): Promise<Page> {
    return api.updatePage(p.slug, { content: body, base_revision: base, merge: true, title: newTitle });
  }

  /** Saves; `leave` goes to the page afterwards. */
  async function save(leave: boolean) {
    const s = state.current;
    const body = flush();
    if (s.busy) return;
    setError("");
    if (!s.page && !s.title.trim()) {
      setError(t("editor.title_required"));
      return;
    }
    setBusy(true);
    setStatus(t("page.saving"));
    try {
      let result: Page;
      if (!s.page) {
        result = await api.createPage({
          title: s.title.trim(),
          content: body,
          parent: parent || undefined,
          slug: newSlug || undefined,
        });
      } else {
        const newTitle = s.titleTouched && s.title.trim() && s.title.trim() !== s.page.title ? s.title.trim() : undefined;
        result = await put(s.page, body, s.page.revision, newTitle);
      }
      afterSave(result, body);
      await pagesChanged();
      if (!s.page || leave) await navigate(pageHref(result.slug), { replace: !s.page, force: true });
    } catch (e) {
      setStatus("");
      if (e instanceof ApiError && e.status === 409 && s.page && (e.code === "merge_conflict" || e.code === "stale_revision")) {
        await openConflict(s.page, body, e);
      } else {
        setError(failure(e));
      }
    } finally {
      setBusy(false);
    }
  }

  function afterSave(result: Page, sent: string) {
    setPage(result);
    setTitle(result.title);
    setTitleTouched(false);
    setSaved({ title: result.title, content: result.content });
    if (result.content !== sent) {
      // The server merged in someone else's change: show the merged text.
      replaceSource(result.content);
      setStatus(t("editor.merged"));
    } else {
      setStatus(t("page.saved"));
    }
  }

  async function openConflict(p: Page, yours: string, e: ApiError) {
    const current = await api.page(p.slug);
    const merged = typeof e.problem.merged === "string" ? e.problem.merged : yours;
    setConflict({
      theirs: current.content,
      yours,
      merged,
      current: typeof e.problem.current_revision === "string" ? e.problem.current_revision : current.revision,
    });
  }

  async function resolve(body: string, base: string) {
    const p = state.current.page;
    if (!p) return;
    setConflict(null);
    setBusy(true);
    setStatus(t("page.saving"));
    try {
      const result = await api.updatePage(p.slug, { content: body, base_revision: base });
      replaceSource(result.content);
      afterSave(result, result.content);
      await pagesChanged();
    } catch (e) {
      setStatus("");
      if (e instanceof ApiError && e.status === 409) await openConflict(p, body, e);
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
    return <FormError error={failure(loadError)} />;
  }

  return (
    <div class="editor" data-testid="editor">
      <div class="editor-bar">
        <input
          class="editor-title"
          name="title"
          aria-label={t("page.title_placeholder")}
          placeholder={t("page.title_placeholder")}
          value={title}
          autoFocus={isNew}
          onInput={(e) => {
            setTitle(e.currentTarget.value);
            setTitleTouched(true);
          }}
        />
        <span class="editor-status" role="status" data-testid="editor-status">
          {dirty && !busy ? t("page.unsaved_changes") : status}
        </span>
        <button
          type="button"
          onClick={() => void navigate(page ? pageHref(page.slug) : parent ? pageHref(parent) : "/app/")}
        >
          {t("page.cancel")}
        </button>
        <button type="button" class="primary" disabled={busy} onClick={() => void save(true)} title="Ctrl+S">
          {t("page.save")}
        </button>
      </div>
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
      {conflict && <ConflictDialog conflict={conflict} onResolve={resolve} onCancel={() => setConflict(null)} />}
    </div>
  );
}
