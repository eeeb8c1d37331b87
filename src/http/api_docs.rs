//! The two API browsers (docs/api.md): `/docs` (Swagger UI) and
//! `/redoc` (ReDoc) over `/openapi.json`, served entirely from this binary — every
//! script and stylesheet is embedded (vendored from their npm packages at pinned
//! versions by `scripts/vendor-api-docs`), so both work with no outbound network.
//! ReDoc's one outside reference, its attribution logo, is pointed at a local copy.

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use crate::core::Ctx;

const CSP: HeaderName = HeaderName::from_static("content-security-policy");
/// Only this origin; Swagger UI and ReDoc style inline and draw icons from `data:`. The
/// one inline script allowed, by its hash, is ReDoc's light/dark switch.
const PAGE_CSP: &str = "default-src 'self'; script-src 'self' 'sha256-jwomWTwW+cbYvvb/uqmFRuOGL0FhXkaW0iynbO3M6Oc='; \
                        img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src 'self' data:; \
                        worker-src 'self' blob:; frame-ancestors 'none'";

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";

/// (path, content type, bytes).
const FILES: &[(&str, &str, &[u8])] = &[
    ("/docs", HTML, include_bytes!("assets/api-docs/docs.html")),
    ("/docs/docs-init.js", JS, include_bytes!("assets/api-docs/docs-init.js")),
    ("/docs/swagger-ui-bundle.js", JS, include_bytes!("assets/api-docs/swagger-ui-bundle.js")),
    ("/docs/swagger-ui.css", CSS, include_bytes!("assets/api-docs/swagger-ui.css")),
    ("/redoc", HTML, include_bytes!("assets/api-docs/redoc.html")),
    ("/redoc/redoc.standalone.js", JS, include_bytes!("assets/api-docs/redoc.standalone.js")),
    // ReDoc's attribution logo, served here instead of from its CDN.
    ("/redoc/logo-mini.svg", SVG, include_bytes!("assets/api-docs/logo-mini.svg")),
    ("/redoc/logo-mini-full.svg", SVG, include_bytes!("assets/api-docs/logo-mini-full.svg")),
];

pub(crate) fn router() -> Router<Ctx> {
    let mut router = Router::new()
        .route("/docs/", get(|| async { Redirect::permanent("/docs") }))
        .route("/redoc/", get(|| async { Redirect::permanent("/redoc") }));
    for &(path, content_type, bytes) in FILES {
        router = router.route(path, get(move || async move { file(content_type, bytes) }));
    }
    router
}

fn file(content_type: &'static str, bytes: &'static [u8]) -> Response {
    // Pages revalidate (they change with each release); the vendored bundles may be kept
    // a day.
    let cache = if content_type == HTML { "no-cache" } else { "public, max-age=86400" };
    (StatusCode::OK, [(CONTENT_TYPE, content_type), (CACHE_CONTROL, cache), (CSP, PAGE_CSP)], bytes).into_response()
}
