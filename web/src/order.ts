// Siblings ordered by hand: "Move up"/"Move down" (the page's menu, Alt+Arrow keys in the
// tree) and drops between rows of the tree all end here. The server keeps the order
// (POST /api/pages/{slug}/position {after}); the tree is read again afterwards, as it is the
// source of truth, and the new place is announced in a live region (OrderStatus).
import { api, ApiError, type TreeNode } from "./api";
import { t } from "./i18n";
import { pagesChanged, reloadTree, tree } from "./session";
import { store } from "./store";

/** How titles compare where no order was set by hand, as the server sorts siblings:
 *  numbers by their value ("Sprint 2" before "Sprint 10"), case and accents ignored,
 *  in the reader's language. */
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
export function naturalCompare(a: string, b: string): number {
  return collator.compare(a, b);
}

/** Pages by title in natural order; the same title by slug, so the order is stable. */
export function compareTitles(a: { title: string; slug: string }, b: { title: string; slug: string }): number {
  return collator.compare(a.title, b.title) || (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0);
}

/** The last reorder's announcement ("Moved to position 2 of 5"), for screen readers. */
export const orderNote = store("");

/** The children of `parent` in the tree (null: the top level), or null when it is not there. */
export function childrenOf(nodes: TreeNode[], parent: string | null): TreeNode[] | null {
  if (parent === null) return nodes;
  for (const n of nodes) {
    if (n.slug === parent) return n.children ?? [];
    const found = childrenOf(n.children ?? [], parent);
    if (found) return found;
  }
  return null;
}

/** The page's parent and its siblings (itself included), in the tree's order. */
function siblingsOf(nodes: TreeNode[], slug: string, parent: string | null = null): Sibling | null {
  for (const n of nodes) {
    if (n.slug === slug) return { parent, list: nodes };
    const found = siblingsOf(n.children ?? [], slug, n.slug);
    if (found) return found;
  }
  return null;
}

interface Sibling {
  parent: string | null;
  list: TreeNode[];
}

/** Where one step up (-1) or down (+1) puts the page: the sibling it then follows (null:
 *  first), or undefined when it is already at that end (or not in the tree). */
export function stepTarget(nodes: TreeNode[], slug: string, delta: -1 | 1): { after: string | null } | undefined {
  const sib = siblingsOf(nodes, slug);
  if (!sib) return undefined;
  const i = sib.list.findIndex((n) => n.slug === slug);
  const j = i + delta;
  if (j < 0 || j >= sib.list.length) return undefined;
  // Up: after the one two places above (or first); down: after the one below.
  return { after: delta < 0 ? (sib.list[j - 1]?.slug ?? null) : sib.list[j]!.slug };
}

function announce(text: string): void {
  // Emptied first, so the same sentence twice in a row is still read out.
  orderNote.set("");
  window.setTimeout(() => orderNote.set(text), 50);
}

/** Reorders run one after another, each from the tree the one before it left: Alt+ArrowUp
 *  pressed twice quickly moves the page two places, not twice to the same one. */
let queue: Promise<unknown> = Promise.resolve();
function inTurn<T>(run: () => Promise<T>): Promise<T> {
  const next = queue.then(run, run);
  queue = next.catch(() => undefined);
  return next;
}

/** Puts `slug` under `parent` (null: top level) right after its sibling `after` (null:
 *  first). A page from elsewhere is moved there first (the move API), then ordered. Nothing
 *  is sent when the page is already in that place. Throws the server's refusal (after
 *  reading the tree again, since a refusal usually means it changed meanwhile). */
export function placePage(slug: string, parent: string | null, after: string | null): Promise<void> {
  return inTurn(() => place(slug, parent, after));
}

async function place(slug: string, parent: string | null, after: string | null): Promise<void> {
  const nodes = tree.get() ?? [];
  const sib = siblingsOf(nodes, slug);
  if (!sib) return;
  const moving = sib.parent !== parent;
  if (!moving) {
    const i = sib.list.findIndex((n) => n.slug === slug);
    if ((sib.list[i - 1]?.slug ?? null) === after) return;
  }
  try {
    if (moving) await api.movePage(slug, parent);
    await api.setPosition(slug, after);
  } catch (e) {
    if (e instanceof ApiError) await (moving ? pagesChanged() : reloadTree());
    throw e;
  }
  await pagesChanged();
  const now = siblingsOf(tree.get() ?? [], slug);
  if (now) {
    const position = now.list.findIndex((n) => n.slug === slug) + 1;
    announce(t("tree.moved_to_position", { position, count: now.list.length }));
  }
}

/** One step up or down among its siblings (from the tree as the reorders before it left
 *  it); false when it is already at that end. */
export function stepPage(slug: string, delta: -1 | 1): Promise<boolean> {
  return inTurn(async () => {
    const nodes = tree.get() ?? [];
    const target = stepTarget(nodes, slug, delta);
    if (!target) return false;
    await place(slug, siblingsOf(nodes, slug)!.parent, target.after);
    return true;
  });
}
