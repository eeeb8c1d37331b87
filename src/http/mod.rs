//! The HTTP door: thin handlers that parse, authenticate, call the core and shape the
//! answer. Each resource module exposes `router()`; [`api`] merges them and collects
//! the OpenAPI document from the same handlers, so the document cannot drift.

pub(crate) mod accounts;
pub(crate) mod api_docs;
pub(crate) mod auth;
pub(crate) mod browser;
pub(crate) mod connections;
pub(crate) mod csrf;
pub(crate) mod extract;
pub(crate) mod intel;
pub(crate) mod invitations;
pub(crate) mod live;
pub(crate) mod mcp;
pub(crate) mod oauth;
pub(crate) mod pages;
pub(crate) mod scope;
pub(crate) mod search;
pub(crate) mod sso;
pub(crate) mod system;
pub(crate) mod tokens;
pub(crate) mod uploads;
pub(crate) mod webhooks;
pub(crate) mod workspaces;

use serde::Serialize;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;

use crate::core::Ctx;

/// RFC 9457 problem details, the body of every error.
#[derive(Serialize, ToSchema)]
pub(crate) struct Problem {
    /// Always `about:blank`.
    #[schema(example = "about:blank")]
    pub r#type: String,
    #[schema(example = "Not Found")]
    pub title: String,
    #[schema(example = 404)]
    pub status: u16,
    pub detail: String,
    /// Stable machine-readable name of the error.
    #[schema(example = "workspace_not_found")]
    pub code: String,
}

/// A page of a list: `{items, total}`.
#[derive(Serialize, ToSchema)]
pub(crate) struct List<T: ToSchema> {
    pub items: Vec<T>,
    /// Number of items across all pages.
    pub total: i64,
}

impl<T: ToSchema> List<T> {
    pub(crate) fn new(items: Vec<T>, total: i64) -> Self {
        Self { items, total }
    }
}

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        // Two bearer schemes for the two kinds of token: either one is accepted wherever
        // a route lists them.
        components.add_security_scheme(
            "pat",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("svc_…")
                    .description(Some("A personal access token (`svc_…`) from POST /api/tokens; it does not expire"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "jwt",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some("A JWT from POST /api/token, valid for 7 days"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "cookie",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(crate::http::auth::SESSION_COOKIE))),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "Cairn", description = "A self-hosted, multi-user wiki and knowledge base.", license(name = "MIT")),
    modifiers(&SecuritySchemes),
    paths(mcp::mcp_endpoint),
    components(schemas(Problem)),
    tags(
        (name = "system", description = "Health, features and documents"),
        (name = "accounts", description = "Registration, sessions, profile"),
        (name = "tokens", description = "JWTs and personal access tokens"),
        (name = "workspaces", description = "Workspaces and members"),
        (name = "pages", description = "Pages and the page tree"),
        (name = "history", description = "Revisions, diffs and restores"),
        (name = "trash", description = "Soft-deleted pages"),
        (name = "search", description = "Finding pages"),
        (name = "intelligence", description = "Suggestions, summaries, insights and the link graph"),
        (name = "webhooks", description = "Signed page events sent to other systems"),
        (name = "uploads", description = "Images, private to their workspace"),
        (name = "mcp", description = "The Model Context Protocol endpoint for AI agents"),
        (name = "extension", description = "Additions beyond the specification"),
    )
)]
struct ApiDoc;

/// Every documented route, with its OpenAPI document.
pub fn api() -> (axum::Router<Ctx>, utoipa::openapi::OpenApi) {
    let (router, mut doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(system::router())
        .merge(accounts::router())
        .merge(sso::router())
        .merge(oauth::router())
        .merge(invitations::router())
        .merge(tokens::router())
        .merge(workspaces::router())
        .merge(pages::router())
        .merge(live::router())
        .merge(search::router())
        .merge(intel::router())
        .merge(webhooks::router())
        .merge(uploads::router())
        .split_for_parts();
    doc.info.version = crate::core::VERSION.to_owned();
    signed_in(&mut doc);
    problem_media_types(&mut doc);
    old_slugs_redirect(&mut doc);
    optional_bodies(&mut doc);
    declare_links(&mut doc);
    if let Ok(bytes) = serde_json::to_vec(&doc) {
        let _ = system::OPENAPI.set(bytes.into());
    }
    (router, doc)
}

/// The operations of one path, whichever methods it has.
fn operations(item: &mut utoipa::openapi::PathItem) -> impl Iterator<Item = &mut utoipa::openapi::path::Operation> {
    [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch, &mut item.head]
        .into_iter()
        .flatten()
}

/// Every route but the few that answer anyone (`PUBLIC`) answers 401 without a credential,
/// and takes a personal access token, a JWT or a session cookie unless it says otherwise
/// with a `security` of its own (logout, MCP): documented once here, not on each route.
fn signed_in(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::security::SecurityRequirement;
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    const PUBLIC: &[&str] = &[
        "health",
        "openapi_json",
        "register",
        "login",
        "get_i18n",
        // Signing in another way, and invitation links (http/sso.rs, http/invitations.rs).
        "sign_in_methods",
        "sso_start",
        "sso_callback",
        "invitation_by_link",
        "register_with_invitation",
        // OAuth for MCP clients, before they hold a token (http/oauth.rs).
        "protected_resource",
        "protected_resource_of_mcp",
        "authorization_server",
        "register_client",
        "oauth_authorize",
        "oauth_token",
    ];
    let schemes: Vec<SecurityRequirement> =
        ["pat", "jwt", "cookie"].into_iter().map(|s| SecurityRequirement::new(s, Vec::<String>::new())).collect();
    let unauthorized = ResponseBuilder::new()
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build())
        .build();
    for item in doc.paths.paths.values_mut() {
        for op in operations(item) {
            if op.operation_id.as_deref().is_some_and(|id| PUBLIC.contains(&id)) {
                continue;
            }
            op.security.get_or_insert_with(|| schemes.clone());
            op.responses.responses.entry("401".to_owned()).or_insert_with(|| unauthorized.clone().into());
        }
    }
}

/// Error answers are `application/problem+json`, but utoipa documents every
/// `body = Problem` as `application/json`: rename the media type of every 4xx/5xx
/// response, so the document says what the server sends — but for OAuth's own errors
/// (`OAuthError`, plain JSON as OAuth clients read it).
fn problem_media_types(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::RefOr;
    let oauth = |content: &RefOr<utoipa::openapi::Content>| matches!(content, RefOr::T(c) if matches!(&c.schema, Some(RefOr::Ref(r)) if r.ref_location.ends_with("/OAuthError")));
    for item in doc.paths.paths.values_mut() {
        for op in operations(item) {
            for (status, response) in op.responses.responses.iter_mut() {
                if let RefOr::T(response) = response
                    && (status.starts_with('4') || status.starts_with('5'))
                    && response.content.get("application/json").is_some_and(|c| !oauth(c))
                    && let Some(body) = response.content.shift_remove("application/json")
                {
                    response.content.insert("application/problem+json".to_owned(), body);
                }
            }
        }
    }
}

/// Every route under `/api/pages/{slug}` answers `308` for an old slug of a renamed page
/// (`pages::redirect_old_slugs`): documented once here for all of them.
fn old_slugs_redirect(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder, header::Header};
    let moved = ResponseBuilder::new()
        .description(
            "The slug is an old slug of a renamed page: the same route under its current slug is in `Location`",
        )
        .header(
            "Location",
            Header::new(utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::schema::Type::String)),
        )
        .content(
            "application/problem+json",
            ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build(),
        )
        .build();
    for (path, item) in doc.paths.paths.iter_mut() {
        if !path.starts_with("/api/pages/{slug}") {
            continue;
        }
        for op in operations(item) {
            op.responses.responses.insert("308".to_owned(), moved.clone().into());
        }
    }
}

/// Operations whose body may be left out (the `Json` extractor reads no body as `{}`):
/// utoipa documents every body as required, so these are marked here.
fn optional_bodies(doc: &mut utoipa::openapi::OpenApi) {
    const OPTIONAL: &[&str] = &["restore_revision"];
    for item in doc.paths.paths.values_mut() {
        for op in operations(item) {
            if op.operation_id.as_deref().is_some_and(|id| OPTIONAL.contains(&id))
                && let Some(utoipa::openapi::RefOr::T(body)) = op.request_body.as_mut()
            {
                body.required = Some(utoipa::openapi::Required::False);
            }
        }
    }
}

/// OpenAPI links from what an operation answers to what can be done with it next (a page:
/// read, update, rename, history, a revision, restore, delete; a deleted page: restore
/// from the trash, purge; a workspace: update, members, export, delete; a token: revoke; a webhook:
/// deliveries, delete), so clients and Schemathesis' stateful phase can follow them.
fn declare_links(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::link::{Link, LinkBuilder};
    use utoipa::openapi::path::HttpMethod;
    // Each link: (name, operation id, [(parameter, runtime expression)]).
    type Links = &'static [(&'static str, &'static str, &'static [(&'static str, &'static str)])];
    const PAGE: &[(&str, &str)] = &[("slug", "$response.body#/slug"), ("ws", "$response.body#/workspace")];
    const REVISION: &[(&str, &str)] =
        &[("slug", "$response.body#/slug"), ("sha", "$response.body#/revision"), ("ws", "$response.body#/workspace")];
    // A deletion answers 204 with no body: the trashed page is the one the request named.
    // (`ws` is left to the default: a deletion's `ws` is optional, so it may not resolve.)
    const TRASHED: &[(&str, &str)] = &[("slug", "$request.path.slug")];
    const WORKSPACE: &[(&str, &str)] = &[("slug", "$response.body#/slug")];
    const BY_ID: &[(&str, &str)] = &[("token_id", "$response.body#/id")];
    const HOOK: &[(&str, &str)] = &[("webhook_id", "$response.body#/id")];
    const FROM_PAGE: Links = &[
        ("GetPage", "get_page", PAGE),
        ("UpdatePage", "update_page", PAGE),
        ("RenamePage", "rename_page", PAGE),
        ("PageHistory", "page_history", PAGE),
        ("PageRevision", "page_revision", REVISION),
        ("RestoreRevision", "restore_revision", REVISION),
        ("DeletePage", "delete_page", PAGE),
    ];
    const FROM_NEW_PAGE: Links = &[
        ("GetPage", "get_page", PAGE),
        ("UpdatePage", "update_page", PAGE),
        ("RenamePage", "rename_page", PAGE),
        ("MovePage", "move_page", PAGE),
        ("PageHistory", "page_history", PAGE),
        ("PageRevision", "page_revision", REVISION),
        ("RevisionDiff", "revision_diff", REVISION),
        ("RestoreRevision", "restore_revision", REVISION),
        ("ViewPage", "view_page", PAGE),
        ("RawPage", "raw_page", PAGE),
        ("ListChildren", "list_children", PAGE),
        ("SuggestLinks", "suggest_links", PAGE),
        ("SuggestTags", "suggest_tags", PAGE),
        ("Summary", "summary", PAGE),
        ("DeletePage", "delete_page", PAGE),
    ];
    let links: [(&str, HttpMethod, &str, Links); 8] = [
        ("/api/pages", HttpMethod::Post, "201", FROM_NEW_PAGE),
        ("/api/pages/{slug}", HttpMethod::Put, "200", FROM_PAGE),
        ("/api/pages/{slug}/rename", HttpMethod::Post, "200", FROM_PAGE),
        (
            "/api/pages/{slug}",
            HttpMethod::Delete,
            "204",
            &[("RestoreFromTrash", "restore_from_trash", TRASHED), ("PurgeFromTrash", "purge_from_trash", TRASHED)],
        ),
        ("/api/trash/{slug}/restore", HttpMethod::Post, "200", FROM_PAGE),
        (
            "/api/workspaces",
            HttpMethod::Post,
            "201",
            &[
                ("UpdateWorkspace", "update_workspace", WORKSPACE),
                ("ListMembers", "list_members", WORKSPACE),
                ("ExportWorkspace", "export_workspace", WORKSPACE),
                ("DeleteWorkspace", "delete_workspace", WORKSPACE),
            ],
        ),
        ("/api/tokens", HttpMethod::Post, "201", &[("RevokeToken", "revoke_token", BY_ID)]),
        (
            "/api/webhooks",
            HttpMethod::Post,
            "201",
            &[("ListDeliveries", "list_deliveries", HOOK), ("DeleteWebhook", "delete_webhook", HOOK)],
        ),
    ];
    for (path, method, status, these) in links {
        let Some(item) = doc.paths.paths.get_mut(path) else { continue };
        let op = match method {
            HttpMethod::Get => item.get.as_mut(),
            HttpMethod::Put => item.put.as_mut(),
            HttpMethod::Delete => item.delete.as_mut(),
            _ => item.post.as_mut(),
        };
        let Some(RefOr::T(response)) = op.and_then(|op| op.responses.responses.get_mut(status)) else { continue };
        for (name, operation, params) in these {
            let link: Link = params
                .iter()
                .fold(LinkBuilder::new().operation_id(*operation), |b, (param, expr)| b.parameter(*param, *expr))
                .build();
            response.links.insert((*name).to_owned(), RefOr::T(link));
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_are_documented_as_problem_json() {
        let (_, doc) = super::api();
        let v = serde_json::to_value(&doc).unwrap();
        let r = &v["paths"]["/api/pages/{slug}"]["get"]["responses"]["404"]["content"];
        assert!(r.get("application/problem+json").is_some() && r.get("application/json").is_none(), "{r}");
        let ok = &v["paths"]["/api/pages/{slug}"]["get"]["responses"]["200"]["content"];
        assert!(ok.get("application/json").is_some(), "{ok}");
    }
}
