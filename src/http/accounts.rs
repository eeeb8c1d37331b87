//! Registration, login sessions, the signed-in user, profile, password and language.

use axum::extract::State;
use axum::http::header::{ACCEPT_LANGUAGE, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{AppendHeaders, IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::accounts::{self, ProfileChange};
use crate::core::users::User;
use crate::core::{Ctx, i18n};
use crate::error::{Error, Result};
use crate::http::Problem;
use crate::http::auth::{AuthUser, MaybeAuthUser, PasswordOrigin};
use crate::http::auth::{clear_session_cookie, sign_in_cookies};
use crate::http::extract::{Json, Path, Query};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(me))
        .routes(routes!(update_profile))
        .routes(routes!(change_password))
        .routes(routes!(set_language))
        .routes(routes!(get_i18n))
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"email": "ada@example.com", "password": "correct horse battery", "name": "Ada"}))]
pub(crate) struct RegisterRequest {
    pub email: String,
    /// At least 8 characters.
    pub password: String,
    pub name: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"email": "ada@example.com", "password": "correct horse battery"}))]
pub(crate) struct LoginRequest {
    pub email: String,
    pub password: String,
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct ProfileRequest {
    pub name: Option<String>,
    /// A new email needs `current_password`.
    pub email: Option<String>,
    pub language: Option<String>,
    /// The account's password, needed to change the email (an extension).
    pub current_password: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct PasswordRequest {
    pub current_password: String,
    /// At least 8 characters.
    pub new_password: String,
    /// Revoke every personal access token of the account too (an extension; default
    /// false). Tokens made with a JWT end with the change in any case.
    #[serde(default)]
    pub revoke_tokens: bool,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct Language {
    #[schema(example = "de")]
    pub language: String,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct Catalogue {
    pub language: &'static str,
    pub languages: Vec<&'static str>,
    pub messages: &'static BTreeMap<String, String>,
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct LangQuery {
    /// Preferred language code (en, de, fr, es, ja).
    pub lang: Option<String>,
}

/// The answer to a sign-in: the user, with the session and device cookies.
pub(crate) fn signed_in(ctx: &Ctx, status: StatusCode, sign_in: accounts::SignIn) -> Response {
    let cookies = AppendHeaders(sign_in_cookies(ctx, &sign_in));
    (status, cookies, axum::Json(sign_in.user)).into_response()
}

/// Creates an account with a personal workspace and signs it in. Open unless
/// `DISABLE_REGISTRATION=1`.
#[utoipa::path(post, path = "/api/auth/register", tag = "accounts", request_body = RegisterRequest,
    responses((status = 201, body = User, description = "Created; the session cookie is set"),
        (status = 400, body = Problem, description = "Invalid email, or password under 8 characters"),
        (status = 403, body = Problem, description = "Registration is closed"),
        (status = 409, body = Problem, description = "Email taken"),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn register(State(ctx): State<Ctx>, headers: HeaderMap, Json(req): Json<RegisterRequest>) -> Result<Response> {
    // The account starts in the language the browser asks for (else English).
    let asked = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let language = i18n::choose(None, None, asked);
    let new = accounts::NewAccount { email: &req.email, password: &req.password, name: req.name.as_deref(), language };
    let user = accounts::register(&ctx, new).await?;
    Ok(signed_in(&ctx, StatusCode::CREATED, accounts::sign_in(&ctx, user).await?))
}

/// Signs in with email and password; sets the session and device cookies.
///
/// `cairn_session` is the session; `cairn_device` spares this device from the login
/// ceilings across addresses and accounts.
#[utoipa::path(post, path = "/api/auth/login", tag = "accounts", request_body = LoginRequest,
    responses((status = 200, body = User, description = "Signed in; the session cookie is set"),
        (status = 401, body = Problem, description = "Wrong email or password"),
        (status = 422, body = Problem),
        (status = 429, body = Problem, description = "Too many failures for this email and address, for this email from devices it never signed in on, or from this address; see Retry-After"),
        (status = 503, body = Problem)))]
async fn login(State(ctx): State<Ctx>, origin: PasswordOrigin, Json(req): Json<LoginRequest>) -> Result<Response> {
    Ok(signed_in(&ctx, StatusCode::OK, accounts::login(&ctx, &req.email, &req.password, &origin.get()).await?))
}

/// Ends the current session (deleted server-side) and clears the cookie.
#[utoipa::path(post, path = "/api/auth/logout", tag = "accounts",
    security(("cookie" = [])),
    responses((status = 204, description = "Signed out")))]
async fn logout(State(ctx): State<Ctx>, auth: AuthUser) -> Result<Response> {
    let session = auth.session_id().ok_or_else(Error::no_session)?;
    accounts::logout(&ctx, session).await?;
    Ok((StatusCode::NO_CONTENT, [(SET_COOKIE, clear_session_cookie(ctx.config.cookie_secure.on()))]).into_response())
}

/// The signed-in user.
#[utoipa::path(get, path = "/api/me", tag = "accounts",
    responses((status = 200, body = User)))]
async fn me(auth: AuthUser) -> axum::Json<User> {
    axum::Json(auth.user)
}

/// Changes name, email or language.
#[utoipa::path(post, path = "/api/settings/profile", tag = "accounts", request_body = ProfileRequest,
    responses((status = 200, body = User), (status = 400, body = Problem, description = "Invalid field; a new email without the current password, or a wrong one"),
        (status = 409, body = Problem, description = "Email taken"), (status = 422, body = Problem),
        (status = 429, body = Problem, description = "Too many wrong passwords"), (status = 503, body = Problem)))]
async fn update_profile(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    origin: PasswordOrigin,
    Json(req): Json<ProfileRequest>,
) -> Result<axum::Json<User>> {
    let change = ProfileChange {
        name: req.name,
        email: req.email,
        language: req.language,
        current_password: req.current_password,
    };
    Ok(axum::Json(accounts::update_profile(&ctx, &auth.user, change, &origin.get()).await?))
}

/// Changes the password; every other session of the user ends.
#[utoipa::path(post, path = "/api/settings/password", tag = "accounts", request_body = PasswordRequest,
    responses((status = 204, description = "Changed"),
        (status = 400, body = Problem, description = "Wrong current password, or new one too short"),
        (status = 422, body = Problem),
        (status = 429, body = Problem, description = "Too many wrong passwords"), (status = 503, body = Problem)))]
async fn change_password(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    origin: PasswordOrigin,
    Json(req): Json<PasswordRequest>,
) -> Result<StatusCode> {
    let (current, new) = (&req.current_password, &req.new_password);
    let change =
        accounts::PasswordChange { current, new, keep_session: auth.session_id(), revoke_tokens: req.revoke_tokens };
    accounts::change_password(&ctx, &auth.user, change, &origin.get()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sets the signed-in user's interface language.
#[utoipa::path(post, path = "/api/lang/{code}", tag = "accounts",
    params(("code" = String, Path, description = "en, de, fr, es or ja")),
    responses((status = 200, body = Language), (status = 400, body = Problem, description = "Unknown language"),
        (status = 503, body = Problem)))]
async fn set_language(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(code): Path<String>,
) -> Result<axum::Json<Language>> {
    let language = accounts::set_language(&ctx, &auth.user, &code).await?;
    Ok(axum::Json(Language { language }))
}

/// The message catalogue of the web app, in `lang`, else the user's language, else
/// the best `Accept-Language` match, else English. Needs no credential.
#[utoipa::path(get, path = "/api/i18n", tag = "accounts", params(LangQuery),
    responses((status = 200, body = Catalogue)))]
async fn get_i18n(maybe: MaybeAuthUser, headers: HeaderMap, Query(q): Query<LangQuery>) -> axum::Json<Catalogue> {
    let user_lang = maybe.0.as_ref().map(|a| a.user.language.as_str());
    let accept = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let language = i18n::choose(q.lang.as_deref(), user_lang, accept);
    axum::Json(Catalogue { language, languages: i18n::LANGUAGES.to_vec(), messages: i18n::messages(language) })
}
