//! Extractors whose rejections are problem+json with the statuses of docs/api.md's "Conventions": a body of
//! the wrong shape is 422 (whatever its content type), a bad query string 400, a path
//! parameter of the wrong type 404 (no such thing can exist).

use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::error::Error;

/// A JSON request body.
pub(crate) struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Error> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                Error::body_too_large()
            } else {
                Error::unprocessable(format!("unreadable body: {e}"))
            }
        })?;
        // An empty body is an empty object; anything else must be an object (serde would
        // otherwise accept an array for a struct, field by position).
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        let bytes = match first {
            None => Bytes::from_static(b"{}"),
            Some(b'{') => bytes,
            Some(_) => return Err(Error::unprocessable("the body must be a JSON object")),
        };
        serde_json::from_slice(&bytes)
            .map(Json)
            .map_err(|e| Error::unprocessable(format!("the body does not match the expected shape: {e}")))
    }
}

/// A query string.
pub(crate) struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Error> {
        let q = parts.uri.query().unwrap_or_default();
        serde_urlencoded::from_str(q).map(Query).map_err(Error::invalid_query)
    }
}

/// Path parameters.
pub(crate) struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| Path(p.0))
            .map_err(|_| Error::resource_not_found())
    }
}

/// The client's address, as the failed-login limiter counts it: the peer address, or
/// with `TRUST_PROXY=1` the last `X-Forwarded-For` entry (the one our proxy added).
pub(crate) struct ClientAddr(pub String);

impl FromRequestParts<Ctx> for ClientAddr {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        if ctx.config.trust_proxy.on()
            && let Some(last) = parts
                .headers
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .rfind(|s| !s.is_empty())
        {
            return Ok(ClientAddr(last.to_owned()));
        }
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip().to_string());
        Ok(ClientAddr(peer.unwrap_or_else(|| "unknown".into())))
    }
}

/// How every list route documents its paging: `params(PagingQuery)`. Handlers take the
/// checked [`Paging`] itself, read from the same two fields.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PagingQuery {
    /// Items per page (default 50, at most 500).
    #[param(minimum = 1)]
    pub limit: Option<i64>,
    /// Items to skip.
    #[param(minimum = 0)]
    pub offset: Option<i64>,
}

/// `limit` and `offset` from the query string, checked by the core's rule: a value that is
/// not a number is a bad query (400), one out of range is bad paging (400).
impl<S: Send + Sync> FromRequestParts<S> for Paging {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        let Query(q) = Query::<PagingQuery>::from_request_parts(parts, state).await?;
        Paging::new(q.limit, q.offset)
    }
}

/// The address people reach this server at, without a trailing `/`: `PUBLIC_URL`, else
/// the request's own scheme and `Host` (with `TRUST_PROXY=1`, `X-Forwarded-Proto` and
/// `X-Forwarded-Host` first). The addresses Cairn hands out are made from it: single
/// sign-on's return, invitation links, the OAuth metadata.
pub(crate) struct PublicBase(pub String);

impl FromRequestParts<Ctx> for PublicBase {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, ctx: &Ctx) -> Result<Self, Error> {
        public_base(ctx, &parts.headers).map(PublicBase)
    }
}

/// [`PublicBase`] of a request with `headers`.
pub(crate) fn public_base(ctx: &Ctx, headers: &axum::http::HeaderMap) -> Result<String, Error> {
    if let Some(url) = &ctx.config.public_url {
        return Ok(url.as_str().trim_end_matches('/').to_owned());
    }
    let header = |name: &str| {
        let value = headers.get(name).and_then(|v| v.to_str().ok())?;
        value.split(',').next().map(str::trim).filter(|v| !v.is_empty())
    };
    let forwarded = |name: &str| header(name).filter(|_| ctx.config.trust_proxy.on());
    let secure = if ctx.config.cookie_secure.on() { "https" } else { "http" };
    let scheme = forwarded("x-forwarded-proto").filter(|s| matches!(*s, "http" | "https")).unwrap_or(secure);
    let fallback = format!("{}:{}", ctx.config.host, ctx.config.port);
    let host = forwarded("x-forwarded-host").or_else(|| header("host")).unwrap_or(&fallback);
    // A host that is not one (a path, a user part) would make an address elsewhere.
    if host.contains(['/', '@', '\\', '?', '#']) {
        return Err(Error::invalid_query("the Host header is not a host name"));
    }
    Ok(format!("{scheme}://{host}"))
}
