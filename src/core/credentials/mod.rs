//! Turning a presented credential into a user — the one lookup every door uses (HTTP
//! extracts the header and cookie; MCP passes its bearer).
//!
//! Credentials are tried in order: a bearer starting with `svc_` is a
//! personal access token, looked up by its SHA-256 (the plaintext is never stored) and
//! compared in constant time; any other bearer is tried as a JWT; then the session
//! cookie. A present but bad bearer is 401 — it never falls through to the cookie.
//! Tokens already checked are kept in [`cache`] (revocation stays immediate: see there),
//! as are the workspace accesses `workspaces::access` checks.

pub(crate) mod cache;

use super::Ctx;
use super::users::{self, USER_COLUMNS, User};
use crate::auth::secrets::{self, TOKEN_PREFIX};
use crate::error::{Error, Result};
use crate::time::Timestamp;

/// How a request proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Credential {
    Session(i64),
    Jwt,
    /// A personal access token, and the password generation it is bound to, if any.
    Token {
        id: i64,
        bound: Option<i64>,
    },
    /// An OAuth access token of grant `grant` (core/oauth): accepted by `/api/mcp` only.
    OAuth {
        grant: i64,
    },
}

/// What a request carried.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Presented<'a> {
    /// The value after `Bearer `.
    pub bearer: Option<&'a str>,
    /// The session cookie's value.
    pub session: Option<&'a str>,
}

/// A user and how it signed in.
#[derive(Debug, Clone)]
pub(crate) struct Authenticated {
    pub user: User,
    pub credential: Credential,
}

impl Authenticated {
    pub(crate) fn session_id(&self) -> Option<i64> {
        match self.credential {
            Credential::Session(id) => Some(id),
            _ => None,
        }
    }

    /// What a personal access token made with this credential is bound to: nothing for a
    /// signed-in session (the token lasts until revoked); the password generation for a
    /// JWT, and for a token bound in its turn, so that a stolen one cannot mint a token
    /// that outlives the next password change.
    pub(crate) fn token_binding(&self) -> Option<i64> {
        match self.credential {
            Credential::Session(_) => None,
            Credential::Jwt | Credential::OAuth { .. } => Some(self.user.credential_generation),
            Credential::Token { bound, .. } => bound,
        }
    }
}

/// The caller, None when nothing was presented (or the session is unknown or expired);
/// 401 for a bearer that does not check out.
pub(crate) async fn authenticate(ctx: &Ctx, presented: Presented<'_>) -> Result<Option<Authenticated>> {
    if let Some(bearer) = presented.bearer {
        let bearer = bearer.trim();
        // Bound to the MCP endpoint (RFC 8707), which checks them itself (mcp/guard.rs).
        if bearer.starts_with(secrets::OAUTH_ACCESS_PREFIX) || bearer.starts_with(secrets::OAUTH_REFRESH_PREFIX) {
            return Err(Error::token_for_mcp_only());
        }
        let (user, credential) = if bearer.starts_with(TOKEN_PREFIX) {
            personal_token(ctx, bearer).await?
        } else {
            (jwt(ctx, bearer).await?, Credential::Jwt)
        };
        return Ok(Some(Authenticated { user, credential }));
    }
    if let Some(token) = presented.session
        && let Some((session_id, user)) = session(ctx, token).await?
    {
        return Ok(Some(Authenticated { user, credential: Credential::Session(session_id) }));
    }
    Ok(None)
}

async fn personal_token(ctx: &Ctx, bearer: &str) -> Result<(User, Credential)> {
    let hash = secrets::sha256_hex(bearer);
    // Keyed by the SHA-256 of the token, as the database is: how long a lookup takes
    // tells nothing about a token that is not known.
    if let Some(hit) = ctx.credentials.get(&hash) {
        touch_token(ctx, &hash, hit.token_id, hit.last_used.as_ref()).await;
        return Ok((hit.user, Credential::Token { id: hit.token_id, bound: hit.bound }));
    }
    let generation = ctx.credentials.generation();
    let sql = format!(
        "SELECT {USER_COLUMNS}, t.id AS token_id, t.token_hash, t.last_used_at, t.bound_generation FROM api_tokens t \
         JOIN users u ON u.id = t.user_id LEFT JOIN workspaces w ON w.id = u.default_workspace_id \
         WHERE t.token_hash = $1"
    );
    let row: Option<TokenRow> =
        sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(&hash).fetch_optional(&ctx.db.pool).await?;
    let TokenRow { user, token_id: id, token_hash, last_used_at: last_used, bound_generation: bound } =
        row.ok_or_else(Error::invalid_bearer)?;
    if !secrets::constant_time_eq(&token_hash, &hash) {
        return Err(Error::invalid_bearer());
    }
    // Made with a JWT of an earlier password: ended by the change, as that JWT was.
    if bound.is_some_and(|g| g < user.credential_generation) {
        return Err(Error::invalid_bearer());
    }
    ctx.credentials.put(
        hash.clone(),
        generation,
        cache::Checked { user: user.clone(), token_id: id, last_used: last_used.clone(), bound },
    );
    touch_token(ctx, &hash, id, last_used.as_ref()).await;
    Ok((user, Credential::Token { id, bound }))
}

/// After a committed write that changes what a checked token or access stands for (a
/// token revoked; a user's name, email, language, password or default workspace; a
/// membership removed; a workspace renamed or deleted): forgets what this process
/// checked and, with PostgreSQL, tells the other processes sharing the database to do
/// the same ([`cache`]).
pub async fn changed(ctx: &Ctx) {
    ctx.credentials.forget();
    if ctx.db.backend == crate::store::Backend::Postgres {
        let notify = format!("NOTIFY {}", cache::CHANNEL);
        if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(notify)).execute(&ctx.db.pool).await {
            // Other processes then trust their entries until they expire (cache::TTL).
            tracing::warn!(error = %e, "could not tell other processes that credentials changed");
        }
    }
}

async fn jwt(ctx: &Ctx, bearer: &str) -> Result<User> {
    let claims = ctx.jwt.verify(bearer, ctx.clock.unix()).ok_or_else(Error::invalid_bearer)?;
    let user_id: i64 = claims.sub.parse().map_err(|_| Error::invalid_bearer())?;
    let user = users::find(ctx, user_id).await?.ok_or_else(Error::invalid_bearer)?;
    // A password change voids every JWT issued before it, in the same second too.
    if claims.iat < user.credentials_since || claims.generation < user.credential_generation {
        return Err(Error::invalid_bearer());
    }
    Ok(user)
}

/// The session's id and its user, when the cookie names a live session (one query).
async fn session(ctx: &Ctx, token: &str) -> Result<Option<(i64, User)>> {
    let hash = secrets::sha256_hex(token);
    let sql = format!(
        "SELECT {USER_COLUMNS}, s.id AS session_id, s.token_hash FROM sessions s JOIN users u ON u.id = s.user_id \
         LEFT JOIN workspaces w ON w.id = u.default_workspace_id WHERE s.token_hash = $1 AND s.expires_at > $2"
    );
    let row: Option<SessionRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(&hash)
        .bind(ctx.clock.unix())
        .fetch_optional(&ctx.db.pool)
        .await?;
    let Some(SessionRow { user, session_id, token_hash }) = row else { return Ok(None) };
    if !secrets::constant_time_eq(&token_hash, &hash) {
        return Ok(None);
    }
    Ok(Some((session_id, user)))
}

/// A personal token's row with its user's.
#[derive(sqlx::FromRow)]
struct TokenRow {
    #[sqlx(flatten)]
    user: User,
    token_id: i64,
    token_hash: String,
    last_used_at: Option<Timestamp>,
    bound_generation: Option<i64>,
}

/// A session's row with its user's.
#[derive(sqlx::FromRow)]
struct SessionRow {
    #[sqlx(flatten)]
    user: User,
    session_id: i64,
    token_hash: String,
}

/// Records use at most once a minute per token, so reads stay reads.
async fn touch_token(ctx: &Ctx, hash: &str, id: i64, last_used: Option<&Timestamp>) {
    let stale = last_used.and_then(Timestamp::unix).is_none_or(|t| ctx.clock.unix() - t >= 60);
    if stale {
        let now = ctx.clock.rfc3339();
        let r = sqlx::query("UPDATE api_tokens SET last_used_at = $1 WHERE id = $2")
            .bind(&now)
            .bind(id)
            .execute(&ctx.db.pool)
            .await;
        match r {
            Ok(_) => ctx.credentials.used(hash, now),
            Err(e) => tracing::debug!(error = %e, "could not record token use"),
        }
    }
}
