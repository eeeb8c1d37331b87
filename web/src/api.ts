// The JSON API of the Cairn server (docs/api.md; the running server's /openapi.json).
// Every failure is an ApiError carrying the problem+json body (RFC 9457) when there is one.

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  [extra: string]: unknown;
}

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

export interface User {
  id: number;
  email: string;
  name: string;
  language: string;
  default_workspace: string | null;
  created_at: string;
}

/** What the caller may do in a workspace, as the server decides it (the app keeps no copy
 *  of the rule). */
export interface WorkspaceAbilities {
  rename: boolean;
  delete: boolean;
  manage_members: boolean;
  manage_webhooks: boolean;
  erase_history: boolean;
}

export interface Workspace {
  slug: string;
  name: string;
  role: "owner" | "member";
  created_at: string;
  /** Absent from servers older than issue 67: then nothing owner-only is offered. */
  can?: WorkspaceAbilities;
}

export interface Author {
  id: number;
  name: string;
}

export interface Page {
  slug: string;
  title: string;
  content: string;
  parent: string | null;
  tags: string[];
  links: string[];
  revision: string;
  created_at: string;
  updated_at: string;
  updated_by: Author | null;
  workspace: string;
  /** Its place among its siblings when ordered by hand (an extension; null or absent: by title). */
  position?: number | null;
}

export interface PageSummary {
  slug: string;
  title: string;
  parent: string | null;
  tags: string[];
  revision: string;
  created_at: string;
  updated_at: string;
  updated_by: Author;
}

export interface TreeNode {
  slug: string;
  title: string;
  children: TreeNode[];
}

export interface PageRef {
  slug: string;
  title: string;
}

export interface Heading {
  level: number;
  text: string;
  anchor: string;
}

export interface PageViewData {
  page: Page;
  breadcrumbs: PageRef[];
  children: PageRef[];
  backlinks: PageRef[];
  headings: Heading[];
}

export interface HistoryEntry {
  sha: string;
  message: string;
  author: Author | null;
  created_at: string;
}

export interface Revision extends HistoryEntry {
  content: string;
  title: string;
}

export interface Diff {
  from: string | null;
  to: string;
  unified: string;
  added: number;
  removed: number;
}

/** The answer of an erase: the revision's new id, and how many revision ids changed (the
 *  history after it is rewritten; old ids keep answering). */
export interface Erased {
  sha: string;
  renamed: number;
}

export interface TrashEntry {
  slug: string;
  title: string;
  deleted_at: string;
  deleted_by: Author;
  /** The same for the pages one delete trashed (absent for pages trashed before groups existed). */
  group?: string | null;
  /** The page's parent when it was trashed. */
  parent?: string | null;
}

/** A page in the trash, for a preview (GET /api/trash/{slug}). */
export interface TrashedPage extends TrashEntry {
  content: string;
}

export type SearchMode = "keyword" | "semantic" | "hybrid";

export interface SearchResult {
  slug: string;
  title: string;
  snippet: string;
  score: number;
}

export interface SearchAnswer {
  query: string;
  mode: SearchMode;
  engine: string;
  items: SearchResult[];
  /** Matching pages in all (the items are one slice of them: limit, offset). */
  total: number;
}

export interface Upload {
  name: string;
  url: string;
  content_type: string;
  size: number;
}

export interface Catalogue {
  language: string;
  languages: string[];
  messages: Record<string, string>;
}

export interface Listing<T> {
  items: T[];
  total: number;
}

export interface TokenInfo {
  id: number;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface Member {
  id: number;
  email: string;
  name: string;
  role: "owner" | "member";
}

/** The page events a webhook can subscribe to (docs/api.md, "Events (outbox)"). */
export const EVENT_KINDS = ["page.created", "page.updated", "page.deleted", "page.moved", "page.renamed"] as const;

export interface Webhook {
  id: number;
  url: string;
  events: string[];
  active: boolean;
  created_at: string;
  secret?: string;
}

export type DeliveryStatus = "pending" | "delivered" | "retrying" | "failed";

export interface Delivery {
  id: number;
  event: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  response_status: number | null;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

export type IntelMode = "tfidf" | "embedding";

export interface LinkSuggestions {
  mode: IntelMode;
  items: { slug: string; title: string; score: number; reason: string }[];
}

export interface TagSuggestions {
  mode: IntelMode;
  items: { tag: string; score: number }[];
}

export interface Summary {
  mode: IntelMode;
  sentences: string[];
  summary: string;
}

export interface Insights {
  mode: IntelMode;
  pages: number;
  words: number;
  orphans: PageRef[];
  broken_links: { source: string; target: string }[];
  most_linked: { slug: string; title: string; count: number }[];
  stale: { slug: string; title: string; updated_at: string }[];
  tags: { tag: string; count: number }[];
  clusters: { label: string; size: number; pages: string[] }[];
}

export interface GraphData {
  mode: IntelMode;
  nodes: { id: string; title: string; tags: string[]; degree: number }[];
  edges: { source: string; target: string }[];
  broken: { source: string; target: string }[];
}

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

async function request<T>(method: string, path: string, opts: Options = {}): Promise<T> {
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

/** The most items one list request may ask for (lists take limit ≤ 500). */
export const PAGE_LIMIT = 500;

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

const notes = (query: Query = {}) => request<Listing<PageSummary>>("GET", "/api/notes", { query, ws: true });

export const api = {
  // Accounts
  me: () => request<User>("GET", "/api/me", { quiet401: true }),
  login: (email: string, password: string) =>
    request<User>("POST", "/api/auth/login", { body: { email, password }, quiet401: true }),
  register: (email: string, password: string, name?: string) =>
    request<User>("POST", "/api/auth/register", { body: name ? { email, password, name } : { email, password } }),
  logout: () => request<void>("POST", "/api/auth/logout", { quiet401: true }),
  i18n: (lang?: string) => request<Catalogue>("GET", "/api/i18n", { query: { lang } }),
  setLanguage: (code: string) => request<{ language: string }>("POST", `/api/lang/${enc(code)}`),

  system: () => request<{ version: string; registration_open: boolean; upload_max_bytes: number }>("GET", "/api/system"),

  // Workspaces
  workspaces: () =>
    allItems((limit, offset) => request<Listing<Workspace>>("GET", "/api/workspaces", { query: { limit, offset } })),
  createWorkspace: (name: string, slug?: string) =>
    request<Workspace>("POST", "/api/workspaces", { body: slug ? { name, slug } : { name } }),
  switchWorkspace: (slug: string) =>
    request<{ default_workspace: string }>("POST", `/api/workspaces/${enc(slug)}/switch`),

  // Pages
  tree: () => request<TreeNode[]>("GET", "/api/pages", { ws: true }),
  page: (slug: string, ws?: string | null) => request<Page>("GET", `/api/pages/${enc(slug)}`, { ws: ws ?? true }),
  view: (slug: string, ws?: string | null) =>
    request<PageViewData>("GET", `/api/pages/${enc(slug)}/view`, { ws: ws ?? true }),
  createPage: (body: { title?: string; slug?: string; content?: string; parent?: string | null }) =>
    request<Page>("POST", "/api/pages", { body, ws: true }),
  updatePage: (
    slug: string,
    body: { content?: string; title?: string; base_revision?: string; merge?: boolean; message?: string },
  ) => request<Page>("PUT", `/api/pages/${enc(slug)}`, { body, ws: true }),
  deletePage: (slug: string, recursive = false) =>
    request<void>("DELETE", `/api/pages/${enc(slug)}`, { query: { recursive: recursive || undefined }, ws: true }),
  movePage: (slug: string, parent: string | null) =>
    request<Page>("POST", `/api/pages/${enc(slug)}/move`, { body: { parent }, ws: true }),
  /** Puts the page right after the sibling `after` (null: first among its siblings). */
  setPosition: (slug: string, after: string | null) =>
    request<Page>("POST", `/api/pages/${enc(slug)}/position`, { body: { after }, ws: true }),
  renamePage: (slug: string, new_slug: string, title?: string) =>
    request<Page>("POST", `/api/pages/${enc(slug)}/rename`, { body: title ? { new_slug, title } : { new_slug }, ws: true }),
  notes,
  /** Every live page (flat), or every page with `tag`. */
  allNotes: (query: Query = {}) => allItems((limit, offset) => notes({ ...query, limit, offset })),

  // History
  history: (slug: string, limit = 100, offset = 0) =>
    request<Listing<HistoryEntry>>("GET", `/api/pages/${enc(slug)}/history`, { query: { limit, offset }, ws: true }),
  revision: (slug: string, sha: string) =>
    request<Revision>("GET", `/api/pages/${enc(slug)}/history/${enc(sha)}`, { ws: true }),
  diff: (slug: string, sha: string, against?: string) =>
    request<Diff>("GET", `/api/pages/${enc(slug)}/history/${enc(sha)}/diff`, { query: { against }, ws: true }),
  /** A new revision with `sha`'s content and the title it had, or with `keepTitle` the
   *  page's current title. The body is always sent (the server reads it as JSON). */
  restoreRevision: (slug: string, sha: string, keepTitle = false) =>
    request<Page>("POST", `/api/pages/${enc(slug)}/restore/${enc(sha)}`, { body: { keep_title: keepTitle }, ws: true }),
  /** Owners only: from revision `sha` on, the page holds the previous revision's content
   *  wherever it held `sha`'s, and the repository no longer holds it (api.md, "Erase a
   *  revision's content"). 409 `revision_is_current` while it is the page's content. */
  eraseRevision: (slug: string, sha: string) =>
    request<Erased>("POST", `/api/pages/${enc(slug)}/history/${enc(sha)}/erase`, { ws: true }),

  // Trash
  trash: () =>
    allItems((limit, offset) => request<Listing<TrashEntry>>("GET", "/api/trash", { query: { limit, offset }, ws: true })),
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
  updateProfile: (body: { name?: string; email?: string; language?: string; current_password?: string }) =>
    request<User>("POST", "/api/settings/profile", { body }),
  changePassword: (current_password: string, new_password: string) =>
    request<void>("POST", "/api/settings/password", { body: { current_password, new_password } }),
  tokens: () =>
    allItems((limit, offset) => request<Listing<TokenInfo>>("GET", "/api/tokens", { query: { limit, offset } })),
  createToken: (name: string) => request<{ id: number; name: string; token: string }>("POST", "/api/tokens", { body: { name } }),
  revokeToken: (id: number) => request<void>("DELETE", `/api/tokens/${id}`),

  // Workspace settings (owner-only writes)
  updateWorkspace: (slug: string, name: string) => request<Workspace>("PUT", `/api/workspaces/${enc(slug)}`, { body: { name } }),
  deleteWorkspace: (slug: string) => request<void>("DELETE", `/api/workspaces/${enc(slug)}`),
  members: (slug: string) =>
    allItems((limit, offset) =>
      request<Listing<Member>>("GET", `/api/workspaces/${enc(slug)}/members`, { query: { limit, offset } }),
    ),
  addMember: (slug: string, email: string, role: Member["role"]) =>
    request<Member>("POST", `/api/workspaces/${enc(slug)}/members`, { body: { email, role } }),
  removeMember: (slug: string, id: number) => request<void>("DELETE", `/api/workspaces/${enc(slug)}/members/${id}`),

  // Webhooks (of the current workspace)
  webhooks: () =>
    allItems((limit, offset) => request<Listing<Webhook>>("GET", "/api/webhooks", { query: { limit, offset }, ws: true })),
  createWebhook: (url: string, events: string[]) =>
    request<Webhook & { secret: string }>("POST", "/api/webhooks", { body: { url, events }, ws: true }),
  deleteWebhook: (id: number) => request<void>("DELETE", `/api/webhooks/${id}`, { ws: true }),
  deliveries: (id: number) =>
    request<Listing<Delivery>>("GET", `/api/webhooks/${id}/deliveries`, { query: { limit: 50 }, ws: true }),

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
