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

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

/// Writes [`Code`] from one list: each variant beside the name clients see.
macro_rules! codes {
    ($($variant:ident = $name:literal,)*) => {
        /// The stable codes clients match on: a problem body's `code`, in the order
        /// [`Error`]'s constructors below use them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Code { $($variant,)* }

        impl Code {
            /// Every code (the catalogue's test reads it).
            pub const ALL: &[Code] = &[$(Code::$variant,)*];

            pub const fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }
        }
    };
}

codes! {
    InvalidSlug = "invalid_slug",
    InvalidEmail = "invalid_email",
    InvalidName = "invalid_name",
    InvalidWorkspaceName = "invalid_workspace_name",
    InvalidTokenName = "invalid_token_name",
    PasswordTooShort = "password_too_short",
    PasswordTooLong = "password_too_long",
    CurrentPasswordRequired = "current_password_required",
    WrongPassword = "wrong_password",
    UnknownLanguage = "unknown_language",
    InvalidPaging = "invalid_paging",
    InvalidQuery = "invalid_query",
    InvalidText = "invalid_text",
    ContentTooLarge = "content_too_large",
    TitleTooLong = "title_too_long",
    TitleOrSlugRequired = "title_or_slug_required",
    ParentNotFound = "parent_not_found",
    NotASibling = "not_a_sibling",
    MoveCycle = "move_cycle",
    EmptyQuery = "empty_query",
    InvalidMode = "invalid_mode",
    InvalidSentences = "invalid_sentences",
    InvalidWebhookUrl = "invalid_webhook_url",
    WebhookTargetNotAllowed = "webhook_target_not_allowed",
    InvalidWebhookSecret = "invalid_webhook_secret",
    InvalidWebhookEvents = "invalid_webhook_events",
    TooManyWebhooks = "too_many_webhooks",
    LastOwner = "last_owner",
    WorkspaceNotFound = "workspace_not_found",
    NoDefaultWorkspace = "no_default_workspace",
    RouteNotFound = "route_not_found",
    NotFound = "not_found",
    TokenNotFound = "token_not_found",
    UserNotFound = "user_not_found",
    MemberNotFound = "member_not_found",
    PageNotFound = "page_not_found",
    PageMoved = "page_moved",
    RevisionIsCurrent = "revision_is_current",
    RevisionNotFound = "revision_not_found",
    WebhookNotFound = "webhook_not_found",
    UploadNotFound = "upload_not_found",
    TrashEntryNotFound = "trash_entry_not_found",
    EmailTaken = "email_taken",
    WorkspaceSlugTaken = "workspace_slug_taken",
    AlreadyMember = "already_member",
    PageExists = "page_exists",
    PageHasChildren = "page_has_children",
    StaleRevision = "stale_revision",
    MergeConflict = "merge_conflict",
    Unauthorized = "unauthorized",
    InvalidCredentials = "invalid_credentials",
    RegistrationClosed = "registration_closed",
    PasswordSignInOff = "password_sign_in_off",
    SsoStateInvalid = "sso_state_invalid",
    SsoRefused = "sso_refused",
    SsoTokenInvalid = "sso_token_invalid",
    SsoEmailUnverified = "sso_email_unverified",
    SsoDomainNotAllowed = "sso_domain_not_allowed",
    SsoUnavailable = "sso_unavailable",
    SsoNotConfigured = "sso_not_configured",
    InvitationNotFound = "invitation_not_found",
    GrantNotFound = "grant_not_found",
    OauthInvalidRequest = "invalid_request",
    OauthInvalidClient = "invalid_client",
    OauthInvalidGrant = "invalid_grant",
    OauthUnsupportedGrantType = "unsupported_grant_type",
    OauthInvalidTarget = "invalid_target",
    OauthInvalidRedirectUri = "invalid_redirect_uri",
    OauthInvalidClientMetadata = "invalid_client_metadata",
    TooManyAttempts = "too_many_attempts",
    OwnerOnly = "owner_only",
    HostNotAllowed = "host_not_allowed",
    CrossSiteRequest = "cross_site_request",
    OriginNotAllowed = "origin_not_allowed",
    MethodNotAllowed = "method_not_allowed",
    NotAWebsocket = "not_a_websocket",
    BodyTooLarge = "body_too_large",
    UploadTooLarge = "upload_too_large",
    UploadTypeRefused = "upload_type_refused",
    InvalidBody = "invalid_body",
    TooManyLoginFailures = "too_many_login_failures",
    Busy = "busy",
    Timeout = "timeout",
    DatabaseUnavailable = "database_unavailable",
    StorageFull = "storage_full",
    Internal = "internal",
    Error = "error",
}

#[derive(Debug)]
pub struct Error {
    pub status: StatusCode,
    pub code: Code,
    pub detail: String,
    /// Extra members merged into the problem body (e.g. the current revision on a 409).
    pub extra: Option<Map<String, Value>>,
    /// Seconds for the `Retry-After` header (429).
    pub retry_after: Option<u64>,
    /// The real cause of a 5xx, logged and never sent.
    pub source: Option<anyhow::Error>,
}

impl Error {
    /// Private: every error is made by a named constructor below, so this file is the
    /// catalogue of the codes clients can match on.
    fn new(status: StatusCode, code: Code, detail: impl Into<String>) -> Self {
        Self { status, code, detail: detail.into(), extra: None, retry_after: None, source: None }
    }

    pub fn with_extra(mut self, key: &str, value: Value) -> Self {
        self.extra.get_or_insert_with(Map::new).insert(key.to_owned(), value);
        self
    }

    fn bad_request(code: Code, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, detail)
    }
    fn not_found(code: Code, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, detail)
    }
    fn conflict(code: Code, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, detail)
    }
    fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, Code::Unauthorized, detail)
    }

    // --- 400: well-formed but refused -------------------------------------------------
    pub fn invalid_slug(slug: &str) -> Self {
        Self::bad_request(
            Code::InvalidSlug,
            format!(
                "'{slug}' is not a valid slug: use 1-128 lowercase letters, digits, '-', '_' or '.', not starting with '.' or '-'"
            ),
        )
    }
    pub fn invalid_email() -> Self {
        Self::bad_request(Code::InvalidEmail, "that is not a valid email address")
    }
    pub fn invalid_name(max: usize) -> Self {
        Self::bad_request(Code::InvalidName, format!("a name has 1-{max} printable characters"))
    }
    pub fn invalid_workspace_name(max: usize) -> Self {
        Self::bad_request(Code::InvalidWorkspaceName, format!("a workspace name has 1-{max} printable characters"))
    }
    pub fn invalid_token_name(max: usize) -> Self {
        Self::bad_request(Code::InvalidTokenName, format!("a token name has 1-{max} printable characters"))
    }
    pub fn password_too_short(min: usize) -> Self {
        Self::bad_request(Code::PasswordTooShort, format!("the password must have at least {min} characters"))
    }
    pub fn password_too_long(max: usize) -> Self {
        Self::bad_request(Code::PasswordTooLong, format!("the password must have at most {max} characters"))
    }
    pub fn current_password_required() -> Self {
        Self::bad_request(Code::CurrentPasswordRequired, "changing the email needs the current password")
    }
    pub fn wrong_password() -> Self {
        Self::bad_request(Code::WrongPassword, "the current password is wrong")
    }
    pub fn unknown_language(code: &str, available: &[&str]) -> Self {
        Self::bad_request(
            Code::UnknownLanguage,
            format!("unknown language '{code}'; available: {}", available.join(", ")),
        )
    }
    pub fn invalid_paging() -> Self {
        Self::bad_request(Code::InvalidPaging, "limit must be at least 1 and offset at least 0")
    }
    pub fn invalid_query(detail: impl std::fmt::Display) -> Self {
        Self::bad_request(Code::InvalidQuery, format!("invalid query parameters: {detail}"))
    }
    pub fn invalid_text() -> Self {
        Self::bad_request(Code::InvalidText, "the request contains characters that cannot be stored (e.g. NUL)")
    }
    pub fn content_too_large(len: usize, max: usize) -> Self {
        Self::bad_request(
            Code::ContentTooLarge,
            format!("page content is {len} bytes; the limit is {max} bytes (1 MiB)"),
        )
    }
    pub fn title_too_long(max: usize) -> Self {
        Self::bad_request(Code::TitleTooLong, format!("a title has at most {max} characters"))
    }
    pub fn title_or_slug_required() -> Self {
        Self::bad_request(Code::TitleOrSlugRequired, "give a title or a slug")
    }
    pub fn parent_not_found(slug: &str) -> Self {
        Self::bad_request(Code::ParentNotFound, format!("no live page '{slug}' to be the parent"))
    }
    pub fn not_a_sibling(slug: &str) -> Self {
        Self::bad_request(Code::NotASibling, format!("'{slug}' is not a live page beside this one"))
    }
    pub fn move_cycle() -> Self {
        Self::bad_request(Code::MoveCycle, "a page cannot move into its own subtree")
    }
    pub fn empty_query() -> Self {
        Self::bad_request(Code::EmptyQuery, "give something to search for in q")
    }
    pub fn invalid_mode(mode: &str) -> Self {
        Self::bad_request(Code::InvalidMode, format!("unknown search mode '{mode}'; use keyword, semantic or hybrid"))
    }
    pub fn invalid_sentences(max: i64) -> Self {
        Self::bad_request(Code::InvalidSentences, format!("sentences must be a whole number from 1 to {max}"))
    }
    pub fn invalid_webhook_url(why: &str) -> Self {
        Self::bad_request(Code::InvalidWebhookUrl, format!("not a usable webhook URL: {why}"))
    }
    /// A target on loopback, private, link-local… addresses (`WEBHOOK_ALLOW_PRIVATE=1` allows).
    pub fn webhook_target_not_allowed(host: &str) -> Self {
        Self::bad_request(
            Code::WebhookTargetNotAllowed,
            format!("'{host}' is or resolves to a loopback, private or otherwise non-public address"),
        )
    }
    pub fn invalid_webhook_secret() -> Self {
        Self::bad_request(
            Code::InvalidWebhookSecret,
            "a webhook secret is 'whsec_' followed by 24-64 bytes in base64; omit it to have one generated",
        )
    }
    pub fn invalid_webhook_events(kind: &str, kinds: &[&str]) -> Self {
        Self::bad_request(
            Code::InvalidWebhookEvents,
            format!("'{kind}' is not an event kind; use any of {}", kinds.join(", ")),
        )
    }
    pub fn too_many_webhooks(max: i64) -> Self {
        Self::bad_request(Code::TooManyWebhooks, format!("a workspace has at most {max} webhooks"))
    }
    pub fn last_owner() -> Self {
        Self::bad_request(Code::LastOwner, "the last owner of a workspace cannot be removed")
    }

    // --- OAuth (RFC 6749 §5.2 and RFC 7591 §3.2.2: the token and registration endpoints
    // answer them as `{error, error_description}`) ------------------------------------------
    pub fn oauth_invalid_request(why: &str) -> Self {
        Self::bad_request(Code::OauthInvalidRequest, why)
    }
    pub fn oauth_invalid_client(why: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, Code::OauthInvalidClient, why)
    }
    pub fn oauth_invalid_grant(why: &str) -> Self {
        Self::bad_request(Code::OauthInvalidGrant, why)
    }
    pub fn oauth_unsupported_grant_type(grant: &str) -> Self {
        Self::bad_request(
            Code::OauthUnsupportedGrantType,
            format!("grant_type '{grant}' is not supported; use authorization_code or refresh_token"),
        )
    }
    pub fn oauth_invalid_target() -> Self {
        Self::bad_request(Code::OauthInvalidTarget, "resource must be this server's MCP endpoint")
    }
    pub fn oauth_invalid_redirect_uri(why: &str) -> Self {
        Self::bad_request(Code::OauthInvalidRedirectUri, format!("a redirect URI is not usable: {why}"))
    }
    pub fn oauth_invalid_client_metadata(why: &str) -> Self {
        Self::bad_request(Code::OauthInvalidClientMetadata, why)
    }

    // --- 401 ----------------------------------------------------------------------------
    pub fn no_credential() -> Self {
        Self::unauthorized("sign in, or send a bearer token (a personal access token or a JWT)")
    }
    pub fn malformed_authorization() -> Self {
        Self::unauthorized("the Authorization header must be 'Bearer <token>'")
    }
    pub fn invalid_bearer() -> Self {
        Self::unauthorized("the bearer token is invalid, expired or revoked")
    }
    /// An OAuth access token is bound to the MCP endpoint (RFC 8707).
    pub fn token_for_mcp_only() -> Self {
        Self::unauthorized("this access token was issued for /api/mcp only; use a personal access token here")
    }
    pub fn account_gone() -> Self {
        Self::unauthorized("the account no longer exists")
    }
    pub fn no_session() -> Self {
        Self::unauthorized("no session to end; bearer tokens are revoked with DELETE /api/tokens/{id}")
    }
    pub fn invalid_credentials() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, Code::InvalidCredentials, "email or password is wrong")
    }

    // --- 403 ----------------------------------------------------------------------------
    pub fn registration_closed() -> Self {
        Self::new(StatusCode::FORBIDDEN, Code::RegistrationClosed, "registration is closed on this instance")
    }
    /// `OIDC_ONLY=1`: people sign in through the identity provider.
    pub fn password_sign_in_off() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            Code::PasswordSignInOff,
            "password sign-in is off on this instance; sign in with single sign-on",
        )
    }
    /// The single sign-on's return does not match one begun in this browser (no or
    /// another `state`, used already, or begun too long ago).
    pub fn sso_state_invalid() -> Self {
        Self::bad_request(
            Code::SsoStateInvalid,
            "this sign-in was not started in this browser, was used already or took too long; start again",
        )
    }
    /// The identity provider said no (the person cancelled, or it refused the code).
    pub fn sso_refused(why: &str) -> Self {
        Self::bad_request(Code::SsoRefused, format!("the identity provider refused the sign-in: {why}"))
    }
    /// The ID token failed a check (signature, issuer, audience, expiry, nonce).
    pub fn sso_token_invalid(why: &str) -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            Code::SsoTokenInvalid,
            format!("the identity provider's answer could not be verified: {why}"),
        )
    }
    pub fn sso_email_unverified() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            Code::SsoEmailUnverified,
            "the identity provider does not vouch for this account's email address (not verified)",
        )
    }
    pub fn sso_domain_not_allowed(domain: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            Code::SsoDomainNotAllowed,
            format!("accounts of '{domain}' may not sign in here (OIDC_ALLOWED_DOMAINS)"),
        )
    }
    /// For a member: it may see the workspace, so saying no openly leaks nothing.
    pub fn owner_only() -> Self {
        Self::new(StatusCode::FORBIDDEN, Code::OwnerOnly, "only an owner of this workspace may do this")
    }
    /// An MCP request to a name not in `MCP_ALLOWED_HOSTS` (DNS rebinding defence).
    pub fn host_not_allowed(host: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, Code::HostNotAllowed, format!("host '{host}' is not in MCP_ALLOWED_HOSTS"))
    }
    /// A cookie-borne write sent by a browser from another site (http/csrf.rs).
    pub fn cross_site_request(evidence: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            Code::CrossSiteRequest,
            format!(
                "a write from another site is refused ({evidence}); send it from this server's pages or with a bearer token"
            ),
        )
    }
    /// An MCP request from a web page of another origin.
    pub fn origin_not_allowed(origin: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            Code::OriginNotAllowed,
            format!("origin '{origin}' is neither this server nor in MCP_ALLOWED_ORIGINS"),
        )
    }

    // --- 404 ----------------------------------------------------------------------------
    pub fn grant_not_found(id: i64) -> Self {
        Self::not_found(Code::GrantNotFound, format!("no connected app {id}"))
    }
    pub fn sso_not_configured() -> Self {
        Self::not_found(Code::SsoNotConfigured, "single sign-on is not set up on this instance (OIDC_ISSUER)")
    }
    /// Unknown, used, revoked and expired links alike: which one is not told.
    pub fn invitation_not_found() -> Self {
        Self::not_found(Code::InvitationNotFound, "no such invitation: it may have been used, revoked or have expired")
    }
    /// Also the answer for a workspace that exists but the caller may not see.
    pub fn workspace_not_found(slug: &str) -> Self {
        Self::not_found(Code::WorkspaceNotFound, format!("no workspace '{slug}'"))
    }
    pub fn no_default_workspace() -> Self {
        Self::not_found(
            Code::NoDefaultWorkspace,
            "no workspace given and no default workspace set; pass ws= or switch to a workspace",
        )
    }
    pub fn route_not_found() -> Self {
        Self::not_found(Code::RouteNotFound, "no such route")
    }
    /// A path parameter of the wrong type: no such thing can exist.
    pub fn resource_not_found() -> Self {
        Self::not_found(Code::NotFound, "no such resource")
    }
    pub fn token_not_found(id: i64) -> Self {
        Self::not_found(Code::TokenNotFound, format!("no token {id}"))
    }
    pub fn user_not_found(email: &str) -> Self {
        Self::not_found(Code::UserNotFound, format!("no account with email {email}"))
    }
    pub fn member_not_found(id: i64) -> Self {
        Self::not_found(Code::MemberNotFound, format!("no member {id}"))
    }
    pub fn page_not_found(slug: &str) -> Self {
        Self::not_found(Code::PageNotFound, format!("no page '{slug}'"))
    }
    /// A slug a renamed page had: the page is at `to` now (HTTP answers 308 with `Location`
    /// under the new slug; MCP acts on the page at `to`).
    pub fn page_moved(from: &str, to: &str) -> Self {
        Self::new(StatusCode::PERMANENT_REDIRECT, Code::PageMoved, format!("page '{from}' was renamed to '{to}'"))
            .with_extra("from", json!(from))
            .with_extra("slug", json!(to))
    }
    /// Where a [`Code::PageMoved`] error says the page is now: (old slug, current slug).
    pub fn moved(&self) -> Option<(&str, &str)> {
        let extra = self.extra.as_ref().filter(|_| self.code == Code::PageMoved)?;
        Some((extra.get("from")?.as_str()?, extra.get("slug")?.as_str()?))
    }
    /// An erasure of the content the page holds now.
    pub fn revision_is_current(sha: &str) -> Self {
        Self::conflict(
            Code::RevisionIsCurrent,
            format!("revision '{sha}' holds the page's current content; save a version without it, then erase it"),
        )
    }
    pub fn revision_not_found(sha: &str) -> Self {
        Self::not_found(Code::RevisionNotFound, format!("no revision '{sha}' of this page"))
    }
    pub fn webhook_not_found(id: i64) -> Self {
        Self::not_found(Code::WebhookNotFound, format!("no webhook {id}"))
    }
    pub fn upload_not_found() -> Self {
        Self::not_found(Code::UploadNotFound, "no such upload")
    }
    pub fn trash_entry_not_found(slug: &str) -> Self {
        Self::not_found(Code::TrashEntryNotFound, format!("no page '{slug}' in the trash"))
    }

    // --- 405 / 409 / 413 / 422 / 429 / 503 ------------------------------------------------
    /// A co-editing route asked for without a WebSocket upgrade.
    pub fn not_a_websocket(why: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            Code::NotAWebsocket,
            format!("this route is a WebSocket: {why}; open it with a WebSocket client"),
        )
    }
    pub fn method_not_allowed(method: &str) -> Self {
        Self::new(StatusCode::METHOD_NOT_ALLOWED, Code::MethodNotAllowed, format!("{method} is not allowed here"))
    }
    pub fn email_taken() -> Self {
        Self::conflict(Code::EmailTaken, "an account with this email already exists")
    }
    pub fn workspace_slug_taken(slug: &str) -> Self {
        Self::conflict(Code::WorkspaceSlugTaken, format!("the workspace slug '{slug}' is taken"))
    }
    pub fn already_member(email: &str) -> Self {
        Self::conflict(Code::AlreadyMember, format!("{email} is already a member"))
    }
    pub fn page_exists(slug: &str) -> Self {
        Self::conflict(Code::PageExists, format!("a page '{slug}' exists (perhaps in the trash)"))
    }
    pub fn page_has_children(slug: &str) -> Self {
        Self::conflict(
            Code::PageHasChildren,
            format!("'{slug}' has live child pages; delete with recursive=true to trash the subtree"),
        )
    }
    /// A stale `base_revision`; the body carries the current one.
    pub fn stale_revision(current: &str) -> Self {
        Self::conflict(Code::StaleRevision, "the page changed since base_revision; reload it or send merge: true")
            .with_extra("current_revision", json!(current))
    }
    /// A merge whose edits overlap; the body carries the merged text with markers.
    pub fn merge_conflict(current: &str, merged: &str) -> Self {
        Self::conflict(
            Code::MergeConflict,
            "the edit overlaps a newer change; resolve the conflict markers and save against current_revision",
        )
        .with_extra("current_revision", json!(current))
        .with_extra("merged", json!(merged))
    }
    pub fn body_too_large() -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, Code::BodyTooLarge, "the request body is too large")
    }
    pub fn upload_too_large(max: u64) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, Code::UploadTooLarge, format!("an upload has at most {max} bytes"))
    }
    pub fn upload_type_refused() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Code::UploadTypeRefused,
            "only PNG, JPEG, GIF, WebP, AVIF and SVG images are accepted (judged by their bytes)",
        )
    }
    pub fn unprocessable(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, Code::InvalidBody, detail)
    }
    /// Too many invitation links or single sign-on returns that did not check out, from
    /// one address.
    pub fn too_many_attempts(retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            Code::TooManyAttempts,
            "too many failed attempts from this address; try again later",
        );
        e.retry_after = Some(retry_after.max(1));
        e
    }
    pub fn too_many_login_failures(retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            Code::TooManyLoginFailures,
            "too many failed logins for this account from this address; try again later",
        );
        e.retry_after = Some(retry_after.max(1));
        e
    }
    /// More work of one kind than the server takes at once (password hashing, open
    /// connections): `what` is busy; try again in `retry_after` seconds.
    pub fn busy(what: &str, retry_after: u64) -> Self {
        let mut e = Self::new(StatusCode::SERVICE_UNAVAILABLE, Code::Busy, format!("{what}; try again shortly"));
        e.retry_after = Some(retry_after.max(1));
        e
    }
    pub fn timeout() -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, Code::Timeout, "the request took too long")
    }
    pub fn database_unavailable(cause: impl Into<anyhow::Error>) -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            Code::DatabaseUnavailable,
            "the database is unreachable; nothing was changed, try again",
        );
        e.source = Some(cause.into());
        e
    }
    /// The identity provider could not be reached, or answered what is not OpenID Connect.
    pub fn sso_unavailable(cause: impl Into<anyhow::Error>) -> Self {
        let mut e = Self::new(
            StatusCode::BAD_GATEWAY,
            Code::SsoUnavailable,
            "the identity provider could not be reached or gave an unusable answer; try again later",
        );
        e.source = Some(cause.into());
        e
    }
    /// Whether the error says the server could not do the work now (the database, a
    /// busy resource, time), rather than that the request or the server is wrong: a
    /// retry may succeed.
    pub fn is_unavailable(&self) -> bool {
        matches!(self.code, Code::DatabaseUnavailable | Code::Busy | Code::Timeout)
    }
    /// A bare error status from a layer outside the handlers, given a problem body.
    pub fn from_status(status: StatusCode) -> Self {
        match status {
            StatusCode::SERVICE_UNAVAILABLE => Self::timeout(),
            StatusCode::PAYLOAD_TOO_LARGE => Self::body_too_large(),
            _ => Self::new(status, Code::Error, status.canonical_reason().unwrap_or("error")),
        }
    }

    // --- 500 ----------------------------------------------------------------------------
    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        let cause = cause.into();
        let mut e = if storage_full(&cause) {
            // Not the server's bug: its disk (or the database's) is full. Nothing of the
            // request was kept (every write is all or nothing), and it can be sent again
            // once space is freed.
            Self::new(
                StatusCode::INSUFFICIENT_STORAGE,
                Code::StorageFull,
                "the server's storage is full; nothing was saved",
            )
        } else {
            Self::new(StatusCode::INTERNAL_SERVER_ERROR, Code::Internal, "internal error")
        };
        e.source = Some(cause);
        e
    }

    pub fn is_not_found(&self) -> bool {
        self.status == StatusCode::NOT_FOUND
    }

    /// Logs the cause (never sent): as an error for a 5xx, at debug level otherwise.
    pub fn log(&self) {
        if let Some(source) = &self.source {
            if self.status.is_server_error() {
                tracing::error!(code = self.code.as_str(), error = format!("{source:#}"), "request failed");
            } else {
                tracing::debug!(code = self.code.as_str(), error = format!("{source:#}"), "request refused");
            }
        }
    }

    /// The problem+json body, also used by MCP tool errors.
    pub fn body(&self) -> Value {
        let mut body = json!({
            "type": "about:blank",
            "title": self.status.canonical_reason().unwrap_or("Error"),
            "status": self.status.as_u16(),
            "detail": self.detail,
            "code": self.code.as_str(),
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
        write!(f, "{} ({})", self.detail, self.code.as_str())
    }
}

impl std::error::Error for Error {}

/// Whether `cause` (anywhere in its chain) is a full disk or quota: ENOSPC or EDQUOT from
/// a write, SQLite's SQLITE_FULL, PostgreSQL's `disk_full` (53100).
fn storage_full(cause: &anyhow::Error) -> bool {
    cause.chain().any(|c| {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return matches!(io.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded)
                || matches!(io.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT));
        }
        if let Some(sqlx::Error::Database(db)) = c.downcast_ref::<sqlx::Error>() {
            return matches!(db.code().as_deref(), Some("13") | Some("53100"));
        }
        false
    })
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        if crate::store::is_connection_error(&e) {
            Error::database_unavailable(e)
        } else if crate::store::is_invalid_text(&e) {
            Error::invalid_text()
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

/// A unique constraint turned into the conflict it means (detected by kind, not by
/// constraint name: SQLite has none).
pub(crate) trait OrConflict<T> {
    fn or_conflict(self, conflict: impl FnOnce() -> Error) -> Result<T>;
}

impl<T> OrConflict<T> for std::result::Result<T, sqlx::Error> {
    fn or_conflict(self, conflict: impl FnOnce() -> Error) -> Result<T> {
        self.map_err(|e| if crate::store::is_unique_violation(&e) { conflict() } else { e.into() })
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        self.log();
        let mut res = (self.status, axum::Json(self.body())).into_response();
        let headers = res.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/problem+json"));
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if let Some((from, to)) = self.moved() {
            let moved = Moved { from: from.to_owned(), to: to.to_owned() };
            res.extensions_mut().insert(moved);
        }
        res
    }
}

/// A `page_moved` answer's slugs, for the layer that knows the request's path and writes
/// its `Location` (`http::pages::redirect_old_slugs`).
#[derive(Debug, Clone)]
pub(crate) struct Moved {
    pub from: String,
    pub to: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_unique_snake_case_and_listed_in_the_api_document() {
        let doc = include_str!("../docs/api.md");
        let section = doc.split("## Error codes").nth(1).and_then(|s| s.split("\n## ").next()).expect("the section");
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "{name} twice");
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
            assert!(section.contains(&format!("| `{name}` |")), "docs/api.md, Error codes, lacks `{name}`");
        }
        let rows = section.lines().filter(|l| l.starts_with("| ") && l.contains("| `")).count();
        assert_eq!(rows, Code::ALL.len(), "docs/api.md lists a code the server does not have");
    }
}
