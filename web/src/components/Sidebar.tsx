// The page tree: top-level pages first; a page's children are rendered when it is
// expanded (the tree route answers the whole tree at once, so expanding needs no
// request). The path to the page on screen is expanded by itself.
//
// It is an ARIA tree (role tree/treeitem/group) with a roving tabindex: the tree is one
// Tab stop; ArrowDown/Up move, ArrowRight expands or goes to the first child, ArrowLeft
// collapses or goes to the parent, Home/End go to the first/last row, Enter opens the
// page, a letter goes to the next page starting with it. The filter box above it keeps
// the pages whose title or slug holds its text, with their ancestors, expanded.
//
// Drag a page onto another to make it a child there (POST /api/pages/{slug}/move), or onto
// the "top level" zone shown while dragging. The server refuses a move into the page's own
// subtree (move_cycle), and that message is shown. Dropped on the upper or lower edge of a
// row (a line shows where), it goes before or after that page instead (order.ts): among
// its own siblings that is a reorder; beside pages of another parent it is moved there
// first, then ordered. The lower edge of an open page's row means "first of its children".
// Alt+ArrowUp/Down on a row moves the page one place among its siblings.
//
// The column's width is the user's: the separator beside it drags (or, focused, takes
// the arrow keys) and the width is kept in localStorage.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, type TreeNode } from "../api";
import { failure, type ErrorText } from "../errors";
import { t, useI18n } from "../i18n";
import { appHref, location, navigate, pageHref, pageRoute } from "../router";
import { childrenOf, orderNote, placePage, stepPage } from "../order";
import { currentWorkspace, pagesChanged, tree } from "../session";
import { store, useStore } from "../store";
import { FormError } from "./Form";

const expanded = store<Set<string>>(new Set());
/** A long list of siblings shows its first PAGE_SIZE entries, then "show more" (per parent,
 *  "" = top level): a workspace of 10,000 pages stays quick to open and to expand. */
const PAGE_SIZE = 200;
const shownCount = store<Map<string, number>>(new Map());

/** The slug of the page being dragged, and the last move's error. */
const dragging = store<string | null>(null);
const moveError = store<ErrorText>("");

async function moveTo(slug: string, parent: string | null): Promise<void> {
  moveError.set("");
  try {
    await api.movePage(slug, parent);
    if (parent) expanded.set(new Set([...expanded.get(), parent]));
    await pagesChanged();
  } catch (e) {
    moveError.set(failure(e));
  }
}

/** A drop target for a dragged page: `where` says what a drop at the pointer would do (or
 *  what to highlight), `drop` moves the dragged page there. The handlers accept only a
 *  page being dragged that `accepts` allows. */
function useDrop<T>(
  accepts: (slug: string) => boolean,
  where: (e: DragEvent) => T,
  drop: (slug: string, at: T) => void,
) {
  const [over, setOver] = useState<T | null>(null);
  const dragged = () => {
    const slug = dragging.get();
    return slug !== null && accepts(slug) ? slug : null;
  };
  return {
    over,
    handlers: {
      onDragOver: (e: DragEvent) => {
        if (dragged() === null) return;
        e.preventDefault();
        if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
        setOver(where(e));
      },
      onDragLeave: () => setOver(null),
      onDrop: (e: DragEvent) => {
        setOver(null);
        const slug = dragged();
        if (slug === null) return;
        e.preventDefault();
        dragging.set(null);
        drop(slug, where(e));
      },
    },
  };
}

/** The "top level" zone's drop handlers (rows have useRowDrop). */
function useTopLevelDrop() {
  const { over, handlers } = useDrop(
    () => true,
    () => true,
    (slug) => void moveTo(slug, null),
  );
  return { over: over === true, handlers };
}

/** Where on a row a dragged page is: its upper edge (before it), its middle (into it), its
 *  lower edge (after it). The edges are 30% of the row each: the middle stays the biggest,
 *  as making a child was the only drop before. */
type DropZone = "before" | "onto" | "after";

function zoneAt(e: DragEvent): DropZone {
  const box = (e.currentTarget as HTMLElement).getBoundingClientRect();
  const y = (e.clientY - box.top) / (box.height || 1);
  return y < 0.3 ? "before" : y > 0.7 ? "after" : "onto";
}

/** Drops on a page's row: into it (a child, by the move API), or before/after it. */
function useRowDrop(row: PageRow) {
  const self = row.node.slug;
  return useDrop<DropZone>(
    (slug) => slug !== self,
    zoneAt,
    (slug, zone) => {
      if (zone === "onto") return void moveTo(slug, self);
      const open = row.open && (row.node.children ?? []).length > 0;
      if (zone === "after" && open) return void placeFromDrop(slug, self, null);
      if (zone === "after") return void placeFromDrop(slug, row.parent, self);
      // Before this page: after the sibling above it (the dragged page left out), or first.
      const list = (childrenOf(tree.get() ?? [], row.parent) ?? []).filter((n) => n.slug !== slug);
      const i = list.findIndex((n) => n.slug === self);
      void placeFromDrop(slug, row.parent, i > 0 ? list[i - 1]!.slug : null);
    },
  );
}

async function placeFromDrop(slug: string, parent: string | null, after: string | null): Promise<void> {
  moveError.set("");
  try {
    await placePage(slug, parent, after);
    if (parent) expanded.set(new Set([...expanded.get(), parent]));
  } catch (e) {
    moveError.set(failure(e));
  }
}

function pathTo(nodes: TreeNode[], slug: string, trail: string[] = []): string[] | null {
  for (const n of nodes) {
    if (n.slug === slug) return trail;
    if (!n.children?.length) continue;
    trail.push(n.slug);
    if (pathTo(n.children, slug, trail)) return trail;
    trail.pop();
  }
  return null;
}

/** The slug of the page the URL shows, if it is one of the current workspace. */
function currentSlug(): string | null {
  const route = pageRoute(location.get().segments);
  if (!route || (route.ws && route.ws !== currentWorkspace.get())) return null;
  return route.slug;
}

// The rows on screen ------------------------------------------------------------------

/** A page's row: its node, depth, parent, whether it is open, and its children's rows. */
interface PageRow {
  kind: "page";
  key: string;
  node: TreeNode;
  level: number;
  parent: string | null;
  open: boolean;
  /** Shown as context only (the filter keeps it for a match below it). */
  context: boolean;
  kids: Level | null;
}

/** The "show N more" row at the end of a long list of siblings. */
interface MoreRow {
  kind: "more";
  key: string;
  level: number;
  parent: string | null;
  /** The parent's key in shownCount ("" = top level), how many to add, and the first of them. */
  list: string;
  count: number;
  next: string;
}

type Row = PageRow | MoreRow;
type Level = Row[];

interface LayoutContext {
  isOpen: (slug: string) => boolean;
  limits: Map<string, number>;
  current: string | null;
  trail: Set<string>;
  /** While filtering: the slugs that match (the others are their ancestors). */
  matches: Set<string> | null;
}

/** The siblings to render: the first `limit`, plus the one on the path to the current
 *  page, then a "show more" row for the rest. */
function layout(nodes: TreeNode[], parent: string | null, level: number, ctx: LayoutContext): Level {
  const list = parent ?? "";
  const limit = ctx.limits.get(list) ?? PAGE_SIZE;
  const shown = nodes.length > limit ? nodes.slice(0, limit) : nodes;
  const extra =
    shown === nodes ? [] : nodes.slice(limit).filter((n) => n.slug === ctx.current || ctx.trail.has(n.slug));
  const rows: Row[] = [...shown, ...extra].map((node) => {
    const hasKids = (node.children ?? []).length > 0;
    const open = hasKids && ctx.isOpen(node.slug);
    return {
      kind: "page",
      key: node.slug,
      node,
      level,
      parent,
      open,
      context: ctx.matches !== null && !ctx.matches.has(node.slug),
      kids: open ? layout(node.children, node.slug, level + 1, ctx) : null,
    };
  });
  const rest = nodes.length - shown.length - extra.length;
  if (rest > 0) {
    const next = nodes.slice(limit).find((n) => !extra.includes(n));
    const count = Math.min(rest, PAGE_SIZE);
    rows.push({ kind: "more", key: `more:${list}`, level, parent, list, count, next: next?.slug ?? "" });
  }
  return rows;
}

/** Every row in reading order (what the arrow keys walk through). */
function flatten(level: Level, out: Row[] = []): Row[] {
  for (const row of level) {
    out.push(row);
    if (row.kind === "page" && row.kids) flatten(row.kids, out);
  }
  return out;
}

/** How a filter compares: case and accents ignored. */
function fold(s: string): string {
  return s.normalize("NFD").replace(/\p{M}/gu, "").toLocaleLowerCase();
}

/** The pages whose title or slug holds `query`, with their ancestors; `matches` gets the
 *  slugs that matched. */
function filterTree(nodes: TreeNode[], query: string, matches: Set<string>): TreeNode[] {
  const out: TreeNode[] = [];
  for (const n of nodes) {
    const kids = filterTree(n.children ?? [], query, matches);
    const hit = fold(n.title).includes(query) || fold(n.slug).includes(query);
    if (hit) matches.add(n.slug);
    if (hit || kids.length) out.push({ ...n, children: kids });
  }
  return out;
}

/** A title with the filter's text marked (when it is found as typed, case aside). */
function Marked({ text, query }: { text: string; query: string }) {
  const at = query ? text.toLocaleLowerCase().indexOf(query) : -1;
  if (at < 0) return <>{text}</>;
  return (
    <>
      {text.slice(0, at)}
      <mark>{text.slice(at, at + query.length)}</mark>
      {text.slice(at + query.length)}
    </>
  );
}

// Rendering ---------------------------------------------------------------------------

const itemId = (key: string) => `tree-item-${key}`;
const indent = (level: number, extra: number) => {
  const px = `${(level - 1) * 14 + extra}px`;
  // --indent: where a drop's insertion line starts (under the title, at this row's level).
  return { paddingLeft: px, "--indent": px };
};

interface TreeProps {
  current: string | null;
  tabStop: string | null;
  query: string;
  setOpen: (slug: string, open: boolean) => void;
  onMore: (row: MoreRow) => void;
}

function Rows({ level, props }: { level: Level; props: TreeProps }) {
  return (
    <>
      {level.map((row) =>
        row.kind === "page" ? (
          <PageItem key={row.key} row={row} props={props} />
        ) : (
          <li
            key={row.key}
            id={itemId(row.key)}
            role="treeitem"
            aria-level={row.level}
            tabIndex={props.tabStop === row.key ? 0 : -1}
            class="tree-item tree-more"
            data-key={row.key}
            onClick={() => props.onMore(row)}
          >
            <span class="tree-row" style={indent(row.level, 24)}>
              {t("tree.show_more", { count: row.count })}
            </span>
          </li>
        ),
      )}
    </>
  );
}

function PageItem({ row, props }: { row: PageRow; props: TreeProps }) {
  const { node, level, open } = row;
  const hasKids = (node.children ?? []).length > 0;
  const current = node.slug === props.current;
  const drop = useRowDrop(row);
  const linkId = `tree-link-${node.slug}`;
  return (
    <li
      id={itemId(row.key)}
      role="treeitem"
      aria-level={level}
      aria-expanded={hasKids ? open : undefined}
      aria-selected={current}
      aria-labelledby={linkId}
      aria-keyshortcuts="Alt+ArrowUp Alt+ArrowDown"
      tabIndex={props.tabStop === row.key ? 0 : -1}
      class="tree-item"
      data-key={row.key}
    >
      <div
        class={
          "tree-row" +
          (current ? " current" : "") +
          (row.context ? " context" : "") +
          (drop.over === "onto" ? " drop-target" : drop.over ? ` drop-${drop.over}` : "")
        }
        style={indent(level, 4)}
        draggable
        data-slug={node.slug}
        onDragStart={(e) => {
          e.dataTransfer?.setData("text/plain", node.slug);
          if (e.dataTransfer) e.dataTransfer.effectAllowed = "move";
          dragging.set(node.slug);
        }}
        onDragEnd={() => dragging.set(null)}
        {...drop.handlers}
      >
        {hasKids ? (
          <button
            type="button"
            class="tree-toggle"
            aria-label={open ? t("tree.collapse") : t("tree.expand")}
            title={open ? t("tree.collapse") : t("tree.expand")}
            onClick={() => props.setOpen(node.slug, !open)}
            tabIndex={-1}
          >
            {open ? "▾" : "▸"}
          </button>
        ) : (
          <span class="tree-toggle-space" />
        )}
        {/* Not a Tab stop of its own: the tree item is (roving tabindex); Enter on it opens this link. */}
        <a
          id={linkId}
          class="tree-link"
          href={pageHref(node.slug)}
          tabIndex={-1}
          aria-current={current ? "page" : undefined}
        >
          <Marked text={node.title || node.slug} query={row.context ? "" : props.query} />
        </a>
        <a
          class="tree-add"
          href={appHref("-/new", { parent: node.slug })}
          title={t("page.new_child")}
          aria-label={`${t("page.new_child")}: ${node.title}`}
          tabIndex={-1}
        >
          +
        </a>
      </div>
      {row.kids && (
        <ul role="group">
          <Rows level={row.kids} props={props} />
        </ul>
      )}
    </li>
  );
}

function TopLevelDrop() {
  const drag = useStore(dragging);
  const drop = useTopLevelDrop();
  if (!drag) return null;
  return (
    <div class={"tree-drop-root" + (drop.over ? " drop-target" : "")} data-testid="drop-top-level" {...drop.handlers}>
      {t("tree.drop_top_level")}
    </div>
  );
}

/** The first page after `from` (wrapping) whose title starts with `letter`. */
function typeAhead(rows: Row[], from: number, letter: string): Row | undefined {
  const wanted = fold(letter);
  for (let i = 1; i <= rows.length; i++) {
    const row = rows[(from + i) % rows.length]!;
    if (row.kind === "page" && fold(row.node.title || row.node.slug).startsWith(wanted)) return row;
  }
  return undefined;
}

export function Sidebar() {
  useI18n();
  const nodes = useStore(tree);
  const error = useStore(moveError);
  const open = useStore(expanded);
  const limits = useStore(shownCount);
  useStore(location);
  const current = currentSlug();
  const [filter, setFilter] = useState("");
  // While filtering, every kept page is open unless closed by hand (reset by a new filter).
  const [closedInFilter, setClosedInFilter] = useState<Set<string>>(new Set());
  const [focusKey, setFocusKey] = useState<string | null>(null);
  /** Set by the keyboard: focus this row once it is rendered. */
  const wantFocus = useRef<string | null>(null);

  const trail = useMemo(() => new Set((nodes && current && pathTo(nodes, current)) || []), [nodes, current]);
  useEffect(() => {
    if ([...trail].some((s) => !expanded.get().has(s))) expanded.set(new Set([...expanded.get(), ...trail]));
  }, [trail]);
  // A new page on screen: the tree's Tab stop is that page again.
  useEffect(() => setFocusKey(null), [current]);

  const query = fold(filter.trim());
  const filtered = useMemo(() => {
    if (!nodes || !query) return null;
    const matches = new Set<string>();
    return { nodes: filterTree(nodes, query, matches), matches };
  }, [nodes, query]);
  useEffect(() => setClosedInFilter(new Set()), [query]);

  const rows = useMemo(() => {
    if (!nodes) return null;
    const ctx: LayoutContext = filtered
      ? { isOpen: (s) => !closedInFilter.has(s), limits, current, trail, matches: filtered.matches }
      : { isOpen: (s) => open.has(s), limits, current, trail, matches: null };
    return layout(filtered ? filtered.nodes : nodes, null, 1, ctx);
  }, [nodes, filtered, closedInFilter, open, limits, current, trail]);
  const flat = useMemo(() => (rows ? flatten(rows) : []), [rows]);

  const tabStop =
    (focusKey && flat.some((r) => r.key === focusKey) && focusKey) ||
    (current && flat.some((r) => r.key === current) && current) ||
    flat[0]?.key ||
    null;

  useLayoutEffect(() => {
    const key = wantFocus.current;
    if (!key || !flat.some((r) => r.key === key)) return;
    wantFocus.current = null;
    document.getElementById(itemId(key))?.focus();
  });

  function focusRow(key: string | null | undefined): void {
    if (!key) return;
    wantFocus.current = key;
    setFocusKey(key);
    document.getElementById(itemId(key))?.focus(); // at once when it is already on screen
  }

  function setOpen(slug: string, isOpen: boolean): void {
    if (filtered) {
      const next = new Set(closedInFilter);
      if (isOpen) next.delete(slug);
      else next.add(slug);
      setClosedInFilter(next);
      return;
    }
    const next = new Set(expanded.get());
    if (isOpen) next.add(slug);
    else next.delete(slug);
    expanded.set(next);
  }

  function onMore(row: MoreRow): void {
    const next = new Map(shownCount.get());
    next.set(row.list, (next.get(row.list) ?? PAGE_SIZE) + PAGE_SIZE);
    shownCount.set(next);
    // Focus goes to the first page that appears where the row was.
    if (document.activeElement?.closest?.(".tree")) focusRow(row.next);
  }

  /** Alt+ArrowUp/Down: the page one place up or down among its siblings; focus stays on it. */
  async function step(slug: string, delta: -1 | 1): Promise<void> {
    moveError.set("");
    try {
      if (await stepPage(slug, delta)) focusRow(slug);
    } catch (e) {
      moveError.set(failure(e));
    }
  }

  function onKeyDown(e: KeyboardEvent): void {
    const item = (e.target as Element).closest<HTMLElement>("[role=treeitem]");
    const i = flat.findIndex((r) => r.key === item?.dataset.key);
    const row = flat[i];
    if (!row) return;
    if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
      e.preventDefault();
      if (row.kind === "page") void step(row.node.slug, e.key === "ArrowUp" ? -1 : 1);
      return;
    }
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const page = row.kind === "page" ? row : null;
    const hasKids = !!page && (page.node.children ?? []).length > 0;
    switch (e.key) {
      case "ArrowDown":
        focusRow(flat[i + 1]?.key);
        break;
      case "ArrowUp":
        focusRow(flat[i - 1]?.key);
        break;
      case "Home":
        focusRow(flat[0]?.key);
        break;
      case "End":
        focusRow(flat[flat.length - 1]?.key);
        break;
      case "ArrowRight":
        if (page && hasKids && !page.open) setOpen(page.node.slug, true);
        else if (page?.open) focusRow(flat[i + 1]?.key);
        break;
      case "ArrowLeft":
        if (page?.open) setOpen(page.node.slug, false);
        else focusRow(row.parent);
        break;
      case "Enter":
        if (page) void navigate(pageHref(page.node.slug));
        else onMore(row as MoreRow);
        break;
      default:
        // A letter or digit: type-ahead (other keys, such as "/" for the search box, pass).
        if (/^[\p{L}\p{N}]$/u.test(e.key)) {
          focusRow(typeAhead(flat, i, e.key)?.key);
          break;
        }
        return;
    }
    e.preventDefault();
  }

  return (
    <nav class="sidebar" id="sidebar" aria-label={t("nav.pages")}>
      <div class="sidebar-head">
        <span class="sidebar-title">{t("nav.pages")}</span>
        <a class="button small" href={appHref("-/new")} data-testid="new-page">
          + {t("page.new")}
        </a>
      </div>
      {nodes !== null && nodes.length > 0 && (
        // A text box, not type="search": the header's box is the app's one search box.
        <div class="tree-filter">
          <input
            type="text"
            value={filter}
            placeholder={t("tree.filter")}
            aria-label={t("tree.filter")}
            aria-controls="page-tree"
            onInput={(e) => setFilter(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "ArrowDown") {
                e.preventDefault();
                focusRow(flat[0]?.key);
              } else if (e.key === "Escape" && filter) {
                e.stopPropagation();
                setFilter("");
              }
            }}
          />
        </div>
      )}
      {nodes === null || rows === null ? (
        <p class="muted pad">{t("common.loading")}</p>
      ) : nodes.length === 0 ? (
        <p class="muted pad">{t("page.empty_workspace")}</p>
      ) : flat.length === 0 ? (
        <p class="muted pad" role="status">
          {t("tree.filter_none", { query: filter.trim() })}
        </p>
      ) : (
        <ul class="tree" id="page-tree" role="tree" aria-label={t("nav.pages")} onKeyDown={onKeyDown}>
          <Rows level={rows} props={{ current, tabStop, query: filter.trim().toLocaleLowerCase(), setOpen, onMore }} />
        </ul>
      )}
      <TopLevelDrop />
      <div class="tree-error">
        <FormError error={error} />
      </div>
      <div class="sidebar-foot">
        <a href={appHref("-/insights")}>{t("nav.insights")}</a>
        {/* The graph opens with the page on screen selected: its neighbourhood named. */}
        <a href={appHref("-/graph", { page: current ?? undefined })}>{t("nav.graph")}</a>
        <a href={appHref("-/trash")}>{t("nav.trash")}</a>
      </div>
    </nav>
  );
}

/** Says where a reordered page went ("Moved to position 2 of 5"): a live region outside the
 *  sidebar, so it is heard also when the narrow window's drawer is closed (the page's menu).
 *  Always there (a region must exist before its text changes to be read out), so it is a
 *  plain aria-live region rather than role="status", which screens use for their notices. */
export function OrderStatus() {
  const note = useStore(orderNote);
  return (
    <div class="sr-only" aria-live="polite" aria-atomic="true" data-testid="order-status">
      {note}
    </div>
  );
}

// The column's width ------------------------------------------------------------------

const WIDTH_KEY = "cairn.sidebarWidth";
const SIDEBAR_MIN = 180;
const SIDEBAR_MAX = 600;
const SIDEBAR_DEFAULT = 270;
const clampWidth = (w: number) => Math.round(Math.min(SIDEBAR_MAX, Math.max(SIDEBAR_MIN, w)));

function storedWidth(): number {
  try {
    const w = Number(localStorage.getItem(WIDTH_KEY));
    return w ? clampWidth(w) : SIDEBAR_DEFAULT;
  } catch {
    return SIDEBAR_DEFAULT;
  }
}

/** The sidebar's width in pixels (the shell sets it as --sidebar). */
export const sidebarWidth = store(storedWidth());

function keepWidth(w: number): void {
  sidebarWidth.set(w);
  try {
    localStorage.setItem(WIDTH_KEY, String(w));
  } catch {
    /* private mode: the width lasts until the page is left */
  }
}

/** The separator on the sidebar's right edge: drag it, or focus it and use the arrow keys
 *  (Shift for bigger steps), Home and End. */
export function SidebarResizer() {
  useI18n();
  const width = useStore(sidebarWidth);
  const drag = useRef<{ x: number; width: number } | null>(null);
  return (
    <div
      class="sidebar-resizer"
      role="separator"
      aria-orientation="vertical"
      aria-controls="sidebar"
      aria-label={t("nav.resize_sidebar")}
      aria-valuenow={width}
      aria-valuemin={SIDEBAR_MIN}
      aria-valuemax={SIDEBAR_MAX}
      tabIndex={0}
      onPointerDown={(e) => {
        if (e.button !== 0) return;
        e.preventDefault();
        e.currentTarget.setPointerCapture(e.pointerId);
        drag.current = { x: e.clientX, width: sidebarWidth.get() };
      }}
      onPointerMove={(e) => {
        if (drag.current) sidebarWidth.set(clampWidth(drag.current.width + e.clientX - drag.current.x));
      }}
      onPointerUp={() => {
        if (!drag.current) return;
        drag.current = null;
        keepWidth(sidebarWidth.get());
      }}
      onPointerCancel={() => {
        drag.current = null;
        keepWidth(sidebarWidth.get());
      }}
      onKeyDown={(e) => {
        const step = e.shiftKey ? 50 : 10;
        const next =
          e.key === "ArrowRight" ? width + step
          : e.key === "ArrowLeft" ? width - step
          : e.key === "Home" ? SIDEBAR_MIN
          : e.key === "End" ? SIDEBAR_MAX
          : null;
        if (next === null) return;
        e.preventDefault();
        keepWidth(clampWidth(next));
      }}
    />
  );
}
