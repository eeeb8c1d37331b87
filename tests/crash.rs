//! Crash safety: SIGKILL in the middle of a stream of saves, then restart. Every save
//! that was answered 2xx is there with its history, `git fsck` is clean, and index and
//! files agree (a reindex changes nothing).

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::process::*;
use common::*;
use serde_json::{Value, json};

/// (slug, revision, content) of every acknowledged save.
type Acked = Arc<Mutex<Vec<(String, String, String)>>>;

async fn writer(api: Api, id: usize, acked: Acked) {
    let ok = |r: Option<Reply>| r.filter(|r| r.status.is_success()).map(|r| r.json());
    for i in 0..400usize {
        let slug = format!("w{id}-{i}");
        let content = format!("# Page {id}/{i}\n\nfirst version [[w{id}-{}]]\n", i.saturating_sub(1));
        let r =
            api.try_send(reqwest::Method::POST, "/api/pages", Some(json!({"slug": slug, "content": content}))).await;
        let Some(page) = ok(r) else { return };
        acked.lock().unwrap().push((slug.clone(), page["revision"].as_str().unwrap().to_owned(), content));
        let content = format!("# Page {id}/{i}\n\nsecond version\n");
        let r =
            api.try_send(reqwest::Method::PUT, &format!("/api/pages/{slug}"), Some(json!({"content": content}))).await;
        let Some(page) = ok(r) else { return };
        acked.lock().unwrap().push((slug, page["revision"].as_str().unwrap().to_owned(), content));
    }
}

async fn everything(api: &Api) -> Vec<Value> {
    let mut out = vec![api.get("/api/pages").await.1];
    let notes = api.get("/api/notes?limit=500").await.1;
    for item in notes["items"].as_array().unwrap() {
        let slug = item["slug"].as_str().unwrap();
        out.push(api.get(&format!("/api/pages/{slug}")).await.1);
        out.push(api.get(&format!("/api/pages/{slug}/history")).await.1);
    }
    out.push(notes);
    out
}

#[tokio::test]
async fn sigkill_during_saves_loses_no_acknowledged_save() {
    let env = Env::new().await;
    let mut p = Proc::start(env.dir.path(), &env.db_url, &[]);
    let anon =
        Api { base: p.url(), client: reqwest::Client::builder().cookie_store(true).build().unwrap(), bearer: None };
    let (s, _) = anon.post("/api/auth/register", json!({"email": "crash@x.io", "password": PASSWORD})).await;
    assert_eq!(s, 201);
    let api = anon.with_bearer(&anon.pat().await);

    let acked: Acked = Default::default();
    let writers: Vec<_> = (0..16).map(|id| tokio::spawn(writer(api.clone(), id, acked.clone()))).collect();
    // Let a stream of saves build up, then kill the process without warning.
    let deadline = Instant::now() + Duration::from_secs(30);
    while acked.lock().unwrap().len() < 60 {
        assert!(Instant::now() < deadline, "saves are not happening");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    p.child.kill().unwrap();
    p.child.wait().unwrap();
    for w in writers {
        let _ = w.await;
    }
    let acked = acked.lock().unwrap().clone();
    drop(p);

    let repo = env.data_dir().join("workspaces/crash.git");
    assert_fsck(&repo);

    // Restart: the start-up check repairs a commit whose transaction never ran.
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    let api = Api { base: p.url(), ..api };
    for (slug, sha, content) in &acked {
        let (s, rev) = api.get(&format!("/api/pages/{slug}/history/{sha}")).await;
        assert_eq!(s, 200, "acknowledged save {slug}@{sha} is missing: {rev}");
        assert_eq!(rev["content"].as_str().unwrap(), content);
    }
    let before = everything(&api).await;
    assert_eq!(p.terminate(), 0);

    // Index and files agree: a full reindex changes nothing.
    let data = env.data_dir();
    let logs = env.dir.path().join("logs");
    let (code, out, err) = run_to_end(
        &[("DATA_DIR", data.to_str().unwrap()), ("LOG_DIR", logs.to_str().unwrap()), ("DATABASE_URL", &env.db_url)],
        &["reindex"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    let api = Api { base: p.url(), ..api };
    assert_eq!(everything(&api).await, before);
    assert_eq!(p.terminate(), 0);
}
