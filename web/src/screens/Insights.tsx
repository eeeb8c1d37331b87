// The workspace's insights at /app/-/insights (GET /api/insights): orphans, wanted pages
// (broken links, each with "create this page"), most linked, stale pages, tags (a tag
// lists its pages, GET /api/notes?tag=) and topical clusters.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, type Insights as Data, type PageSummary } from "../api";
import { FormError } from "../components/Form";
import { PageList } from "../components/PageList";
import { failure, type ErrorText } from "../errors";
import { formatDate, t, useI18n } from "../i18n";
import { appHref, pageHref } from "../router";
import { currentWorkspace, pagesVersion, titles } from "../session";
import { useStore } from "../store";

/** A title for a page that does not exist yet, from its slug ("missing-thing" → "Missing thing"). */
function titleFromSlug(slug: string): string {
  const words = slug.replace(/[-_]+/g, " ").trim();
  return words.charAt(0).toLocaleUpperCase() + words.slice(1);
}

function Block({ id, title, hint, empty, children }: { id: string; title: string; hint?: string; empty: boolean; children: ComponentChildren }) {
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {hint && <p class="hint">{hint}</p>}
      {empty ? <p class="muted">{t("insights.none")}</p> : children}
    </section>
  );
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

  // Wanted pages: each missing target once, with the pages linking to it.
  const wanted = new Map<string, string[]>();
  for (const b of data?.broken_links ?? []) wanted.set(b.target, [...(wanted.get(b.target) ?? []), b.source]);

  return (
    <div class="insights">
      <h1>{t("nav.insights")}</h1>
      <FormError error={error} />
      {!data ? (
        !error && <p class="muted">{t("common.loading")}</p>
      ) : (
        <>
          <p class="muted" data-testid="insights-totals">
            {t("insights.totals", { pages: data.pages, words: data.words })} · <span class="badge">{t("intel.mode", { mode: data.mode })}</span>
          </p>
          <div class="insights-grid">
            <Block id="in-orphans" title={t("intel.orphans")} hint={t("intel.orphans_hint")} empty={false}>
              <PageList pages={data.orphans} none={t("insights.none")} />
            </Block>
            <Block id="in-wanted" title={t("insights.wanted")} hint={t("insights.wanted_hint")} empty={wanted.size === 0}>
              <ul>
                {[...wanted].map(([target, sources]) => (
                  <li key={target}>
                    <strong>{target}</strong>{" "}
                    <small class="muted">
                      {t("insights.linked_from")} <PageLinks slugs={sources} sep=", " />
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
            </Block>
            <Block id="in-linked" title={t("intel.most_linked")} empty={data.most_linked.length === 0}>
              <ol>
                {data.most_linked.map((p) => (
                  <li key={p.slug}>
                    <a href={pageHref(p.slug)}>{p.title}</a> <small class="muted">{t("insights.link_count", { count: p.count })}</small>
                  </li>
                ))}
              </ol>
            </Block>
            <Block id="in-stale" title={t("intel.stale_pages")} hint={t("insights.stale_hint")} empty={data.stale.length === 0}>
              <ul>
                {data.stale.map((p) => (
                  <li key={p.slug}>
                    <a href={pageHref(p.slug)}>{p.title}</a> <small class="muted">{formatDate(p.updated_at)}</small>
                  </li>
                ))}
              </ul>
            </Block>
            <Block id="in-tags" title={t("page.tags")} empty={data.tags.length === 0}>
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
            <Block id="in-clusters" title={t("intel.clusters")} empty={data.clusters.length === 0}>
              <ul class="clusters">
                {data.clusters.map((c, i) => (
                  <li key={i}>
                    <strong>{c.label}</strong> <small class="muted">{t("insights.cluster_size", { count: c.size })}</small>
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
