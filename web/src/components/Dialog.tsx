// Modal dialogs: <Dialog> for forms, and confirmDialog() for yes/no questions.
import { useLayoutEffect, useRef } from "preact/hooks";
import type { ComponentChildren } from "preact";
import { t, useI18n } from "../i18n";
import { store, useStore } from "../store";

export function Dialog({
  title,
  onClose,
  children,
  wide,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  // A layout effect: focus and the Escape key belong to the dialog from its first paint
  // (an effect runs up to a frame later, and a key pressed in between was lost).
  useLayoutEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const el = ref.current;
    const first = el?.querySelector<HTMLElement>("[autofocus], input, select, textarea, button.primary, button");
    first?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.stopPropagation();
        onClose();
      }
    };
    el?.addEventListener("keydown", onKey);
    return () => {
      el?.removeEventListener("keydown", onKey);
      before?.focus?.();
    };
  }, []);
  return (
    <div class="overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div class={"dialog" + (wide ? " dialog-wide" : "")} role="dialog" aria-modal="true" aria-label={title} ref={ref}>
        <h2>{title}</h2>
        {children}
      </div>
    </div>
  );
}

interface Question {
  message: string;
  /** Listed under the message (e.g. the subpages a delete takes along). */
  items: string[];
  confirmLabel: string;
  danger: boolean;
  resolve: (ok: boolean) => void;
}

const question = store<Question | null>(null);

/** Asks a yes/no question in a modal; resolves true when confirmed. */
export function confirmDialog(
  message: string,
  opts: { confirmLabel?: string; danger?: boolean; items?: string[] } = {},
): Promise<boolean> {
  return new Promise((resolve) => {
    question.get()?.resolve(false);
    question.set({
      message,
      items: opts.items ?? [],
      confirmLabel: opts.confirmLabel ?? t("common.confirm"),
      danger: opts.danger ?? false,
      resolve,
    });
  });
}

export function ConfirmHost() {
  useI18n();
  const q = useStore(question);
  if (!q) return null;
  const answer = (ok: boolean) => {
    question.set(null);
    q.resolve(ok);
  };
  return (
    <Dialog title={t("common.confirm")} onClose={() => answer(false)}>
      <p class="confirm-message">{q.message}</p>
      {q.items.length > 0 && (
        <ul class="confirm-items" data-testid="confirm-items">
          {q.items.map((it, i) => (
            <li key={i}>{it}</li>
          ))}
        </ul>
      )}
      <div class="dialog-actions">
        <button type="button" onClick={() => answer(false)}>
          {t("common.cancel")}
        </button>
        <button type="button" class={q.danger ? "danger" : "primary"} onClick={() => answer(true)} autoFocus>
          {q.confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
