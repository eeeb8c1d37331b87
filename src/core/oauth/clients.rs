//! OAuth clients: registered by themselves (RFC 7591 dynamic client registration), with
//! the redirect URIs they may be sent back to, checked exactly (RFC 8252 for native apps:
//! a loopback `http` URI matches on any port).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::auth::secrets;
use crate::core::Ctx;
use crate::core::accounts::limiter::{self, Guarded};
use crate::error::{Error, Result};

/// Redirect URIs one client may register.
const MAX_REDIRECT_URIS: usize = 10;
const MAX_URI_LEN: usize = 2000;
const MAX_NAME_LEN: usize = 100;
/// A client that never got a grant is forgotten after this long.
const UNUSED_CLIENT_SECS: i64 = 24 * 3600;

/// How a client proves itself at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AuthMethod {
    /// A public client (a native or browser app): PKCE alone.
    None,
    ClientSecretPost,
    ClientSecretBasic,
}

impl AuthMethod {
    fn as_str(self) -> &'static str {
        match self {
            AuthMethod::None => "none",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::ClientSecretBasic => "client_secret_basic",
        }
    }
}

/// A registration request (RFC 7591 §2), the fields Cairn reads.
#[derive(Debug, Deserialize, ToSchema)]
pub(crate) struct Registration {
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
    pub client_uri: Option<String>,
    /// `none` (a public client, the default), `client_secret_post` or `client_secret_basic`.
    pub token_endpoint_auth_method: Option<String>,
    /// Of `authorization_code` and `refresh_token`.
    pub grant_types: Option<Vec<String>>,
    /// `code` only.
    pub response_types: Option<Vec<String>>,
}

/// A registered client, as the registration answers it (RFC 7591 §3.2.1).
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Registered {
    pub client_id: String,
    /// Shown this once; only its SHA-256 is kept. Absent for a public client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub client_id_issued_at: i64,
    /// 0: the secret does not expire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<i64>,
    pub client_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: AuthMethod,
    pub grant_types: Vec<&'static str>,
    pub response_types: Vec<&'static str>,
    pub scope: &'static str,
}

/// A client as the authorization and token endpoints know it.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    pub id: String,
    pub name: String,
    pub uri: Option<String>,
    pub redirect_uris: Vec<String>,
    secret_hash: Option<String>,
}

impl Client {
    /// Whether `uri` is one of the client's redirect URIs: exactly, or — for a loopback
    /// `http` URI — exactly but for the port (RFC 8252 §7.3: a native app listens on
    /// whatever port it could get).
    pub(crate) fn redirects_to(&self, uri: &str) -> bool {
        self.redirect_uris.iter().any(|registered| registered == uri || same_but_port(registered, uri))
    }

    /// Checks the client's secret when it has one (in constant time); a public client
    /// has none to check.
    pub(crate) fn authenticate(&self, secret: Option<&str>) -> Result<()> {
        match (&self.secret_hash, secret) {
            (None, _) => Ok(()),
            (Some(hash), Some(secret)) if secrets::constant_time_eq(hash, &secrets::sha256_hex(secret)) => Ok(()),
            _ => Err(Error::oauth_invalid_client("the client's secret is missing or wrong")),
        }
    }
}

fn loopback(url: &url::Url) -> bool {
    url.scheme() == "http" && matches!(url.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"))
}

fn same_but_port(registered: &str, asked: &str) -> bool {
    let (Ok(mut a), Ok(mut b)) = (url::Url::parse(registered), url::Url::parse(asked)) else { return false };
    if !loopback(&a) || !loopback(&b) {
        return false;
    }
    let _ = a.set_port(None);
    let _ = b.set_port(None);
    a == b
}

/// A redirect URI a client may register: `https`, `http` on loopback (a native app's
/// local listener), or a private-use scheme with a dot (`com.example.app:/callback`, RFC
/// 8252 §7.1); never with a fragment.
fn check_redirect_uri(uri: &str) -> Result<()> {
    let refuse = |why: &str| Err(Error::oauth_invalid_redirect_uri(&format!("{uri}: {why}")));
    if uri.len() > MAX_URI_LEN {
        return refuse("too long");
    }
    let Ok(url) = url::Url::parse(uri) else { return refuse("not an absolute URI") };
    if url.fragment().is_some() {
        return refuse("a redirect URI has no fragment");
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" if loopback(&url) => Ok(()),
        "http" => refuse("http is for loopback addresses only; use https"),
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" => refuse("not a redirect scheme"),
        scheme if scheme.contains('.') => Ok(()),
        _ => refuse("use https, a loopback http address, or a private-use scheme such as com.example.app"),
    }
}

/// Registers a client (RFC 7591). Open to anyone, as the MCP authorization specification
/// expects; registrations are counted per client address (the failed-login ceiling per
/// address, inside its window), and a client that gets no grant within a day is
/// forgotten.
pub(crate) async fn register(ctx: &Ctx, req: Registration, address: &str) -> Result<Registered> {
    // Counted and never taken back: the count is of registrations, not of failures.
    limiter::attempt_at(ctx, Guarded::ClientRegistration, address).await?;
    if req.redirect_uris.is_empty() || req.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(Error::oauth_invalid_redirect_uri(&format!("give 1 to {MAX_REDIRECT_URIS} redirect URIs")));
    }
    for uri in &req.redirect_uris {
        check_redirect_uri(uri)?;
    }
    let grants = req.grant_types.unwrap_or_else(|| vec!["authorization_code".into()]);
    if grants.iter().any(|g| g != "authorization_code" && g != "refresh_token") {
        return Err(Error::oauth_invalid_client_metadata("grant_types: authorization_code and refresh_token only"));
    }
    if req.response_types.as_ref().is_some_and(|r| r.iter().any(|t| t != "code")) {
        return Err(Error::oauth_invalid_client_metadata("response_types: code only"));
    }
    let name = match req.client_name.as_deref() {
        Some(n) => crate::ids::display_name(n, MAX_NAME_LEN).ok_or_else(|| {
            Error::oauth_invalid_client_metadata(&format!("client_name has 1-{MAX_NAME_LEN} printable characters"))
        })?,
        None => "Unnamed client".to_owned(),
    };
    let client_uri = req.client_uri.filter(|u| url::Url::parse(u).is_ok_and(|u| u.scheme() == "https"));
    let method = match req.token_endpoint_auth_method.as_deref() {
        None | Some("none") => AuthMethod::None,
        Some("client_secret_post") => AuthMethod::ClientSecretPost,
        Some("client_secret_basic") => AuthMethod::ClientSecretBasic,
        Some(other) => {
            return Err(Error::oauth_invalid_client_metadata(&format!(
                "token_endpoint_auth_method '{other}' is not supported; use none, client_secret_post or client_secret_basic"
            )));
        }
    };
    let secret = (method != AuthMethod::None).then(|| secrets::random_base62(43));
    let id = format!("cl_{}", secrets::random_base62(24));
    let now = ctx.clock.unix();
    sqlx::query(
        "INSERT INTO oauth_clients (id, name, uri, redirect_uris, auth_method, secret_hash, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&id)
    .bind(&name)
    .bind(&client_uri)
    .bind(serde_json::to_string(&req.redirect_uris).map_err(Error::internal)?)
    .bind(method.as_str())
    .bind(secret.as_deref().map(secrets::sha256_hex))
    .bind(now)
    .execute(&ctx.db.pool)
    .await?;
    tracing::info!(client = %id, "OAuth client registered");
    Ok(Registered {
        client_id: id,
        client_secret_expires_at: secret.as_ref().map(|_| 0),
        client_secret: secret,
        client_id_issued_at: now,
        client_name: name,
        client_uri,
        redirect_uris: req.redirect_uris,
        token_endpoint_auth_method: method,
        grant_types: vec!["authorization_code", "refresh_token"],
        response_types: vec!["code"],
        scope: super::SCOPE,
    })
}

/// The client `id`; `invalid_client` when there is none.
pub(crate) async fn get(ctx: &Ctx, id: &str) -> Result<Client> {
    let row: Option<ClientRow> =
        sqlx::query_as("SELECT id, name, uri, redirect_uris, secret_hash FROM oauth_clients WHERE id = $1")
            .bind(id)
            .fetch_optional(&ctx.db.pool)
            .await?;
    let row = row.ok_or_else(|| Error::oauth_invalid_client("no such client; register it first"))?;
    Ok(Client {
        id: row.id,
        name: row.name,
        uri: row.uri,
        redirect_uris: serde_json::from_str(&row.redirect_uris).unwrap_or_default(),
        secret_hash: row.secret_hash,
    })
}

#[derive(sqlx::FromRow)]
struct ClientRow {
    id: String,
    name: String,
    uri: Option<String>,
    /// A JSON array.
    redirect_uris: String,
    secret_hash: Option<String>,
}

/// Forgets clients registered over a day ago that never got a grant; answers how many.
pub(crate) async fn prune(ctx: &Ctx) -> Result<u64> {
    let done = sqlx::query(
        "DELETE FROM oauth_clients WHERE created_at <= $1 \
         AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.id)",
    )
    .bind(ctx.clock.unix() - UNUSED_CLIENT_SECS)
    .execute(&ctx.db.pool)
    .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_https_loopback_or_private_use() {
        for ok in [
            "https://app.example.com/cb",
            "http://127.0.0.1:33418/callback",
            "http://localhost/cb",
            "http://[::1]:9/cb",
            "com.example.app:/oauth",
        ] {
            assert!(check_redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://app.example.com/cb",
            "https://app.example.com/cb#x",
            "javascript:alert(1)",
            "myapp:/cb",
            "/relative",
            "data:text/html,x",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_loopback_redirect_matches_on_any_port_and_nothing_else_does() {
        let client = Client {
            id: "c".into(),
            name: "c".into(),
            uri: None,
            redirect_uris: vec!["http://127.0.0.1/callback".into(), "https://app.example.com/cb".into()],
            secret_hash: None,
        };
        assert!(client.redirects_to("http://127.0.0.1:5173/callback"));
        assert!(client.redirects_to("https://app.example.com/cb"));
        assert!(!client.redirects_to("http://127.0.0.1:5173/other"));
        assert!(!client.redirects_to("https://app.example.com:8443/cb"));
        assert!(!client.redirects_to("https://app.example.com/cb?x=1"));
        assert!(!client.redirects_to("http://localhost:5173/callback"));
    }
}
