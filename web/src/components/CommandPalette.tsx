// The command palette (Ctrl/Cmd+K): jump to a page (titles from the page tree at once,
// then keyword search results), create a page with the typed title, or run an action.
// Arrow keys move, Enter runs, Escape closes. ("/" focuses the header's search box.)
import { Fragment } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { t, useI18n } from "../i18n";
import { compareTitles } from "../order";
import { appHref, navigate, pageHref } from "../router";
import { signOut, titles } from "../session";
import { store, useStore } from "../store";
import { toggleTheme } from "../theme";
import { useListbox } from "./listbox";

interface Item {
  id: string;
  label: string;
  hint?: string;
  group: "pages" | "create" | "actions";
  run: () => void;
}

export const paletteOpen = store(false);

function actions(): Item[] {
  const go = (path: string) => () => void navigate(appHref(path));
  const list: [string, string, () => void][] = [
    ["new", t("page.new"), go("-/new")],
    ["trash", t("palette.go_trash"), go("-/trash")],
    ["settings", t("nav.settings"), go("-/settings")],
    ["workspace", t("workspace.settings"), go("-/workspace")],
    ["insights", t("nav.insights"), go("-/insights")],
    ["graph", t("nav.graph"), go("-/graph")],
    ["theme", t("palette.toggle_theme"), toggleTheme],
    ["signout", t("nav.sign_out"), () => void signOut()],
  ];
  return list.map(([id, label, run]) => ({ id: "action:" + id, label, group: "actions", run }));
}

/** Pages whose title (or slug) contains the text, those starting with it first. */
function titleMatches(q: string, all: Map<string, string>): Item[] {
  const needle = q.toLocaleLowerCase();
  const hits: { slug: string; title: string; rank: number }[] = [];
  for (const [slug, title] of all) {
    const low = title.toLocaleLowerCase();
    const at = low.indexOf(needle);
    if (at >= 0 || slug.includes(needle)) hits.push({ slug, title, rank: at === 0 ? 0 : at > 0 ? 1 : 2 });
  }
  hits.sort((a, b) => a.rank - b.rank || compareTitles(a, b)); // "Sprint 2" before "Sprint 10"
  return hits.slice(0, 8).map((h) => pageItem(h.slug, h.title));
}

function pageItem(slug: string, title: string): Item {
  return { id: "page:" + slug, label: title || slug, hint: slug, group: "pages", run: () => void navigate(pageHref(slug)) };
}

function Palette({ onClose }: { onClose: () => void }) {
  useI18n();
  const all = useStore(titles);
  const [q, setQ] = useState("");
  const [found, setFound] = useState<Item[]>([]);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    input.current?.focus();
    return () => before?.focus?.();
  }, []);

  // Keyword search adds pages whose text matches (debounced; older requests aborted).
  useEffect(() => {
    const query = q.trim();
    setFound([]);
    if (!query) return;
    const ctl = new AbortController();
    const timer = window.setTimeout(() => {
      api.search(query, "keyword", ctl.signal, 8).then(
        (res) => setFound(res.items.map((it) => pageItem(it.slug, it.title))),
        () => undefined,
      );
    }, 150);
    return () => {
      ctl.abort();
      window.clearTimeout(timer);
    };
  }, [q]);

  const query = q.trim();
  const byTitle = query ? titleMatches(query, all) : [];
  const seen = new Set(byTitle.map((i) => i.id));
  const pages = [...byTitle, ...found.filter((i) => !seen.has(i.id))].slice(0, 10);
  const low = query.toLocaleLowerCase();
  const acts = actions().filter((a) => !low || a.label.toLocaleLowerCase().includes(low));
  const create: Item[] = query
    ? [
        {
          id: "create",
          label: t("palette.create", { title: query }),
          group: "create",
          run: () => void navigate(appHref("-/new", { title: query })),
        },
      ]
    : [];
  const items = [...pages, ...acts, ...create];
  const { current, setActive, move } = useListbox(items.length, "palette-item-");

  function run(item: Item | undefined) {
    if (!item) return;
    onClose();
    item.run();
  }

  function onKeyDown(e: KeyboardEvent) {
    if (move(e)) return;
    if (e.key === "Enter") {
      e.preventDefault();
      run(items[current]);
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onClose();
    }
  }

  const heading = (group: Item["group"], i: number) =>
    i === 0 || items[i - 1]!.group !== group ? (
      group === "create" ? null : (
        <li role="presentation" class="palette-group">
          {group === "pages" ? t("nav.pages") : t("palette.actions")}
        </li>
      )
    ) : null;

  return (
    <div class="overlay palette-overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div class="palette" role="dialog" aria-modal="true" aria-label={t("palette.title")}>
        <input
          ref={input}
          class="palette-input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={items.length ? `palette-item-${current}` : undefined}
          aria-label={t("palette.title")}
          placeholder={t("palette.placeholder")}
          value={q}
          onInput={(e) => {
            setQ(e.currentTarget.value);
            setActive(0);
          }}
          onKeyDown={onKeyDown}
        />
        <ul id="palette-list" role="listbox" aria-label={t("palette.title")} class="palette-list">
          {items.map((it, i) => (
            <Fragment key={it.id}>
              {heading(it.group, i)}
              <li
                id={`palette-item-${i}`}
                role="option"
                aria-selected={i === current}
                class={"palette-item" + (i === current ? " active" : "")}
                onMouseDown={(e) => {
                  e.preventDefault();
                  run(it);
                }}
                onMouseMove={() => i !== current && setActive(i)}
              >
                <span>{it.label}</span>
                {it.hint && <small class="muted">{it.hint}</small>}
              </li>
            </Fragment>
          ))}
          {items.length === 0 && <li class="muted pad">{t("palette.no_matches")}</li>}
        </ul>
      </div>
    </div>
  );
}

/** Mounted once in the shell: Ctrl/Cmd+K toggles the palette. */
export function CommandPalette() {
  const open = useStore(paletteOpen);
  // A layout effect, attached in the same task that first paints the shell: a plain effect
  // waits for the next frame, and a Ctrl+K pressed before it was lost (seen in CI).
  useLayoutEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.key === "k" || e.key === "K") && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey) {
        e.preventDefault();
        paletteOpen.set(!paletteOpen.get());
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return open ? <Palette onClose={() => paletteOpen.set(false)} /> : null;
}
