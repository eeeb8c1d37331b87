// A page's history: the list of revisions; one revision with its content, its diff
// against the previous revision (or the current one; inline or side by side, inline on a
// phone, changed words marked), a restore button and, for an owner of the workspace, the
// erasure of its content.
import { useEffect, useState } from "preact/hooks";
import { api, type Diff, type HistoryEntry, type Revision } from "../api";
import { Dialog } from "../components/Dialog";
import { MarkdownBody, useRendered } from "../components/Markdown";
import { DialogActions, FormError, Notice, useAction } from "../components/Form";
import { failure, type ErrorText } from "../errors";
import { formatDate, t, useI18n } from "../i18n";
import { navigate, pageHref } from "../router";
import { currentWorkspace, pagesChanged, pagesVersion, titles, workspaces } from "../session";
import { useStore } from "../store";
import { wordDiff, type Piece } from "../wordDiff";

function short(sha: string): string {
  return sha.slice(0, 8);
}

/** The pieces of each line of a run of removed lines and the run of added lines that
 *  follows it, the i-th removed line paired with the i-th added one: the words of a pair
 *  that differ are marked (`wordDiff`); a line without a partner, or one that shares too
 *  little with it, is marked as a whole by its row alone (null). */
function pairRuns(dels: string[], adds: string[]): { dels: (Piece[] | null)[]; adds: (Piece[] | null)[] } {
  const out = { dels: dels.map(() => null as Piece[] | null), adds: adds.map(() => null as Piece[] | null) };
  for (let i = 0; i < Math.min(dels.length, adds.length); i++) {
    const w = wordDiff(dels[i]!, adds[i]!);
    if (w) {
      out.dels[i] = w.removed;
      out.adds[i] = w.added;
    }
  }
  return out;
}

/** A line's text with its changed words marked: `<del>` in a removed line, `<ins>` in an
 *  added one (the elements say so to screen readers too). */
function Words({ text, pieces, kind }: { text: string; pieces: Piece[] | null; kind: "add" | "del" | "" }) {
  if (!pieces || !kind) return <>{text || " "}</>;
  const Mark = kind === "add" ? "ins" : "del";
  return (
    <>
      {pieces.map((p, i) =>
        p.changed ? (
          <Mark key={i} class="word-change">
            {p.text}
          </Mark>
        ) : (
          p.text
        ),
      )}
    </>
  );
}

interface InlineLine {
  kind: "add" | "del" | "hunk" | "";
  text: string;
  /** For a changed line paired with one on the other side: its words, changes marked. */
  pieces: Piece[] | null;
}

/** The lines of an inline diff (file headers left out), changed words of paired lines marked. */
export function inlineLines(unified: string): InlineLine[] {
  const lines = unified.split("\n").filter((l, i, all) => !(i === all.length - 1 && l === ""));
  const out: InlineLine[] = [];
  let dels: string[] = [];
  let adds: string[] = [];
  const flush = () => {
    const paired = pairRuns(dels, adds);
    dels.forEach((text, i) => out.push({ kind: "del", text: "-" + text, pieces: paired.dels[i] ? [{ text: "-", changed: false }, ...paired.dels[i]!] : null }));
    adds.forEach((text, i) => out.push({ kind: "add", text: "+" + text, pieces: paired.adds[i] ? [{ text: "+", changed: false }, ...paired.adds[i]!] : null }));
    dels = [];
    adds = [];
  };
  for (const l of lines) {
    if (l.startsWith("+++") || l.startsWith("---")) continue;
    if (l.startsWith("-")) {
      if (adds.length) flush(); // a removal after additions starts a new change
      dels.push(l.slice(1));
    } else if (l.startsWith("+")) adds.push(l.slice(1));
    else {
      flush();
      out.push({ kind: l.startsWith("@@") ? "hunk" : "", text: l, pieces: null });
    }
  }
  flush();
  return out;
}

/** A unified diff, line by line: additions, deletions, hunk headers; the words that
 *  changed within a changed line marked. */
function DiffView({ unified }: { unified: string }) {
  return (
    <div class="diff" data-testid="diff">
      {inlineLines(unified).map((l, i) => (
        <div key={i} class={l.kind}>
          <Words text={l.text} pieces={l.pieces} kind={l.kind === "hunk" ? "" : l.kind} />
        </div>
      ))}
    </div>
  );
}

interface Side {
  no: number;
  text: string;
  /** The line's words, changes marked, when it is paired with a line on the other side. */
  pieces?: Piece[] | null;
}
interface Row {
  hunk?: string;
  left: Side | null;
  right: Side | null;
  changed: boolean;
}

/** The rows of a side-by-side diff: removed lines on the left, added on the right, paired. */
export function sideBySide(unified: string): Row[] {
  const rows: Row[] = [];
  let oldNo = 0;
  let newNo = 0;
  let dels: Side[] = [];
  let adds: Side[] = [];
  const flush = () => {
    const paired = pairRuns(
      dels.map((d) => d.text),
      adds.map((a) => a.text),
    );
    dels.forEach((d, i) => (d.pieces = paired.dels[i]));
    adds.forEach((a, i) => (a.pieces = paired.adds[i]));
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) rows.push({ left: dels[i] ?? null, right: adds[i] ?? null, changed: true });
    dels = [];
    adds = [];
  };
  for (const line of unified.split("\n")) {
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("\\")) continue;
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      flush();
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[2]);
      rows.push({ hunk: line, left: null, right: null, changed: false });
    } else if (line.startsWith("-")) {
      if (adds.length) flush(); // a removal after additions starts a new change
      dels.push({ no: oldNo++, text: line.slice(1) });
    } else if (line.startsWith("+")) adds.push({ no: newNo++, text: line.slice(1) });
    else if (line.startsWith(" ")) {
      flush();
      rows.push({ left: { no: oldNo++, text: line.slice(1) }, right: { no: newNo++, text: line.slice(1) }, changed: false });
    }
  }
  flush();
  return rows;
}

function Cells({ side, cls }: { side: Side | null; cls: "add" | "del" | "" }) {
  if (!side) return <td class="empty" colSpan={2} />;
  return (
    <>
      <td class={"ln " + cls}>{side.no}</td>
      <td class={cls}>
        <Words text={side.text} pieces={side.pieces ?? null} kind={cls} />
      </td>
    </>
  );
}

/** The same diff as two columns: the older text on the left, the newer on the right. */
function SideBySideDiff({ unified }: { unified: string }) {
  const rows = sideBySide(unified);
  return (
    <table class="diff diff-split" data-testid="diff-split">
      <tbody>
        {rows.map((r, i) =>
          r.hunk ? (
            <tr key={i} class="hunk">
              <td colSpan={4}>{r.hunk}</td>
            </tr>
          ) : (
            <tr key={i}>
              <Cells side={r.left} cls={r.changed ? "del" : ""} />
              <Cells side={r.right} cls={r.changed ? "add" : ""} />
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}

/** Two columns of code do not fit a phone: at this width and below the diff is inline
 *  whatever layout was chosen (the choice is kept for wider screens). */
const NARROW = "(max-width: 700px)";

/** Whether the media query matches, following changes (rotation, a resized window). */
function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => window.matchMedia?.(query).matches ?? false);
  useEffect(() => {
    const mq = window.matchMedia?.(query);
    if (!mq) return;
    const on = () => setMatches(mq.matches);
    on();
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, [query]);
  return matches;
}

const LAYOUT_KEY = "cairn.diffLayout";
function storedLayout(): "inline" | "split" {
  try {
    return localStorage.getItem(LAYOUT_KEY) === "split" ? "split" : "inline";
  } catch {
    return "inline";
  }
}

/** Asks before restoring a revision, and says which title the page will have: the one
 *  the revision had (the default), or — when they differ — the current one if kept. */
function RestoreDialog({ slug, rev, current, onClose }: { slug: string; rev: Revision; current: string; onClose: () => void }) {
  const [keep, setKeep] = useState(false);
  const action = useAction();
  const differs = rev.title !== current;
  async function submit(e: Event) {
    e.preventDefault();
    await action.run(async () => {
      await api.restoreRevision(slug, rev.sha, differs && keep);
      await pagesChanged();
      onClose();
      await navigate(pageHref(slug));
    });
  }
  return (
    <Dialog title={t("history.restore_revision")} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <p class="confirm-message">{t("history.restore_confirm", { date: formatDate(rev.created_at) })}</p>
        {differs ? (
          <fieldset class="title-choice">
            <legend>{t("history.restore_title")}</legend>
            <label>
              <input type="radio" name="restore-title" checked={!keep} onChange={() => setKeep(false)} />
              {t("history.restore_title_revision", { title: rev.title })}
            </label>
            <label>
              <input type="radio" name="restore-title" checked={keep} onChange={() => setKeep(true)} />
              {t("history.restore_title_current", { title: current })}
            </label>
          </fieldset>
        ) : (
          <p data-testid="restore-title">{t("history.restore_title_same", { title: current })}</p>
        )}
        <FormError error={action.error} />
        <DialogActions onCancel={onClose} submit={t("page.restore")} disabled={action.busy} />
      </form>
    </Dialog>
  );
}

/** Asks before erasing a revision's content, saying plainly what that does and does not do. */
function EraseDialog({
  slug,
  rev,
  onClose,
  onErased,
}: {
  slug: string;
  rev: Revision;
  onClose: () => void;
  onErased: (sha: string) => Promise<void>;
}) {
  const action = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    await action.run(async () => onErased((await api.eraseRevision(slug, rev.sha)).sha));
  }
  return (
    <Dialog title={t("history.erase_title")} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <p class="confirm-message">{t("history.erase_confirm", { date: formatDate(rev.created_at) })}</p>
        <ul class="confirm-items">
          <li>{t("history.erase_gone")}</li>
          <li>{t("history.erase_backups")}</li>
          <li>{t("history.erase_rotate")}</li>
        </ul>
        <FormError error={action.error} />
        <DialogActions onCancel={onClose} submit={t("history.erase_submit")} danger disabled={action.busy} />
      </form>
    </Dialog>
  );
}

type Tab = "diff" | "content";
type Against = "previous" | "current";
/** How a revision is being looked at, kept across its erasure (which gives it a new id). */
interface ViewState {
  tab: Tab;
  against: Against;
}

function RevisionView({
  slug,
  sha,
  latest,
  canErase,
  initial,
  onErased,
}: {
  slug: string;
  sha: string;
  latest: string | null;
  /** The caller owns the workspace (the server decides; this only hides the action). */
  canErase: boolean;
  initial?: ViewState;
  onErased: (sha: string, view: ViewState) => Promise<void>;
}) {
  const [rev, setRev] = useState<Revision | null>(null);
  const [diff, setDiff] = useState<Diff | null>(null);
  const [against, setAgainst] = useState<Against>(initial?.against ?? "previous");
  const [tab, setTab] = useState<Tab>(initial?.tab ?? "diff");
  const [layout, setLayoutState] = useState(storedLayout);
  const narrow = useMedia(NARROW);
  const setLayout = (l: "inline" | "split") => {
    setLayoutState(l);
    try {
      localStorage.setItem(LAYOUT_KEY, l);
    } catch {
      /* private mode */
    }
  };
  const [error, setError] = useState<ErrorText>("");
  /** The page's current title while the restore dialog is open. */
  const [restoring, setRestoring] = useState<string | null>(null);
  const [erasing, setErasing] = useState(false);

  useEffect(() => {
    api.revision(slug, sha).then(setRev, (e) => setError(failure(e)));
  }, [slug, sha]);
  useEffect(() => {
    setDiff(null);
    const base = against === "current" && latest ? latest : undefined;
    // "Compared with current": how the current version differs from this one.
    const req = base ? api.diff(slug, base, sha) : api.diff(slug, sha);
    req.then(setDiff, (e) => setError(failure(e)));
  }, [slug, sha, against, latest]);

  const rendered = useRendered(rev?.content ?? "", slug, rev?.title);

  /** Opens the restore dialog with the page's title as it is now (read afresh: a rename
   *  may have come since the history was listed). */
  async function restore() {
    try {
      setRestoring((await api.page(slug)).title);
    } catch (e) {
      setError(failure(e));
    }
  }

  if (error) return <FormError error={error} />;
  if (!rev) return <p class="muted">{t("common.loading")}</p>;
  return (
    <section class="revision" data-testid="revision">
      <h2>
        {t("history.revision")} <code class="sha">{short(rev.sha)}</code>
      </h2>
      <p class="muted">
        {rev.author.name} · {formatDate(rev.created_at)} {rev.message && <>· {rev.message}</>}
      </p>
      <div class="editor-bar">
        <button type="button" class={tab === "diff" ? "primary" : ""} aria-pressed={tab === "diff"} onClick={() => setTab("diff")}>
          {t("page.diff")}
        </button>
        <button
          type="button"
          class={tab === "content" ? "primary" : ""}
          aria-pressed={tab === "content"}
          onClick={() => setTab("content")}
        >
          {t("page.view")}
        </button>
        {tab === "diff" && !narrow && (
          <div class="segmented" role="group" aria-label={t("history.diff_layout")}>
            <button type="button" class="small" aria-pressed={layout === "inline"} onClick={() => setLayout("inline")}>
              {t("history.diff_inline")}
            </button>
            <button type="button" class="small" aria-pressed={layout === "split"} onClick={() => setLayout("split")}>
              {t("history.diff_side_by_side")}
            </button>
          </div>
        )}
        {tab === "diff" && latest && latest !== sha && (
          <label class="language-select">
            <input
              type="checkbox"
              checked={against === "current"}
              onChange={(e) => setAgainst(e.currentTarget.checked ? "current" : "previous")}
            />
            <span>{t("history.compare_with_current")}</span>
          </label>
        )}
        {latest !== sha && (
          <button type="button" class="primary" onClick={() => void restore()} data-testid="restore-revision">
            {t("history.restore_revision")}
          </button>
        )}
        {canErase && latest && latest !== sha && latest !== rev.sha && (
          <button type="button" class="danger" onClick={() => setErasing(true)} data-testid="erase-revision">
            {t("history.erase")}
          </button>
        )}
      </div>
      {tab === "diff" ? (
        diff ? (
          <>
            <p class="stats">
              <span class="add">+{diff.added}</span> <span class="del">−{diff.removed}</span>
            </p>
            {layout === "split" && !narrow ? <SideBySideDiff unified={diff.unified} /> : <DiffView unified={diff.unified} />}
            {!diff.unified.trim() && <p class="muted">{t("history.no_changes")}</p>}
          </>
        ) : (
          <p class="muted">{t("common.loading")}</p>
        )
      ) : (
        <MarkdownBody html={rendered.html} class="page-content" />
      )}
      {restoring !== null && <RestoreDialog slug={slug} rev={rev} current={restoring} onClose={() => setRestoring(null)} />}
      {erasing && (
        <EraseDialog
          slug={slug}
          rev={rev}
          onClose={() => setErasing(false)}
          onErased={async (next) => {
            setErasing(false);
            await onErased(next, { tab, against });
          }}
        />
      )}
    </section>
  );
}

export function History({ slug, sha }: { slug: string; sha: string | null }) {
  useI18n();
  useStore(titles);
  const version = useStore(pagesVersion);
  const [items, setItems] = useState<HistoryEntry[] | null>(null);
  const [error, setError] = useState<ErrorText>("");
  /** The revision just erased, by its new id, and how it was being looked at. */
  const [erased, setErased] = useState<({ sha: string } & ViewState) | null>(null);
  const ws = useStore(currentWorkspace);
  // The server's word on what the caller may do here, never a copy of the owner rule.
  const owner = useStore(workspaces).find((w) => w.slug === ws)?.can.erase_history === true;
  const title = titles.get().get(slug) ?? slug;

  useEffect(() => {
    document.title = `${t("history.title")} · ${title}`;
    api.history(slug).then(
      (r) => setItems(r.items),
      (e) => setError(failure(e)),
    );
  }, [slug, version]);

  // An old address of a renamed page (the API follows it with a 308): the history is the
  // page's, shown at its current address. Asked only for a slug the tree does not know.
  useEffect(() => {
    if (titles.get().has(slug)) return;
    api.page(slug).then(
      (p) => {
        if (p.slug !== slug) void navigate(pageHref(p.slug, sha ? `history/${sha}` : "history"), { replace: true });
      },
      () => undefined,
    );
  }, [slug]);

  const latest = items?.[0]?.sha ?? null;

  /** After an erase every revision id from that one on has changed: the same revision is
   *  shown again by its new id (its content read afresh) and the history is read again. */
  async function onErased(next: string, view: ViewState) {
    setErased({ sha: next, ...view });
    await navigate(pageHref(slug, `history/${next}`), { replace: true });
    await pagesChanged();
  }
  return (
    <div class="history">
      <nav class="breadcrumbs" aria-label={t("page.breadcrumbs")}>
        <ol>
          <li>
            <a href={pageHref(slug)}>{title}</a>
          </li>
          <li aria-current="page">{t("history.title")}</li>
        </ol>
      </nav>
      <h1>{t("history.title")}</h1>
      <FormError error={error} />
      {erased && erased.sha === sha && <Notice text={t("history.erased", { revision: short(erased.sha) })} />}
      {items === null && !error && <p class="muted">{t("common.loading")}</p>}
      {items && items.length === 0 && <p class="muted">{t("history.empty")}</p>}
      {items && items.length > 0 && (
        <table class="list-table" data-testid="history-list">
          <thead>
            <tr>
              <th>{t("history.revision")}</th>
              <th>{t("history.author")}</th>
              <th>{t("history.date")}</th>
              <th>{t("history.message")}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((h) => (
              <tr key={h.sha} class={h.sha === sha ? "current" : ""}>
                <td>
                  <a href={pageHref(slug, `history/${h.sha}`)} class="sha">
                    {short(h.sha)}
                  </a>
                </td>
                <td>{h.author.name}</td>
                <td>{formatDate(h.created_at)}</td>
                <td>{h.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sha && (
        <RevisionView
          key={sha}
          slug={slug}
          sha={sha}
          latest={latest}
          canErase={owner}
          initial={erased?.sha === sha ? erased : undefined}
          onErased={onErased}
        />
      )}
    </div>
  );
}
