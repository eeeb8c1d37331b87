// A page's actions: edit, history, rename, move, move up/down among its siblings, delete (to
// the trash).
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, type Page, type TreeNode } from "../api";
import { failure, type ErrorText } from "../errors";
import { t, useI18n } from "../i18n";
import { deriveSlug } from "../markdown/slug";
import { appHref, navigate, pageHref } from "../router";
import { stepPage, stepTarget } from "../order";
import { pagesVersion, reloadTree, tree, treeReady } from "../session";
import { useStore } from "../store";
import { confirmDialog, Dialog } from "./Dialog";
import { DialogActions, Field, FormError, useAction } from "./Form";
import { Menu, MenuItem } from "./Menu";

/** An href as a person reads it (letters of any script, not %-escapes). */
function readableHref(href: string): string {
  try {
    return decodeURI(href);
  } catch {
    return href;
  }
}

function RenameDialog({ page, onClose }: { page: Page; onClose: () => void }) {
  const [title, setTitle] = useState(page.title);
  const [slug, setSlug] = useState(page.slug);
  const [slugEdited, setSlugEdited] = useState(false);
  const action = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    await action.run(async () => {
      const renamed = await api.renamePage(page.slug, slug.trim(), title.trim() !== page.title ? title.trim() : undefined);
      onClose();
      await leaveFor(pageHref(renamed.slug));
    });
  }
  return (
    <Dialog title={t("page.rename")} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <Field
          label={t("page.title_placeholder")}
          name="title"
          value={title}
          autoFocus
          onValue={(v) => {
            setTitle(v);
            if (!slugEdited) setSlug(deriveSlug(v) || page.slug);
          }}
        />
        <Field
          label={t("page.path")}
          name="slug"
          value={slug}
          onValue={(v) => {
            setSlug(v);
            setSlugEdited(true);
          }}
          hint={readableHref(pageHref(slug))}
        />
        <FormError error={action.error} />
        <DialogActions
          onCancel={onClose}
          submit={t("page.rename")}
          disabled={action.busy || !slug.trim() || (slug === page.slug && title === page.title)}
        />
      </form>
    </Dialog>
  );
}

type MoveFormProps = { page: Page; onClose: () => void };

/** The move dialog. Its page search is downloaded when it is first opened (the page view
 *  does not need it); until then the dialog shows, and Cancel and Escape work. */
function MoveDialog({ page, onClose }: MoveFormProps) {
  const [Form, setForm] = useState<ComponentType<MoveFormProps> | null>(null);
  const [error, setError] = useState<ErrorText>("");
  useEffect(() => {
    import("./MoveDialog").then(
      (m) => setForm(() => m.MoveForm),
      () => setError(t("common.offline")),
    );
  }, []);
  return (
    <Dialog title={t("page.move")} onClose={onClose}>
      {Form ? (
        <Form page={page} onClose={onClose} />
      ) : (
        <form class="form" onSubmit={(e) => e.preventDefault()}>
          {error ? <FormError error={error} /> : <p class="muted">{t("common.loading")}</p>}
          <DialogActions onCancel={onClose} submit={t("page.move")} disabled />
        </form>
      )}
    </Dialog>
  );
}

/** The titles of every page under `slug` in the tree (depth first), or null when the
 *  page is not in it. */
function subpageTitles(nodes: TreeNode[], slug: string): string[] | null {
  for (const n of nodes) {
    if (n.slug === slug) {
      const out: string[] = [];
      const walk = (kids: TreeNode[]) => kids.forEach((k) => (out.push(k.title), walk(k.children ?? [])));
      walk(n.children ?? []);
      return out;
    }
    const found = subpageTitles(n.children ?? [], slug);
    if (found) return found;
  }
  return null;
}

/** How many subpages a confirmation names before "and N more". */
const NAMED_SUBPAGES = 10;

/** Asks once whether to move the page, and the subpages the tree shows under it, to the
 *  trash. */
function confirmDelete(page: Page, subpages: string[]): Promise<boolean> {
  const opts = { confirmLabel: t("page.delete"), danger: true };
  if (subpages.length === 0) return confirmDialog(t("page.delete_confirm", { title: page.title }), opts);
  const named = subpages.slice(0, NAMED_SUBPAGES);
  const more = subpages.length - named.length;
  return confirmDialog(t("page.delete_with_subpages_confirm", { title: page.title, count: subpages.length }), {
    ...opts,
    items: more > 0 ? [...named, t("page.delete_more_subpages", { count: more })] : named,
  });
}

async function deletePage(page: Page): Promise<void> {
  // The tree tells which subpages go with the page, so the one question can name them.
  await treeReady();
  const subpages = subpageTitles(tree.get() ?? [], page.slug) ?? [];
  if (!(await confirmDelete(page, subpages))) return;
  try {
    await api.deletePage(page.slug, subpages.length > 0);
  } catch (e) {
    // A subpage made elsewhere since the tree was read: ask again, naming it.
    if (!(e instanceof ApiError && e.code === "page_has_children")) throw e;
    await reloadTree();
    if (!(await confirmDelete(page, subpageTitles(tree.get() ?? [], page.slug) ?? []))) return;
    await api.deletePage(page.slug, true);
  }
  await leaveFor(page.parent ? pageHref(page.parent) : appHref(""));
}

/** Leaves a page that was just renamed or deleted for `href`. The tree is read first (the
 *  home screen picks a page from it, and must not pick the deleted one); then the screens
 *  are told that pages changed in the same render as the route change, which unmounts the
 *  old page view before it can reload: before, it asked for the page again at an address
 *  that no longer held it (a 404 after every delete). */
async function leaveFor(href: string): Promise<void> {
  await reloadTree();
  pagesVersion.set(pagesVersion.get() + 1);
  await navigate(href, { replace: true, force: true });
}

export function PageActions({
  page,
  suggestions,
  onToggleSuggestions,
}: {
  page: Page;
  suggestions: boolean;
  onToggleSuggestions: () => void;
}) {
  useI18n();
  const [dialog, setDialog] = useState<"rename" | "move" | null>(null);
  const [error, setError] = useState<ErrorText>("");
  // Up/down follow the tree's order (the server's); they show once the tree is read and the
  // page has siblings, and are disabled at the ends.
  const nodes = useStore(tree);
  const canUp = nodes ? stepTarget(nodes, page.slug, -1) !== undefined : false;
  const canDown = nodes ? stepTarget(nodes, page.slug, 1) !== undefined : false;
  const step = (delta: -1 | 1) => {
    setError("");
    stepPage(page.slug, delta).catch((e) => setError(failure(e)));
  };
  return (
    <div class="page-actions">
      <a class="button primary" href={pageHref(page.slug, "edit")} data-testid="edit-page">
        {t("page.edit")}
      </a>
      <a class="button" href={pageHref(page.slug, "history")}>
        {t("page.history")}
      </a>
      <button type="button" class={suggestions ? "primary" : ""} aria-pressed={suggestions} onClick={onToggleSuggestions} data-testid="toggle-suggestions">
        {t("intel.suggestions")}
      </button>
      <Menu label="⋯" buttonClass="button" buttonTitle={t("page.more_actions")} testId="page-more">
        {(close) => (
          <>
            <MenuItem close={close} onClick={() => setDialog("rename")}>
              {t("page.rename")}
            </MenuItem>
            <MenuItem close={close} onClick={() => setDialog("move")}>
              {t("page.move")}
            </MenuItem>
            {(canUp || canDown) && (
              <>
                <MenuItem close={close} disabled={!canUp} onClick={() => step(-1)}>
                  {t("page.move_up")}
                </MenuItem>
                <MenuItem close={close} disabled={!canDown} onClick={() => step(1)}>
                  {t("page.move_down")}
                </MenuItem>
              </>
            )}
            <a role="menuitem" class="menu-item" href={`/api/pages/${encodeURIComponent(page.slug)}/raw?ws=${encodeURIComponent(page.workspace)}`} target="_blank" rel="noopener" onClick={close}>
              {t("page.raw")}
            </a>
            <hr />
            <MenuItem close={close} danger onClick={() => void deletePage(page).catch((e) => setError(failure(e)))}>
              {t("page.delete")}
            </MenuItem>
          </>
        )}
      </Menu>
      <FormError error={error} />
      {dialog === "rename" && <RenameDialog page={page} onClose={() => setDialog(null)} />}
      {dialog === "move" && <MoveDialog page={page} onClose={() => setDialog(null)} />}
    </div>
  );
}
