//! Accounts: registration, login sessions, profile, password and language.

use serde::Serialize;
use sqlx::Row;
use sqlx::any::AnyRow;
use utoipa::ToSchema;

use super::Ctx;
use crate::auth::{limiter, password::Passwords, secrets};
use crate::error::{Error, Result};
use crate::store::is_unique_violation;
use crate::time::{now_rfc3339, unix_now};

pub const SESSION_LIFETIME_SECS: i64 = 7 * 24 * 3600;
pub const MAX_NAME_LEN: usize = 200;

/// A user as every route answers it (CONTRACT §3).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct User {
    pub id: i64,
    pub email: String,
    pub name: String,
    pub language: String,
    /// Slug of the workspace used when a request names none.
    pub default_workspace: Option<String>,
    pub created_at: String,
    /// Unix second before which JWTs of this user are void (bumped by a password change).
    #[serde(skip)]
    pub credentials_since: i64,
}

pub(crate) const USER_COLUMNS: &str =
    "u.id, u.email, u.name, u.language, w.slug AS default_workspace, u.created_at, u.credentials_since";

pub(crate) fn user_from_row(row: &AnyRow) -> Result<User> {
    Ok(User {
        id: row.try_get("id")?,
        email: row.try_get("email")?,
        name: row.try_get("name")?,
        language: row.try_get("language")?,
        default_workspace: row.try_get("default_workspace")?,
        created_at: row.try_get("created_at")?,
        credentials_since: row.try_get("credentials_since")?,
    })
}

pub async fn get_user(ctx: &Ctx, id: i64) -> Result<User> {
    find_user(ctx, id).await?.ok_or_else(|| Error::unauthorized("the account no longer exists"))
}

pub async fn find_user(ctx: &Ctx, id: i64) -> Result<Option<User>> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM users u LEFT JOIN workspaces w ON w.id = u.default_workspace_id WHERE u.id = $1"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&ctx.db.pool).await?;
    row.as_ref().map(user_from_row).transpose()
}

/// Trimmed and lower-cased; refused (400) unless it looks like `local@domain.tld`.
pub fn normalize_email(email: &str) -> Result<String> {
    let email = email.trim().to_lowercase();
    let valid = email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && matches!(email.split_once('@'), Some((local, domain))
            if !local.is_empty() && !domain.contains('@') && domain.contains('.')
               && !domain.starts_with('.') && !domain.ends_with('.'));
    if valid { Ok(email) } else { Err(Error::bad_request("invalid_email", "that is not a valid email address")) }
}

fn clean_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_LEN || name.chars().any(char::is_control) {
        return Err(Error::bad_request("invalid_name", format!("a name has 1-{MAX_NAME_LEN} printable characters")));
    }
    Ok(name.to_owned())
}

/// Creates an account, its personal workspace (made its default) — all in one
/// transaction — and answers the new user.
pub async fn register(ctx: &Ctx, email: &str, password: &str, name: Option<&str>) -> Result<User> {
    if ctx.config.disable_registration {
        return Err(Error::forbidden("registration_closed", "registration is closed on this instance"));
    }
    let email = normalize_email(email)?;
    Passwords::check_rules(password)?;
    let local = email.split('@').next().unwrap_or_default().to_owned();
    let name = match name {
        Some(n) => clean_name(n)?,
        None => local.clone(),
    };
    let hash = ctx.passwords.hash(password).await?;
    let now = now_rfc3339();

    let mut tx = ctx.db.pool.begin().await?;
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO users (email, name, password_hash, language, created_at, credentials_since) \
         VALUES ($1, $2, $3, 'en', $4, 0) RETURNING id",
    )
    .bind(&email)
    .bind(&name)
    .bind(&hash)
    .bind(&now)
    .fetch_one(&mut *tx)
    .await;
    let user_id = match inserted {
        Ok(id) => id,
        Err(e) if is_unique_violation(&e) => {
            return Err(Error::conflict("email_taken", "an account with this email already exists"));
        }
        Err(e) => return Err(e.into()),
    };
    let ws_name = format!("{name}'s workspace");
    let slug = super::workspaces::free_slug_in_tx(&mut tx, &super::slug::derive(&local), user_id).await?;
    let ws_id = super::workspaces::insert_in_tx(&mut tx, &slug, &ws_name, user_id).await?;
    sqlx::query("UPDATE users SET default_workspace_id = $1 WHERE id = $2")
        .bind(ws_id)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    tracing::info!(user_id, workspace = %slug, "account registered");
    get_user(ctx, user_id).await
}

/// Checks email and password (with the limiter) and opens a session; answers the user
/// and the session secret for the cookie.
pub async fn login(ctx: &Ctx, email: &str, password: &str, client: &str) -> Result<(User, String)> {
    // Unparseable emails still count against the limiter under their raw form.
    let email = normalize_email(email).unwrap_or_else(|_| email.trim().to_lowercase().replace('\0', ""));
    limiter::check(ctx, &email, client).await?;
    let row: Option<(i64, String)> = sqlx::query_as("SELECT id, password_hash FROM users WHERE email = $1")
        .bind(&email)
        .fetch_optional(&ctx.db.pool)
        .await?;
    let (id, hash) = match row {
        Some((id, hash)) => (Some(id), Some(hash)),
        None => (None, None),
    };
    // An unknown email costs one hash verification too, so timing does not tell.
    let ok = ctx.passwords.verify(password, hash).await?;
    let Some(user_id) = id.filter(|_| ok) else {
        limiter::record_failure(ctx, &email, client).await?;
        return Err(Error::invalid_credentials());
    };
    limiter::clear(ctx, &email, client).await?;
    let token = create_session(ctx, user_id).await?;
    Ok((get_user(ctx, user_id).await?, token))
}

pub async fn create_session(ctx: &Ctx, user_id: i64) -> Result<String> {
    let token = secrets::new_session_token();
    sqlx::query("INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)")
        .bind(user_id)
        .bind(secrets::sha256_hex(&token))
        .bind(now_rfc3339())
        .bind(unix_now() + SESSION_LIFETIME_SECS)
        .execute(&ctx.db.pool)
        .await?;
    Ok(token)
}

/// The session's id and its user, when the cookie names a live session (one query).
pub async fn find_session(ctx: &Ctx, token: &str) -> Result<Option<(i64, User)>> {
    let hash = secrets::sha256_hex(token);
    let sql = format!(
        "SELECT {USER_COLUMNS}, s.id AS session_id, s.token_hash FROM sessions s JOIN users u ON u.id = s.user_id \
         LEFT JOIN workspaces w ON w.id = u.default_workspace_id WHERE s.token_hash = $1 AND s.expires_at > $2"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(&hash).bind(unix_now()).fetch_optional(&ctx.db.pool).await?;
    let Some(row) = row else { return Ok(None) };
    let stored: String = row.try_get("token_hash")?;
    if !secrets::constant_time_eq(&stored, &hash) {
        return Ok(None);
    }
    Ok(Some((row.try_get("session_id")?, user_from_row(&row)?)))
}

pub async fn logout(ctx: &Ctx, session_id: i64) -> Result<()> {
    sqlx::query("DELETE FROM sessions WHERE id = $1").bind(session_id).execute(&ctx.db.pool).await?;
    Ok(())
}

pub struct ProfileChange {
    pub name: Option<String>,
    pub email: Option<String>,
    pub language: Option<String>,
}

pub async fn update_profile(ctx: &Ctx, user: &User, change: ProfileChange) -> Result<User> {
    let name = change.name.as_deref().map(clean_name).transpose()?;
    let email = change.email.as_deref().map(normalize_email).transpose()?;
    let language = change.language.as_deref().map(super::i18n::check_language).transpose()?;
    let result = sqlx::query(
        "UPDATE users SET name = COALESCE($1, name), email = COALESCE($2, email), language = COALESCE($3, language) \
         WHERE id = $4",
    )
    .bind(name)
    .bind(email)
    .bind(language)
    .bind(user.id)
    .execute(&ctx.db.pool)
    .await;
    match result {
        Err(e) if is_unique_violation(&e) => {
            Err(Error::conflict("email_taken", "an account with this email already exists"))
        }
        Err(e) => Err(e.into()),
        Ok(_) => get_user(ctx, user.id).await,
    }
}

/// Changes the password. Every other session of the user ends and JWTs issued before
/// now stop working; `keep_session` (the caller's own session, if any) stays.
pub async fn change_password(
    ctx: &Ctx,
    user: &User,
    current: &str,
    new: &str,
    keep_session: Option<i64>,
) -> Result<()> {
    let hash: String = sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1")
        .bind(user.id)
        .fetch_one(&ctx.db.pool)
        .await?;
    if !ctx.passwords.verify(current, Some(hash)).await? {
        return Err(Error::bad_request("wrong_password", "the current password is wrong"));
    }
    Passwords::check_rules(new)?;
    let new_hash = ctx.passwords.hash(new).await?;
    let mut tx = ctx.db.pool.begin().await?;
    sqlx::query("UPDATE users SET password_hash = $1, credentials_since = $2 WHERE id = $3")
        .bind(&new_hash)
        .bind(unix_now())
        .bind(user.id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND id <> $2")
        .bind(user.id)
        .bind(keep_session.unwrap_or(-1))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    tracing::info!(user_id = user.id, "password changed; other sessions ended");
    Ok(())
}

pub async fn set_language(ctx: &Ctx, user: &User, code: &str) -> Result<String> {
    let code = super::i18n::check_language(code)?;
    sqlx::query("UPDATE users SET language = $1 WHERE id = $2").bind(&code).bind(user.id).execute(&ctx.db.pool).await?;
    Ok(code)
}
