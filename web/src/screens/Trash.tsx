// The trash: pages deleted together (one delete of a page with its subpages) are one
// group, shown as the top page with its subpages nested under it; a group is restored,
// or purged for good (after a confirmation), with one action. Any trashed page can be
// previewed (rendered) before restoring.
import { useEffect, useState } from "preact/hooks";
import { api, type TrashEntry, type TrashedPage } from "../api";
import { confirmDialog, Dialog } from "../components/Dialog";
import { FormError } from "../components/Form";
import { MarkdownBody, useRendered } from "../components/Markdown";
import { failure, type ErrorText } from "../errors";
import { formatDate, t, useI18n } from "../i18n";
import { pageHref } from "../router";
import { currentWorkspace, pagesChanged, pagesVersion } from "../session";
import { useStore } from "../store";

/** A trashed page and the pages of its group that were under it. */
interface TrashNode {
  entry: TrashEntry;
  children: TrashNode[];
}

/** One delete's pages: its top page (with the rest nested under it) and how many. */
interface TrashGroup {
  top: TrashNode;
  size: number;
}

/** Groups the trash by `group` (the server gives every entry one) and nests each
 *  group's pages by the parent they had. Newest deletes first. */
function groupTrash(items: TrashEntry[]): TrashGroup[] {
  const byGroup = new Map<string, TrashEntry[]>();
  for (const it of items) {
    byGroup.set(it.group, [...(byGroup.get(it.group) ?? []), it]);
  }
  const groups: TrashGroup[] = [];
  for (const members of byGroup.values()) {
    const nodes = new Map(members.map((e) => [e.slug, { entry: e, children: [] } as TrashNode]));
    const tops: TrashNode[] = [];
    for (const node of nodes.values()) {
      const parent = node.entry.parent ? nodes.get(node.entry.parent) : undefined;
      if (parent && parent !== node) parent.children.push(node);
      else tops.push(node);
    }
    // One delete has one top page; should a group hold more (data from elsewhere), each
    // is shown as a group of its own rather than hidden.
    const count = (n: TrashNode): number => 1 + n.children.reduce((s, c) => s + count(c), 0);
    for (const top of tops) groups.push({ top, size: count(top) });
  }
  return groups.sort((a, b) => b.top.entry.deleted_at.localeCompare(a.top.entry.deleted_at));
}

function flatten(node: TrashNode): TrashEntry[] {
  return [node.entry, ...node.children.flatMap(flatten)];
}

/** A trashed page rendered, with its restore action (GET /api/trash/{slug}). */
function Preview({ slug, onRestore, onClose }: { slug: string; onRestore: () => void; onClose: () => void }) {
  const [page, setPage] = useState<TrashedPage | null>(null);
  const [error, setError] = useState<ErrorText>("");
  useEffect(() => {
    let live = true;
    api.trashedPage(slug).then(
      (p) => live && setPage(p),
      (e) => live && setError(failure(e)),
    );
    return () => {
      live = false;
    };
  }, [slug]);
  return (
    <Dialog title={t("trash.preview_title", { title: page?.title ?? slug })} onClose={onClose} wide>
      <FormError error={error} />
      {!page && !error && <p class="muted">{t("common.loading")}</p>}
      {page && (
        <>
          <p class="muted">
            {t("trash.deleted_by", { author: page.deleted_by.name, date: formatDate(page.deleted_at) })}
          </p>
          <PreviewBody page={page} />
        </>
      )}
      <div class="dialog-actions">
        <button type="button" onClick={onClose}>
          {t("common.close")}
        </button>
        <button type="button" class="primary" disabled={!page} onClick={onRestore}>
          {t("trash.restore")}
        </button>
      </div>
    </Dialog>
  );
}

function PreviewBody({ page }: { page: TrashedPage }) {
  // The dialog's heading names the page: its first heading is left out, as on the page view.
  const rendered = useRendered(page.content, page.slug, page.title);
  return <MarkdownBody html={rendered.html} class="trash-preview" />;
}

/** One row: a page of a group; the top page's row carries the group's actions. */
function Row({
  node,
  depth,
  group,
  busy,
  onPreview,
  onRestore,
  onPurge,
}: {
  node: TrashNode;
  depth: number;
  group: TrashGroup;
  busy: boolean;
  onPreview: (slug: string) => void;
  onRestore: (g: TrashGroup) => void;
  onPurge: (g: TrashGroup) => void;
}) {
  const it = node.entry;
  const top = depth === 0;
  return (
    <>
      <tr data-slug={it.slug} class={top ? "trash-top" : "trash-sub"}>
        <td style={{ paddingInlineStart: `${0.5 + depth * 1.5}rem` }}>
          <strong>{it.title}</strong>
          {top ? (
            <div class="muted">
              {t("trash.deleted_by", { author: it.deleted_by.name, date: formatDate(it.deleted_at) })}
              {group.size > 1 && <> · {t("trash.with_subpages", { count: group.size - 1 })}</>}
            </div>
          ) : (
            <div class="muted">{t("trash.subpage_of", { title: group.top.entry.title })}</div>
          )}
        </td>
        <td>
          <div class="row-actions">
            <button
              type="button"
              class="small"
              aria-label={`${t("trash.preview")}: ${it.title}`}
              onClick={() => onPreview(it.slug)}
            >
              {t("trash.preview")}
            </button>
            {top && (
              <>
                <button
                  type="button"
                  class="small"
                  disabled={busy}
                  aria-label={`${t("trash.restore")}: ${it.title}`}
                  onClick={() => onRestore(group)}
                >
                  {t("trash.restore")}
                </button>
                <button
                  type="button"
                  class="small danger"
                  disabled={busy}
                  aria-label={`${t("trash.delete_forever")}: ${it.title}`}
                  onClick={() => onPurge(group)}
                >
                  {t("trash.delete_forever")}
                </button>
              </>
            )}
          </div>
        </td>
      </tr>
      {node.children.map((c) => (
        <Row key={c.entry.slug} {...{ node: c, depth: depth + 1, group, busy, onPreview, onRestore, onPurge }} />
      ))}
    </>
  );
}

export function Trash() {
  useI18n();
  const ws = useStore(currentWorkspace);
  const version = useStore(pagesVersion);
  const [items, setItems] = useState<TrashEntry[] | null>(null);
  const [error, setError] = useState<ErrorText>("");
  const [notice, setNotice] = useState<{ text: string; slug?: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [previewing, setPreviewing] = useState<string | null>(null);

  useEffect(() => {
    document.title = t("trash.title");
    api.trash().then(
      (r) => setItems(r.items),
      (e) => setError(failure(e)),
    );
  }, [ws, version]);

  async function act(fn: () => Promise<void>) {
    setError("");
    setBusy(true);
    try {
      await fn();
    } catch (e) {
      setError(failure(e));
    } finally {
      setBusy(false);
    }
  }

  /** Restores a page; the server brings back the pages trashed with it, under it. */
  const restore = (slug: string) =>
    act(async () => {
      setPreviewing(null);
      const page = await api.restoreFromTrash(slug);
      await pagesChanged();
      setNotice({ text: t("trash.restored", { title: page.title }), slug: page.slug });
    });

  async function purge(group: TrashGroup) {
    const all = flatten(group.top);
    const title = group.top.entry.title;
    const subpages = all.slice(1).map((e) => e.title);
    const question = subpages.length
      ? t("trash.delete_group_forever_confirm", { title, count: subpages.length })
      : t("trash.delete_forever_confirm", { title });
    const ok = await confirmDialog(question, {
      confirmLabel: t("trash.delete_forever"),
      danger: true,
      items: subpages,
    });
    if (!ok) return;
    // Subpages first, so no page is ever left pointing at a parent that is gone.
    await act(async () => {
      for (const e of all.reverse()) await api.purge(e.slug);
      await pagesChanged();
      setNotice({ text: t("trash.purged", { title }) });
    });
  }

  const groups = items ? groupTrash(items) : [];
  return (
    <div class="trash">
      <h1>{t("trash.title")}</h1>
      {notice && (
        <p class="notice" role="status">
          {notice.slug ? <a href={pageHref(notice.slug)}>{notice.text}</a> : notice.text}
        </p>
      )}
      <FormError error={error} />
      {items === null ? (
        !error && <p class="muted">{t("common.loading")}</p>
      ) : items.length === 0 ? (
        <p class="muted" data-testid="trash-empty">
          {t("trash.empty")}
        </p>
      ) : (
        <table class="list-table" data-testid="trash-list">
          {groups.map((g) => (
            <tbody key={g.top.entry.slug} data-group={g.top.entry.slug} class="trash-group">
              <Row
                node={g.top}
                depth={0}
                group={g}
                busy={busy}
                onPreview={setPreviewing}
                onRestore={(gr) => void restore(gr.top.entry.slug)}
                onPurge={(gr) => void purge(gr)}
              />
            </tbody>
          ))}
        </table>
      )}
      {previewing && (
        <Preview slug={previewing} onClose={() => setPreviewing(null)} onRestore={() => void restore(previewing)} />
      )}
    </div>
  );
}
