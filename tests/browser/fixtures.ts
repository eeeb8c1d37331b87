// Shared fixtures of the app's browser tests:
// - every request outside the server's origin is blocked, and the test fails if one happened;
// - uncaught page errors and console errors fail the test (a refused CSP resource is a
//   console error); "Failed to load resource" for 4xx answers the app expects (401 from
//   /api/me before sign-in, a wrong password...) is not, but any 5xx answer is a failure,
//   and so is a request of our origin that failed without an answer;
// - so does a message key missing from the catalogue (the app's t() warns of each);
// - helpers to register a fresh user (unique email) and to call the API as that user.
import AxeBuilder from "@axe-core/playwright";
import { test as base, expect, type APIRequestContext, type Browser, type Locator, type Page } from "@playwright/test";

export interface TestUser {
  email: string;
  password: string;
  name: string;
  workspace: string;
}

export type Messages = Record<string, string>;

interface Guard {
  outside: string[];
  errors: string[];
  /** Console errors matching this are expected by the test (e.g. CSP reports it caused on purpose). */
  allowed: RegExp[];
}

export function uniqueEmail(prefix = "user"): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.test`;
}

/** Registers a user through the API of `request` (which then holds its session cookie). */
export async function registerUser(request: APIRequestContext, name = "Test User"): Promise<TestUser> {
  const email = uniqueEmail();
  const password = "correct horse battery";
  const res = await request.post("/api/auth/register", { data: { email, password, name } });
  expect(res.status(), await res.text()).toBe(201);
  const user = await res.json();
  return { email, password, name, workspace: user.default_workspace };
}

export async function messages(request: APIRequestContext, lang = "en"): Promise<Messages> {
  const res = await request.get(`/api/i18n?lang=${lang}`);
  expect(res.ok()).toBeTruthy();
  return (await res.json()).messages;
}

/** Fills {vars} of a message. */
export function fmt(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}

/** Someone else, made a member of the workspace `ws` by `owner`, signed in in a browser
 *  context of their own (close it with `page.context().close()`). */
export async function member(browser: Browser, owner: Page, ws: string, name: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const who = await registerUser(page.request, name);
  const added = await owner.request.post(`/api/workspaces/${ws}/members`, { data: { email: who.email } });
  expect(added.status(), await added.text()).toBe(201);
  return page;
}

export async function createPage(
  request: APIRequestContext,
  body: { title?: string; slug?: string; content?: string; parent?: string | null },
): Promise<{ slug: string; title: string; revision: string }> {
  const res = await request.post("/api/pages", { data: body });
  expect(res.status(), await res.text()).toBe(201);
  return res.json();
}

export const test = base.extend<{ guard: Guard; en: Messages; user: TestUser; editAlone: boolean }>({
  /** Edit without co-editing sessions, as over a connection that does not pass
   *  WebSockets: the editor then saves with its Save button against base_revision (the
   *  unsaved-changes guard and the conflict dialog are this mode's). `test.use({ editAlone: true })`. */
  editAlone: [false, { option: true }],
  guard: [
    async ({ context, page, baseURL, editAlone }, use) => {
      const origin = new URL(baseURL!).origin;
      const guard: Guard = { outside: [], errors: [], allowed: [] };
      if (editAlone) {
        await context.routeWebSocket(/\/api\/pages\/[^?]*\/live/, (ws) => ws.close());
        guard.allowed.push(/WebSocket/);
      }
      // The identity provider of the single sign-on specs is the one other origin allowed.
      const provider = process.env.CAIRN_OIDC_ISSUER;
      await context.route("**/*", (route) => {
        const url = route.request().url();
        if (url.startsWith(origin + "/") || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
        if (provider && url.startsWith(provider + "/")) return route.continue();
        guard.outside.push(url);
        return route.abort();
      });
      page.on("pageerror", (e) => guard.errors.push(`pageerror: ${e.message}`));
      page.on("console", (m) => {
        // A message key the catalogue lacks (web/src/i18n.ts warns once per key).
        if (m.type() === "warning" && m.text().startsWith("i18n: no message")) guard.errors.push(`console: ${m.text()}`);
        if (m.type() !== "error") return;
        if (/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) return;
        // The same for a WebSocket the server refused (a page deleted between being shown
        // and being followed answers its watch 404): Chromium logs it as an error.
        if (/WebSocket connection to .* failed: Error during WebSocket handshake: Unexpected response code: 4\d\d/.test(m.text())) return;
        guard.errors.push(`console: ${m.text()}`);
      });
      // A request that failed without an answer (refused, reset, blocked) fails the test;
      // one the app or a navigation cancelled (net::ERR_ABORTED: a superseded search, a
      // prefetch no longer wanted) is not a failure. Outside requests are counted above.
      page.on("requestfailed", (r) => {
        const why = r.failure()?.errorText ?? "";
        if (why === "net::ERR_ABORTED" || !r.url().startsWith(origin + "/")) return;
        guard.errors.push(`request failed: ${r.method()} ${r.url()} ${why}`);
      });
      page.on("response", (r) => {
        if (r.status() >= 500) guard.errors.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}`);
      });
      await use(guard);
      expect(guard.outside, "requests outside the origin").toEqual([]);
      expect(guard.errors.filter((e) => !guard.allowed.some((re) => re.test(e))), "page errors").toEqual([]);
    },
    { auto: true },
  ],
  en: async ({ request }, use) => {
    await use(await messages(request, "en"));
  },
  /** A fresh user, signed in in the page's browser context. */
  user: async ({ page }, use) => {
    await use(await registerUser(page.request));
  },
});

export { expect };

/** The error line (role alert) in `scope`: the catalogue's message, and beside it the
 *  server's problem `detail` only for a problem the catalogue has no message for. */
export function errorLine(scope: Page | Locator): { alert: Locator; message: Locator; detail: Locator } {
  const alert = scope.getByRole("alert");
  return { alert, message: alert.locator(".error-message"), detail: alert.locator(".error-detail") };
}

/** The URL the app shows for a page: /app/@<workspace>/<slug>[/<sub>], in any workspace
 *  unless `ws` is given. `sub` is a regular expression ("edit", "history/[0-9a-f]+"). */
export function pageUrl(slug: string, sub = "", ws?: string): RegExp {
  const esc = (s: string) => encodeURIComponent(s).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`/app/@${ws ? esc(ws) : "[^/]+"}/${esc(slug)}${sub ? "/" + sub : ""}$`);
}

/** Signs in through the login form. */
export async function signIn(page: Page, en: Messages, email: string, password: string): Promise<void> {
  await page.getByLabel(en["auth.field.email"]!).fill(email);
  await page.getByLabel(en["auth.field.password"]!, { exact: true }).fill(password);
  const answered = page.waitForResponse((r) => r.url().endsWith("/api/auth/login"));
  await page.getByRole("button", { name: en["auth.login.submit"]! }).click();
  await answered;
}

/** axe-core over what is on screen: no "serious" or "critical" violation (as a11y.spec.ts). */
export async function axe(page: Page, where: string): Promise<void> {
  const tags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];
  const result = await new AxeBuilder({ page }).withTags(tags).analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(" "))}`);
  expect.soft(bad, bad.join("\n")).toEqual([]);
}
