// Full search results at /app/-/search?q=&mode=&tag=&page= (Enter in the header's box
// comes here; a tag chip of a page comes here with tag=). Results come 50 to a page with
// the server's total; a tag filter is a removable chip that stays while the query changes
// and narrows the query's results (GET /api/search?q=&tag=), or, with no query, lists the
// tag's pages (GET /api/notes?tag=).
import { useEffect, useState } from "preact/hooks";
import { api, type SearchAnswer, type SearchMode } from "../api";
import { MODES, Snippet } from "../components/SearchBox";
import { FormError } from "../components/Form";
import { failure, type ErrorText } from "../errors";
import { t, tParts, useI18n } from "../i18n";
import { systemReport } from "../limits";
import { appHref, location, navigate, pageHref } from "../router";
import { currentWorkspace } from "../session";
import { useStore } from "../store";

/** Results per page. */
const PER_PAGE = 50;

/** The search page's URL; a page number of 1 is left out. */
function searchHref(q: string, mode: SearchMode, tag: string, page = 1): string {
  const query = { q: q || undefined, mode, tag: tag || undefined, page: page > 1 ? String(page) : undefined };
  return appHref("-/search", query);
}

/** Said where meaning matters (semantic and hybrid modes) when the server has no
 *  embedding model (`semantic_search: false` in GET /api/system): what is missing, what
 *  the modes do instead, and the one command that installs it (README, "Search by
 *  meaning"). Nothing while the report is unknown. */
function NoModel({ mode }: { mode: SearchMode }) {
  const system = useStore(systemReport);
  if (mode === "keyword" || !system || system.semantic_search) return null;
  return (
    <div class="notice no-model" role="note" data-testid="no-model">
      <p>{t("search.no_model")}</p>
      <p>
        {tParts("search.no_model_install", { command: <code>./scripts/get-model</code>, setting: <code>SEMANTIC_SEARCH=1</code> })}
      </p>
    </div>
  );
}

function Pager({ page, pages, href }: { page: number; pages: number; href: (page: number) => string }) {
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label={t("search.pages")}>
      {page > 1 ? (
        <a class="button small" href={href(page - 1)} rel="prev">
          {t("search.previous")}
        </a>
      ) : (
        <span />
      )}
      <span class="muted" aria-current="page">
        {t("search.page_of", { page, pages })}
      </span>
      {page < pages ? (
        <a class="button small" href={href(page + 1)} rel="next">
          {t("search.next")}
        </a>
      ) : (
        <span />
      )}
    </nav>
  );
}

export function SearchPage() {
  useI18n();
  const loc = useStore(location);
  const ws = useStore(currentWorkspace);
  const q = (loc.query.get("q") ?? "").trim();
  const tag = (loc.query.get("tag") ?? "").replace(/^#/, "").trim();
  const mode = (MODES as string[]).includes(loc.query.get("mode") ?? "") ? (loc.query.get("mode") as SearchMode) : "keyword";
  const page = Math.max(1, Number.parseInt(loc.query.get("page") ?? "1", 10) || 1);
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  const [error, setError] = useState<ErrorText>("");
  const [draft, setDraft] = useState(q);

  useEffect(() => setDraft(q), [q]);
  useEffect(() => {
    document.title = `${t("nav.search")}: ${[q, tag && `#${tag}`].filter(Boolean).join(" ")}`;
    setAnswer(null);
    if (!q && !tag) return;
    let live = true;
    setError("");
    const offset = (page - 1) * PER_PAGE;
    const run = q
      ? api.search(q, mode, undefined, PER_PAGE, { tag: tag || undefined, offset })
      : api.notes({ tag, limit: PER_PAGE, offset }).then(
          (r): SearchAnswer => ({
            query: "",
            mode,
            engine: "tag",
            total: r.total,
            items: r.items.map((p) => ({ slug: p.slug, title: p.title, snippet: "", score: 0 })),
          }),
        );
    run.then(
      (a) => live && setAnswer(a),
      (e) => live && setError(failure(e)),
    );
    return () => {
      live = false;
    };
  }, [q, mode, tag, page, ws]);

  const total = answer ? (answer.total ?? answer.items.length) : 0;
  const pages = Math.max(1, Math.ceil(total / PER_PAGE));
  const first = (page - 1) * PER_PAGE + 1;
  return (
    <div class="search-page">
      <h1>{t("nav.search")}</h1>
      <form
        class="editor-bar"
        onSubmit={(e) => {
          e.preventDefault();
          // The tag filter stays; a new query starts at its first page.
          void navigate(searchHref(draft.trim(), mode, tag));
        }}
      >
        <input type="search" aria-label={t("nav.search")} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        <select
          aria-label={t("search.mode")}
          value={mode}
          onChange={(e) => void navigate(searchHref(q, e.currentTarget.value as SearchMode, tag))}
        >
          {MODES.map((m) => (
            <option key={m} value={m}>
              {t(`search.mode.${m}`)}
            </option>
          ))}
        </select>
        <button type="submit" class="primary">
          {t("nav.search")}
        </button>
      </form>
      {tag && (
        <p class="search-filters" data-testid="search-filters">
          <span class="muted">{t("search.filtered_by")}</span>{" "}
          <span class="tag-filter" data-testid="tag-filter">
            #{tag}
            <button
              type="button"
              class="chip-remove"
              aria-label={t("search.remove_tag_filter", { tag })}
              title={t("search.remove_tag_filter", { tag })}
              onClick={() => void navigate(searchHref(q, mode, ""))}
            >
              ×
            </button>
          </span>
        </p>
      )}
      <NoModel mode={mode} />
      <FormError error={error} />
      {!answer && !error && (q !== "" || tag !== "") && <p class="muted">{t("common.loading")}</p>}
      {answer && (
        <>
          <p class="muted" data-testid="results-count">
            {t("search.results_count", { count: total })}
            {pages > 1 && answer.items.length > 0 && (
              <> · {t("search.showing", { from: first, to: first + answer.items.length - 1 })}</>
            )}
          </p>
          {answer.items.length === 0 ? (
            <p>{q ? t("search.no_results", { query: q }) : t("search.no_tagged", { tag })}</p>
          ) : (
            <ol class="results" start={first}>
              {answer.items.map((it) => (
                <li key={it.slug}>
                  <a href={pageHref(it.slug)}>{it.title}</a>
                  {it.snippet && <Snippet html={it.snippet} />}
                </li>
              ))}
            </ol>
          )}
          <Pager page={page} pages={pages} href={(p) => searchHref(q, mode, tag, p)} />
        </>
      )}
    </div>
  );
}
