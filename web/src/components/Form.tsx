// Small shared pieces of forms: a labelled input, the error line, the button row of a
// dialog, a status line, and a copy-to-clipboard button.
import type { ComponentChildren, InputHTMLAttributes } from "preact";
import { useState } from "preact/hooks";
import { failure, type ErrorText } from "../errors";
import { t } from "../i18n";

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, "onInput" | "value" | "label">;

/** A labelled text input; `onValue` gets the new text. */
export function Field({
  label,
  hint,
  value,
  onValue,
  ...input
}: { label: string; hint?: ComponentChildren; value: string; onValue: (v: string) => void } & InputProps) {
  return (
    <label>
      <span>{label}</span>
      <input {...(input as InputHTMLAttributes<HTMLInputElement>)} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
      {hint && <small class="hint">{hint}</small>}
    </label>
  );
}

/** The error of a form or screen (nothing when empty): one message, and beside it the
 *  server's detail only for a problem the catalogue has no message for (`failure()`). */
export function FormError({ error }: { error: ErrorText }) {
  if (!error) return null;
  const { message, detail } = typeof error === "string" ? { message: error, detail: "" } : error;
  return (
    <p class="form-error" role="alert">
      <span class="error-message">{message}</span>
      {detail && (
        <>
          {" "}
          <small class="error-detail">{detail}</small>
        </>
      )}
    </p>
  );
}

/** A success line (nothing when empty). */
export function Notice({ text, children }: { text: string; children?: ComponentChildren }) {
  if (!text) return null;
  return (
    <p class="notice" role="status">
      {children ?? text}
    </p>
  );
}

/** Cancel and submit at the foot of a dialog's form. */
export function DialogActions({
  onCancel,
  submit,
  disabled,
  danger,
}: {
  onCancel: () => void;
  submit: string;
  disabled?: boolean;
  danger?: boolean;
}) {
  return (
    <div class="dialog-actions">
      <button type="button" onClick={onCancel}>
        {t("common.cancel")}
      </button>
      <button type="submit" class={danger ? "danger" : "primary"} disabled={disabled}>
        {submit}
      </button>
    </div>
  );
}

/** A secret shown once: the value, a copy button, and the warning. */
export function ShownOnce({ value, warning, testId }: { value: string; warning: string; testId?: string }) {
  const [copied, setCopied] = useState(false);
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      // No clipboard (insecure context, denied): select the text so Ctrl+C works.
      const el = document.querySelector<HTMLInputElement>(`[data-testid="${testId}"] input`);
      el?.select();
    }
  }
  return (
    <div class="shown-once" role="status" data-testid={testId}>
      <p class="hint">
        <strong>{warning}</strong>
      </p>
      <div class="copy-row">
        <input readOnly value={value} aria-label={warning} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={() => void copy()}>
          {copied ? t("common.copied") : t("common.copy")}
        </button>
      </div>
    </div>
  );
}

export interface Action {
  error: ErrorText;
  notice: string;
  /** True while `run` is waiting (a form disables its submit button meanwhile). */
  busy: boolean;
  /** Runs `fn`; a failure becomes the error text, success shows `done` (both cleared first). */
  run: (fn: () => Promise<unknown>, done?: string) => Promise<boolean>;
  setError: (e: ErrorText) => void;
}

/** The state of a form's action: its error, its success notice, and whether it is running. */
export function useAction(): Action {
  const [error, setError] = useState<ErrorText>("");
  const [notice, setNotice] = useState("");
  const [busy, setBusy] = useState(false);
  async function run(fn: () => Promise<unknown>, done = ""): Promise<boolean> {
    setError("");
    setNotice("");
    setBusy(true);
    try {
      await fn();
      setNotice(done);
      return true;
    } catch (e) {
      setError(failure(e));
      return false;
    } finally {
      setBusy(false);
    }
  }
  return { error, notice, busy, run, setError };
}

/** The error or notice of an action. */
export function Feedback({ action }: { action: Action }) {
  return (
    <>
      <FormError error={action.error} />
      <Notice text={action.notice} />
    </>
  );
}

/** A table cell with one small button, named after its row for screen readers. */
export function RowAction({ label, name, onClick }: { label: string; name: string; onClick: () => void }) {
  return (
    <td>
      <div class="row-actions">
        <button type="button" class="small" onClick={onClick} aria-label={`${label}: ${name}`}>
          {label}
        </button>
      </div>
    </td>
  );
}
