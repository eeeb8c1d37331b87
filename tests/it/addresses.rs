//! Addresses that never break (CONTRACT §5): a renamed page keeps answering at every slug
//! it had — `308` to the same route under its slug now — until a new page takes that slug
//! or the page is purged; two pages may share a title (a derived slug counts up); a save
//! to a page that went to the trash says who put it there.

use crate::common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A client of `api`'s account (by a PAT) that does not follow redirects, to see them.
async fn not_following(api: &Api) -> reqwest::Client {
    let token = api.pat().await;
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).default_headers(headers).build().unwrap()
}

async fn ws_of(api: &Api) -> String {
    api.get("/api/me").await.1["default_workspace"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_renamed_page_answers_308_at_every_old_slug_until_another_page_takes_it() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("acme@x.io").await;
    let ws = ws_of(&api).await;
    let (s, page) = api
        .post(
            "/api/pages",
            json!({"title": "Incident Response", "content": "# Incident Response\n\n## Triage\n\nCall the on-call."}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{page}");
    api.page("runbook", "Start at [[incident-response#triage]].").await;
    let (s, renamed) = api
        .post(
            "/api/pages/incident-response/rename",
            json!({"new_slug": "incident-management", "title": "Incident Management"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{renamed}");

    // Every route under the old slug answers 308 with the route under the new one, the
    // query string kept.
    let raw = not_following(&api).await;
    let routes = [
        ("GET", ""),
        ("GET", "/view"),
        ("GET", "/raw"),
        ("GET", "/children"),
        ("GET", "/history"),
        ("GET", "/suggest-links"),
        ("GET", "/summary"),
        ("PUT", ""),
        ("POST", "/move"),
        ("POST", "/rename"),
        ("DELETE", ""),
    ];
    for (method, tail) in routes {
        let url = format!("{}/api/pages/incident-response{tail}?ws={ws}", srv.url);
        let body =
            if method == "GET" { None } else { Some(json!({"content": "x", "new_slug": "zzz", "parent": null})) };
        let mut req = raw.request(method.parse().unwrap(), &url);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), StatusCode::PERMANENT_REDIRECT, "{method} {tail}");
        let location = res.headers()["location"].to_str().unwrap().to_owned();
        assert_eq!(location, format!("/api/pages/incident-management{tail}?ws={ws}"), "{method} {tail}");
        let problem: Value = res.json().await.unwrap();
        assert_eq!(
            (problem["code"].as_str(), problem["slug"].as_str()),
            (Some("page_moved"), Some("incident-management"))
        );
    }
    // Nothing of that moved, renamed or deleted the page.
    let (s, now) = api.get("/api/pages/incident-management").await;
    assert_eq!((s, now["revision"].clone()), (StatusCode::OK, renamed["revision"].clone()));

    // A client that follows redirects (as browsers and most libraries do) reads and
    // writes through the old address, `base_revision` included.
    let (s, read) = api.get(&format!("/api/pages/incident-response?ws={ws}")).await;
    assert_eq!((s, read["slug"].as_str()), (StatusCode::OK, Some("incident-management")));
    let edit =
        json!({"content": "# Incident Management\n\nEdited at the old address.", "base_revision": read["revision"]});
    let (s, saved) = api.put("/api/pages/incident-response", edit).await;
    assert_eq!((s, saved["slug"].as_str()), (StatusCode::OK, Some("incident-management")), "{saved}");
    let (s, stale) =
        api.put("/api/pages/incident-response", json!({"content": "late", "base_revision": read["revision"]})).await;
    assert_eq!((s, stale["code"].as_str()), (StatusCode::CONFLICT, Some("stale_revision")), "{stale}");

    // Chains resolve: a → b → c answers c for a.
    let (s, _) = api.post("/api/pages/incident-management/rename", json!({"new_slug": "incidents"})).await;
    assert_eq!(s, StatusCode::OK);
    for old in ["incident-response", "incident-management"] {
        let res = raw.get(format!("{}/api/pages/{old}/view", srv.url)).send().await.unwrap();
        assert_eq!(res.status(), StatusCode::PERMANENT_REDIRECT);
        assert_eq!(res.headers()["location"], "/api/pages/incidents/view");
    }
    // The rewritten link in the other page points at the page where it is now.
    assert_eq!(api.get("/api/pages/runbook").await.1["links"], json!(["incidents"]));

    // A title-only create passes over an old slug (another page's address); a page
    // created with that slug explicitly takes it, and the old address is then that page's.
    let (s, twin) = api.post("/api/pages", json!({"title": "Incident Response"})).await;
    assert_eq!((s, twin["slug"].as_str()), (StatusCode::CREATED, Some("incident-response-2")), "{twin}");
    let (s, taken) = api.post("/api/pages", json!({"slug": "incident-management", "title": "A new page"})).await;
    assert_eq!(s, StatusCode::CREATED, "{taken}");
    let (s, now) = api.get("/api/pages/incident-management").await;
    assert_eq!((s, now["title"].as_str()), (StatusCode::OK, Some("A new page")));
    let res = raw.get(format!("{}/api/pages/incident-response", srv.url)).send().await.unwrap();
    assert_eq!(res.headers()["location"], "/api/pages/incidents", "the other old slug still answers");

    // A rebuild of the index from the repository keeps the old slugs.
    cairn::testing::reindex::all(&srv.ctx).await.unwrap();
    let res = raw.get(format!("{}/api/pages/incident-response", srv.url)).send().await.unwrap();
    assert_eq!(
        (res.status(), res.headers()["location"].to_str().unwrap()),
        (StatusCode::PERMANENT_REDIRECT, "/api/pages/incidents")
    );
    assert_eq!(api.get("/api/pages/incident-management").await.1["title"], "A new page");

    // Someone outside the workspace learns nothing from an old slug.
    let other = srv.user("outsider@x.io").await;
    let (s, body) = other.get(&format!("/api/pages/incident-response?ws={ws}")).await;
    assert_eq!((s, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("workspace_not_found")));

    // In the trash, the page answers 404 at its slug and its old ones, saying who put it
    // there; purged, nothing is left of either.
    assert_eq!(api.delete("/api/pages/incidents").await.0, StatusCode::NO_CONTENT);
    for slug in ["incidents", "incident-response"] {
        let (s, body) = api.put(&format!("/api/pages/{slug}"), json!({"content": "too late"})).await;
        assert_eq!((s, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("page_not_found")), "{body}");
        assert_eq!(body["trashed"]["slug"], "incidents", "{body}");
        assert_eq!(body["trashed"]["deleted_by"]["name"], "acme@x.io", "{body}");
        assert!(body["trashed"]["deleted_at"].is_string(), "{body}");
    }
    assert_eq!(api.post("/api/trash/incidents/purge", json!({})).await.0, StatusCode::NO_CONTENT);
    let (s, body) = api.get("/api/pages/incident-response").await;
    assert_eq!((s, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("page_not_found")));
    assert!(body.get("trashed").is_none(), "{body}");
    srv.stop().await;
}

#[tokio::test]
async fn two_pages_may_share_a_title() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("titles@x.io").await;
    api.page("team-a", "# Team A").await;
    api.page("team-b", "# Team B").await;
    let mut slugs = Vec::new();
    for parent in ["team-a", "team-b", "team-a"] {
        let (s, page) = api.post("/api/pages", json!({"title": "Onboarding", "parent": parent})).await;
        assert_eq!((s, page["title"].as_str()), (StatusCode::CREATED, Some("Onboarding")), "{page}");
        slugs.push(page["slug"].as_str().unwrap().to_owned());
    }
    assert_eq!(slugs, ["onboarding", "onboarding-2", "onboarding-3"]);
    // In the trash a slug is still taken; a slug given explicitly and taken is refused.
    assert_eq!(api.delete("/api/pages/onboarding-3").await.0, StatusCode::NO_CONTENT);
    let (_, page) = api.post("/api/pages", json!({"title": "Onboarding"})).await;
    assert_eq!(page["slug"], "onboarding-4");
    let (s, body) = api.post("/api/pages", json!({"title": "Onboarding", "slug": "onboarding"})).await;
    assert_eq!((s, body["code"].as_str()), (StatusCode::CONFLICT, Some("page_exists")));

    // The editor asks which address a new page would get, and whether one is free.
    let (s, next) = api.get("/api/slug?title=Onboarding").await;
    assert_eq!((s, next), (StatusCode::OK, json!({"slug": "onboarding-5", "available": true})));
    let (_, fresh) = api.get("/api/slug?title=Brand%20New").await;
    assert_eq!(fresh, json!({"slug": "brand-new", "available": true}));
    assert_eq!(api.get("/api/slug?slug=onboarding-3").await.1, json!({"slug": "onboarding-3", "available": false}));
    assert_eq!(api.get("/api/slug?slug=my-page").await.1, json!({"slug": "my-page", "available": true}));
    let (s, body) = api.get("/api/slug?slug=Not%20A%20Slug").await;
    assert_eq!((s, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_slug")));
    let (s, body) = api.get("/api/slug").await;
    assert_eq!((s, body["code"].as_str()), (StatusCode::BAD_REQUEST, Some("title_or_slug_required")));
    srv.stop().await;
}

/// A save based on a revision someone else replaced is told whose change it meets, and
/// a merge's conflict markers are named for the people behind each side.
#[tokio::test]
async fn a_conflict_names_who_made_the_other_change() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ann = srv.user("ann@x.io").await;
    let ws = ws_of(&ann).await;
    let owner_token = ann.pat().await;
    let (_, bob_user) = {
        let bob = srv.user("bob@x.io").await;
        let me = bob.get("/api/me").await.1;
        (bob, me)
    };
    let (s, _) =
        ann.post(&format!("/api/workspaces/{ws}/members"), json!({"email": bob_user["email"], "role": "member"})).await;
    assert_eq!(s, StatusCode::CREATED);
    let base = ann.page("plan", "# Plan\n\nline one\n").await;
    let bob = srv.anon();
    let (s, _) = bob.post("/api/auth/login", json!({"email": "bob@x.io", "password": PASSWORD})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, theirs) =
        bob.put(&format!("/api/pages/plan?ws={ws}"), json!({"content": "# Plan\n\nline one, Bob's way\n"})).await;
    assert_eq!(s, StatusCode::OK, "{theirs}");
    let ann = ann.with_bearer(&owner_token);
    let mine = json!({"content": "# Plan\n\nline one, Ann's way\n", "base_revision": base["revision"]});
    let (s, stale) = ann.put("/api/pages/plan", mine.clone()).await;
    assert_eq!((s, stale["code"].as_str()), (StatusCode::CONFLICT, Some("stale_revision")));
    assert_eq!(stale["theirs"]["author"]["name"], "bob@x.io", "{stale}");
    assert_eq!(stale["theirs"]["revision"], theirs["revision"]);
    assert_eq!(stale["theirs"]["at"], theirs["updated_at"]);
    let mut merge = mine;
    merge["merge"] = json!(true);
    let (s, conflict) = ann.put("/api/pages/plan", merge).await;
    assert_eq!((s, conflict["code"].as_str()), (StatusCode::CONFLICT, Some("merge_conflict")), "{conflict}");
    assert_eq!(conflict["theirs"]["author"]["name"], "bob@x.io");
    let merged = conflict["merged"].as_str().unwrap();
    let at = theirs["updated_at"].as_str().unwrap()[..16].replace('T', " ");
    assert!(merged.contains("<<<<<<< Your edit\n"), "{merged}");
    assert!(merged.contains(&format!(">>>>>>> bob@x.io, {at} UTC\n")), "{merged}");
    assert!(!merged.contains("ours") && !merged.contains("theirs"), "{merged}");

    // Saved with its markers left in, the text does not rename the page.
    let (s, saved) =
        ann.put("/api/pages/plan", json!({"content": merged, "base_revision": conflict["current_revision"]})).await;
    assert_eq!((s, saved["title"].as_str()), (StatusCode::OK, Some("Plan")), "{saved}");
    let merged_first = format!("{}\n# Plan\n", merged.trim_start_matches("# Plan\n\n"));
    let (s, saved) = ann.put("/api/pages/plan", json!({"content": merged_first})).await;
    assert_eq!((s, saved["title"].as_str()), (StatusCode::OK, Some("Plan")), "{saved}");
    srv.stop().await;
}
