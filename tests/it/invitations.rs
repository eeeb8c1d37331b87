//! Invitations over real HTTP (docs/api.md, "Invitations"): an owner's one-use,
//! expiring link, kept hashed; registering or signing in through it; the account invited
//! by its email seeing it in the app; revocation; the rules on who may do what.

use crate::common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

async fn workspace_of(api: &Api) -> String {
    api.get("/api/me").await.1["default_workspace"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_link_registers_a_newcomer_into_the_workspace_once() {
    let env = Env::new().await;
    let open = env.start(&[]).await;
    open.user("owner@example.com").await;
    open.stop().await;
    // Registration closed: the invitation is the owner's leave.
    let srv = env.start(&["--disable-registration"]).await;
    let owner = srv.anon();
    owner.post("/api/auth/login", json!({"email": "owner@example.com", "password": PASSWORD})).await;
    let ws = workspace_of(&owner).await;
    let (status, made) = owner
        .post(&format!("/api/workspaces/{ws}/invitations"), json!({"email": "New@Example.com", "role": "owner"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let token = made["token"].as_str().unwrap().to_owned();
    assert_eq!(made["email"], "new@example.com");
    assert_eq!(made["role"], "owner");
    assert_eq!(made["expired"], false);
    assert!(made["link"].as_str().unwrap().ends_with(&format!("/app/-/invitation#{token}")), "{made}");
    assert!(token.len() >= 40);
    // Kept hashed: the secret is nowhere in the database.
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT token_hash FROM invitations").fetch_all(&srv.ctx.db.pool).await.unwrap();
    assert_eq!(stored, vec![cairn::testing::auth::sha256_hex(&token)]);

    // Whoever holds the link sees what it offers, without a credential.
    let newcomer = srv.anon();
    let (status, offer) = newcomer.get(&format!("/api/invitations/link?token={token}")).await;
    assert_eq!(status, StatusCode::OK, "{offer}");
    assert_eq!((offer["workspace"].as_str(), offer["role"].as_str()), (Some(ws.as_str()), Some("owner")));
    assert_eq!(offer["invited_by"], "owner@example.com");

    // Registering through it: an account, signed in, owner of the workspace.
    let form = json!({"token": token, "email": "new@example.com", "password": PASSWORD, "name": "Newcomer"});
    let (status, user) = newcomer.post("/api/invitations/register", form.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let (_, mine) = newcomer.get("/api/workspaces").await;
    let joined = mine["items"].as_array().unwrap().iter().find(|w| w["slug"] == ws.as_str()).cloned();
    assert_eq!(joined.map(|w| w["role"].clone()), Some(json!("owner")), "{mine}");
    // Used once: the link is gone, for looking up and for registering again.
    let (status, _) = newcomer.get(&format!("/api/invitations/link?token={token}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let again = srv
        .anon()
        .send(
            Method::POST,
            "/api/invitations/register",
            Some(json!({"token": token, "email": "other@example.com", "password": PASSWORD})),
        )
        .await;
    assert_problem(&again, 404, "invitation_not_found");
    let (_, total) = owner.get(&format!("/api/workspaces/{ws}/invitations")).await;
    assert_eq!(total["total"], 0);
    // A refused registration made no account (the link's check and the account are one).
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&srv.ctx.db.pool).await.unwrap();
    assert_eq!(count, 2);
    srv.stop().await;
}

#[tokio::test]
async fn a_signed_in_person_accepts_by_link_and_an_invited_account_sees_it_in_the_app() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("boss@example.com").await;
    let ws = workspace_of(&owner).await;
    let ann = srv.user("ann@example.com").await;
    let bob = srv.user("bob@example.com").await;

    // Ann had the email when invited: she sees it in the app, and accepts there.
    let (_, made) = owner.post(&format!("/api/workspaces/{ws}/invitations"), json!({"email": "ann@example.com"})).await;
    let (status, listed) = ann.get("/api/invitations").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["total"], 1, "{listed}");
    let id = listed["items"][0]["id"].as_i64().unwrap();
    assert_eq!(listed["items"][0]["workspace"], ws.as_str());
    // Nobody else does, and nobody else can accept it by its id.
    assert_eq!(bob.get("/api/invitations").await.1["total"], 0);
    let stolen = bob.send(Method::POST, &format!("/api/invitations/{id}/accept"), None).await;
    assert_problem(&stolen, 404, "invitation_not_found");
    let (status, joined) = ann.post(&format!("/api/invitations/{id}/accept"), json!({})).await;
    assert_eq!((status, joined), (StatusCode::OK, json!({"workspace": ws})));
    assert_eq!(owner.get(&format!("/api/workspaces/{ws}/members")).await.1["total"], 2);
    // Its link went with it.
    let token = made["token"].as_str().unwrap();
    assert_eq!(srv.anon().get(&format!("/api/invitations/link?token={token}")).await.0, StatusCode::NOT_FOUND);

    // Bob is sent a link made for another email: the link is the invitation.
    let (_, made) =
        owner.post(&format!("/api/workspaces/{ws}/invitations"), json!({"email": "robert@example.com"})).await;
    let (status, joined) = bob.post("/api/invitations/accept", json!({"token": made["token"]})).await;
    assert_eq!((status, joined), (StatusCode::OK, json!({"workspace": ws})));

    // Declining one made to the account removes it for the owner too.
    let other = srv.user("cy@example.com").await;
    owner.post(&format!("/api/workspaces/{ws}/invitations"), json!({"email": "cy@example.com"})).await;
    let id = other.get("/api/invitations").await.1["items"][0]["id"].as_i64().unwrap();
    assert_eq!(other.delete(&format!("/api/invitations/{id}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(owner.get(&format!("/api/workspaces/{ws}/invitations")).await.1["total"], 0);
    srv.stop().await;
}

#[tokio::test]
async fn owners_list_replace_and_revoke_and_nobody_else_may() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("own@example.com").await;
    let ws = workspace_of(&owner).await;
    let member = srv.user("mem@example.com").await;
    owner.post(&format!("/api/workspaces/{ws}/members"), json!({"email": "mem@example.com"})).await;

    let path = format!("/api/workspaces/{ws}/invitations");
    let (_, first) = owner.post(&path, json!({"email": "x@example.com"})).await;
    // Inviting the same email again replaces the earlier invitation: its link stops.
    let (_, second) = owner.post(&path, json!({"email": "x@example.com", "role": "owner"})).await;
    let (_, listed) = owner.get(&path).await;
    assert_eq!(listed["total"], 1, "{listed}");
    assert_eq!(listed["items"][0]["id"], second["id"]);
    assert_eq!(listed["items"][0]["invited_by"], "own@example.com");
    assert!(listed["items"][0].get("token").is_none() && listed["items"][0].get("link").is_none());
    assert_eq!(
        srv.anon().get(&format!("/api/invitations/link?token={}", first["token"].as_str().unwrap())).await.0,
        StatusCode::NOT_FOUND
    );

    // A member is told no; the one invited and outsiders learn nothing more.
    for (method, p, body) in [
        (Method::GET, path.clone(), None),
        (Method::POST, path.clone(), Some(json!({"email": "y@example.com"}))),
        (Method::DELETE, format!("{path}/{}", second["id"]), None),
    ] {
        assert_problem(&member.send(method.clone(), &p, body.clone()).await, 403, "owner_only");
        assert_eq!(srv.anon().send(method, &p, body).await.status, StatusCode::UNAUTHORIZED);
    }
    // Already a member: 409, and no invitation made.
    let again = owner.send(Method::POST, &path, Some(json!({"email": "mem@example.com"}))).await;
    assert_problem(&again, 409, "already_member");
    let bad = owner.send(Method::POST, &path, Some(json!({"email": "not an email"}))).await;
    assert_problem(&bad, 400, "invalid_email");

    // Revoked: the link stops at once; revoking again, or another workspace's, is 404.
    let token = second["token"].as_str().unwrap();
    assert_eq!(owner.delete(&format!("{path}/{}", second["id"])).await.0, StatusCode::NO_CONTENT);
    assert_eq!(srv.anon().get(&format!("/api/invitations/link?token={token}")).await.0, StatusCode::NOT_FOUND);
    let gone = owner.send(Method::DELETE, &format!("{path}/{}", second["id"]), None).await;
    assert_problem(&gone, 404, "invitation_not_found");
    let stranger = srv.user("str@example.com").await;
    let theirs = workspace_of(&stranger).await;
    let (_, made) =
        stranger.post(&format!("/api/workspaces/{theirs}/invitations"), json!({"email": "z@example.com"})).await;
    let cross = owner.send(Method::DELETE, &format!("{path}/{}", made["id"]), None).await;
    assert_problem(&cross, 404, "invitation_not_found");
    srv.stop().await;
}

#[tokio::test]
async fn links_expire_and_guessing_them_is_limited() {
    let env = Env::new().await;
    let srv = env.start(&["--login-max-failures-per-address", "3"]).await;
    let owner = srv.user("exp@example.com").await;
    let ws = workspace_of(&owner).await;
    // A token: it outlives the week the session (and the link) last.
    let owner = owner.with_bearer(&owner.pat().await);
    let (_, made) =
        owner.post(&format!("/api/workspaces/{ws}/invitations"), json!({"email": "late@example.com"})).await;
    let token = made["token"].as_str().unwrap().to_owned();

    // Eight days later the link no longer works, and shows as expired to the owner.
    srv.ctx.clock.advance(std::time::Duration::from_secs(8 * 24 * 3600));
    let (status, _) = srv.anon().get(&format!("/api/invitations/link?token={token}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, listed) = owner.get(&format!("/api/workspaces/{ws}/invitations")).await;
    assert_eq!(listed["items"][0]["expired"], true, "{listed}");

    // Guesses from one address (the expired link above was the first of three allowed):
    // past the ceiling, 429 — for the right link too.
    let (_, fresh) =
        owner.post(&format!("/api/workspaces/{ws}/invitations"), json!({"email": "late@example.com"})).await;
    let guesser = srv.anon();
    for i in 0..2 {
        let r = guesser.send(Method::GET, &format!("/api/invitations/link?token=guess{i}"), None).await;
        assert_problem(&r, 404, "invitation_not_found");
    }
    let limited = guesser
        .send(Method::GET, &format!("/api/invitations/link?token={}", fresh["token"].as_str().unwrap()), None)
        .await;
    assert_problem(&limited, 429, "too_many_attempts");
    assert!(limited.headers.get("retry-after").is_some());
    srv.stop().await;
}
