//! Webhooks end to end: a real receiver on 127.0.0.1, signatures checked by our code and
//! by the Standard Webhooks reference library, retries, failure, a hanging receiver, and
//! a kill -9 in the middle of deliveries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{Api, Env, Server, assert_problem, process::Proc};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use reqwest::Method;
use serde_json::{Value, json};

/// Fast retries so a test sees eight attempts in well under a second.
const FAST: &[&str] = &[
    "--webhook-allow-private=1",
    "--webhook-retry-base-ms",
    "10",
    "--webhook-retry-max-ms",
    "40",
    "--webhook-timeout-ms",
    "2000",
];

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: HashMap<String, String>,
    body: String,
}

#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    /// Requests seen per path, to script answers (`flaky` fails its first one).
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

async fn receive(State(r): State<Receiver>, Path(path): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let n = {
        let mut hits = r.hits.lock().unwrap();
        let n = hits.entry(path.clone()).or_default();
        *n += 1;
        *n
    };
    let headers = headers.iter().map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_owned())).collect();
    let received = Received { path: path.clone(), headers, body: String::from_utf8_lossy(&body).into_owned() };
    if path == "redirect" {
        return (StatusCode::FOUND, [("location", "/ok")]).into_response();
    }
    if path == "huge" {
        // An answer far larger than anything worth reading.
        return (StatusCode::BAD_GATEWAY, "x".repeat(4 * 1024 * 1024)).into_response();
    }
    let status = match path.as_str() {
        "hang" => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            StatusCode::OK
        }
        "dead" => StatusCode::INTERNAL_SERVER_ERROR,
        "flaky" | "order" if n == 1 => StatusCode::INTERNAL_SERVER_ERROR,
        "slow" | "slower" => {
            r.got.lock().unwrap().push(received);
            let ms = if path == "slow" { 30 } else { 500 };
            tokio::time::sleep(Duration::from_millis(ms)).await;
            StatusCode::NO_CONTENT
        }
        _ => {
            r.got.lock().unwrap().push(received);
            StatusCode::OK
        }
    };
    status.into_response()
}

impl Receiver {
    /// Starts on a free loopback port; answers its base URL.
    async fn start(&self) -> String {
        let app = axum::Router::new().route("/{path}", axum::routing::post(receive)).with_state(self.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}")
    }

    fn got(&self, path: &str) -> Vec<Received> {
        self.got.lock().unwrap().iter().filter(|r| r.path == path).cloned().collect()
    }
}

async fn hook(api: &Api, url: &str, extra: Value) -> Value {
    let mut body = json!({"url": url});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let (s, created) = api.post("/api/webhooks", body).await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    created
}

/// Waits until every delivery of the webhook is finished; answers them, oldest first.
async fn settled(api: &Api, id: i64, expect: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (s, list) = api.get(&format!("/api/webhooks/{id}/deliveries?limit=500")).await;
        assert_eq!(s, StatusCode::OK, "{list}");
        let mut items = list["items"].as_array().unwrap().clone();
        let done = items.iter().filter(|d| d["status"] == "delivered" || d["status"] == "failed").count();
        if items.len() >= expect && done == items.len() {
            items.reverse();
            return items;
        }
        assert!(Instant::now() < deadline, "deliveries did not settle: {list}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn webhooks_are_for_owners_and_refuse_bad_targets() {
    let env = Env::new().await;
    let server = env.start(&[]).await;
    let owner = server.user("owner@example.com").await;
    let member = server.user("member@example.com").await;
    let stranger = server.user("stranger@example.com").await;
    let (s, _) = owner.post("/api/workspaces/owner/members", json!({"email": "member@example.com"})).await;
    assert_eq!(s, StatusCode::CREATED);

    // Without WEBHOOK_ALLOW_PRIVATE, no form of a local or private address is accepted.
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://2130706433/hook",
        "http://10.0.0.8/hook",
        "http://192.168.1.1/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[fd00::1]/hook",
        "http://[fe80::1]/hook",
        "http://0.0.0.0/hook",
    ] {
        let r = owner.send(Method::POST, "/api/webhooks", Some(json!({"url": url}))).await;
        assert_problem(&r, 400, "webhook_target_not_allowed");
    }
    for (body, code) in [
        (json!({"url": "ftp://example.com/x"}), "invalid_webhook_url"),
        (json!({"url": "not a url"}), "invalid_webhook_url"),
        (json!({"url": "https://93.184.216.34/h", "secret": "hunter2"}), "invalid_webhook_secret"),
        (json!({"url": "https://93.184.216.34/h", "events": ["page.exploded"]}), "invalid_webhook_events"),
    ] {
        assert_problem(&owner.send(Method::POST, "/api/webhooks", Some(body)).await, 400, code);
    }
    assert_problem(&owner.send(Method::POST, "/api/webhooks", Some(json!({"events": []}))).await, 422, "invalid_body");
    assert_problem(&owner.send(Method::POST, "/api/webhooks", Some(json!({"url": 5}))).await, 422, "invalid_body");

    // A public address is accepted; the secret is shown once, generated when absent.
    let created = hook(&owner, "https://93.184.216.34/hook", json!({"events": ["page.created", "page.deleted"]})).await;
    assert!(created["secret"].as_str().unwrap().starts_with("whsec_"), "{created}");
    assert_eq!(created["events"], json!(["page.created", "page.deleted"]));
    assert_eq!(created["active"], true);
    let id = created["id"].as_i64().unwrap();
    let (s, list) = owner.get("/api/webhooks").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(list["total"], 1);
    assert!(list["items"][0].get("secret").is_none(), "{list}");
    assert_eq!(list["items"][0]["url"], "https://93.184.216.34/hook");

    // A member sees the workspace, so is told no (403); a stranger is told nothing (404).
    let paths = [
        (Method::GET, "/api/webhooks?ws=owner".to_owned()),
        (Method::POST, "/api/webhooks?ws=owner".to_owned()),
        (Method::DELETE, format!("/api/webhooks/{id}")),
        (Method::GET, format!("/api/webhooks/{id}/deliveries")),
    ];
    for (method, path) in &paths {
        let body = (*method == Method::POST).then(|| json!({"url": "https://93.184.216.34/x"}));
        assert_problem(&member.send(method.clone(), path, body.clone()).await, 403, "owner_only");
        let r = stranger.send(method.clone(), path, body).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}: {}", r.text);
    }
    assert_problem(&server.anon().send(Method::GET, "/api/webhooks", None).await, 401, "unauthorized");

    let (s, _) = owner.delete(&format!("/api/webhooks/{id}")).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert_problem(&owner.send(Method::DELETE, &format!("/api/webhooks/{id}"), None).await, 404, "webhook_not_found");
    assert_problem(&owner.send(Method::GET, "/api/webhooks/999999/deliveries", None).await, 404, "webhook_not_found");
    server.stop().await;
}

/// An event no webhook wants is not stored: a wiki without webhooks keeps no outbox.
#[tokio::test]
async fn events_are_stored_only_for_webhooks_that_want_them() {
    let env = Env::new().await;
    let server = env.start(FAST).await;
    let owner = server.user("owner@example.com").await;
    let events = || async {
        sqlx::query_scalar::<_, String>("SELECT type FROM events ORDER BY id")
            .fetch_all(&server.ctx.db.pool)
            .await
            .unwrap()
    };
    owner.page("a", "# A").await;
    owner.put("/api/pages/a", json!({"content": "# A\n\nmore"})).await;
    assert_eq!(events().await, Vec::<String>::new());

    // A webhook for deletions only: updates still store nothing, a deletion its event.
    hook(&owner, "http://127.0.0.1:9/deleted", json!({"events": ["page.deleted"]})).await;
    owner.put("/api/pages/a", json!({"content": "# A\n\nagain"})).await;
    owner.page("b", "# B").await;
    assert_eq!(events().await, Vec::<String>::new());
    assert_eq!(owner.delete("/api/pages/a").await.0, StatusCode::NO_CONTENT);
    assert_eq!(events().await, ["page.deleted"]);
    server.stop().await;
}

#[tokio::test]
async fn every_event_kind_arrives_signed_in_order() {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let env = Env::new().await;
    let server = env.start(FAST).await;
    let owner = server.user("owner@example.com").await;
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let all = hook(&owner, &format!("{base}/all"), json!({"secret": secret})).await;
    assert_eq!(all["secret"], secret);
    let deleted_only = hook(&owner, &format!("{base}/deleted"), json!({"events": ["page.deleted"]})).await;

    owner.page("parent", "# Parent").await;
    let a = owner.page("a", "# A\n\nfirst").await;
    let (s, b) = owner.put("/api/pages/a", json!({"content": "# A\n\nsecond", "base_revision": a["revision"]})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (s, _) = owner.post("/api/pages/a/move", json!({"parent": "parent"})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = owner.post("/api/pages/a/rename", json!({"new_slug": "b"})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = owner.delete("/api/pages/b").await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    let (s, _) = owner.post("/api/trash/b/purge", json!({})).await;
    assert_eq!(s, StatusCode::NO_CONTENT);

    let kinds =
        ["page.created", "page.created", "page.updated", "page.moved", "page.renamed", "page.deleted", "page.deleted"];
    let deliveries = settled(&owner, all["id"].as_i64().unwrap(), kinds.len()).await;
    assert!(deliveries.iter().all(|d| d["status"] == "delivered" && d["attempts"] == 1 && d["response_status"] == 200));
    let got = receiver.got("all");
    assert_eq!(got.len(), kinds.len(), "{got:?}");
    // The page's own events, in the order they happened.
    let types: Vec<String> = got
        .iter()
        .map(|r| serde_json::from_str::<Value>(&r.body).unwrap())
        .filter(|b| b["data"]["slug"] != "parent")
        .map(|b| b["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(types, ["page.created", "page.updated", "page.moved", "page.renamed", "page.deleted", "page.deleted"]);

    let key = cairn::testing::webhooks::key_of(secret).unwrap();
    let mut lines = String::new();
    for r in &got {
        let (id, ts, sig) =
            (&r.headers["webhook-id"], &r.headers["webhook-timestamp"], &r.headers["webhook-signature"]);
        assert!(id.starts_with("evt_"), "{id}");
        assert_eq!(r.headers["content-type"], "application/json");
        let expected = cairn::testing::webhooks::signature(&key, id, ts.parse().unwrap(), r.body.as_bytes());
        assert_eq!(sig, &expected);
        let body: Value = serde_json::from_str(&r.body).unwrap();
        let data = &body["data"];
        assert_eq!(data["workspace"], "owner");
        assert!(data["revision"].as_str().unwrap().len() == 40, "{body}");
        assert_eq!(data["actor"]["name"], "owner@example.com");
        assert!(data["actor"]["id"].is_i64());
        assert!(body["timestamp"].as_str().unwrap().ends_with('Z'));
        if body["type"] == "page.renamed" {
            assert_eq!(data["previous_slug"], "a");
            assert_eq!(data["slug"], "b");
        } else {
            assert!(data.get("previous_slug").is_none(), "{body}");
        }
        lines.push_str(&json!({"secret": secret, "headers": r.headers, "body": r.body}).to_string());
        lines.push('\n');
    }
    // The reference implementation agrees.
    let out = python("verify_webhooks.py", &[], &lines);
    assert_eq!(out.trim(), format!("verified {}", kinds.len()));

    // The filtered webhook got the deletions only.
    let deleted = settled(&owner, deleted_only["id"].as_i64().unwrap(), 2).await;
    assert_eq!(deleted.len(), 2);
    assert!(deleted.iter().all(|d| d["event"] == "page.deleted"));
    assert_eq!(receiver.got("deleted").len(), 2);
    server.stop().await;
}

/// Runs a script of tests/interop/python with the interop venv; answers its stdout.
fn python(script: &str, args: &[&str], stdin: &str) -> String {
    use std::io::Write;
    let py = std::env::var("CAIRN_TEST_PYTHON")
        .expect("CAIRN_TEST_PYTHON names the interop venv's python (scripts/test sets it)");
    let path = format!("{}/tests/interop/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let mut child = std::process::Command::new(py)
        .arg(path)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn failures_are_retried_with_backoff_and_end_failed_after_eight_attempts() {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let env = Env::new().await;
    let server = env.start(FAST).await;
    let owner = server.user("owner@example.com").await;
    let flaky = hook(&owner, &format!("{base}/flaky"), json!({})).await;
    let dead = hook(&owner, &format!("{base}/dead"), json!({})).await;
    // Nothing listens on this one: connection refused, every time. The port stays bound
    // (never listening) for the whole test, so no other test's server can be given it.
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let closed = held.local_addr().unwrap().port();
    let refused = hook(&owner, &format!("http://127.0.0.1:{closed}/gone"), json!({})).await;
    owner.page("p", "# P").await;

    let d = settled(&owner, flaky["id"].as_i64().unwrap(), 1).await;
    assert_eq!(d[0]["status"], "delivered", "{d:?}");
    assert_eq!(d[0]["attempts"], 2);
    assert_eq!(d[0]["response_status"], 200);
    assert_eq!(d[0]["error"], Value::Null);
    assert!(d[0]["delivered_at"].is_string());

    for (hook, status) in [(&dead, json!(500)), (&refused, Value::Null)] {
        let d = settled(&owner, hook["id"].as_i64().unwrap(), 1).await;
        assert_eq!(d[0]["status"], "failed", "{d:?}");
        assert_eq!(d[0]["attempts"], 8);
        assert_eq!(d[0]["response_status"], status);
        assert!(d[0]["error"].as_str().is_some_and(|e| !e.is_empty()), "{d:?}");
        assert_eq!(d[0]["next_attempt_at"], Value::Null);
        assert_eq!(d[0]["event"], "page.created");
    }
    assert_eq!(receiver.hits.lock().unwrap()["dead"], 8);
    // Reading the list is read-only: a failed delivery stays failed, with no new attempt
    // due (a delivery pass now would claim nothing).
    assert!(cairn::testing::webhooks::claim(&server.ctx, 100).await.unwrap().is_empty());
    let again = settled(&owner, dead["id"].as_i64().unwrap(), 1).await;
    assert_eq!(again[0]["attempts"], 8);
    assert_eq!(receiver.hits.lock().unwrap()["dead"], 8);
    server.stop().await;
}

#[tokio::test]
async fn a_save_never_waits_for_a_hanging_receiver() {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let env = Env::new().await;
    let server = env.start(&["--webhook-allow-private=1", "--webhook-timeout-ms", "30000"]).await;
    let owner = server.user("owner@example.com").await;
    hook(&owner, &format!("{base}/hang"), json!({})).await;
    owner.page("first", "# First").await;
    // Wait until the first delivery is hanging inside the receiver.
    let deadline = Instant::now() + Duration::from_secs(10);
    while receiver.hits.lock().unwrap().get("hang").copied().unwrap_or(0) == 0 {
        assert!(Instant::now() < deadline, "the delivery never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for i in 0..5 {
        let start = Instant::now();
        owner.page(&format!("p{i}"), "# Saved while the receiver hangs").await;
        let took = start.elapsed();
        assert!(took < Duration::from_secs(1), "save {i} took {took:?}");
    }
    // Stop without waiting out the hanging attempt's 30 s timeout.
    drop(server);
}

#[tokio::test]
async fn a_name_is_checked_again_at_delivery() {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let port = base.rsplit(':').next().unwrap().to_owned();
    let env = Env::new().await;
    let server = env.start(FAST).await;
    let owner = server.user("owner@example.com").await;
    let by_ip = hook(&owner, &format!("{base}/ok"), json!({})).await;
    let by_name = hook(&owner, &format!("http://localhost:{port}/ok"), json!({})).await;
    let token = owner.pat().await;
    server.stop().await;

    // The same webhooks after the setting is gone: both now point somewhere refused.
    let args: Vec<&str> = FAST.iter().copied().filter(|a| !a.starts_with("--webhook-allow-private")).collect();
    let server = Server::start(&env, &args).await;
    let owner = server.anon().with_bearer(&token);
    owner.page("p", "# P").await;
    for (h, needle) in [(&by_ip, "not a public address"), (&by_name, "not a public address")] {
        let d = settled(&owner, h["id"].as_i64().unwrap(), 1).await;
        assert_eq!(d[0]["status"], "failed", "{d:?}");
        assert!(d[0]["error"].as_str().unwrap().contains(needle), "{d:?}");
        assert_eq!(d[0]["response_status"], Value::Null);
    }
    assert!(receiver.got("ok").is_empty());
    server.stop().await;
}

#[tokio::test]
async fn two_workers_share_the_queue_and_send_each_event_once() {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let env = Env::new().await;
    let one = env.start(FAST).await;
    let two = env.start(FAST).await;
    let owner = one.user("owner@example.com").await;
    let hook_id = hook(&owner, &format!("{base}/slow"), json!({})).await["id"].as_i64().unwrap();
    for i in 0..40 {
        owner.page(&format!("p{i}"), &format!("# Page {i}")).await;
        // Wake the other process's worker as a save there would.
        two.ctx.webhook_wake.notify_one();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while receiver.got("slow").len() < 40 {
        assert!(Instant::now() < deadline, "only {} of 40 arrived", receiver.got("slow").len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every delivery recorded as done, and nothing left for either process to claim: a
    // second send of one would have to come from a claim that can no longer happen.
    settled(&owner, hook_id, 40).await;
    for ctx in [&one.ctx, &two.ctx] {
        assert!(cairn::testing::webhooks::claim(ctx, 100).await.unwrap().is_empty());
    }
    let mut ids: Vec<String> = receiver.got("slow").iter().map(|r| r.headers["webhook-id"].clone()).collect();
    ids.sort();
    let n = ids.len();
    ids.dedup();
    assert_eq!((n, ids.len()), (40, 40), "each event exactly once");
    one.stop().await;
    two.stop().await;
}

#[tokio::test]
async fn kill_9_during_deliveries_loses_nothing_and_resends_nothing_delivered() {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let env = Env::new().await;
    let vars = [
        ("WEBHOOK_ALLOW_PRIVATE", "1"),
        ("WEBHOOK_RETRY_BASE_MS", "10"),
        ("WEBHOOK_RETRY_MAX_MS", "40"),
        ("WEBHOOK_TIMEOUT_MS", "1000"),
        ("ARGON2_MEMORY_KIB", "64"),
        ("ARGON2_ITERATIONS", "1"),
    ];
    let proc = Proc::start(env.dir.path(), &env.db_url, &vars);
    let api = crate::common::process::register(&proc.url(), "o@example.com").await;
    let h = hook(&api, &format!("{base}/slower"), json!({})).await;
    let pages = 60;
    for i in 0..pages {
        api.page(&format!("p{i}"), "# P").await;
    }
    // Kill it while deliveries are under way (each takes the receiver 500 ms).
    let deadline = Instant::now() + Duration::from_secs(20);
    while receiver.got("slower").len() < 5 {
        assert!(Instant::now() < deadline, "no delivery started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(proc); // SIGKILL
    let delivered_before: Vec<String> = {
        let (db, _) = cairn::testing::store::Db::connect(&env.config(&[])).await.unwrap();
        let ids: Vec<i64> = sqlx::query_scalar("SELECT event_id FROM deliveries WHERE status = 'delivered'")
            .fetch_all(&db.pool)
            .await
            .unwrap();
        db.pool.close().await;
        ids.into_iter().map(cairn::testing::webhooks::message_id).collect()
    };
    assert!(delivered_before.len() < pages, "the kill came too late to test anything");

    let proc = Proc::start(env.dir.path(), &env.db_url, &vars);
    let api = Api { base: proc.url(), ..api };
    let all = settled(&api, h["id"].as_i64().unwrap(), pages).await;
    assert_eq!(all.len(), pages);
    assert!(all.iter().all(|d| d["status"] == "delivered"), "{all:?}");
    let mut counts: HashMap<String, usize> = HashMap::new();
    for r in receiver.got("slower") {
        *counts.entry(r.headers["webhook-id"].clone()).or_default() += 1;
    }
    // Every event reached the receiver; deduplicated by id, exactly once each.
    assert_eq!(counts.len(), pages, "{counts:?}");
    // What was recorded delivered before the kill was never sent again; only attempts
    // in flight at the kill (at most the worker's concurrency) were repeated.
    for id in &delivered_before {
        assert_eq!(counts[id], 1, "{id} was delivered before the kill and sent again");
    }
    let repeated = counts.values().filter(|&&n| n > 1).count();
    assert!(repeated <= 16, "{repeated} repeats");
    drop(proc);
}

#[tokio::test]
async fn a_page_waits_for_its_earlier_event_redirects_are_not_followed_and_old_records_go() {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let env = Env::new().await;
    let server = env.start(FAST).await;
    let owner = server.user("owner@example.com").await;
    let order = hook(&owner, &format!("{base}/order"), json!({})).await;
    let redirect = hook(&owner, &format!("{base}/redirect"), json!({"events": ["page.created"]})).await;
    // The receiver refuses the creation once; the update right behind it must wait.
    let p = owner.page("p", "# P").await;
    let (s, _) = owner.put("/api/pages/p", json!({"content": "# P\n\nmore", "base_revision": p["revision"]})).await;
    assert_eq!(s, StatusCode::OK);
    let d = settled(&owner, order["id"].as_i64().unwrap(), 2).await;
    assert_eq!((d[0]["event"].as_str(), d[0]["attempts"].as_i64()), (Some("page.created"), Some(2)), "{d:?}");
    let kinds: Vec<String> = receiver
        .got("order")
        .iter()
        .map(|r| serde_json::from_str::<Value>(&r.body).unwrap()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["page.created", "page.updated"], "one page's events arrive in order");

    // A 302 is a failure, and its Location is never visited.
    let d = settled(&owner, redirect["id"].as_i64().unwrap(), 1).await;
    assert_eq!(d[0]["status"], "failed");
    assert_eq!(d[0]["response_status"], 302);
    assert!(receiver.got("ok").is_empty());

    // Past WEBHOOK_RETENTION_DAYS (30), the maintenance pass deletes finished records and
    // the events no delivery needs.
    let owner = owner.with_bearer(&owner.pat().await); // sessions expire meanwhile
    server.ctx.clock.advance(Duration::from_secs(29 * 86_400));
    assert_eq!(cairn::testing::workers::run_pending_jobs(&server.ctx).await.unwrap().webhook_rows_pruned, 0);
    server.ctx.clock.advance(Duration::from_secs(2 * 86_400));
    let report = cairn::testing::workers::run_pending_jobs(&server.ctx).await.unwrap();
    assert_eq!(report.webhook_rows_pruned, 3 + 2, "3 deliveries, 2 events: {report:?}");
    let (_, list) = owner.get(&format!("/api/webhooks/{}/deliveries", order["id"])).await;
    assert_eq!(list["total"], 0, "{list}");
    server.stop().await;
}

#[tokio::test]
async fn an_attempt_is_bounded_in_time_and_in_what_it_reads() {
    let receiver = Receiver::default();
    let base = receiver.start().await;
    let env = Env::new().await;
    let mut args: Vec<&str> = FAST.iter().copied().filter(|a| *a != "2000").collect();
    args.retain(|a| *a != "--webhook-timeout-ms");
    args.extend(["--webhook-timeout-ms", "100"]);
    let server = env.start(&args).await;
    let owner = server.user("owner@example.com").await;
    let hang = hook(&owner, &format!("{base}/hang"), json!({})).await;
    let huge = hook(&owner, &format!("{base}/huge"), json!({})).await;
    owner.page("p", "# P").await;
    let d = settled(&owner, hang["id"].as_i64().unwrap(), 1).await;
    assert_eq!((d[0]["status"].as_str(), d[0]["attempts"].as_i64()), (Some("failed"), Some(8)), "{d:?}");
    assert!(d[0]["error"].as_str().unwrap().contains("timed out"), "{d:?}");
    let d = settled(&owner, huge["id"].as_i64().unwrap(), 1).await;
    assert_eq!(d[0]["response_status"], 502);
    let error = d[0]["error"].as_str().unwrap();
    assert!(error.starts_with("HTTP 502") && error.len() < 400, "{error}");
    drop(server);
}
