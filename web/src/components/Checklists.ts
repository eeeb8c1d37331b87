// Checklists ticked in the page view: a click on a task box (`- [ ]` / `- [x]`, rendered
// by markdown-it-task-lists, its item marked with its source line) toggles that exact box
// in the markdown and saves it as a normal save against the revision on screen. On a
// 409 nothing is overwritten: the page is reloaded and the person is told to tick again.
// No `title` is sent: a tick never changes the page's title (CONTRACT §5).
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
export function tickLine(source: string, line: number, checked: boolean): string | null {
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

/** Makes the task boxes inside `host` tickable; returns the error to show (a failed or
 *  refused save). */
export function useChecklists(page: Page, host: RefObject<HTMLElement | null>, html: string): ErrorText {
  const [error, setError] = useState<ErrorText>("");
  const [busy, setBusy] = useState(false);
  // The text and revision the next tick builds on: a save's answer until the view reloads.
  const base = useRef({ content: page.content, revision: page.revision });
  useEffect(() => {
    base.current = { content: page.content, revision: page.revision };
  }, [page.slug, page.revision]);
  useEffect(() => setError(""), [page.slug]);

  // Rendered disabled (as in the editor's preview); usable here, one save at a time.
  useLayoutEffect(() => {
    host.current?.querySelectorAll<HTMLInputElement>(BOXES).forEach((box) => (box.disabled = busy));
  }, [html, busy]);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const onChange = async (e: Event) => {
      const box = e.target as HTMLInputElement;
      if (!box.matches(BOXES)) return;
      const line = Number(box.closest<HTMLElement>("li[data-line]")!.dataset.line);
      const { content, revision } = base.current;
      const next = tickLine(content, line, box.checked);
      setError("");
      if (next === null) {
        box.checked = !box.checked;
        setError(t("page.checklist.conflict"));
        await pagesChanged();
        return;
      }
      setBusy(true);
      try {
        const saved = await api.updatePage(page.slug, { content: next, base_revision: revision });
        base.current = { content: saved.content, revision: saved.revision };
        await pagesChanged();
      } catch (err) {
        box.checked = !box.checked;
        if (err instanceof ApiError && err.status === 409) {
          setError(t("page.checklist.conflict"));
          await pagesChanged();
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

  return error;
}
