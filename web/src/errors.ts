// A failure as a sentence for the user: the problem's `code` picks a message of the
// catalogue; an unknown code falls back to a generic message, and only then is the
// problem's own `detail` (the server's words, in English) shown beside it.
import { ApiError } from "./api";
import { t } from "./i18n";
import { passwordMinLength, uploadMaxBytes } from "./limits";

const BY_CODE: Record<string, string> = {
  invalid_credentials: "auth.error.invalid_credentials",
  registration_closed: "auth.error.registration_closed",
  email_taken: "auth.error.email_taken",
  invalid_email: "auth.error.invalid_email",
  password_too_long: "auth.error.password_too_long",
  upload_type_refused: "upload.type_not_allowed",
  page_exists: "error.page_exists",
  page_not_found: "page.not_found",
  workspace_slug_taken: "error.workspace_taken",
  invalid_workspace_name: "error.invalid_name",
  invalid_name: "error.invalid_name",
  invalid_slug: "error.invalid_slug",
  move_cycle: "error.move_cycle",
  not_a_sibling: "error.not_a_sibling",
  // TODO(server): `content_max_bytes` in /api/system; the message then takes {max} (its
  // catalogues say "1 MiB" today).
  content_too_large: "error.content_too_large",
  title_too_long: "error.title_too_long",
  page_has_children: "error.page_has_children",
  busy: "error.busy",
  owner_only: "common.forbidden",
  revision_is_current: "history.erase_is_current",
  wrong_password: "settings.wrong_current_password",
  current_password_required: "settings.email_password_required",
  invalid_token_name: "error.invalid_name",
  already_member: "workspace.already_member",
  last_owner: "workspace.last_owner",
  webhook_target_not_allowed: "settings.webhooks.target_not_allowed",
  invalid_webhook_url: "settings.webhooks.invalid_url",
  invalid_webhook_events: "settings.webhooks.invalid_events",
  too_many_webhooks: "settings.webhooks.too_many",
  unknown_language: "error.unknown_language",
  password_sign_in_off: "auth.error.password_sign_in_off",
  sso_state_invalid: "auth.sso.error.state",
  sso_refused: "auth.sso.error.refused",
  sso_token_invalid: "auth.sso.error.token",
  sso_email_unverified: "auth.sso.error.email_unverified",
  sso_domain_not_allowed: "auth.sso.error.domain",
  sso_unavailable: "auth.sso.error.unavailable",
  sso_not_configured: "auth.sso.error.unavailable",
  too_many_attempts: "auth.error.rate_limited",
  invitation_not_found: "invitation.not_found",
  invalid_client: "oauth.error.invalid_client",
  invalid_redirect_uri: "oauth.error.invalid_redirect_uri",
  grant_not_found: "common.not_found",
};

/** The message of a problem's code alone (a redirect carried it, not an answer). */
export function codeMessage(code: string): string {
  const key = BY_CODE[code];
  return key ? t(key) : t("common.error");
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB` : `${Math.round(bytes / 1024)} KB`;
}

function errorMessage(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 429) return t("auth.error.rate_limited");
    if (e.status === 503) return t("common.database_unavailable");
    if (e.code === "upload_too_large" || e.status === 413) {
      // The served limit; unknown (its request failed), the server's own words say it.
      const max = uploadMaxBytes();
      return max === null ? t("common.error") : t("upload.too_large", { max: size(max) });
    }
    if (e.code === "password_too_short") return t("auth.error.password_too_short", { min: passwordMinLength() });
    const key = BY_CODE[e.code];
    if (key) return t(key);
    if (e.status === 403) return t("common.forbidden");
    if (e.status === 404) return t("common.not_found");
    return t("common.error");
  }
  if (e instanceof TypeError) return t("common.offline");
  return t("common.error");
}

/** A failure as shown: one line in the reader's language, and the server's `detail` only
 *  when the catalogue has no message for the problem (the generic "something went wrong"
 *  alone would say nothing). A known problem is never shown twice, once translated and
 *  once in the server's English under it. */
export interface Failure {
  message: string;
  detail: string;
}

/** What an error line shows: a failure, or a sentence of the app's own ("" = nothing). */
export type ErrorText = string | Failure;

const plain = (s: string) => s.trim().replace(/[.!。]+$/, "").toLowerCase();

export function failure(e: unknown): Failure {
  const message = errorMessage(e);
  const generic = message === t("common.error");
  const own = e instanceof ApiError && typeof e.problem.detail === "string" ? e.problem.detail.trim() : "";
  const detail = generic ? own : "";
  return { message, detail: plain(detail) === plain(message) ? "" : detail };
}
