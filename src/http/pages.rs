//! Page routes: tree, notes, CRUD, view, raw, move, rename, history, trash. Every route
//! takes `ws=`; without it the caller's default workspace applies.

use axum::extract::State;
use axum::http::header::{CONTENT_TYPE, ETAG, IF_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::Ctx;
use crate::core::pages::{
    self, Diff, Erased, HistoryEntry, NewPage, Page, PageSummary, PageUpdate, PageView, Revision, TrashEntry,
    TrashedPage, TreeNode, history,
};
use crate::core::paging::Paging;
use crate::error::{Error, Result};
use crate::http::extract::{Json, PagingQuery, Path};
use crate::http::scope::{Member, OnPage, Ws, names_workspace};
use crate::http::{List, Problem};
use crate::ids::Slug;

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new()
        .routes(routes!(page_tree, create_page))
        .routes(routes!(get_page, update_page, delete_page))
        .routes(routes!(list_notes))
        .routes(routes!(list_children))
        .routes(routes!(view_page))
        .routes(routes!(raw_page))
        .routes(routes!(move_page))
        .routes(routes!(order_page))
        .routes(routes!(rename_page))
        .routes(routes!(page_history))
        .routes(routes!(page_revision))
        .routes(routes!(revision_diff))
        .routes(routes!(restore_revision))
        .routes(routes!(erase_revision))
        .routes(routes!(list_trash))
        .routes(routes!(trashed_page))
        .routes(routes!(restore_from_trash))
        .routes(routes!(purge_from_trash))
        .routes(routes!(new_slug))
        .routes(routes!(embeds))
}

/// A page's old slug answers `308` with the same route under the slug it has now (CONTRACT
/// §5): the core answers `page_moved` for the page a route names, and this layer, which
/// knows the request's path, writes `Location` (the query string kept).
pub(crate) async fn redirect_old_slugs(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let uri = req.uri().clone();
    let mut res = next.run(req).await;
    let Some(moved) = res.extensions_mut().remove::<crate::error::Moved>() else { return res };
    match relocated(&uri, &moved.from, &moved.to).and_then(|l| HeaderValue::from_str(&l).ok()) {
        Some(location) => {
            res.headers_mut().insert(axum::http::header::LOCATION, location);
            res
        }
        // Only a route under /api/pages/{slug} names a page by its path.
        None => Error::page_not_found(&moved.from).into_response(),
    }
}

/// `uri` with the page segment of `/api/pages/{from}/…` replaced by `to`.
fn relocated(uri: &axum::http::Uri, from: &str, to: &str) -> Option<String> {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
    // A path segment keeps RFC 3986's unreserved characters as they are.
    const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
    let rest = uri.path().strip_prefix("/api/pages/")?;
    let (segment, tail) = rest.split_once('/').map_or((rest, ""), |(s, t)| (s, t));
    if percent_decode_str(segment).decode_utf8().ok()? != from {
        return None;
    }
    let to = utf8_percent_encode(to, SEGMENT).to_string();
    let tail = if tail.is_empty() { String::new() } else { format!("/{tail}") };
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    Some(format!("/api/pages/{to}{tail}{query}"))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct NotesQuery {
    /// Workspace slug (default: the caller's default workspace).
    pub ws: Option<String>,
    /// Only pages with this tag.
    pub tag: Option<String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeleteQuery {
    pub ws: Option<String>,
    /// Trash the page's live subtree too (otherwise a page with live children is 409).
    pub recursive: Option<bool>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DiffQuery {
    pub ws: Option<String>,
    /// An earlier revision of the page (default: the one before `sha`).
    pub against: Option<String>,
}

names_workspace!(NotesQuery, DeleteQuery, DiffQuery, SlugQuery, EmbedsQuery);

#[derive(Deserialize, ToSchema)]
pub(crate) struct MovePage {
    /// Slug of the new parent; null for the top level.
    #[serde(default)]
    pub parent: Option<String>,
}

/// Where a page goes among its siblings (an extension).
#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"after": "install"}))]
pub(crate) struct OrderPage {
    /// The sibling it goes right after; null (or absent) puts it first.
    #[serde(default)]
    pub after: Option<String>,
}

/// How a revision is restored (an optional body; an extension).
#[derive(Deserialize, ToSchema, Default)]
pub(crate) struct RestoreRevision {
    /// Keep the page's current title instead of the one the revision had.
    #[serde(default)]
    pub keep_title: bool,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SlugQuery {
    /// Workspace slug (default: the caller's default workspace).
    pub ws: Option<String>,
    /// A title: answers the address a page created with only this title would get.
    pub title: Option<String>,
    /// A slug: answers whether a new page may have it.
    pub slug: Option<String>,
}

/// A new page's address (an extension): the slug a title-only create would get now, or
/// whether a slug is free.
#[derive(Serialize, ToSchema)]
pub(crate) struct NewSlug {
    pub slug: String,
    /// False when a page (live or in the trash) has the slug.
    pub available: bool,
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct RenamePage {
    pub new_slug: String,
    pub title: Option<String>,
}

fn with_etag(status: StatusCode, page: Page) -> Response {
    let etag = HeaderValue::from_str(&format!("\"{}\"", page.revision)).ok();
    let mut res = (status, axum::Json(page)).into_response();
    if let Some(etag) = etag {
        res.headers_mut().insert(ETAG, etag);
    }
    res
}

/// The live pages as a tree (not paginated).
#[utoipa::path(get, path = "/api/pages", tag = "pages", params(Ws),
    responses((status = 200, body = Vec<TreeNode>), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn page_tree(State(ctx): State<Ctx>, m: Member) -> Result<axum::Json<Vec<TreeNode>>> {
    Ok(axum::Json(pages::tree(&ctx, &m.access).await?))
}

/// Creates a page.
#[utoipa::path(post, path = "/api/pages", tag = "pages", params(Ws), request_body = NewPage,
    responses((status = 201, body = Page, headers(("ETag" = String))),
        (status = 400, body = Problem, description = "Bad slug, content over 1 MiB, no title or slug, unknown parent"),
        (status = 404, body = Problem), (status = 409, body = Problem, description = "Slug taken"),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn create_page(State(ctx): State<Ctx>, m: Member, Json(req): Json<NewPage>) -> Result<Response> {
    Ok(with_etag(StatusCode::CREATED, pages::create(&ctx, &m.access, &m.auth.user, req).await?))
}

/// One page; `ETag` is its revision.
#[utoipa::path(get, path = "/api/pages/{slug}", tag = "pages", params(("slug" = String, Path), Ws),
    responses((status = 200, body = Page, headers(("ETag" = String))), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn get_page(State(ctx): State<Ctx>, p: OnPage) -> Result<Response> {
    Ok(with_etag(StatusCode::OK, pages::get(&ctx, &p.access, &p.slug).await?))
}

/// Updates a page. `base_revision` or `If-Match` guard against lost updates.
#[utoipa::path(put, path = "/api/pages/{slug}", tag = "pages", params(("slug" = String, Path), Ws, ("If-Match" = Option<String>, Header)),
    request_body = PageUpdate,
    responses((status = 200, body = Page, headers(("ETag" = String))), (status = 400, body = Problem),
        (status = 404, body = Problem),
        (status = 409, body = Problem, description = "Stale revision (body has current_revision) or merge conflict (body has merged)"),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn update_page(
    State(ctx): State<Ctx>,
    p: OnPage,
    headers: HeaderMap,
    Json(mut req): Json<PageUpdate>,
) -> Result<Response> {
    let if_match = headers
        .get(IF_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().trim_start_matches("W/").trim_matches('"').to_owned())
        .filter(|v| v != "*");
    req.base_revision = req.base_revision.or(if_match);
    Ok(with_etag(StatusCode::OK, pages::update(&ctx, &p.access, &p.auth.user, &p.slug, req).await?))
}

/// Moves a page to the trash (`recursive=true` for a page with live children).
#[utoipa::path(delete, path = "/api/pages/{slug}", tag = "pages", params(("slug" = String, Path), DeleteQuery),
    responses((status = 204, description = "Trashed"), (status = 400, body = Problem, description = "A query string that does not parse"),
        (status = 404, body = Problem),
        (status = 409, body = Problem, description = "Has live children"), (status = 503, body = Problem)))]
async fn delete_page(State(ctx): State<Ctx>, p: OnPage<DeleteQuery>) -> Result<StatusCode> {
    pages::delete(&ctx, &p.access, &p.auth.user, &p.slug, p.query.recursive.unwrap_or(false)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Live pages, most recently updated first; `tag=` filters.
#[utoipa::path(get, path = "/api/notes", tag = "pages", params(NotesQuery, PagingQuery),
    responses((status = 200, body = List<PageSummary>), (status = 400, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn list_notes(
    State(ctx): State<Ctx>,
    m: Member<NotesQuery>,
    paging: Paging,
) -> Result<axum::Json<List<PageSummary>>> {
    let (items, total) = pages::notes(&ctx, &m.access, m.query.tag.as_deref(), paging).await?;
    Ok(axum::Json(List::new(items, total)))
}

/// Direct live children of a page.
#[utoipa::path(get, path = "/api/pages/{slug}/children", tag = "pages", params(("slug" = String, Path), Ws),
    responses((status = 200, body = List<PageSummary>), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn list_children(State(ctx): State<Ctx>, p: OnPage) -> Result<axum::Json<List<PageSummary>>> {
    let items = pages::children(&ctx, &p.access, &p.slug).await?;
    let total = items.len() as i64;
    Ok(axum::Json(List::new(items, total)))
}

/// The page with breadcrumbs, children, backlinks and headings.
#[utoipa::path(get, path = "/api/pages/{slug}/view", tag = "pages", params(("slug" = String, Path), Ws),
    responses((status = 200, body = PageView), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn view_page(State(ctx): State<Ctx>, p: OnPage) -> Result<axum::Json<PageView>> {
    Ok(axum::Json(pages::view(&ctx, &p.access, &p.slug).await?))
}

/// The raw markdown (`text/markdown`).
#[utoipa::path(get, path = "/api/pages/{slug}/raw", tag = "pages", params(("slug" = String, Path), Ws),
    responses((status = 200, content_type = "text/markdown", body = String, headers(("ETag" = String))), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn raw_page(State(ctx): State<Ctx>, p: OnPage) -> Result<Response> {
    let page = pages::get(&ctx, &p.access, &p.slug).await?;
    let etag = format!("\"{}\"", page.revision);
    Ok(([(CONTENT_TYPE, "text/markdown; charset=utf-8".to_owned()), (ETAG, etag)], page.content).into_response())
}

/// Moves a page (with its subtree) under another page, or to the top level.
#[utoipa::path(post, path = "/api/pages/{slug}/move", tag = "pages", params(("slug" = String, Path), Ws), request_body = MovePage,
    responses((status = 200, body = Page), (status = 400, body = Problem, description = "Into its own subtree, or unknown parent"),
        (status = 404, body = Problem), (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn move_page(State(ctx): State<Ctx>, p: OnPage, Json(req): Json<MovePage>) -> Result<Response> {
    let parent = req.parent.as_deref().map(|s| Slug::lookup(s, Error::parent_not_found)).transpose()?;
    Ok(with_etag(StatusCode::OK, pages::move_page(&ctx, &p.access, &p.auth.user, &p.slug, parent.as_ref()).await?))
}

/// Puts a page at a place among its siblings, kept as the tree's order from then on.
#[utoipa::path(post, path = "/api/pages/{slug}/position", tags = ["pages", "extension"], params(("slug" = String, Path), Ws), request_body = OrderPage,
    responses((status = 200, body = Page), (status = 400, body = Problem, description = "`after` is not a sibling"),
        (status = 404, body = Problem), (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn order_page(State(ctx): State<Ctx>, p: OnPage, Json(req): Json<OrderPage>) -> Result<Response> {
    let after = req.after.as_deref().map(|s| Slug::lookup(s, Error::not_a_sibling)).transpose()?;
    Ok(with_etag(StatusCode::OK, pages::reorder(&ctx, &p.access, &p.auth.user, &p.slug, after.as_ref()).await?))
}

/// Renames a page; its history follows, and links to it are rewritten.
#[utoipa::path(post, path = "/api/pages/{slug}/rename", tag = "pages", params(("slug" = String, Path), Ws), request_body = RenamePage,
    responses((status = 200, body = Page), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem, description = "New slug taken"), (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn rename_page(State(ctx): State<Ctx>, p: OnPage, Json(req): Json<RenamePage>) -> Result<Response> {
    let new_slug = Slug::parse(&req.new_slug)?;
    let renamed = pages::rename(&ctx, &p.access, &p.auth.user, &p.slug, &new_slug, req.title.as_deref()).await?;
    Ok(with_etag(StatusCode::OK, renamed))
}

/// The page's revisions, newest first.
#[utoipa::path(get, path = "/api/pages/{slug}/history", tag = "history", params(("slug" = String, Path), Ws, PagingQuery),
    responses((status = 200, body = List<HistoryEntry>), (status = 400, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn page_history(State(ctx): State<Ctx>, p: OnPage, paging: Paging) -> Result<axum::Json<List<HistoryEntry>>> {
    let (items, total) = history::list(&ctx, &p.access, &p.slug, paging).await?;
    Ok(axum::Json(List::new(items, total)))
}

/// One revision with its content.
#[utoipa::path(get, path = "/api/pages/{slug}/history/{sha}", tag = "history", params(("slug" = String, Path), ("sha" = String, Path), Ws),
    responses((status = 200, body = Revision), (status = 404, body = Problem, description = "Unknown sha, or not of this page"), (status = 503, body = Problem)))]
async fn page_revision(
    State(ctx): State<Ctx>,
    m: Member,
    Path((slug, sha)): Path<(String, String)>,
) -> Result<axum::Json<Revision>> {
    Ok(axum::Json(history::get(&ctx, &m.access, &pages::named(&slug)?, &sha).await?))
}

/// Unified diff of a revision against an earlier one.
#[utoipa::path(get, path = "/api/pages/{slug}/history/{sha}/diff", tag = "history", params(("slug" = String, Path), ("sha" = String, Path), DiffQuery),
    responses((status = 200, body = Diff), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn revision_diff(
    State(ctx): State<Ctx>,
    m: Member<DiffQuery>,
    Path((slug, sha)): Path<(String, String)>,
) -> Result<axum::Json<Diff>> {
    Ok(axum::Json(history::diff(&ctx, &m.access, &pages::named(&slug)?, &sha, m.query.against.as_deref()).await?))
}

/// Restores an earlier revision's content, and the title it had, as a new revision.
#[utoipa::path(post, path = "/api/pages/{slug}/restore/{sha}", tag = "history", params(("slug" = String, Path), ("sha" = String, Path), Ws), request_body = RestoreRevision,
    responses((status = 200, body = Page), (status = 404, body = Problem), (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn restore_revision(
    State(ctx): State<Ctx>,
    m: Member,
    Path((slug, sha)): Path<(String, String)>,
    Json(req): Json<RestoreRevision>,
) -> Result<Response> {
    let slug = pages::named(&slug)?;
    let restored = pages::restore_revision(&ctx, &m.access, &m.auth.user, &slug, &sha, req.keep_title).await?;
    Ok(with_etag(StatusCode::OK, restored))
}

/// Erases a revision's content from the page's history (someone saved a secret): from
/// that revision on, wherever the page held that content it holds the revision before's
/// (nothing for a first revision), and the repository no longer holds it. The history is
/// rewritten, so this revision and every later commit of the workspace get new ids; the
/// old ids keep answering. Owners only; refused while the content is the page's current
/// one (save a version without it first).
#[utoipa::path(post, path = "/api/pages/{slug}/history/{sha}/erase", tags = ["history", "extension"], params(("slug" = String, Path), ("sha" = String, Path), Ws),
    responses((status = 200, body = Erased), (status = 403, body = Problem, description = "Not an owner of the workspace"), (status = 404, body = Problem), (status = 409, body = Problem, description = "The revision's content is the page's current content"), (status = 503, body = Problem)))]
async fn erase_revision(
    State(ctx): State<Ctx>,
    m: Member,
    Path((slug, sha)): Path<(String, String)>,
) -> Result<axum::Json<Erased>> {
    let owner = m.access.owner()?;
    Ok(axum::Json(pages::erase(&ctx, &owner, &m.auth.user, &pages::named(&slug)?, &sha).await?))
}

/// Trashed pages, most recently trashed first.
#[utoipa::path(get, path = "/api/trash", tag = "trash", params(Ws, PagingQuery),
    responses((status = 200, body = List<TrashEntry>), (status = 400, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn list_trash(State(ctx): State<Ctx>, m: Member, paging: Paging) -> Result<axum::Json<List<TrashEntry>>> {
    let (items, total) = pages::trash(&ctx, &m.access, paging).await?;
    Ok(axum::Json(List::new(items, total)))
}

/// A trashed page with its markdown, to look at before restoring it.
#[utoipa::path(get, path = "/api/trash/{slug}", tags = ["trash", "extension"], params(("slug" = String, Path), Ws),
    responses((status = 200, body = TrashedPage), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn trashed_page(State(ctx): State<Ctx>, m: Member, Path(slug): Path<String>) -> Result<axum::Json<TrashedPage>> {
    Ok(axum::Json(pages::trashed_page(&ctx, &m.access, &pages::named_in_trash(&slug)?).await?))
}

/// Restores a trashed page (to the top level if its parent is gone), with the subpages
/// the same delete trashed.
#[utoipa::path(post, path = "/api/trash/{slug}/restore", tag = "trash", params(("slug" = String, Path), Ws),
    responses((status = 200, body = Page), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn restore_from_trash(State(ctx): State<Ctx>, m: Member, Path(slug): Path<String>) -> Result<Response> {
    let restored = pages::restore_from_trash(&ctx, &m.access, &m.auth.user, &pages::named_in_trash(&slug)?).await?;
    Ok(with_etag(StatusCode::OK, restored))
}

/// Removes a trashed page for good, history included.
#[utoipa::path(post, path = "/api/trash/{slug}/purge", tag = "trash", params(("slug" = String, Path), Ws),
    responses((status = 204, description = "Purged"), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn purge_from_trash(State(ctx): State<Ctx>, m: Member, Path(slug): Path<String>) -> Result<StatusCode> {
    pages::purge(&ctx, &m.access, &m.auth.user, &pages::named_in_trash(&slug)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The address a new page would get (an extension, for the editor to show before the first
/// save): with `title`, the slug derived from it, or the first free `-2`, `-3`… when it
/// is taken; with `slug`, whether that slug is free.
#[utoipa::path(get, path = "/api/slug", tags = ["pages", "extension"], params(SlugQuery),
    responses((status = 200, body = NewSlug), (status = 400, body = Problem, description = "No title or slug, or an invalid slug"),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn new_slug(State(ctx): State<Ctx>, m: Member<SlugQuery>) -> Result<axum::Json<NewSlug>> {
    let a = m.access;
    let answer = match (m.query.slug, m.query.title) {
        (Some(slug), _) => {
            let slug = Slug::parse(&slug)?;
            NewSlug { available: pages::slug_available(&ctx, &a, &slug).await?, slug: slug.into_string() }
        }
        (None, Some(title)) => {
            NewSlug { slug: pages::slug_for_title(&ctx, &a, &title).await?.into_string(), available: true }
        }
        (None, None) => return Err(Error::title_or_slug_required()),
    };
    Ok(axum::Json(answer))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EmbedsQuery {
    /// Workspace slug (default: the caller's default workspace).
    pub ws: Option<String>,
    /// The slugs of the embedded pages, comma-separated: at most 50.
    pub slugs: String,
}

/// The pages a page embeds (`![[slug]]`), read in one request (an extension).
#[derive(Serialize, ToSchema)]
pub(crate) struct Embeds {
    pub items: Vec<pages::EmbedPage>,
    /// The names asked for that are no live page of the workspace.
    pub missing: Vec<String>,
}

/// Live pages for embeds, many in one request (an extension): what a page's `![[…]]`
/// show, so that a page of many embeds costs its readers a request per 50 of them.
#[utoipa::path(get, path = "/api/embeds", tags = ["pages", "extension"], params(EmbedsQuery),
    responses((status = 200, body = Embeds), (status = 400, body = Problem, description = "More than 50 slugs"),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn embeds(State(ctx): State<Ctx>, m: Member<EmbedsQuery>) -> Result<axum::Json<Embeds>> {
    let names: Vec<String> =
        m.query.slugs.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    if names.len() > pages::MAX_EMBEDS {
        return Err(Error::invalid_query(format!("at most {} slugs", pages::MAX_EMBEDS)));
    }
    let (items, missing) = pages::embeds(&ctx, &m.access, &names).await?;
    Ok(axum::Json(Embeds { items, missing }))
}
