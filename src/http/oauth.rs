//! OAuth 2.1 for the MCP endpoint (an extension; core/oauth): the metadata documents at
//! their well-known paths (RFC 9728, RFC 8414), client registration (RFC 7591), the
//! authorization endpoint (to the consent screen of the web app, `/app/-/authorize`), the
//! consent the screen posts, the token endpoint, and "Connected apps". The token and
//! registration endpoints answer errors as OAuth clients read them,
//! `{error, error_description}`, not as problems.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL, LOCATION};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::Ctx;
use crate::core::oauth::clients::{self, Registered, Registration};
use crate::core::oauth::flow::{self, AuthorizationRequest, Caller, OAuthTokenRequest, Refusal, Tokens};
use crate::core::oauth::{self, Grant, SCOPE};
use crate::error::{Error, Result};
use crate::http::auth::AuthUser;
use crate::http::extract::{ClientAddr, Json, Path, PublicBase, Query};
use crate::http::{List, Problem};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new()
        .routes(routes!(protected_resource))
        .routes(routes!(protected_resource_of_mcp))
        .routes(routes!(authorization_server))
        .routes(routes!(register_client))
        .routes(routes!(oauth_authorize))
        .routes(routes!(consent_asked, consent_given))
        .routes(routes!(oauth_token))
        .routes(routes!(grants))
        .routes(routes!(revoke_grant))
}

/// Where a client learns how to get a token for `/api/mcp` (RFC 9728).
#[derive(Serialize, ToSchema)]
pub(crate) struct ProtectedResource {
    /// The MCP endpoint's URL: what tokens are bound to.
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: [&'static str; 1],
    pub bearer_methods_supported: [&'static str; 1],
    pub resource_name: &'static str,
}

fn protected(base: String) -> axum::Json<ProtectedResource> {
    axum::Json(ProtectedResource {
        resource: oauth::resource(&base),
        authorization_servers: vec![base],
        scopes_supported: [SCOPE],
        bearer_methods_supported: ["header"],
        resource_name: "Cairn",
    })
}

/// The protected-resource metadata of `/api/mcp` (RFC 9728), at the path the MCP
/// endpoint's 401 names.
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource/api/mcp", tag = "extension",
    responses((status = 200, body = ProtectedResource)))]
async fn protected_resource_of_mcp(PublicBase(base): PublicBase) -> axum::Json<ProtectedResource> {
    protected(base)
}

/// The same, at the server's root well-known path (clients that try it first).
#[utoipa::path(get, path = "/.well-known/oauth-protected-resource", tag = "extension",
    responses((status = 200, body = ProtectedResource)))]
async fn protected_resource(PublicBase(base): PublicBase) -> axum::Json<ProtectedResource> {
    protected(base)
}

/// Cairn as an authorization server (RFC 8414).
#[derive(Serialize, ToSchema)]
pub(crate) struct AuthorizationServer {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: String,
    pub scopes_supported: [&'static str; 1],
    pub response_types_supported: [&'static str; 1],
    pub grant_types_supported: [&'static str; 2],
    pub token_endpoint_auth_methods_supported: [&'static str; 3],
    pub code_challenge_methods_supported: [&'static str; 1],
    pub authorization_response_iss_parameter_supported: bool,
}

/// The authorization server's metadata (RFC 8414).
#[utoipa::path(get, path = "/.well-known/oauth-authorization-server", tag = "extension",
    responses((status = 200, body = AuthorizationServer)))]
async fn authorization_server(PublicBase(base): PublicBase) -> axum::Json<AuthorizationServer> {
    axum::Json(AuthorizationServer {
        authorization_endpoint: format!("{base}/api/oauth/authorize"),
        token_endpoint: format!("{base}/api/oauth/token"),
        registration_endpoint: format!("{base}/api/oauth/register"),
        issuer: base,
        scopes_supported: [SCOPE],
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
        code_challenge_methods_supported: ["S256"],
        authorization_response_iss_parameter_supported: true,
    })
}

/// An OAuth error as clients read it (RFC 6749 §5.2).
#[derive(Serialize, ToSchema)]
pub(crate) struct OAuthError {
    pub error: String,
    pub error_description: String,
}

/// `e` in OAuth's shape; a server-side failure is `server_error` (its cause logged).
fn oauth_error(e: Error) -> Response {
    e.log();
    let error = if e.status.is_server_error() { "server_error".to_owned() } else { e.code.as_str().to_owned() };
    let body = OAuthError { error, error_description: e.detail.clone() };
    (e.status, [(CACHE_CONTROL, "no-store")], axum::Json(body)).into_response()
}

/// Registers a client (RFC 7591): open to anyone, counted per address.
#[utoipa::path(post, path = "/api/oauth/register", tag = "extension", request_body = Registration,
    responses((status = 201, body = Registered), (status = 400, body = OAuthError),
        (status = 422, body = Problem), (status = 429, body = OAuthError)))]
async fn register_client(
    State(ctx): State<Ctx>,
    ClientAddr(address): ClientAddr,
    Json(req): Json<Registration>,
) -> Response {
    match clients::register(&ctx, req, &address).await {
        Ok(registered) => (StatusCode::CREATED, [(CACHE_CONTROL, "no-store")], axum::Json(registered)).into_response(),
        Err(e) => oauth_error(e),
    }
}

/// The authorization endpoint: a request that checks out goes on to the consent screen
/// of the web app (`/app/-/authorize`, signing in first if need be); one whose client or
/// redirect URI is unknown to the screen's error; any other back to the client with an
/// `error`.
#[utoipa::path(get, path = "/api/oauth/authorize", tag = "extension", params(AuthorizationRequest),
    responses((status = 303, description = "To the consent screen, or back to the client with an error")))]
async fn oauth_authorize(
    State(ctx): State<Ctx>,
    PublicBase(base): PublicBase,
    Query(req): Query<AuthorizationRequest>,
) -> Response {
    let to = match flow::check(&ctx, &base, &req).await {
        Ok(_) => format!("/app/-/authorize?{}", serde_urlencoded::to_string(&req).unwrap_or_default()),
        Err(Refusal::ToClient { redirect }) => redirect,
        Err(Refusal::ToPerson(e)) => format!("/app/-/authorize?problem={}", e.code.as_str()),
    };
    (StatusCode::SEE_OTHER, [(LOCATION, to)]).into_response()
}

/// What the consent screen shows.
#[derive(Serialize, ToSchema)]
pub(crate) struct ConsentAsked {
    pub client_id: String,
    /// The name the client registered itself under (its own word, not checked).
    pub client_name: String,
    pub client_uri: Option<String>,
    /// Where the person's browser goes afterwards.
    pub redirect_uri: String,
}

fn refused(refusal: Refusal) -> Error {
    match refusal {
        Refusal::ToPerson(e) => e,
        Refusal::ToClient { .. } => Error::oauth_invalid_request("the authorization request is not valid"),
    }
}

/// The request the consent screen is about, checked again (signed in).
#[utoipa::path(get, path = "/api/oauth/consent", tag = "extension", params(AuthorizationRequest),
    responses((status = 200, body = ConsentAsked), (status = 400, body = Problem), (status = 401, body = Problem)))]
async fn consent_asked(
    State(ctx): State<Ctx>,
    _auth: AuthUser,
    PublicBase(base): PublicBase,
    Query(req): Query<AuthorizationRequest>,
) -> Result<axum::Json<ConsentAsked>> {
    let checked = flow::check(&ctx, &base, &req).await.map_err(refused)?;
    Ok(axum::Json(ConsentAsked {
        client_id: checked.client.id,
        client_name: checked.client.name,
        client_uri: checked.client.uri,
        redirect_uri: checked.redirect_uri,
    }))
}

/// The person's answer, with the request it answers.
#[derive(Deserialize, ToSchema)]
pub(crate) struct ConsentGiven {
    #[serde(flatten)]
    pub request: AuthorizationRequest,
    /// Allow (true) or deny (false).
    pub allow: bool,
}

/// Where the browser goes next.
#[derive(Serialize, ToSchema)]
pub(crate) struct Onward {
    pub redirect: String,
}

/// Allows or denies the client: answers the client's redirect URI with a one-use code
/// (or `error=access_denied`), which the screen sends the browser to.
#[utoipa::path(post, path = "/api/oauth/consent", tag = "extension", request_body = ConsentGiven,
    responses((status = 200, body = Onward), (status = 400, body = Problem), (status = 401, body = Problem),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn consent_given(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    PublicBase(base): PublicBase,
    Json(given): Json<ConsentGiven>,
) -> Result<axum::Json<Onward>> {
    let checked = flow::check(&ctx, &base, &given.request).await.map_err(refused)?;
    let redirect = flow::consent(&ctx, &base, &auth.user, checked, given.allow).await?;
    Ok(axum::Json(Onward { redirect }))
}

/// `client_id` and secret of HTTP Basic authentication (RFC 6749 §2.3.1: each
/// form-encoded before being joined).
fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let (id, secret) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    let unescape =
        |s: &str| percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8().ok().map(|s| s.into_owned());
    Some((unescape(id)?, unescape(secret)?))
}

/// The token endpoint: `authorization_code` (with the PKCE verifier) or `refresh_token`
/// (rotated), as `application/x-www-form-urlencoded`.
#[utoipa::path(post, path = "/api/oauth/token", tag = "extension",
    request_body(content = OAuthTokenRequest, content_type = "application/x-www-form-urlencoded"),
    responses((status = 200, body = Tokens), (status = 400, body = OAuthError), (status = 401, body = OAuthError)))]
async fn oauth_token(
    State(ctx): State<Ctx>,
    PublicBase(base): PublicBase,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let req: OAuthTokenRequest = match serde_urlencoded::from_bytes(&body) {
        Ok(req) => req,
        Err(e) => return oauth_error(Error::oauth_invalid_request(&format!("the form does not parse: {e}"))),
    };
    let basic = basic(&headers);
    let caller = Caller { id: basic.as_ref().map(|b| b.0.as_str()), secret: basic.as_ref().map(|b| b.1.as_str()) };
    match flow::token(&ctx, &base, req, caller).await {
        Ok(tokens) => ([(CACHE_CONTROL, "no-store")], axum::Json(tokens)).into_response(),
        Err(e) => oauth_error(e),
    }
}

/// The apps the caller connected by OAuth ("Connected apps").
#[utoipa::path(get, path = "/api/oauth/grants", tag = "extension",
    responses((status = 200, body = List<Grant>), (status = 401, body = Problem), (status = 503, body = Problem)))]
async fn grants(State(ctx): State<Ctx>, auth: AuthUser) -> Result<axum::Json<List<Grant>>> {
    let items = oauth::grants(&ctx, &auth.user).await?;
    let total = items.len() as i64;
    Ok(axum::Json(List::new(items, total)))
}

/// Disconnects an app: every token of the grant stops at once (the next MCP call is 401).
#[utoipa::path(delete, path = "/api/oauth/grants/{id}", tag = "extension", params(("id" = i64, Path)),
    responses((status = 204, description = "Revoked"), (status = 401, body = Problem), (status = 404, body = Problem),
        (status = 503, body = Problem)))]
async fn revoke_grant(State(ctx): State<Ctx>, auth: AuthUser, Path(id): Path<i64>) -> Result<StatusCode> {
    oauth::revoke(&ctx, &auth.user, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
