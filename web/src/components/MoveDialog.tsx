// The move dialog's form ("⋯" → Move): the new parent is found by searching the
// workspace's pages, not picked from one <select> of every page. Its own chunk, loaded
// when the dialog opens (PageActions.tsx).
import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, type Page, type TreeNode } from "../api";
import { t, useI18n } from "../i18n";
import { pagesChanged, tree } from "../session";
import { useStore } from "../store";
import { DialogActions, FormError, useAction } from "./Form";
import { useListbox } from "./listbox";

/** A page the moved page can go under, with the titles of its ancestors (to tell apart
 *  pages of the same title). */
interface ParentChoice {
  slug: string;
  title: string;
  path: string;
}

function choices(nodes: TreeNode[], skip: string, path: string[] = [], out: ParentChoice[] = []): ParentChoice[] {
  for (const n of nodes) {
    if (n.slug === skip) continue; // a page cannot move into its own subtree
    const title = n.title || n.slug;
    out.push({ slug: n.slug, title, path: path.join(" › ") });
    choices(n.children ?? [], skip, [...path, title], out);
  }
  return out;
}

/** How the search compares: case and accents ignored. */
const fold = (s: string) => s.normalize("NFD").replace(/\p{M}/gu, "").toLocaleLowerCase();

/** At most this many matches are listed: the search narrows a large workspace. */
const SHOWN_CHOICES = 50;

/** The new parent, found by searching the workspace's pages (a combobox over a listbox:
 *  type to filter, arrows move, Enter or a click chooses; "top level" is always first).
 *  A workspace of thousands of pages is one short list away, not one long <select>. */
function ParentPicker({ page, parent, onChoose }: { page: Page; parent: string; onChoose: (slug: string) => void }) {
  const nodes = useStore(tree) ?? [];
  const all = useMemo(() => choices(nodes, page.slug), [nodes, page.slug]);
  const [query, setQuery] = useState("");
  const q = fold(query.trim());
  const matching = q ? all.filter((c) => fold(c.title).includes(q) || fold(c.slug).includes(q)) : all;
  const top: ParentChoice = { slug: "", title: t("page.move.top_level"), path: "" };
  const options = [top, ...matching.slice(0, SHOWN_CHOICES)];
  const { current, setActive, move } = useListbox(options.length, "move-choice-");
  const chosenTitle = parent ? (all.find((c) => c.slug === parent)?.title ?? parent) : "";
  const input = useRef<HTMLInputElement>(null);
  // Focused when it appears (the dialog opened before this chunk had loaded).
  useLayoutEffect(() => input.current?.focus(), []);

  function onKeyDown(e: KeyboardEvent) {
    if (move(e)) return;
    if (e.key === "Enter" && options[current]!.slug !== parent) {
      // Enter chooses the highlighted page; once it is the choice, Enter moves the page.
      e.preventDefault();
      onChoose(options[current]!.slug);
    }
  }

  return (
    <div class="parent-picker">
      <label>
        <span id="move-parent-label">{t("page.move.parent")}</span>
        <input
          ref={input}
          role="combobox"
          aria-expanded="true"
          aria-controls="move-choices"
          aria-autocomplete="list"
          aria-activedescendant={`move-choice-${current}`}
          placeholder={t("page.move.search")}
          value={query}
          onInput={(e) => {
            setQuery(e.currentTarget.value);
            setActive(0);
          }}
          onKeyDown={onKeyDown}
        />
      </label>
      <ul id="move-choices" role="listbox" aria-labelledby="move-parent-label" class="choice-list">
        {options.map((o, i) => (
          <li
            key={o.slug}
            id={`move-choice-${i}`}
            role="option"
            aria-selected={o.slug === parent}
            class={"choice" + (i === current ? " active" : "") + (o.slug === parent ? " chosen" : "")}
            onMouseDown={(e) => {
              e.preventDefault(); // the search box keeps the focus
              setActive(i);
              onChoose(o.slug);
            }}
          >
            <span class="choice-title">{o.title}</span>
            {o.path && <small class="muted">{o.path}</small>}
          </li>
        ))}
      </ul>
      {q && matching.length === 0 && <p class="muted picker-note">{t("page.move.none")}</p>}
      {matching.length > SHOWN_CHOICES && (
        <p class="muted picker-note">{t("page.move.more", { count: matching.length - SHOWN_CHOICES })}</p>
      )}
      <p class="muted picker-note" role="status">
        {parent ? t("page.move.chosen", { title: chosenTitle }) : t("page.move.chosen_top")}
      </p>
    </div>
  );
}

export function MoveForm({ page, onClose }: { page: Page; onClose: () => void }) {
  useI18n();
  const [parent, setParent] = useState(page.parent ?? "");
  const action = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    await action.run(async () => {
      await api.movePage(page.slug, parent || null);
      await pagesChanged();
      onClose();
    });
  }
  return (
    <form class="form" onSubmit={submit}>
      <ParentPicker page={page} parent={parent} onChoose={setParent} />
      <FormError error={action.error} />
      <DialogActions
        onCancel={onClose}
        submit={t("page.move")}
        disabled={action.busy || (page.parent ?? "") === parent}
      />
    </form>
  );
}
