// The server's limits that the app shows or applies before asking. They are the
// server's answer (GET /api/system), not copies: a limit an operator changes reaches the
// app without a new build. The few that the server does not answer yet are copies, each
// marked TODO(server) with the field /api/system should add; they go when it does.
import { api, type System } from "./api";

/** The instance's report, once signed in (GET /api/system needs a credential); null
 *  before it answered, or when it failed. */
let system: System | null = null;

/** Asks for the report in the background (nothing waits for it: it is needed only when
 *  something goes wrong, such as an upload the server refused as too large). */
export function loadSystem(): void {
  api.system().then(
    (s) => void (system = s),
    () => undefined,
  );
}

/** The largest upload the server takes, in bytes, or null while unknown. */
export function uploadMaxBytes(): number | null {
  return system?.upload_max_bytes ?? null;
}

// TODO(server): `password_min_length` in /api/system (core::accounts::PASSWORD_MIN_LEN),
// answered without a credential too: the register form needs it before anyone signs in.
/** The fewest characters a new password has. */
export const PASSWORD_MIN_LENGTH = 8;

// TODO(server): `upload_types` in /api/system (the types core::uploads accepts).
/** What the image picker offers: the types the server keeps (it judges by the bytes). */
export const UPLOAD_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/svg+xml"];

// TODO(server): `token_name_max_length` in /api/system (core::tokens::MAX_TOKEN_NAME_LEN).
/** The most characters of an API token's name. */
export const TOKEN_NAME_MAX_LENGTH = 100;

// TODO(server): `webhook_max_attempts` in /api/system (core::webhooks::deliver::MAX_ATTEMPTS).
/** How many attempts a webhook delivery gets before it is failed. */
export const WEBHOOK_MAX_ATTEMPTS = 8;
