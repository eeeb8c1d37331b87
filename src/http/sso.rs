//! How people sign in: what the sign-in screen offers, and single sign-on's two browser
//! routes — the start (to the identity provider) and the return (from it). Both browser
//! routes answer with redirects: a refusal goes back to the sign-in screen with
//! `?sso_error=<code>`, whose message the screen shows; nothing is made.

use axum::extract::State;
use axum::http::header::{ACCEPT_LANGUAGE, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderName, StatusCode};
use axum::response::{AppendHeaders, IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::sso::{self, PENDING_SECS, Returned};
use crate::core::{Ctx, i18n};
use crate::error::Error;
use crate::http::auth::{cookie_in, sign_in_cookies};
use crate::http::extract::{ClientAddr, PublicBase, Query};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new().routes(routes!(sign_in_methods)).routes(routes!(sso_start)).routes(routes!(sso_callback))
}

/// The cookie that ties a provider's return to the browser that began the sign-in.
const STATE_COOKIE: &str = "cairn_sso";
const CALLBACK: &str = "/api/auth/oidc/callback";

/// The ways to sign in here (an extension; needs no credential).
#[derive(Serialize, ToSchema)]
pub(crate) struct SignInMethods {
    /// Email and password (`POST /api/auth/login`); false with `OIDC_ONLY=1`.
    pub password: bool,
    /// `POST /api/auth/register` is open.
    pub registration: bool,
    /// Single sign-on, when set up.
    pub sso: Option<SsoMethod>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct SsoMethod {
    /// The provider's name for the button ("Sign in with …").
    pub name: String,
    /// Where the button goes (`?next=` an /app/ path to go on to afterwards).
    #[schema(example = "/api/auth/oidc/start")]
    pub start: &'static str,
}

/// The ways to sign in on this instance, for the sign-in screen.
#[utoipa::path(get, path = "/api/auth/methods", tag = "extension",
    responses((status = 200, body = SignInMethods)))]
async fn sign_in_methods(State(ctx): State<Ctx>) -> axum::Json<SignInMethods> {
    let config = &ctx.config;
    axum::Json(SignInMethods {
        password: !config.oidc_only.on(),
        registration: !config.oidc_only.on() && !config.disable_registration.on(),
        sso: sso::offered(&ctx).map(|o| SsoMethod { name: o.name, start: "/api/auth/oidc/start" }),
    })
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct StartQuery {
    /// The app's path to go to once signed in (an `/app/…` path; anything else is `/app/`).
    pub next: Option<String>,
    /// An invitation link's token, taken once signed in.
    pub invitation: Option<String>,
}

/// Begins single sign-on: redirects to the identity provider (authorization code with
/// PKCE, `state` and `nonce`), setting the `cairn_sso` cookie its return must match.
#[utoipa::path(get, path = "/api/auth/oidc/start", tag = "extension", params(StartQuery),
    responses((status = 303, description = "To the identity provider (or, when it cannot be reached, to the sign-in screen with ?sso_error=)"),
        (status = 404, body = crate::http::Problem, description = "Single sign-on is not set up")))]
async fn sso_start(
    State(ctx): State<Ctx>,
    PublicBase(base): PublicBase,
    Query(q): Query<StartQuery>,
) -> Result<Response, Error> {
    if ctx.sso.is_none() {
        return Err(Error::sso_not_configured());
    }
    let next = app_path(q.next.as_deref());
    let invitation = q.invitation.as_deref().filter(|t| !t.is_empty());
    match sso::begin(&ctx, &format!("{base}{CALLBACK}"), &next, invitation).await {
        Ok(begun) => {
            let cookie = state_cookie(&ctx, &begun.state, PENDING_SECS);
            Ok(see_other(&begun.url, [(SET_COOKIE, cookie)]))
        }
        Err(e) => Ok(refused(e, &next)),
    }
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct CallbackQuery {
    pub code: Option<String>,
    pub state: Option<String>,
    /// The provider's refusal (`access_denied`, …).
    pub error: Option<String>,
    pub error_description: Option<String>,
    /// The issuer that answered (RFC 9207), checked when given.
    pub iss: Option<String>,
}

/// The identity provider's return: checks it and signs the person in, then redirects to
/// where they were going with the session cookie set — as `POST /api/auth/login` would.
#[utoipa::path(get, path = "/api/auth/oidc/callback", tag = "extension", params(CallbackQuery),
    responses((status = 303, description = "Signed in: to the app with the session cookie set; refused: to the sign-in screen with ?sso_error=<code>")))]
async fn sso_callback(
    State(ctx): State<Ctx>,
    PublicBase(base): PublicBase,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    Query(q): Query<CallbackQuery>,
) -> Response {
    let clear = (SET_COOKIE, state_cookie(&ctx, "", 0));
    let asked = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let error = q.error.as_deref().map(|e| match q.error_description.as_deref() {
        Some(d) => format!("{e} ({d})"),
        None => e.to_owned(),
    });
    let returned = Returned {
        state: q.state.as_deref(),
        kept_state: cookie_in(&headers, STATE_COOKIE),
        code: q.code.as_deref(),
        error: error.as_deref(),
        issuer: q.iss.as_deref(),
        language: i18n::choose(None, None, asked),
    };
    match sso::finish(&ctx, &format!("{base}{CALLBACK}"), returned, &address).await {
        Ok(done) => {
            let [session, device] = sign_in_cookies(&ctx, &done.sign_in);
            see_other(&done.next, [session, device, clear])
        }
        Err(e) => {
            let mut answer = refused(e, "");
            answer.headers_mut().append(SET_COOKIE, clear.1.parse().expect("a cookie is a header value"));
            answer
        }
    }
}

/// `next` when it is a path of the app, else the app's start.
fn app_path(next: Option<&str>) -> String {
    match next {
        Some(p) if (p == "/app" || p.starts_with("/app/")) && !p.contains("//") && !p.contains('\\') => p.to_owned(),
        _ => "/app/".to_owned(),
    }
}

fn state_cookie(ctx: &Ctx, state: &str, max_age: i64) -> String {
    let secure = if ctx.config.cookie_secure.on() { "; Secure" } else { "" };
    format!("{STATE_COOKIE}={state}; HttpOnly; SameSite=Lax; Path=/api/auth/oidc; Max-Age={max_age}{secure}")
}

fn see_other<const N: usize>(to: &str, cookies: [(HeaderName, String); N]) -> Response {
    (StatusCode::SEE_OTHER, [(LOCATION, to.to_owned())], AppendHeaders(cookies)).into_response()
}

/// A sign-in that did not happen: logged with its reason, and the browser goes back to
/// the sign-in screen, which says why (by the error's code).
fn refused(e: Error, next: &str) -> Response {
    e.log();
    tracing::info!(code = e.code.as_str(), detail = %e.detail, "single sign-on refused");
    let mut to = format!("/app/login?sso_error={}", e.code.as_str());
    if next != "/app/" && !next.is_empty() {
        to.push_str("&next=");
        to.push_str(&percent_encoding::utf8_percent_encode(next, percent_encoding::NON_ALPHANUMERIC).to_string());
    }
    see_other(&to, [])
}
