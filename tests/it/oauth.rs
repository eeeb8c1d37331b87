//! OAuth 2.1 for the MCP endpoint over real HTTP, as a client would go through it:
//! discovery from a 401, registration, the authorization request, the person's consent
//! (the request the consent screen posts), the code exchanged with PKCE, MCP calls with
//! the person's rights, refresh with rotation and reuse detection, revocation. The
//! official SDKs go through the same in `mcp_interop`.

use crate::common::*;
use crate::mcp::Mcp;
use base64::Engine;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const REDIRECT: &str = "http://127.0.0.1/callback";
const VERIFIER: &str = "a-verifier-of-at-least-forty-three-characters-0123456789";

fn challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

fn query_of(url: &str) -> std::collections::HashMap<String, String> {
    reqwest::Url::parse(url).unwrap().query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

async fn register(srv: &Server, body: Value) -> (StatusCode, Value) {
    srv.anon().post("/api/oauth/register", body).await
}

async fn form(srv: &Server, fields: &[(&str, &str)]) -> (StatusCode, Value) {
    let res = reqwest::Client::new()
        .post(format!("{}/api/oauth/token", srv.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(fields).unwrap())
        .send()
        .await
        .unwrap();
    let status = res.status();
    assert_eq!(res.headers().get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
    (status, res.json().await.unwrap())
}

/// The authorization request's query for `client` (PKCE S256, this server's resource).
fn authorization(srv: &Server, client: &str) -> Vec<(&'static str, String)> {
    vec![
        ("response_type", "code".into()),
        ("client_id", client.into()),
        ("redirect_uri", "http://127.0.0.1:49152/callback".into()),
        ("state", "st-1".into()),
        ("code_challenge", challenge(VERIFIER)),
        ("code_challenge_method", "S256".into()),
        ("resource", format!("{}/api/mcp", srv.url)),
        ("scope", "mcp".into()),
    ]
}

/// The person (signed in with `person`) answers the consent screen: the code, or the
/// redirect when denied.
async fn consent(person: &Api, request: &[(&str, String)], allow: bool) -> String {
    let mut body: serde_json::Map<String, Value> = request.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    body.insert("allow".into(), json!(allow));
    let (status, onward) = person.post("/api/oauth/consent", Value::Object(body)).await;
    assert_eq!(status, StatusCode::OK, "{onward}");
    onward["redirect"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_agent_connects_by_oauth_and_acts_with_its_persons_rights() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let person = srv.user("ada@example.com").await;
    let ws = person.get("/api/me").await.1["default_workspace"].as_str().unwrap().to_owned();

    // Discovery: the MCP endpoint's 401 names its metadata, which names the server.
    let anon = Mcp::new(&srv, None);
    let r = anon.raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let challenge_header = r.headers.get("www-authenticate").unwrap().to_str().unwrap().to_owned();
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/api/mcp", srv.url);
    assert_eq!(challenge_header, format!("Bearer resource_metadata=\"{metadata_url}\""));
    let (_, prm) = srv.anon().get("/.well-known/oauth-protected-resource/api/mcp").await;
    assert_eq!(prm["resource"], format!("{}/api/mcp", srv.url));
    assert_eq!(prm["authorization_servers"], json!([srv.url]));
    let (_, asm) = srv.anon().get("/.well-known/oauth-authorization-server").await;
    assert_eq!(asm["issuer"], srv.url.as_str());
    assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(asm["registration_endpoint"], format!("{}/api/oauth/register", srv.url));

    // Registration (RFC 7591): a public native client with a loopback redirect.
    let (status, client) =
        register(&srv, json!({"client_name": "Claude-like Agent", "redirect_uris": [REDIRECT], "grant_types": ["authorization_code", "refresh_token"]}))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{client}");
    assert!(client.get("client_secret").is_none(), "a public client gets no secret");
    let client_id = client["client_id"].as_str().unwrap().to_owned();

    // The authorization endpoint sends the person's browser to the consent screen.
    let request = authorization(&srv, &client_id);
    let query = serde_urlencoded::to_string(&request).unwrap();
    let res = no_redirects().get(format!("{}/api/oauth/authorize?{query}", srv.url)).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let to = res.headers()["location"].to_str().unwrap().to_owned();
    assert!(to.starts_with("/app/-/authorize?") && to.contains(&client_id), "{to}");
    // The screen shows the client as it named itself.
    let (status, asked) = person.get(&format!("/api/oauth/consent?{query}")).await;
    assert_eq!(status, StatusCode::OK, "{asked}");
    assert_eq!(asked["client_name"], "Claude-like Agent");

    // Allowed: back to the client with a code, its state and this issuer (RFC 9207).
    let back = query_of(&consent(&person, &request, true).await);
    assert_eq!((back["state"].as_str(), back["iss"].as_str()), ("st-1", srv.url.as_str()));
    let code = back["code"].clone();

    // The code: not with a wrong verifier, once with the right one.
    let exchange = |verifier: &'static str| {
        let code = code.clone();
        let client_id = client_id.clone();
        let srv = &srv;
        async move {
            form(
                srv,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", "http://127.0.0.1:49152/callback"),
                    ("client_id", &client_id),
                    ("code_verifier", verifier),
                    ("resource", &format!("{}/api/mcp", srv.url)),
                ],
            )
            .await
        }
    };
    let (status, wrong) = exchange("another-verifier-of-at-least-forty-three-chars-000000").await;
    assert_eq!((status, wrong["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    // A wrong verifier spent the code too (it is used once, whatever happens).
    let (status, _) = exchange(VERIFIER).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let back = query_of(&consent(&person, &request, true).await);
    let code = back["code"].clone();
    let fields = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", "http://127.0.0.1:49152/callback"),
        ("client_id", client_id.as_str()),
        ("code_verifier", VERIFIER),
    ];
    let (status, tokens) = form(&srv, &fields).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!((tokens["token_type"].as_str(), tokens["expires_in"].as_i64()), (Some("Bearer"), Some(3600)));
    let (status, again) = form(&srv, &fields).await;
    assert_eq!((status, again["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")), "replayed code");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let refresh = tokens["refresh_token"].as_str().unwrap().to_owned();

    // The agent: MCP with the person's rights; saves are the person's.
    let agent = Mcp::new(&srv, Some(&access));
    let tools = agent.rpc("tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 27);
    agent.ok("create_page", json!({"title": "From the agent", "content": "hello"})).await;
    let (_, history) = person.get("/api/pages/from-the-agent/history").await;
    assert_eq!(history["items"][0]["author"]["name"], "ada@example.com", "{history}");
    let stranger = srv.user("eve@example.com").await;
    let theirs = stranger.get("/api/me").await.1["default_workspace"].as_str().unwrap().to_owned();
    let hidden = agent.fails("list_pages", json!({"workspace": theirs})).await;
    assert_eq!(hidden["status"], 404, "{hidden}");
    assert_eq!(agent.ok("list_pages", json!({"workspace": ws})).await["items"].as_array().unwrap().len(), 1);
    // Bound to the MCP endpoint: the rest of the API refuses the token.
    let rest = srv.anon().with_bearer(&access).send(Method::GET, "/api/me", None).await;
    assert_problem(&rest, 401, "unauthorized");

    // Connected apps: listed with its last use.
    let (_, grants) = person.get("/api/oauth/grants").await;
    assert_eq!(grants["total"], 1);
    assert_eq!(grants["items"][0]["client_name"], "Claude-like Agent");
    assert!(grants["items"][0]["last_used_at"].is_string(), "{grants}");

    // Refresh: a new pair; the old refresh token used again revokes the grant.
    let refreshing = |token: String| {
        let client_id = client_id.clone();
        let srv = &srv;
        async move {
            form(srv, &[("grant_type", "refresh_token"), ("refresh_token", &token), ("client_id", &client_id)]).await
        }
    };
    let (status, renewed) = refreshing(refresh.clone()).await;
    assert_eq!(status, StatusCode::OK, "{renewed}");
    assert_ne!(renewed["refresh_token"], tokens["refresh_token"]);
    let agent = Mcp::new(&srv, Some(renewed["access_token"].as_str().unwrap()));
    agent.rpc("tools/list", json!({})).await;
    let (status, reused) = refreshing(refresh).await;
    assert_eq!((status, reused["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    let r = agent.raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "reuse revoked the grant and its tokens");
    assert_eq!(person.get("/api/oauth/grants").await.1["total"], 0);
    srv.stop().await;
}

#[tokio::test]
async fn revoking_a_connected_app_ends_its_tokens_at_once_and_they_expire() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let person = srv.user("lin@example.com").await;
    let (_, client) = register(&srv, json!({"client_name": "Agent", "redirect_uris": [REDIRECT]})).await;
    let client_id = client["client_id"].as_str().unwrap().to_owned();
    let request = authorization(&srv, &client_id);
    let mint = || async {
        let code = query_of(&consent(&person, &request, true).await)["code"].clone();
        let fields = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("client_id", client_id.as_str()),
            ("code_verifier", VERIFIER),
        ];
        form(&srv, &fields).await.1["access_token"].as_str().unwrap().to_owned()
    };
    // Expiry: an hour.
    let agent = Mcp::new(&srv, Some(&mint().await));
    agent.rpc("tools/list", json!({})).await;
    srv.ctx.clock.advance(std::time::Duration::from_secs(3601));
    let r = agent.raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    // Revoked from "Connected apps": the next call is 401.
    let agent = Mcp::new(&srv, Some(&mint().await));
    agent.rpc("tools/list", json!({})).await;
    let (_, grants) = person.get("/api/oauth/grants").await;
    let id = grants["items"][0]["id"].as_i64().unwrap();
    let other = srv.user("mo@example.com").await;
    assert_problem(&other.send(Method::DELETE, &format!("/api/oauth/grants/{id}"), None).await, 404, "grant_not_found");
    assert_eq!(person.delete(&format!("/api/oauth/grants/{id}")).await.0, StatusCode::NO_CONTENT);
    let r = agent.raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    srv.stop().await;
}

#[tokio::test]
async fn bad_requests_are_refused_where_the_rules_say() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let person = srv.user("kit@example.com").await;

    // Registration: redirect URIs checked.
    for bad in ["http://app.example.com/cb", "https://app.example.com/cb#frag", "javascript:alert(1)"] {
        let (status, body) = register(&srv, json!({"redirect_uris": [bad]})).await;
        assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_redirect_uri")), "{bad}");
    }
    let (status, body) =
        register(&srv, json!({"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]})).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_client_metadata")));
    // A confidential client gets a secret, and must show it.
    let (_, confidential) = register(
        &srv,
        json!({"redirect_uris": ["https://app.example.com/cb"], "token_endpoint_auth_method": "client_secret_post"}),
    )
    .await;
    assert!(confidential["client_secret"].is_string());
    let id = confidential["client_id"].as_str().unwrap();
    let (status, body) = form(&srv, &[("grant_type", "authorization_code"), ("code", "x"), ("client_id", id)]).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::UNAUTHORIZED, Some("invalid_client")));

    let (_, client) = register(&srv, json!({"redirect_uris": [REDIRECT]})).await;
    let client_id = client["client_id"].as_str().unwrap().to_owned();
    let authorize = |pairs: Vec<(&'static str, String)>| {
        let url = format!("{}/api/oauth/authorize", srv.url);
        async move {
            let query = serde_urlencoded::to_string(&pairs).unwrap();
            let res = no_redirects().get(format!("{url}?{query}")).send().await.unwrap();
            assert_eq!(res.status(), StatusCode::SEE_OTHER);
            res.headers()["location"].to_str().unwrap().to_owned()
        }
    };
    // `plain` PKCE, or none: back to the client with an error.
    let mut plain = authorization(&srv, &client_id);
    plain.retain(|(k, _)| *k != "code_challenge_method");
    plain.push(("code_challenge_method", "plain".into()));
    let back = query_of(&authorize(plain).await);
    assert_eq!((back["error"].as_str(), back["state"].as_str()), ("invalid_request", "st-1"));
    let mut none = authorization(&srv, &client_id);
    none.retain(|(k, _)| !k.starts_with("code_challenge"));
    assert_eq!(query_of(&authorize(none).await)["error"], "invalid_request");
    // Another resource: invalid_target.
    let mut elsewhere = authorization(&srv, &client_id);
    elsewhere.retain(|(k, _)| *k != "resource");
    elsewhere.push(("resource", "https://other.example/api/mcp".into()));
    assert_eq!(query_of(&authorize(elsewhere).await)["error"], "invalid_target");
    // A redirect URI the client did not register is never redirected to.
    let mut stray = authorization(&srv, &client_id);
    stray.retain(|(k, _)| *k != "redirect_uri");
    stray.push(("redirect_uri", "http://127.0.0.1:49152/elsewhere".into()));
    assert_eq!(authorize(stray).await, "/app/-/authorize?problem=invalid_redirect_uri");
    let mut unknown = authorization(&srv, "cl_nobody");
    unknown.truncate(3);
    assert_eq!(authorize(unknown).await, "/app/-/authorize?problem=invalid_client");

    // Denied: access_denied, and no code.
    let back = query_of(&consent(&person, &authorization(&srv, &client_id), false).await);
    assert_eq!(back["error"], "access_denied");
    assert!(!back.contains_key("code"));
    // Consent needs the person signed in.
    let anon =
        srv.anon().send(Method::POST, "/api/oauth/consent", Some(json!({"client_id": client_id, "allow": true}))).await;
    assert_eq!(anon.status, StatusCode::UNAUTHORIZED);
    let (status, body) = form(&srv, &[("grant_type", "password"), ("client_id", &client_id)]).await;
    assert_eq!((status, body["error"].as_str()), (StatusCode::BAD_REQUEST, Some("unsupported_grant_type")));
    srv.stop().await;
}
