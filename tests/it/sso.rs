//! Single sign-on against a real OpenID provider no one here wrote (oidc-provider, on
//! loopback; common/oidc.rs): accounts made, found by subject and linked by email; and
//! every refusal — wrong state, replayed code, bad signature, wrong audience, expired
//! token, unverified email, a domain not allowed — answered on the sign-in screen with
//! its reason, and no account made. The same flow through the app's button in Chromium
//! is `web_app::single_sign_on_in_a_browser`.

use crate::common::oidc::{Browser, Provider};
use crate::common::*;
use reqwest::StatusCode;
use serde_json::json;

async fn users(srv: &Server) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&srv.ctx.db.pool).await.unwrap()
}

#[tokio::test]
async fn the_first_sign_in_makes_the_account_and_later_ones_find_it_by_subject() {
    let op = Provider::start().await;
    let env = Env::new().await;
    let srv = env.start(&op.flags(&["--oidc-display-name", "Test IdP"])).await;
    let (status, methods) = srv.anon().get("/api/auth/methods").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        methods,
        json!({"password": true, "registration": true, "sso": {"name": "Test IdP", "start": "/api/auth/oidc/start"}})
    );

    let browser = Browser::new(&srv.url);
    let ended = browser.sign_in("ada").await;
    assert_eq!((ended.status, ended.location.as_str()), (StatusCode::SEE_OTHER, "/app/"), "{:?}", ended.refusal());
    let (status, me) = browser.me().await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((me["email"].as_str(), me["name"].as_str()), (Some("ada@example.com"), Some("ada")));
    assert!(me["default_workspace"].is_string(), "a personal workspace, as a registration makes: {me}");
    let id = me["id"].clone();

    // The same person again, whose email changed at the provider: the same account.
    op.set_account("ada", json!({"email": "ada.lovelace@example.com"})).await;
    let again = Browser::new(&srv.url);
    assert_eq!(again.sign_in("ada").await.location, "/app/");
    assert_eq!(again.me().await.1["id"], id);
    assert_eq!(users(&srv).await, 1);

    // The way back goes where the person was going, an app path only.
    let browser = Browser::new(&srv.url);
    let callback = browser.to_callback("?next=/app/@somewhere/page").await;
    assert_eq!(browser.finish(&callback).await.location, "/app/@somewhere/page");
    let browser = Browser::new(&srv.url);
    let callback = browser.to_callback("?next=https://evil.example/").await;
    assert_eq!(browser.finish(&callback).await.location, "/app/");
    srv.stop().await;
}

#[tokio::test]
async fn an_account_with_a_password_is_linked_by_its_verified_email() {
    let op = Provider::start().await;
    let env = Env::new().await;
    let srv = env.start(&op.flags(&[])).await;
    let grace = srv.user("grace@example.com").await;
    let (_, registered) = grace.get("/api/me").await;
    let browser = Browser::new(&srv.url);
    assert_eq!(browser.sign_in("grace").await.location, "/app/");
    assert_eq!(browser.me().await.1["id"], registered["id"]);
    assert_eq!(users(&srv).await, 1);
    srv.stop().await;
}

#[tokio::test]
async fn every_refusal_says_why_and_makes_no_account() {
    let op = Provider::start().await;
    let env = Env::new().await;
    let srv = env.start(&op.flags(&["--oidc-allowed-domains", "example.com,example.org"])).await;

    // Wrong state: the return does not carry the state this browser began with.
    let browser = Browser::new(&srv.url);
    let callback = browser.to_callback("").await;
    let forged = callback.replace("state=", "state=x");
    assert_eq!(browser.finish(&forged).await.refusal().as_deref(), Some("sso_state_invalid"));
    // Another browser cannot finish it either (no cookie of its own).
    let callback = browser.to_callback("").await;
    assert_eq!(Browser::new(&srv.url).finish(&callback).await.refusal().as_deref(), Some("sso_state_invalid"));

    // Replayed: a return used once is refused the second time, and a code already
    // exchanged is refused by the provider under a fresh state too.
    let browser = Browser::new(&srv.url);
    let callback = browser.to_callback("").await;
    assert_eq!(browser.finish(&callback).await.location, "/app/");
    assert_eq!(browser.finish(&callback).await.refusal().as_deref(), Some("sso_state_invalid"));
    let code = reqwest::Url::parse(&callback).unwrap().query_pairs().find(|(k, _)| k == "code").unwrap().1.into_owned();
    let thief = Browser::new(&srv.url);
    let fresh = thief.to_callback("").await;
    let mut replayed = reqwest::Url::parse(&fresh).unwrap();
    let pairs: Vec<(String, String)> = replayed
        .query_pairs()
        .map(|(k, v)| {
            let v = if k == "code" { code.clone() } else { v.into_owned() };
            (k.into_owned(), v)
        })
        .collect();
    replayed.query_pairs_mut().clear().extend_pairs(pairs);
    assert_eq!(thief.finish(replayed.as_str()).await.refusal().as_deref(), Some("sso_refused"));
    assert_eq!(thief.me().await.0, StatusCode::UNAUTHORIZED);
    let before = users(&srv).await;
    assert_eq!(before, 1, "ada signed in once");

    // ID tokens a broken or hostile provider might send.
    for how in ["signature", "audience", "expired"] {
        op.spoil(how).await;
        let browser = Browser::new(&srv.url);
        let ended = browser.sign_in(&format!("spoiled-{how}")).await;
        assert_eq!(ended.refusal().as_deref(), Some("sso_token_invalid"), "{how}");
        assert_eq!(browser.me().await.0, StatusCode::UNAUTHORIZED, "{how}");
    }

    // The person's email: not verified by the provider, or of a domain not allowed.
    let ended = Browser::new(&srv.url).sign_in("unverified-bob").await;
    assert_eq!(ended.refusal().as_deref(), Some("sso_email_unverified"));
    let ended = Browser::new(&srv.url).sign_in("eve@elsewhere.test").await;
    assert_eq!(ended.refusal().as_deref(), Some("sso_domain_not_allowed"));
    // An allowed domain, the letter case aside, signs in.
    let ended = Browser::new(&srv.url).sign_in("Zed@Example.ORG").await;
    assert_eq!(ended.location, "/app/", "{:?}", ended.refusal());
    assert_eq!(users(&srv).await, before + 1, "only zed's account was made");
    // Every return that came back with its own browser's state used its sign-in up; the
    // two refused before (a forged state, another browser) wait to expire.
    let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sso_logins").fetch_one(&srv.ctx.db.pool).await.unwrap();
    assert_eq!(kept, 2);
    srv.stop().await;
}

#[tokio::test]
async fn forged_returns_from_one_address_are_limited() {
    let op = Provider::start().await;
    let env = Env::new().await;
    let srv = env.start(&op.flags(&["--login-max-failures-per-address", "3"])).await;
    let browser = Browser::new(&srv.url);
    let forged = format!("{}/api/auth/oidc/callback?code=x&state=y", srv.url);
    for _ in 0..3 {
        assert_eq!(browser.finish(&forged).await.refusal().as_deref(), Some("sso_state_invalid"));
    }
    // The fourth is refused before it is looked at.
    assert_eq!(browser.finish(&forged).await.refusal().as_deref(), Some("too_many_attempts"));
    srv.stop().await;
}

#[tokio::test]
async fn oidc_only_turns_passwords_off_and_password_accounts_sign_in_through_the_provider() {
    let op = Provider::start().await;
    let env = Env::new().await;
    // The account exists before single sign-on is turned on.
    let before = env.start(&[]).await;
    before.user("lin@example.com").await;
    let (_, lin) =
        before.anon().post("/api/auth/login", json!({"email": "lin@example.com", "password": PASSWORD})).await;
    before.stop().await;

    let srv = env.start(&op.flags(&["--oidc-only"])).await;
    let anon = srv.anon();
    assert_eq!(anon.get("/api/auth/methods").await.1["password"], json!(false));
    let login = anon
        .send(reqwest::Method::POST, "/api/auth/login", Some(json!({"email": "lin@example.com", "password": PASSWORD})))
        .await;
    assert_problem(&login, 403, "password_sign_in_off");
    let register = anon
        .send(
            reqwest::Method::POST,
            "/api/auth/register",
            Some(json!({"email": "new@example.com", "password": PASSWORD})),
        )
        .await;
    assert_problem(&register, 403, "registration_closed");
    let browser = Browser::new(&srv.url);
    assert_eq!(browser.sign_in("lin").await.location, "/app/");
    assert_eq!(browser.me().await.1["id"], lin["id"]);
    srv.stop().await;
}

#[tokio::test]
async fn with_registration_closed_only_an_invitation_makes_an_account() {
    let op = Provider::start().await;
    let env = Env::new().await;
    let open = env.start(&[]).await;
    let owner = open.user("owner@example.com").await;
    let ws = owner.get("/api/me").await.1["default_workspace"].as_str().unwrap().to_owned();
    open.stop().await;

    let srv = env.start(&op.flags(&["--disable-registration"])).await;
    let owner = srv.anon();
    owner.post("/api/auth/login", json!({"email": "owner@example.com", "password": PASSWORD})).await;
    let ended = Browser::new(&srv.url).sign_in("kim").await;
    assert_eq!(ended.refusal().as_deref(), Some("registration_closed"));
    assert_eq!(users(&srv).await, 1);

    let (status, made) =
        owner.post(&format!("/api/workspaces/{ws}/invitations"), json!({"email": "kim@example.com"})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let token = made["token"].as_str().unwrap();
    let browser = Browser::new(&srv.url);
    let callback = browser.to_callback_as("kim", &format!("?invitation={token}")).await;
    let ended = browser.finish(&callback).await;
    assert_eq!(ended.location, format!("/app/@{ws}"), "{:?}", ended.refusal());
    let joined: serde_json::Value =
        browser.client.get(format!("{}/api/workspaces", srv.url)).send().await.unwrap().json().await.unwrap();
    let slugs: Vec<&str> = joined["items"].as_array().unwrap().iter().map(|w| w["slug"].as_str().unwrap()).collect();
    assert!(slugs.contains(&ws.as_str()), "{joined}");
    // The link is used up.
    let (status, _) = owner.get(&format!("/api/invitations/link?token={token}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    srv.stop().await;
}
