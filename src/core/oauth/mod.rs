//! Cairn as the OAuth 2.1 authorization server of its own MCP endpoint (the MCP
//! authorization specification): clients register themselves ([`clients`]), a person
//! consents in the web app ([`flow::consent`]), the client exchanges the code with its
//! PKCE verifier and refreshes ([`flow::token`]).
//!
//! What a person allows is a *grant* (one per client and person): it holds the tokens
//! issued under it, and revoking it ("Connected apps") ends them all at once. Access
//! tokens (`oat_…`) last an hour and are bound to the MCP resource (RFC 8707): they sign
//! in to `/api/mcp` only, never to the rest of `/api/…`. Refresh tokens (`ort_…`) last
//! 30 days and are rotated at each use; one used twice (stolen, and used by both thief
//! and client) revokes its grant. Every token, code and client secret is kept as its
//! SHA-256 only, like a personal access token.

pub(crate) mod clients;
pub(crate) mod flow;

use serde::Serialize;
use utoipa::ToSchema;

use super::Ctx;
use super::users::{USER_COLUMNS, User};
use crate::auth::secrets;
use crate::error::{Error, Result};
use crate::time::Timestamp;

/// The one scope: what the person can do, through MCP.
pub(crate) const SCOPE: &str = "mcp";
pub(crate) use crate::auth::secrets::{OAUTH_ACCESS_PREFIX as ACCESS_PREFIX, OAUTH_REFRESH_PREFIX as REFRESH_PREFIX};
pub(crate) const ACCESS_SECS: i64 = 3600;
pub(crate) const REFRESH_SECS: i64 = 30 * 24 * 3600;

/// The resource identifier of the MCP endpoint at `base` (RFC 8707, RFC 9728).
pub(crate) fn resource(base: &str) -> String {
    format!("{base}/api/mcp")
}

/// A grant as "Connected apps" lists it.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Grant {
    pub id: i64,
    pub client_id: String,
    /// The name the client registered itself under.
    pub client_name: String,
    pub client_uri: Option<String>,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>)]
    pub last_used_at: Option<Timestamp>,
}

/// The caller's grants, newest first.
pub(crate) async fn grants(ctx: &Ctx, user: &User) -> Result<Vec<Grant>> {
    let rows: Vec<GrantRow> = sqlx::query_as(
        "SELECT g.id, c.id AS client_id, c.name AS client_name, c.uri AS client_uri, g.created_at, g.last_used_at \
         FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id WHERE g.user_id = $1 ORDER BY g.id DESC",
    )
    .bind(user.id)
    .fetch_all(&ctx.db.pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Grant {
            id: r.id,
            client_id: r.client_id,
            client_name: r.client_name,
            client_uri: r.client_uri,
            created_at: Timestamp::from_unix(r.created_at),
            last_used_at: r.last_used_at.map(Timestamp::from_unix),
        })
        .collect())
}

#[derive(sqlx::FromRow)]
struct GrantRow {
    id: i64,
    client_id: String,
    client_name: String,
    client_uri: Option<String>,
    created_at: i64,
    last_used_at: Option<i64>,
}

/// Revokes one of the caller's grants: every token issued under it stops at once (its
/// rows go with it, `ON DELETE CASCADE`; a token's check joins its grant in any case).
pub(crate) async fn revoke(ctx: &Ctx, user: &User, id: i64) -> Result<()> {
    let done = sqlx::query("DELETE FROM oauth_grants WHERE id = $1 AND user_id = $2")
        .bind(id)
        .bind(user.id)
        .execute(&ctx.db.pool)
        .await?;
    if done.rows_affected() == 0 {
        return Err(Error::grant_not_found(id));
    }
    tracing::info!(user_id = user.id, grant = id, "OAuth grant revoked");
    Ok(())
}

/// Tokens issued at once: an access token and the refresh token that renews it.
pub(crate) struct Issued {
    pub access: String,
    pub refresh: String,
}

/// Issues a token pair under `grant` inside `tx`.
async fn issue_in_tx(ctx: &Ctx, tx: &mut sqlx::Transaction<'_, sqlx::Any>, grant: i64) -> Result<Issued> {
    let now = ctx.clock.unix();
    let issued = Issued {
        access: format!("{ACCESS_PREFIX}{}", secrets::random_base62(43)),
        refresh: format!("{REFRESH_PREFIX}{}", secrets::random_base62(43)),
    };
    for (token, kind, life) in [(&issued.access, "access", ACCESS_SECS), (&issued.refresh, "refresh", REFRESH_SECS)] {
        sqlx::query(
            "INSERT INTO oauth_tokens (token_hash, grant_id, kind, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(secrets::sha256_hex(token))
        .bind(grant)
        .bind(kind)
        .bind(now)
        .bind(now + life)
        .execute(&mut **tx)
        .await?;
    }
    Ok(issued)
}

/// The person an access token acts for, and its grant; 401 for a token unknown, expired,
/// revoked, or issued for another resource than `resource`.
pub(crate) async fn verify(ctx: &Ctx, bearer: &str, resource: &str) -> Result<(User, i64)> {
    let hash = secrets::sha256_hex(bearer);
    let sql = format!(
        "SELECT {USER_COLUMNS}, t.grant_id, t.token_hash, g.last_used_at FROM oauth_tokens t \
         JOIN oauth_grants g ON g.id = t.grant_id JOIN users u ON u.id = g.user_id \
         LEFT JOIN workspaces w ON w.id = u.default_workspace_id \
         WHERE t.token_hash = $1 AND t.kind = 'access' AND t.expires_at > $2 AND g.resource = $3"
    );
    let row: Option<AccessRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(&hash)
        .bind(ctx.clock.unix())
        .bind(resource)
        .fetch_optional(&ctx.db.pool)
        .await?;
    let AccessRow { user, grant_id, token_hash, last_used_at } = row.ok_or_else(Error::invalid_bearer)?;
    if !secrets::constant_time_eq(&token_hash, &hash) {
        return Err(Error::invalid_bearer());
    }
    // Recorded at most once a minute, so calls stay reads.
    let now = ctx.clock.unix();
    if last_used_at.is_none_or(|t| now - t >= 60) {
        let touched = sqlx::query("UPDATE oauth_grants SET last_used_at = $1 WHERE id = $2")
            .bind(now)
            .bind(grant_id)
            .execute(&ctx.db.pool)
            .await;
        if let Err(e) = touched {
            tracing::debug!(error = %e, "could not record a grant's use");
        }
    }
    Ok((user, grant_id))
}

#[derive(sqlx::FromRow)]
struct AccessRow {
    #[sqlx(flatten)]
    user: User,
    grant_id: i64,
    token_hash: String,
    last_used_at: Option<i64>,
}

/// Forgets expired tokens and codes; answers how many rows went.
pub(crate) async fn prune(ctx: &Ctx) -> Result<u64> {
    let now = ctx.clock.unix();
    let tokens = sqlx::query("DELETE FROM oauth_tokens WHERE expires_at <= $1").bind(now).execute(&ctx.db.pool).await?;
    let codes = sqlx::query("DELETE FROM oauth_codes WHERE expires_at <= $1").bind(now).execute(&ctx.db.pool).await?;
    Ok(tokens.rows_affected() + codes.rows_affected() + clients::prune(ctx).await?)
}
