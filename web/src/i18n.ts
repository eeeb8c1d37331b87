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

/** The plural rules of the catalogue's language, made once per language. */
let rules: { language: string; rules: Intl.PluralRules } | null = null;
function pluralCategory(count: number): string {
  const language = catalogue.get().language;
  if (rules?.language !== language) rules = { language, rules: new Intl.PluralRules(language) };
  return rules.rules.select(count);
}

/** The message of `key`, in the form the number `count` takes: a message whose words
 *  change with the number has a key per plural category of the language
 *  (`key_one`, `key_other`, and `key_few`, `key_many`… where a language has them, as
 *  `Intl.PluralRules` names them), and `key_other` stands in for a category the
 *  catalogue lacks. A message that reads the same for every number keeps the plain key.
 *  Every catalogue has the same keys, so Japanese (one form) repeats its text under
 *  `_one`, which its rules never pick. */
function lookup(messages: Record<string, string>, key: string, count: unknown): string | undefined {
  if (typeof count === "number") {
    const found = messages[`${key}_${pluralCategory(count)}`] ?? messages[`${key}_other`];
    if (found !== undefined) return found;
  }
  return messages[key];
}

/** The message of `key` with its `{vars}` filled in. A numeric `count` picks the plural
 *  form (see `lookup`). */
export function t(key: string, vars?: Record<string, string | number>): string {
  const found = lookup(catalogue.get().messages, key, vars?.count);
  if (found === undefined && loaded && !missing.has(key)) {
    missing.add(key);
    console.warn(`i18n: no message "${key}" in the ${catalogue.get().language} catalogue`);
  }
  const text = found ?? key;
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
}

/** A message whose `{vars}` are not text but parts (a command in `<code>`, a link): the
 *  message split into its text and those parts, in the order the language puts them. */
export function tParts<P>(key: string, parts: Record<string, P>): (string | P)[] {
  const text = t(key);
  const out: (string | P)[] = [];
  let at = 0;
  for (const m of text.matchAll(/\{(\w+)\}/g)) {
    const name = m[1]!;
    if (!(name in parts)) continue;
    out.push(text.slice(at, m.index), parts[name]!);
    at = m.index + m[0].length;
  }
  out.push(text.slice(at));
  return out.filter((p) => p !== "");
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
