//! The authorization code flow: an authorization request checked ([`check`]), the
//! person's decision ([`consent`]) turned into a one-use code for the client's redirect
//! URI, and the token endpoint ([`token`]): the code exchanged with its PKCE verifier
//! (S256 only), refresh tokens rotated with reuse detection.

use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::{IntoParams, ToSchema};

use super::clients::{self, Client};
use super::{Issued, SCOPE, issue_in_tx, resource};
use crate::auth::secrets;
use crate::core::Ctx;
use crate::core::users::User;
use crate::error::{Error, Result};

/// How long a code waits to be exchanged.
const CODE_SECS: i64 = 60;

/// An authorization request's parameters (RFC 6749 §4.1.1, with PKCE and RFC 8707).
#[derive(Debug, Clone, Deserialize, Serialize, IntoParams, ToSchema)]
#[into_params(parameter_in = Query)]
pub(crate) struct AuthorizationRequest {
    /// `code`.
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub state: Option<String>,
    pub scope: Option<String>,
    pub code_challenge: Option<String>,
    /// `S256` (`plain` is refused).
    pub code_challenge_method: Option<String>,
    /// The MCP endpoint's URL (RFC 8707).
    pub resource: Option<String>,
}

/// What went wrong with an authorization request, and where the answer goes.
pub(crate) enum Refusal {
    /// The client or its redirect URI is not known: nothing may be sent to the URI, so
    /// the person is told.
    ToPerson(Error),
    /// Anything else goes back to the client, at its redirect URI (RFC 6749 §4.1.2.1).
    ToClient { redirect: String },
}

/// A request checked: its client and what will be granted.
pub(crate) struct Checked {
    pub client: Client,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub challenge: String,
    pub resource: String,
}

/// `redirect` with the query parameters `pairs` added.
fn with_query(redirect: &str, pairs: &[(&str, &str)]) -> String {
    let mut url = url::Url::parse(redirect).expect("a registered redirect URI is a URL");
    url.query_pairs_mut().extend_pairs(pairs.iter().filter(|(_, v)| !v.is_empty()));
    url.into()
}

/// Checks an authorization request made to the server at `base`.
pub(crate) async fn check(ctx: &Ctx, base: &str, req: &AuthorizationRequest) -> Result<Checked, Refusal> {
    let client_id = req.client_id.as_deref().unwrap_or_default();
    let client = clients::get(ctx, client_id).await.map_err(Refusal::ToPerson)?;
    let redirect_uri = match req.redirect_uri.as_deref() {
        Some(uri) if client.redirects_to(uri) => uri.to_owned(),
        // Optional when the client registered exactly one.
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        _ => return Err(Refusal::ToPerson(Error::oauth_invalid_redirect_uri("not one the client registered"))),
    };
    let state = req.state.clone();
    let refuse = |error: &str, description: &str| Refusal::ToClient {
        redirect: with_query(
            &redirect_uri,
            &[
                ("error", error),
                ("error_description", description),
                ("state", state.as_deref().unwrap_or_default()),
                ("iss", base),
            ],
        ),
    };
    if req.response_type.as_deref() != Some("code") {
        return Err(refuse("unsupported_response_type", "response_type must be code"));
    }
    let challenge = match (req.code_challenge.as_deref(), req.code_challenge_method.as_deref()) {
        (Some(c), Some("S256")) if (43..=128).contains(&c.len()) => c.to_owned(),
        (Some(_), Some("plain") | None) => {
            return Err(refuse("invalid_request", "PKCE with S256 only; plain is refused"));
        }
        _ => return Err(refuse("invalid_request", "a code_challenge with code_challenge_method S256 is required")),
    };
    if req.scope.as_deref().is_some_and(|s| s.split_whitespace().any(|s| s != SCOPE)) {
        return Err(refuse("invalid_scope", "the one scope is mcp"));
    }
    let ours = resource(base);
    if req.resource.as_deref().is_some_and(|r| r.trim_end_matches('/') != ours) {
        return Err(refuse("invalid_target", "resource must be this server's MCP endpoint"));
    }
    Ok(Checked { client, redirect_uri, state: req.state.clone(), challenge, resource: ours })
}

/// The person's answer to a checked request: where their browser goes next — the
/// client's redirect URI with a one-use code (allowed) or `access_denied` (denied).
pub(crate) async fn consent(ctx: &Ctx, base: &str, user: &User, checked: Checked, allow: bool) -> Result<String> {
    let state = checked.state.as_deref().unwrap_or_default();
    if !allow {
        let pairs = [
            ("error", "access_denied"),
            ("error_description", "the person denied access"),
            ("state", state),
            ("iss", base),
        ];
        return Ok(with_query(&checked.redirect_uri, &pairs));
    }
    let code = secrets::random_base62(43);
    let now = ctx.clock.unix();
    sqlx::query(
        "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, resource, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(secrets::sha256_hex(&code))
    .bind(&checked.client.id)
    .bind(user.id)
    .bind(&checked.redirect_uri)
    .bind(&checked.challenge)
    .bind(&checked.resource)
    .bind(now)
    .bind(now + CODE_SECS)
    .execute(&ctx.db.pool)
    .await?;
    tracing::info!(user_id = user.id, client = %checked.client.id, "OAuth access allowed");
    Ok(with_query(&checked.redirect_uri, &[("code", &code), ("state", state), ("iss", base)]))
}

/// A token request's form fields (RFC 6749 §4.1.3, §6; PKCE; RFC 8707).
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct OAuthTokenRequest {
    /// `authorization_code` or `refresh_token`.
    pub grant_type: String,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub resource: Option<String>,
}

/// The token endpoint's answer (RFC 6749 §5.1).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Tokens {
    pub access_token: String,
    /// `Bearer`.
    pub token_type: &'static str,
    pub expires_in: i64,
    pub refresh_token: String,
    pub scope: &'static str,
}

impl From<Issued> for Tokens {
    fn from(issued: Issued) -> Tokens {
        Tokens {
            access_token: issued.access,
            token_type: "Bearer",
            expires_in: super::ACCESS_SECS,
            refresh_token: issued.refresh,
            scope: SCOPE,
        }
    }
}

/// The client a token request is from: `client_id` (form or Basic) and its secret, if
/// it has one.
pub(crate) struct Caller<'a> {
    pub id: Option<&'a str>,
    pub secret: Option<&'a str>,
}

/// Answers a token request made to the server at `base`.
pub(crate) async fn token(ctx: &Ctx, base: &str, req: OAuthTokenRequest, caller: Caller<'_>) -> Result<Tokens> {
    let id = caller.id.or(req.client_id.as_deref()).ok_or_else(|| Error::oauth_invalid_client("no client_id"))?;
    let client = clients::get(ctx, id).await?;
    client.authenticate(caller.secret.or(req.client_secret.as_deref()))?;
    if req.resource.as_deref().is_some_and(|r| r.trim_end_matches('/') != resource(base)) {
        return Err(Error::oauth_invalid_target());
    }
    match req.grant_type.as_str() {
        "authorization_code" => exchange(ctx, &client, &req).await,
        "refresh_token" => refresh(ctx, &client, req.refresh_token.as_deref().unwrap_or_default()).await,
        other => Err(Error::oauth_unsupported_grant_type(other)),
    }
}

/// A code for its tokens: once, by its client, with the redirect URI it was issued
/// for and the verifier of its challenge.
async fn exchange(ctx: &Ctx, client: &Client, req: &OAuthTokenRequest) -> Result<Tokens> {
    let code = req.code.as_deref().ok_or_else(|| Error::oauth_invalid_request("no code"))?;
    // Spent at once, whatever the checks below find: a code is tried once.
    let row: Option<(String, i64, String, String, String)> = sqlx::query_as(
        "DELETE FROM oauth_codes WHERE code_hash = $1 AND expires_at > $2 \
         RETURNING client_id, user_id, redirect_uri, code_challenge, resource",
    )
    .bind(secrets::sha256_hex(code))
    .bind(ctx.clock.unix())
    .fetch_optional(&ctx.db.pool)
    .await?;
    let invalid = || Error::oauth_invalid_grant("the code is unknown, used, expired or not this client's");
    let (client_id, user_id, redirect_uri, challenge, resource) = row.ok_or_else(invalid)?;
    if client_id != client.id {
        return Err(invalid());
    }
    if req.redirect_uri.as_deref().is_some_and(|uri| uri != redirect_uri) {
        return Err(Error::oauth_invalid_grant("redirect_uri differs from the authorization request's"));
    }
    let verifier = req.code_verifier.as_deref().ok_or_else(|| Error::oauth_invalid_request("no code_verifier"))?;
    let derived = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    if !secrets::constant_time_eq(&derived, &challenge) {
        return Err(Error::oauth_invalid_grant("the code_verifier does not match the code_challenge"));
    }
    let mut tx = ctx.db.write().await?;
    let now = ctx.clock.unix();
    // One grant per client and person: consenting again renews it.
    let grant: i64 = sqlx::query_scalar(
        "INSERT INTO oauth_grants (client_id, user_id, resource, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (client_id, user_id) DO UPDATE SET resource = excluded.resource RETURNING id",
    )
    .bind(&client.id)
    .bind(user_id)
    .bind(&resource)
    .bind(now)
    .fetch_one(&mut *tx)
    .await?;
    let issued = issue_in_tx(ctx, &mut tx, grant).await?;
    tx.commit().await?;
    Ok(issued.into())
}

/// A refresh token for a new pair. The old one is spent; spent again, it revokes the
/// grant (its tokens were copied: OAuth 2.1 §4.3.1).
async fn refresh(ctx: &Ctx, client: &Client, token: &str) -> Result<Tokens> {
    let hash = secrets::sha256_hex(token);
    let now = ctx.clock.unix();
    let mut tx = ctx.db.write().await?;
    let row: Option<(i64, String, i64)> = sqlx::query_as(
        "SELECT t.grant_id, g.client_id, t.expires_at FROM oauth_tokens t \
         JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = $1 AND t.kind = 'refresh'",
    )
    .bind(&hash)
    .fetch_optional(&mut *tx)
    .await?;
    let invalid = || Error::oauth_invalid_grant("the refresh token is unknown, expired, revoked or not this client's");
    let (grant, client_id, expires) = row.ok_or_else(invalid)?;
    if client_id != client.id || expires <= now {
        return Err(invalid());
    }
    // Spent here, once: of two uses at the same moment one finds it spent (the update
    // waits for the other's lock on PostgreSQL; SQLite writes one at a time).
    let spent = sqlx::query("UPDATE oauth_tokens SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL")
        .bind(now)
        .bind(&hash)
        .execute(&mut *tx)
        .await?;
    if spent.rows_affected() == 0 {
        // Its tokens go with it (`ON DELETE CASCADE`).
        sqlx::query("DELETE FROM oauth_grants WHERE id = $1").bind(grant).execute(&mut *tx).await?;
        tx.commit().await?;
        tracing::warn!(grant, client = %client.id, "a spent refresh token was used again: the grant is revoked");
        return Err(invalid());
    }
    let issued = issue_in_tx(ctx, &mut tx, grant).await?;
    tx.commit().await?;
    Ok(issued.into())
}
