// Checklists ticked in the page view: a click on a box (`- [ ]` / `- [x]`, rendered by
// markdown-it-task-lists, its item marked with its source line) toggles exactly that box
// in the markdown and saves it as a normal save against the revision on screen. On a 409
// nothing is overwritten: the page is reloaded and the person is told to tick again. No
// `title` is sent: a tick never changes the page's title.
import type { RefObject } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, type Page } from "../api";
import { failure, type ErrorText } from "../errors";
import { t } from "../i18n";
import { pagesChanged } from "../session";

// A list item's marker and its box: quote markers and indent, `-`/`*`/`+` or `1.`/`1)`, `[`.
const TASK = /^((?:[ \t]*>)*[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[)[ xX](?=\])/;

/** `source` with the box of the task item on line `line` (0-based) ticked or not, or null
 *  when that line holds no task box. */
function tickLine(source: string, line: number, checked: boolean): string | null {
  let start = 0;
  for (let i = 0; i < line; i++) {
    const nl = source.indexOf("\n", start);
    if (nl < 0) return null;
    start = nl + 1;
  }
  const end = source.indexOf("\n", start);
  const m = TASK.exec(source.slice(start, end < 0 ? source.length : end));
  if (!m) return null;
  const at = start + m[1]!.length;
  return source.slice(0, at) + (checked ? "x" : " ") + source.slice(at + 1);
}

const BOXES = ".page-content li[data-line] input.task-list-item-checkbox";

interface Version {
  content: string;
  revision: string;
}

/** Makes the task boxes inside `host` tickable. Returns the content to show — the last
 *  tick's saved text until the reloaded view has caught up with it (a reload that was
 *  under way during a later tick must not show the older text, nor become the next
 *  tick's base) — and the error to show (a failed or refused save). */
export function useChecklists(page: Page, host: RefObject<HTMLElement | null>): { content: string; error: ErrorText } {
  const [error, setError] = useState<ErrorText>("");
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<Version | null>(null);
  // Revisions a tick of ours has replaced: a view that arrives with one of them is older.
  const replaced = useRef(new Set<string>());
  const stale = saved !== null && page.revision !== saved.revision && replaced.current.has(page.revision);
  const shown: Version = stale ? saved! : page;
  const current = useRef(shown);
  current.current = shown;

  useEffect(() => {
    if (saved && !stale) setSaved(null); // the view has caught up (or someone saved since)
  }, [page.revision]);
  useEffect(() => {
    setError("");
    setSaved(null);
    replaced.current.clear();
    focused.current = null;
  }, [page.slug]);

  // The line of the box ticked last: its focus comes back when the content is rendered
  // anew (the saved text replaces the elements), so the keyboard can go on from there.
  const focused = useRef<number | null>(null);

  // Rendered disabled (as in the editor's preview); usable here, one save at a time.
  useLayoutEffect(() => {
    const boxes = host.current?.querySelectorAll<HTMLInputElement>(BOXES) ?? [];
    boxes.forEach((box) => (box.disabled = busy));
    const active = document.activeElement;
    if (focused.current !== null && (!active || active === document.body)) {
      const again = [...boxes].find((box) => box.closest<HTMLElement>("li[data-line]")!.dataset.line === String(focused.current));
      again?.focus();
    }
  });

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const onChange = async (e: Event) => {
      const box = e.target as HTMLInputElement;
      if (!box.matches(BOXES)) return;
      const line = Number(box.closest<HTMLElement>("li[data-line]")!.dataset.line);
      focused.current = line;
      const base = current.current;
      const next = tickLine(base.content, line, box.checked);
      setError("");
      if (next === null) {
        box.checked = !box.checked;
        setError(t("page.checklist.conflict"));
        void pagesChanged();
        return;
      }
      setBusy(true);
      try {
        const result = await api.updatePage(page.slug, { content: next, base_revision: base.revision });
        replaced.current.add(base.revision);
        setSaved({ content: result.content, revision: result.revision });
        // The view (revision, tags) and the tree reload meanwhile; the next tick need not wait.
        void pagesChanged();
      } catch (err) {
        box.checked = !box.checked;
        if (err instanceof ApiError && err.status === 409) {
          setError(t("page.checklist.conflict"));
          void pagesChanged();
        } else {
          setError(failure(err));
        }
      } finally {
        setBusy(false);
      }
    };
    el.addEventListener("change", onChange);
    return () => el.removeEventListener("change", onChange);
  }, [page.slug]);

  return { content: shown.content, error };
}
