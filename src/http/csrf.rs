//! Cross-site request forgery: a write sent by a browser on behalf of another site is
//! refused before any handler runs (403 `cross_site_request`).
//!
//! The session cookie is `SameSite=Lax`, which already keeps it off cross-site POSTs in
//! current browsers; this is the second, explicit line (OWASP's "verify the origin with
//! standard headers"): a request that changes something (any method but GET, HEAD,
//! OPTIONS) and carries no `Authorization` header — so it may be riding on the cookie —
//! must come from this server's own pages:
//!
//! - `Sec-Fetch-Site` (sent by every current browser) must be `same-origin`, or `none`
//!   (the user typed or bookmarked it);
//! - without it, an `Origin` header must name this server (its authority = `Host`);
//! - with neither, the client is not a browser (curl, a script) and cannot be forged.
//!
//! Bearer requests are exempt: another site cannot make a browser send our token.
//! `/api/mcp` has its own, configurable `Origin` rule (`MCP_ALLOWED_ORIGINS`).

use axum::extract::Request;
use axum::http::header::{AUTHORIZATION, HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderName, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::Error;

const SEC_FETCH_SITE: HeaderName = HeaderName::from_static("sec-fetch-site");

pub(crate) async fn refuse_cross_site(req: Request, next: Next) -> Response {
    if let Some(why) = cross_site(&req) {
        return Error::cross_site_request(&why).into_response();
    }
    next.run(req).await
}

/// Why the request looks forged, if it does.
fn cross_site(req: &Request) -> Option<String> {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let headers = req.headers();
    if safe || headers.contains_key(AUTHORIZATION) || req.uri().path() == "/api/mcp" {
        return None;
    }
    foreign(headers)
}

/// For a GET that opens a channel on the caller's cookie (a co-editing WebSocket, which
/// browsers open from any site with its cookies): 403 `cross_site_request` unless it comes
/// from this server's own pages, a non-browser client, or carries a bearer credential.
pub(crate) fn same_origin(headers: &HeaderMap) -> Result<(), Error> {
    if headers.contains_key(AUTHORIZATION) {
        return Ok(());
    }
    foreign(headers).map_or(Ok(()), |why| Err(Error::cross_site_request(&why)))
}

/// Why headers say the request comes from another site's page, if they do.
fn foreign(headers: &HeaderMap) -> Option<String> {
    if let Some(site) = headers.get(SEC_FETCH_SITE) {
        let site = site.to_str().unwrap_or("invalid");
        return (!matches!(site, "same-origin" | "none")).then(|| format!("Sec-Fetch-Site: {site}"));
    }
    let origin = headers.get(ORIGIN)?.to_str().unwrap_or("invalid");
    let host = headers.get(HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let authority = origin.split_once("://").map_or("", |(_, rest)| rest);
    (!authority.eq_ignore_ascii_case(host)).then(|| format!("Origin: {origin}"))
}
