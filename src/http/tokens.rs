//! `POST /api/token` (JWT) and personal access tokens.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::core::tokens::{self, AccessToken, NewToken, TokenInfo};
use crate::error::Result;
use crate::http::auth::AuthUser;
use crate::http::extract::{Json, PagingQuery, Path};
use crate::http::{List, Problem};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new()
        .routes(routes!(issue_jwt))
        .routes(routes!(list_tokens, create_token))
        .routes(routes!(revoke_token))
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct TokenRequest {
    /// What the token is for, e.g. "laptop MCP client".
    pub name: String,
}

/// Issues a JWT for the caller, valid for 7 days.
#[utoipa::path(post, path = "/api/token", tag = "tokens",
    responses((status = 200, body = AccessToken)))]
async fn issue_jwt(State(ctx): State<Ctx>, auth: AuthUser) -> Result<axum::Json<AccessToken>> {
    Ok(axum::Json(tokens::issue_jwt(&ctx, &auth.user)?))
}

/// The caller's personal access tokens (never their secrets).
#[utoipa::path(get, path = "/api/tokens", tag = "tokens", params(PagingQuery),
    responses((status = 200, body = List<TokenInfo>), (status = 400, body = Problem), (status = 503, body = Problem)))]
async fn list_tokens(State(ctx): State<Ctx>, auth: AuthUser, paging: Paging) -> Result<axum::Json<List<TokenInfo>>> {
    let (items, total) = tokens::list(&ctx, &auth.user, paging).await?;
    Ok(axum::Json(List::new(items, total)))
}

/// Creates a personal access token. The plaintext is in this answer only.
#[utoipa::path(post, path = "/api/tokens", tag = "tokens", request_body = TokenRequest,
    responses((status = 201, body = NewToken), (status = 400, body = Problem),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn create_token(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Json(req): Json<TokenRequest>,
) -> Result<(StatusCode, axum::Json<NewToken>)> {
    let token = tokens::create(&ctx, &auth.user, &req.name, auth.token_binding()).await?;
    Ok((StatusCode::CREATED, axum::Json(token)))
}

/// Revokes a token at once.
#[utoipa::path(delete, path = "/api/tokens/{token_id}", tag = "tokens", params(("token_id" = i64, Path)),
    responses((status = 204, description = "Revoked"),
        (status = 404, body = Problem, description = "No such token of the caller"), (status = 503, body = Problem)))]
async fn revoke_token(State(ctx): State<Ctx>, auth: AuthUser, Path(id): Path<i64>) -> Result<StatusCode> {
    tokens::revoke(&ctx, &auth.user, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
