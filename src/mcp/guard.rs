//! What `/api/mcp` checks before the MCP handler sees a request: the method (POST
//! only), the `Host` and `Origin` headers (the transport's defence against DNS
//! rebinding and foreign web pages), the body size, and the credential.
//!
//! `initialize` and `server/discover` (and the `notifications/initialized` that follows
//! a handshake) are answered without a credential, so a client can learn what the
//! server is before it has a token; they ignore one if sent. Every other message —
//! batches and unreadable bodies included — needs a Bearer token (a PAT or a JWT): a
//! session cookie alone is not enough, MCP is for programs. The caller is put into the
//! request for the handler to read.

use std::borrow::Cow;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{ALLOW, AUTHORIZATION, HOST, ORIGIN};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::config::Config;
use crate::core::Ctx;
use crate::core::credentials::{self, Authenticated, Credential, Presented};
use crate::core::oauth;
use crate::error::Error;

/// Methods answered without a credential.
const OPEN_METHODS: &[&str] = &["initialize", "server/discover", "notifications/initialized"];

pub(super) async fn guard(State(ctx): State<Ctx>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        let mut res = Error::method_not_allowed(req.method().as_str()).into_response();
        res.headers_mut().insert(ALLOW, HeaderValue::from_static("POST"));
        return res;
    }
    let base = crate::http::extract::public_base(&ctx, req.headers()).ok();
    let (parts, bytes, method) = match check(&ctx, req, base.as_deref()).await {
        Ok(checked) => checked,
        Err(e) => return challenge(e, base.as_deref()),
    };
    if method.as_deref() == Some("tools/call")
        && super::direct::eligible(&parts.headers)
        && let Some(auth) = parts.extensions.get::<Authenticated>()
        && let Some(res) = super::direct::answer(&ctx, &auth.user, &bytes).await
    {
        return res;
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// An error's answer; a 401 names where to get a token (RFC 9728 §5.1), so an OAuth
/// client can find the authorization server from the MCP endpoint alone.
fn challenge(e: Error, base: Option<&str>) -> Response {
    let unauthorized = e.status == axum::http::StatusCode::UNAUTHORIZED;
    let mut res = e.into_response();
    if unauthorized && let Some(base) = base {
        let value = format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/api/mcp\"");
        if let Ok(value) = HeaderValue::from_str(&value) {
            res.headers_mut().insert(axum::http::header::WWW_AUTHENTICATE, value);
        }
    }
    res
}

/// The request's parts (with the caller, when a credential was needed), its body, and
/// the method of its message. An OAuth access token is checked here, bound to this
/// endpoint at `base` (the rest of `/api/…` refuses it: core/credentials).
async fn check(ctx: &Ctx, req: Request, base: Option<&str>) -> Result<(Parts, Bytes, Option<String>), Error> {
    let host =
        req.headers().get(HOST).and_then(|h| h.to_str().ok()).or_else(|| req.uri().authority().map(|a| a.as_str()));
    let host = host.unwrap_or_default().to_owned();
    if !host_allowed(&ctx.config, &host) {
        return Err(Error::host_not_allowed(&host));
    }
    if let Some(origin) = req.headers().get(ORIGIN) {
        let origin = origin.to_str().unwrap_or("invalid");
        if !origin_allowed(&ctx.config, origin, &host) {
            return Err(Error::origin_not_allowed(origin));
        }
    }
    let (mut parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, super::BODY_LIMIT).await.map_err(|_| Error::body_too_large())?;
    // What is no JSON at all (nested past serde's depth limit, say) is said so here: the
    // transport would answer it with a 415 that blames the Content-Type. (Read as a
    // value: skipping it, serde_json checks no depth.)
    let json = parts.headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    if json.is_some_and(|c| c.starts_with("application/json"))
        && let Err(e) = serde_json::from_slice::<serde_json::Value>(&bytes)
    {
        return Err(Error::unprocessable(format!("the body is not JSON: {e}")));
    }
    // One cheap peek at the method; only an `initialize` is parsed whole.
    let method = method_of(&bytes);
    let bytes = if method.as_deref() == Some("initialize") { complete_initialize(bytes) } else { bytes };
    if !method.as_deref().is_some_and(|m| OPEN_METHODS.contains(&m)) {
        let bearer = match parts.headers.get(AUTHORIZATION) {
            Some(value) => Some(crate::http::auth::bearer_of(value)?),
            None => None,
        };
        let auth = match bearer {
            Some(token) if token.starts_with(oauth::ACCESS_PREFIX) => {
                let resource = oauth::resource(base.ok_or_else(Error::invalid_bearer)?);
                let (user, grant) = oauth::verify(ctx, token, &resource).await?;
                Some(Authenticated { user, credential: Credential::OAuth { grant } })
            }
            _ => credentials::authenticate(ctx, Presented { bearer, session: None }).await?,
        };
        parts.extensions.insert(auth.ok_or_else(Error::no_credential)?);
    }
    Ok((parts, bytes, method))
}

/// The smallest `initialize` a client may send carries only `protocolVersion`; the protocol also
/// wants `capabilities` and `clientInfo`. Missing ones are filled in (no capabilities, an
/// unnamed client) so that such a request is answered rather than refused.
fn complete_initialize(bytes: Bytes) -> Bytes {
    let Ok(serde_json::Value::Object(mut msg)) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return bytes;
    };
    let Some(params) = msg.get_mut("params").and_then(|p| p.as_object_mut()) else { return bytes };
    if params.contains_key("capabilities") && params.contains_key("clientInfo") {
        return bytes;
    }
    params.entry("capabilities").or_insert_with(|| serde_json::json!({}));
    params.entry("clientInfo").or_insert_with(|| serde_json::json!({"name": "unknown", "version": "0"}));
    serde_json::to_vec(&msg).map(Into::into).unwrap_or(bytes)
}

/// The method of a single JSON-RPC message (None for a batch or an unreadable body).
fn method_of(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(borrow)]
        method: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<Peek>(body).ok()?.method.map(Cow::into_owned)
}

/// A single JSON-RPC message whose method needs no credential.
#[cfg(test)]
fn is_open(body: &[u8]) -> bool {
    method_of(body).is_some_and(|m| OPEN_METHODS.contains(&m.as_str()))
}

/// `host` (a `Host` header: name or address, maybe a port) against `MCP_ALLOWED_HOSTS`:
/// an entry without a port allows every port; `*` allows every host.
fn host_allowed(config: &Config, host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    let (name, port) = split_port(&host);
    // A Host is a name or an address and perhaps a port of digits: `localhost:1@evil`
    // (user info) or any other character is no host at all.
    let name_ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "-._:".contains(c));
    if !name_ok || port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    config.mcp_allowed_hosts().iter().any(|entry| {
        let entry = entry.to_ascii_lowercase();
        match split_port(&entry) {
            ("*", _) => true,
            (e, None) => e == name,
            (_, Some(_)) => normalize(&entry) == normalize(&host),
        }
    })
}

/// `(name, port)` of `host[:port]`, IPv6 literals with or without brackets.
fn split_port(host: &str) -> (&str, Option<&str>) {
    if let Some(rest) = host.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((name, tail)) => (name, tail.strip_prefix(':')),
            None => (rest, None),
        };
    }
    match host.rsplit_once(':') {
        // More than one colon and no brackets: a bare IPv6 address.
        Some((name, _)) if name.contains(':') => (host, None),
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    }
}

fn normalize(host: &str) -> String {
    match split_port(host) {
        (name, Some(port)) => format!("{name}:{port}"),
        (name, None) => name.to_owned(),
    }
}

/// A browser's `Origin`: allowed when it is this server itself (its authority is the
/// `Host` the request was sent to) or listed in `MCP_ALLOWED_ORIGINS`.
fn origin_allowed(config: &Config, origin: &str, host: &str) -> bool {
    let origin = origin.trim_end_matches('/').to_ascii_lowercase();
    let same = origin.split_once("://").is_some_and(|(_, authority)| authority == host.to_ascii_lowercase());
    same || config.mcp_allowed_origins.iter().any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(&origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(hosts: &str, origins: &str) -> Config {
        let mut args = vec!["cairn".to_owned()];
        if !hosts.is_empty() {
            args.push(format!("--mcp-allowed-hosts={hosts}"));
        }
        if !origins.is_empty() {
            args.push(format!("--mcp-allowed-origins={origins}"));
        }
        crate::config::Cli::read(args).unwrap().config
    }

    #[test]
    fn hosts() {
        let c = config("", "");
        for ok in ["localhost", "localhost:8080", "127.0.0.1:3000", "[::1]:8080", "LOCALHOST"] {
            assert!(host_allowed(&c, ok), "{ok}");
        }
        let tricks = ["localhost:18400@evil", "localhost@evil", "localhost:80x", "localhost:", "local host"];
        for bad in ["evil.example", "evil.example:8080", "localhost.evil.example", ""].into_iter().chain(tricks) {
            assert!(!host_allowed(&c, bad), "{bad}");
        }
        let c = config("wiki.example.com,10.0.0.5:8080", "");
        assert!(host_allowed(&c, "wiki.example.com") && host_allowed(&c, "wiki.example.com:443"));
        assert!(host_allowed(&c, "10.0.0.5:8080") && !host_allowed(&c, "10.0.0.5:9090"));
        assert!(!host_allowed(&c, "localhost"), "a configured list replaces the default");
        assert!(host_allowed(&config("*", ""), "anything:1"));
        assert!(!host_allowed(&config("*", ""), "anything:1@evil"), "not a host, whatever the list");
    }

    #[test]
    fn origins() {
        let c = config("", "https://agent.example");
        assert!(origin_allowed(&c, "http://localhost:8080", "localhost:8080"));
        assert!(!origin_allowed(&c, "http://evil.example", "localhost:8080"));
        assert!(!origin_allowed(&c, "null", "localhost:8080"));
        assert!(origin_allowed(&c, "https://agent.example/", "localhost:8080"));
    }

    #[test]
    fn a_bare_initialize_is_completed() {
        let bare = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
        let done: serde_json::Value = serde_json::from_slice(&complete_initialize(bare.as_slice().into())).unwrap();
        assert_eq!(done["params"]["capabilities"], serde_json::json!({}));
        assert_eq!(done["params"]["clientInfo"]["name"], "unknown");
        assert_eq!(done["params"]["protocolVersion"], "2025-06-18");
        let full = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"x","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}"#;
        assert_eq!(complete_initialize(full.as_slice().into()).as_ref(), full.as_slice(), "left as sent");
    }

    #[test]
    fn open_methods() {
        assert!(is_open(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#));
        assert!(is_open(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#));
        assert!(!is_open(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#));
        assert!(!is_open(br#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#));
        assert!(!is_open(b"not json"));
    }
}
