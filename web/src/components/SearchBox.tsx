// The header's search: instant results while typing (debounced GET /api/search), a mode
// selector, "/" to focus, arrow keys and Enter to pick a result.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, type SearchMode, type SearchResult } from "../api";
import { failure, type ErrorText } from "../errors";
import { t, useI18n } from "../i18n";
import { sanitizeSnippet } from "../markdown/render";
import { prefetchView } from "../prefetch";
import { appHref, location, navigate, pageHref } from "../router";
import { currentWorkspace } from "../session";
import { store, useStore } from "../store";
import { FormError } from "./Form";
import { useListbox } from "./listbox";

export const MODES: SearchMode[] = ["keyword", "semantic", "hybrid"];
const searchMode = store<SearchMode>("keyword");

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el) return false;
  return el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName);
}

export function Snippet({ html }: { html: string }) {
  return <span class="snippet" dangerouslySetInnerHTML={{ __html: sanitizeSnippet(html) }} />;
}

export function SearchBox() {
  useI18n();
  const mode = useStore(searchMode);
  const ws = useStore(currentWorkspace);
  // On the results page, a tag filter (its chip shown there) holds for this box too.
  const loc = useStore(location);
  const tag = (loc.path === "-/search" && loc.query.get("tag")) || undefined;
  const [q, setQ] = useState("");
  const [items, setItems] = useState<SearchResult[] | null>(null);
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<ErrorText>("");
  const [open, setOpen] = useState(false);
  const { current: active, setActive, move } = useListbox(items?.length ?? 0, "search-result-", -1);
  const input = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLDivElement>(null);

  // "/" (outside text fields) focuses the box. (Ctrl/Cmd+K opens the command palette.)
  // A layout effect so the key works from the first paint (see CommandPalette).
  useLayoutEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "/" && !e.ctrlKey && !e.metaKey && !e.altKey && !isTyping(e.target)) {
        e.preventDefault();
        input.current?.focus();
        input.current?.select();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  useEffect(() => {
    const onDown = (e: MouseEvent) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", onDown);
    return () => document.removeEventListener("mousedown", onDown);
  }, []);

  // Debounced instant search; a newer query aborts the older request.
  useEffect(() => {
    const query = q.trim();
    if (!query) {
      setItems(null);
      setError("");
      return;
    }
    const ctl = new AbortController();
    const timer = window.setTimeout(() => {
      api
        .search(query, mode, ctl.signal, 10, { tag })
        .then((res) => {
          setItems(res.items);
          setTotal(res.total ?? res.items.length);
          setError("");
          setActive(res.items.length ? 0 : -1);
        })
        .catch((e) => {
          if (!ctl.signal.aborted) setError(failure(e));
        });
    }, 180);
    return () => {
      ctl.abort();
      window.clearTimeout(timer);
    };
  }, [q, mode, ws, tag]);

  useEffect(() => {
    const item = active >= 0 ? items?.[active] : undefined;
    if (item && open) prefetchView(item.slug);
  }, [active, items, open]);

  function go(item: SearchResult) {
    setOpen(false);
    input.current?.blur();
    void navigate(pageHref(item.slug));
  }

  function onKeyDown(e: KeyboardEvent) {
    // The keys that move the highlight do so only in the list shown (ArrowDown shows it).
    if (e.key === "ArrowDown") setOpen(true);
    if ((open || e.key === "ArrowDown") && move(e)) return;
    if (e.key === "Enter") {
      e.preventDefault();
      const item = items?.[active];
      if (item && open) go(item);
      else if (q.trim()) {
        setOpen(false);
        void navigate(appHref("-/search", { q: q.trim(), mode, tag }));
      }
    } else if (e.key === "Escape") {
      setOpen(false);
      input.current?.blur();
    }
  }

  const showPopup = open && q.trim() !== "" && (items !== null || error !== "");
  return (
    <div class="search" ref={box} role="search">
      <input
        ref={input}
        type="search"
        class="search-input"
        placeholder={t("search.placeholder")}
        aria-label={t("nav.search")}
        aria-controls={showPopup && items?.length ? "search-results" : undefined}
        aria-activedescendant={active >= 0 && showPopup ? `search-result-${active}` : undefined}
        value={q}
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onKeyDown={onKeyDown}
      />
      <select
        class="search-mode"
        aria-label={t("search.mode")}
        title={t("search.mode")}
        value={mode}
        onChange={(e) => searchMode.set(e.currentTarget.value as SearchMode)}
      >
        {MODES.map((m) => (
          <option key={m} value={m}>
            {t(`search.mode.${m}`)}
          </option>
        ))}
      </select>
      <kbd class="search-hint" aria-hidden="true">
        /
      </kbd>
      {showPopup && (
        <div class="search-popup">
          <FormError error={error} />
          {items && items.length === 0 && <p class="muted pad">{t("search.no_results", { query: q.trim() })}</p>}
          {items && items.length > 0 && (
            <ul id="search-results" role="listbox" aria-label={t("nav.search")}>
              {items.map((it, i) => (
                <li
                  key={it.slug}
                  id={`search-result-${i}`}
                  role="option"
                  aria-selected={i === active}
                  class={"search-result" + (i === active ? " active" : "")}
                  onMouseDown={(e) => {
                    e.preventDefault();
                    go(it);
                  }}
                  onMouseEnter={() => {
                    setActive(i);
                    prefetchView(it.slug);
                  }}
                >
                  <div class="search-result-title">{it.title}</div>
                  {it.snippet && <Snippet html={it.snippet} />}
                </li>
              ))}
            </ul>
          )}
          {items && items.length > 0 && (
            <a class="search-all" href={appHref("-/search", { q: q.trim(), mode, tag })} onClick={() => setOpen(false)}>
              {t("search.all_results")} ({total})
            </a>
          )}
        </div>
      )}
    </div>
  );
}
