// Every visible string comes from the server's catalogue (GET /api/i18n): t("key", {vars}).
import { api, type Catalogue } from "./api";
import { store, useStore } from "./store";

const LANG_KEY = "cairn.lang";

export const catalogue = store<Catalogue>({ language: "en", languages: ["en"], messages: {} });

/** The language a signed-out visitor picked (a signed-in user's is stored on the server). */
export function storedLanguage(): string | undefined {
  try {
    return localStorage.getItem(LANG_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

function remember(lang: string): void {
  try {
    localStorage.setItem(LANG_KEY, lang);
  } catch {
    /* private mode */
  }
}

/** Keys asked for that the catalogue lacks (shown raw): each is reported once, as a
 *  console warning, which fails the browser tests. Only once messages have loaded. */
let loaded = false;
const missing = new Set<string>();

/** Loads the messages: `lang` if given, else the server's choice (user, then Accept-Language). */
export async function loadMessages(lang?: string): Promise<void> {
  const c = await api.i18n(lang);
  catalogue.set(c);
  loaded = true;
  document.documentElement.lang = c.language;
}

/** Switches language: stored on the user when signed in, and the messages reloaded. */
export async function switchLanguage(code: string, signedIn: boolean): Promise<void> {
  if (signedIn) await api.setLanguage(code);
  remember(code);
  await loadMessages(code);
}

export function t(key: string, vars?: Record<string, string | number>): string {
  const found = catalogue.get().messages[key];
  if (found === undefined && loaded && !missing.has(key)) {
    missing.add(key);
    console.warn(`i18n: no message "${key}" in the ${catalogue.get().language} catalogue`);
  }
  const text = found ?? key;
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
}

/** Re-renders the calling component when the language changes. */
export function useI18n(): Catalogue {
  return useStore(catalogue);
}

/** The name of a language in that language (for the language menu). */
export function languageName(code: string): string {
  try {
    const name = new Intl.DisplayNames([code], { type: "language" }).of(code);
    return name ? name.charAt(0).toLocaleUpperCase(code) + name.slice(1) : code;
  } catch {
    return code;
  }
}

export function formatDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return new Intl.DateTimeFormat(catalogue.get().language, { dateStyle: "medium", timeStyle: "short" }).format(d);
}
