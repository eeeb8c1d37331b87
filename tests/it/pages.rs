//! Pages on git: the write path, reads, history, trash (docs/api.md, "Pages").

use crate::common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[tokio::test]
async fn create_get_and_the_title_tag_link_rules() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("pat@x.io").await;
    let content = "---\ntags: [Guide, setup]\n---\n# Getting Started\n\nSee [[install]] and [[Other Page|the other]]. #Onboarding\n\n```\n[[not-a-link]] #notatag\n```\n";
    let r = api.send(Method::POST, "/api/pages", Some(json!({"title": "Getting Started!", "content": content}))).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let page = r.json();
    assert_eq!(page["slug"], "getting-started");
    assert_eq!(page["title"], "Getting Started!");
    assert_eq!(page["content"], content);
    assert_eq!(page["tags"], json!(["guide", "onboarding", "setup"]));
    assert_eq!(page["links"], json!(["install", "other-page"]));
    assert_eq!(page["workspace"], "pat");
    assert!(page["parent"].is_null());
    assert_eq!(page["updated_by"]["name"], "pat@x.io");
    let rev = page["revision"].as_str().unwrap();
    assert_eq!(rev.len(), 40);
    assert_eq!(r.headers.get("etag").unwrap().to_str().unwrap(), format!("\"{rev}\""));

    let r = api.send(Method::GET, "/api/pages/getting-started", None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json(), page);
    assert_eq!(r.headers.get("etag").unwrap().to_str().unwrap(), format!("\"{rev}\""));
    let raw = api.send(Method::GET, "/api/pages/getting-started/raw", None).await;
    assert_eq!(raw.status, StatusCode::OK);
    assert!(raw.headers.get("content-type").unwrap().to_str().unwrap().starts_with("text/markdown"));
    assert_eq!(raw.text, content);

    // Title precedence: front matter, then first H1, then previous title, then slug.
    let p = api.page("fm", "---\ntitle: From Front Matter\n---\n# Heading\n").await;
    assert_eq!(p["title"], "From Front Matter");
    let p = api.page("h1", "Setext Title\n============\n\ntext").await;
    assert_eq!(p["title"], "Setext Title");
    let p = api.page("bare", "no heading here").await;
    assert_eq!(p["title"], "bare");
    let (_, p) = api.put("/api/pages/h1", json!({"content": "now without a heading"})).await;
    assert_eq!(p["title"], "Setext Title", "the previous title stays");
    let (_, p) = api.put("/api/pages/h1", json!({"title": "Explicit"})).await;
    assert_eq!(p["title"], "Explicit");
    srv.stop().await;
}

#[tokio::test]
async fn page_input_rules() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("rules@x.io").await;
    let exactly = "a".repeat(1_048_576);
    let (s, _) = api.post("/api/pages", json!({"slug": "max", "content": exactly})).await;
    assert_eq!(s, StatusCode::CREATED, "exactly 1 MiB is allowed");
    let over = "a".repeat(1_048_577);
    let r = api.send(Method::POST, "/api/pages", Some(json!({"slug": "over", "content": over}))).await;
    assert_problem(&r, 400, "content_too_large");
    // Multi-byte: 1 MiB counts bytes, not characters.
    let multibyte = "é".repeat(524_289);
    let r = api.send(Method::PUT, "/api/pages/max", Some(json!({"content": multibyte}))).await;
    assert_problem(&r, 400, "content_too_large");
    for (body, status, code) in [
        (json!({"slug": "Bad"}), 400, "invalid_slug"),
        (json!({"slug": ".hidden"}), 400, "invalid_slug"),
        (json!({"slug": "a/b"}), 400, "invalid_slug"),
        (json!({"slug": "x".repeat(129)}), 400, "invalid_slug"),
        (json!({"content": "x"}), 400, "title_or_slug_required"),
        (json!({"slug": "max"}), 409, "page_exists"),
        (json!({"slug": "orphan", "parent": "nope"}), 400, "parent_not_found"),
        (json!({"slug": 5}), 422, "invalid_body"),
        (json!({"slug": "ok", "content": ["x"]}), 422, "invalid_body"),
    ] {
        let r = api.send(Method::POST, "/api/pages", Some(body.clone())).await;
        assert_problem(&r, status, code);
    }
    let r = api.send(Method::GET, "/api/pages/missing", None).await;
    assert_problem(&r, 404, "page_not_found");
    let r = api.send(Method::PUT, "/api/pages/missing", Some(json!({"content": "x"}))).await;
    assert_problem(&r, 404, "page_not_found");
    // Nothing half-written: the refused creates made no commits and no rows.
    let (_, notes) = api.get("/api/notes").await;
    assert_eq!(notes["total"], 1);
    srv.stop().await;
}

#[tokio::test]
async fn stale_updates_are_refused_and_merges_keep_both_edits() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("merge@x.io").await;
    let base = api.page("doc", "line one\nline two\nline three\nline four\nline five\n").await;
    let base_rev = base["revision"].as_str().unwrap().to_owned();

    let (s, a) = api
        .put(
            "/api/pages/doc",
            json!({"content": "LINE ONE\nline two\nline three\nline four\nline five\n", "base_revision": base_rev}),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let current = a["revision"].as_str().unwrap().to_owned();
    // Stale without merge: 409 with the current revision, nothing saved.
    let r =
        api.send(Method::PUT, "/api/pages/doc", Some(json!({"content": "mine\n", "base_revision": base_rev}))).await;
    assert_problem(&r, 409, "stale_revision");
    assert_eq!(r.json()["current_revision"], current);
    // If-Match works the same way.
    let r = api
        .client
        .put(format!("{}/api/pages/doc", srv.url))
        .header("if-match", format!("\"{base_rev}\""))
        .json(&json!({"content": "mine\n"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT);
    assert_eq!(api.get("/api/pages/doc").await.1["revision"], current);

    // A non-overlapping stale edit merges; both edits are kept.
    let (s, merged) = api
        .put(
            "/api/pages/doc",
            json!({"content": "line one\nline two\nline three\nline four\nLINE FIVE\n", "base_revision": base_rev, "merge": true}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{merged}");
    assert_eq!(merged["content"], "LINE ONE\nline two\nline three\nline four\nLINE FIVE\n");
    // An overlapping one is 409 with the merged text and conflict markers.
    let r = api
        .send(
            Method::PUT,
            "/api/pages/doc",
            Some(json!({"content": "Line One!\nline two\nline three\nline four\nline five\n", "base_revision": base_rev, "merge": true})),
        )
        .await;
    assert_problem(&r, 409, "merge_conflict");
    let body = r.json();
    assert_eq!(body["current_revision"], merged["revision"]);
    let text = body["merged"].as_str().unwrap();
    assert!(
        text.contains("<<<<<<<") && text.contains(">>>>>>>") && text.contains("Line One!") && text.contains("LINE ONE"),
        "{text}"
    );
    // Marked from the saver's side, by name: "Your edit" is the edit sent, the save it
    // missed is its author's, with the time.
    assert!(text.contains("<<<<<<< Your edit\nLine One!\n") && text.contains("LINE ONE\n>>>>>>> "), "{text}");
    assert_eq!(body["theirs"]["revision"], merged["revision"]);
    srv.stop().await;
}

#[tokio::test]
async fn twenty_concurrent_updates_with_one_base_exactly_one_wins() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("race@x.io").await;
    let base = api.page("hot", "start\n").await;
    let rev = base["revision"].as_str().unwrap().to_owned();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let api = api.clone();
        let rev = rev.clone();
        tasks.push(tokio::spawn(async move {
            api.put("/api/pages/hot", json!({"content": format!("writer {i}\n"), "base_revision": rev})).await.0
        }));
    }
    let mut ok = 0;
    let mut conflict = 0;
    for t in tasks {
        match t.await.unwrap() {
            StatusCode::OK => ok += 1,
            StatusCode::CONFLICT => conflict += 1,
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!((ok, conflict), (1, 19));
    let (_, h) = api.get("/api/pages/hot/history").await;
    assert_eq!(h["total"], 2);
    srv.stop().await;
}

/// A save answers what it committed — never a later save that landed before the answer
/// was read. A pause after each write's lock is released lets the next save land first.
#[tokio::test]
async fn every_save_answers_its_own_commit() {
    let env = Env::new().await;
    // One pooled connection: nothing a write does under its lock may wait for another.
    let srv = env.start(&["--db-max-connections", "1"]).await;
    srv.ctx.test_hooks.pause_after_write_ms.store(30, std::sync::atomic::Ordering::Relaxed);
    let api = srv.user("own@x.io").await;
    // Sixteen sections far apart, so that every edit merges with every other.
    let section = |i: usize, text: &str| format!("## Section {i}\n\n{text}\n\nspacer a\nspacer b\nspacer c\n\n");
    let base: String = (0..16).map(|i| section(i, "untouched")).collect();
    let created = api.page("race", &base).await;
    let rev = created["revision"].as_str().unwrap().to_owned();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let api = api.clone();
        let (rev, base) = (rev.clone(), base.clone());
        tasks.push(tokio::spawn(async move {
            let content =
                base.replacen(&format!("## Section {i}\n\nuntouched"), &format!("## Section {i}\n\nedited by {i}"), 1);
            let body = json!({"content": content, "base_revision": rev, "merge": true});
            api.send(Method::PUT, "/api/pages/race", Some(body)).await
        }));
    }
    let repo = env.data_dir().join("workspaces").join("own.git");
    let path = cairn::testing::git::live_path("race");
    let mut revisions = std::collections::HashSet::new();
    for t in tasks {
        let r = t.await.unwrap();
        if r.status != StatusCode::OK {
            assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
            continue;
        }
        let page = r.json();
        let revision = page["revision"].as_str().unwrap().to_owned();
        assert_eq!(r.headers["etag"].to_str().unwrap(), format!("\"{revision}\""));
        assert_eq!(git(&repo, &["show", &format!("{revision}:{path}")]), page["content"].as_str().unwrap());
        assert!(revisions.insert(revision.clone()), "two answers share revision {revision}");
    }
    assert!(revisions.len() >= 2, "only {} saves succeeded", revisions.len());
    // Renames in quick succession each answer the page they made.
    let mut tasks = Vec::new();
    for (from, to) in [("race", "race-1"), ("race-1", "race-2"), ("race-2", "race-3")] {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            (to, api.post(&format!("/api/pages/{from}/rename"), json!({"new_slug": to})).await)
        }));
    }
    for t in tasks {
        let (to, (status, body)) = t.await.unwrap();
        if status == StatusCode::OK {
            assert_eq!(body["slug"], to, "{body}");
        } else {
            assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        }
    }
    assert_fsck(&repo);
    srv.stop().await;
}

#[tokio::test]
async fn tree_notes_children_view() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("tree@x.io").await;
    api.page("handbook", "# Handbook\n").await;
    api.post("/api/pages", json!({"slug": "onboarding", "title": "Onboarding", "parent": "handbook", "content": "## Day one\n## Day two\nsee [[handbook]] #hr"})).await;
    api.post(
        "/api/pages",
        json!({"slug": "laptop", "title": "A laptop", "parent": "onboarding", "content": "[[onboarding]] #hr #it"}),
    )
    .await;
    api.page("zeta", "[[handbook]] [[missing-page]]").await;

    let (_, tree) = api.get("/api/pages").await;
    assert_eq!(
        tree,
        json!([
            {"slug": "handbook", "title": "Handbook", "children": [
                {"slug": "onboarding", "title": "Onboarding", "children": [
                    {"slug": "laptop", "title": "A laptop", "children": []}
                ]}
            ]},
            {"slug": "zeta", "title": "zeta", "children": []}
        ])
    );
    let (_, notes) = api.get("/api/notes").await;
    let order: Vec<_> = notes["items"].as_array().unwrap().iter().map(|n| n["slug"].as_str().unwrap()).collect();
    assert_eq!(order, ["zeta", "laptop", "onboarding", "handbook"]);
    let (_, hr) = api.get("/api/notes?tag=hr").await;
    assert_eq!(hr["total"], 2);
    let (_, it) = api.get("/api/notes?tag=%23IT").await;
    assert_eq!(it["items"][0]["slug"], "laptop");
    assert_eq!(it["items"][0]["tags"], json!(["hr", "it"]));
    let (_, kids) = api.get("/api/pages/handbook/children").await;
    assert_eq!(kids["items"][0]["slug"], "onboarding");
    assert_eq!(kids["total"], 1);

    let (s, view) = api.get("/api/pages/laptop/view").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(view["page"]["slug"], "laptop");
    assert_eq!(
        view["breadcrumbs"],
        json!([{"slug": "handbook", "title": "Handbook"}, {"slug": "onboarding", "title": "Onboarding"}])
    );
    let (_, view) = api.get("/api/pages/onboarding/view").await;
    assert_eq!(view["children"], json!([{"slug": "laptop", "title": "A laptop"}]));
    assert_eq!(view["backlinks"], json!([{"slug": "laptop", "title": "A laptop"}]));
    assert_eq!(view["headings"][0]["text"], "Day one");
    assert_eq!(view["headings"][1]["anchor"], "day-two");
    let (_, view) = api.get("/api/pages/handbook/view").await;
    let back: Vec<_> = view["backlinks"].as_array().unwrap().iter().map(|b| b["slug"].as_str().unwrap()).collect();
    assert_eq!(back, ["onboarding", "zeta"]);

    // An edit keeps the page where it was (its row is written without its slug, parent
    // and trash state) and moves it to the top of the notes.
    let (_, before) = api.get("/api/pages/onboarding").await;
    let (s, edited) =
        api.put("/api/pages/onboarding", json!({"content": "## Day one\nsee [[handbook]] #hr, edited"})).await;
    assert_eq!(s, StatusCode::OK, "{edited}");
    assert_eq!((&edited["parent"], &edited["created_at"]), (&json!("handbook"), &before["created_at"]));
    assert_ne!(edited["revision"], before["revision"]);
    assert_eq!(api.get("/api/pages").await.1, tree);
    let (_, notes) = api.get("/api/notes").await;
    let order: Vec<_> = notes["items"].as_array().unwrap().iter().map(|n| n["slug"].as_str().unwrap()).collect();
    assert_eq!(order, ["onboarding", "zeta", "laptop", "handbook"]);
    let (_, kids) = api.get("/api/pages/handbook/children").await;
    assert_eq!((kids["total"].clone(), kids["items"][0]["slug"].clone()), (json!(1), json!("onboarding")));
    srv.stop().await;
}

#[tokio::test]
async fn move_rename_and_links_follow() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("mover@x.io").await;
    api.page("a", "# A\n").await;
    api.post("/api/pages", json!({"slug": "b", "parent": "a", "content": "# B"})).await;
    api.post("/api/pages", json!({"slug": "c", "parent": "b", "content": "# C"})).await;
    let r = api.send(Method::POST, "/api/pages/a/move", Some(json!({"parent": "c"}))).await;
    assert_problem(&r, 400, "move_cycle");
    let r = api.send(Method::POST, "/api/pages/a/move", Some(json!({"parent": "a"}))).await;
    assert_problem(&r, 400, "move_cycle");
    let (s, c) = api.post("/api/pages/c/move", json!({"parent": null})).await;
    assert_eq!(s, StatusCode::OK);
    assert!(c["parent"].is_null());
    let (_, b) = api.post("/api/pages/b/move", json!({"parent": "c"})).await;
    assert_eq!(b["parent"], "c");

    // Rename: history follows; links elsewhere are rewritten as commits.
    api.page("linker", "See [[b]], [[b|the B page]] and `[[b]]` in code.\n").await;
    api.put("/api/pages/b", json!({"content": "# B\nv2"})).await;
    let r = api.send(Method::POST, "/api/pages/b/rename", Some(json!({"new_slug": "c"}))).await;
    assert_problem(&r, 409, "page_exists");
    let r = api.send(Method::POST, "/api/pages/b/rename", Some(json!({"new_slug": "Bad Slug"}))).await;
    assert_problem(&r, 400, "invalid_slug");
    let (s, renamed) = api.post("/api/pages/b/rename", json!({"new_slug": "bee", "title": "Bee"})).await;
    assert_eq!(s, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["slug"], "bee");
    assert_eq!(renamed["title"], "Bee");
    assert_eq!(renamed["parent"], "c");
    // The old slug leads to the page (CONTRACT §5; tests/it/addresses.rs has the rest).
    assert_eq!(api.get("/api/pages/b").await.1["slug"], "bee");
    let (_, h) = api.get("/api/pages/bee/history").await;
    assert_eq!(h["total"], 4, "{h}");
    assert!(h["items"][0]["message"].as_str().unwrap().contains("Rename b → bee"));
    let (_, linker) = api.get("/api/pages/linker").await;
    assert_eq!(linker["content"], "See [[bee]], [[bee|the B page]] and `[[b]]` in code.\n");
    assert_eq!(linker["links"], json!(["bee"]));
    let (_, lh) = api.get("/api/pages/linker/history").await;
    assert_eq!(lh["total"], 2);
    assert_eq!(lh["items"][0]["author"]["name"], "mover@x.io");
    let (_, c_view) = api.get("/api/pages/c/view").await;
    assert_eq!(c_view["children"][0]["slug"], "bee");
    srv.stop().await;
}

#[tokio::test]
async fn history_entries_diffs_and_restore() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("hist@x.io").await;
    let v1 = api.page("notes", "one\ntwo\n").await;
    let (_, v2) = api.put("/api/pages/notes", json!({"content": "one\n2\nthree\n", "message": "Number two"})).await;
    let (_, v3) = api.put("/api/pages/notes", json!({"content": "one\n2\nthree\nfour\n"})).await;
    let (r1, r2, r3) =
        (v1["revision"].as_str().unwrap(), v2["revision"].as_str().unwrap(), v3["revision"].as_str().unwrap());

    let (_, h) = api.get("/api/pages/notes/history").await;
    assert_eq!(h["total"], 3);
    let shas: Vec<_> = h["items"].as_array().unwrap().iter().map(|i| i["sha"].as_str().unwrap()).collect();
    assert_eq!(shas, [r3, r2, r1]);
    assert_eq!(h["items"][1]["message"], "Number two");
    assert_eq!(h["items"][2]["message"], "Create notes");
    assert_eq!(h["items"][0]["author"]["name"], "hist@x.io");
    let (_, h) = api.get("/api/pages/notes/history?limit=1&offset=1").await;
    assert_eq!(h["items"][0]["sha"], r2);

    let (s, e) = api.get(&format!("/api/pages/notes/history/{r2}")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(e["content"], "one\n2\nthree\n");
    assert_eq!(e["sha"], r2);
    assert_eq!(e["message"], "Number two");

    let (_, d) = api.get(&format!("/api/pages/notes/history/{r2}/diff")).await;
    assert_eq!(d["from"], r1);
    assert_eq!(d["to"], r2);
    assert_eq!((d["added"].as_u64(), d["removed"].as_u64()), (Some(2), Some(1)));
    assert!(d["unified"].as_str().unwrap().contains("-two\n+2\n+three\n"), "{}", d["unified"]);
    let (_, d) = api.get(&format!("/api/pages/notes/history/{r3}/diff?against={r1}")).await;
    assert_eq!((d["added"].as_u64(), d["removed"].as_u64()), (Some(3), Some(1)));
    let (_, d) = api.get(&format!("/api/pages/notes/history/{r1}/diff")).await;
    assert!(d["from"].is_null());
    assert_eq!(d["added"], 2);

    // Unknown sha, or one of another page: 404.
    let other = api.page("other", "x").await;
    let other_rev = other["revision"].as_str().unwrap();
    for path in [
        format!("/api/pages/notes/history/{other_rev}"),
        "/api/pages/notes/history/0000000000000000000000000000000000000000".into(),
        "/api/pages/notes/history/not-a-sha".into(),
        format!("/api/pages/notes/history/{r2}/diff?against={other_rev}"),
    ] {
        let r = api.send(Method::GET, &path, None).await;
        assert_problem(&r, 404, "revision_not_found");
    }
    let r = api.send(Method::POST, &format!("/api/pages/notes/restore/{other_rev}"), None).await;
    assert_problem(&r, 404, "revision_not_found");

    let (s, restored) = api.post(&format!("/api/pages/notes/restore/{r1}"), json!({})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(restored["content"], "one\ntwo\n");
    assert_ne!(restored["revision"], r1);
    let (_, h) = api.get("/api/pages/notes/history").await;
    assert_eq!(h["total"], 4);
    assert!(h["items"][0]["message"].as_str().unwrap().starts_with("Restore notes to "));
    srv.stop().await;
}

#[tokio::test]
async fn trash_restore_and_purge() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("trash@x.io").await;
    api.page("parent", "# Parent").await;
    api.post("/api/pages", json!({"slug": "child", "parent": "parent", "content": "# Child\n\n#tagged"})).await;
    api.post("/api/pages", json!({"slug": "grandchild", "parent": "child", "content": "# Grandchild"})).await;
    api.page("solo", "# Solo").await;

    let r = api.send(Method::DELETE, "/api/pages/parent", None).await;
    assert_problem(&r, 409, "page_has_children");
    assert_eq!(api.delete("/api/pages/solo").await.0, StatusCode::NO_CONTENT);
    assert_eq!(api.delete("/api/pages/parent?recursive=true").await.0, StatusCode::NO_CONTENT);
    let (_, tree) = api.get("/api/pages").await;
    assert_eq!(tree, json!([]));
    assert_eq!(api.get("/api/notes").await.1["total"], 0);
    assert_eq!(api.get("/api/notes?tag=tagged").await.1["total"], 0);
    assert_eq!(api.get("/api/pages/child").await.0, StatusCode::NOT_FOUND);
    let (_, trash) = api.get("/api/trash").await;
    assert_eq!(trash["total"], 4);
    let item = trash["items"].as_array().unwrap().iter().find(|i| i["slug"] == "child").unwrap().clone();
    assert_eq!(item["title"], "Child");
    assert_eq!(item["deleted_by"]["name"], "trash@x.io");
    assert!(item["deleted_at"].is_string());
    // A trashed slug is still taken.
    let r = api.send(Method::POST, "/api/pages", Some(json!({"slug": "solo"}))).await;
    assert_problem(&r, 409, "page_exists");

    // Purge the parent; restoring the child puts it at the top level.
    assert_eq!(api.post("/api/trash/parent/purge", json!({})).await.0, StatusCode::NO_CONTENT);
    let (s, child) = api.post("/api/trash/child/restore", json!({})).await;
    assert_eq!(s, StatusCode::OK);
    assert!(child["parent"].is_null());
    assert_eq!(child["tags"], json!(["tagged"]));
    let (s, gc) = api.get("/api/pages/grandchild").await;
    assert_eq!(s, StatusCode::OK, "trashed with the child, so restored with it");
    assert_eq!(gc["parent"], "child");
    let r = api.send(Method::POST, "/api/trash/child/restore", None).await;
    assert_problem(&r, 404, "trash_entry_not_found");
    let r = api.send(Method::POST, "/api/trash/child/purge", None).await;
    assert_problem(&r, 404, "trash_entry_not_found");

    // Purged: gone from every API, history included; its slug is free again.
    assert_eq!(api.get("/api/pages/parent").await.0, StatusCode::NOT_FOUND);
    assert_eq!(api.get("/api/pages/parent/history").await.0, StatusCode::NOT_FOUND);
    assert!(!api.get("/api/trash").await.1["items"].as_array().unwrap().iter().any(|i| i["slug"] == "parent"));
    let fresh = api.page("parent", "# New parent").await;
    let (_, h) = api.get("/api/pages/parent/history").await;
    assert_eq!(h["total"], 1);
    assert_eq!(h["items"][0]["sha"], fresh["revision"]);
    srv.stop().await;
}

#[tokio::test]
async fn ws_parameter_and_the_404_rule_on_page_routes() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("own@x.io").await;
    let member = srv.user("mem@x.io").await;
    let outsider = srv.user("out@x.io").await;
    owner.post("/api/workspaces", json!({"name": "Team"})).await;
    owner.post("/api/workspaces/team/members", json!({"email": "mem@x.io"})).await;
    let (s, p) = owner.post("/api/pages?ws=team", json!({"slug": "shared", "content": "# Shared"})).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(p["workspace"], "team");
    assert_eq!(owner.get("/api/pages/shared").await.0, StatusCode::NOT_FOUND, "not in the default workspace");
    // A member reads and writes.
    let (s, _) = member.put("/api/pages/shared?ws=team", json!({"content": "# Shared\nby member"})).await;
    assert_eq!(s, StatusCode::OK);
    let rev = member.get("/api/pages/shared?ws=team").await.1["revision"].as_str().unwrap().to_owned();
    // An outsider gets 404 on every page route, exactly as for a missing workspace.
    let routes: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, "/api/pages".into(), None),
        (Method::POST, "/api/pages".into(), Some(json!({"slug": "x"}))),
        (Method::GET, "/api/notes".into(), None),
        (Method::GET, "/api/trash".into(), None),
        (Method::GET, "/api/pages/shared".into(), None),
        (Method::PUT, "/api/pages/shared".into(), Some(json!({"content": "x"}))),
        (Method::DELETE, "/api/pages/shared".into(), None),
        (Method::GET, "/api/pages/shared/children".into(), None),
        (Method::GET, "/api/pages/shared/view".into(), None),
        (Method::GET, "/api/pages/shared/raw".into(), None),
        (Method::GET, "/api/pages/shared/history".into(), None),
        (Method::GET, format!("/api/pages/shared/history/{rev}"), None),
        (Method::GET, format!("/api/pages/shared/history/{rev}/diff"), None),
        (Method::POST, format!("/api/pages/shared/restore/{rev}"), None),
        (Method::POST, format!("/api/pages/shared/history/{rev}/erase"), None),
        (Method::POST, "/api/pages/shared/move".into(), Some(json!({"parent": null}))),
        (Method::POST, "/api/pages/shared/position".into(), Some(json!({"after": null}))),
        (Method::POST, "/api/pages/shared/rename".into(), Some(json!({"new_slug": "y"}))),
        (Method::GET, "/api/trash/shared".into(), None),
        (Method::POST, "/api/trash/shared/restore".into(), None),
        (Method::POST, "/api/trash/shared/purge".into(), None),
        (Method::GET, "/api/workspaces/team/export".into(), None),
    ];
    for (m, path, body) in routes {
        let sep = if path.contains('?') { '&' } else { '?' };
        let hidden = outsider.send(m.clone(), &format!("{path}{sep}ws=team"), body.clone()).await;
        assert_problem(&hidden, 404, "workspace_not_found");
        let missing = outsider.send(m.clone(), &format!("{path}{sep}ws=nope").replace("/team/", "/nope/"), body).await;
        assert_problem(&missing, 404, "workspace_not_found");
    }
    assert_eq!(owner.get("/api/pages/shared?ws=team").await.1["content"], "# Shared\nby member");
    srv.stop().await;
}

#[tokio::test]
async fn the_repository_is_ordinary_git() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("git@x.io").await;
    api.post("/api/settings/profile", json!({"name": "Grace Hopper"})).await;
    api.page("onboarding", "# Onboarding\n").await;
    api.put("/api/pages/onboarding", json!({"content": "# Onboarding\nmore\n"})).await;
    api.post("/api/pages/onboarding/rename", json!({"new_slug": "welcome"})).await;
    api.delete("/api/pages/welcome").await;
    let repo = env.data_dir().join("workspaces").join("git.git");
    let git = |args: &[&str]| git(&repo, args);
    assert_fsck(&repo);
    let log = git(&["log", "--format=%an <%ae>|%s"]);
    let lines: Vec<_> = log.lines().collect();
    assert_eq!(
        lines,
        [
            "Grace Hopper <git@x.io>|Trash Onboarding",
            "Grace Hopper <git@x.io>|Rename onboarding → welcome",
            "Grace Hopper <git@x.io>|Update Onboarding",
            "Grace Hopper <git@x.io>|Create Onboarding",
        ]
    );
    assert_eq!(git(&["show", "HEAD~1:w/we/welcome.md"]), "# Onboarding\nmore\n");
    assert_eq!(git(&["show", "HEAD:.trash/welcome.md"]), "# Onboarding\nmore\n");
    assert!(git(&["ls-tree", "-r", "--name-only", "HEAD"]).lines().eq([".trash/welcome.md"]));
    srv.stop().await;
}

async fn snapshot(api: &Api, slugs: &[&str]) -> Vec<Value> {
    let mut out = vec![api.get("/api/pages").await.1, api.get("/api/notes").await.1, api.get("/api/trash").await.1];
    for s in slugs {
        out.push(api.get(&format!("/api/pages/{s}")).await.1);
        out.push(api.get(&format!("/api/pages/{s}/view")).await.1);
        let h = api.get(&format!("/api/pages/{s}/history")).await.1;
        if let Some(first) = h["items"].as_array().and_then(|i| i.first()) {
            let sha = first["sha"].as_str().unwrap();
            out.push(api.get(&format!("/api/pages/{s}/history/{sha}")).await.1);
            out.push(api.get(&format!("/api/pages/{s}/history/{sha}/diff")).await.1);
        }
        out.push(h);
    }
    out
}

async fn build_a_wiki(api: &Api) {
    api.page("home", "# Home\n[[guide]] #start").await;
    api.post("/api/pages", json!({"slug": "guide", "parent": "home", "content": "# Guide\n[[home]]"})).await;
    api.post("/api/pages", json!({"slug": "deep", "parent": "guide", "content": "# Deep\n"})).await;
    api.put("/api/pages/guide", json!({"content": "# Guide\n[[home]] [[deep]]\nv2", "title": "The Guide"})).await;
    api.post("/api/pages/deep/rename", json!({"new_slug": "deeper"})).await;
    api.page("gone", "# Gone").await;
    api.delete("/api/pages/gone").await;
    api.page("purged", "# Purged").await;
    api.delete("/api/pages/purged").await;
    api.post("/api/trash/purged/purge", json!({})).await;
    api.page("moved", "# Moved").await;
    api.post("/api/pages/moved/move", json!({"parent": "deeper"})).await;
    // Ordered by hand against the title order ("Aside" would come first).
    api.post("/api/pages", json!({"slug": "aside", "parent": "home", "content": "# Aside"})).await;
    api.post("/api/pages/aside/position", json!({"after": "guide"})).await;
}

const SLUGS: &[&str] = &["home", "guide", "deeper", "moved", "gone", "purged", "aside"];

#[tokio::test]
async fn reindex_rebuilds_exactly_what_was_there() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("re@x.io").await;
    build_a_wiki(&api).await;
    let before = snapshot(&api, SLUGS).await;
    for table in ["page_tags", "page_links", "revisions", "pages", "workspace_heads"] {
        sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM {table}"))).execute(&srv.ctx.db.pool).await.unwrap();
    }
    assert_eq!(api.get("/api/notes").await.1["total"], 0);
    let report = cairn::testing::reindex::all(&srv.ctx).await.unwrap();
    assert_eq!(report.pages, 6);
    assert_eq!(snapshot(&api, SLUGS).await, before);
    srv.stop().await;
}

#[tokio::test]
async fn the_start_up_check_repairs_an_index_behind_its_repository() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("crash@x.io").await;
    build_a_wiki(&api).await;
    let before = snapshot(&api, SLUGS).await;
    // As if the process died between the last commit and its transaction.
    sqlx::query("UPDATE workspace_heads SET head = 'older'").execute(&srv.ctx.db.pool).await.unwrap();
    sqlx::query("DELETE FROM revisions WHERE id = (SELECT MAX(id) FROM revisions)")
        .execute(&srv.ctx.db.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE pages SET title = 'stale' WHERE slug = 'moved'").execute(&srv.ctx.db.pool).await.unwrap();
    srv.stop().await;
    let srv = env.start(&[]).await;
    let api = Api { base: srv.url.clone(), ..api };
    assert_eq!(snapshot(&api, SLUGS).await, before);
    srv.stop().await;
}

/// A batch's branch move is not flushed on its own: the database's record of the head is.
/// After a power cut the branch file may still name the commit before, or be empty (its
/// new name on disk, its content not). The start-up check, and `cairn reindex` before it
/// rebuilds, move such a branch forward to the recorded head: no acknowledged save is lost.
#[tokio::test]
async fn a_branch_that_lost_its_last_move_is_moved_forward_to_the_recorded_head() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("lost@x.io").await;
    build_a_wiki(&api).await;
    let before = snapshot(&api, SLUGS).await;
    srv.stop().await;
    let repo = env.data_dir().join("workspaces/lost.git");
    let head = git(&repo, &["rev-parse", "refs/heads/main"]);
    let parent = git(&repo, &["rev-parse", "refs/heads/main~1"]);
    let branch = repo.join("refs/heads/main");
    for lost in [parent.clone(), String::new()] {
        std::fs::write(&branch, &lost).unwrap();
        let srv = env.start(&[]).await;
        assert_eq!(git(&repo, &["rev-parse", "refs/heads/main"]), head, "the branch was {lost:?}");
        let api = Api { base: srv.url.clone(), ..api.clone() };
        assert_eq!(snapshot(&api, SLUGS).await, before);
        srv.stop().await;
    }
    let srv = env.start(&[]).await;
    std::fs::write(&branch, &parent).unwrap();
    cairn::testing::reindex::all(&srv.ctx).await.unwrap();
    assert_eq!(git(&repo, &["rev-parse", "refs/heads/main"]), head);
    let api = Api { base: srv.url.clone(), ..api };
    assert_eq!(snapshot(&api, SLUGS).await, before);
    srv.stop().await;
    // A branch ahead of the recorded head (a crash before the database commit) is not
    // moved back: its commits are indexed instead (the test above).
    assert_fsck(&repo);
}

/// The start-up check reads each workspace under its write lock: a batch (of another
/// process sharing the database and `DATA_DIR`) between its branch move and its database
/// commit is a write in progress, not an index behind its repository, and is not rebuilt.
#[tokio::test]
async fn the_start_up_check_waits_for_a_write_in_progress() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("busy@x.io").await;
    build_a_wiki(&api).await;
    let before = snapshot(&api, SLUGS).await;
    let repo = env.data_dir().join("workspaces/busy.git");
    let head = git(&repo, &["rev-parse", "refs/heads/main"]).trim().to_owned();
    let ws_id: i64 =
        sqlx::query_scalar("SELECT id FROM workspaces WHERE slug = 'busy'").fetch_one(&srv.ctx.db.pool).await.unwrap();
    // A writer holds the lock and has moved the branch past the recorded head, as a batch
    // does before its database commit.
    let access = cairn::testing::workspaces::Access::maintenance(ws_id, "busy");
    let writer = cairn::testing::pages::Writer::begin_alone(&srv.ctx, &access).await.unwrap();
    let tree = format!("{head}^{{tree}}");
    let identity = ["-c", "user.name=t", "-c", "user.email=t@x.io"];
    let ahead = git(&repo, &[&identity[..], &["commit-tree", "-p", &head, "-m", "in flight", &tree]].concat());
    git(&repo, &["update-ref", "refs/heads/main", ahead.trim()]);
    let check = tokio::spawn({
        let ctx = srv.ctx.clone();
        async move { cairn::testing::reindex::repair(&ctx).await.unwrap() }
    });
    // The check is queued on the workspace's lock (the slot counts its waiters).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while srv.ctx.writers.get("busy").waiting() == 0 {
        assert!(std::time::Instant::now() < deadline, "the check never asked for the lock");
        assert!(!check.is_finished(), "the check ended without waiting for the workspace's lock");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(!check.is_finished(), "the check waits for the workspace's lock");
    // The batch's database commit fails: it puts the branch back and lets the lock go.
    git(&repo, &["update-ref", "refs/heads/main", &head]);
    writer.finish().await.unwrap();
    assert!(check.await.unwrap().is_empty(), "nothing rebuilt");
    assert_eq!(snapshot(&api, SLUGS).await, before);
    srv.stop().await;
    assert_fsck(&repo);
}

#[tokio::test]
async fn export_is_a_zip_of_the_live_tree() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("exp@x.io").await;
    let home = "# Home\r\nCRLF kept, ünïcödé kept, no trailing newline";
    api.page("home", home).await;
    api.post("/api/pages", json!({"slug": "child", "parent": "home", "content": "# Child\n"})).await;
    api.post("/api/pages", json!({"slug": "日本", "parent": "child", "content": "# 日本\n"})).await;
    api.page("trashed", "# Trashed").await;
    api.delete("/api/pages/trashed").await;
    let r = api.client.get(format!("{}/api/workspaces/exp/export", srv.url)).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers().get("content-type").unwrap(), "application/zip");
    let bytes = r.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut names: Vec<String> = (0..zip.len()).map(|i| zip.by_index(i).unwrap().name().unwrap().to_string()).collect();
    names.sort();
    assert_eq!(names, ["cairn.json", "home.md", "home/child.md", "home/child/日本.md"]);
    let mut read = |name: &str| {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut zip.by_name(name).unwrap(), &mut s).unwrap();
        s
    };
    assert_eq!(read("home.md"), home);
    assert_eq!(read("home/child/日本.md"), "# 日本\n");
    // The manifest names each file's page and title.
    let manifest: Value = serde_json::from_str(&read("cairn.json")).unwrap();
    assert_eq!(manifest["format"], "cairn-export");
    assert_eq!(
        manifest["pages"],
        json!([
            {"path": "home.md", "slug": "home", "title": "Home"},
            {"path": "home/child.md", "slug": "child", "title": "Child"},
            {"path": "home/child/日本.md", "slug": "日本", "title": "日本"},
        ])
    );
    // An empty workspace exports an empty zip.
    api.post("/api/workspaces", json!({"name": "Empty"})).await;
    let r = api.client.get(format!("{}/api/workspaces/empty/export", srv.url)).send().await.unwrap();
    let zip = zip::ZipArchive::new(std::io::Cursor::new(r.bytes().await.unwrap().to_vec())).unwrap();
    assert_eq!(zip.len(), 0);
    srv.stop().await;
}

#[tokio::test]
async fn backup_then_restore_into_a_fresh_place() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("bk@x.io").await;
    build_a_wiki(&api).await;
    let token = api.pat().await;
    let before = snapshot(&api, SLUGS).await;
    let backup_dir = env.dir.path().join("backup");
    let summary = cairn::testing::backup::backup(&srv.ctx, &backup_dir).await.unwrap();
    assert!(summary.rows > 0);
    assert_eq!(summary.repositories, 1);
    assert!(cairn::testing::backup::backup(&srv.ctx, &backup_dir).await.is_err(), "a non-empty target is refused");

    // A page saved after the database half but before the files half (a backup's order):
    // emulate by taking the files half again, later.
    api.page("late", "# Written between the halves").await;
    let repo_copy = backup_dir.join("files/workspaces/bk.git");
    std::fs::remove_dir_all(&repo_copy).unwrap();
    let status = std::process::Command::new("git")
        .args(["clone", "--quiet", "--mirror"])
        .arg(env.data_dir().join("workspaces/bk.git"))
        .arg(&repo_copy)
        .status()
        .unwrap();
    assert!(status.success());
    srv.stop().await;

    let fresh = Env::new().await;
    let srv = fresh.start(&[]).await;
    cairn::testing::backup::restore(&srv.ctx, &backup_dir).await.unwrap();
    let repaired = cairn::testing::reindex::repair(&srv.ctx).await.unwrap();
    assert_eq!(repaired, ["bk"]);
    let api = srv.anon();
    let (s, _) = api.post("/api/auth/login", json!({"email": "bk@x.io", "password": PASSWORD})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(api.with_bearer(&token).get("/api/me").await.0, StatusCode::OK, "tokens come back too");
    let mut after = snapshot(&api, SLUGS).await;
    // The late page is there, indexed from the files; the rest is as before.
    assert_eq!(api.get("/api/pages/late").await.1["title"], "Written between the halves");
    let notes_after = after.remove(1);
    let mut notes_before = before[1].clone();
    assert_eq!(notes_after["total"], 6);
    notes_before["total"] = json!(6);
    let late_removed: Vec<Value> =
        notes_after["items"].as_array().unwrap().iter().filter(|i| i["slug"] != "late").cloned().collect();
    assert_eq!(late_removed, notes_before["items"].as_array().unwrap().clone());
    let mut before_rest = before.clone();
    before_rest.remove(1);
    // The tree gains the late page at the top level.
    let tree_after = after.remove(0);
    let tree_before = before_rest.remove(0);
    assert_eq!(tree_after.as_array().unwrap().len(), tree_before.as_array().unwrap().len() + 1);
    assert_eq!(after, before_rest);
    // Writes work after a restore (sequences continue past restored ids).
    assert_eq!(api.post("/api/pages", json!({"slug": "after-restore"})).await.0, StatusCode::CREATED);
    let other = srv.user("new-after-restore@x.io").await;
    assert_eq!(other.get("/api/me").await.0, StatusCode::OK);
    assert_fsck(&fresh.data_dir().join("workspaces/bk.git"));
    srv.stop().await;
}

#[tokio::test]
async fn a_page_with_very_many_links_and_tags_saves() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("many@x.io").await;
    let content: String = (0..3000).map(|i| format!("[[target-{i}]] #t{i}x\n")).collect();
    let page = api.page("many", &content).await;
    assert_eq!(page["links"].as_array().unwrap().len(), 3000);
    assert_eq!(page["links"][2999], "target-2999");
    assert_eq!(page["tags"].as_array().unwrap().len(), 3000);
    srv.stop().await;
}

/// A name that cannot exist is "no such page" on both databases, never a 400 from the
/// database refusing the text (Schemathesis found `?ws=` with a NUL on PostgreSQL).
#[tokio::test]
async fn impossible_names_are_not_found() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("nul@example.com").await;
    api.page("real", "# Real").await;
    for path in
        ["/api/pages/real?ws=a%00b", "/api/pages/re%00al", "/api/pages/real/view?ws=%00", "/api/pages/real/raw?ws=x%00"]
    {
        let r = api.send(reqwest::Method::GET, path, None).await;
        assert_eq!(r.status, reqwest::StatusCode::NOT_FOUND, "{path}: {}", r.text);
    }
    // Writes, history and the trash too: a name that is no slug names no page (its 404),
    // a page named to be a parent or a sibling is that name's 400, and a new name that is
    // no slug is 400 `invalid_slug`. Nothing is written.
    api.page("other", "# Other").await;
    api.send(reqwest::Method::DELETE, "/api/pages/other", None).await;
    let head = api.get("/api/pages/real").await.1["revision"].clone();
    let bad = "Bad%00Name";
    for (method, path, body, status, code) in [
        (Method::PUT, format!("/api/pages/{bad}"), json!({"content": "x"}), 404, "page_not_found"),
        (Method::DELETE, format!("/api/pages/{bad}"), json!({}), 404, "page_not_found"),
        (Method::GET, format!("/api/pages/{bad}/children"), json!({}), 404, "page_not_found"),
        (Method::GET, format!("/api/pages/{bad}/history"), json!({}), 404, "page_not_found"),
        (Method::GET, format!("/api/pages/{bad}/summary"), json!({}), 404, "page_not_found"),
        (Method::POST, format!("/api/pages/{bad}/move"), json!({"parent": null}), 404, "page_not_found"),
        (Method::POST, format!("/api/pages/{bad}/rename"), json!({"new_slug": "fine"}), 404, "page_not_found"),
        (Method::GET, format!("/api/trash/{bad}"), json!({}), 404, "trash_entry_not_found"),
        (Method::POST, format!("/api/trash/{bad}/restore"), json!({}), 404, "trash_entry_not_found"),
        (Method::POST, format!("/api/trash/{bad}/purge"), json!({}), 404, "trash_entry_not_found"),
        (Method::POST, "/api/pages/real/move".into(), json!({"parent": "Bad\u{0}Name"}), 400, "parent_not_found"),
        (Method::POST, "/api/pages/real/position".into(), json!({"after": "Bad\u{0}Name"}), 400, "not_a_sibling"),
        (Method::POST, "/api/pages/real/rename".into(), json!({"new_slug": "Bad\u{0}Name"}), 400, "invalid_slug"),
    ] {
        let r = api.send(method.clone(), &path, Some(body)).await;
        assert_problem(&r, status, code);
    }
    assert_eq!(api.get("/api/pages/real").await.1["revision"], head);
    assert_eq!(api.get("/api/trash").await.1["total"], 1);
    srv.stop().await;
}

/// The row's markdown columns for `slug`: (content, content_z, search_title).
async fn stored_row(srv: &Server, slug: &str) -> (String, Option<Vec<u8>>, String) {
    stored(&srv.ctx, slug).await
}

/// On SQLite a page's row keeps its markdown zlib-compressed (PostgreSQL compresses by
/// itself); every read gives back the markdown as saved, and this release's start-up
/// check does not take its own compressed rows for rows to reindex.
#[tokio::test]
async fn the_markdown_is_kept_compressed_on_sqlite_and_reads_back_exactly() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("zip@x.io").await;
    let md = format!(
        "# Runbook\n\nRestart the ingest workers, then check the queue depth. #ops\n\n{}\nÜnïcödé ✓ 日本語\n",
        "- Drain the node, restart the service, watch the dashboards for ten minutes.\n".repeat(30)
    );
    api.page("runbook", &md).await;
    let (content, packed, search_title) = stored_row(&srv, "runbook").await;
    if backend() == "sqlite" {
        let packed = packed.expect("compressed markdown on SQLite");
        assert!(content.is_empty() && search_title.is_empty());
        assert!(packed.len() * 4 < md.len(), "{} bytes kept for {} of markdown", packed.len(), md.len());
    } else {
        assert_eq!((content.as_str(), packed), (md.as_str(), None));
        assert!(!search_title.is_empty(), "PostgreSQL's search vector is written from it");
    }
    let raw = api.send(Method::GET, "/api/pages/runbook/raw", None).await;
    assert_eq!(raw.text, md);
    assert_eq!(api.get("/api/pages/runbook").await.1["content"], md);
    let found = api.get("/api/search?q=dashboards").await.1;
    assert_eq!(found["items"][0]["slug"], "runbook", "{found}");
    srv.stop().await;

    let srv = env.start(&[]).await;
    assert!(cairn::testing::reindex::repair(&srv.ctx).await.unwrap().is_empty(), "nothing to repair");
    assert_eq!(Api { base: srv.url.clone(), ..api }.send(Method::GET, "/api/pages/runbook/raw", None).await.text, md);
    srv.stop().await;
}

/// An older release over this schema. It reads only `content`; the
/// compressed rows carry no search title, which its start-up check takes for rows to
/// index again from the files, and what it writes into a row is what this release then
/// reads (a trigger drops the compressed copy it does not know about).
#[tokio::test]
async fn rows_an_older_release_writes_are_read_as_it_wrote_them() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("old@x.io").await;
    api.page("notes", "# Notes\n\nWritten by this release.\n").await;
    api.page("blank", "# Blank\n\nSoon empty.\n").await;
    let older_check: Vec<i64> = sqlx::query_scalar("SELECT DISTINCT workspace_id FROM pages WHERE search_title = ''")
        .fetch_all(&srv.ctx.db.pool)
        .await
        .unwrap();
    assert_eq!(older_check.len(), usize::from(backend() == "sqlite"), "an older release reindexes from the files");

    // The rest runs the older release's writes and the maintenance pass on a context with
    // no workers, the server stopped: the server's own maintenance worker makes a pass as
    // it starts, which would compress these rows at a moment of its own.
    srv.stop().await;
    let older = "# Notes\n\nWritten by an older release.\n";
    // An older release's save: the markdown in `content`, a search title, and nothing
    // about `content_z`.
    let ctx = without_workers(&env).await;
    for (slug, text) in [("notes", older), ("blank", "")] {
        older_save(&ctx, slug, text).await;
        assert_eq!(stored(&ctx, slug).await.1, None, "{slug}: the compressed copy is dropped");
    }
    ctx.db.pool.close().await;
    drop(ctx);
    let srv = env.start(&[]).await;
    let api = Api { base: srv.url.clone(), ..api };
    for (slug, text) in [("notes", older), ("blank", "")] {
        assert_eq!(api.send(Method::GET, &format!("/api/pages/{slug}/raw"), None).await.text, text);
    }
    srv.stop().await;

    // The maintenance pass compresses rows an older release left plain (here `notes`; an
    // empty page has nothing to compress), as a save of this release would keep them.
    let ctx = without_workers(&env).await;
    older_save(&ctx, "notes", older).await; // (the server's pass may have compressed it)
    let report = cairn::testing::workers::run_pending_jobs(&ctx).await.unwrap();
    assert_eq!(report.rows_compressed, u64::from(backend() == "sqlite"), "{report:?}");
    assert_eq!(cairn::testing::workers::run_pending_jobs(&ctx).await.unwrap().rows_compressed, 0, "nothing left");
    assert_eq!(stored(&ctx, "notes").await.1.is_some(), backend() == "sqlite");
    ctx.db.pool.close().await;
    drop(ctx);
    let srv = env.start(&[]).await;
    let api = Api { base: srv.url.clone(), ..api };
    assert_eq!(api.send(Method::GET, "/api/pages/notes/raw", None).await.text, older);
    // This release's next save compresses the row again.
    api.put("/api/pages/notes", json!({"content": "# Notes\n\nBack.\n"})).await;
    assert_eq!(stored_row(&srv, "notes").await.1.is_some(), backend() == "sqlite");
    assert_eq!(api.send(Method::GET, "/api/pages/notes/raw", None).await.text, "# Notes\n\nBack.\n");
    srv.stop().await;
}

/// The database of `env` opened as `cairn serve` opens it, without a server or workers.
async fn without_workers(env: &Env) -> cairn::testing::Ctx {
    let config = env.config(&[]);
    let (db, _) = cairn::testing::store::Db::connect(&config).await.unwrap();
    cairn::testing::Ctx::new(config, db).unwrap()
}

/// What an older release writes when it saves a page: the markdown in `content`, a
/// search title, nothing about `content_z`.
async fn older_save(ctx: &cairn::testing::Ctx, slug: &str, text: &str) {
    sqlx::query("UPDATE pages SET content = $1, search_title = $2 WHERE slug = $3")
        .bind(text)
        .bind(slug)
        .bind(slug)
        .execute(&ctx.db.pool)
        .await
        .unwrap();
}

async fn stored(ctx: &cairn::testing::Ctx, slug: &str) -> (String, Option<Vec<u8>>, String) {
    sqlx::query_as("SELECT content, content_z, search_title FROM pages WHERE slug = $1")
        .bind(slug)
        .fetch_one(&ctx.db.pool)
        .await
        .unwrap()
}

/// docs/operations.md: a backup of a SQLite instance restores into PostgreSQL and back.
/// SQLite's rows keep the markdown compressed and PostgreSQL's plain (`stored`): each
/// restore's start-up check writes the rows in its engine's form, and reads and search
/// find the same pages. The test uses both engines, so it runs in the SQLite pass only
/// (named `sqlite_only_…`: the PostgreSQL pass skips it rather than count it passed).
#[tokio::test]
async fn sqlite_only_a_backup_moves_from_sqlite_to_postgresql_and_back() {
    assert_eq!(backend(), "sqlite", "a SQLite-only test: the PostgreSQL pass skips `sqlite_only`");
    let md = "# Ledger\n\nQuarterly reconciliation of the ledger, with ümlauts and 日本語. #finance\n";
    let search = |api: &Api| {
        let api = api.clone();
        async move { api.get("/api/search?q=reconciliation&mode=keyword").await.1["items"][0]["slug"].clone() }
    };
    let from = Env::on("sqlite").await;
    let srv = from.start(&[]).await;
    let api = srv.user("move@x.io").await;
    api.page("ledger", md).await;
    api.page("other", "# Other\n\nNothing to see.\n").await;
    assert!(stored_row(&srv, "ledger").await.1.is_some(), "compressed on SQLite");
    cairn::testing::backup::backup(&srv.ctx, &from.dir.path().join("backup")).await.unwrap();
    srv.stop().await;

    // Each step restores the backup the step before took.
    let mut source = from;

    for (engine, compressed) in [("postgres", false), ("sqlite", true)] {
        let to = Env::on(engine).await;
        let srv = to.start(&[]).await;
        cairn::testing::backup::restore(&srv.ctx, &source.dir.path().join("backup")).await.unwrap();
        cairn::testing::reindex::repair(&srv.ctx).await.unwrap();
        let api = srv.anon();
        let (s, _) = api.post("/api/auth/login", json!({"email": "move@x.io", "password": PASSWORD})).await;
        assert_eq!(s, StatusCode::OK, "{engine}");
        assert_eq!(api.send(Method::GET, "/api/pages/ledger/raw", None).await.text, md, "{engine}");
        assert_eq!(search(&api).await, "ledger", "{engine}");
        let (content, packed, _) = stored_row(&srv, "ledger").await;
        assert_eq!(packed.is_some(), compressed, "{engine}: the row in this engine's form");
        assert_eq!(content.is_empty(), compressed, "{engine}");
        cairn::testing::backup::backup(&srv.ctx, &to.dir.path().join("backup")).await.unwrap();
        srv.stop().await;
        source = to;
    }
}

#[tokio::test]
async fn an_edit_rewrites_tags_and_links_only_when_they_change_and_they_stay_right() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("lists@x.io").await;
    for slug in ["one", "two"] {
        api.page(slug, &format!("# {slug}\n")).await;
    }
    api.page("doc", "# Doc\n\n#alpha #beta [[one]] [[two]]\n").await;
    // What the index holds, read back (not the save's own answer).
    let lists = async || {
        let (_, doc) = api.get("/api/pages/doc").await;
        let (_, alpha) = api.get("/api/notes?tag=alpha").await;
        let (_, two) = api.get("/api/pages/two/view").await;
        (doc["tags"].clone(), doc["links"].clone(), alpha["total"].clone(), two["backlinks"].clone())
    };
    let back = json!([{"slug": "doc", "title": "Doc"}]);

    // The text changes, the lists do not (their rows are left alone).
    let edits = [
        ("# Doc\n\nnew words #alpha #beta [[one]] [[two]]\n", json!(["alpha", "beta"]), json!(["one", "two"]), 1),
        // The same tags in another order are the same; links in another order are not.
        ("# Doc\n\n#beta #alpha [[two]] [[one]]\n", json!(["alpha", "beta"]), json!(["two", "one"]), 1),
        // Other tags, the same links.
        ("# Doc\n\n#gamma [[two]] [[one]]\n", json!(["gamma"]), json!(["two", "one"]), 0),
        // A link dropped.
        ("# Doc\n\n#gamma [[two]]\n", json!(["gamma"]), json!(["two"]), 0),
    ];
    for (content, tags, links, alpha) in edits {
        let (s, page) = api.put("/api/pages/doc", json!({"content": content})).await;
        assert_eq!(s, StatusCode::OK, "{page}");
        assert_eq!((page["tags"].clone(), page["links"].clone()), (tags.clone(), links.clone()));
        assert_eq!(lists().await, (tags, links, json!(alpha), back.clone()), "after saving {content:?}");
    }
    // Nothing left: every row goes.
    let (s, _) = api.put("/api/pages/doc", json!({"content": "# Doc\n\nplain\n"})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(lists().await, (json!([]), json!([]), json!(0), json!([])));
    let (_, gamma) = api.get("/api/notes?tag=gamma").await;
    assert_eq!(gamma["total"], 0);
    srv.stop().await;
}

/// Moving, renaming, trashing (a subtree too), restoring from the trash and restoring a
/// revision write a page's tags and links again only when the commit changes them; what the index holds
/// stays right either way (read back through tag counts and backlinks).
#[tokio::test]
async fn tags_and_links_stay_right_through_move_rename_trash_and_restores() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("ops-lists@x.io").await;
    for slug in ["one", "two", "folder"] {
        api.page(slug, &format!("# {slug}\n")).await;
    }
    api.page("doc", "# Doc\n\n#alpha [[one]]\n").await;
    let (_, history) = api.get("/api/pages/doc/history").await;
    let first = history["items"][0]["sha"].as_str().unwrap().to_owned();
    let (s, _) = api.put("/api/pages/doc", json!({"content": "# Doc\n\n#beta [[two]]\n"})).await;
    assert_eq!(s, StatusCode::OK);
    let count = async |tag: &str| api.get(&format!("/api/notes?tag={tag}")).await.1["total"].clone();
    let backlinks = async |slug: &str| api.get(&format!("/api/pages/{slug}/view")).await.1["backlinks"].clone();
    let lists = async |slug: &str| {
        let (_, p) = api.get(&format!("/api/pages/{slug}")).await;
        (p["tags"].clone(), p["links"].clone())
    };

    let (s, moved) = api.post("/api/pages/doc/move", json!({"parent": "folder"})).await;
    assert_eq!(s, StatusCode::OK, "{moved}");
    assert_eq!((moved["tags"].clone(), moved["links"].clone()), (json!(["beta"]), json!(["two"])));
    assert_eq!(lists("doc").await, (json!(["beta"]), json!(["two"])));
    assert_eq!((count("beta").await, count("alpha").await), (json!(1), json!(0)));
    // Moved where it already is: answered from what was read.
    let (s, again) = api.post("/api/pages/doc/move", json!({"parent": "folder"})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!((again["tags"].clone(), again["links"].clone()), (json!(["beta"]), json!(["two"])));

    let (s, renamed) = api.post("/api/pages/doc/rename", json!({"new_slug": "paper"})).await;
    assert_eq!(s, StatusCode::OK, "{renamed}");
    assert_eq!(lists("paper").await, (json!(["beta"]), json!(["two"])));
    assert_eq!(backlinks("two").await, json!([{"slug": "paper", "title": "Doc"}]));
    // A rename rewrites the links to it in other pages: their link rows change.
    let (s, _) = api.post("/api/pages/two/rename", json!({"new_slug": "deux"})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(lists("paper").await, (json!(["beta"]), json!(["deux"])));
    assert_eq!(backlinks("deux").await, json!([{"slug": "paper", "title": "Doc"}]));

    assert_eq!(api.delete("/api/pages/paper").await.0, StatusCode::NO_CONTENT);
    assert_eq!(count("beta").await, json!(0));
    let (s, restored) = api.post("/api/trash/paper/restore", json!({})).await;
    assert_eq!(s, StatusCode::OK, "{restored}");
    assert_eq!(lists("paper").await, (json!(["beta"]), json!(["deux"])));
    assert_eq!((count("beta").await, backlinks("deux").await), (json!(1), json!([{"slug": "paper", "title": "Doc"}])));

    // A subtree to the trash and back: the descendants' lists too.
    let (s, child) = api
        .post("/api/pages", json!({"slug": "child", "parent": "paper", "content": "# Child\n\n#gamma [[one]]\n"}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{child}");
    assert_eq!(api.delete("/api/pages/paper?recursive=true").await.0, StatusCode::NO_CONTENT);
    assert_eq!((count("beta").await, count("gamma").await), (json!(0), json!(0)));
    let (s, back) = api.post("/api/trash/paper/restore", json!({})).await;
    assert_eq!(s, StatusCode::OK, "{back}");
    assert_eq!(lists("child").await, (json!(["gamma"]), json!(["one"])));
    assert_eq!((count("beta").await, count("gamma").await), (json!(1), json!(1)));
    assert_eq!(backlinks("one").await, json!([{"slug": "child", "title": "Child"}]));

    // Back to the first revision: other tags and links, written again.
    let (s, back) = api.post(&format!("/api/pages/paper/restore/{first}"), json!({})).await;
    assert_eq!(s, StatusCode::OK, "{back}");
    assert_eq!(lists("paper").await, (json!(["alpha"]), json!(["one"])));
    assert_eq!((count("alpha").await, count("beta").await), (json!(1), json!(0)));
    assert_eq!(backlinks("one").await, json!([{"slug": "child", "title": "Child"}, {"slug": "paper", "title": "Doc"}]));
    assert_eq!(backlinks("deux").await, json!([]));
    srv.stop().await;
}

/// A title a person set (at creation, by a rename) is never replaced by a heading nobody
/// touched; a heading the save changed still names the page.
#[tokio::test]
async fn the_first_heading_names_the_page_only_when_it_is_new_or_changed() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("titles@x.io").await;
    let (_, p) = api
        .post("/api/pages", json!({"title": "Getting Started", "content": "# Getting Started\n\nStep one.\n"}))
        .await;
    assert_eq!(p["title"], "Getting Started");

    // A rename with a title rewrites the first heading that read the old title, in the
    // rename's own commit.
    let (s, p) = api
        .post("/api/pages/getting-started/rename", json!({"new_slug": "onboarding", "title": "Onboarding Guide"}))
        .await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["title"], "Onboarding Guide");
    assert_eq!(p["content"], "# Onboarding Guide\n\nStep one.\n");
    assert_eq!(api.get("/api/pages/onboarding/history").await.1["total"], 2);
    // The next edit keeps it.
    let (_, p) =
        api.put("/api/pages/onboarding", json!({"content": "# Onboarding Guide\n\nStep one, then two.\n"})).await;
    assert_eq!(p["title"], "Onboarding Guide");

    // A page whose title is not its heading: edits elsewhere, a section heading added, a
    // heading that says the same — the title stays.
    let (_, p) = api.post("/api/pages", json!({"title": "Runbook", "content": "# Ops notes\n\nRestart it.\n"})).await;
    assert_eq!(p["title"], "Runbook");
    let (_, p) = api.put("/api/pages/runbook", json!({"content": "# Ops notes\n\nRestart it twice.\n"})).await;
    assert_eq!(p["title"], "Runbook", "the heading did not change");
    let (_, p) =
        api.put("/api/pages/runbook", json!({"content": "# Ops notes\n\nRestart it twice.\n\n# Introduction\n"})).await;
    assert_eq!(p["title"], "Runbook", "a later level-1 heading is a section");
    // Changing the first heading names the page again.
    let (_, p) = api.put("/api/pages/runbook", json!({"content": "# Ops handbook\n\nRestart it twice.\n"})).await;
    assert_eq!(p["title"], "Ops handbook");
    // A heading added where there was none also counts as changed.
    api.page("plain", "no heading\n").await;
    let (_, p) = api.put("/api/pages/plain", json!({"content": "# Now a heading\n\nno heading\n"})).await;
    assert_eq!(p["title"], "Now a heading");

    // A rename whose title differs from the heading leaves the content alone.
    let (_, p) = api.post("/api/pages", json!({"title": "Glossary", "content": "# Terms\n"})).await;
    let rev = p["revision"].clone();
    let (_, p) = api.post("/api/pages/glossary/rename", json!({"new_slug": "glossary", "title": "Word list"})).await;
    assert_eq!((p["title"].as_str(), p["content"].as_str()), (Some("Word list"), Some("# Terms\n")));
    assert_ne!(p["revision"], rev);
    srv.stop().await;
}

/// A rewritten link keeps the text readers saw.
#[tokio::test]
async fn a_rename_keeps_the_text_of_the_links_it_rewrites() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("links@x.io").await;
    api.post("/api/pages", json!({"title": "Getting Started", "content": "# Getting Started\n"})).await;
    api.page(
        "linker",
        "See [[Getting Started]], [[getting-started]], [[Getting Started#Install]] and [[getting-started|the guide]].\n\n\
         | a | b |\n|---|---|\n| [[Getting Started]] | x |\n",
    )
    .await;
    let (s, _) = api.post("/api/pages/getting-started/rename", json!({"new_slug": "onboarding"})).await;
    assert_eq!(s, StatusCode::OK);
    let (_, linker) = api.get("/api/pages/linker").await;
    assert_eq!(
        linker["content"],
        "See [[onboarding|Getting Started]], [[onboarding]], [[onboarding#Install|Getting Started › Install]] and \
         [[onboarding|the guide]].\n\n| a | b |\n|---|---|\n| [[onboarding\\|Getting Started]] | x |\n"
    );
    assert_eq!(linker["links"], json!(["onboarding"]));
    let (_, view) = api.get("/api/pages/onboarding/view").await;
    assert_eq!(view["backlinks"][0]["slug"], "linker");
    srv.stop().await;
}

/// Pages one delete trashed are one group: listed as such, restored together; a subpage
/// trashed on its own earlier stays in the trash; a trashed page can be read first.
#[tokio::test]
async fn a_subtree_leaves_and_comes_back_together() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("groups@x.io").await;
    api.page("handbook", "# Handbook").await;
    api.post("/api/pages", json!({"slug": "hiring", "parent": "handbook", "content": "# Hiring\n\n#people"})).await;
    api.post("/api/pages", json!({"slug": "interviews", "parent": "hiring", "content": "# Interviews"})).await;
    api.post("/api/pages", json!({"slug": "old-policy", "parent": "handbook", "content": "# Old policy"})).await;
    assert_eq!(api.delete("/api/pages/old-policy").await.0, StatusCode::NO_CONTENT);
    assert_eq!(api.delete("/api/pages/handbook?recursive=true").await.0, StatusCode::NO_CONTENT);

    let (_, trash) = api.get("/api/trash").await;
    let items = trash["items"].as_array().unwrap();
    let item = |slug: &str| items.iter().find(|i| i["slug"] == slug).unwrap().clone();
    let group = item("handbook")["group"].clone();
    assert!(group.is_string());
    assert_eq!(item("hiring")["group"], group);
    assert_eq!(item("interviews")["group"], group);
    assert_ne!(item("old-policy")["group"], group, "trashed by another delete");
    assert!(item("handbook")["parent"].is_null());
    assert_eq!(item("hiring")["parent"], "handbook");
    assert_eq!(item("interviews")["parent"], "hiring");
    assert_eq!(item("old-policy")["parent"], "handbook");

    // A look before restoring; live and unknown pages are not in the trash.
    let (s, seen) = api.get("/api/trash/hiring").await;
    assert_eq!(s, StatusCode::OK, "{seen}");
    assert_eq!(seen["content"], "# Hiring\n\n#people");
    assert_eq!((seen["title"].as_str(), seen["group"].clone()), (Some("Hiring"), group.clone()));
    assert_eq!(seen["deleted_by"]["name"], "groups@x.io");
    api.page("alive", "# Alive").await;
    for slug in ["alive", "nothing"] {
        assert_problem(&api.send(Method::GET, &format!("/api/trash/{slug}"), None).await, 404, "trash_entry_not_found");
    }

    // Restoring the top page brings its group back, in place.
    let (s, top) = api.post("/api/trash/handbook/restore", json!({})).await;
    assert_eq!(s, StatusCode::OK, "{top}");
    assert_eq!(top["slug"], "handbook");
    let (_, tree) = api.get("/api/pages").await;
    let handbook = tree.as_array().unwrap().iter().find(|n| n["slug"] == "handbook").unwrap().clone();
    assert_eq!(handbook["children"][0]["slug"], "hiring");
    assert_eq!(handbook["children"][0]["children"][0]["slug"], "interviews");
    assert_eq!(handbook["children"].as_array().unwrap().len(), 1, "{handbook}");
    let (_, trash) = api.get("/api/trash").await;
    let left: Vec<_> = trash["items"].as_array().unwrap().iter().map(|i| i["slug"].clone()).collect();
    assert_eq!(left, [json!("old-policy")]);
    assert_eq!(api.get("/api/notes?tag=people").await.1["total"], 1);
    srv.stop().await;
}

/// A restored revision brings back the title it had, unless the person keeps the
/// current one.
#[tokio::test]
async fn restoring_a_revision_restores_its_title_unless_kept() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("restore@x.io").await;
    let (_, v1) = api.post("/api/pages", json!({"title": "Release plan", "content": "# Release plan\n\nQ1.\n"})).await;
    let r1 = v1["revision"].as_str().unwrap().to_owned();
    api.put("/api/pages/release-plan", json!({"content": "# Launch plan\n\nQ2.\n"})).await;
    let (_, now) = api.get("/api/pages/release-plan").await;
    assert_eq!(now["title"], "Launch plan");
    let (_, rev) = api.get(&format!("/api/pages/release-plan/history/{r1}")).await;
    assert_eq!(rev["title"], "Release plan");

    let (s, p) = api.post(&format!("/api/pages/release-plan/restore/{r1}"), json!({})).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!((p["title"].as_str(), p["content"].as_str()), (Some("Release plan"), Some("# Release plan\n\nQ1.\n")));
    // Without a body at all, as some clients send it.
    api.put("/api/pages/release-plan", json!({"title": "Something else"})).await;
    let r = api.send(Method::POST, &format!("/api/pages/release-plan/restore/{r1}"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["title"], "Release plan");

    api.put("/api/pages/release-plan", json!({"title": "Plan (current)", "content": "# Launch plan\n\nQ3.\n"})).await;
    let (s, p) = api.post(&format!("/api/pages/release-plan/restore/{r1}"), json!({"keep_title": true})).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!((p["title"].as_str(), p["content"].as_str()), (Some("Plan (current)"), Some("# Release plan\n\nQ1.\n")));
    // And the next edit keeps what was chosen: the heading did not change.
    let (_, p) = api.put("/api/pages/release-plan", json!({"content": "# Release plan\n\nQ1, confirmed.\n"})).await;
    assert_eq!(p["title"], "Plan (current)");
    let r = api
        .send(Method::POST, &format!("/api/pages/release-plan/restore/{r1}"), Some(json!({"keep_title": "yes"})))
        .await;
    assert_problem(&r, 422, "invalid_body");
    srv.stop().await;
}

/// Siblings ordered by hand keep that order: in the tree, among the children, in every
/// answer; pages never ordered follow by title; a move to another parent drops the number.
#[tokio::test]
async fn siblings_ordered_by_hand_keep_their_order() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("order@x.io").await;
    api.page("guide", "# Guide").await;
    for slug in ["alpha", "beta", "gamma"] {
        api.post("/api/pages", json!({"slug": slug, "parent": "guide", "content": format!("# {slug}")})).await;
    }
    let children = async || -> Vec<String> {
        let (_, kids) = api.get("/api/pages/guide/children").await;
        let listed: Vec<String> =
            kids["items"].as_array().unwrap().iter().map(|k| k["slug"].as_str().unwrap().to_owned()).collect();
        let (_, tree) = api.get("/api/pages").await;
        let guide = tree.as_array().unwrap().iter().find(|n| n["slug"] == "guide").unwrap().clone();
        let in_tree: Vec<String> =
            guide["children"].as_array().unwrap().iter().map(|k| k["slug"].as_str().unwrap().to_owned()).collect();
        assert_eq!(listed, in_tree, "the tree and the children list agree");
        listed
    };
    assert_eq!(children().await, ["alpha", "beta", "gamma"], "by title until ordered");
    assert!(api.get("/api/pages/alpha").await.1["position"].is_null());

    let (s, gamma) = api.post("/api/pages/gamma/position", json!({"after": null})).await;
    assert_eq!(s, StatusCode::OK, "{gamma}");
    assert_eq!(gamma["position"], 0);
    assert_eq!(children().await, ["gamma", "alpha", "beta"]);
    let (s, beta) = api.post("/api/pages/beta/position", json!({"after": "gamma"})).await;
    assert_eq!((s, beta["position"].clone()), (StatusCode::OK, json!(1)));
    assert_eq!(children().await, ["gamma", "beta", "alpha"]);
    // Where it already is: no commit.
    let before = api.get("/api/pages/beta/history").await.1["total"].clone();
    api.post("/api/pages/beta/position", json!({"after": "gamma"})).await;
    assert_eq!(api.get("/api/pages/beta/history").await.1["total"], before);
    let (_, h) = api.get("/api/pages/beta/history").await;
    assert!(h["items"][0]["message"].as_str().unwrap().starts_with("Order beta"), "{h}");

    // A page that arrives later follows the ordered ones.
    api.post("/api/pages", json!({"slug": "aardvark", "parent": "guide", "content": "# Aardvark"})).await;
    assert_eq!(children().await, ["gamma", "beta", "alpha", "aardvark"]);
    // Only a sibling can be named; the page must be live.
    let r = api.send(Method::POST, "/api/pages/alpha/position", Some(json!({"after": "guide"}))).await;
    assert_problem(&r, 400, "not_a_sibling");
    let r = api.send(Method::POST, "/api/pages/nothing/position", Some(json!({"after": null}))).await;
    assert_problem(&r, 404, "page_not_found");
    let r = api.send(Method::POST, "/api/pages/alpha/position", Some(json!({"after": 3}))).await;
    assert_problem(&r, 422, "invalid_body");
    // Top-level pages order the same way.
    api.page("zulu", "# Zulu").await;
    let (s, _) = api.post("/api/pages/zulu/position", json!({})).await;
    assert_eq!(s, StatusCode::OK);
    let (_, tree) = api.get("/api/pages").await;
    assert_eq!(tree[0]["slug"], "zulu");

    // Moved elsewhere: its number there meant nothing.
    let (_, moved) = api.post("/api/pages/gamma/move", json!({"parent": null})).await;
    assert!(moved["position"].is_null(), "{moved}");
    assert_eq!(children().await, ["beta", "alpha", "aardvark"]);
    srv.stop().await;
}

/// Every object of a repository, its content included (`git cat-file --batch-all-objects`
/// reads packed and loose objects alike, reachable or not).
fn all_objects(repo: &std::path::Path) -> String {
    let out = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Trees hold object ids as bytes.
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A purge takes the page out of the repository: no object holds its text afterwards,
/// the repository is sound, the revision ids the rewrite changed keep answering (history,
/// diff, restore, a save's base revision), and a save racing the purge is kept.
#[tokio::test]
async fn a_purged_page_leaves_no_trace_in_the_repository() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("forget@x.io").await;
    let repo = env.data_dir().join("workspaces").join("forget.git");
    api.page("keep", "# Keep\n\nfirst\n").await;
    api.page("secret", "# Secret\n\nthe launch code is OSPREY-4711\n").await;
    let k2 = api.put("/api/pages/keep", json!({"content": "# Keep\n\nsecond\n"})).await.1;
    api.put("/api/pages/secret", json!({"content": "# Secret\n\nOSPREY-4711, and WREN-0815 too\n"})).await;
    api.post("/api/pages/secret/rename", json!({"new_slug": "hidden"})).await;
    let k3 = api.put("/api/pages/keep", json!({"content": "# Keep\n\nthird\n"})).await.1;
    api.delete("/api/pages/hidden").await;
    api.page("other", "# Other\n").await;
    let (old2, old3) = (k2["revision"].as_str().unwrap().to_owned(), k3["revision"].as_str().unwrap().to_owned());
    assert!(all_objects(&repo).contains("OSPREY-4711"));

    // Saves keep coming while the purge rewrites the history.
    let saver = {
        let api = api.clone();
        tokio::spawn(async move {
            let mut codes = Vec::new();
            for i in 0..8 {
                codes.push(api.put("/api/pages/other", json!({"content": format!("# Other\n\n{i}\n")})).await.0);
            }
            codes
        })
    };
    assert_eq!(api.post("/api/trash/hidden/purge", json!({})).await.0, StatusCode::NO_CONTENT);
    assert!(saver.await.unwrap().iter().all(|s| *s == StatusCode::OK));
    assert_eq!(api.get("/api/pages/other").await.1["content"], "# Other\n\n7\n");

    let objects = all_objects(&repo);
    assert!(!objects.contains("OSPREY-4711") && !objects.contains("WREN-0815"), "the purged text is gone");
    assert_fsck(&repo);
    assert!(!repo.join(cairn::testing::git::pack::HELD).exists());
    // Nor does a backup made afterwards: its copy of the repository, nor its rows.
    let backup = env.dir.path().join("backup");
    cairn::testing::backup::backup(&srv.ctx, &backup).await.unwrap();
    let copied = all_objects(&backup.join("files/workspaces/forget.git"));
    assert!(copied.contains("# Keep") && !copied.contains("OSPREY-4711"));
    let rows = std::fs::read_to_string(backup.join("database.jsonl")).unwrap();
    assert!(rows.contains("forget@x.io") && !rows.contains("OSPREY-4711") && !rows.contains("WREN-0815"));
    // The purge's own commit stays, as the record of who purged a page — by its id only.
    let log = git(&repo, &["log", "--format=%an|%s%n%b"]);
    assert!(log.lines().any(|l| l == "forget@x.io|Purge a page from the trash"), "{log}");
    assert!(!log.contains("Secret") && !log.contains("secret") && !log.contains("hidden"), "{log}");

    // The rewrite gave keep's later revisions new ids; the old ones still answer.
    let (_, h) = api.get("/api/pages/keep/history").await;
    assert_eq!(h["total"], 3);
    let new3 = h["items"][0]["sha"].as_str().unwrap().to_owned();
    assert_ne!(new3, old3);
    assert_eq!(api.get("/api/pages/keep").await.1["revision"], new3);
    let (s, r) = api.get(&format!("/api/pages/keep/history/{old2}")).await;
    assert_eq!((s, r["content"].as_str()), (StatusCode::OK, Some("# Keep\n\nsecond\n")));
    let (s, d) = api.get(&format!("/api/pages/keep/history/{old3}/diff?against={old2}")).await;
    assert_eq!(s, StatusCode::OK);
    assert!(d["unified"].as_str().unwrap().contains("+third"), "{d}");
    // A save based on the old id of the current revision is not stale.
    let (s, saved) = api.put("/api/pages/keep", json!({"content": "# Keep\n\nfourth\n", "base_revision": old3})).await;
    assert_eq!(s, StatusCode::OK, "{saved}");
    let (s, restored) = api.post(&format!("/api/pages/keep/restore/{old2}"), json!({})).await;
    assert_eq!((s, restored["content"].as_str()), (StatusCode::OK, Some("# Keep\n\nsecond\n")));

    // The index still matches the repository it is rebuilt from.
    let before = api.get("/api/pages/keep/history").await.1;
    cairn::testing::reindex::all(&srv.ctx).await.unwrap();
    assert_eq!(api.get("/api/pages/keep/history").await.1, before);
    assert_eq!(api.get(&format!("/api/pages/keep/history/{old2}")).await.0, StatusCode::OK);
    srv.stop().await;
}

/// An owner erases one revision's content (a pasted password): the revision stays in the
/// history with the content of the one before, no object holds the erased text, later
/// ids keep answering; members may not, and the page's current content cannot be erased.
#[tokio::test]
async fn an_owner_erases_one_revisions_content() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("erase@x.io").await;
    let member = srv.user("erase-member@x.io").await;
    let outsider = srv.user("erase-out@x.io").await;
    owner.post("/api/workspaces", json!({"name": "Ops"})).await;
    owner.post("/api/workspaces/ops/members", json!({"email": "erase-member@x.io"})).await;
    let repo = env.data_dir().join("workspaces").join("ops.git");
    let v1 = owner.post("/api/pages?ws=ops", json!({"slug": "db", "content": "# DB\n\nhost: db1\n"})).await.1;
    let v2 =
        owner.put("/api/pages/db?ws=ops", json!({"content": "# DB\n\nhost: db1\npassword: HUNTER2-XYZ\n"})).await.1;
    let other = owner.post("/api/pages?ws=ops", json!({"slug": "later", "content": "# Later\n"})).await.1;
    let v3 = owner.put("/api/pages/db?ws=ops", json!({"content": "# DB\n\nhost: db2\n"})).await.1;
    let sha = |v: &Value| v["revision"].as_str().unwrap().to_owned();
    let erase = |sha: &str| format!("/api/pages/db/history/{sha}/erase?ws=ops");
    assert!(all_objects(&repo).contains("HUNTER2-XYZ"));

    assert_problem(&member.send(Method::POST, &erase(&sha(&v2)), None).await, 403, "owner_only");
    assert_problem(&outsider.send(Method::POST, &erase(&sha(&v2)), None).await, 404, "workspace_not_found");
    assert_problem(&owner.send(Method::POST, &erase("0123456789abcdef"), None).await, 404, "revision_not_found");
    assert_problem(&owner.send(Method::POST, &erase(&sha(&v3)), None).await, 409, "revision_is_current");

    let (s, erased) = owner.post(&erase(&sha(&v2)), json!({})).await;
    assert_eq!(s, StatusCode::OK, "{erased}");
    assert_ne!(erased["sha"], sha(&v2));
    assert!(erased["renamed"].as_u64().unwrap() >= 3, "{erased}");
    assert!(!all_objects(&repo).contains("HUNTER2-XYZ"));
    assert_fsck(&repo);
    let log = git(&repo, &["log", "-1", "--format=%an|%s"]);
    assert!(log.starts_with("erase@x.io|Erase the content of revision"), "{log}");

    // The revision is still there, by its old id and its new one, holding v1's content.
    for id in [sha(&v2), erased["sha"].as_str().unwrap().to_owned()] {
        let (s, r) = owner.get(&format!("/api/pages/db/history/{id}?ws=ops")).await;
        assert_eq!((s, r["content"].as_str()), (StatusCode::OK, Some("# DB\n\nhost: db1\n")));
    }
    let (_, d) = owner.get(&format!("/api/pages/db/history/{}/diff?ws=ops", sha(&v2))).await;
    assert_eq!((d["added"].as_u64(), d["removed"].as_u64()), (Some(0), Some(0)), "{d}");
    assert_eq!(owner.get("/api/pages/db/history?ws=ops").await.1["total"], 3);
    assert_eq!(owner.get(&format!("/api/pages/db/history/{}?ws=ops", sha(&v1))).await.0, StatusCode::OK);
    let (s, r) = owner.get(&format!("/api/pages/later/history/{}?ws=ops", sha(&other))).await;
    assert_eq!((s, r["content"].as_str()), (StatusCode::OK, Some("# Later\n")));
    assert_eq!(owner.get("/api/pages/db?ws=ops").await.1["content"], "# DB\n\nhost: db2\n");
    srv.stop().await;
}

/// Siblings without a hand-made order sort naturally — Sprint 2 before Sprint 10 — in the
/// tree, a page's children, its view and MCP's `list_children` alike.
#[tokio::test]
async fn siblings_sort_naturally() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("sprints@x.io").await;
    api.page("sprints", "# Sprints").await;
    for n in [10, 2, 1, 11, 3, 12] {
        let (s, _) = api.post("/api/pages", json!({"title": format!("Sprint {n}"), "parent": "sprints"})).await;
        assert_eq!(s, StatusCode::CREATED);
    }
    let want = ["Sprint 1", "Sprint 2", "Sprint 3", "Sprint 10", "Sprint 11", "Sprint 12"];
    let titles = |v: &Value| -> Vec<String> {
        v.as_array().unwrap().iter().map(|c| c["title"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(titles(&api.get("/api/pages").await.1[0]["children"]), want);
    assert_eq!(titles(&api.get("/api/pages/sprints/children").await.1["items"]), want);
    assert_eq!(titles(&api.get("/api/pages/sprints/view").await.1["children"]), want);
    let token = api.pat().await;
    let client = reqwest::Client::new();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "list_children", "arguments": {"slug": "sprints"}}});
    let res: Value = client
        .post(format!("{}/api/mcp", srv.url))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&call)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(titles(&res["result"]["structuredContent"]["items"]), want, "{res}");
    srv.stop().await;
}

/// NUL in a page's content or title is refused alike on both databases (PostgreSQL
/// cannot store it): 400 `invalid_text`, nothing written — by every way in.
#[tokio::test]
async fn nul_in_content_or_title_is_refused_on_both_databases() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("nul-text@example.com").await;
    let page = api.page("real", "# Real\n").await;
    for (method, path, body) in [
        (Method::POST, "/api/pages", json!({"slug": "nul", "content": "a\u{0}b"})),
        (Method::POST, "/api/pages", json!({"title": "A\u{0}B"})),
        (Method::PUT, "/api/pages/real", json!({"content": "x\u{0}y"})),
        (Method::PUT, "/api/pages/real", json!({"title": "x\u{0}y"})),
        (Method::POST, "/api/pages/real/rename", json!({"new_slug": "real-2", "title": "x\u{0}y"})),
    ] {
        let r = api.send(method.clone(), path, Some(body.clone())).await;
        assert_problem(&r, 400, "invalid_text");
    }
    assert_eq!(api.get("/api/pages/nul").await.0, reqwest::StatusCode::NOT_FOUND);
    assert_eq!(api.get("/api/pages/real").await.1["revision"], page["revision"]);
    srv.stop().await;
}

/// After a purge and a `cairn gc`, nothing of the page — its title, its slug, its words —
/// is left in any file of the data directory (the database and the search index on
/// SQLite included): not in the purge's own commit, which names the page by its id, nor
/// in the search index, whose entry and merged-away words go with the purge itself.
#[tokio::test]
async fn a_purge_leaves_no_name_or_word_in_any_file() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("names@x.io").await;
    api.page("keep", "# Keep\n\nordinary words\n").await;
    let secret = json!({"title": "Quokkaledger Plans", "content": "# Quokkaledger Plans\n\nzorblaxian numbers\n"});
    assert_eq!(api.post("/api/pages", secret).await.0, StatusCode::CREATED);
    let edit = json!({"content": "# Quokkaledger Plans\n\nmore zorblaxian numbers\n"});
    assert_eq!(api.put("/api/pages/quokkaledger-plans", edit).await.0, StatusCode::OK);
    let found = |q: &'static str| {
        let api = api.clone();
        async move { api.get(&format!("/api/search?q={q}")).await.1["total"].as_i64().unwrap() }
    };
    assert_eq!(found("zorblaxian").await, 1);
    assert_eq!(api.delete("/api/pages/quokkaledger-plans").await.0, StatusCode::NO_CONTENT);
    assert_eq!(api.post("/api/trash/quokkaledger-plans/purge", json!({})).await.0, StatusCode::NO_CONTENT);
    assert_eq!(found("zorblaxian").await, 0);
    srv.stop().await;

    let vars = env.cli_vars();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (code, stdout, stderr) = process::run_to_end(&vars, &["gc"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let mut left = Vec::new();
    let mut dirs = vec![env.dir.path().to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                // The server's log is not data (`LOG_DIR` is apart from `DATA_DIR`).
                if path.file_name().is_some_and(|n| n != "logs") {
                    dirs.push(path);
                }
                continue;
            }
            let bytes = std::fs::read(&path).unwrap_or_default().to_ascii_lowercase();
            for word in [&b"quokkaledger"[..], b"zorblaxian"] {
                if bytes.windows(word.len()).any(|w| w == word) {
                    left.push(format!("{} holds {}", path.display(), String::from_utf8_lossy(word)));
                }
            }
        }
    }
    assert!(left.is_empty(), "{left:#?}");
    // Git keeps its objects compressed: read as git reads them.
    let objects = all_objects(&env.data_dir().join("workspaces").join("names.git")).to_lowercase();
    assert!(objects.contains("ordinary words") && objects.contains("purge a page"), "the repository was read");
    assert!(!objects.contains("quokkaledger") && !objects.contains("zorblaxian"), "{objects}");
}

/// A page's embeds are read many at a time (`GET /api/embeds`): live pages by the name
/// asked (an old slug too), the rest said missing; at most 50 names; the workspace's 404.
#[tokio::test]
async fn embeds_are_read_many_at_a_time() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("embeds@x.io").await;
    api.page("one", "# One\n\nfirst").await;
    api.page("two", "# Two\n\nsecond").await;
    api.page("gone", "# Gone").await;
    api.delete("/api/pages/gone").await;
    api.post("/api/pages/two/rename", json!({"new_slug": "deux"})).await;
    let (s, got) = api.get("/api/embeds?slugs=one,two,gone,nope,Not%20A%20Slug").await;
    assert_eq!(s, StatusCode::OK, "{got}");
    assert_eq!(
        got,
        json!({"items": [{"slug": "one", "title": "One", "content": "# One\n\nfirst"},
                          {"slug": "two", "title": "Two", "content": "# Two\n\nsecond"}],
               "missing": ["gone", "nope", "Not A Slug"]})
    );
    let many: Vec<String> = (0..51).map(|i| format!("p{i}")).collect();
    let r = api.send(Method::GET, &format!("/api/embeds?slugs={}", many.join(",")), None).await;
    assert_problem(&r, 400, "invalid_query");
    let other = srv.user("embeds-other@x.io").await;
    let ws = api.get("/api/me").await.1["default_workspace"].as_str().unwrap().to_owned();
    let r = other.send(Method::GET, &format!("/api/embeds?ws={ws}&slugs=one"), None).await;
    assert_problem(&r, 404, "workspace_not_found");
    srv.stop().await;
}
