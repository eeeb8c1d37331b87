// The trash: restore a page, or purge it for good (after a confirmation).
import { useEffect, useState } from "preact/hooks";
import { api, type TrashEntry } from "../api";
import { confirmDialog } from "../components/Dialog";
import { FormError } from "../components/Form";
import { failure, type ErrorText } from "../errors";
import { formatDate, t, useI18n } from "../i18n";
import { pageHref } from "../router";
import { currentWorkspace, pagesChanged, pagesVersion } from "../session";
import { useStore } from "../store";

function who(by: TrashEntry["deleted_by"]): string {
  return by?.name ?? "";
}

export function Trash() {
  useI18n();
  const ws = useStore(currentWorkspace);
  const version = useStore(pagesVersion);
  const [items, setItems] = useState<TrashEntry[] | null>(null);
  const [error, setError] = useState<ErrorText>("");
  const [notice, setNotice] = useState<{ text: string; slug?: string } | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    document.title = t("trash.title");
    api.trash().then(
      (r) => setItems(r.items),
      (e) => setError(failure(e)),
    );
  }, [ws, version]);

  async function restore(entry: TrashEntry) {
    setError("");
    setBusy(true);
    try {
      const page = await api.restoreFromTrash(entry.slug);
      await pagesChanged();
      setNotice({ text: t("trash.restored", { title: page.title }), slug: page.slug });
    } catch (e) {
      setError(failure(e));
    } finally {
      setBusy(false);
    }
  }

  async function purge(entry: TrashEntry) {
    if (
      !(await confirmDialog(t("trash.delete_forever_confirm", { title: entry.title }), {
        confirmLabel: t("trash.delete_forever"),
        danger: true,
      }))
    )
      return;
    setError("");
    setBusy(true);
    try {
      await api.purge(entry.slug);
      await pagesChanged();
      setNotice({ text: t("trash.purged", { title: entry.title }) });
    } catch (e) {
      setError(failure(e));
    } finally {
      setBusy(false);
    }
  }

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
          <tbody>
            {items.map((it) => (
              <tr key={it.slug} data-slug={it.slug}>
                <td>
                  <strong>{it.title}</strong>
                  <div class="muted">
                    {t("trash.deleted_by", { author: who(it.deleted_by), date: formatDate(it.deleted_at) })}
                  </div>
                </td>
                <td>
                  <div class="row-actions">
                    <button type="button" disabled={busy} onClick={() => void restore(it)}>
                      {t("trash.restore")}
                    </button>
                    <button type="button" class="danger" disabled={busy} onClick={() => void purge(it)}>
                      {t("trash.delete_forever")}
                    </button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
