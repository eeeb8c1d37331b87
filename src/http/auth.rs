//! The HTTP side of credentials: reading the `Authorization` header and the session
//! cookie, handing them to [`credentials::authenticate`], and the cookie's attributes.
//!
//! [`MaybeAuthUser`] exists because `Option<AuthUser>` would silently swallow an invalid
//! token.

use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, COOKIE};
use axum::http::request::Parts;

use crate::core::Ctx;
use crate::core::accounts::{self, SESSION_LIFETIME_SECS};
use crate::core::credentials::{self, Authenticated, Presented};
use crate::error::Error;
use crate::http::extract::ClientAddr;

pub(crate) const SESSION_COOKIE: &str = "cairn_session";

/// The signed-in caller; 401 without a credential.
pub(crate) type AuthUser = Authenticated;

/// The caller if a credential was presented; still 401 for a bad bearer.
pub(crate) struct MaybeAuthUser(pub Option<AuthUser>);

impl FromRequestParts<Ctx> for Authenticated {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        resolve(parts, ctx).await?.ok_or_else(Error::no_credential)
    }
}

impl FromRequestParts<Ctx> for MaybeAuthUser {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        Ok(MaybeAuthUser(resolve(parts, ctx).await?))
    }
}

async fn resolve(parts: &Parts, ctx: &Ctx) -> Result<Option<Authenticated>, Error> {
    let bearer = match parts.headers.get(AUTHORIZATION) {
        Some(value) => Some(bearer_of(value)?),
        None => None,
    };
    credentials::authenticate(ctx, Presented { bearer, session: cookie(parts, SESSION_COOKIE) }).await
}

/// The token of `Bearer <token>`; 401 for any other shape.
pub(crate) fn bearer_of(value: &axum::http::HeaderValue) -> Result<&str, Error> {
    let value = value.to_str().map_err(|_| Error::malformed_authorization())?;
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => Ok(token.trim()),
        _ => Err(Error::malformed_authorization()),
    }
}

/// The value of cookie `name`, from any `Cookie` header.
pub(crate) fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    cookie_in(&parts.headers, name)
}

/// The value of cookie `name` in `headers`.
pub(crate) fn cookie_in<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// The `Set-Cookie` value that opens a session (`HttpOnly`, `SameSite=Lax`, `Path=/`, the session's
/// lifetime as `Max-Age`, `Secure` when configured).
pub(crate) fn session_cookie(token: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={token}; HttpOnly; SameSite=Lax; Path=/; Max-Age={SESSION_LIFETIME_SECS}{secure}")
}

/// The `Set-Cookie` headers of a sign-in: its session, and the device note.
pub(crate) fn sign_in_cookies(ctx: &Ctx, sign_in: &accounts::SignIn) -> [(axum::http::HeaderName, String); 2] {
    let secure = ctx.config.cookie_secure.on();
    [
        (axum::http::header::SET_COOKIE, session_cookie(&sign_in.session, secure)),
        (axum::http::header::SET_COOKIE, device_cookie(&sign_in.device, secure)),
    ]
}

/// The `Set-Cookie` value that clears the session cookie.
pub(crate) fn clear_session_cookie(secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0{secure}")
}

pub(crate) const DEVICE_COOKIE: &str = "cairn_device";

/// The `Set-Cookie` value of a device note (`auth::device`): sent only to the API, which
/// is where passwords are checked, for the note's lifetime; it outlives sign-out, as the
/// device it vouches for does.
pub(crate) fn device_cookie(note: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    let max_age = crate::auth::device::LIFETIME_SECS;
    format!("{DEVICE_COOKIE}={note}; HttpOnly; SameSite=Strict; Path=/api; Max-Age={max_age}{secure}")
}

/// Where a password is being tried from: the client address and its device cookie.
pub(crate) struct PasswordOrigin {
    address: String,
    device: Option<String>,
}

impl PasswordOrigin {
    pub(crate) fn get(&self) -> accounts::Origin<'_> {
        accounts::Origin { address: &self.address, device: self.device.as_deref() }
    }
}

impl FromRequestParts<Ctx> for PasswordOrigin {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        let ClientAddr(address) = ClientAddr::from_request_parts(parts, ctx).await?;
        Ok(PasswordOrigin { address, device: cookie(parts, DEVICE_COOKIE).map(str::to_owned) })
    }
}
