//! Accounts and credentials over real HTTP (docs/api.md, "Accounts").

use crate::common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn register_answers_the_user_sets_the_cookie_and_makes_a_personal_workspace() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.anon();
    let r = api
        .send(Method::POST, "/api/auth/register", Some(json!({"email": "  Alice@Example.COM ", "password": PASSWORD})))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let cookie = r.headers.get("set-cookie").unwrap().to_str().unwrap().to_owned();
    assert!(cookie.starts_with("cairn_session="), "{cookie}");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=604800"] {
        assert!(cookie.contains(attr), "{attr} missing in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "{cookie}");
    let user = r.json();
    assert_eq!(user["email"], "alice@example.com");
    assert_eq!(user["name"], "alice");
    assert_eq!(user["language"], "en");
    assert_eq!(user["default_workspace"], "alice");
    assert!(user["id"].is_i64() && user["created_at"].is_string());
    assert!(user.get("password_hash").is_none() && user.get("credentials_since").is_none());

    let (s, me) = api.get("/api/me").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(me, user);
    let (_, ws) = api.get("/api/workspaces").await;
    assert_eq!(ws["total"], 1);
    assert_eq!(ws["items"][0]["slug"], "alice");
    assert_eq!(ws["items"][0]["role"], "owner");

    // A second alice gets a free personal slug.
    let other = srv.anon();
    let (s, u2) = other.post("/api/auth/register", json!({"email": "alice@other.org", "password": PASSWORD})).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(u2["default_workspace"], "alice-2");
    srv.stop().await;
}

#[tokio::test]
async fn secure_cookie_when_configured() {
    let env = Env::new().await;
    let srv = env.start(&["--cookie-secure"]).await;
    let r = srv
        .anon()
        .send(Method::POST, "/api/auth/register", Some(json!({"email": "s@x.io", "password": PASSWORD})))
        .await;
    assert!(r.headers.get("set-cookie").unwrap().to_str().unwrap().contains("; Secure"));
    srv.stop().await;
}

#[tokio::test]
async fn register_refuses_bad_input_with_the_right_status() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.anon();
    let cases = [
        (json!({"email": "not-an-email", "password": PASSWORD}), 400, "invalid_email"),
        (json!({"email": "a@b", "password": PASSWORD}), 400, "invalid_email"),
        (json!({"email": "short@x.io", "password": "1234567"}), 400, "password_too_short"),
        (json!({"email": "n@x.io", "password": PASSWORD, "name": ""}), 400, "invalid_name"),
        (json!({"email": "n@x.io"}), 422, "invalid_body"),
        (json!({"email": 5, "password": PASSWORD}), 422, "invalid_body"),
        (json!(["not", "an", "object"]), 422, "invalid_body"),
    ];
    for (body, status, code) in cases {
        let r = api.send(Method::POST, "/api/auth/register", Some(body.clone())).await;
        assert_problem(&r, status, code);
    }
    // Malformed JSON.
    let r = api.client.post(format!("{}/api/auth/register", srv.url)).body("{\"email\":").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    // Exactly 8 characters is enough.
    let (s, _) = api.post("/api/auth/register", json!({"email": "eight@x.io", "password": "12345678"})).await;
    assert_eq!(s, StatusCode::CREATED);
    // Taken, whatever the case.
    let r = srv
        .anon()
        .send(Method::POST, "/api/auth/register", Some(json!({"email": "EIGHT@x.io", "password": PASSWORD})))
        .await;
    assert_problem(&r, 409, "email_taken");
    // Nothing half-written: the refused registrations left no users behind.
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&srv.ctx.db.pool).await.unwrap();
    assert_eq!(n, 1);
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM workspaces").fetch_one(&srv.ctx.db.pool).await.unwrap();
    assert_eq!(n, 1);
    srv.stop().await;
}

#[tokio::test]
async fn registration_can_be_closed() {
    let env = Env::new().await;
    let srv = env.start(&["--disable-registration"]).await;
    let r = srv
        .anon()
        .send(Method::POST, "/api/auth/register", Some(json!({"email": "a@x.io", "password": PASSWORD})))
        .await;
    assert_problem(&r, 403, "registration_closed");
    srv.stop().await;
}

#[tokio::test]
async fn login_logout_and_wrong_credentials() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    srv.user("bob@x.io").await;

    let api = srv.anon();
    let r = api.send(Method::POST, "/api/auth/login", Some(json!({"email": "BOB@x.io", "password": PASSWORD}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["email"], "bob@x.io");
    let cookie = r.headers.get("set-cookie").unwrap().to_str().unwrap();
    assert!(cookie.contains("HttpOnly") && cookie.contains("Max-Age=604800"));
    assert_eq!(api.get("/api/me").await.0, StatusCode::OK);

    // Wrong password and unknown email: same status, same body.
    let wrong = srv
        .anon()
        .send(Method::POST, "/api/auth/login", Some(json!({"email": "bob@x.io", "password": "nope-nope"})))
        .await;
    let unknown = srv
        .anon()
        .send(Method::POST, "/api/auth/login", Some(json!({"email": "who@x.io", "password": "nope-nope"})))
        .await;
    assert_problem(&wrong, 401, "invalid_credentials");
    assert_eq!(wrong.text, unknown.text);
    assert!(wrong.headers.get("www-authenticate").is_some());
    let r = srv.anon().send(Method::POST, "/api/auth/login", Some(json!({"email": "bob@x.io"}))).await;
    assert_problem(&r, 422, "invalid_body");

    // Logout deletes the session server-side.
    let cookie_value = cookie.split(';').next().unwrap().to_owned();
    let r = api.send(Method::POST, "/api/auth/logout", None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert!(r.headers.get("set-cookie").unwrap().to_str().unwrap().contains("Max-Age=0"));
    assert_eq!(api.get("/api/me").await.0, StatusCode::UNAUTHORIZED);
    // Replaying the old cookie does not work either.
    let replay =
        reqwest::Client::new().get(format!("{}/api/me", srv.url)).header("cookie", cookie_value).send().await.unwrap();
    assert_eq!(replay.status(), StatusCode::UNAUTHORIZED);
    let r = srv.anon().send(Method::POST, "/api/auth/logout", None).await;
    assert_problem(&r, 401, "unauthorized");
    srv.stop().await;
}

/// One login attempt with `X-Forwarded-For` naming `addr` (the server trusts the proxy),
/// and the device cookie `device` if given: status, `Retry-After`, and the device cookie
/// a success sets.
async fn login_from(
    srv: &Server,
    email: &str,
    password: &str,
    addr: &str,
    device: Option<&str>,
) -> (StatusCode, Option<u64>, Option<String>) {
    let mut req = reqwest::Client::new()
        .post(format!("{}/api/auth/login", srv.url))
        .header("x-forwarded-for", format!("203.0.113.9, {addr}"))
        .json(&json!({"email": email, "password": password}));
    if let Some(note) = device {
        req = req.header("cookie", format!("cairn_device={note}"));
    }
    let r = req.send().await.unwrap();
    let retry = r.headers().get("retry-after").map(|v| v.to_str().unwrap().parse::<u64>().unwrap());
    let device = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok()?.strip_prefix("cairn_device="))
        .map(|v| v.split(';').next().unwrap().to_owned())
        .next();
    (r.status(), retry, device)
}

#[tokio::test]
async fn failed_logins_are_limited_per_email_and_address() {
    let env = Env::new().await;
    let srv = env.start(&["--login-max-failures", "3", "--trust-proxy"]).await;
    srv.user("carol@x.io").await;
    let attempt = async |password: &str, addr: &str, device: Option<&str>| {
        login_from(&srv, "carol@x.io", password, addr, device).await
    };
    for _ in 0..3 {
        assert_eq!(attempt("wrong-password", "198.51.100.1", None).await.0, StatusCode::UNAUTHORIZED);
    }
    // Over the limit: 429 with Retry-After, even with the right password.
    let (s, retry, _) = attempt("wrong-password", "198.51.100.1", None).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    let retry = retry.expect("Retry-After");
    assert!((1..=900).contains(&retry), "{retry}");
    assert_eq!(attempt(PASSWORD, "198.51.100.1", None).await.0, StatusCode::TOO_MANY_REQUESTS);
    // Another address is not limited, and a success clears that pair's count (the
    // device cookie it sets keeps the account's ceiling out of the way).
    assert_eq!(attempt("wrong-password", "198.51.100.2", None).await.0, StatusCode::UNAUTHORIZED);
    let (s, _, device) = attempt(PASSWORD, "198.51.100.2", None).await;
    assert_eq!(s, StatusCode::OK);
    let device = device.expect("a sign-in sets the device cookie");
    for _ in 0..3 {
        assert_eq!(attempt("wrong-password", "198.51.100.2", Some(&device)).await.0, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(attempt("wrong-password", "198.51.100.2", Some(&device)).await.0, StatusCode::TOO_MANY_REQUESTS);
    // The 429 body is problem+json.
    let r = srv
        .anon()
        .client
        .post(format!("{}/api/auth/login", srv.url))
        .header("x-forwarded-for", "198.51.100.1")
        .json(&json!({"email": "carol@x.io", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["code"], "too_many_login_failures");
    srv.stop().await;
}

/// Guesses at one account from many addresses stop at `LOGIN_MAX_FAILURES_PER_ACCOUNT`,
/// and guesses from one address across many accounts at `LOGIN_MAX_FAILURES_PER_ADDRESS`
/// — except from a device that signed in to the account before, so strangers cannot
/// lock the owner out.
#[tokio::test]
async fn guesses_across_addresses_and_across_accounts_are_limited() {
    let env = Env::new().await;
    let srv = env
        .start(&[
            "--login-max-failures",
            "3",
            "--login-max-failures-per-account",
            "6",
            "--login-max-failures-per-address",
            "12",
            "--trust-proxy",
        ])
        .await;
    srv.user("owner@x.io").await;
    // The owner signed in once, from home: that browser keeps a device cookie.
    let (s, _, home) = login_from(&srv, "owner@x.io", PASSWORD, "192.0.2.1", None).await;
    assert_eq!(s, StatusCode::OK);
    let home = home.unwrap();

    // Six guesses from six addresses pass (each address is far under its own limit)…
    for i in 0..6 {
        let (s, ..) = login_from(&srv, "owner@x.io", "guess", &format!("198.51.100.{i}"), None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "guess {i}");
    }
    // …the seventh, from yet another address, is refused, the right password too.
    let (s, retry, _) = login_from(&srv, "owner@x.io", "guess", "198.51.100.50", None).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    assert!(retry.is_some_and(|r| (1..=900).contains(&r)), "{retry:?}");
    assert_eq!(login_from(&srv, "owner@x.io", PASSWORD, "198.51.100.51", None).await.0, StatusCode::TOO_MANY_REQUESTS);
    // The owner's own browser still signs in, from anywhere.
    let (s, ..) = login_from(&srv, "owner@x.io", PASSWORD, "192.0.2.77", Some(&home)).await;
    assert_eq!(s, StatusCode::OK);
    // A device cookie for another account, or a forged one, vouches for nothing.
    srv.user("other@x.io").await;
    let (_, _, other) = login_from(&srv, "other@x.io", PASSWORD, "192.0.2.2", None).await;
    let (s, ..) = login_from(&srv, "owner@x.io", PASSWORD, "192.0.2.3", other.as_deref()).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    let forged = format!("v1.{}.AAAA", home.split('.').nth(1).unwrap());
    let (s, ..) = login_from(&srv, "owner@x.io", PASSWORD, "192.0.2.3", Some(&forged)).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);

    // One address guessing across accounts: twelve wrong guesses pass, the next is refused
    // for any account…
    for i in 0..12 {
        let (s, ..) = login_from(&srv, &format!("user{i}@x.io"), "guess", "203.0.113.66", None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "account {i}");
    }
    let (s, retry, _) = login_from(&srv, "other@x.io", PASSWORD, "203.0.113.66", None).await;
    assert_eq!((s, retry.is_some()), (StatusCode::TOO_MANY_REQUESTS, true));
    // …but not for a device that signed in to that account before, nor from elsewhere.
    assert_eq!(login_from(&srv, "other@x.io", PASSWORD, "203.0.113.66", other.as_deref()).await.0, StatusCode::OK);
    assert_eq!(login_from(&srv, "user0@x.io", "guess", "203.0.113.67", None).await.0, StatusCode::UNAUTHORIZED);
    srv.stop().await;
}

/// Refused attempts and successes are taken back from the counts across addresses and
/// accounts: hammering a refused pair does not use up the account's allowance, and a
/// script that signs in again and again without keeping cookies is never refused.
#[tokio::test]
async fn only_failures_fill_the_ceilings_across_addresses_and_accounts() {
    let env = Env::new().await;
    let srv = env.start(&["--login-max-failures", "3", "--login-max-failures-per-account", "6", "--trust-proxy"]).await;
    srv.user("dora@x.io").await;
    for _ in 0..3 {
        assert_eq!(login_from(&srv, "dora@x.io", "guess", "198.51.100.1", None).await.0, StatusCode::UNAUTHORIZED);
    }
    for _ in 0..20 {
        let (s, ..) = login_from(&srv, "dora@x.io", "guess", "198.51.100.1", None).await;
        assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    }
    // Three failures counted for the account so far: three more pass, from elsewhere.
    for _ in 0..3 {
        assert_eq!(login_from(&srv, "dora@x.io", "guess", "198.51.100.2", None).await.0, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(login_from(&srv, "dora@x.io", "guess", "198.51.100.3", None).await.0, StatusCode::TOO_MANY_REQUESTS);

    srv.user("erin@x.io").await;
    for i in 0..30 {
        let (s, ..) = login_from(&srv, "erin@x.io", PASSWORD, "198.51.100.9", None).await;
        assert_eq!(s, StatusCode::OK, "sign-in {i}");
    }
    srv.stop().await;
}
#[tokio::test]
async fn the_login_window_passes() {
    let env = Env::new().await;
    let srv = env.start(&["--login-max-failures", "1", "--login-window-secs", "900"]).await;
    srv.user("dan@x.io").await;
    let login = |password: &'static str| {
        let api = srv.anon();
        async move { api.post("/api/auth/login", json!({"email": "dan@x.io", "password": password})).await.0 }
    };
    assert_eq!(login("wrong-password").await, StatusCode::UNAUTHORIZED);
    assert_eq!(login(PASSWORD).await, StatusCode::TOO_MANY_REQUESTS);
    // The window is counted from the first failure: still closed just before its end…
    // (times are whole seconds, so the failure's second may have begun up to a second
    // before the failure itself: 898 s is before the end however the test is timed)
    srv.ctx.clock.advance(Duration::from_secs(898));
    assert_eq!(login(PASSWORD).await, StatusCode::TOO_MANY_REQUESTS);
    // …and open once it has passed.
    srv.ctx.clock.advance(Duration::from_secs(3));
    assert_eq!(login(PASSWORD).await, StatusCode::OK);
    srv.stop().await;
}

/// Sessions and JWTs live 7 days by the service's clock; the maintenance worker's pass
/// then deletes what expired, and failure counts whose window has passed.
#[tokio::test]
async fn credentials_expire_and_maintenance_prunes_them() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("eve@x.io").await;
    let (_, t) = api.post("/api/token", json!({})).await;
    let jwt = api.with_bearer(t["access_token"].as_str().unwrap());
    let failed = srv.anon().post("/api/auth/login", json!({"email": "eve@x.io", "password": "not it at all"})).await;
    assert_eq!(failed.0, StatusCode::UNAUTHORIZED);
    let nothing = cairn::testing::workers::run_pending_jobs(&srv.ctx).await.unwrap();
    let refreshed = nothing.statistics_refreshed;
    let expected = cairn::testing::workers::JobReport { statistics_refreshed: refreshed, ..Default::default() };
    assert_eq!(nothing, expected, "nothing has expired yet");

    srv.ctx.clock.advance(Duration::from_secs(7 * 24 * 3600 - 60));
    assert_eq!(api.get("/api/me").await.0, StatusCode::OK);
    assert_eq!(jwt.get("/api/me").await.0, StatusCode::OK);
    srv.ctx.clock.advance(Duration::from_secs(120));
    assert_eq!(api.get("/api/me").await.0, StatusCode::UNAUTHORIZED);
    let r = jwt.send(Method::GET, "/api/me", None).await;
    assert_problem(&r, 401, "unauthorized");

    let pruned = cairn::testing::workers::run_pending_jobs(&srv.ctx).await.unwrap();
    assert_eq!(
        pruned,
        cairn::testing::workers::JobReport {
            sessions_pruned: 1,
            invitations_pruned: 0,
            // The failure's rows: its (email, address) pair, its email's, its address's.
            login_failures_pruned: 3,
            pages_embedded: 0,
            webhook_rows_pruned: 0,
            search_entries_removed: 0,
            rows_compressed: 0,
            // Depends on the PostgreSQL server's autovacuum (tests/it/postgres_only.rs).
            statistics_refreshed: pruned.statistics_refreshed,
        }
    );
    let again = cairn::testing::workers::run_pending_jobs(&srv.ctx).await.unwrap();
    let refreshed = again.statistics_refreshed;
    assert_eq!(again, cairn::testing::workers::JobReport { statistics_refreshed: refreshed, ..Default::default() });
    srv.stop().await;
}

#[tokio::test]
async fn jwt_and_bearer_rules() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("erin@x.io").await;
    let (s, body) = api.post("/api/token", json!({})).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "bearer");
    assert_eq!(body["expires_in"], 604800);
    let jwt = body["access_token"].as_str().unwrap();
    assert!(!jwt.starts_with("svc_"));
    let bearer = api.with_bearer(jwt);
    let (s, me) = bearer.get("/api/me").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(me["email"], "erin@x.io");
    // A JWT can get a JWT.
    assert_eq!(bearer.post("/api/token", json!({})).await.0, StatusCode::OK);

    // A bad bearer is 401 even with a valid session cookie: no fall-through.
    for bad in ["Bearer garbage", "Bearer svc_doesnotexist0000000000000000000000", "Basic abc", "Bearer "] {
        let r = api.client.get(format!("{}/api/me", srv.url)).header("authorization", bad).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{bad}");
        assert_eq!(r.headers().get("www-authenticate").unwrap(), "Bearer");
    }
    // A tampered JWT fails.
    let mut tampered = jwt.to_owned();
    tampered.pop();
    tampered.push(if jwt.ends_with('A') { 'B' } else { 'A' });
    assert_eq!(api.with_bearer(&tampered).get("/api/me").await.0, StatusCode::UNAUTHORIZED);
    // No credential at all.
    let r = srv.anon().send(Method::GET, "/api/me", None).await;
    assert_problem(&r, 401, "unauthorized");
    assert_eq!(srv.anon().post("/api/token", json!({})).await.0, StatusCode::UNAUTHORIZED);
    srv.stop().await;
}

#[tokio::test]
async fn jwts_survive_a_restart() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("rita@x.io").await;
    let (_, body) = api.post("/api/token", json!({})).await;
    let jwt = body["access_token"].as_str().unwrap().to_owned();
    srv.stop().await;
    let srv = env.start(&[]).await;
    assert_eq!(srv.anon().with_bearer(&jwt).get("/api/me").await.0, StatusCode::OK);
    srv.stop().await;
}

#[tokio::test]
async fn personal_access_token_lifecycle() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("fay@x.io").await;
    let (s, created) = api.post("/api/tokens", json!({"name": "laptop"})).await;
    assert_eq!(s, StatusCode::CREATED);
    let token = created["token"].as_str().unwrap().to_owned();
    let secret = token.strip_prefix("svc_").expect("svc_ prefix");
    assert!(secret.len() >= 32 && secret.chars().all(|c| c.is_ascii_alphanumeric()), "{token}");
    assert_eq!(created["name"], "laptop");
    let id = created["id"].as_i64().unwrap();

    // Only a SHA-256 of it is stored.
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT token_hash FROM api_tokens").fetch_all(&srv.ctx.db.pool).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_ne!(stored[0], token);
    assert_eq!(stored[0].len(), 64);

    let pat = api.with_bearer(&token);
    let (s, me) = pat.get("/api/me").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(me["email"], "fay@x.io");

    // The list never shows the secret, and records use.
    let (s, list) = api.get("/api/tokens").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(list["total"], 1);
    let item = &list["items"][0];
    assert_eq!(item["id"], id);
    assert!(item.get("token").is_none());
    assert!(item["last_used_at"].is_string(), "{item}");
    assert!(!list.to_string().contains(secret));

    // Someone else cannot revoke it.
    let other = srv.user("gus@x.io").await;
    let r = other.send(Method::DELETE, &format!("/api/tokens/{id}"), None).await;
    assert_problem(&r, 404, "token_not_found");
    assert_eq!(pat.get("/api/me").await.0, StatusCode::OK);
    // Revoked: fails at once.
    assert_eq!(api.delete(&format!("/api/tokens/{id}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(pat.get("/api/me").await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(api.delete(&format!("/api/tokens/{id}")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(api.delete("/api/tokens/not-a-number").await.0, StatusCode::NOT_FOUND);

    // Bad names and shapes.
    let r = api.send(Method::POST, "/api/tokens", Some(json!({"name": "  "}))).await;
    assert_problem(&r, 400, "invalid_token_name");
    let r = api.send(Method::POST, "/api/tokens", Some(json!({}))).await;
    assert_problem(&r, 422, "invalid_body");
    let r = api.send(Method::GET, "/api/tokens?limit=abc", None).await;
    assert_problem(&r, 400, "invalid_query");
    let r = api.send(Method::GET, "/api/tokens?limit=0", None).await;
    assert_problem(&r, 400, "invalid_paging");
    srv.stop().await;
}

#[tokio::test]
async fn paging_is_bounded() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("page@x.io").await;
    for i in 0..3 {
        api.post("/api/tokens", json!({"name": format!("t{i}")})).await;
    }
    let (_, list) = api.get("/api/tokens?limit=2&offset=1").await;
    assert_eq!(list["total"], 3);
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    assert_eq!(list["items"][0]["name"], "t1");
    let (_, list) = api.get("/api/tokens?limit=100000").await;
    assert_eq!(list["items"].as_array().unwrap().len(), 3);

    // Every list the API documents as paged checks its window alike, before it looks
    // anything up.
    let (_, doc) = api.get("/openapi.json").await;
    let paged: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, item)| {
            item["get"]["parameters"].as_array().is_some_and(|ps| ps.iter().any(|p| p["name"] == "limit"))
        })
        .map(|(path, _)| path.as_str())
        .collect();
    assert_eq!(paged.len(), 14, "{paged:?}");
    for path in paged {
        let path = path.replace("{slug}", "nothing-here").replace("{webhook_id}", "1");
        for (query, code) in
            [("limit=0", "invalid_paging"), ("offset=-1", "invalid_paging"), ("limit=ten", "invalid_query")]
        {
            let r = api.send(Method::GET, &format!("{path}?{query}"), None).await;
            assert_problem(&r, 400, code);
        }
    }
    srv.stop().await;
}

#[tokio::test]
async fn profile_password_and_language() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("hal@x.io").await;
    let (s, u) = api.post("/api/settings/profile", json!({"name": "Hal 9000", "language": "de"})).await;
    assert_eq!(s, StatusCode::OK, "{u}");
    assert_eq!(u["name"], "Hal 9000");
    assert_eq!(u["language"], "de");
    assert_eq!(u["email"], "hal@x.io");
    let r = api.send(Method::POST, "/api/settings/profile", Some(json!({"language": "xx"}))).await;
    assert_problem(&r, 400, "unknown_language");
    srv.user("taken@x.io").await;
    let r = api
        .send(Method::POST, "/api/settings/profile", Some(json!({"email": "Taken@x.io", "current_password": PASSWORD})))
        .await;
    assert_problem(&r, 409, "email_taken");
    let r = api.send(Method::POST, "/api/settings/profile", Some(json!({"name": 3}))).await;
    assert_problem(&r, 422, "invalid_body");

    // Language.
    let (s, body) = api.post("/api/lang/FR", json!({})).await;
    assert_eq!((s, body), (StatusCode::OK, json!({"language": "fr"})));
    let r = api.send(Method::POST, "/api/lang/klingon", None).await;
    assert_problem(&r, 400, "unknown_language");
    assert_eq!(srv.anon().post("/api/lang/de", json!({})).await.0, StatusCode::UNAUTHORIZED);

    // Password: a second session and an old JWT end; this session stays.
    let second = srv.anon();
    assert_eq!(
        second.post("/api/auth/login", json!({"email": "hal@x.io", "password": PASSWORD})).await.0,
        StatusCode::OK
    );
    let (_, t) = api.post("/api/token", json!({})).await;
    let old_jwt = api.with_bearer(t["access_token"].as_str().unwrap());
    let pat = api.with_bearer(&api.pat().await);
    assert_eq!(old_jwt.get("/api/me").await.0, StatusCode::OK);

    let r = api
        .send(
            Method::POST,
            "/api/settings/password",
            Some(json!({"current_password": "wrong-one", "new_password": "new password 1"})),
        )
        .await;
    assert_problem(&r, 400, "wrong_password");
    let r = api
        .send(
            Method::POST,
            "/api/settings/password",
            Some(json!({"current_password": PASSWORD, "new_password": "short"})),
        )
        .await;
    assert_problem(&r, 400, "password_too_short");
    // In the same second as the JWT was issued (the clock does not move): it ends all the same.
    let r = api
        .send(
            Method::POST,
            "/api/settings/password",
            Some(json!({"current_password": PASSWORD, "new_password": "new password 1"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text);
    assert_eq!(api.get("/api/me").await.0, StatusCode::OK);
    assert_eq!(second.get("/api/me").await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(old_jwt.get("/api/me").await.0, StatusCode::UNAUTHORIZED);
    // Personal access tokens are explicit, long-lived grants: they survive.
    assert_eq!(pat.get("/api/me").await.0, StatusCode::OK);
    let login = |p: &'static str| {
        let a = srv.anon();
        async move { a.post("/api/auth/login", json!({"email": "hal@x.io", "password": p})).await.0 }
    };
    assert_eq!(login(PASSWORD).await, StatusCode::UNAUTHORIZED);
    assert_eq!(login("new password 1").await, StatusCode::OK);
    srv.stop().await;
}

#[tokio::test]
async fn i18n_picks_the_language() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let anon = srv.anon();
    let (s, body) = anon.get("/api/i18n").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(body["language"], "en");
    assert_eq!(body["languages"], json!(["en", "de", "fr", "es", "ja"]));
    let en = body["messages"].as_object().unwrap().clone();
    assert!(en.len() >= 50);
    let (_, fr) = anon.get("/api/i18n?lang=fr").await;
    assert_eq!(fr["language"], "fr");
    assert_eq!(fr["messages"].as_object().unwrap().len(), en.len());
    assert_ne!(fr["messages"], body["messages"]);
    let r = anon
        .client
        .get(format!("{}/api/i18n", srv.url))
        .header("accept-language", "ja-JP,ja;q=0.9")
        .send()
        .await
        .unwrap();
    let ja: serde_json::Value = r.json().await.unwrap();
    assert_eq!(ja["language"], "ja");
    // The signed-in user's language beats Accept-Language; lang= beats both.
    let api = srv.user("ivy@x.io").await;
    api.post("/api/lang/es", json!({})).await;
    let r = api.client.get(format!("{}/api/i18n", srv.url)).header("accept-language", "de").send().await.unwrap();
    assert_eq!(r.json::<serde_json::Value>().await.unwrap()["language"], "es");
    assert_eq!(api.get("/api/i18n?lang=de").await.1["language"], "de");
    srv.stop().await;
}

/// A new account starts in the language its browser asks for (a shipped one), else English.
#[tokio::test]
async fn a_new_account_starts_in_the_browsers_language() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    for (accept, expected) in
        [(Some("de-DE,de;q=0.9,en;q=0.8"), "de"), (Some("pt-BR, ja;q=0.5"), "ja"), (Some("pt-BR"), "en"), (None, "en")]
    {
        let email = format!("lang-{expected}-{}@x.io", accept.map_or(0, str::len));
        let mut req = srv.anon().client.post(format!("{}/api/auth/register", srv.url));
        if let Some(accept) = accept {
            req = req.header("accept-language", accept);
        }
        let r = req.json(&json!({"email": email, "password": PASSWORD})).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::CREATED, "{accept:?}");
        assert_eq!(r.json::<serde_json::Value>().await.unwrap()["language"], expected, "{accept:?}");
    }
    srv.stop().await;
}

/// CSRF: a write that may ride on the session cookie is refused when a browser says it
/// comes from another site (`Sec-Fetch-Site`, else `Origin`), and nothing is written;
/// same-origin pages, non-browser clients and bearer tokens are served.
#[tokio::test]
async fn cookie_writes_from_another_site_are_refused() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("csrf@x.io").await;
    let host = srv.url.trim_start_matches("http://").to_owned();
    let create = |slug: &str, headers: &[(&str, &str)]| {
        let mut req = api.client.post(format!("{}/api/pages", srv.url)).json(&json!({"slug": slug}));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send()
    };
    for (slug, headers) in [
        ("forged-1", vec![("sec-fetch-site", "cross-site")]),
        ("forged-2", vec![("sec-fetch-site", "same-site")]),
        ("forged-3", vec![("origin", "https://evil.example")]),
        ("forged-4", vec![("origin", "null")]),
    ] {
        let r = create(slug, &headers).await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{headers:?}");
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["code"], "cross_site_request", "{body}");
        assert_eq!(api.get(&format!("/api/pages/{slug}")).await.0, StatusCode::NOT_FOUND);
    }
    let same_origin = format!("http://{host}");
    for (slug, headers) in [
        ("ok-1", vec![("sec-fetch-site", "same-origin"), ("origin", same_origin.as_str())]),
        ("ok-2", vec![("origin", same_origin.as_str())]),
        ("ok-3", vec![]),
    ] {
        let r = create(slug, &headers).await.unwrap();
        assert_eq!(r.status(), StatusCode::CREATED, "{headers:?}");
    }
    // Reads are never refused; a bearer token cannot be forged by another site.
    let r = api.client.get(format!("{}/api/me", srv.url)).header("sec-fetch-site", "cross-site").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let pat = api.pat().await;
    let r = reqwest::Client::new()
        .post(format!("{}/api/pages", srv.url))
        .bearer_auth(&pat)
        .header("sec-fetch-site", "cross-site")
        .json(&json!({"slug": "by-token"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    // Login CSRF (signing a victim into the attacker's account) is refused the same way.
    let r = srv
        .anon()
        .client
        .post(format!("{}/api/auth/login", srv.url))
        .header("sec-fetch-site", "cross-site")
        .json(&json!({"email": "csrf@x.io", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    srv.stop().await;
}

/// A token in use is kept checked in memory (core/credentials/cache.rs): whatever it
/// stands for that changes — name, language, default workspace — shows on
/// its very next request, and a revoked one fails at once (tested above).
#[tokio::test]
async fn a_token_in_use_sees_every_change_to_its_user_at_once() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("ivy@x.io").await;
    let pat = api.with_bearer(&api.pat().await);
    let me = || async { pat.get("/api/me").await.1 };
    assert_eq!(me().await["name"], "ivy@x.io");
    assert_eq!(api.post("/api/settings/profile", json!({"name": "Ivy Two"})).await.0, StatusCode::OK);
    assert_eq!(me().await["name"], "Ivy Two");
    assert_eq!(api.post("/api/lang/ja", json!({})).await.0, StatusCode::OK);
    assert_eq!(me().await["language"], "ja");
    let (s, ws) = api.post("/api/workspaces", json!({"name": "Second"})).await;
    assert_eq!(s, StatusCode::CREATED, "{ws}");
    let slug = ws["slug"].as_str().unwrap();
    let (s, body) = api.post(&format!("/api/workspaces/{slug}/switch"), json!({})).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(me().await["default_workspace"], slug);
    srv.stop().await;
}

/// Attempts sent at the same instant cannot all pass the limit: each is counted before
/// its password is verified, so with a limit of 5 exactly 5 are verified (401) and the
/// rest refused (429), whatever their order.
#[tokio::test]
async fn the_login_limit_cannot_be_raced() {
    let env = Env::new().await;
    let srv = env.start(&["--login-max-failures", "5"]).await;
    srv.user("race@x.io").await;
    let attempts = (0..100).map(|_| {
        let api = srv.anon();
        async move {
            api.client
                .post(format!("{}/api/auth/login", api.base))
                .json(&json!({"email": "race@x.io", "password": "wrong-password"}))
                .send()
                .await
                .unwrap()
                .status()
        }
    });
    let statuses = futures_util::future::join_all(attempts).await;
    let verified = statuses.iter().filter(|s| **s == StatusCode::UNAUTHORIZED).count();
    let refused = statuses.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count();
    assert_eq!((verified, refused), (5, 95), "{statuses:?}");
    // The right password is refused too while the pair is over the limit.
    let (s, _) = srv.anon().post("/api/auth/login", json!({"email": "race@x.io", "password": PASSWORD})).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
    srv.stop().await;
}

/// The ceilings across addresses and across accounts hold under attempts sent at once,
/// as the per-pair limit does: with the defaults, a hundred guesses at one account from a
/// hundred addresses verify ten passwords; a hundred guesses from one address at a
/// hundred accounts verify fifty.
#[tokio::test]
async fn the_ceilings_across_addresses_and_accounts_cannot_be_raced() {
    let env = Env::new().await;
    let srv = env.start(&["--trust-proxy"]).await;
    srv.user("race@x.io").await;
    let count = |statuses: Vec<StatusCode>| {
        let verified = statuses.iter().filter(|s| **s == StatusCode::UNAUTHORIZED).count();
        let refused = statuses.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count();
        (verified, refused)
    };
    let srv_ref = &srv;
    let one_account = (0..100).map(|i| async move {
        login_from(srv_ref, "race@x.io", "guess", &format!("198.51.{}.{}", i / 50, i % 50), None).await.0
    });
    assert_eq!(count(futures_util::future::join_all(one_account).await), (10, 90));
    let one_address = (0..100)
        .map(|i| async move { login_from(srv_ref, &format!("racer{i}@x.io"), "guess", "203.0.113.5", None).await.0 });
    assert_eq!(count(futures_util::future::join_all(one_address).await), (50, 50));
    srv.stop().await;
}

/// Hundreds of logins with unknown emails at the real Argon2 cost: hashes run one per
/// core at most, the excess is answered 503 with Retry-After after a short wait, and the
/// server's memory comes back down after the burst.
#[tokio::test]
async fn a_burst_of_logins_is_bounded_and_its_memory_returned() {
    use crate::common::process::Proc;
    let env = Env::new().await;
    let p = Proc::start(
        env.dir.path(),
        &env.db_url,
        &[
            ("ARGON2_MEMORY_KIB", "19456"),
            ("ARGON2_ITERATIONS", "2"),
            ("LOGIN_MAX_FAILURES", "1000"),
            ("LOGIN_MAX_FAILURES_PER_ADDRESS", "1000"),
        ],
    );
    let rss = || -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", p.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap().to_owned();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
    };
    let client = reqwest::Client::new();
    // One login first, so the dummy hash and the pool are made before the baseline.
    let url = format!("{}/api/auth/login", p.url());
    client.post(&url).json(&json!({"email": "warm@x.io", "password": "x"})).send().await.unwrap();
    let before = rss();
    let attempts = (0..300).map(|i| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            let r = client
                .post(url)
                .json(&json!({"email": format!("nobody{i}@x.io"), "password": "wrong-password"}))
                .send()
                .await
                .unwrap();
            (r.status(), r.headers().get("retry-after").is_some())
        }
    });
    let answers = futures_util::future::join_all(attempts).await;
    let peak = rss();
    assert!(answers.iter().all(|(s, _)| *s == StatusCode::UNAUTHORIZED || *s == StatusCode::SERVICE_UNAVAILABLE));
    assert!(answers.iter().filter(|(s, _)| *s == StatusCode::SERVICE_UNAVAILABLE).all(|(_, retry)| *retry));
    assert!(answers.iter().any(|(s, _)| *s == StatusCode::UNAUTHORIZED));
    // Deadline polling rather than a fixed sleep: the bound is 10 s after the burst.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut after = rss();
    while after > before + 50 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        after = rss();
    }
    assert!(
        after <= before + 50,
        "RSS {before} MiB before, {peak} MiB at the end of the burst, {after} MiB 10 s later"
    );
    p.terminate();
}

/// Angle brackets end a commit's author name in git: names and emails with them are
/// refused where they are accepted, and a name an older release stored with them never
/// fails a save (the commit carries it without them).
#[tokio::test]
async fn names_git_cannot_hold_are_refused_and_never_fail_a_save() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let anon = srv.anon();
    let r = anon
        .send(
            Method::POST,
            "/api/auth/register",
            Some(json!({"email": "ann@x.io", "password": PASSWORD, "name": "Ann <admin>"})),
        )
        .await;
    assert_problem(&r, 400, "invalid_name");
    let r = anon
        .send(
            Method::POST,
            "/api/auth/register",
            Some(json!({"email": "a<b>@x.io", "password": PASSWORD, "name": "A"})),
        )
        .await;
    assert_problem(&r, 400, "invalid_email");
    let api = srv.user("eve@x.io").await;
    let r = api.send(Method::POST, "/api/settings/profile", Some(json!({"name": "Eve >_<"}))).await;
    assert_problem(&r, 400, "invalid_name");

    // A name stored before the rule: saves go on.
    sqlx::query("UPDATE users SET name = 'Eve <the admin>' WHERE email = 'eve@x.io'")
        .execute(&srv.ctx.db.pool)
        .await
        .unwrap();
    cairn::testing::credentials::changed(&srv.ctx).await;
    let (s, page) = api.post("/api/pages", json!({"slug": "notes", "content": "# Notes"})).await;
    assert_eq!(s, StatusCode::CREATED, "{page}");
    let (s, page) = api.put("/api/pages/notes", json!({"content": "# Notes\n\nmore"})).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["updated_by"]["name"], "Eve <the admin>");
    srv.stop().await;
}

/// The sign-in email changes only with the current password, and wrong guesses of it —
/// for the email or for a new password — are limited as logins are.
#[tokio::test]
async fn changing_the_email_needs_the_password_and_guesses_are_limited() {
    let env = Env::new().await;
    let srv = env.start(&["--login-max-failures", "3"]).await;
    let api = srv.user("ivan@x.io").await;
    let profile = async |body: serde_json::Value| api.send(Method::POST, "/api/settings/profile", Some(body)).await;
    assert_problem(&profile(json!({"email": "ivan2@x.io"})).await, 400, "current_password_required");
    // The same email again, or other fields, need nothing more.
    assert_eq!(profile(json!({"email": "IVAN@x.io", "name": "Ivan"})).await.status, StatusCode::OK);
    assert_problem(
        &profile(json!({"email": "ivan2@x.io", "current_password": "guess 1"})).await,
        400,
        "wrong_password",
    );
    let r = api
        .send(
            Method::POST,
            "/api/settings/password",
            Some(json!({"current_password": "guess 2", "new_password": "new password 1"})),
        )
        .await;
    assert_problem(&r, 400, "wrong_password");
    assert_problem(
        &profile(json!({"email": "ivan2@x.io", "current_password": "guess 3"})).await,
        400,
        "wrong_password",
    );
    // Past the limit: refused even with the right password, as a login would be.
    let r = profile(json!({"email": "ivan2@x.io", "current_password": PASSWORD})).await;
    assert_problem(&r, 429, "too_many_login_failures");
    assert!(r.headers.get("retry-after").is_some());
    let (s, _) = srv.anon().post("/api/auth/login", json!({"email": "ivan@x.io", "password": PASSWORD})).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "the guesses count for the sign-in too");

    // Once the window has passed, the right password changes the email.
    srv.ctx.clock.advance(Duration::from_secs(901));
    let r = profile(json!({"email": "ivan2@x.io", "current_password": PASSWORD})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["email"], "ivan2@x.io");
    srv.stop().await;
}

/// A stolen JWT cannot mint a token that outlives the password change that ends it: a
/// personal token made with a JWT (or with a token so made) is bound to the password it
/// was made under and ends with it; one made in a signed-in session lasts until revoked,
/// and the change may revoke every token (`revoke_tokens`).
#[tokio::test]
async fn a_token_made_with_a_jwt_ends_with_the_password() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("victim@x.io").await;
    let from_session = owner.with_bearer(&owner.pat().await);
    let (_, jwt) = owner.post("/api/token", json!({})).await;
    let thief = owner.with_bearer(jwt["access_token"].as_str().unwrap());
    let (s, minted) = thief.post("/api/tokens", json!({"name": "stolen"})).await;
    assert_eq!(s, StatusCode::CREATED, "{minted}");
    let minted = owner.with_bearer(minted["token"].as_str().unwrap());
    let (s, again) = minted.post("/api/tokens", json!({"name": "stolen again"})).await;
    assert_eq!(s, StatusCode::CREATED, "{again}");
    let again = owner.with_bearer(again["token"].as_str().unwrap());
    for api in [&minted, &again, &from_session] {
        assert_eq!(api.get("/api/me").await.0, StatusCode::OK);
    }

    let change = json!({"current_password": PASSWORD, "new_password": "a new password 2"});
    assert_eq!(owner.post("/api/settings/password", change).await.0, StatusCode::NO_CONTENT);
    for api in [&thief, &minted, &again] {
        let r = api.send(Method::GET, "/api/me", None).await;
        assert_problem(&r, 401, "unauthorized");
        assert_eq!(api.post("/api/token", json!({})).await.0, StatusCode::UNAUTHORIZED, "no JWT minted either");
    }
    assert_eq!(from_session.get("/api/me").await.0, StatusCode::OK, "a token made in the app lasts");

    // Asked to, a password change revokes every token.
    let change =
        json!({"current_password": "a new password 2", "new_password": "a third password", "revoke_tokens": true});
    assert_eq!(owner.post("/api/settings/password", change).await.0, StatusCode::NO_CONTENT);
    assert_eq!(from_session.get("/api/me").await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(owner.get("/api/tokens").await.1["total"], 0);
    srv.stop().await;
}
