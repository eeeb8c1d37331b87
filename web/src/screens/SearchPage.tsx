// Full search results at /app/-/search?q=&mode= (Enter in the header's box comes here).
import { useEffect, useState } from "preact/hooks";
import { api, type SearchAnswer, type SearchMode } from "../api";
import { MODES, Snippet } from "../components/SearchBox";
import { FormError } from "../components/Form";
import { failure, type ErrorText } from "../errors";
import { t, useI18n } from "../i18n";
import { appHref, location, navigate, pageHref } from "../router";
import { currentWorkspace } from "../session";
import { useStore } from "../store";

export function SearchPage() {
  useI18n();
  const loc = useStore(location);
  const ws = useStore(currentWorkspace);
  const q = loc.query.get("q") ?? "";
  const tag = loc.query.get("tag") ?? "";
  const mode = (MODES as string[]).includes(loc.query.get("mode") ?? "") ? (loc.query.get("mode") as SearchMode) : "keyword";
  const [answer, setAnswer] = useState<SearchAnswer | null>(null);
  const [error, setError] = useState<ErrorText>("");
  const [draft, setDraft] = useState(q);

  useEffect(() => setDraft(q), [q]);
  useEffect(() => {
    document.title = `${t("nav.search")}: ${q}`;
    if (!q.trim() && !tag) return;
    let live = true;
    setError("");
    const run = tag
      ? api.notes({ tag, limit: 100 }).then((r) => ({
          query: q,
          mode,
          engine: "tag",
          items: r.items.map((p) => ({ slug: p.slug, title: p.title, snippet: "", score: 0 })),
        }))
      : api.search(q.trim(), mode, undefined, 50);
    run.then(
      (a) => live && setAnswer(a),
      (e) => live && setError(failure(e)),
    );
    return () => {
      live = false;
    };
  }, [q, mode, tag, ws]);

  return (
    <div class="search-page">
      <h1>{t("nav.search")}</h1>
      <form
        class="editor-bar"
        onSubmit={(e) => {
          e.preventDefault();
          void navigate(appHref("-/search", { q: draft.trim(), mode }));
        }}
      >
        <input type="search" aria-label={t("nav.search")} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        <select
          aria-label={t("search.mode")}
          value={mode}
          onChange={(e) => void navigate(appHref("-/search", { q, mode: e.currentTarget.value }))}
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
      <FormError error={error} />
      {!answer && !error && (q.trim() !== "" || tag !== "") && <p class="muted">{t("common.loading")}</p>}
      {answer && (
        <>
          <p class="muted">{t("search.results_count", { count: answer.items.length })}</p>
          {answer.items.length === 0 ? (
            <p>{t("search.no_results", { query: q })}</p>
          ) : (
            <ul class="results">
              {answer.items.map((it) => (
                <li key={it.slug}>
                  <a href={pageHref(it.slug)}>{it.title}</a>
                  {it.snippet && <Snippet html={it.snippet} />}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </div>
  );
}
