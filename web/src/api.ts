// The JSON API of the Cairn server (docs/api.md; the running server's /openapi.json).
// Every failure is an ApiError carrying the problem+json body (RFC 9457) when there is one.

import type { components } from "./generated/openapi";

/** The server's schemas, generated from its OpenAPI document (src/generated/openapi.ts):
 *  the names below are the app's for them, never copies. */
type Schemas = components["schemas"];

/** An error body: the server's problem+json, whose fields may all be missing when the
 *  answer came from elsewhere (a proxy's error page), plus any extension members. */
export type Problem = Partial<Schemas["Problem"]> & { [extra: string]: unknown };

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  readonly retryAfter: string | null;
  constructor(status: number, problem: Problem, retryAfter: string | null) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
  get code(): string {
    return this.problem.code ?? "";
  }
}

export type User = Schemas["User"];
/** A workspace as listed for the caller; its `can` is what the caller may do there, as
 *  the server decides it (the app keeps no copy of the rule). */
export type Workspace = Schemas["WorkspaceInfo"];
export type Page = Schemas["Page"];
export type PageSummary = Schemas["PageSummary"];
export type TreeNode = Schemas["TreeNode"];
export type PageRef = Schemas["PageRef"];
export type PageViewData = Schemas["PageView"];
export type HistoryEntry = Schemas["HistoryEntry"];
export type Revision = Schemas["Revision"];
export type Diff = Schemas["Diff"];
/** The answer of an erase: the revision's new id, and how many revision ids changed. */
export type Erased = Schemas["Erased"];
export type TrashEntry = Schemas["TrashEntry"];
export type TrashedPage = Schemas["TrashedPage"];
export type SearchResult = Schemas["Hit"];
export type SearchAnswer = Schemas["SearchResults"];
export type Upload = Schemas["Upload"];
export type Catalogue = Schemas["Catalogue"];
export type System = Schemas["SystemReport"];
export type TokenInfo = Schemas["TokenInfo"];
export type SignInMethods = Schemas["SignInMethods"];
export type Invitation = Schemas["Invitation"];
export type InvitationOffer = Schemas["InvitationOffer"];
export type OAuthGrant = Schemas["Grant"];
export type OAuthRequest = Schemas["AuthorizationRequest"];
export type Member = Schemas["Member"];
export type Webhook = Schemas["Webhook"];
export type Delivery = Schemas["Delivery"];
export type LinkSuggestions = Schemas["LinkSuggestions"];
export type TagSuggestions = Schemas["TagSuggestions"];
export type Summary = Schemas["Summary"];
export type Insights = Schemas["Insights"];
export type GraphData = Schemas["Graph"];

// TODO(server types): the two problem members below are the server's (docs/api.md,
// "Pages"); the OpenAPI document types a problem's extension members as any JSON, so
// they are typed here, and read only after their shape is checked.

/** Who deleted a page that is in the trash, and when: the `trashed` member of a
 *  `page_not_found` 404 for it (named by its slug or by an old slug of it). */
export interface TrashedInfo {
  slug: string;
  title: string;
  deleted_at: string;
  deleted_by: { id: number; name: string };
}

/** The latest save an editor did not see: the `theirs` member of a 409 `stale_revision`
 *  or `merge_conflict`. */
export interface TheirSave {
  revision: string;
  author: { id: number; name: string };
  at: string;
}

/** `GET /api/embeds`: the live pages of a workspace named by `slugs` (an old slug of a
 *  renamed page answers under the slug asked for), and the slugs that name none. */
export type EmbedsAnswer = Schemas["Embeds"];

/** `GET /api/slug`: the address a page would get (`title=`), or whether one is free (`slug=`). */
export type SlugAnswer = Schemas["NewSlug"];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isPerson = (v: unknown): v is { id: number; name: string } => isObject(v) && typeof v.name === "string";

/** The trashed page a 404 names, if it names one. */
export function trashedOf(e: unknown): TrashedInfo | null {
  if (!(e instanceof ApiError) || e.status !== 404) return null;
  const t = e.problem.trashed;
  return isObject(t) && typeof t.slug === "string" && typeof t.deleted_at === "string" && isPerson(t.deleted_by)
    ? (t as unknown as TrashedInfo)
    : null;
}

/** The save a 409 was answered over, if the answer names it. */
export function theirsOf(e: unknown): TheirSave | null {
  if (!(e instanceof ApiError) || e.status !== 409) return null;
  const t = e.problem.theirs;
  return isObject(t) && typeof t.revision === "string" && typeof t.at === "string" && isPerson(t.author)
    ? (t as unknown as TheirSave)
    : null;
}

/** The search modes the app offers (the server's schema types `mode` as a plain string). */
export type SearchMode = "keyword" | "semantic" | "hybrid";

/** A page of a list: every list route answers this shape (`List_*` in the schema). */
interface Listing<T> {
  items: T[];
  total: number;
}

// TODO(server): `webhook_events` in /api/system (the event kinds core::webhooks sends).
/** The page events a webhook can subscribe to (docs/api.md, "Events (outbox)"). */
export const EVENT_KINDS = ["page.created", "page.updated", "page.deleted", "page.moved", "page.renamed"] as const;

/** Called when any request answers 401 (the session ended): the app signs the user out. */
let onUnauthorized: (() => void) | null = null;
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

/** The workspace content routes act on (`ws=`); null = the user's default. */
let workspace: string | null = null;
export function setApiWorkspace(slug: string | null): void {
  workspace = slug;
}

type Query = Record<string, string | number | boolean | null | undefined>;

/** `withWs`: true for the current workspace, or a workspace's slug. */
function url(path: string, query?: Query, withWs: boolean | string = false): string {
  const params = new URLSearchParams();
  const ws = typeof withWs === "string" ? withWs : withWs ? workspace : null;
  if (ws) params.set("ws", ws);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

interface Options {
  query?: Query;
  body?: unknown;
  /** Send `ws=`: true for the current workspace, or a workspace's slug. */
  ws?: boolean | string;
  signal?: AbortSignal;
  /** Do not treat 401 as "the session ended" (sign-in and the first /api/me). */
  quiet401?: boolean;
}

/** One API request (exported for routes a screen types locally until the generated
 *  types have them). */
export async function request<T>(method: string, path: string, opts: Options = {}): Promise<T> {
  const init: RequestInit = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (opts.signal) init.signal = opts.signal;
  if (opts.body instanceof FormData) {
    init.body = opts.body;
  } else if (opts.body !== undefined) {
    init.body = JSON.stringify(opts.body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  const res = await fetch(url(path, opts.query, opts.ws), init);
  if (res.status === 204) return undefined as T;
  const type = res.headers.get("content-type") ?? "";
  const data: unknown = type.includes("json") ? await res.json().catch(() => ({})) : await res.text();
  if (!res.ok) {
    const problem: Problem =
      typeof data === "object" && data !== null ? (data as Problem) : { status: res.status, title: String(data) };
    if (res.status === 401 && !opts.quiet401) onUnauthorized?.();
    throw new ApiError(res.status, problem, res.headers.get("retry-after"));
  }
  return data as T;
}

const enc = encodeURIComponent;

// TODO(server): `list_max_limit` in /api/system (the largest `limit` a list takes).
/** The most items one list request may ask for (lists take limit ≤ 500). */
const PAGE_LIMIT = 500;

/** Every item of a paged list, asked for `PAGE_LIMIT` at a time until `total` is reached
 *  (one request for any list of up to 500: nothing is silently cut at the first page). */
export async function allItems<T>(
  fetchPage: (limit: number, offset: number) => Promise<Listing<T>>,
): Promise<Listing<T>> {
  const items: T[] = [];
  for (;;) {
    const page = await fetchPage(PAGE_LIMIT, items.length);
    items.push(...page.items);
    // A short page ends the list too (a total that moved while paging must not loop).
    if (items.length >= page.total || page.items.length < PAGE_LIMIT) return { items, total: items.length };
  }
}

const notes = (query: Query = {}) => request<Schemas["List_PageSummary"]>("GET", "/api/notes", { query, ws: true });

export const api = {
  // Accounts
  me: () => request<User>("GET", "/api/me", { quiet401: true }),
  login: (email: string, password: string) =>
    request<User>("POST", "/api/auth/login", { body: { email, password } satisfies Schemas["LoginRequest"], quiet401: true }),
  register: (email: string, password: string, name?: string) =>
    request<User>("POST", "/api/auth/register", {
      body: (name ? { email, password, name } : { email, password }) satisfies Schemas["RegisterRequest"],
    }),
  logout: () => request<void>("POST", "/api/auth/logout", { quiet401: true }),
  i18n: (lang?: string) => request<Catalogue>("GET", "/api/i18n", { query: { lang } }),
  setLanguage: (code: string) => request<Schemas["Language"]>("POST", `/api/lang/${enc(code)}`),

  system: () => request<System>("GET", "/api/system"),

  // Workspaces
  workspaces: () =>
    allItems((limit, offset) => request<Schemas["List_WorkspaceInfo"]>("GET", "/api/workspaces", { query: { limit, offset } })),
  createWorkspace: (name: string, slug?: string) =>
    request<Workspace>("POST", "/api/workspaces", { body: (slug ? { name, slug } : { name }) satisfies Schemas["CreateWorkspace"] }),
  switchWorkspace: (slug: string) =>
    request<Schemas["Switched"]>("POST", `/api/workspaces/${enc(slug)}/switch`),

  // Pages
  tree: () => request<TreeNode[]>("GET", "/api/pages", { ws: true }),
  page: (slug: string, ws?: string | null) => request<Page>("GET", `/api/pages/${enc(slug)}`, { ws: ws ?? true }),
  /** The pages embeds show, up to 50 slugs at once (src/embeds.ts batches them). */
  embeds: (ws: string, slugs: string[]) =>
    request<EmbedsAnswer>("GET", "/api/embeds", { query: { slugs: slugs.join(",") }, ws }),
  view: (slug: string, ws?: string | null) =>
    request<PageViewData>("GET", `/api/pages/${enc(slug)}/view`, { ws: ws ?? true }),
  createPage: (body: Schemas["CreatePage"]) =>
    request<Page>("POST", "/api/pages", { body, ws: true }),
  updatePage: (slug: string, body: Schemas["UpdatePage"]) => request<Page>("PUT", `/api/pages/${enc(slug)}`, { body, ws: true }),
  deletePage: (slug: string, recursive = false) =>
    request<void>("DELETE", `/api/pages/${enc(slug)}`, { query: { recursive: recursive || undefined }, ws: true }),
  movePage: (slug: string, parent: string | null) =>
    request<Page>("POST", `/api/pages/${enc(slug)}/move`, { body: { parent } satisfies Schemas["MovePage"], ws: true }),
  /** Puts the page right after the sibling `after` (null: first among its siblings). */
  setPosition: (slug: string, after: string | null) =>
    request<Page>("POST", `/api/pages/${enc(slug)}/position`, { body: { after } satisfies Schemas["OrderPage"], ws: true }),
  renamePage: (slug: string, new_slug: string, title?: string) =>
    request<Page>("POST", `/api/pages/${enc(slug)}/rename`, {
      body: (title ? { new_slug, title } : { new_slug }) satisfies Schemas["RenamePage"],
      ws: true,
    }),
  /** The address a page titled `title` would get now, or whether `slug` is free (400
   *  `invalid_slug` for one no page may have). */
  slugFor: (query: { title: string } | { slug: string }, signal?: AbortSignal) =>
    request<SlugAnswer>("GET", "/api/slug", { query, ws: true, signal }),
  notes,
  /** Every live page (flat), or every page with `tag`. */
  allNotes: (query: Query = {}) => allItems((limit, offset) => notes({ ...query, limit, offset })),

  // History
  history: (slug: string, limit = 100, offset = 0) =>
    request<Schemas["List_HistoryEntry"]>("GET", `/api/pages/${enc(slug)}/history`, { query: { limit, offset }, ws: true }),
  revision: (slug: string, sha: string) =>
    request<Revision>("GET", `/api/pages/${enc(slug)}/history/${enc(sha)}`, { ws: true }),
  diff: (slug: string, sha: string, against?: string) =>
    request<Diff>("GET", `/api/pages/${enc(slug)}/history/${enc(sha)}/diff`, { query: { against }, ws: true }),
  /** A new revision with `sha`'s content and the title it had, or with `keepTitle` the
   *  page's current title. The body is always sent (the server reads it as JSON). */
  restoreRevision: (slug: string, sha: string, keepTitle = false) =>
    request<Page>("POST", `/api/pages/${enc(slug)}/restore/${enc(sha)}`, {
      body: { keep_title: keepTitle } satisfies Schemas["RestoreRevision"],
      ws: true,
    }),
  /** Owners only: from revision `sha` on, the page holds the previous revision's content
   *  wherever it held `sha`'s, and the repository no longer holds it (api.md, "Erase a
   *  revision's content"). 409 `revision_is_current` while it is the page's content. */
  eraseRevision: (slug: string, sha: string) =>
    request<Erased>("POST", `/api/pages/${enc(slug)}/history/${enc(sha)}/erase`, { ws: true }),

  // Trash
  trash: () =>
    allItems((limit, offset) => request<Schemas["List_TrashEntry"]>("GET", "/api/trash", { query: { limit, offset }, ws: true })),
  trashedPage: (slug: string) => request<TrashedPage>("GET", `/api/trash/${enc(slug)}`, { ws: true }),
  restoreFromTrash: (slug: string) => request<Page>("POST", `/api/trash/${enc(slug)}/restore`, { ws: true }),
  purge: (slug: string) => request<void>("POST", `/api/trash/${enc(slug)}/purge`, { ws: true }),

  // Search
  search: (
    q: string,
    mode: SearchMode,
    signal?: AbortSignal,
    limit = 20,
    { tag, offset }: { tag?: string; offset?: number } = {},
  ) =>
    request<SearchAnswer>("GET", "/api/search", {
      query: { q, mode, limit, tag, offset: offset || undefined },
      ws: true,
      signal,
    }),

  // Settings and tokens
  updateProfile: (body: Schemas["ProfileRequest"]) =>
    request<User>("POST", "/api/settings/profile", { body }),
  changePassword: (current_password: string, new_password: string, revoke_tokens = false) =>
    request<void>("POST", "/api/settings/password", {
      body: { current_password, new_password, revoke_tokens } satisfies Schemas["PasswordRequest"],
    }),
  tokens: () =>
    allItems((limit, offset) => request<Schemas["List_TokenInfo"]>("GET", "/api/tokens", { query: { limit, offset } })),
  createToken: (name: string) => request<Schemas["NewToken"]>("POST", "/api/tokens", { body: { name } satisfies Schemas["TokenRequest"] }),
  revokeToken: (id: number) => request<void>("DELETE", `/api/tokens/${id}`),

  // Workspace settings (owner-only writes)
  updateWorkspace: (slug: string, name: string) => request<Workspace>("PUT", `/api/workspaces/${enc(slug)}`, { body: { name } satisfies Schemas["UpdateWorkspace"] }),
  deleteWorkspace: (slug: string) => request<void>("DELETE", `/api/workspaces/${enc(slug)}`),
  members: (slug: string) =>
    allItems((limit, offset) =>
      request<Schemas["List_Member"]>("GET", `/api/workspaces/${enc(slug)}/members`, { query: { limit, offset } }),
    ),
  addMember: (slug: string, email: string, role: Member["role"]) =>
    request<Member>("POST", `/api/workspaces/${enc(slug)}/members`, { body: { email, role } satisfies Schemas["AddMember"] }),
  removeMember: (slug: string, id: number) => request<void>("DELETE", `/api/workspaces/${enc(slug)}/members/${id}`),
  invitations: (slug: string) =>
    allItems((limit, offset) =>
      request<Schemas["List_Invitation"]>("GET", `/api/workspaces/${enc(slug)}/invitations`, { query: { limit, offset } }),
    ),
  invite: (slug: string, email: string, role: Member["role"]) =>
    request<Schemas["NewInvitation"]>("POST", `/api/workspaces/${enc(slug)}/invitations`, {
      body: { email, role } satisfies Schemas["InviteRequest"],
    }),
  revokeInvitation: (slug: string, id: number) => request<void>("DELETE", `/api/workspaces/${enc(slug)}/invitations/${id}`),

  // Apps connected by OAuth, and the consent screen (extensions)
  oauthGrants: () => request<Schemas["List_Grant"]>("GET", "/api/oauth/grants"),
  revokeOAuthGrant: (id: number) => request<void>("DELETE", `/api/oauth/grants/${id}`),
  oauthConsent: (query: OAuthRequest) =>
    request<Schemas["ConsentAsked"]>("GET", "/api/oauth/consent", { query: query as Record<string, string> }),
  oauthDecide: (query: OAuthRequest, allow: boolean) =>
    request<Schemas["Onward"]>("POST", "/api/oauth/consent", { body: { ...query, allow } satisfies Schemas["ConsentGiven"] }),

  // Signing in another way than a password, and joining by invitation (extensions)
  authMethods: () => request<SignInMethods>("GET", "/api/auth/methods"),
  invitationByLink: (token: string) =>
    request<InvitationOffer>("GET", "/api/invitations/link", { query: { token }, quiet401: true }),
  acceptInvitationLink: (token: string) =>
    request<Schemas["Joined"]>("POST", "/api/invitations/accept", { body: { token } satisfies Schemas["AcceptInvitation"] }),
  registerWithInvitation: (body: Schemas["InvitedRegistration"]) =>
    request<User>("POST", "/api/invitations/register", { body, quiet401: true }),
  myInvitations: () => request<Schemas["List_InvitationOffer"]>("GET", "/api/invitations"),
  acceptMyInvitation: (id: number) => request<Schemas["Joined"]>("POST", `/api/invitations/${id}/accept`),
  declineMyInvitation: (id: number) => request<void>("DELETE", `/api/invitations/${id}`),

  // Webhooks (of the current workspace)
  webhooks: () =>
    allItems((limit, offset) => request<Schemas["List_Webhook"]>("GET", "/api/webhooks", { query: { limit, offset }, ws: true })),
  createWebhook: (url: string, events: string[]) =>
    request<Schemas["NewWebhook"]>("POST", "/api/webhooks", { body: { url, events } satisfies Schemas["CreateWebhook"], ws: true }),
  deleteWebhook: (id: number) => request<void>("DELETE", `/api/webhooks/${id}`, { ws: true }),
  deliveries: (id: number) =>
    request<Schemas["List_Delivery"]>("GET", `/api/webhooks/${id}/deliveries`, { query: { limit: 50 }, ws: true }),

  // Intelligence
  suggestLinks: (slug: string) => request<LinkSuggestions>("GET", `/api/pages/${enc(slug)}/suggest-links`, { ws: true }),
  suggestTags: (slug: string) => request<TagSuggestions>("GET", `/api/pages/${enc(slug)}/suggest-tags`, { ws: true }),
  summary: (slug: string) => request<Summary>("GET", `/api/pages/${enc(slug)}/summary`, { ws: true }),
  insights: () => request<Insights>("GET", "/api/insights", { ws: true }),
  graph: () => request<GraphData>("GET", "/api/graph", { ws: true }),

  // Uploads
  upload: (file: Blob, filename: string) => {
    const form = new FormData();
    form.append("file", file, filename);
    return request<Upload>("POST", "/api/uploads", { body: form, ws: true });
  },
};
