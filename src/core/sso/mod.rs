//! Single sign-on through an OpenID provider: a sign-in begun here ([`begin`]) and
//! finished when the provider sends the browser back ([`finish`]), which ends as a
//! password login does — a session for the account the provider vouches for.
//!
//! The account is found by the provider's subject (kept in `user_identities` at the first
//! sign-in, so an email changed at the provider later does not make a second account),
//! else by the verified email (an existing account is linked), else made — unless
//! registration is closed (`DISABLE_REGISTRATION=1`) and the sign-in carries no
//! invitation. An unverified email, or one outside `OIDC_ALLOWED_DOMAINS`, is refused and
//! nothing is made. Returns are counted per client address ([`Guarded::SingleSignOn`]).

pub(crate) mod provider;

use super::Ctx;
use super::accounts::limiter::{self, Guarded};
use super::accounts::{self, SignIn};
use super::invitations::{self, Held};
use super::users::{self, User};
use crate::auth::secrets;
use crate::error::{Error, Result};
use crate::ids::Email;

/// How long a begun sign-in waits for the provider to send the browser back.
pub(crate) const PENDING_SECS: i64 = 600;

/// What the sign-in screen offers.
pub(crate) struct Offered {
    /// The name on the button.
    pub name: String,
}

/// Single sign-on as offered, when set up.
pub(crate) fn offered(ctx: &Ctx) -> Option<Offered> {
    let provider = ctx.sso.as_ref()?;
    let name = ctx.config.oidc_display_name.clone().filter(|n| !n.trim().is_empty());
    Some(Offered { name: name.unwrap_or_else(|| provider.host()) })
}

/// A sign-in begun: the provider's URL to send the browser to, and the `state` the
/// browser keeps (in a cookie) to prove the return is its own.
pub(crate) struct Redirect {
    pub url: String,
    pub state: String,
}

/// Begins a sign-in that returns to `callback` and then goes on to `next`, taking the
/// invitation of link `invitation` if given.
pub(crate) async fn begin(ctx: &Ctx, callback: &str, next: &str, invitation: Option<&str>) -> Result<Redirect> {
    let provider = ctx.sso.as_ref().ok_or_else(Error::sso_not_configured)?;
    let begun = provider.begin(callback).await?;
    sqlx::query(
        "INSERT INTO sso_logins (state_hash, nonce, pkce_verifier, next, invitation, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(secrets::sha256_hex(&begun.state))
    .bind(&begun.nonce)
    .bind(&begun.pkce_verifier)
    .bind(next)
    .bind(invitation)
    .bind(ctx.clock.unix())
    .execute(&ctx.db.pool)
    .await?;
    Ok(Redirect { url: begun.url, state: begun.state })
}

/// The provider's return, as the browser brought it.
pub(crate) struct Returned<'a> {
    /// `state` of the query.
    pub state: Option<&'a str>,
    /// The state this browser kept when it began.
    pub kept_state: Option<&'a str>,
    pub code: Option<&'a str>,
    /// `error` of the query: the provider's refusal.
    pub error: Option<&'a str>,
    /// `iss` of the query (RFC 9207): the issuer that answered, when the provider says.
    pub issuer: Option<&'a str>,
    /// The language a new account starts in (the browser's).
    pub language: &'a str,
}

/// A finished sign-in and where the app goes next.
pub(crate) struct Finished {
    pub sign_in: SignIn,
    pub next: String,
}

/// Finishes a sign-in: the return must carry the state this browser began with (one
/// use, within [`PENDING_SECS`]); then the code is exchanged and the ID token verified
/// ([`provider::Provider::finish`]), and the person signs in to their account.
pub(crate) async fn finish(ctx: &Ctx, callback: &str, returned: Returned<'_>, address: &str) -> Result<Finished> {
    let provider = ctx.sso.as_ref().ok_or_else(Error::sso_not_configured)?;
    let attempt = limiter::attempt_at(ctx, Guarded::SingleSignOn, address).await?;
    let state = match (returned.state, returned.kept_state) {
        (Some(state), Some(kept)) if secrets::constant_time_eq(state, kept) => state,
        _ => return Err(Error::sso_state_invalid()),
    };
    // Taken whatever happens next: a return is used once.
    let pending: Option<(String, String, String, Option<String>, i64)> = sqlx::query_as(
        "DELETE FROM sso_logins WHERE state_hash = $1 RETURNING nonce, pkce_verifier, next, invitation, created_at",
    )
    .bind(secrets::sha256_hex(state))
    .fetch_optional(&ctx.db.pool)
    .await?;
    let Some((nonce, verifier, next, invitation, begun)) = pending else { return Err(Error::sso_state_invalid()) };
    if ctx.clock.unix() - begun > PENDING_SECS {
        return Err(Error::sso_state_invalid());
    }
    if let Some(error) = returned.error {
        return Err(Error::sso_refused(error));
    }
    // Mix-up defence: an answer from another issuer is not this provider's.
    if returned.issuer.is_some_and(|iss| iss.trim_end_matches('/') != provider.issuer().trim_end_matches('/')) {
        return Err(Error::sso_refused("the answer names another issuer"));
    }
    let code = returned.code.ok_or_else(|| Error::sso_refused("no authorization code"))?;
    let person = provider.finish(callback, code, &nonce, &verifier).await?;
    let (user, joined) = account(ctx, provider.issuer(), person, invitation.as_deref(), returned.language).await?;
    limiter::succeeded(ctx, attempt).await?;
    tracing::info!(user_id = user.id, "signed in through single sign-on");
    // Joined by an invitation and going nowhere in particular: to the workspace joined.
    let next = match joined {
        Some(slug) if next == "/app/" => format!("/app/@{slug}"),
        _ => next,
    };
    Ok(Finished { sign_in: accounts::sign_in(ctx, user).await?, next })
}

/// The account `person` signs in to (found, linked or made, as the module says), with the
/// invitation taken if there is one (and the workspace it joined) — all in one
/// transaction.
async fn account(
    ctx: &Ctx,
    issuer: &str,
    person: provider::Person,
    invitation: Option<&str>,
    language: &str,
) -> Result<(User, Option<String>)> {
    let email = person.email.as_deref().map(Email::parse).transpose().ok().flatten();
    let Some(email) = email.filter(|_| person.email_verified) else { return Err(Error::sso_email_unverified()) };
    let allowed = &ctx.config.oidc_allowed_domains;
    if !allowed.is_empty() && !allowed.iter().any(|d| d.trim().eq_ignore_ascii_case(email.domain())) {
        return Err(Error::sso_domain_not_allowed(email.domain()));
    }
    let mut tx = ctx.db.write().await?;
    let known: Option<i64> =
        sqlx::query_scalar("SELECT user_id FROM user_identities WHERE issuer = $1 AND subject = $2")
            .bind(issuer)
            .bind(&person.subject)
            .fetch_optional(&mut *tx)
            .await?;
    let user_id = match known {
        Some(id) => id,
        None => {
            let existing: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
                .bind(email.as_str())
                .fetch_optional(&mut *tx)
                .await?;
            let id = match existing {
                Some(id) => id,
                None if ctx.config.disable_registration.on() && invitation.is_none() => {
                    return Err(Error::registration_closed());
                }
                None => {
                    let name = person.name.as_deref().and_then(|n| users::check_name(n).ok());
                    let name = name.unwrap_or_else(|| email.local().to_owned());
                    accounts::create_in_tx(ctx, &mut tx, &email, accounts::NO_PASSWORD, &name, language).await?
                }
            };
            sqlx::query("INSERT INTO user_identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4)")
                .bind(issuer)
                .bind(&person.subject)
                .bind(id)
                .bind(ctx.clock.rfc3339())
                .execute(&mut *tx)
                .await?;
            id
        }
    };
    let joined = match invitation {
        Some(token) => Some(invitations::take_in_tx(ctx, &mut tx, Held::Link(token), user_id).await?),
        None => None,
    };
    tx.commit().await?;
    super::credentials::changed(ctx).await;
    Ok((users::get(ctx, user_id).await?, joined))
}

/// Forgets sign-ins begun and never finished; answers how many went. Run by the
/// maintenance worker.
pub(crate) async fn prune(ctx: &Ctx) -> Result<u64> {
    let done = sqlx::query("DELETE FROM sso_logins WHERE created_at <= $1")
        .bind(ctx.clock.unix() - PENDING_SECS)
        .execute(&ctx.db.pool)
        .await?;
    Ok(done.rows_affected())
}
