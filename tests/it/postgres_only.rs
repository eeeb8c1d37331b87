//! Tests that need PostgreSQL itself (skipped by name in the SQLite pass of
//! `scripts/test`, run in the PostgreSQL pass).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio::task::JoinSet;

use crate::common::*;

/// A TCP proxy in front of PostgreSQL that the test can cut and restore — the
/// database "goes away" while the server runs, without touching the real server.
struct ChaosProxy {
    port: u16,
    up: Arc<AtomicBool>,
    pipes: Arc<Mutex<JoinSet<()>>>,
}

impl ChaosProxy {
    async fn start(upstream: String) -> ChaosProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let pipes = Arc::new(Mutex::new(JoinSet::new()));
        let (up2, pipes2) = (up.clone(), pipes.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else { return };
                if !up2.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let upstream = upstream.clone();
                pipes2.lock().await.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        ChaosProxy { port, up, pipes }
    }

    async fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.pipes.lock().await.abort_all();
    }

    fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn postgres_only_outage_answers_503_reports_db_error_and_recovers() {
    // A fresh schema, reached through the proxy.
    let direct = fresh_pg_schema().await;
    let mut url = reqwest::Url::parse(&direct).unwrap();
    let upstream = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432));
    let proxy = ChaosProxy::start(upstream).await;
    url.set_host(Some("127.0.0.1")).unwrap();
    url.set_port(Some(proxy.port)).unwrap();
    let mut env = Env::new().await;
    env.db_url = url.to_string();
    let srv = env.start(&[]).await;

    let alice = srv.user("alice@x.io").await;
    let pat = alice.with_bearer(&alice.pat().await);
    let page = pat.page("steady", "# Steady\n").await;
    assert_eq!(srv.anon().get("/health").await.1["db"], "ok");

    proxy.cut().await;
    let (s, health) = srv.anon().get("/health").await;
    assert_eq!(s, StatusCode::OK, "health answers while the database is down");
    assert_eq!(health["db"], "error");
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));

    // Writes are refused with 503 problem+json…
    let r = srv
        .anon()
        .send(Method::POST, "/api/auth/register", Some(json!({"email": "bob@x.io", "password": PASSWORD})))
        .await;
    assert_problem(&r, 503, "database_unavailable");
    let r = pat.send(Method::POST, "/api/workspaces", Some(json!({"name": "During outage"}))).await;
    assert_problem(&r, 503, "database_unavailable");
    let r = pat.send(Method::PUT, "/api/pages/steady", Some(json!({"content": "# Changed during outage"}))).await;
    assert_problem(&r, 503, "database_unavailable");

    // …and it recovers by itself.
    proxy.restore();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if srv.anon().get("/health").await.1["db"] == "ok" {
            break;
        }
        assert!(Instant::now() < deadline, "the database never came back");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Nothing was half-written: bob does not exist, the workspace was not made.
    let r = srv
        .anon()
        .send(Method::POST, "/api/auth/login", Some(json!({"email": "bob@x.io", "password": PASSWORD})))
        .await;
    assert_problem(&r, 401, "invalid_credentials");
    let (_, list) = pat.get("/api/workspaces").await;
    assert_eq!(list["total"], 1, "{list}");
    let (_, now) = pat.get("/api/pages/steady").await;
    assert_eq!(now["revision"], page["revision"], "the refused page write made no commit");
    assert_eq!(pat.get("/api/pages/steady/history").await.1["total"], 1);
    assert_eq!(
        srv.anon().post("/api/auth/register", json!({"email": "bob@x.io", "password": PASSWORD})).await.0,
        StatusCode::CREATED
    );
    assert_eq!(pat.post("/api/workspaces", json!({"name": "After outage"})).await.0, StatusCode::CREATED);
    srv.stop().await;
}

/// Two processes on one database, the second one's credential cache listening (so
/// in use).
async fn two_listening(env: &Env) -> (Server, Server) {
    assert_eq!(backend(), "postgres", "run with CAIRN_TEST_BACKEND=postgres");
    let a = env.start(&[]).await;
    let b = env.start(&[]).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !b.ctx.credentials.usable() {
        assert!(Instant::now() < deadline, "the credential cache never started listening");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (a, b)
}

/// A token checked (and cached) by one process stops working there as soon as
/// another process sharing the database revokes it; a profile change shows at once
/// too. The cache's own expiry (10 s) is far longer than the 3 s allowed here, so
/// only the notification can make this pass.
#[tokio::test]
async fn postgres_only_a_token_revoked_by_one_process_stops_working_in_another() {
    use cairn::testing::credentials::TTL;
    let env = Env::new().await;
    let (a, b) = two_listening(&env).await;
    let owner = a.user("rev@x.io").await;
    let token = owner.pat().await;
    let hash = cairn::testing::auth::sha256_hex(&token);
    let on_b = Api { base: b.url.clone(), ..owner.with_bearer(&token) };
    let (s, me) = on_b.get("/api/me").await;
    assert_eq!(s, StatusCode::OK, "{me}");
    assert!(b.ctx.credentials.get(&hash).is_some(), "process b keeps the checked token");

    let eventually = |want: StatusCode, check: &'static str| {
        let on_b = on_b.clone();
        async move {
            let until = Instant::now() + Duration::from_secs(3);
            assert!(Duration::from_secs(3) < TTL);
            loop {
                let (s, body) = on_b.get("/api/me").await;
                if s == want && (check.is_empty() || body.to_string().contains(check)) {
                    return;
                }
                assert!(Instant::now() < until, "process b still answers {s}: {body}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    let (s, body) = owner.post("/api/settings/profile", json!({"name": "Renamed Elsewhere"})).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    eventually(StatusCode::OK, "Renamed Elsewhere").await;

    let (_, list) = owner.get("/api/tokens").await;
    let id = list["items"][0]["id"].as_i64().unwrap();
    assert_eq!(owner.delete(&format!("/api/tokens/{id}")).await.0, StatusCode::NO_CONTENT);
    eventually(StatusCode::UNAUTHORIZED, "").await;
    a.stop().await;
    b.stop().await;
}

/// A workspace access checked (and kept) by one process stops letting the member in
/// there as soon as another process removes the membership: reads and saves are 404
/// well within the cache's own expiry, so only the notification can make this pass.
#[tokio::test]
async fn postgres_only_a_membership_removed_by_one_process_ends_access_in_another() {
    use cairn::testing::credentials::TTL;
    let env = Env::new().await;
    let (a, b) = two_listening(&env).await;
    let owner = a.user("own@x.io").await;
    let member = a.user("mem@x.io").await;
    let token = member.pat().await;
    owner.post("/api/workspaces", json!({"name": "Shared"})).await;
    let (s, m) = owner.post("/api/workspaces/shared/members", json!({"email": "mem@x.io"})).await;
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let member_id = m["id"].as_i64().unwrap();
    owner.post("/api/pages?ws=shared", json!({"slug": "note", "content": "one"})).await;
    let on_b = Api { base: b.url.clone(), ..member.with_bearer(&token) };
    // Until process b keeps the access (a notification of the setup's own changes may
    // still arrive and empty its cache once).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (s, body) = on_b.put("/api/pages/note?ws=shared", json!({"content": "two"})).await;
        assert_eq!(s, StatusCode::OK, "{body}");
        if cairn::testing::workspaces::kept_access(&b.ctx, member_id, "shared").is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "process b never kept the access");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    assert_eq!(owner.delete(&format!("/api/workspaces/shared/members/{member_id}")).await.0, StatusCode::NO_CONTENT);
    let until = Instant::now() + Duration::from_secs(3);
    assert!(Duration::from_secs(3) < TTL);
    loop {
        let r = on_b.send(Method::GET, "/api/workspaces/shared/members", None).await;
        if r.status == StatusCode::NOT_FOUND {
            break;
        }
        assert!(Instant::now() < until, "process b still answers {}: {}", r.status, r.text);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = on_b.send(Method::PUT, "/api/pages/note?ws=shared", Some(json!({"content": "three"}))).await;
    assert_problem(&r, 404, "workspace_not_found");
    assert_eq!(owner.get("/api/pages/note?ws=shared").await.1["content"], "two");
    a.stop().await;
    b.stop().await;
}

/// Two `cairn` processes sharing one database and one `DATA_DIR` write to the same
/// workspace at once: the advisory lock serialises them, so the repository stays
/// sound and every acknowledged save is there.
#[tokio::test]
async fn postgres_only_two_processes_share_one_workspace_safely() {
    use crate::common::process::Proc;
    let env = Env::new().await;
    assert_eq!(backend(), "postgres", "run with CAIRN_TEST_BACKEND=postgres");
    let a = Proc::start(env.dir.path(), &env.db_url, &[]);
    let b = Proc::start(env.dir.path(), &env.db_url, &[]);
    let anon =
        Api { base: a.url(), client: reqwest::Client::builder().cookie_store(true).build().unwrap(), bearer: None };
    assert_eq!(anon.post("/api/auth/register", json!({"email": "two@x.io", "password": PASSWORD})).await.0, 201);
    let token = anon.pat().await;
    let on_a = anon.with_bearer(&token);
    let on_b = Api { base: b.url(), ..on_a.clone() };
    for i in 0..3 {
        on_a.page(&format!("shared-{i}"), "# Shared\n").await;
    }
    let mut tasks = Vec::new();
    for (n, api) in [on_a.clone(), on_b.clone(), on_a.clone(), on_b.clone()].into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..15 {
                let slug = format!("shared-{}", i % 3);
                let content = format!("# Shared\nwriter {n} edit {i}\n");
                let (s, page) = api.put(&format!("/api/pages/{slug}"), json!({"content": content})).await;
                assert_eq!(s, StatusCode::OK, "{page}");
                acked.push((slug, page["revision"].as_str().unwrap().to_owned(), content));
                let own = format!("p{n}-{i}");
                let page = api.page(&own, "# Own\n").await;
                acked.push((own, page["revision"].as_str().unwrap().to_owned(), "# Own\n".to_owned()));
            }
            acked
        }));
    }
    let mut acked = Vec::new();
    for t in tasks {
        acked.extend(t.await.unwrap());
    }
    let repo = env.data_dir().join("workspaces/two.git");
    assert_fsck(&repo);
    let commits = git(&repo, &["rev-list", "--count", "HEAD"]);
    assert_eq!(commits.trim().parse::<usize>().unwrap(), 3 + acked.len(), "one commit per acknowledged save");
    for (slug, sha, content) in &acked {
        let (s, rev) = on_b.get(&format!("/api/pages/{slug}/history/{sha}")).await;
        assert_eq!(s, StatusCode::OK, "{slug}@{sha}");
        assert_eq!(rev["content"].as_str().unwrap(), content);
    }
    let (_, h) = on_a.get("/api/pages/shared-0/history").await;
    assert_eq!(h["total"], 1 + 20);
    assert_eq!(a.terminate(), 0);
    assert_eq!(b.terminate(), 0);
}

/// Without autovacuum (as on this project's test machines) the maintenance pass
/// refreshes the planner's statistics of Cairn's tables and merges the full-text
/// index's pending list; with it, it leaves both to PostgreSQL.
#[tokio::test]
async fn postgres_only_maintenance_refreshes_statistics_when_autovacuum_is_off() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("stats@x.io").await;
    api.page("one", "# One\n\nA page.\n").await;
    let autovacuum: String = sqlx::query_scalar("SHOW autovacuum").fetch_one(&srv.ctx.db.pool).await.unwrap();
    let report = cairn::testing::workers::run_pending_jobs(&srv.ctx).await.unwrap();
    let analyzed: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_stat_user_tables WHERE schemaname = current_schema() \
         AND relname = 'pages' AND last_analyze IS NOT NULL",
    )
    .fetch_one(&srv.ctx.db.pool)
    .await
    .unwrap();
    if autovacuum == "on" {
        assert!(!report.statistics_refreshed);
    } else {
        assert!(report.statistics_refreshed);
        assert_eq!(analyzed, 1);
        // The page's words were merged out of the full-text index's pending list:
        // nothing is left for a second merge.
        let left: i64 = sqlx::query_scalar("SELECT gin_clean_pending_list('pages_search_vector_idx'::regclass)")
            .fetch_one(&srv.ctx.db.pool)
            .await
            .unwrap();
        assert_eq!(left, 0);
    }
    srv.stop().await;
}

/// Without autovacuum, the statistics worker's pass analyzes a table once enough of it
/// changed — autovacuum's own rule, 50 rows plus 10 % — so a wiki that grows fast is
/// not planned as the small one it was (18 ms a save at 10,000 pages, measured in commit b696015),
/// and leaves the tables that did not change alone; with autovacuum on it does nothing.
#[tokio::test]
async fn postgres_only_tables_that_changed_much_are_analyzed_without_autovacuum() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("grow@x.io").await;
    let db = &srv.ctx.db;
    for n in 0..60 {
        api.page(&format!("grow-{n}"), &format!("# Grow {n}\n\nPage {n} of a wiki that grows.\n")).await;
    }
    let autovacuum: String = sqlx::query_scalar("SHOW autovacuum").fetch_one(&db.pool).await.unwrap();
    if autovacuum == "on" {
        assert_eq!(db.analyze_changed_if_unattended().await.unwrap(), Vec::<String>::new());
        srv.stop().await;
        return;
    }
    let since: String = sqlx::query_scalar("SELECT now()::text").fetch_one(&db.pool).await.unwrap();
    let last_analyze = || async {
        sqlx::query_scalar::<_, bool>(
            "SELECT COALESCE(last_analyze > $1::timestamptz, false) FROM pg_stat_user_tables \
             WHERE schemaname = current_schema() AND relname = 'pages'",
        )
        .bind(&since)
        .fetch_one(&db.pool)
        .await
        .unwrap()
    };
    // A backend reports its row counts to the statistics a little later (up to 10 s
    // when it goes idle); the worker, every 30 s, may also get there first.
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let analyzed = db.analyze_changed_if_unattended().await.unwrap();
        assert!(!analyzed.iter().any(|t| t == "uploads"), "a table nobody wrote to was analyzed: {analyzed:?}");
        if last_analyze().await {
            break;
        }
        assert!(Instant::now() < deadline, "pages was never analyzed (last pass: {analyzed:?})");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    srv.stop().await;
}

/// A keyword query's matches come from the GIN index, even where the planner would
/// rather test every row (a small table, a word most pages hold): a scan that tests
/// rows decompresses each page's TOASTed vector, 30 ms at 10,000 pages against
/// 2.5 ms for the index (measured in commit e01e180). Seen in the index's own scan counter.
#[tokio::test]
async fn postgres_only_keyword_matches_go_through_the_full_text_index() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("gin@x.io").await;
    for n in 0..6 {
        api.page(&format!("deploy-{n}"), &format!("# Deploy {n}\n\nHow we deploy, step {n}.\n")).await;
    }
    // A semantic query builds the term statistics: from then on the process ranks,
    // and the database only matches.
    let r = api.send(Method::GET, "/api/search?q=deploy&mode=semantic", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let pool = &srv.ctx.db.pool;
    let scans = || async {
        let n: Option<i64> = sqlx::query_scalar(
            "SELECT idx_scan FROM pg_stat_user_indexes WHERE schemaname = current_schema() \
             AND indexrelname = 'pages_search_vector_idx'",
        )
        .fetch_optional(pool)
        .await
        .unwrap();
        n.unwrap_or(0)
    };
    let before = scans().await;
    let r = api.send(Method::GET, "/api/search?q=deploy", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.json()["total"], 6, "{}", r.text);
    // A backend reports its counters within about ten seconds of going idle.
    let deadline = Instant::now() + Duration::from_secs(20);
    while scans().await == before {
        assert!(Instant::now() < deadline, "the keyword match did not read pages_search_vector_idx");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    srv.stop().await;
}

/// A PostgreSQL server of the test's own (initdb in a temporary directory), which it
/// may stop and start without disturbing other tests. As root, PostgreSQL's programs
/// run as the `postgres` user, as PostgreSQL requires.
struct Cluster {
    dir: tempfile::TempDir,
    port: u16,
}

impl Cluster {
    fn bin(name: &str) -> std::path::PathBuf {
        let root = std::path::Path::new("/usr/lib/postgresql");
        let mut versions: Vec<_> = std::fs::read_dir(root).unwrap().flatten().map(|e| e.path()).collect();
        versions.sort();
        versions.last().expect("PostgreSQL's programs under /usr/lib/postgresql").join("bin").join(name)
    }

    fn run(&self, name: &str, args: &[&str]) {
        let root = unsafe { libc::geteuid() } == 0;
        let mut cmd = if root {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(Self::bin(name));
            c
        } else {
            std::process::Command::new(Self::bin(name))
        };
        let out = cmd.args(args).output().unwrap();
        assert!(out.status.success(), "{name} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn init() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        if unsafe { libc::geteuid() } == 0 {
            let owned = std::process::Command::new("chown").arg("postgres").arg(dir.path()).status().unwrap();
            assert!(owned.success());
        }
        let port = process::free_port();
        let c = Cluster { dir, port };
        let data = c.data();
        c.run("initdb", &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"]);
        c
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn start(&self) {
        let opts =
            format!("-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off", self.port, self.dir.path().display());
        let log = self.dir.path().join("log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-o", &opts, "-l", &log, "-w", "start"]);
    }

    fn stop(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| self.stop());
    }
}

/// PostgreSQL stopped and started again under a stream of saves: saves while it is
/// down are refused with 503 (never 500, never a hang), every save answered 2xx is
/// there afterwards with its history, the saves after it came back succeed, and the
/// repository is sound.
#[tokio::test]
async fn postgres_only_stopped_and_started_under_load_loses_no_acknowledged_save() {
    assert_eq!(backend(), "postgres", "run with CAIRN_TEST_BACKEND=postgres");
    let cluster = Cluster::init();
    cluster.start();
    let mut env = Env::new().await;
    env.db_url = format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port);
    let srv = env.start(&[]).await;
    let alice = srv.user("stop@x.io").await;
    let api = alice.with_bearer(&alice.pat().await);
    for w in 0..8 {
        api.page(&format!("w{w}"), "# W\n").await;
    }
    let acked: Arc<std::sync::Mutex<Vec<(String, String, String)>>> = Default::default();
    let refused: Arc<std::sync::Mutex<Vec<u16>>> = Default::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = JoinSet::new();
    for w in 0..8 {
        let (api, acked, refused, stop) = (api.clone(), acked.clone(), refused.clone(), stop.clone());
        writers.spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let slug = format!("w{w}");
                let content = format!("# W\n\nsave {i}\n");
                let body = json!({"content": content});
                let Some(r) = api.try_send(Method::PUT, &format!("/api/pages/{slug}"), Some(body)).await else {
                    refused.lock().unwrap().push(0);
                    continue;
                };
                if r.status.is_success() {
                    let rev = r.json()["revision"].as_str().unwrap().to_owned();
                    acked.lock().unwrap().push((slug, rev, content));
                } else {
                    refused.lock().unwrap().push(r.status.as_u16());
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        });
    }
    let count = || acked.lock().unwrap().len();
    let wait_for = |n: usize| {
        let count = &count;
        async move {
            let deadline = Instant::now() + Duration::from_secs(30);
            while count() < n {
                assert!(Instant::now() < deadline, "saves are not happening");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    wait_for(40).await;
    cluster.stop();
    // Down until a save has been refused: one waiting for a connection is refused when
    // the pool's acquire timeout (3 s) passes, so a fixed pause shorter than that could
    // end before any refusal.
    let deadline = Instant::now() + Duration::from_secs(30);
    while refused.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "no save was refused while PostgreSQL was down");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let during = count();
    cluster.start();
    // Saves go through again once it is back.
    wait_for(during + 40).await;
    stop.store(true, Ordering::SeqCst);
    while writers.join_next().await.is_some() {}

    let refused = refused.lock().unwrap().clone();
    assert!(refused.iter().all(|s| *s == 503), "refusals while stopped: {refused:?}");
    let acked = acked.lock().unwrap().clone();
    for (slug, sha, content) in &acked {
        let (s, rev) = api.get(&format!("/api/pages/{slug}/history/{sha}")).await;
        assert_eq!(s, StatusCode::OK, "acknowledged save {slug}@{sha} is missing: {rev}");
        assert_eq!(rev["content"].as_str(), Some(content.as_str()));
    }
    assert_fsck(&env.data_dir().join("workspaces").join("stop.git"));
    srv.stop().await;
}
