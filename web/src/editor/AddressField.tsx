// The address a new page will get, shown in the new-page editor and editable until the
// first save (after that only a rename changes it). Two pages may share a title: a
// title-only create whose address is taken gets the first free "-2", "-3"… (docs/api.md,
// "Pages"), so the field shows what the server will give — `GET /api/slug?title=` —
// rather than the title's slug as the app would derive it.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api";
import { t } from "../i18n";
import { deriveSlug } from "../markdown/slug";
import { BASE } from "../router";

/** What is known of the address: `free`, `taken`, `invalid` (no page may have it), or
 *  still being asked (`checking`, also while the title is typed); `idle` without one. */
type AddressState = "idle" | "checking" | "free" | "taken" | "invalid";

export interface NewAddress {
  /** The slug shown: the one typed, else the one the title would get. */
  slug: string;
  /** Typed by the person (then sent as the create's `slug`); else the server numbers it. */
  typed: boolean;
  state: AddressState;
}

/** How long typing must pause before the address is asked for. */
const DEBOUNCE_MS = 250;

/** The address of a new page titled `title`, or `typed` when the person gave one (null:
 *  follow the title). The server's answer decides; a request still under way when the
 *  input changes is aborted. */
export function useNewAddress(title: string, typed: string | null): NewAddress {
  const [answer, setAnswer] = useState<{ asked: string; slug: string; state: AddressState } | null>(null);
  const asked = typed !== null ? `slug:${typed.trim()}` : `title:${title.trim()}`;
  useEffect(() => {
    const value = typed !== null ? typed.trim() : title.trim();
    if (!value) return;
    const abort = new AbortController();
    const timer = window.setTimeout(() => {
      api.slugFor(typed !== null ? { slug: value } : { title: value }, abort.signal).then(
        (a) => setAnswer({ asked, slug: a.slug, state: a.available ? "free" : "taken" }),
        (e: unknown) => {
          if (abort.signal.aborted) return;
          // 400 invalid_slug: no page may have it. Anything else (offline): the save says it.
          const invalid = e instanceof ApiError && e.status === 400;
          setAnswer({ asked, slug: value, state: invalid ? "invalid" : "idle" });
        },
      );
    }, DEBOUNCE_MS);
    return () => {
      window.clearTimeout(timer);
      abort.abort();
    };
  }, [asked]);
  if (typed !== null) {
    const state = !typed.trim() ? "invalid" : answer?.asked === asked ? answer.state : "checking";
    return { slug: typed, typed: true, state };
  }
  if (!title.trim()) return { slug: "", typed: false, state: "idle" };
  // Until the server answers, the title's own slug (as the app derives it) is shown.
  return answer?.asked === asked
    ? { slug: answer.slug, typed: false, state: answer.state }
    : { slug: deriveSlug(title), typed: false, state: "checking" };
}

/** Whether a create with this address must wait: a typed address no page may have or
 *  that another page has. */
export function addressBlocks(a: NewAddress): boolean {
  return a.typed && (a.state === "taken" || a.state === "invalid");
}

/** The message under the field, if any. */
function addressMessage(a: NewAddress, title: string): string {
  if (a.state === "invalid") return t("editor.address_invalid");
  if (a.state === "taken" && a.typed) return t("editor.address_taken");
  // Numbered by the server because the title's own address is taken: say why.
  const own = deriveSlug(title);
  if (!a.typed && a.state === "free" && own && a.slug !== own) return t("editor.address_numbered", { taken: own });
  return "";
}

/** The editable address of a new page: the workspace's prefix, the slug, and what is
 *  wrong with it or why it is numbered. */
export function AddressField({
  address,
  title,
  workspace,
  onType,
}: {
  address: NewAddress;
  title: string;
  workspace: string | null;
  onType: (slug: string | null) => void;
}) {
  const message = addressMessage(address, title);
  const bad = addressBlocks(address);
  const prefix = `${BASE}${workspace ? `@${workspace}/` : ""}`;
  return (
    <div class="editor-bar editor-address" data-testid="new-address">
      <label for="editor-address">{t("editor.address")}</label>
      <span class="muted" aria-hidden="true">
        {prefix}
      </span>
      <input
        id="editor-address"
        name="slug"
        value={address.slug}
        placeholder={deriveSlug(title) || "page"}
        spellcheck={false}
        autoComplete="off"
        aria-invalid={bad}
        aria-describedby={message ? "editor-address-note" : undefined}
        // Emptied, the field follows the title again.
        onInput={(e) => onType(e.currentTarget.value.trim() ? e.currentTarget.value : null)}
      />
      {message && (
        <small class={bad ? "form-error" : "hint"} id="editor-address-note" data-testid="address-note">
          {message}
        </small>
      )}
    </div>
  );
}
