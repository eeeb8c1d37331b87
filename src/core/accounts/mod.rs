//! Accounts: registration, login sessions, profile, password and language — and the
//! rules on them (password length, the failed-login limiter, session lifetime).

pub(crate) mod limiter;

pub(crate) use limiter::Origin;

use super::Ctx;
use super::credentials;
use super::users::{self, User};
use super::workspaces;
use crate::auth::secrets;
use crate::error::{Error, OrConflict, Result};
use crate::ids::{Email, Slug};

pub(crate) const SESSION_LIFETIME_SECS: i64 = 7 * 24 * 3600;
pub(crate) const PASSWORD_MIN_LEN: usize = 8;
/// Longer passwords are refused rather than hashed (a cheap denial-of-service guard).
pub(crate) const PASSWORD_MAX_LEN: usize = 1024;

/// A password must have 8 to 1,024 characters.
pub(crate) fn check_password(password: &str) -> Result<()> {
    let n = password.chars().count();
    if n < PASSWORD_MIN_LEN {
        return Err(Error::password_too_short(PASSWORD_MIN_LEN));
    }
    if n > PASSWORD_MAX_LEN {
        return Err(Error::password_too_long(PASSWORD_MAX_LEN));
    }
    Ok(())
}

/// An account asked for: email, password, name (else the email's local part), and the
/// language it starts in (the HTTP door passes what the browser asks for, so a new user's
/// app is not English by accident; an unknown one becomes `en`).
pub(crate) struct NewAccount<'a> {
    pub email: &'a str,
    pub password: &'a str,
    pub name: Option<&'a str>,
    pub language: &'a str,
}

/// A [`NewAccount`] checked (email, password, name) and its password hashed.
pub(crate) struct Checked {
    pub email: Email,
    pub hash: String,
    pub name: String,
}

impl NewAccount<'_> {
    pub(crate) async fn check(&self, ctx: &Ctx) -> Result<Checked> {
        let email = Email::parse(self.email)?;
        check_password(self.password)?;
        let name = match self.name {
            Some(n) => users::check_name(n)?,
            None => email.local().to_owned(),
        };
        let hash = ctx.passwords.hash(self.password).await?;
        Ok(Checked { email, hash, name })
    }
}

/// Creates an account, its personal workspace (made its default) — all in one
/// transaction — and answers the new user.
pub(crate) async fn register(ctx: &Ctx, new: NewAccount<'_>) -> Result<User> {
    if ctx.config.disable_registration.on() || ctx.config.oidc_only.on() {
        return Err(Error::registration_closed());
    }
    let Checked { email, hash, name } = new.check(ctx).await?;
    create(ctx, &email, &hash, &name, new.language).await
}

/// What an account without a password keeps in its `password_hash`: no password
/// verifies against it (it is not a hash), so only single sign-on signs it in.
pub(crate) const NO_PASSWORD: &str = "!sso";

/// Creates an account with its personal workspace (made its default) in one
/// transaction.
pub(crate) async fn create(ctx: &Ctx, email: &Email, hash: &str, name: &str, language: &str) -> Result<User> {
    let mut tx = ctx.db.write().await?;
    let user_id = create_in_tx(ctx, &mut tx, email, hash, name, language).await?;
    tx.commit().await?;
    users::get(ctx, user_id).await
}

/// Creates an account and its personal workspace (made its default) inside `tx`; answers
/// its id. The one way an account is made: by registration, by an invitation, by single
/// sign-on.
pub(crate) async fn create_in_tx(
    ctx: &Ctx,
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    email: &Email,
    hash: &str,
    name: &str,
    language: &str,
) -> Result<i64> {
    let now = ctx.clock.rfc3339();
    let user_id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO users (email, name, password_hash, language, created_at, credentials_since) \
         VALUES ($1, $2, $3, $4, $5, 0) RETURNING id",
    )
    .bind(email.as_str())
    .bind(name)
    .bind(hash)
    .bind(crate::core::i18n::choose(Some(language), None, None))
    .bind(&now)
    .fetch_one(&mut **tx)
    .await
    .or_conflict(Error::email_taken)?;
    let ws_name = format!("{name}'s workspace");
    let slug = workspaces::free_slug_in_tx(tx, &Slug::derive(email.local()), user_id).await?;
    let ws_id = workspaces::insert_in_tx(tx, &slug, &ws_name, user_id, &now).await?;
    sqlx::query("UPDATE users SET default_workspace_id = $1 WHERE id = $2")
        .bind(ws_id)
        .bind(user_id)
        .execute(&mut **tx)
        .await?;
    tracing::info!(user_id, workspace = %slug, "account registered");
    Ok(user_id)
}

/// A sign-in: the user, the secret of its new session (for the cookie), and a fresh
/// device note (for the device cookie, `auth::device`).
pub(crate) struct SignIn {
    pub user: User,
    pub session: String,
    pub device: String,
}

/// Checks email and password (with the limiter) and opens a session.
pub(crate) async fn login(ctx: &Ctx, email: &str, password: &str, origin: &Origin<'_>) -> Result<SignIn> {
    if ctx.config.oidc_only.on() {
        return Err(Error::password_sign_in_off());
    }
    let email = limiter::counted_email(email);
    let attempt = limiter::attempt(ctx, &email, origin).await?;
    let row: Option<(i64, String)> = sqlx::query_as("SELECT id, password_hash FROM users WHERE email = $1")
        .bind(&email)
        .fetch_optional(&ctx.db.pool)
        .await?;
    let (id, hash) = match row {
        // An account without a password costs the dummy's verification too.
        Some((id, hash)) if hash != NO_PASSWORD => (Some(id), Some(hash)),
        _ => (None, None),
    };
    // An unknown email costs one hash verification too, so timing does not tell.
    let ok = ctx.passwords.verify(password, hash).await?;
    // A failure stays counted (by `attempt`); a success is taken back.
    let Some(user_id) = id.filter(|_| ok) else { return Err(Error::invalid_credentials()) };
    limiter::succeeded(ctx, attempt).await?;
    sign_in(ctx, users::get(ctx, user_id).await?).await
}

/// Opens a session for `user` (signed in, or just registered) on this device.
pub(crate) async fn sign_in(ctx: &Ctx, user: User) -> Result<SignIn> {
    let session = create_session(ctx, user.id).await?;
    let device = ctx.devices.issue(&user.email, ctx.clock.unix());
    Ok(SignIn { user, session, device })
}

async fn create_session(ctx: &Ctx, user_id: i64) -> Result<String> {
    let token = secrets::new_session_token();
    sqlx::query("INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)")
        .bind(user_id)
        .bind(secrets::sha256_hex(&token))
        .bind(ctx.clock.rfc3339())
        .bind(ctx.clock.unix() + SESSION_LIFETIME_SECS)
        .execute(&ctx.db.pool)
        .await?;
    Ok(token)
}

pub(crate) async fn logout(ctx: &Ctx, session_id: i64) -> Result<()> {
    sqlx::query("DELETE FROM sessions WHERE id = $1").bind(session_id).execute(&ctx.db.pool).await?;
    Ok(())
}

/// Deletes sessions past their expiry (they no longer sign anyone in); answers how many
/// went. Run by the maintenance worker.
pub(crate) async fn prune_sessions(ctx: &Ctx) -> Result<u64> {
    let done =
        sqlx::query("DELETE FROM sessions WHERE expires_at <= $1").bind(ctx.clock.unix()).execute(&ctx.db.pool).await?;
    Ok(done.rows_affected())
}

pub(crate) struct ProfileChange {
    pub name: Option<String>,
    pub email: Option<String>,
    pub language: Option<String>,
    /// Needed to change the email (the address one signs in with).
    pub current_password: Option<String>,
}

/// Changes name, email or language. A new email needs the current password: a token
/// alone (a stolen one) must not be enough to take the account's sign-in over.
pub(crate) async fn update_profile(ctx: &Ctx, user: &User, change: ProfileChange, origin: &Origin<'_>) -> Result<User> {
    let name = change.name.as_deref().map(users::check_name).transpose()?;
    let email = change.email.as_deref().map(Email::parse).transpose()?;
    let language = change.language.as_deref().map(super::i18n::check_language).transpose()?;
    if email.as_ref().is_some_and(|e| e.as_str() != user.email) {
        let current = change.current_password.as_deref().ok_or_else(Error::current_password_required)?;
        confirm_password(ctx, user, current, origin).await?;
    }
    sqlx::query(
        "UPDATE users SET name = COALESCE($1, name), email = COALESCE($2, email), language = COALESCE($3, language) \
         WHERE id = $4",
    )
    .bind(name)
    .bind(email.as_ref().map(Email::as_str))
    .bind(language)
    .bind(user.id)
    .execute(&ctx.db.pool)
    .await
    .or_conflict(Error::email_taken)?;
    credentials::changed(ctx).await;
    users::get(ctx, user.id).await
}

/// A password change as asked.
pub(crate) struct PasswordChange<'a> {
    pub current: &'a str,
    pub new: &'a str,
    /// The session making the change, which stays signed in.
    pub keep_session: Option<i64>,
    /// Revoke every personal access token of the account too.
    pub revoke_tokens: bool,
}

/// Changes the password. Every other session of the user ends and JWTs issued before
/// now stop working; `keep_session` (the caller's own session, if any) stays.
pub(crate) async fn change_password(
    ctx: &Ctx,
    user: &User,
    change: PasswordChange<'_>,
    origin: &Origin<'_>,
) -> Result<()> {
    let PasswordChange { current, new, keep_session, revoke_tokens } = change;
    check_password(new)?;
    confirm_password(ctx, user, current, origin).await?;
    let new_hash = ctx.passwords.hash(new).await?;
    let mut tx = ctx.db.write().await?;
    sqlx::query(
        "UPDATE users SET password_hash = $1, credentials_since = $2, \
         credential_generation = credential_generation + 1 WHERE id = $3",
    )
    .bind(&new_hash)
    .bind(ctx.clock.unix())
    .bind(user.id)
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND id <> $2")
        .bind(user.id)
        .bind(keep_session.unwrap_or(-1))
        .execute(&mut *tx)
        .await?;
    if revoke_tokens {
        sqlx::query("DELETE FROM api_tokens WHERE user_id = $1").bind(user.id).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    credentials::changed(ctx).await;
    tracing::info!(user_id = user.id, revoke_tokens, "password changed; other sessions ended");
    Ok(())
}

/// Checks the signed-in user's own password (400 `wrong_password`), counted by the
/// failed-login limiter as a login for the account's email from `origin` would be: a
/// stolen session cannot guess it faster than a sign-in form could.
async fn confirm_password(ctx: &Ctx, user: &User, password: &str, origin: &Origin<'_>) -> Result<()> {
    let attempt = limiter::attempt(ctx, &user.email, origin).await?;
    let hash: String = sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1")
        .bind(user.id)
        .fetch_one(&ctx.db.pool)
        .await?;
    if !ctx.passwords.verify(password, Some(hash)).await? {
        return Err(Error::wrong_password());
    }
    limiter::succeeded(ctx, attempt).await
}

pub(crate) async fn set_language(ctx: &Ctx, user: &User, code: &str) -> Result<String> {
    let code = super::i18n::check_language(code)?;
    sqlx::query("UPDATE users SET language = $1 WHERE id = $2").bind(&code).bind(user.id).execute(&ctx.db.pool).await?;
    credentials::changed(ctx).await;
    Ok(code)
}
