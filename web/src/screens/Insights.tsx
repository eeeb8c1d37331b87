// The workspace's insights at /app/-/insights (GET /api/insights): pages nothing links
// to, wanted pages (broken links, each with "create this page"), most linked, stale
// pages, tags (a tag lists its pages, GET /api/notes?tag=) and topical clusters. Every
// list says how many it holds and shows all of them on demand: the summary holds the
// first 20 of each, and "Show N more" reads on through GET /api/insights/<list>.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { allItems, api, request, type Insights as Data, type PageSummary, type TreeNode } from "../api";
import { FormError } from "../components/Form";
import { PageList } from "../components/PageList";
import { failure, type ErrorText } from "../errors";
import { formatDate, t, useI18n } from "../i18n";
import { compareTitles } from "../order";
import { appHref, pageHref } from "../router";
import { currentWorkspace, pagesVersion, titles, tree } from "../session";
import { useStore } from "../store";

/** How many items each list holds in all (its array holds at most 20). */
type Totals = Data["totals"];
/** An orphan: a live page no other live page links to, with its parent (null: top level). */
type Orphan = Data["orphans"][number];
type Broken = Data["broken_links"][number];
type Linked = Data["most_linked"][number];
type Stale = Data["stale"][number];
type ListName = "orphans" | "broken-links" | "most-linked" | "stale";
interface Listing<T> {
  items: T[];
  total: number;
}

/** One page of a list: GET /api/insights/<list>?limit=&offset= → {items, total} (the
 *  item types are the summary's). */
function insightsPage<T>(list: ListName, limit: number, offset: number): Promise<Listing<T>> {
  return request<Listing<T>>("GET", `/api/insights/${list}`, { query: { limit, offset }, ws: true });
}

/** How many more items one "Show more" adds. */
const MORE = 50;
/** How many items a list shows before "Show more" (the summary's own length). */
const FIRST = 20;

/** A title for a page that does not exist yet, from its slug ("missing-thing" → "Missing thing"). */
function titleFromSlug(slug: string): string {
  const words = slug.replace(/[-_]+/g, " ").trim();
  return words.charAt(0).toLocaleUpperCase() + words.slice(1);
}

function Block({
  id,
  title,
  hint,
  count,
  empty,
  children,
}: {
  id: string;
  title: string;
  hint?: string;
  /** How many the list holds in all ("37 pages"). */
  count?: string;
  empty: boolean;
  children: ComponentChildren;
}) {
  return (
    <section class="card" aria-labelledby={id}>
      <div class="card-head">
        <h2 id={id}>{title}</h2>
        {count && <span class="list-total">{count}</span>}
      </div>
      {hint && <p class="hint">{hint}</p>}
      {empty ? <p class="muted">{t("insights.none")}</p> : children}
    </section>
  );
}

/** A list's items so far and "Show N more", which asks `fetchPage` for the next ones. */
interface More<T> {
  items: T[];
  /** How many are not shown yet. */
  left: number;
  busy: boolean;
  error: ErrorText;
  more: () => void;
}

/** `first`: what the summary holds (shown up to FIRST, whatever a server sends). */
function useMore<T>(first: T[], total: number, fetchPage: (limit: number, offset: number) => Promise<Listing<T>>): More<T> {
  const [items, setItems] = useState(() => first.slice(0, FIRST));
  const [all, setAll] = useState(total);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorText>("");
  useEffect(() => {
    setItems(first.slice(0, FIRST));
    setAll(total);
  }, [first, total]);
  function more() {
    setBusy(true);
    setError("");
    fetchPage(MORE, items.length).then(
      (page) => {
        setItems((now) => [...now, ...page.items]);
        // A total that moved meanwhile (pages changed) is the newer one.
        setAll(page.total);
        setBusy(false);
      },
      (e) => {
        setError(failure(e));
        setBusy(false);
      },
    );
  }
  return { items, left: Math.max(0, all - items.length), busy, error, more };
}

function MoreButton<T>({ list }: { list: More<T> }) {
  return (
    <>
      <FormError error={list.error} />
      {list.left > 0 && (
        <button type="button" class="small show-more" disabled={list.busy} onClick={list.more}>
          {t("insights.show_more", { count: Math.min(MORE, list.left) })}
        </button>
      )}
    </>
  );
}

/** Items already read, shown `FIRST` at first and `MORE` at a time after. */
function shownFrom<T>(all: T[]) {
  return (limit: number, offset: number) => Promise.resolve({ items: all.slice(offset, offset + limit), total: all.length });
}

/** Links to pages by slug (titles from the page tree), separated by `sep`. */
function PageLinks({ slugs, sep }: { slugs: string[]; sep: string }) {
  const known = useStore(titles);
  return (
    <>
      {slugs.flatMap((s, i) => [
        i > 0 ? sep : "",
        <a key={s} href={pageHref(s)}>
          {known.get(s) ?? s}
        </a>,
      ])}
    </>
  );
}

function TagPages({ tag }: { tag: string }) {
  const [items, setItems] = useState<PageSummary[] | null>(null);
  const [error, setError] = useState<ErrorText>("");
  useEffect(() => {
    setItems(null);
    api.allNotes({ tag }).then(
      (r) => setItems(r.items),
      (e) => setError(failure(e)),
    );
  }, [tag]);
  return (
    <div class="tag-pages" data-testid="tag-pages">
      <h3>{t("insights.pages_tagged", { tag })}</h3>
      <FormError error={error} />
      {items === null ? (
        !error && <p class="muted">{t("common.loading")}</p>
      ) : (
        <PageList pages={items} none={t("insights.none")} />
      )}
    </div>
  );
}

/** One group of orphans, read already: the first 20, then 50 more at a time. */
function OrphanGroup({ id, title, hint, pages }: { id: string; title: string; hint: string; pages: Orphan[] | null }) {
  const first = useMemo(() => pages?.slice(0, FIRST) ?? [], [pages]);
  const list = useMore(first, pages?.length ?? 0, shownFrom(pages ?? []));
  return (
    <Block
      id={id}
      title={title}
      hint={hint}
      count={pages ? t("count.pages", { count: pages.length }) : undefined}
      empty={pages !== null && pages.length === 0}
    >
      {pages === null ? (
        <p class="muted">{t("common.loading")}</p>
      ) : (
        <>
          <PageList pages={list.items} none={t("insights.none")} />
          <MoreButton list={list} />
        </>
      )}
    </Block>
  );
}

/** No orphans (one array: a new one on every render would start a group over). */
const NONE: Orphan[] = [];

/** Where the app opens: the page `home`, else the first top-level page (app.tsx). */
function homeSlug(nodes: TreeNode[] | null): string | null {
  if (!nodes) return "home";
  return (nodes.find((n) => n.slug === "home") ?? nodes[0])?.slug ?? null;
}

/**
 * What counts as an orphan in a tree-shaped wiki. The API's orphans are the contract's:
 * live pages no other live page links to. Of those, a top-level page is the one nothing
 * leads to but the tree and search: "Not linked from anywhere", the list to act on. A
 * subpage is reached from its parent (its list of subpages, the tree) and is shown apart,
 * "Reached only from their parent". The workspace's home page is in neither: the app
 * opens there. The whole list is read (500 to a request) when the summary's 20 are not
 * all, since each group's count needs every item.
 */
function Orphans({ first, total }: { first: Orphan[]; total: number }) {
  const nodes = useStore(tree);
  const [all, setAll] = useState<Orphan[] | null>(null);
  const [error, setError] = useState<ErrorText>("");
  useEffect(() => {
    setError("");
    if (total <= first.length) {
      setAll(first);
      return;
    }
    setAll(null);
    let live = true;
    allItems((limit, offset) => insightsPage<Orphan>("orphans", limit, offset)).then(
      (r) => live && setAll(r.items),
      (e) => live && setError(failure(e)),
    );
    return () => {
      live = false;
    };
  }, [first, total]);
  const home = homeSlug(nodes);
  // Memoised: a new array on every render would start each group over.
  const top = useMemo(() => (all ? all.filter((o) => !o.parent && o.slug !== home).sort(compareTitles) : null), [all, home]);
  const under = useMemo(() => (all ? all.filter((o) => o.parent).sort(compareTitles) : null), [all]);
  return (
    <>
      <FormError error={error} />
      <OrphanGroup id="in-orphans" title={t("insights.orphans")} hint={t("insights.orphans_hint")} pages={error ? NONE : top} />
      <OrphanGroup
        id="in-parent-only"
        title={t("insights.parent_only")}
        hint={t("insights.parent_only_hint")}
        pages={error ? NONE : under}
      />
    </>
  );
}

/** Wanted pages: each missing target once, with the pages linking to it. */
function Wanted({ first, total }: { first: Broken[]; total: number }) {
  const list = useMore(first, total, (limit, offset) => insightsPage<Broken>("broken-links", limit, offset));
  const wanted = new Map<string, string[]>();
  for (const b of list.items) wanted.set(b.target, [...(wanted.get(b.target) ?? []), b.source]);
  return (
    <Block
      id="in-wanted"
      title={t("insights.wanted")}
      hint={t("insights.wanted_hint")}
      count={t("count.broken_links", { count: total })}
      empty={total === 0}
    >
      <ul>
        {[...wanted].map(([target, sources]) => (
          <li key={target}>
            <strong>{target}</strong>{" "}
            <small class="muted">
              {t("insights.linked_from")} <PageLinks slugs={[...new Set(sources)]} sep=", " />
            </small>{" "}
            <a
              class="button small"
              href={appHref("-/new", { slug: target, title: titleFromSlug(target) })}
              aria-label={`${t("insights.create")}: ${target}`}
            >
              {t("insights.create")}
            </a>
          </li>
        ))}
      </ul>
      <MoreButton list={list} />
    </Block>
  );
}

function MostLinked({ first, total }: { first: Linked[]; total: number }) {
  const list = useMore(first, total, (limit, offset) => insightsPage<Linked>("most-linked", limit, offset));
  return (
    <Block id="in-linked" title={t("intel.most_linked")} count={t("count.pages", { count: total })} empty={total === 0}>
      <ol>
        {list.items.map((p) => (
          <li key={p.slug}>
            <a href={pageHref(p.slug)}>{p.title}</a> <small class="muted">{t("insights.link_count", { count: p.count })}</small>
          </li>
        ))}
      </ol>
      <MoreButton list={list} />
    </Block>
  );
}

const DAY = 86_400_000;

function StalePages({ first, total }: { first: Stale[]; total: number }) {
  const list = useMore(first, total, (limit, offset) => insightsPage<Stale>("stale", limit, offset));
  return (
    <Block
      id="in-stale"
      title={t("intel.stale_pages")}
      hint={t("insights.stale_hint")}
      count={t("count.pages", { count: total })}
      empty={total === 0}
    >
      <ul>
        {list.items.map((p) => (
          <li key={p.slug}>
            <a href={pageHref(p.slug)}>{p.title}</a>{" "}
            <small class="muted">
              {formatDate(p.updated_at)} ·{" "}
              {t("intel.stale_hint", { count: Math.floor((Date.now() - Date.parse(p.updated_at)) / DAY) })}
            </small>
          </li>
        ))}
      </ul>
      <MoreButton list={list} />
    </Block>
  );
}

export function Insights() {
  useI18n();
  const ws = useStore(currentWorkspace);
  const version = useStore(pagesVersion);
  const [data, setData] = useState<Data | null>(null);
  const [error, setError] = useState<ErrorText>("");
  const [tag, setTag] = useState<string | null>(null);

  useEffect(() => {
    document.title = t("nav.insights");
    let live = true;
    api.insights().then(
      (d) => live && setData(d),
      (e) => live && setError(failure(e)),
    );
    return () => {
      live = false;
    };
  }, [ws, version]);

  // A server without `totals` answers whole lists (at most 20): their lengths are the totals.
  const totals: Totals = data?.totals ?? {
    orphans: data?.orphans.length ?? 0,
    broken_links: data?.broken_links.length ?? 0,
    most_linked: data?.most_linked.length ?? 0,
    stale: data?.stale.length ?? 0,
  };

  return (
    <div class="insights">
      <h1>{t("nav.insights")}</h1>
      <FormError error={error} />
      {!data ? (
        !error && <p class="muted">{t("common.loading")}</p>
      ) : (
        <>
          <p class="muted" data-testid="insights-totals">
            {t("insights.totals", { pages: t("count.pages", { count: data.pages }), words: t("count.words", { count: data.words }) })} ·{" "}
            <span class="badge">{t("intel.mode", { mode: data.mode })}</span>
          </p>
          <div class="insights-grid">
            <Orphans first={data.orphans} total={totals.orphans} />
            <Wanted first={data.broken_links} total={totals.broken_links} />
            <MostLinked first={data.most_linked} total={totals.most_linked} />
            <StalePages first={data.stale} total={totals.stale} />
            <Block id="in-tags" title={t("page.tags")} count={t("count.tags", { count: data.tags.length })} empty={data.tags.length === 0}>
              <ul class="tags">
                {data.tags.map((x) => (
                  <li key={x.tag}>
                    <button
                      type="button"
                      class={"tag tag-button" + (tag === x.tag ? " active" : "")}
                      aria-pressed={tag === x.tag}
                      onClick={() => setTag(tag === x.tag ? null : x.tag)}
                    >
                      #{x.tag} <small>{x.count}</small>
                    </button>
                  </li>
                ))}
              </ul>
              {tag && <TagPages tag={tag} />}
            </Block>
            <Block
              id="in-clusters"
              title={t("intel.clusters")}
              count={t("count.clusters", { count: data.clusters.length })}
              empty={data.clusters.length === 0}
            >
              <ul class="clusters">
                {data.clusters.map((c, i) => (
                  <li key={i}>
                    <strong>{c.label}</strong> <small class="muted">{t("count.pages", { count: c.size })}</small>
                    <div>
                      <PageLinks slugs={c.pages} sep=" · " />
                    </div>
                  </li>
                ))}
              </ul>
            </Block>
          </div>
        </>
      )}
    </div>
  );
}
