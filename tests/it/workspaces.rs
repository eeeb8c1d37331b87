//! Workspaces, members, roles and the 404 rule (docs/api.md, "Workspaces").

use crate::common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn create_list_update_delete() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("owner@x.io").await;

    let (s, ws) = api.post("/api/workspaces", json!({"name": "Team Handbook"})).await;
    assert_eq!(s, StatusCode::CREATED, "{ws}");
    assert_eq!(ws["slug"], "team-handbook");
    assert_eq!(ws["name"], "Team Handbook");
    assert_eq!(ws["role"], "owner");
    let all =
        json!({"rename": true, "delete": true, "manage_members": true, "manage_webhooks": true, "erase_history": true});
    assert_eq!(ws["can"], all, "an owner may do everything");
    assert!(ws["created_at"].is_string());
    let (s, ws2) = api.post("/api/workspaces", json!({"name": "Ops", "slug": "ops.runbooks"})).await;
    assert_eq!(s, StatusCode::CREATED, "{ws2}");

    for (body, status, code) in [
        (json!({"name": "X", "slug": "Bad Slug"}), 400, "invalid_slug"),
        (json!({"name": "X", "slug": "-x"}), 400, "invalid_slug"),
        (json!({"name": "X", "slug": "a/b"}), 400, "invalid_slug"),
        (json!({"name": "!!!"}), 400, "invalid_slug"),
        (json!({"name": ""}), 400, "invalid_workspace_name"),
        (json!({"name": "Again", "slug": "team-handbook"}), 409, "workspace_slug_taken"),
        (json!({"slug": "x"}), 422, "invalid_body"),
        (json!({"name": ["x"]}), 422, "invalid_body"),
    ] {
        let r = api.send(Method::POST, "/api/workspaces", Some(body)).await;
        assert_problem(&r, status, code);
    }
    // Slugs are unique in the instance, not per user.
    let other = srv.user("other@x.io").await;
    let r = other.send(Method::POST, "/api/workspaces", Some(json!({"name": "Team Handbook"}))).await;
    assert_problem(&r, 409, "workspace_slug_taken");

    let (_, list) = api.get("/api/workspaces").await;
    let slugs: Vec<_> = list["items"].as_array().unwrap().iter().map(|w| w["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["ops.runbooks", "owner", "team-handbook"]);
    assert_eq!(list["total"], 3);

    let (s, upd) = api.put("/api/workspaces/team-handbook", json!({"name": "The Handbook"})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(upd["name"], "The Handbook");
    assert_eq!(upd["slug"], "team-handbook");
    let r = api.send(Method::PUT, "/api/workspaces/team-handbook", Some(json!({"name": 7}))).await;
    assert_problem(&r, 422, "invalid_body");

    // Deleting moves its files aside, never destroys them.
    let dir = env.data_dir().join("workspaces").join("team-handbook.git");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("keep.md"), "# kept").unwrap();
    assert_eq!(api.delete("/api/workspaces/team-handbook").await.0, StatusCode::NO_CONTENT);
    assert!(!dir.exists());
    let aside: Vec<_> = std::fs::read_dir(env.data_dir().join("deleted")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(aside.len(), 1);
    assert!(aside[0].file_name().unwrap().to_str().unwrap().starts_with("team-handbook-"));
    assert_eq!(std::fs::read_to_string(aside[0].join("keep.md")).unwrap(), "# kept");
    assert_eq!(api.delete("/api/workspaces/team-handbook").await.0, StatusCode::NOT_FOUND);
    let (_, list) = api.get("/api/workspaces").await;
    assert_eq!(list["total"], 2);

    // The slug is free again.
    assert_eq!(api.post("/api/workspaces", json!({"name": "Team Handbook"})).await.0, StatusCode::CREATED);
    srv.stop().await;
}

#[tokio::test]
async fn deleting_the_default_workspace_picks_another() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("del@x.io").await;
    api.post("/api/workspaces", json!({"name": "Second"})).await;
    assert_eq!(api.delete("/api/workspaces/del").await.0, StatusCode::NO_CONTENT);
    let (_, me) = api.get("/api/me").await;
    assert_eq!(me["default_workspace"], "second");
    assert_eq!(api.delete("/api/workspaces/second").await.0, StatusCode::NO_CONTENT);
    let (_, me) = api.get("/api/me").await;
    assert!(me["default_workspace"].is_null());
    srv.stop().await;
}

#[tokio::test]
async fn members_and_roles() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("olga@x.io").await;
    let member = srv.user("max@x.io").await;
    srv.user("third@x.io").await;
    owner.post("/api/workspaces", json!({"name": "Shared"})).await;

    let (s, m) = owner.post("/api/workspaces/shared/members", json!({"email": " MAX@x.io "})).await;
    assert_eq!(s, StatusCode::CREATED, "{m}");
    assert_eq!(m["email"], "max@x.io");
    assert_eq!(m["role"], "member");
    let max_id = m["id"].as_i64().unwrap();
    let r = owner.send(Method::POST, "/api/workspaces/shared/members", Some(json!({"email": "max@x.io"}))).await;
    assert_problem(&r, 409, "already_member");
    let r = owner.send(Method::POST, "/api/workspaces/shared/members", Some(json!({"email": "nobody@x.io"}))).await;
    assert_problem(&r, 404, "user_not_found");
    let r = owner
        .send(Method::POST, "/api/workspaces/shared/members", Some(json!({"email": "third@x.io", "role": "admin"})))
        .await;
    assert_problem(&r, 422, "invalid_body");

    let (s, list) = member.get("/api/workspaces/shared/members").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(list["total"], 2);
    let roles: Vec<_> = list["items"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["owner", "member"]);
    let (_, mine) = member.get("/api/workspaces").await;
    assert!(mine["items"].as_array().unwrap().iter().any(|w| w["slug"] == "shared" && w["role"] == "member"));
    // What a member may do is what the owner-only routes below refuse it.
    let shared = mine["items"].as_array().unwrap().iter().find(|w| w["slug"] == "shared").unwrap().clone();
    let none = json!({"rename": false, "delete": false, "manage_members": false, "manage_webhooks": false, "erase_history": false});
    assert_eq!(shared["can"], none);

    // A member may not do owner-only things: 403 (it can see the workspace).
    let r = member.send(Method::PUT, "/api/workspaces/shared", Some(json!({"name": "Mine"}))).await;
    assert_problem(&r, 403, "owner_only");
    let r = member.send(Method::DELETE, "/api/workspaces/shared", None).await;
    assert_problem(&r, 403, "owner_only");
    let r = member.send(Method::POST, "/api/workspaces/shared/members", Some(json!({"email": "third@x.io"}))).await;
    assert_problem(&r, 403, "owner_only");
    let (_, olist) = owner.get("/api/workspaces/shared/members").await;
    let olga_id = olist["items"][0]["id"].as_i64().unwrap();
    let r = member.send(Method::DELETE, &format!("/api/workspaces/shared/members/{olga_id}"), None).await;
    assert_problem(&r, 403, "owner_only");

    // The last owner cannot go; a second owner makes it possible.
    let r = owner.send(Method::DELETE, &format!("/api/workspaces/shared/members/{olga_id}"), None).await;
    assert_problem(&r, 400, "last_owner");
    let (s, _) = owner.post("/api/workspaces/shared/members", json!({"email": "third@x.io", "role": "owner"})).await;
    assert_eq!(s, StatusCode::CREATED);
    let r = owner.send(Method::DELETE, "/api/workspaces/shared/members/999999", None).await;
    assert_problem(&r, 404, "member_not_found");

    // A member removes itself; then the workspace is invisible to it.
    assert_eq!(member.delete(&format!("/api/workspaces/shared/members/{max_id}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(member.get("/api/workspaces/shared/members").await.0, StatusCode::NOT_FOUND);
    assert_eq!(owner.delete(&format!("/api/workspaces/shared/members/{olga_id}")).await.0, StatusCode::NO_CONTENT);
    assert_eq!(owner.get("/api/workspaces/shared/members").await.0, StatusCode::NOT_FOUND);
    srv.stop().await;
}

/// Two owners leaving at the same instant: exactly one of them goes, whatever the
/// interleaving, and the other is told it is the last owner; a workspace is never left
/// without an owner.
#[tokio::test]
async fn two_owners_leaving_at_once_leave_one_owner() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let a = srv.user("ada@x.io").await;
    let b = srv.user("bea@x.io").await;
    let (_, me_b) = b.get("/api/me").await;
    let (_, me_a) = a.get("/api/me").await;
    for round in 0..12 {
        let ws = format!("race-{round}");
        let (s, body) = a.post("/api/workspaces", json!({"name": ws, "slug": ws})).await;
        assert_eq!(s, StatusCode::CREATED, "{body}");
        let (s, body) =
            a.post(&format!("/api/workspaces/{ws}/members"), json!({"email": "bea@x.io", "role": "owner"})).await;
        assert_eq!(s, StatusCode::CREATED, "{body}");
        let leave = |api: &Api, id: i64| {
            let (api, ws) = (api.clone(), ws.clone());
            tokio::spawn(async move { api.delete(&format!("/api/workspaces/{ws}/members/{id}")).await.0 })
        };
        let (ra, rb) = tokio::join!(leave(&a, me_a["id"].as_i64().unwrap()), leave(&b, me_b["id"].as_i64().unwrap()));
        // One leaves; the other is told it is the last owner (never a database error).
        let mut answers = [ra.unwrap(), rb.unwrap()];
        answers.sort();
        assert_eq!(answers, [StatusCode::NO_CONTENT, StatusCode::BAD_REQUEST], "round {round}");
        let owners: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM memberships m JOIN workspaces w ON w.id = m.workspace_id \
             WHERE w.slug = $1 AND m.role = 'owner'",
        )
        .bind(&ws)
        .fetch_one(&srv.ctx.db.pool)
        .await
        .unwrap();
        assert_eq!(owners, 1, "round {round}");
    }
    srv.stop().await;
}

/// A workspace access is checked once and then kept (credentials/cache.rs); what
/// changes it shows on the very next request: a removed member gets 404 for reads and
/// saves alike, a renamed workspace answers its new name, and a member added again is
/// let in at once.
#[tokio::test]
async fn a_kept_access_never_outlives_its_membership() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("keep@x.io").await;
    let member = srv.user("kept@x.io").await;
    let member = member.with_bearer(&member.pat().await);
    owner.post("/api/workspaces", json!({"name": "Team Notes"})).await;
    let (s, m) = owner.post("/api/workspaces/team-notes/members", json!({"email": "kept@x.io"})).await;
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let member_id = m["id"].as_i64().unwrap();
    let (s, page) = member.post("/api/pages?ws=team-notes", json!({"slug": "note", "content": "one"})).await;
    assert_eq!(s, StatusCode::CREATED, "{page}");
    // Twice each, so the second request is answered from the kept access.
    for _ in 0..2 {
        assert_eq!(member.get("/api/workspaces/team-notes/members").await.0, StatusCode::OK);
        let (s, body) = member.put("/api/pages/note?ws=team-notes", json!({"content": "two"})).await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }

    // Renamed: the owner's own kept access carries the new name.
    let (s, ws) = owner.put("/api/workspaces/team-notes", json!({"name": "Renamed"})).await;
    assert_eq!((s, ws["name"].clone()), (StatusCode::OK, json!("Renamed")));
    let (_, ws) = owner.put("/api/workspaces/team-notes", json!({})).await;
    assert_eq!(ws["name"], "Renamed", "{ws}");

    // Removed: the member's next requests, reads and saves, are 404.
    assert_eq!(
        owner.delete(&format!("/api/workspaces/team-notes/members/{member_id}")).await.0,
        StatusCode::NO_CONTENT
    );
    assert_problem(
        &member.send(Method::GET, "/api/workspaces/team-notes/members", None).await,
        404,
        "workspace_not_found",
    );
    let r = member.send(Method::PUT, "/api/pages/note?ws=team-notes", Some(json!({"content": "three"}))).await;
    assert_problem(&r, 404, "workspace_not_found");
    let r = member.send(Method::POST, "/api/pages?ws=team-notes", Some(json!({"slug": "other", "content": "x"}))).await;
    assert_problem(&r, 404, "workspace_not_found");
    let (_, now) = owner.get("/api/pages/note?ws=team-notes").await;
    assert_eq!(now["content"], "two", "the refused save wrote nothing");

    // Added again: let in at once (a refusal is never kept).
    let (s, _) = owner.post("/api/workspaces/team-notes/members", json!({"email": "kept@x.io"})).await;
    assert_eq!(s, StatusCode::CREATED);
    let (s, body) = member.put("/api/pages/note?ws=team-notes", json!({"content": "four"})).await;
    assert_eq!(s, StatusCode::OK, "{body}");

    // Deleted: gone for everyone at once.
    assert_eq!(owner.delete("/api/workspaces/team-notes").await.0, StatusCode::NO_CONTENT);
    let r = member.send(Method::PUT, "/api/pages/note?ws=team-notes", Some(json!({"content": "five"}))).await;
    assert_problem(&r, 404, "workspace_not_found");
    srv.stop().await;
}

#[tokio::test]
async fn switch_changes_the_default_for_every_credential() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("sw@x.io").await;
    let pat = api.with_bearer(&api.pat().await);
    api.post("/api/workspaces", json!({"name": "Notes"})).await;
    let (s, body) = api.post("/api/workspaces/notes/switch", json!({})).await;
    assert_eq!((s, body), (StatusCode::OK, json!({"default_workspace": "notes"})));
    assert_eq!(pat.get("/api/me").await.1["default_workspace"], "notes");
    srv.stop().await;
}

/// Every route that takes a workspace answers 404 — never 403 — to a non-member, for a
/// workspace that exists exactly as for one that does not.
#[tokio::test]
async fn outsiders_get_404_on_every_workspace_route() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("in@x.io").await;
    let outsider = srv.user("out@x.io").await;
    owner.post("/api/workspaces", json!({"name": "Secret"})).await;
    let (_, members) = owner.get("/api/workspaces/secret/members").await;
    let owner_id = members["items"][0]["id"].as_i64().unwrap();

    let routes: Vec<(Method, String, Option<serde_json::Value>)> = vec![
        (Method::PUT, "/api/workspaces/{ws}".into(), Some(json!({"name": "x"}))),
        (Method::DELETE, "/api/workspaces/{ws}".into(), None),
        (Method::GET, "/api/workspaces/{ws}/members".into(), None),
        (Method::POST, "/api/workspaces/{ws}/members".into(), Some(json!({"email": "out@x.io"}))),
        (Method::DELETE, format!("/api/workspaces/{{ws}}/members/{owner_id}"), None),
        (Method::POST, "/api/workspaces/{ws}/switch".into(), None),
        (Method::GET, "/api/workspaces/{ws}/invitations".into(), None),
        (Method::POST, "/api/workspaces/{ws}/invitations".into(), Some(json!({"email": "x@x.io"}))),
        (Method::DELETE, "/api/workspaces/{ws}/invitations/1".into(), None),
    ];
    for (method, path, body) in routes {
        let hidden = outsider.send(method.clone(), &path.replace("{ws}", "secret"), body.clone()).await;
        let missing = outsider.send(method.clone(), &path.replace("{ws}", "no-such-ws"), body.clone()).await;
        assert_problem(&hidden, 404, "workspace_not_found");
        assert_problem(&missing, 404, "workspace_not_found");
        assert_eq!(
            hidden.text.replace("secret", "WS"),
            missing.text.replace("no-such-ws", "WS"),
            "{method} {path}: the answer must not tell an existing workspace apart"
        );
        // And without credentials it is 401 first.
        let anon = srv.anon().send(method.clone(), &path.replace("{ws}", "secret"), body).await;
        assert_eq!(anon.status, StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // Nothing changed for the owner.
    let (s, ws) = owner.get("/api/workspaces").await;
    assert_eq!(s, StatusCode::OK);
    assert!(ws["items"].as_array().unwrap().iter().any(|w| w["slug"] == "secret" && w["name"] == "Secret"));
    assert_eq!(owner.get("/api/workspaces/secret/members").await.1["total"], 1);
    srv.stop().await;
}

/// Every read the API documents with `ws=` — pages, search, insights, the new-page address
/// and the rest, as /openapi.json lists them — answers a non-member 404 exactly as for a
/// workspace that does not exist, and 401 without a credential.
#[tokio::test]
async fn outsiders_get_404_on_every_read_that_takes_a_workspace() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("reads-in@x.io").await;
    let outsider = srv.user("reads-out@x.io").await;
    owner.post("/api/workspaces", json!({"name": "Secret"})).await;
    owner.post("/api/pages?ws=secret", json!({"slug": "plan", "content": "# Plan"})).await;
    let (_, doc) = owner.get("/openapi.json").await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(params) = item["get"]["parameters"].as_array() else { continue };
        if !params.iter().any(|p| p["name"] == "ws") {
            continue;
        }
        let concrete = path.replace("{slug}", "plan").replace("{sha}", &"0".repeat(40)).replace("{webhook_id}", "1");
        let required: String = params
            .iter()
            .filter(|p| p["in"] == "query" && p["name"] != "ws")
            .filter_map(|p| match p["name"].as_str() {
                Some("q") => Some("&q=plan"),
                Some("title") => Some("&title=Plan"),
                Some("slugs") => Some("&slugs=plan"),
                _ => None,
            })
            .collect();
        let hidden = outsider.send(Method::GET, &format!("{concrete}?ws=secret{required}"), None).await;
        let missing = outsider.send(Method::GET, &format!("{concrete}?ws=no-such-ws{required}"), None).await;
        // (A webhook is named by its id, which no workspace here holds: its own 404.)
        let code = if path.contains("{webhook_id}") { "webhook_not_found" } else { "workspace_not_found" };
        assert_problem(&hidden, 404, code);
        assert_eq!(hidden.text.replace("secret", "WS"), missing.text.replace("no-such-ws", "WS"), "{path}");
        let anon = srv.anon().send(Method::GET, &format!("{concrete}?ws=secret{required}"), None).await;
        assert_eq!(anon.status, StatusCode::UNAUTHORIZED, "{path}");
        checked += 1;
    }
    assert!(checked >= 20, "{checked} routes");
    srv.stop().await;
}

/// Every write the API documents with `ws=` answers a non-member the workspace's 404
/// before it reads the body: a body a member would be told is malformed (422) tells an
/// outsider nothing more.
#[tokio::test]
async fn outsiders_get_404_before_their_body_is_read() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("writes-in@x.io").await;
    let outsider = srv.user("writes-out@x.io").await;
    owner.post("/api/workspaces", json!({"name": "Secret"})).await;
    owner.post("/api/pages?ws=secret", json!({"slug": "plan", "content": "# Plan"})).await;
    let (_, doc) = owner.get("/openapi.json").await;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, verb) in [(Method::POST, "post"), (Method::PUT, "put")] {
            let Some(params) = item[verb]["parameters"].as_array() else { continue };
            if !params.iter().any(|p| p["name"] == "ws") || path.contains("{webhook_id}") {
                continue;
            }
            let concrete = path.replace("{slug}", "plan").replace("{sha}", &"0".repeat(40));
            let malformed = Some(json!(["not", "an", "object"]));
            let member = owner.send(method.clone(), &format!("{concrete}?ws=secret"), malformed.clone()).await;
            let hidden = outsider.send(method, &format!("{concrete}?ws=secret"), malformed).await;
            assert!(!member.text.contains("workspace_not_found"), "{verb} {path}: {}", member.text);
            assert_problem(&hidden, 404, "workspace_not_found");
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} routes");
    srv.stop().await;
}
