//! Personal access tokens and JWTs, and turning a bearer value into a user.
//!
//! A bearer starting with `svc_` is a personal access token, looked up by its SHA-256
//! (the plaintext is never stored) and compared in constant time. Any other bearer is
//! tried as a JWT. A present but bad bearer is 401: it never falls through to a cookie.

use serde::Serialize;
use utoipa::ToSchema;

use super::Ctx;
use sqlx::Row;

use super::accounts::{USER_COLUMNS, User, find_user, user_from_row};
use crate::auth::jwt::LIFETIME_SECS;
use crate::auth::secrets::{self, TOKEN_PREFIX};
use crate::error::{Error, Result};
use crate::time::{now_rfc3339, unix_now};

pub const MAX_TOKEN_NAME_LEN: usize = 100;

#[derive(Debug, Serialize, ToSchema)]
pub struct TokenInfo {
    pub id: i64,
    pub name: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

/// The creation answer: the only time the plaintext is shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct NewToken {
    pub id: i64,
    pub name: String,
    pub token: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AccessToken {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
}

/// How a request proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    Session(i64),
    Jwt,
    Token(i64),
}

pub fn issue_jwt(ctx: &Ctx, user: &User) -> Result<AccessToken> {
    Ok(AccessToken { access_token: ctx.jwt.issue(user.id)?, token_type: "bearer", expires_in: LIFETIME_SECS })
}

pub async fn create(ctx: &Ctx, user: &User, name: &str) -> Result<NewToken> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_TOKEN_NAME_LEN {
        return Err(Error::bad_request(
            "invalid_token_name",
            format!("a token name has 1-{MAX_TOKEN_NAME_LEN} characters"),
        ));
    }
    let token = secrets::new_personal_token();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO api_tokens (user_id, name, token_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(user.id)
    .bind(name)
    .bind(secrets::sha256_hex(&token))
    .bind(now_rfc3339())
    .fetch_one(&ctx.db.pool)
    .await?;
    tracing::info!(user_id = user.id, token_id = id, "personal access token created");
    Ok(NewToken { id, name: name.to_owned(), token })
}

pub async fn list(ctx: &Ctx, user: &User, limit: i64, offset: i64) -> Result<(Vec<TokenInfo>, i64)> {
    let rows: Vec<(i64, String, String, Option<String>)> = sqlx::query_as(
        "SELECT id, name, created_at, last_used_at FROM api_tokens WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET $3",
    )
    .bind(user.id)
    .bind(limit)
    .bind(offset)
    .fetch_all(&ctx.db.pool)
    .await?;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM api_tokens WHERE user_id = $1")
        .bind(user.id)
        .fetch_one(&ctx.db.pool)
        .await?;
    let items = rows
        .into_iter()
        .map(|(id, name, created_at, last_used_at)| TokenInfo { id, name, created_at, last_used_at })
        .collect();
    Ok((items, total))
}

/// Revokes at once. Another user's token is answered 404, as if it did not exist.
pub async fn revoke(ctx: &Ctx, user: &User, id: i64) -> Result<()> {
    let done = sqlx::query("DELETE FROM api_tokens WHERE id = $1 AND user_id = $2")
        .bind(id)
        .bind(user.id)
        .execute(&ctx.db.pool)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::not_found("token_not_found", format!("no token {id}")));
    }
    tracing::info!(user_id = user.id, token_id = id, "personal access token revoked");
    Ok(())
}

/// The user a bearer value stands for; 401 when it does not check out.
pub async fn authenticate_bearer(ctx: &Ctx, bearer: &str) -> Result<(User, Credential)> {
    let invalid = || Error::unauthorized("the bearer token is invalid, expired or revoked");
    if bearer.starts_with(TOKEN_PREFIX) {
        let hash = secrets::sha256_hex(bearer);
        let sql = format!(
            "SELECT {USER_COLUMNS}, t.id AS token_id, t.token_hash, t.last_used_at FROM api_tokens t \
             JOIN users u ON u.id = t.user_id LEFT JOIN workspaces w ON w.id = u.default_workspace_id \
             WHERE t.token_hash = $1"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(&hash).fetch_optional(&ctx.db.pool).await?;
        let row = row.ok_or_else(invalid)?;
        let stored: String = row.try_get("token_hash")?;
        if !secrets::constant_time_eq(&stored, &hash) {
            return Err(invalid());
        }
        let id: i64 = row.try_get("token_id")?;
        let last_used: Option<String> = row.try_get("last_used_at")?;
        touch_token(ctx, id, last_used.as_deref()).await;
        return Ok((user_from_row(&row)?, Credential::Token(id)));
    }
    let claims = ctx.jwt.verify(bearer).ok_or_else(invalid)?;
    let user_id: i64 = claims.sub.parse().map_err(|_| invalid())?;
    let user = find_user(ctx, user_id).await?.ok_or_else(invalid)?;
    if claims.iat < user.credentials_since {
        return Err(invalid());
    }
    Ok((user, Credential::Jwt))
}

/// Records use at most once a minute per token, so reads stay reads.
async fn touch_token(ctx: &Ctx, id: i64, last_used: Option<&str>) {
    let stale = last_used
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .is_none_or(|t| unix_now() - t.timestamp() >= 60);
    if stale {
        let r = sqlx::query("UPDATE api_tokens SET last_used_at = $1 WHERE id = $2")
            .bind(now_rfc3339())
            .bind(id)
            .execute(&ctx.db.pool)
            .await;
        if let Err(e) = r {
            tracing::debug!(error = %e, "could not record token use");
        }
    }
}
