//! The browser door: `/`, `/login` and `/register` lead into the app under `/app/…`,
//! which is served from files embedded in the binary, with every unknown `/app/…` path
//! answered by the app's `index.html` (the app routes on the client).
//!
//! This module only serves files; it holds no rule. Until the web app lands, the one
//! embedded file is a page saying so.

use axum::Router;
use axum::extract::Request;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use crate::core::Ctx;

/// The embedded files of the app: (path under `/app/`, content type, bytes).
const ASSETS: &[(&str, &str, &[u8])] =
    &[("index.html", "text/html; charset=utf-8", include_bytes!("assets/index.html"))];

const CSP: HeaderName = HeaderName::from_static("content-security-policy");

pub fn router() -> Router<Ctx> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/app/") }))
        .route("/login", get(|| async { Redirect::to("/app/login") }))
        .route("/register", get(|| async { Redirect::to("/app/register") }))
        .route("/app", get(|| async { Redirect::to("/app/") }))
}

/// True for paths the app answers when no route matched.
pub fn is_app_path(path: &str) -> bool {
    path.starts_with("/app/")
}

/// An embedded file of the app, or `index.html` for any other path under `/app/`.
pub async fn serve_app(req: Request) -> Response {
    let path = req.uri().path().trim_start_matches("/app/");
    let (name, content_type, bytes) = ASSETS
        .iter()
        .find(|(name, ..)| *name == path)
        .or_else(|| ASSETS.iter().find(|(name, ..)| *name == "index.html"))
        .copied()
        .expect("index.html is embedded");
    // The page is small and changes with each release: always revalidate it.
    let cache = if name == "index.html" { "no-cache" } else { "public, max-age=31536000, immutable" };
    (
        StatusCode::OK,
        [
            (CONTENT_TYPE, content_type),
            (CACHE_CONTROL, cache),
            (X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (CSP, "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'"),
        ],
        bytes,
    )
        .into_response()
}
