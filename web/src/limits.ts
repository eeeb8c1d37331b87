// The server's limits that the app shows or applies before asking. They are the
// server's answer (GET /api/system, its `limits`), not copies: a limit that changes
// reaches the app without a new build. Only the password's length has a stand-in, for
// the register screen, which asks before anyone is signed in.
import { api, type System } from "./api";
import { store } from "./store";

/** The instance's report, once signed in (GET /api/system needs a credential); null
 *  before it answered, or when it failed. */
let system: System | null = null;

/** The report as a store, for what shows differently by it (the search screen's note
 *  on the embedding model, external images in rendered pages). */
export const systemReport = store<System | null>(null);

/** Asks for the report in the background (nothing waits for it: it is needed only when
 *  something goes wrong, such as an upload the server refused as too large, and by the
 *  screens that follow `systemReport`). */
export function loadSystem(): void {
  api.system().then(
    (s) => {
      system = s;
      systemReport.set(s);
      externalImages.set(s.external_images !== false);
    },
    // Unknown: the server's default. A server that blocks them still does, by its CSP.
    () => externalImages.set(true),
  );
}

/** Whether rendered pages show images from other sites: the server's `external_images`
 *  (true by default; false with BLOCK_EXTERNAL_IMAGES=1), null until the report answered
 *  (src/markdown/render.ts holds them back meanwhile). */
export const externalImages = store<boolean | null>(null);

/** The largest upload the server takes, in bytes, or null while unknown. */
export function uploadMaxBytes(): number | null {
  return system?.upload_max_bytes ?? null;
}

/** The server's limits once /api/system answered (see its `limits`), else null. */
function limits(): System["limits"] | null {
  return system?.limits ?? null;
}

/** The fewest characters of a new password. The register screen asks before anyone is
 *  signed in, when /api/system (which needs a credential) cannot answer: it shows the
 *  rule the server had when the app was built, and the server's answer when it can. */
export function passwordMinLength(): number {
  return limits()?.password_min_length ?? PASSWORD_MIN_LENGTH_AT_BUILD;
}
const PASSWORD_MIN_LENGTH_AT_BUILD = 8;

/** What the image picker offers: the types the server keeps (it judges by the bytes);
 *  any image while unknown. */
export function uploadTypes(): string[] {
  return limits()?.upload_types ?? ["image/*"];
}

/** The most characters of an API token's name, or undefined while unknown. */
export function tokenNameMaxLength(): number | undefined {
  return limits()?.token_name_max_length;
}

/** How many attempts a webhook delivery gets before it is failed, or null while unknown. */
export function webhookMaxAttempts(): number | null {
  return limits()?.webhook_max_attempts ?? null;
}
