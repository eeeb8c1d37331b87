// One page: rendered markdown, table of contents, breadcrumbs, children, backlinks,
// tags, last editor and time, the front matter's summary as a lead paragraph; actions
// (edit, history, rename, move, delete); checklists can be ticked.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, ApiError, trashedOf, type PageViewData } from "../api";
import { useChecklists } from "../components/Checklists";
import { FormError, useAction } from "../components/Form";
import { MarkdownBody, useRendered } from "../components/Markdown";
import { PageActions } from "../components/PageActions";
import { PageList } from "../components/PageList";
import { SuggestionsPanel } from "../components/Suggestions";
import { failure } from "../errors";
import { formatDate, t, useI18n } from "../i18n";
import { frontMatterSummary, yamlLoaded } from "../markdown/frontmatter";
import { appHref, location, navigate, pageHref, wikilinkText } from "../router";
import { peekView, loadView } from "../prefetch";
import { currentWorkspace, firstPageShown, pagesChanged, pagesVersion } from "../session";
import { Presence } from "../components/Presence";
import { useWatch } from "../watch";
import { useStore } from "../store";

/** A view answered for an old address, kept for the screen of the page's current one
 *  (screens are keyed by slug, so the address change starts a new one): it shows at
 *  once instead of asking again. */
let handedOver: { ws: string | null; data: PageViewData } | null = null;

/** An old address of a page (its slug before a rename: the API answers for it by
 *  following a 308 to the page's current slug): the address bar gets the current one,
 *  with the query and #fragment kept, so the heading it names is still scrolled to. */
function showAt(data: PageViewData, ws: string | null) {
  handedOver = { ws, data };
  const { search, hash } = window.location;
  void navigate(pageHref(data.page.slug) + search + hash, { replace: true, force: true });
}

function usePageView(slug: string) {
  const version = useStore(pagesVersion);
  const ws = useStore(currentWorkspace);
  // A prefetched answer (hover or focus on a link) shows at once, without a loading step.
  const [data, setData] = useState<PageViewData | null>(() => {
    const given = handedOver && handedOver.ws === ws && handedOver.data.page.slug === slug ? handedOver.data : null;
    handedOver = null;
    return given ?? peekView(slug, ws) ?? null;
  });
  const [error, setError] = useState<unknown>(null);
  const first = useRef(data);
  useEffect(() => {
    let live = true;
    setError(null);
    const shown = (d: PageViewData) => (d.page.slug === slug ? setData(d) : showAt(d, ws));
    // The first render's answer (handed over or prefetched) needs no second request.
    const ready = first.current ?? peekView(slug, ws);
    first.current = null;
    if (ready) {
      shown(ready);
      return;
    }
    loadView(slug, ws).then(
      (d) => live && shown(d),
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

/** A page's address that leads nowhere: one in the trash says who deleted it and when,
 *  and offers it back (never a new page over it); any other can be created. */
export function NotFound({ slug, error }: { slug: string; error?: unknown }) {
  useI18n();
  const trashed = trashedOf(error);
  const action = useAction();
  if (trashed) {
    const restore = () =>
      action.run(async () => {
        const page = await api.restoreFromTrash(trashed.slug);
        await navigate(pageHref(page.slug) + window.location.hash, { replace: true, force: true });
        await pagesChanged();
      });
    return (
      <div class="empty-state" data-testid="page-trashed">
        <h1>{trashed.title}</h1>
        <p>{t("page.trashed_by", { name: trashed.deleted_by.name, date: formatDate(trashed.deleted_at) })}</p>
        <div class="actions">
          <button type="button" class="primary" disabled={action.busy} onClick={() => void restore()}>
            {t("trash.restore")}
          </button>
          <a class="button" href={appHref("-/trash")}>
            {t("page.open_trash")}
          </a>
        </div>
        <FormError error={action.error} />
      </div>
    );
  }
  const title = location.get().query.get("title") || wikilinkText(slug) || slug;
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
  // Who is editing it now; a revision saved meanwhile (by them or any door) shows at
  // once. A rename is left to whoever made it (the app's own rename moves to the new
  // address itself; reading the old one again would only answer 308).
  const editing = useWatch(page.slug, page.workspace, (revision, slug) => {
    if (revision !== page.revision && slug === page.slug) void pagesChanged();
  });

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
        <Presence people={editing} label={t("live.editing_now")} />
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
  if (error instanceof ApiError && error.status === 404) return <NotFound slug={slug} error={error} />;
  if (error) return <FormError error={failure(error)} />;
  if (!data) return <p class="muted pad">{t("common.loading")}</p>;
  return <PageBody data={data} />;
}
