//! Crash safety: SIGKILL in the middle of a stream of saves and uploads, then restart.
//! Every save that was answered 2xx is there with its history, every upload answered 2xx
//! serves its bytes, `git fsck` is clean, and index and files agree (a reindex changes
//! nothing). (Webhook deliveries under SIGKILL: tests/it/webhooks.rs
//! `kill_9_during_deliveries_loses_nothing_and_resends_nothing_delivered`.)

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::process::*;
use crate::common::*;
use serde_json::{Value, json};

/// (slug, revision, content) of every acknowledged save.
type Acked = Arc<Mutex<Vec<(String, String, String)>>>;
/// (url, bytes) of every acknowledged upload.
type Uploaded = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A 1×1 PNG of its own for each (writer, step): uploads are named by their content.
fn png(id: usize, i: usize) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut z, &[0, id as u8, (i >> 8) as u8, i as u8, 255]).unwrap();
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]);
    chunk(&mut out, b"IDAT", &z.finish().unwrap());
    chunk(&mut out, b"IEND", &[]);
    out
}

async fn uploader(api: Api, id: usize, uploaded: Uploaded) {
    for i in 0..400usize {
        let bytes = png(id, i);
        let r = api.upload("/api/uploads", &bytes, "image/png").await;
        if !r.status.is_success() {
            return;
        }
        uploaded.lock().unwrap().push((r.json()["url"].as_str().unwrap().to_owned(), bytes));
    }
}

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
    let uploaded: Uploaded = Default::default();
    let mut writers: Vec<_> = (0..16).map(|id| tokio::spawn(writer(api.clone(), id, acked.clone()))).collect();
    writers.extend((0..4).map(|id| tokio::spawn(uploader(api.clone(), id, uploaded.clone()))));
    // Let a stream of saves and uploads build up, then kill the process without warning.
    let deadline = Instant::now() + Duration::from_secs(30);
    while acked.lock().unwrap().len() < 60 || uploaded.lock().unwrap().len() < 10 {
        assert!(Instant::now() < deadline, "saves or uploads are not happening");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    p.child.kill().unwrap();
    p.child.wait().unwrap();
    for w in writers {
        let _ = w.await;
    }
    let acked = acked.lock().unwrap().clone();
    let uploaded = uploaded.lock().unwrap().clone();
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
    for (url, bytes) in &uploaded {
        let r = api.send(reqwest::Method::GET, url, None).await;
        assert_eq!(r.status, 200, "acknowledged upload {url} is missing");
        let got = api.client.get(format!("{}{url}", api.base)).bearer_auth(api.bearer.as_deref().unwrap());
        assert_eq!(&got.send().await.unwrap().bytes().await.unwrap()[..], &bytes[..], "{url}");
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
