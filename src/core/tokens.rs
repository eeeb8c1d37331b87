//! Personal access tokens (created, listed, revoked) and JWTs (issued). Checking a
//! presented token is [`super::credentials`]' work.

use serde::Serialize;
use utoipa::ToSchema;

use super::Ctx;
use super::paging::Paging;
use super::users::User;
use crate::auth::jwt::LIFETIME_SECS;
use crate::auth::secrets;
use crate::error::{Error, Result};
use crate::time::Timestamp;

pub(crate) const MAX_TOKEN_NAME_LEN: usize = 100;

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct TokenInfo {
    pub id: i64,
    pub name: String,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>)]
    pub last_used_at: Option<Timestamp>,
}

/// The creation answer: the only time the plaintext is shown.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct NewToken {
    pub id: i64,
    pub name: String,
    pub token: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct AccessToken {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
}

pub(crate) fn issue_jwt(ctx: &Ctx, user: &User) -> Result<AccessToken> {
    let access_token = ctx.jwt.issue(user.id, user.credential_generation, ctx.clock.unix())?;
    Ok(AccessToken { access_token, token_type: "bearer", expires_in: LIFETIME_SECS })
}

/// Makes a personal access token; `bound` ties it to a password generation
/// ([`Authenticated::token_binding`](crate::core::credentials::Authenticated::token_binding)).
pub(crate) async fn create(ctx: &Ctx, user: &User, name: &str, bound: Option<i64>) -> Result<NewToken> {
    let name = crate::ids::display_name(name, MAX_TOKEN_NAME_LEN)
        .ok_or_else(|| Error::invalid_token_name(MAX_TOKEN_NAME_LEN))?;
    let token = secrets::new_personal_token();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO api_tokens (user_id, name, token_hash, created_at, bound_generation) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(user.id)
    .bind(&name)
    .bind(secrets::sha256_hex(&token))
    .bind(ctx.clock.rfc3339())
    .bind(bound)
    .fetch_one(&ctx.db.pool)
    .await?;
    tracing::info!(user_id = user.id, token_id = id, "personal access token created");
    Ok(NewToken { id, name, token })
}

pub(crate) async fn list(ctx: &Ctx, user: &User, paging: Paging) -> Result<(Vec<TokenInfo>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    type TokenRow = (i64, String, Timestamp, Option<Timestamp>);
    let (rows, total): (Vec<TokenRow>, i64) = paging
        .window(
            &mut tx,
            "SELECT id, name, created_at, last_used_at FROM api_tokens WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET $3",
            "SELECT COUNT(*) FROM api_tokens WHERE user_id = $1",
            user.id,
        )
        .await?;
    tx.commit().await?;
    let items = rows
        .into_iter()
        .map(|(id, name, created_at, last_used_at)| TokenInfo { id, name, created_at, last_used_at })
        .collect();
    Ok((items, total))
}

/// Revokes at once. Another user's token is answered 404, as if it did not exist.
pub(crate) async fn revoke(ctx: &Ctx, user: &User, id: i64) -> Result<()> {
    let done = sqlx::query("DELETE FROM api_tokens WHERE id = $1 AND user_id = $2")
        .bind(id)
        .bind(user.id)
        .execute(&ctx.db.pool)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::token_not_found(id));
    }
    super::credentials::changed(ctx).await;
    tracing::info!(user_id = user.id, token_id = id, "personal access token revoked");
    Ok(())
}
