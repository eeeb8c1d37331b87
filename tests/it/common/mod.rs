//! The test harness: a real Cairn server on a random port, a temporary `DATA_DIR`, and a
//! fresh database — SQLite in the temp dir, or (with `CAIRN_TEST_BACKEND=postgres`) a
//! fresh schema in the database named by `CAIRN_TEST_PG_URL`.

pub mod oidc;
pub mod process;

use std::net::SocketAddr;
use std::path::PathBuf;

use cairn::testing::Config;
use cairn::testing::Ctx;
use cairn::testing::store::{ConvergeReport, Db};
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub const PASSWORD: &str = "correct horse battery";

pub fn backend() -> &'static str {
    match std::env::var("CAIRN_TEST_BACKEND").as_deref() {
        Ok("postgres") => "postgres",
        _ => "sqlite",
    }
}

pub fn pg_url() -> String {
    std::env::var("CAIRN_TEST_PG_URL")
        .expect("CAIRN_TEST_PG_URL must name a PostgreSQL database for tests (scripts/test sets it)")
}

/// Appends a `search_path` option so every pooled connection works in `schema`.
pub fn with_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// A fresh, empty PostgreSQL schema; its URL.
pub async fn fresh_pg_schema() -> String {
    use sqlx::Connection;
    let base = pg_url();
    let schema = format!("t_{}", uuid_simple());
    let mut conn = sqlx::PgConnection::connect(&base).await.expect("connect to CAIRN_TEST_PG_URL");
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}"))).execute(&mut conn).await.unwrap();
    conn.close().await.ok();
    with_schema(&base, &schema)
}

fn uuid_simple() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A place a server runs in: data dir and database survive restarts.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub db_url: String,
}

impl Env {
    pub async fn new() -> Env {
        Env::on(backend()).await
    }

    /// A place on the given engine, whichever the suite runs on (`"sqlite"` or
    /// `"postgres"`; PostgreSQL needs `CAIRN_TEST_PG_URL`, which scripts/test sets for both).
    pub async fn on(engine: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let db_url = match engine {
            "postgres" => fresh_pg_schema().await,
            _ => format!("sqlite://{}", dir.path().join("cairn.db").display()),
        };
        Env { dir, db_url }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn config(&self, extra: &[&str]) -> Config {
        let data = self.data_dir();
        let logs = self.dir.path().join("logs");
        let mut args: Vec<String> = vec![
            "cairn".into(),
            "--data-dir".into(),
            data.display().to_string(),
            "--log-dir".into(),
            logs.display().to_string(),
            "--database-url".into(),
            self.db_url.clone(),
            // Cheap hashes: tests register many users (release defaults stay strong).
            "--argon2-memory-kib".into(),
            "64".into(),
            "--argon2-iterations".into(),
            "1".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let config = Config::from_args(args).expect("test config parses");
        config.validate().expect("test config is valid");
        config
    }

    pub async fn start(&self, extra: &[&str]) -> Server {
        Server::start(self, extra).await
    }

    /// The settings a `cairn` command run on this environment's data needs.
    pub fn cli_vars(&self) -> [(&'static str, String); 3] {
        [
            ("DATA_DIR", self.data_dir().display().to_string()),
            ("LOG_DIR", self.dir.path().join("logs").display().to_string()),
            ("DATABASE_URL", self.db_url.clone()),
        ]
    }

    /// SQLite: where the full-text index lives (`DATA_DIR/search.sqlite3`).
    pub fn search_file(&self) -> PathBuf {
        self.data_dir().join("search.sqlite3")
    }

    /// SQLite: a connection of the test's own to the search file (servers attach it
    /// read-only), as a second writer would hold it.
    pub async fn search_file_conn(&self) -> sqlx::SqliteConnection {
        use sqlx::Connection;
        sqlx::SqliteConnection::connect(&format!("sqlite://{}", self.search_file().display())).await.unwrap()
    }

    /// Makes the full-text index's recorded definition look like an older release's, as
    /// the start-up check would find it after an upgrade that changed it.
    pub async fn age_search_definition(&self, srv: &Server) {
        if backend() == "postgres" {
            sqlx::query("UPDATE schema_meta SET value = 'older' WHERE key LIKE 'search_fingerprint:%'")
                .execute(&srv.ctx.db.pool)
                .await
                .unwrap();
        } else {
            let mut conn = self.search_file_conn().await;
            sqlx::query("UPDATE meta SET value = 'older' WHERE key = 'fingerprint'").execute(&mut conn).await.unwrap();
        }
    }
}

pub struct Server {
    pub url: String,
    pub ctx: Ctx,
    pub report: ConvergeReport,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<anyhow::Result<()>>>,
}

impl Server {
    pub async fn start(env: &Env, extra: &[&str]) -> Server {
        let config = env.config(extra);
        let (db, report) = Db::connect(&config).await.expect("database connects");
        let ctx = Ctx::new(config, db).expect("context");
        // As `cairn serve` does: the packing worker's passes run in child processes of the
        // binary (core/packing/process.rs).
        cairn::testing::packing::run_passes_in(process::BIN.into());
        // What `cairn serve` does before listening: repair an index behind its repository.
        cairn::testing::reindex::repair(&ctx).await.expect("start-up check");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(cairn::testing::serve(listener, ctx.clone(), async move {
            let _ = rx.await;
        }));
        Server { url: format!("http://{addr}"), ctx, report, stop: Some(tx), task: Some(task) }
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap().unwrap();
        }
        self.ctx.db.pool.close().await;
    }

    /// A client without credentials.
    pub fn anon(&self) -> Api {
        Api { base: self.url.clone(), client: Client::builder().cookie_store(true).build().unwrap(), bearer: None }
    }

    /// Registers `email` and answers a client holding its session cookie.
    pub async fn user(&self, email: &str) -> Api {
        let api = self.anon();
        let (status, body) =
            api.post("/api/auth/register", json!({"email": email, "password": PASSWORD, "name": email})).await;
        assert_eq!(status, StatusCode::CREATED, "register {email}: {body}");
        api
    }
}

/// A client for one caller: a cookie jar, and optionally a bearer token.
#[derive(Clone)]
pub struct Api {
    pub base: String,
    pub client: Client,
    pub bearer: Option<String>,
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }
}

impl Api {
    /// A cookie-less client using `token` as bearer.
    pub fn with_bearer(&self, token: &str) -> Api {
        Api { base: self.base.clone(), client: Client::new(), bearer: Some(token.to_owned()) }
    }

    /// Like [`Api::send`], but None when the request fails (e.g. the server died).
    pub async fn try_send(&self, method: Method, path: &str, body: Option<Value>) -> Option<Reply> {
        let mut req = self.client.request(method, format!("{}{}", self.base, path));
        if let Some(b) = &self.bearer {
            req = req.bearer_auth(b);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.ok()?;
        let status = res.status();
        let headers = res.headers().clone();
        let text = res.text().await.ok()?;
        Some(Reply { status, headers, text })
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        let mut req = self.client.request(method, format!("{}{}", self.base, path));
        if let Some(b) = &self.bearer {
            req = req.bearer_auth(b);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.expect("request sent");
        let status = res.status();
        let headers = res.headers().clone();
        let text = res.text().await.unwrap_or_default();
        Reply { status, headers, text }
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let r = self.send(Method::GET, path, None).await;
        (r.status, r.json())
    }
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let r = self.send(Method::POST, path, Some(body)).await;
        (r.status, r.json())
    }
    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let r = self.send(Method::PUT, path, Some(body)).await;
        (r.status, r.json())
    }
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        let r = self.send(Method::DELETE, path, None).await;
        (r.status, r.json())
    }

    /// Creates a page in the caller's default workspace (or `ws`).
    pub async fn page(&self, slug: &str, content: &str) -> Value {
        let (s, body) = self.post("/api/pages", json!({"slug": slug, "content": content})).await;
        assert_eq!(s, StatusCode::CREATED, "create {slug}: {body}");
        body
    }

    /// A new personal access token of this caller.
    pub async fn pat(&self) -> String {
        let (s, body) = self.post("/api/tokens", json!({"name": "test"})).await;
        assert_eq!(s, StatusCode::CREATED, "{body}");
        body["token"].as_str().unwrap().to_owned()
    }
}

pub const BOUNDARY: &str = "cairn-test-boundary-7MA4YWxkTrZu0gW";

/// A 1×1 PNG.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx\x9cc\xf8\x0f\x04\0\x09\xfb\x03\xfd\xe3U\xf2\x9c\0\0\0\0IEND\xaeB`\x82";

/// A multipart body, written by hand as any client would: a small field, then the
/// `file` part claiming `claimed` as its type.
fn upload_form(bytes: &[u8], claimed: &str) -> Vec<u8> {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nignored\r\n\
         --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\nContent-Type: {claimed}\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

impl Api {
    /// `POST path` (e.g. `/api/uploads?ws=x`) with `bytes` as the multipart `file`.
    pub async fn upload(&self, path: &str, bytes: &[u8], claimed: &str) -> Reply {
        let mut req = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
            .body(upload_form(bytes, claimed));
        if let Some(b) = &self.bearer {
            req = req.bearer_auth(b);
        }
        let res = req.send().await.expect("request sent");
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.unwrap_or_default();
        Reply { status, headers, text: String::from_utf8_lossy(&bytes).into_owned() }
    }
}

/// Asserts a problem+json answer with `status` and `code`.
pub fn assert_problem(reply: &Reply, status: u16, code: &str) {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.text);
    let ct = reply.headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(ct.starts_with("application/problem+json"), "content-type {ct}");
    let body = reply.json();
    assert_eq!(body["status"], status, "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["type"], "about:blank");
    assert!(body["title"].is_string() && body["detail"].is_string(), "{body}");
}

/// Runs the git CLI on a bare repository; answers its standard output, panics on failure.
pub fn git(repo: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git").arg("--git-dir").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `git fsck --strict --full` finds nothing wrong with the repository.
pub fn assert_fsck(repo: &std::path::Path) {
    git(repo, &["fsck", "--strict", "--full"]);
}

/// One browser run at a time (`web_app`, `api_docs`): the harness runs tests side by
/// side, and two Chromiums on two cores would make the timing specs (keystroke latency)
/// noisy.
pub static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
