//! The browser door: `/`, `/login` and `/register` lead into the app under `/app/…`,
//! which is served from files embedded in the binary (built from `web/` by `build.rs`),
//! with every unknown `/app/…` path answered by the app's `index.html` (the app routes on
//! the client, so deep links work on reload).
//!
//! This module only serves files; it holds no rule.

use axum::Router;
use axum::extract::Request;
use axum::http::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, VARY};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use crate::core::Ctx;
use crate::error::Error;

/// One embedded file: (path under `/app/`, content type, bytes, gzipped bytes if smaller).
type Asset = (&'static str, &'static str, &'static [u8], Option<&'static [u8]>);

include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));

const CSP: HeaderName = HeaderName::from_static("content-security-policy");

/// The app runs only its own scripts; styles may be inline (the editor sets them), images
/// may be pasted (`blob:`/`data:`) before they are uploaded, and pages may show images
/// from other sites over HTTPS (`![](https://…)`) unless `BLOCK_EXTERNAL_IMAGES=1`.
const APP_CSP: &str = "default-src 'self'; img-src 'self' data: blob: https:; style-src 'self' 'unsafe-inline'; \
                       connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
/// [`APP_CSP`] with images from this server only.
const APP_CSP_OWN_IMAGES: &str = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; \
                                  connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The app's CSP under these settings.
pub(crate) fn app_csp(block_external_images: bool) -> &'static str {
    if block_external_images { APP_CSP_OWN_IMAGES } else { APP_CSP }
}

pub(crate) fn router() -> Router<Ctx> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/app/") }))
        .route("/login", get(|| async { Redirect::to("/app/login") }))
        .route("/register", get(|| async { Redirect::to("/app/register") }))
        .route("/app", get(|| async { Redirect::to("/app/") }))
}

/// True for paths the app answers when no route matched.
pub(crate) fn is_app_path(path: &str) -> bool {
    path.starts_with("/app/")
}

/// An embedded file of the app, or `index.html` for any other path under `/app/` —
/// except under `/app/assets/`, where a missing file is a 404 (a stale hashed name must
/// not get HTML back as a script). Text files go out gzipped to clients that accept it.
pub(crate) async fn serve_app(req: Request, csp: &'static str) -> Response {
    let path = req.uri().path().trim_start_matches("/app/");
    let found = WEB_ASSETS.iter().find(|(name, ..)| *name == path);
    let Some(&(name, content_type, bytes, gzipped)) =
        found.or_else(|| (!path.starts_with("assets/")).then(index).flatten())
    else {
        return Error::route_not_found().into_response();
    };
    // Hashed names never change content; everything else (index.html above all) is
    // revalidated so a new release is picked up at once.
    let cache = if name.starts_with("assets/") { "public, max-age=31536000, immutable" } else { "no-cache" };
    let headers = [(CONTENT_TYPE, content_type), (CACHE_CONTROL, cache), (CSP, csp), (VARY, "accept-encoding")];
    match gzipped.filter(|_| accepts_gzip(&req)) {
        Some(gz) => (StatusCode::OK, headers, [(CONTENT_ENCODING, "gzip")], gz).into_response(),
        None => (StatusCode::OK, headers, bytes).into_response(),
    }
}

/// Whether `Accept-Encoding` lists gzip (and does not refuse it with `q=0`).
fn accepts_gzip(req: &Request) -> bool {
    req.headers().get_all(ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
        |coding| {
            let mut parts = coding.split(';').map(str::trim);
            let named = parts.next().is_some_and(|c| c.eq_ignore_ascii_case("gzip"));
            let refused = parts.filter_map(|p| p.strip_prefix("q=")).any(|q| q.parse::<f32>().is_ok_and(|q| q == 0.0));
            named && !refused
        },
    )
}

fn index() -> Option<&'static Asset> {
    WEB_ASSETS.iter().find(|(name, ..)| *name == "index.html")
}
