//! Request extractors for credentials.
//!
//! Credentials are tried in order: `Authorization: Bearer svc_…` (personal access
//! token), any other Bearer (JWT), then the `cairn_session` cookie. A present but bad
//! bearer is 401 — it never falls through to the cookie. [`MaybeAuthUser`] exists
//! because `Option<AuthUser>` would silently swallow an invalid token.

use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;

use crate::core::Ctx;
use crate::core::accounts::{self, User};
pub use crate::core::tokens::Credential;
use crate::core::tokens::authenticate_bearer;
use crate::error::Error;

pub const SESSION_COOKIE: &str = "cairn_session";

#[derive(Debug, Clone)]
pub struct AuthUser {
    pub user: User,
    pub credential: Credential,
}

impl AuthUser {
    pub fn session_id(&self) -> Option<i64> {
        match self.credential {
            Credential::Session(id) => Some(id),
            _ => None,
        }
    }
}

pub struct MaybeAuthUser(pub Option<AuthUser>);

impl FromRequestParts<Ctx> for AuthUser {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        resolve(parts, ctx)
            .await?
            .ok_or_else(|| Error::unauthorized("sign in, or send a bearer token (a personal access token or a JWT)"))
    }
}

impl FromRequestParts<Ctx> for MaybeAuthUser {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        Ok(MaybeAuthUser(resolve(parts, ctx).await?))
    }
}

async fn resolve(parts: &Parts, ctx: &Ctx) -> Result<Option<AuthUser>, Error> {
    if let Some(value) = parts.headers.get(AUTHORIZATION) {
        let bad = || Error::unauthorized("the Authorization header must be 'Bearer <token>'");
        let value = value.to_str().map_err(|_| bad())?;
        let (scheme, token) = value.split_once(' ').ok_or_else(bad)?;
        if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
            return Err(bad());
        }
        let (user, credential) = authenticate_bearer(ctx, token.trim()).await?;
        return Ok(Some(AuthUser { user, credential }));
    }
    if let Some(token) = cookie(parts, SESSION_COOKIE)
        && let Some((session_id, user)) = accounts::find_session(ctx, token).await?
    {
        return Ok(Some(AuthUser { user, credential: Credential::Session(session_id) }));
    }
    Ok(None)
}

/// The value of cookie `name`, from any `Cookie` header.
pub fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// The `Set-Cookie` value that opens a session (CONTRACT §3 attributes).
pub fn session_cookie(token: &str, secure: bool) -> String {
    let max_age = accounts::SESSION_LIFETIME_SECS;
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={token}; HttpOnly; SameSite=Lax; Path=/; Max-Age={max_age}{secure}")
}

/// The `Set-Cookie` value that clears the session cookie.
pub fn clear_session_cookie(secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0{secure}")
}
