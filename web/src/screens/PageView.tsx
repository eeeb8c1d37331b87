// One page: rendered markdown, table of contents, breadcrumbs, children, backlinks,
// tags, last editor and time, the front matter's summary as a lead paragraph; actions
// (edit, history, rename, move, delete); checklists can be ticked.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiError, type PageViewData } from "../api";
import { useChecklists } from "../components/Checklists";
import { FormError } from "../components/Form";
import { MarkdownBody, useRendered } from "../components/Markdown";
import { PageActions } from "../components/PageActions";
import { PageList } from "../components/PageList";
import { SuggestionsPanel } from "../components/Suggestions";
import { failure } from "../errors";
import { formatDate, t, useI18n } from "../i18n";
import { frontMatterSummary, yamlLoaded } from "../markdown/frontmatter";
import { appHref, location, pageHref } from "../router";
import { peekView, loadView } from "../prefetch";
import { currentWorkspace, firstPageShown, pagesVersion } from "../session";
import { useStore } from "../store";

export function usePageView(slug: string) {
  const version = useStore(pagesVersion);
  const ws = useStore(currentWorkspace);
  // A prefetched answer (hover or focus on a link) shows at once, without a loading step.
  const [data, setData] = useState<PageViewData | null>(() => peekView(slug, ws) ?? null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    setError(null);
    const ready = peekView(slug, ws);
    if (ready) {
      setData(ready);
      return;
    }
    loadView(slug, ws).then(
      (d) => live && setData(d),
      (e) => {
        if (!live) return;
        setData(null);
        setError(e);
      },
    );
    return () => {
      live = false;
    };
  }, [slug, ws, version]);
  return { data: data && data.page.slug === slug ? data : null, error };
}

export function NotFound({ slug }: { slug: string }) {
  useI18n();
  const title = location.get().query.get("title") || slug;
  return (
    <div class="empty-state" data-testid="page-missing">
      <h1>{title}</h1>
      <p>{t("page.not_found")}</p>
      <a class="button primary" href={appHref("-/new", { slug, title })}>
        {t("page.create_named", { title })}
      </a>
    </div>
  );
}

function PageBody({ data }: { data: PageViewData }) {
  const { page } = data;
  const article = useRef<HTMLElement>(null);
  const checklists = useChecklists(page, article);
  const rendered = useRendered(checklists.content, page.slug, page.title);
  // Text, never HTML: a page's front matter is as untrusted as its body. Read again once
  // the YAML parser has loaded.
  const yamlReady = useStore(yamlLoaded);
  const summary = useMemo(() => frontMatterSummary(page.content), [page.content, yamlReady]);
  const hash = useStore(location).hash;
  const [suggesting, setSuggesting] = useState(false);

  useEffect(() => {
    document.title = `${page.title} · ${t("app.name")}`;
  }, [page.title]);

  // Scroll to the anchor of the URL once the page is rendered.
  useEffect(() => {
    if (!hash) return;
    const id = decodeURIComponent(hash.slice(1));
    document.getElementById(id)?.scrollIntoView();
  }, [hash, rendered.html]);

  return (
    <div class="page-layout">
      <article class="page" ref={article}>
        <nav class="breadcrumbs" aria-label={t("page.breadcrumbs")}>
          <ol>
            {data.breadcrumbs.map((b) => (
              <li key={b.slug}>
                <a href={pageHref(b.slug)}>{b.title}</a>
              </li>
            ))}
            <li aria-current="page">{page.title}</li>
          </ol>
        </nav>
        <header class="page-header">
          <h1 class="page-title">{page.title}</h1>
          <PageActions page={page} suggestions={suggesting} onToggleSuggestions={() => setSuggesting(!suggesting)} />
        </header>
        {summary && (
          <p class="page-summary" data-testid="page-summary">
            {summary}
          </p>
        )}
        {suggesting && <SuggestionsPanel page={page} />}
        <p class="page-meta muted">
          {t("page.last_edited", { author: page.updated_by.name, date: formatDate(page.updated_at) })}
        </p>
        {page.tags.length > 0 && (
          <ul class="tags" aria-label={t("page.tags")}>
            {page.tags.map((tag) => (
              <li key={tag}>
                <a class="tag" href={appHref("-/search", { tag })}>
                  #{tag}
                </a>
              </li>
            ))}
          </ul>
        )}
        <MarkdownBody html={rendered.html} class="page-content" />
        {checklists.error && (
          <div class="sticky-error">
            <FormError error={checklists.error} />
          </div>
        )}
        <section class="page-children">
          <h2>{t("page.children")}</h2>
          <PageList pages={data.children} none={t("page.no_children")} />
          <a class="button small" href={appHref("-/new", { parent: page.slug })}>
            + {t("page.new_child")}
          </a>
        </section>
        <section class="page-backlinks">
          <h2>{t("page.backlinks")}</h2>
          <PageList pages={data.backlinks} none={t("page.no_backlinks")} />
        </section>
      </article>
      {rendered.headings.length > 1 && (
        <aside class="toc" aria-label={t("page.outline")}>
          <h2>{t("page.outline")}</h2>
          <ul>
            {rendered.headings.map((h) => (
              <li key={h.anchor} class={`toc-l${h.level}`}>
                <a href={`#${encodeURIComponent(h.anchor)}`}>{h.text}</a>
              </li>
            ))}
          </ul>
        </aside>
      )}
    </div>
  );
}

export function PageView({ slug }: { slug: string }) {
  useI18n();
  const { data, error } = usePageView(slug);
  // A plain effect runs after the paint: the page is on screen, the tree may load now.
  useEffect(() => {
    if (data || error) firstPageShown();
  }, [data, error]);
  if (error instanceof ApiError && error.status === 404) return <NotFound slug={slug} />;
  if (error) return <FormError error={failure(error)} />;
  if (!data) return <p class="muted pad">{t("common.loading")}</p>;
  return <PageBody data={data} />;
}
