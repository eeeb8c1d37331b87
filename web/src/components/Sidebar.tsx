// The page tree: top-level pages first; a page's children are rendered when it is
// expanded (the tree route answers the whole tree at once, so expanding needs no
// request). The path to the page on screen is expanded by itself.
//
// Drag a page onto another to make it a child there (POST /api/pages/{slug}/move), or onto
// the "top level" zone shown while dragging. The server refuses a move into the page's own
// subtree (move_cycle), and that message is shown.
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, type TreeNode } from "../api";
import { failure, type ErrorText } from "../errors";
import { t, useI18n } from "../i18n";
import { appHref, location, pageHref } from "../router";
import { pagesChanged, tree } from "../session";
import { store, useStore } from "../store";
import { FormError } from "./Form";

const expanded = store<Set<string>>(new Set());
/** A long list of siblings shows its first PAGE_SIZE entries, then "show more" (per parent,
 *  "" = top level): a workspace of 10,000 pages stays quick to open and to expand. */
export const PAGE_SIZE = 200;
const shownCount = store<Map<string, number>>(new Map());

function showMore(parent: string): void {
  const next = new Map(shownCount.get());
  next.set(parent, (next.get(parent) ?? PAGE_SIZE) + PAGE_SIZE);
  shownCount.set(next);
}

/** The siblings to render: the first `limit`, plus the one on the path to the current page. */
function Siblings({ nodes, parent, level, current, trail }: { nodes: TreeNode[]; parent: string; level: number; current: string | null; trail: Set<string> }) {
  const limit = useStore(shownCount).get(parent) ?? PAGE_SIZE;
  const shown = nodes.length > limit ? nodes.slice(0, limit) : nodes;
  const extra = shown === nodes ? [] : nodes.slice(limit).filter((n) => n.slug === current || trail.has(n.slug));
  const rest = nodes.length - shown.length - extra.length;
  return (
    <>
      {[...shown, ...extra].map((n) => (
        <Node key={n.slug} node={n} level={level} current={current} trail={trail} />
      ))}
      {rest > 0 && (
        <li role="none" class="tree-more" style={{ paddingLeft: `${(level - 1) * 14 + 24}px` }}>
          <button type="button" class="small" onClick={() => showMore(parent)}>
            {t("tree.show_more", { count: Math.min(rest, PAGE_SIZE) })}
          </button>
        </li>
      )}
    </>
  );
}
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

/** Drop-target handlers: `parent` is where a dropped page goes (null = top level). */
function useDropTarget(parent: string | null, self?: string) {
  const [over, setOver] = useState(false);
  const accepts = () => dragging.get() !== null && dragging.get() !== self;
  return {
    over,
    handlers: {
      onDragOver: (e: DragEvent) => {
        if (!accepts()) return;
        e.preventDefault();
        if (e.dataTransfer) e.dataTransfer.dropEffect = "move";
        setOver(true);
      },
      onDragLeave: () => setOver(false),
      onDrop: (e: DragEvent) => {
        setOver(false);
        const slug = dragging.get();
        if (!slug || !accepts()) return;
        e.preventDefault();
        dragging.set(null);
        void moveTo(slug, parent);
      },
    },
  };
}

function toggle(slug: string): void {
  const next = new Set(expanded.get());
  if (next.has(slug)) next.delete(slug);
  else next.add(slug);
  expanded.set(next);
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

/** The slug of the page the URL shows, if any. */
export function currentSlug(): string | null {
  const seg = location.get().segments;
  if (seg.length === 0) return null;
  if (seg[0] === "-") return seg[1] === "page" ? seg[2] ?? null : null;
  if (seg[0] === "login" || seg[0] === "register") return null;
  return seg[0] ?? null;
}

function Node({ node, level, current, trail }: { node: TreeNode; level: number; current: string | null; trail: Set<string> }) {
  const open = useStore(expanded).has(node.slug);
  const kids = node.children ?? [];
  const drop = useDropTarget(node.slug, node.slug);
  return (
    <li role="treeitem" aria-level={level} aria-expanded={kids.length ? open : undefined} aria-selected={node.slug === current}>
      <div
        class={"tree-row" + (node.slug === current ? " current" : "") + (drop.over ? " drop-target" : "")}
        style={{ paddingLeft: `${(level - 1) * 14 + 4}px` }}
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
        {kids.length ? (
          <button
            type="button"
            class="tree-toggle"
            aria-label={open ? t("tree.collapse") : t("tree.expand")}
            title={open ? t("tree.collapse") : t("tree.expand")}
            onClick={() => toggle(node.slug)}
            tabIndex={-1}
          >
            {open ? "▾" : "▸"}
          </button>
        ) : (
          <span class="tree-toggle-space" />
        )}
        <a class="tree-link" href={pageHref(node.slug)} aria-current={node.slug === current ? "page" : undefined}>
          {node.title || node.slug}
        </a>
        <a
          class="tree-add"
          href={appHref("-/new", { parent: node.slug })}
          title={t("page.new_child")}
          aria-label={`${t("page.new_child")}: ${node.title}`}
        >
          +
        </a>
      </div>
      {open && kids.length > 0 && (
        <ul role="group">
          <Siblings nodes={kids} parent={node.slug} level={level + 1} current={current} trail={trail} />
        </ul>
      )}
    </li>
  );
}

function TopLevelDrop() {
  const drag = useStore(dragging);
  const drop = useDropTarget(null);
  if (!drag) return null;
  return (
    <div class={"tree-drop-root" + (drop.over ? " drop-target" : "")} data-testid="drop-top-level" {...drop.handlers}>
      {t("tree.drop_top_level")}
    </div>
  );
}

export function Sidebar() {
  useI18n();
  const nodes = useStore(tree);
  const error = useStore(moveError);
  useStore(location);
  const current = currentSlug();

  const trail = useMemo(() => new Set((nodes && current && pathTo(nodes, current)) || []), [nodes, current]);
  useEffect(() => {
    if ([...trail].some((s) => !expanded.get().has(s))) expanded.set(new Set([...expanded.get(), ...trail]));
  }, [trail]);

  return (
    <nav class="sidebar" id="sidebar" aria-label={t("nav.pages")}>
      <div class="sidebar-head">
        <span class="sidebar-title">{t("nav.pages")}</span>
        <a class="button small" href={appHref("-/new")} data-testid="new-page">
          + {t("page.new")}
        </a>
      </div>
      {nodes === null ? (
        <p class="muted pad">{t("common.loading")}</p>
      ) : nodes.length === 0 ? (
        <p class="muted pad">{t("page.empty_workspace")}</p>
      ) : (
        <ul class="tree" role="tree" aria-label={t("nav.pages")}>
          <Siblings nodes={nodes} parent="" level={1} current={current} trail={trail} />
        </ul>
      )}
      <TopLevelDrop />
      <div class="tree-error">
        <FormError error={error} />
      </div>
      <div class="sidebar-foot">
        <a href={appHref("-/insights")}>{t("nav.insights")}</a>
        <a href={appHref("-/graph")}>{t("nav.graph")}</a>
        <a href={appHref("-/trash")}>{t("nav.trash")}</a>
      </div>
    </nav>
  );
}
