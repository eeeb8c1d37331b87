//! The one error type of Cairn.
//!
//! Core functions return [`Error`]; each door maps it once: HTTP renders RFC 9457
//! problem+json (this module), MCP turns it into an `isError` tool result, the CLI into a
//! message and an exit code. Errors carry a stable snake_case `code` that clients can
//! match on; the human `detail` may change. Unexpected errors (5xx) keep their cause for
//! the log and answer a fixed text, so no SQL, path or stack trace reaches a client.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug)]
pub struct Error {
    pub status: StatusCode,
    pub code: &'static str,
    pub detail: String,
    /// Extra members merged into the problem body (e.g. the current revision on a 409).
    pub extra: Option<Map<String, Value>>,
    /// Seconds for the `Retry-After` header (429).
    pub retry_after: Option<u64>,
    /// The real cause of a 5xx, logged and never sent.
    pub source: Option<anyhow::Error>,
}

impl Error {
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self { status, code, detail: detail.into(), extra: None, retry_after: None, source: None }
    }

    pub fn with_extra(mut self, key: &str, value: Value) -> Self {
        self.extra.get_or_insert_with(Map::new).insert(key.to_owned(), value);
        self
    }

    // --- 400: well-formed but refused -------------------------------------------------
    pub fn bad_request(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, detail)
    }
    pub fn invalid_slug(slug: &str) -> Self {
        Self::bad_request(
            "invalid_slug",
            format!(
                "'{slug}' is not a valid slug: use 1-128 lowercase letters, digits, '-', '_' or '.', not starting with '.' or '-'"
            ),
        )
    }

    // --- 401 / 403 ------------------------------------------------------------------------
    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", detail)
    }
    pub fn invalid_credentials() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "invalid_credentials", "email or password is wrong")
    }
    pub fn forbidden(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, detail)
    }
    pub fn owner_only() -> Self {
        Self::forbidden("owner_only", "only an owner of this workspace may do this")
    }

    // --- 404 --------------------------------------------------------------------------------
    pub fn not_found(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, detail)
    }
    /// Also the answer for a workspace that exists but the caller may not see.
    pub fn workspace_not_found(slug: &str) -> Self {
        Self::not_found("workspace_not_found", format!("no workspace '{slug}'"))
    }
    pub fn route_not_found() -> Self {
        Self::not_found("route_not_found", "no such route")
    }

    // --- 409 / 422 / 429 / 503 ----------------------------------------------------------
    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, detail)
    }
    pub fn unprocessable(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body", detail)
    }
    pub fn too_many_login_failures(retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_login_failures",
            "too many failed logins for this account from this address; try again later",
        );
        e.retry_after = Some(retry_after.max(1));
        e
    }
    pub fn database_unavailable(cause: impl Into<anyhow::Error>) -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "database_unavailable",
            "the database is unreachable; nothing was changed, try again",
        );
        e.source = Some(cause.into());
        e
    }

    // --- 500 --------------------------------------------------------------------------------
    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        let mut e = Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error");
        e.source = Some(cause.into());
        e
    }

    pub fn is_not_found(&self) -> bool {
        self.status == StatusCode::NOT_FOUND
    }

    /// The problem+json body, also used by MCP tool errors.
    pub fn body(&self) -> Value {
        let mut body = json!({
            "type": "about:blank",
            "title": self.status.canonical_reason().unwrap_or("Error"),
            "status": self.status.as_u16(),
            "detail": self.detail,
            "code": self.code,
        });
        if let (Some(extra), Some(obj)) = (&self.extra, body.as_object_mut()) {
            for (k, v) in extra {
                obj.insert(k.clone(), v.clone());
            }
        }
        body
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.detail, self.code)
    }
}

impl std::error::Error for Error {}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        if crate::store::is_connection_error(&e) {
            Error::database_unavailable(e)
        } else if crate::store::is_invalid_text(&e) {
            Error::bad_request("invalid_text", "the request contains characters that cannot be stored (e.g. NUL)")
        } else {
            Error::internal(e)
        }
    }
}

impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Self {
        match e.downcast::<Error>() {
            Ok(e) => e,
            Err(e) => match e.downcast::<sqlx::Error>() {
                Ok(e) => e.into(),
                Err(e) => Error::internal(e),
            },
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::internal(e)
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        if let Some(source) = &self.source {
            if self.status.is_server_error() {
                tracing::error!(code = self.code, error = format!("{source:#}"), "request failed");
            } else {
                tracing::debug!(code = self.code, error = format!("{source:#}"), "request refused");
            }
        }
        let mut res = (self.status, axum::Json(self.body())).into_response();
        let headers = res.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }
}
