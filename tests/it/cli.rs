//! The `cairn` binary itself: settings errors, `--help`, graceful shutdown on SIGTERM,
//! what reaches the log file, and logged schema rebuilds.

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::process::*;
use crate::common::*;
use serde_json::json;

#[test]
fn a_bad_setting_stops_start_up_with_one_line_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let logs = tmp.path().join("logs");
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let base = [("DATA_DIR", data.to_str().unwrap()), ("LOG_DIR", logs.to_str().unwrap())];
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![("PORT", "eighty")], "PORT"),
        (vec![("PORT", "70000")], "PORT"),
        (vec![("HOST", "not an ip")], "HOST"),
        (vec![("DATABASE_URL", "mysql://localhost/cairn")], "DATABASE_URL"),
        (vec![("DATA_DIR", file.to_str().unwrap())], "DATA_DIR"),
        (vec![("LOG_LEVEL", "info,[[[")], "LOG_LEVEL"),
        (vec![("UPLOAD_MAX_BYTES", "-1")], "UPLOAD_MAX_BYTES"),
        (vec![("LOGIN_MAX_FAILURES", "0")], "LOGIN_MAX_FAILURES"),
        (vec![("JWT_SECRET", "short")], "JWT_SECRET"),
    ];
    for (vars, name) in cases {
        let mut all: Vec<(&str, &str)> = base.to_vec();
        all.retain(|(k, _)| !vars.iter().any(|(v, _)| v == k));
        all.extend(vars.iter().copied());
        let (code, _, stderr) = run_to_end(&all, &[]);
        assert_eq!(code, 2, "{name}: {stderr}");
        let lines: Vec<_> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{name}: {stderr}");
        assert!(lines[0].contains(name), "{name} not named in: {}", lines[0]);
    }
}

#[test]
fn help_lists_every_setting_with_its_default() {
    let (code, stdout, _) = run_to_end(&[], &["--help"]);
    assert_eq!(code, 0);
    for name in [
        "HOST",
        "PORT",
        "DATA_DIR",
        "DATABASE_URL",
        "LOG_DIR",
        "LOG_LEVEL",
        "DISABLE_REGISTRATION",
        "SEMANTIC_SEARCH",
        "RERANK",
        "OCR_UPLOADS",
        "JWT_SECRET",
        "COOKIE_SECURE",
        "TRUST_PROXY",
        "UPLOAD_MAX_BYTES",
        "LOGIN_MAX_FAILURES",
        "LOGIN_WINDOW_SECS",
        "LOGIN_MAX_FAILURES_PER_ACCOUNT",
        "LOGIN_MAX_FAILURES_PER_ADDRESS",
        "WEBHOOK_ALLOW_PRIVATE",
    ] {
        assert!(stdout.contains(&format!("[env: {name}")), "{name} missing from --help");
    }
    for default in [
        "[default: 127.0.0.1]",
        "[default: 8080]",
        "[default: ./data]",
        "[default: ./logs]",
        "[default: info]",
        "[default: 10485760]",
        "[default: 900]",
    ] {
        assert!(stdout.contains(default), "{default} missing from --help");
    }
    for sub in ["serve", "reindex", "backup", "gc", "import"] {
        assert!(stdout.contains(sub), "{sub} missing");
    }
    let (code, stdout, _) = run_to_end(&[], &["--version"]);
    assert_eq!(code, 0);
    assert!(stdout.contains(env!("CARGO_PKG_VERSION")));
}

#[tokio::test]
async fn sigterm_lets_the_request_in_flight_finish_and_exits_0() {
    let env = Env::new().await;
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    // Start a request and send only half of its body.
    let body = json!({"email": "inflight@x.io", "password": PASSWORD}).to_string();
    let (head, tail) = body.split_at(body.len() / 2);
    let mut s = std::net::TcpStream::connect(("127.0.0.1", p.port)).unwrap();
    write!(
        s,
        "POST /api/auth/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{head}",
        body.len()
    )
    .unwrap();
    wait_until_read(p.port, s.local_addr().unwrap().port());
    let pid = p.child.id();
    assert!(Command::new("kill").arg("-TERM").arg(pid.to_string()).status().unwrap().success());
    // New connections are no longer accepted (once the signal is handled)…
    let deadline = Instant::now() + Duration::from_secs(10);
    while reqwest::get(format!("{}/health", p.url())).await.is_ok() {
        assert!(Instant::now() < deadline, "still accepting connections after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    // …but the one in flight completes.
    s.write_all(tail.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 201"), "{out}");
    let mut p = p;
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(status) = p.child.try_wait().unwrap() {
            break status.code();
        }
        assert!(Instant::now() < deadline, "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(0));
}

/// Waits until the server has read all that the client on `client_port` sent: the
/// receive queue of the server's side of that connection (`/proc/net/tcp`) is empty, so
/// the request is being served, not waiting in the kernel to be accepted.
fn wait_until_read(server_port: u16, client_port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
        let queued = table.lines().skip(1).find_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let port = |addr: &str| u16::from_str_radix(addr.rsplit(':').next()?, 16).ok();
            let ours = port(f.get(1)?)? == server_port && port(f.get(2)?)? == client_port;
            ours.then(|| u64::from_str_radix(f.get(4)?.split(':').nth(1)?, 16).ok()).flatten()
        });
        if queued == Some(0) {
            return;
        }
        assert!(Instant::now() < deadline, "the server did not read the request (receive queue: {queued:?})");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn read_logs(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    all
}

#[tokio::test]
async fn secrets_never_reach_the_log() {
    let env = Env::new().await;
    let p = Proc::start(env.dir.path(), &env.db_url, &[("LOG_LEVEL", "trace")]);
    let secret_password = "Sup3r-Secret-Passw0rd!";
    let api =
        Api { base: p.url(), client: reqwest::Client::builder().cookie_store(true).build().unwrap(), bearer: None };
    let r = api
        .send(
            reqwest::Method::POST,
            "/api/auth/register",
            Some(json!({"email": "log@x.io", "password": secret_password})),
        )
        .await;
    assert_eq!(r.status, 201);
    let r = api
        .send(reqwest::Method::POST, "/api/auth/login", Some(json!({"email": "log@x.io", "password": secret_password})))
        .await;
    assert_eq!(r.status, 200);
    let cookie = r.headers.get("set-cookie").unwrap().to_str().unwrap();
    let session = cookie.split(';').next().unwrap().trim_start_matches("cairn_session=").to_owned();
    let token = api.pat().await;
    let (_, jwt) = api.post("/api/token", json!({})).await;
    let jwt = jwt["access_token"].as_str().unwrap().to_owned();
    let pat = api.with_bearer(&token);
    assert_eq!(pat.get("/api/me").await.0, 200);
    assert_eq!(api.with_bearer(&jwt).get("/api/me").await.0, 200);
    // A failed login with a different password.
    api.post("/api/auth/login", json!({"email": "log@x.io", "password": "Wr0ng-Passw0rd-Typed"})).await;
    let rid = api
        .client
        .get(format!("{}/api/me", p.url()))
        .header("x-request-id", "find-me-in-the-log")
        .send()
        .await
        .unwrap();
    assert_eq!(rid.status(), 200);
    assert_eq!(p.terminate(), 0);

    let logs = read_logs(&env.dir.path().join("logs"));
    assert!(!logs.is_empty());
    for (what, secret) in [
        ("password", secret_password),
        ("wrong password", "Wr0ng-Passw0rd-Typed"),
        ("session cookie", session.as_str()),
        ("personal access token", token.as_str()),
        ("token secret part", token.trim_start_matches("svc_")),
        ("jwt", jwt.as_str()),
    ] {
        assert!(!logs.contains(secret), "the {what} reached the log");
    }
    // One line per request, with method, path, status, duration and request id.
    let line = logs.lines().find(|l| l.contains("find-me-in-the-log")).expect("request line");
    for part in ["method=GET", "path=/api/me", "status=200", "ms=", "request_id=find-me-in-the-log"] {
        assert!(line.contains(part), "{part} missing in {line}");
    }
}

#[tokio::test]
async fn a_search_rebuild_is_logged() {
    let env = Env::new().await;
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    assert_eq!(p.terminate(), 0);
    {
        let srv = env.start(&[]).await;
        env.age_search_definition(&srv).await;
        srv.stop().await;
    }
    let before = read_logs(&env.dir.path().join("logs")).matches("rebuilt search index").count();
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    assert_eq!(p.terminate(), 0);
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    assert_eq!(p.terminate(), 0);
    let after = read_logs(&env.dir.path().join("logs")).matches("rebuilt search index").count();
    assert_eq!(after - before, 1, "exactly one rebuild over two starts");
}

#[test]
fn import_says_what_it_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let logs = tmp.path().join("logs");
    let vars = [("DATA_DIR", data.to_str().unwrap()), ("LOG_DIR", logs.to_str().unwrap())];
    let (code, _, stderr) = run_to_end(&vars, &["import", "/tmp/x"]);
    assert_ne!(code, 0, "an import without a workspace must not run");
    assert!(stderr.contains("--workspace"), "{stderr}");
    let (code, _, stderr) = run_to_end(&vars, &["import", "--workspace", "nowhere", "/tmp/does-not-exist-either"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("does-not-exist-either") || stderr.contains("nowhere"), "{stderr}");
}

#[tokio::test]
async fn backup_and_restore_commands() {
    let env = Env::new().await;
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    let api =
        Api { base: p.url(), client: reqwest::Client::builder().cookie_store(true).build().unwrap(), bearer: None };
    assert_eq!(api.post("/api/auth/register", json!({"email": "cli@x.io", "password": PASSWORD})).await.0, 201);
    api.page("kept", "# Kept\n").await;
    // Uploads (files) and webhooks (rows) come back too.
    let up = api.upload("/api/uploads", crate::common::PNG, "image/png").await;
    assert_eq!(up.status, 201, "{}", up.text);
    let image_url = up.json()["url"].as_str().unwrap().to_owned();
    let (s, hook) = api.post("/api/webhooks", json!({"url": "https://93.184.216.34/hook"})).await;
    assert_eq!(s, 201, "{hook}");
    assert_eq!(p.terminate(), 0);
    let vars = |e: &Env| {
        vec![
            ("DATA_DIR".to_owned(), e.data_dir().display().to_string()),
            ("LOG_DIR".to_owned(), e.dir.path().join("logs").display().to_string()),
            ("DATABASE_URL".to_owned(), e.db_url.clone()),
        ]
    };

    let backup = env.dir.path().join("bk");
    let v = vars(&env);
    let (code, out, err) = run_to_end(&as_refs(&v), &["backup", backup.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("backed up"), "{out}");
    // SQLite's search file is derived: not copied, made again after the restore.
    assert_eq!(env.search_file().exists(), backend() == "sqlite");
    assert!(!backup.join("files").join("search.sqlite3").exists());
    let fresh = Env::new().await;
    let v = vars(&fresh);
    let (code, out, err) = run_to_end(&as_refs(&v), &["restore", backup.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    // Restoring twice is refused: the target is no longer empty.
    let (code, _, _) = run_to_end(&as_refs(&v), &["restore", backup.to_str().unwrap()]);
    assert_ne!(code, 0);
    let p = Proc::start(fresh.dir.path(), &fresh.db_url, &[]);
    let api = Api { base: p.url(), ..api };
    assert_eq!(api.post("/api/auth/login", json!({"email": "cli@x.io", "password": PASSWORD})).await.0, 200);
    assert_eq!(api.get("/api/pages/kept").await.1["content"], "# Kept\n");
    assert_eq!(api.get("/api/search?q=kept").await.1["total"], 1);
    let image = api.client.get(format!("{}{image_url}", api.base)).send().await.unwrap();
    assert_eq!(image.status(), 200);
    assert_eq!(image.bytes().await.unwrap(), crate::common::PNG);
    assert_eq!(api.get("/api/webhooks").await.1["items"][0]["url"], "https://93.184.216.34/hook");
    assert_eq!(p.terminate(), 0);
}

fn as_refs(v: &[(String, String)]) -> Vec<(&str, &str)> {
    v.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
}

/// What the server writes under `DATA_DIR` is its user's alone: no file or directory
/// there can be read by another local user (the database holds webhook secrets).
#[tokio::test]
async fn the_data_directory_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new().await;
    let p = Proc::start(env.dir.path(), &env.db_url, &[]);
    let api = register(&p.url(), "private@x.io").await;
    let (s, _) = api.post("/api/pages", json!({"slug": "secret", "content": "# Secret"})).await;
    assert_eq!(s, reqwest::StatusCode::CREATED);
    let (s, _) =
        api.post("/api/webhooks", json!({"url": "https://example.com/hook", "events": ["page.created"]})).await;
    assert!(s.is_success() || s == reqwest::StatusCode::BAD_REQUEST, "{s}");
    p.terminate();
    fn walk(dir: &Path, seen: &mut usize) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let mode = entry.metadata().unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{} is open to others: {:o}", entry.path().display(), mode & 0o777);
            *seen += 1;
            if entry.file_type().unwrap().is_dir() {
                walk(&entry.path(), seen);
            }
        }
    }
    let mut seen = 0;
    walk(&env.dir.path().join("data"), &mut seen);
    walk(&env.dir.path().join("logs"), &mut seen);
    assert!(seen > 10, "only {seen} entries");
}
