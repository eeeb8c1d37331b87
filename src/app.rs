//! Router assembly, the middleware stack and the serve loop.
//!
//! [`serve`] is the seam tests use: they bind port 0, pass a shutdown future, and drive
//! the real server over HTTP.

use std::future::Future;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{HeaderName, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::timeout::TimeoutLayer;

use crate::core::Ctx;
use crate::error::Error;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// JSON bodies may carry a 1 MiB page escaped (up to 6 bytes per byte in the worst case).
const JSON_BODY_LIMIT: usize = 8 * 1024 * 1024;

/// The JSON API (`/api/…`, `/health`, `/openapi.json`) beside the browser app (`/`,
/// `/app/…`). A path no route matches is the app's under `/app/` (it routes on the
/// client) and a problem+json 404 everywhere else — so an unknown `/api/…` path stays
/// JSON.
pub(crate) fn router(ctx: Ctx) -> Router {
    let (api, _openapi) = crate::http::api();
    let timeout = Duration::from_secs(ctx.config.request_timeout_secs);
    let https = ctx.config.cookie_secure.on();
    let csp = crate::http::browser::app_csp(ctx.config.block_external_images.on());
    api.merge(crate::mcp::router(&ctx))
        .merge(crate::http::browser::router())
        .merge(crate::http::api_docs::router())
        .fallback(move |req: Request| async move {
            let app = crate::http::browser::is_app_path(req.uri().path());
            match *req.method() {
                Method::GET | Method::HEAD if app => crate::http::browser::serve_app(req, csp).await,
                _ if app => Error::method_not_allowed(req.method().as_str()).into_response(),
                _ => Error::route_not_found().into_response(),
            }
        })
        .method_not_allowed_fallback(|method: Method| async move { Error::method_not_allowed(method.as_str()) })
        .layer(DefaultBodyLimit::max(JSON_BODY_LIMIT))
        .layer(middleware::from_fn(crate::http::pages::redirect_old_slugs))
        .with_state(ctx)
        .layer(middleware::from_fn(crate::http::csrf::refuse_cross_site))
        .layer(middleware::from_fn(problem_for_bare_errors))
        .layer(middleware::from_fn(json_charset))
        .layer(TimeoutLayer::with_status_code(StatusCode::SERVICE_UNAVAILABLE, timeout))
        .layer(CatchPanicLayer::custom(|_| Error::internal(anyhow::anyhow!("handler panicked")).into_response()))
        .layer(middleware::from_fn(log_request))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(middleware::from_fn(unsafe_request_ids_replaced))
        .layer(middleware::map_response_with_state(https, security_headers))
}

/// Headers every answer carries (so routes set none of them): no content sniffing, no
/// `Referer` sent from our pages to other sites, and — when Cairn runs behind TLS
/// (`COOKIE_SECURE=1`) — HSTS.
async fn security_headers(axum::extract::State(https): axum::extract::State<bool>, mut res: Response) -> Response {
    use axum::http::{HeaderValue, header};
    let headers = res.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if https {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static("max-age=31536000"));
    }
    res
}

/// A client's `X-Request-Id` is kept (logged and echoed) only when it is a plain token:
/// at most 128 letters, digits, `-`, `_`, `.`, `:`. Anything else — spaces, quotes, line
/// tricks for the log — is dropped, and the request gets a fresh id.
async fn unsafe_request_ids_replaced(mut req: Request, next: Next) -> Response {
    let plain = |v: &axum::http::HeaderValue| {
        let b = v.as_bytes();
        !b.is_empty() && b.len() <= 128 && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_.:".contains(c))
    };
    if req.headers().get(REQUEST_ID).is_some_and(|v| !plain(v)) {
        req.headers_mut().remove(REQUEST_ID);
    }
    next.run(req).await
}

/// One log line per request: method, path (never the query), status, duration, id.
async fn log_request(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let id =
        req.extensions().get::<RequestId>().and_then(|id| id.header_value().to_str().ok()).unwrap_or("-").to_owned();
    let res = next.run(req).await;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let status = res.status().as_u16();
    if res.status().is_server_error() {
        tracing::warn!(%method, %path, status, ms = format!("{ms:.2}"), request_id = %id, "request");
    } else {
        tracing::info!(%method, %path, status, ms = format!("{ms:.2}"), request_id = %id, "request");
    }
    res
}

/// Layers outside the handlers (the timeout) answer with empty bodies; give every error
/// status a problem+json body.
async fn problem_for_bare_errors(req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    let status = res.status();
    let has_type = res.headers().contains_key(axum::http::header::CONTENT_TYPE);
    if (status.is_client_error() || status.is_server_error()) && !has_type {
        let mut new = Error::from_status(status).into_response();
        if let Some(v) = res.headers().get(REQUEST_ID) {
            new.headers_mut().insert(REQUEST_ID, v.clone());
        }
        return new;
    }
    res
}

/// JSON answers say their charset: `application/json; charset=utf-8`.
async fn json_charset(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let ct = res.headers().get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let with_charset = match ct {
        Some("application/json") => "application/json; charset=utf-8",
        Some("application/problem+json") => "application/problem+json; charset=utf-8",
        _ => return res,
    };
    res.headers_mut().insert(axum::http::header::CONTENT_TYPE, axum::http::HeaderValue::from_static(with_charset));
    res
}

/// Serves until `shutdown` resolves, then stops accepting, closes idle connections and
/// gives in-flight requests `SHUTDOWN_GRACE_SECS` to finish (`http::connections`). The
/// background workers run beside the server and are stopped (and waited for) after it.
pub async fn serve(
    listener: tokio::net::TcpListener,
    ctx: Ctx,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let max_connections = ctx.config.max_connections as usize;
    crate::http::connections::warn_if_over_open_files(max_connections);
    let per_address =
        (!ctx.config.trust_proxy.on()).then(|| crate::http::connections::Limits::per_address_of(max_connections));
    let limits = crate::http::connections::Limits {
        header_timeout: Duration::from_secs(ctx.config.header_timeout_secs),
        max_connections,
        per_address,
        grace: Duration::from_secs(ctx.config.shutdown_grace_secs),
    };
    let workers = crate::workers::start(&ctx);
    let grace = limits.grace;
    crate::http::connections::serve(listener, router(ctx), limits, shutdown).await;
    workers.stop(grace).await;
    Ok(())
}

/// Registers for SIGTERM and Ctrl-C now and answers a future that resolves on either.
/// Registering before the listener is bound matters: a signal that arrives once `/health`
/// answers must stop the server gracefully, not kill it with the default action (a test
/// saw exactly that when the future was first polled after a request had been served).
pub(crate) fn shutdown_signal() -> anyhow::Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let listen =
            |kind: SignalKind, name: &str| signal(kind).map_err(|e| anyhow::anyhow!("cannot listen for {name}: {e}"));
        let mut term = listen(SignalKind::terminate(), "SIGTERM")?;
        let mut int = listen(SignalKind::interrupt(), "SIGINT")?;
        Ok(async move {
            tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
        })
    }
    #[cfg(not(unix))]
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
