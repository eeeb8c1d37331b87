//! Invitations (an extension): owners invite, list and revoke; the person invited looks
//! the link up, registers or signs in, and accepts; an account invited by its email sees
//! its invitations. The link's secret travels in query strings and bodies — never in a
//! path, which the request log records — and in the app's address after `#`, which no
//! server sees.

use axum::extract::State;
use axum::http::header::ACCEPT_LANGUAGE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::invitations::{self, Held, Invitation, InvitationOffer};
use crate::core::paging::Paging;
use crate::core::users::User;
use crate::core::workspaces::{self, Role};
use crate::core::{Ctx, accounts, i18n};
use crate::error::Result;
use crate::http::accounts::signed_in;
use crate::http::auth::AuthUser;
use crate::http::extract::{ClientAddr, Json, PagingQuery, Path, PublicBase, Query};
use crate::http::{List, Problem};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new()
        .routes(routes!(list_invitations, invite))
        .routes(routes!(revoke))
        .routes(routes!(invitation_by_link))
        .routes(routes!(accept_link))
        .routes(routes!(register_with_invitation))
        .routes(routes!(mine))
        .routes(routes!(accept_mine))
        .routes(routes!(decline_mine))
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"email": "grace@example.com", "role": "member"}))]
pub(crate) struct InviteRequest {
    pub email: String,
    /// Defaults to `member`.
    pub role: Option<Role>,
}

/// A new invitation, with its link: shown this once.
#[derive(Serialize, ToSchema)]
pub(crate) struct NewInvitation {
    #[serde(flatten)]
    pub invitation: Invitation,
    /// The link to pass on: the app's invitation screen, the secret after `#`.
    pub link: String,
    /// The link's secret alone (what `/api/invitations/link`, `…/accept` and `…/register` take).
    pub token: String,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct LinkQuery {
    /// The invitation link's secret.
    pub token: String,
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct AcceptInvitation {
    /// The invitation link's secret.
    pub token: String,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"token": "…", "email": "grace@example.com", "password": "correct horse battery", "name": "Grace"}))]
pub(crate) struct InvitedRegistration {
    /// The invitation link's secret.
    pub token: String,
    pub email: String,
    /// At least 8 characters.
    pub password: String,
    pub name: Option<String>,
}

/// The workspace joined.
#[derive(Serialize, ToSchema)]
pub(crate) struct Joined {
    pub workspace: String,
}

/// The workspace's invitations not used or revoked (owner only), newest first; expired
/// ones show as such for 30 days.
#[utoipa::path(get, path = "/api/workspaces/{slug}/invitations", tag = "extension",
    params(("slug" = String, Path), PagingQuery),
    responses((status = 200, body = List<Invitation>), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn list_invitations(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(slug): Path<String>,
    paging: Paging,
) -> Result<axum::Json<List<Invitation>>> {
    let owner = workspaces::access(&ctx, &auth.user, &slug).await?.owner()?;
    let (items, total) = invitations::list(&ctx, &owner, paging).await?;
    Ok(axum::Json(List::new(items, total)))
}

/// Invites an email to the workspace (owner only): answers a one-use link, valid for 7
/// days, to pass on (Cairn sends no mail). A new invitation of the same email replaces
/// the earlier one.
#[utoipa::path(post, path = "/api/workspaces/{slug}/invitations", tag = "extension", request_body = InviteRequest,
    params(("slug" = String, Path)),
    responses((status = 201, body = NewInvitation), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem, description = "That account is a member already"),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn invite(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    PublicBase(base): PublicBase,
    Path(slug): Path<String>,
    Json(req): Json<InviteRequest>,
) -> Result<(StatusCode, axum::Json<NewInvitation>)> {
    let owner = workspaces::access(&ctx, &auth.user, &slug).await?.owner()?;
    let (invitation, token) = invitations::create(&ctx, &owner, &auth.user, &req.email, req.role).await?;
    let link = format!("{base}/app/-/invitation#{token}");
    Ok((StatusCode::CREATED, axum::Json(NewInvitation { invitation, link, token })))
}

/// Revokes an invitation (owner only): its link stops working at once.
#[utoipa::path(delete, path = "/api/workspaces/{slug}/invitations/{id}", tag = "extension",
    params(("slug" = String, Path), ("id" = i64, Path)),
    responses((status = 204, description = "Revoked"), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn revoke(State(ctx): State<Ctx>, auth: AuthUser, Path((slug, id)): Path<(String, i64)>) -> Result<StatusCode> {
    let owner = workspaces::access(&ctx, &auth.user, &slug).await?.owner()?;
    invitations::revoke(&ctx, &owner, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// What an invitation link offers (no credential needed). Unknown, used, revoked and
/// expired links are all 404; too many from one address, 429.
#[utoipa::path(get, path = "/api/invitations/link", tag = "extension", params(LinkQuery),
    responses((status = 200, body = InvitationOffer), (status = 400, body = Problem), (status = 404, body = Problem),
        (status = 429, body = Problem), (status = 503, body = Problem)))]
async fn invitation_by_link(
    State(ctx): State<Ctx>,
    ClientAddr(address): ClientAddr,
    Query(q): Query<LinkQuery>,
) -> Result<axum::Json<InvitationOffer>> {
    Ok(axum::Json(invitations::by_link(&ctx, &q.token, &address).await?))
}

/// Joins the workspace of an invitation link, as the signed-in account, with the role
/// offered. The link is used up.
#[utoipa::path(post, path = "/api/invitations/accept", tag = "extension", request_body = AcceptInvitation,
    responses((status = 200, body = Joined), (status = 404, body = Problem), (status = 422, body = Problem),
        (status = 429, body = Problem), (status = 503, body = Problem)))]
async fn accept_link(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    ClientAddr(address): ClientAddr,
    Json(req): Json<AcceptInvitation>,
) -> Result<axum::Json<Joined>> {
    let workspace = invitations::accept(&ctx, &auth.user, Held::Link(&req.token), &address).await?;
    Ok(axum::Json(Joined { workspace }))
}

/// Creates an account through an invitation link and joins its workspace, signed in
/// (also where registration is closed; not with `OIDC_ONLY=1`). The link is used up.
#[utoipa::path(post, path = "/api/invitations/register", tag = "extension", request_body = InvitedRegistration,
    responses((status = 201, body = User, description = "Created, joined and signed in; the session cookie is set"),
        (status = 400, body = Problem), (status = 403, body = Problem, description = "OIDC_ONLY=1: sign in through the identity provider"),
        (status = 404, body = Problem), (status = 409, body = Problem, description = "Email taken"),
        (status = 422, body = Problem), (status = 429, body = Problem), (status = 503, body = Problem)))]
async fn register_with_invitation(
    State(ctx): State<Ctx>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    Json(req): Json<InvitedRegistration>,
) -> Result<Response> {
    let asked = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let new = accounts::NewAccount {
        email: &req.email,
        password: &req.password,
        name: req.name.as_deref(),
        language: i18n::choose(None, None, asked),
    };
    let user = invitations::register(&ctx, &req.token, new, &address).await?;
    Ok(signed_in(&ctx, StatusCode::CREATED, accounts::sign_in(&ctx, user).await?))
}

/// The invitations made to the signed-in account's email while it had it.
#[utoipa::path(get, path = "/api/invitations", tag = "extension",
    responses((status = 200, body = List<InvitationOffer>), (status = 503, body = Problem)))]
async fn mine(State(ctx): State<Ctx>, auth: AuthUser) -> Result<axum::Json<List<InvitationOffer>>> {
    let items = invitations::mine(&ctx, &auth.user).await?;
    let total = items.len() as i64;
    Ok(axum::Json(List::new(items, total)))
}

/// Accepts an invitation made to the signed-in account.
#[utoipa::path(post, path = "/api/invitations/{id}/accept", tag = "extension", params(("id" = i64, Path)),
    responses((status = 200, body = Joined), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn accept_mine(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    ClientAddr(address): ClientAddr,
    Path(id): Path<i64>,
) -> Result<axum::Json<Joined>> {
    let workspace = invitations::accept(&ctx, &auth.user, Held::Mine(id), &address).await?;
    Ok(axum::Json(Joined { workspace }))
}

/// Declines an invitation made to the signed-in account: it is gone for the inviter too.
#[utoipa::path(delete, path = "/api/invitations/{id}", tag = "extension", params(("id" = i64, Path)),
    responses((status = 204, description = "Declined"), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn decline_mine(State(ctx): State<Ctx>, auth: AuthUser, Path(id): Path<i64>) -> Result<StatusCode> {
    invitations::decline(&ctx, &auth.user, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
