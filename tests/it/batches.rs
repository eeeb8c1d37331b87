//! Batches: saves queued on a workspace's write lock share one flush, yet
//! each keeps its own commit and answer; a refused save is refused alone, a failed flush
//! refuses the whole batch and leaves nothing behind.
//!
//! Each test holds the workspace's write lock itself (the server runs in this process),
//! queues saves behind it, and lets go once all of them wait: so they form one batch for
//! certain, not by the luck of timing.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Queues the requests behind the lock, held here, one after the other (each waits for
/// the lock before the next is sent, and tokio's lock is fair: they run in this order),
/// then lets go. Answers the replies in the order of the requests.
async fn queued(srv: &Server, api: &Api, workspace: &str, requests: Vec<(Method, String, Value)>) -> Vec<Reply> {
    let slot = srv.ctx.writers.get(workspace);
    let guard = slot.lock().await;
    let mut tasks = Vec::new();
    for (i, (method, path, body)) in requests.into_iter().enumerate() {
        let api = api.clone();
        tasks.push(tokio::spawn(async move { api.send(method, &path, Some(body)).await }));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while slot.waiting() <= i {
            assert!(std::time::Instant::now() < deadline, "save {i} never queued");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    drop(guard);
    let mut replies = Vec::new();
    for t in tasks {
        replies.push(t.await.unwrap());
    }
    replies
}

/// Saves saved together with others of their group (`pages::combine`).
fn together(srv: &Server) -> u64 {
    srv.ctx.queued.saved_together.load(Ordering::SeqCst)
}

fn counters(srv: &Server) -> (u64, u64) {
    (srv.ctx.writers.flushes.load(Ordering::SeqCst), srv.ctx.writers.flushed_saves.load(Ordering::SeqCst))
}

#[tokio::test]
async fn sixteen_queued_saves_share_one_flush_and_keep_their_own_commits() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("batch@x.io").await;
    api.page("hot", "# Hot\n\nversion 0\n").await;
    let repo = env.data_dir().join("workspaces").join("batch.git");
    let (flushes, saves) = counters(&srv);

    // Eight updates of one page and eight new pages, all queued behind the lock.
    let mut requests = Vec::new();
    for i in 1..=8 {
        requests.push((
            Method::PUT,
            "/api/pages/hot".to_owned(),
            json!({"content": format!("# Hot\n\nversion {i}\n")}),
        ));
        requests.push((
            Method::POST,
            "/api/pages".to_owned(),
            json!({"slug": format!("new-{i}"), "content": format!("# New {i}\n\nsee [[hot]]\n")}),
        ));
    }
    let replies = queued(&srv, &api, "batch", requests.clone()).await;

    // One flush for all sixteen, decided and written as one group.
    assert_eq!(counters(&srv), (flushes + 1, saves + 16));
    assert_eq!(together(&srv), 16);
    let mut hot_revisions = Vec::new();
    for ((_, path, body), r) in requests.iter().zip(&replies) {
        assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text);
        let page = r.json();
        assert_eq!(page["content"], body["content"], "{path}: the answer is this save's content");
        let revision = page["revision"].as_str().unwrap();
        let file = format!("{}:{}", revision, cairn::testing::git::live_path(page["slug"].as_str().unwrap()));
        // Each answer's revision holds exactly its own content, in git.
        assert_eq!(git(&repo, &["show", &file]), body["content"].as_str().unwrap(), "{path} at {revision}");
        if path == "/api/pages/hot" {
            hot_revisions.push(revision.to_owned());
        }
    }
    // History: one commit per save, in the order the saves ran: git's order of the
    // page's commits, and the order they were queued in.
    let (_, history) = api.get("/api/pages/hot/history?limit=100").await;
    let listed: Vec<&str> = history["items"].as_array().unwrap().iter().map(|i| i["sha"].as_str().unwrap()).collect();
    assert_eq!(listed.len(), 9, "{history}");
    let in_git = git(&repo, &["log", "--format=%H", "main", "--", &cairn::testing::git::live_path("hot")]);
    assert_eq!(listed, in_git.lines().collect::<Vec<_>>());
    let mut answered = hot_revisions.clone();
    answered.sort();
    let mut updates: Vec<String> = listed[..8].iter().map(|s| s.to_string()).collect();
    updates.sort();
    assert_eq!(updates, answered, "the history holds exactly the answered revisions");
    let newest_first: Vec<&str> = hot_revisions.iter().rev().map(String::as_str).collect();
    assert_eq!(&listed[..8], &newest_first[..], "history lists the updates in the order they were queued");
    // The page now is the last save that ran, as that save answered it.
    let (_, now) = api.get("/api/pages/hot").await;
    assert_eq!(now["revision"], listed[0]);
    let last = replies.iter().find(|r| r.json()["revision"] == listed[0]).unwrap();
    assert_eq!(now["content"], last.json()["content"]);
    // The branch is one straight line of 17 page commits, and git is clean.
    assert_eq!(git(&repo, &["rev-list", "--count", "main"]).trim(), "17");
    assert_eq!(git(&repo, &["rev-list", "--merges", "main"]).trim(), "");
    let (_, view) = api.get("/api/pages/hot/view").await;
    assert_eq!(view["backlinks"].as_array().map(Vec::len), Some(8), "{view}");
    assert_fsck(&repo);
    srv.stop().await;
}

#[tokio::test]
async fn a_refused_save_in_a_batch_is_refused_alone_and_later_saves_see_earlier_ones() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("mixed@x.io").await;
    let first = api.page("doc", "# Doc\n\none\n").await;
    let stale = first["revision"].as_str().unwrap().to_owned();
    let requests = vec![
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "twin", "content": "first"})),
        // Sees the twin created just before it in the same batch: 409.
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "twin", "content": "second"})),
        (Method::PUT, "/api/pages/doc".to_owned(), json!({"content": "# Doc\n\ntwo\n"})),
        // Based on the revision the save before it replaced: stale, 409.
        (Method::PUT, "/api/pages/doc".to_owned(), json!({"content": "# Doc\n\nthree\n", "base_revision": stale})),
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "after", "content": "last"})),
    ];
    let replies = queued(&srv, &api, "mixed", requests).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses, [201, 409, 200, 409, 201], "{:?}", replies.iter().map(|r| &r.text).collect::<Vec<_>>());
    assert_problem(&replies[1], 409, "page_exists");
    assert_problem(&replies[3], 409, "stale_revision");
    // The 409 names the revision the batch's earlier save made.
    assert_eq!(replies[3].json()["current_revision"], replies[2].json()["revision"]);
    assert_eq!(api.get("/api/pages/twin").await.1["content"], "first");
    assert_eq!(api.get("/api/pages/doc").await.1["content"], "# Doc\n\ntwo\n");
    assert_eq!(api.get("/api/pages/after").await.1["content"], "last");
    let repo = env.data_dir().join("workspaces").join("mixed.git");
    assert_eq!(git(&repo, &["rev-list", "--count", "main"]).trim(), "4");
    assert_fsck(&repo);
    srv.stop().await;
}

/// A group decides each save against the ones queued before it, from one read: a
/// create under a parent created earlier in the group, an edit of a page created earlier,
/// an edit that changes nothing after one that did (answered with that one's revision),
/// an edit of a page that is not there (404), a create under a parent that is not there
/// (400).
#[tokio::test]
async fn a_group_decides_each_save_against_the_saves_before_it() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("order@x.io").await;
    api.page("doc", "# Doc\n\none\n").await;
    let post = |body: Value| (Method::POST, "/api/pages".to_owned(), body);
    let put = |slug: &str, body: Value| (Method::PUT, format!("/api/pages/{slug}"), body);
    let requests = vec![
        post(json!({"slug": "parent", "content": "# Parent\n"})),
        post(json!({"slug": "child", "content": "# Child\n\nsee [[doc]] #kid\n", "parent": "parent"})),
        put("child", json!({"content": "# Child\n\nsecond #kid #grown\n"})),
        put("doc", json!({"content": "# Doc\n\ntwo\n"})),
        put("doc", json!({"content": "# Doc\n\ntwo\n"})),
        put("missing", json!({"content": "x"})),
        post(json!({"slug": "orphan", "content": "x", "parent": "nowhere"})),
    ];
    let before = together(&srv);
    let replies = queued(&srv, &api, "order", requests).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(
        statuses,
        [201, 201, 200, 200, 200, 404, 400],
        "{:?}",
        replies.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    assert_eq!(together(&srv), before + 7, "the seven were one group");
    assert_problem(&replies[5], 404, "page_not_found");
    assert_problem(&replies[6], 400, "parent_not_found");
    assert_eq!(replies[1].json()["parent"], "parent");
    // The edit of the page created just before it: its content, tags and parent.
    let child = replies[2].json();
    assert_eq!(child["content"], "# Child\n\nsecond #kid #grown\n");
    assert_eq!(child["parent"], "parent");
    assert_eq!(child["tags"], json!(["grown", "kid"]));
    assert_eq!(child["created_at"], replies[1].json()["created_at"]);
    // The edit that changed nothing answers the page as the one before it left it.
    assert_eq!(replies[4].json()["revision"], replies[3].json()["revision"]);
    // What the index holds is what the answers said.
    let (_, now) = api.get("/api/pages/child").await;
    assert_eq!((now["revision"].clone(), now["tags"].clone()), (child["revision"].clone(), child["tags"].clone()));
    assert_eq!(api.get("/api/notes?tag=grown").await.1["total"], json!(1));
    let (_, history) = api.get("/api/pages/child/history").await;
    assert_eq!(history["items"].as_array().map(Vec::len), Some(2), "{history}");
    let (_, doc) = api.get("/api/pages/doc/view").await;
    assert_eq!(doc["backlinks"], json!([]), "the child's second save dropped its link: {doc}");
    let (_, children) = api.get("/api/pages/parent/children").await;
    assert_eq!(children["items"][0]["slug"], "child", "{children}");
    // Four commits on top of doc's first, in the order queued; git is clean.
    let repo = env.data_dir().join("workspaces").join("order.git");
    assert_eq!(git(&repo, &["rev-list", "--count", "main"]).trim(), "5");
    let subjects = git(&repo, &["log", "--reverse", "--format=%s", "main"]);
    assert_eq!(
        subjects.lines().collect::<Vec<_>>(),
        ["Create Doc", "Create Parent", "Create Child", "Update Child", "Update Doc"]
    );
    assert_fsck(&repo);
    srv.stop().await;
}

/// When a group's rows fail together, the group takes them back and saves one by one:
/// every save goes through once, in order, with nothing of the failed attempt left.
#[tokio::test]
async fn a_group_whose_rows_fail_together_saves_its_saves_one_by_one() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("again@x.io").await;
    api.page("doc", "# Doc\n\none\n").await;
    let repo = env.data_dir().join("workspaces").join("again.git");
    srv.ctx.test_hooks.fail_next_group.store(true, Ordering::SeqCst);
    let requests = vec![
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "a", "content": "# A\n\nzebra [[doc]]\n"})),
        (Method::PUT, "/api/pages/doc".to_owned(), json!({"content": "# Doc\n\ntwo #striped\n"})),
        (Method::PUT, "/api/pages/a".to_owned(), json!({"content": "# A\n\nzebra again [[doc]]\n"})),
    ];
    let (flushes, saves) = counters(&srv);
    let before = together(&srv);
    let replies = queued(&srv, &api, "again", requests).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses, [201, 200, 200], "{:?}", replies.iter().map(|r| &r.text).collect::<Vec<_>>());
    assert!(!srv.ctx.test_hooks.fail_next_group.load(Ordering::SeqCst), "the group tried together first");
    assert_eq!(together(&srv), before, "none was saved together");
    assert_eq!(counters(&srv), (flushes + 1, saves + 3), "one by one, in one batch");
    // Exactly one commit and one set of rows per save.
    assert_eq!(git(&repo, &["rev-list", "--count", "main"]).trim(), "4");
    assert_eq!(git(&repo, &["rev-parse", "main"]).trim(), replies[2].json()["revision"].as_str().unwrap());
    assert_eq!(api.get("/api/pages/a/history").await.1["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(api.get("/api/pages/doc/history").await.1["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(api.get("/api/notes?tag=striped").await.1["total"], json!(1));
    let (_, found) = api.get("/api/search?q=zebra").await;
    assert_eq!(found["items"].as_array().map(Vec::len), Some(1), "{found}");
    let (_, doc) = api.get("/api/pages/doc/view").await;
    let backlinks: Vec<&str> =
        doc["backlinks"].as_array().unwrap().iter().map(|b| b["slug"].as_str().unwrap()).collect();
    assert_eq!(backlinks, ["a"], "{doc}");
    assert_fsck(&repo);
    srv.stop().await;
}

#[tokio::test]
async fn a_failed_flush_refuses_the_whole_batch_and_leaves_nothing() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("fail@x.io").await;
    api.page("kept", "# Kept\n\nbefore\n").await;
    let repo = env.data_dir().join("workspaces").join("fail.git");
    let head = git(&repo, &["rev-parse", "main"]);
    let (_, history) = api.get("/api/pages/kept/history").await;
    let (_, pages) = api.get("/api/pages").await;

    srv.ctx.test_hooks.fail_next_flush.store(true, Ordering::SeqCst);
    let requests = vec![
        (Method::PUT, "/api/pages/kept".to_owned(), json!({"content": "# Kept\n\nafter\n"})),
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "gone-1", "content": "never"})),
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "gone-2", "content": "never [[kept]]"})),
    ];
    let replies = queued(&srv, &api, "fail", requests).await;
    for r in &replies {
        assert_problem(r, 503, "database_unavailable");
    }
    // The branch is back where it was, and no row of the batch is there.
    assert_eq!(git(&repo, &["rev-parse", "main"]), head);
    assert_eq!(api.get("/api/pages/kept").await.1["content"], "# Kept\n\nbefore\n");
    assert_eq!(api.get("/api/pages/kept/history").await.1, history);
    assert_eq!(api.get("/api/pages").await.1, pages);
    for slug in ["gone-1", "gone-2"] {
        assert_eq!(api.get(&format!("/api/pages/{slug}")).await.0, StatusCode::NOT_FOUND);
    }
    assert_eq!(api.get("/api/pages/kept/view").await.1["backlinks"], json!([]));
    assert_fsck(&repo);
    // A lone save, which moves the branch with its commit, is refused the same way.
    srv.ctx.test_hooks.fail_next_flush.store(true, Ordering::SeqCst);
    let (s, problem) = api.put("/api/pages/kept", json!({"content": "# Kept\n\nalone\n"})).await;
    assert_eq!(s, StatusCode::SERVICE_UNAVAILABLE, "{problem}");
    assert_eq!(git(&repo, &["rev-parse", "main"]), head);
    assert_eq!(api.get("/api/pages/kept/history").await.1, history);
    assert_fsck(&repo);
    // The next save goes through.
    let (s, page) = api.put("/api/pages/kept", json!({"content": "# Kept\n\nafter\n"})).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(git(&repo, &["rev-parse", "main^"]), head);
    srv.stop().await;
}

#[tokio::test]
async fn a_save_whose_rows_fail_in_a_batch_is_refused_alone_and_leaves_no_row() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("rows@x.io").await;
    api.page("doc", "# Doc\n\none\n").await;
    let repo = env.data_dir().join("workspaces").join("rows.git");

    // The second save's rows fail after its page row, search entry, tags and links
    // were written, inside the batch the first one opened.
    *srv.ctx.test_hooks.fail_rows_of.lock().unwrap() = Some("doc".to_owned());
    let requests = vec![
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "a", "content": "# A\n"})),
        (Method::PUT, "/api/pages/doc".to_owned(), json!({"content": "# Doc\n\ntwo zebra #striped [[a]]\n"})),
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "b", "content": "# B\n\nzebra #striped [[a]]\n"})),
        (Method::PUT, "/api/pages/doc".to_owned(), json!({"content": "# Doc\n\nthree\n"})),
    ];
    let (flushes, _) = counters(&srv);
    let replies = queued(&srv, &api, "rows", requests).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses, [201, 500, 201, 200], "{:?}", replies.iter().map(|r| &r.text).collect::<Vec<_>>());
    assert_problem(&replies[1], 500, "internal");
    assert_eq!(counters(&srv).0, flushes + 1, "the other three shared one flush");

    // Nothing of the refused save: not its row, search entry, tag, link or commit.
    let (_, doc) = api.get("/api/pages/doc").await;
    assert_eq!(doc["content"], "# Doc\n\nthree\n");
    assert_eq!(doc["revision"], replies[3].json()["revision"]);
    let (_, history) = api.get("/api/pages/doc/history").await;
    assert_eq!(history["items"].as_array().map(Vec::len), Some(2), "{history}");
    // (b, saved after it in the same batch, has the same words, tag and link.)
    let (_, found) = api.get("/api/search?q=zebra").await;
    let slugs: Vec<&str> = found["items"].as_array().unwrap().iter().map(|i| i["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["b"], "{found}");
    let (_, striped) = api.get("/api/notes?tag=striped").await;
    assert_eq!((striped["total"].clone(), striped["items"][0]["slug"].clone()), (json!(1), json!("b")));
    let (_, a) = api.get("/api/pages/a/view").await;
    let backlinks: Vec<&str> = a["backlinks"].as_array().unwrap().iter().map(|b| b["slug"].as_str().unwrap()).collect();
    assert_eq!(backlinks, ["b"], "{a}");
    // Four page commits: doc's first, a, b and doc's third; the refused one's objects
    // are written but named by nothing.
    assert_eq!(git(&repo, &["rev-list", "--count", "main"]).trim(), "4");
    assert_eq!(git(&repo, &["show", &format!("main:{}", cairn::testing::git::live_path("doc"))]), "# Doc\n\nthree\n");
    assert_fsck(&repo);

    // A lone save whose rows fail is refused too (the branch, which a lone save moves
    // with its commit, is put back), and the next one goes through.
    let head = git(&repo, &["rev-parse", "main"]);
    *srv.ctx.test_hooks.fail_rows_of.lock().unwrap() = Some("doc".to_owned());
    let (s, _) = api.put("/api/pages/doc", json!({"content": "# Doc\n\nfour\n"})).await;
    assert_eq!(s, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(git(&repo, &["rev-parse", "main"]), head);
    let (s, page) = api.put("/api/pages/doc", json!({"content": "# Doc\n\nfive\n"})).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(api.get("/api/pages/doc/history").await.1["items"].as_array().map(Vec::len), Some(3));
    assert_eq!(git(&repo, &["rev-list", "--count", "main"]).trim(), "5");
    srv.stop().await;
}

#[tokio::test]
async fn a_lone_save_interrupted_after_its_commit_leaves_the_branch_where_it_was() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("torn@x.io").await;
    api.page("doc", "# Doc\n\none\n").await;
    let repo = env.data_dir().join("workspaces").join("torn.git");
    let head = git(&repo, &["rev-parse", "main"]);
    let (_, history) = api.get("/api/pages/doc/history").await;

    // A lone save moves the branch in the trip that writes its commit; dropped right
    // after it (its writer still holding the lock), it must take the move back.
    *srv.ctx.test_hooks.panic_after_commit_of.lock().unwrap() = Some("doc".to_owned());
    let (s, _) = api.put("/api/pages/doc", json!({"content": "# Doc\n\ntorn\n"})).await;
    assert_eq!(s, StatusCode::INTERNAL_SERVER_ERROR);
    let (s, page) = api.put("/api/pages/doc", json!({"content": "# Doc\n\ntwo\n"})).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    // The next save sits right on top of the first: the interrupted one is named by
    // nothing, in git or in the index.
    assert_eq!(git(&repo, &["rev-parse", "main^"]), head);
    assert_eq!(git(&repo, &["rev-parse", "main"]).trim(), page["revision"].as_str().unwrap());
    let (_, now) = api.get("/api/pages/doc/history").await;
    assert_eq!(now["items"].as_array().map(Vec::len), Some(2), "{now}");
    assert_eq!(now["items"][1], history["items"][0]);
    assert_fsck(&repo);
    srv.stop().await;
}

/// A save's rows are written while its objects are (their ids are known first). When the
/// objects cannot be written after the rows were, the save leaves nothing: not its rows,
/// nor a commit on the branch. In a batch the shared disk failed it, so the batch's
/// saves are refused with it; the saves queued after them go through.
#[tokio::test]
async fn a_save_whose_objects_fail_leaves_no_row_and_no_commit() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("disk@x.io").await;
    api.page("doc", "# Doc\n\none\n").await;
    let repo = env.data_dir().join("workspaces").join("disk.git");
    let head = git(&repo, &["rev-parse", "main"]);
    let (_, history) = api.get("/api/pages/doc/history").await;

    // Alone: refused, the branch where it was, no row of it.
    *srv.ctx.test_hooks.fail_objects_of.lock().unwrap() = Some("doc".to_owned());
    let (s, problem) = api.put("/api/pages/doc", json!({"content": "# Doc\n\nzebra [[x]] #striped\n"})).await;
    assert_eq!(s, StatusCode::INTERNAL_SERVER_ERROR, "{problem}");
    assert_eq!(git(&repo, &["rev-parse", "main"]), head);
    assert_eq!(api.get("/api/pages/doc").await.1["content"], "# Doc\n\none\n");
    assert_eq!(api.get("/api/pages/doc/history").await.1, history);
    assert_eq!(api.get("/api/search?q=zebra").await.1["items"], json!([]));
    assert_eq!(api.get("/api/notes?tag=striped").await.1["total"], json!(0));

    // In a batch: the save and the ones it shares the batch with are refused as a failed
    // flush refuses them (nothing changed: try again); the one queued after them is not.
    *srv.ctx.test_hooks.fail_objects_of.lock().unwrap() = Some("doc".to_owned());
    let requests = vec![
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "before", "content": "# Before\n"})),
        (Method::PUT, "/api/pages/doc".to_owned(), json!({"content": "# Doc\n\nzebra\n"})),
        (Method::POST, "/api/pages".to_owned(), json!({"slug": "after", "content": "# After\n\nzebra\n"})),
    ];
    let replies = queued(&srv, &api, "disk", requests).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses, [503, 503, 201], "{:?}", replies.iter().map(|r| &r.text).collect::<Vec<_>>());
    assert_eq!(api.get("/api/pages/before").await.0, StatusCode::NOT_FOUND);
    assert_eq!(api.get("/api/pages/doc").await.1["content"], "# Doc\n\none\n");
    assert_eq!(api.get("/api/pages/doc/history").await.1, history);
    let found = api.get("/api/search?q=zebra").await.1;
    assert_eq!(found["items"].as_array().map(Vec::len), Some(1), "{found}");
    assert_eq!(found["items"][0]["slug"], "after");
    // Two page commits: doc's first and `after`.
    assert_eq!(git(&repo, &["rev-parse", "main^"]), head);
    assert_eq!(git(&repo, &["rev-list", "--count", "main"]).trim(), "2");
    assert_fsck(&repo);
    srv.stop().await;
}

/// A full disk (ENOSPC where the save's objects are written) is the client's clear 507
/// `storage_full`, not a 500: nothing of the save is kept, and once space is back the
/// same save goes through.
#[tokio::test]
async fn a_full_disk_refuses_the_save_with_507_and_keeps_nothing() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("full@x.io").await;
    api.page("doc", "# Doc\n\none\n").await;
    let repo = env.data_dir().join("workspaces").join("full.git");
    let head = git(&repo, &["rev-parse", "main"]);
    let (_, history) = api.get("/api/pages/doc/history").await;
    *srv.ctx.test_hooks.disk_full_for.lock().unwrap() = Some("doc".to_owned());
    let r = api.send(Method::PUT, "/api/pages/doc", Some(json!({"content": "# Doc\n\ntwo\n"}))).await;
    assert_problem(&r, 507, "storage_full");
    assert_eq!(git(&repo, &["rev-parse", "main"]), head);
    assert_eq!(api.get("/api/pages/doc").await.1["content"], "# Doc\n\none\n");
    assert_eq!(api.get("/api/pages/doc/history").await.1, history);
    assert_fsck(&repo);
    // Space is back: the same save is kept.
    let (s, page) = api.put("/api/pages/doc", json!({"content": "# Doc\n\ntwo\n"})).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(api.get("/api/pages/doc/history").await.1["total"], 2);
    assert_fsck(&repo);
    srv.stop().await;
}

/// SQLite: the connection the batches write through keeps its statement journals in
/// memory (`temp_store=MEMORY`). A group of saves writes its rows under a savepoint, which
/// copies every database page the group changes into such a journal; on disk, past 64
/// KiB, that was a temporary file written one page per system call.
#[tokio::test]
async fn the_batches_connection_keeps_its_statement_journals_in_memory() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    match &srv.ctx.db.saves {
        None => assert_eq!(backend(), "postgres", "only PostgreSQL has no connection kept for the batches"),
        Some(saves) => {
            let mut tx = saves.begin().await.unwrap();
            let store: i64 = sqlx::query_scalar("PRAGMA temp_store").fetch_one(&mut *tx).await.unwrap();
            tx.rollback().await.unwrap();
            assert_eq!(store, 2, "temp_store is MEMORY (2)");
        }
    }
    srv.stop().await;
}
