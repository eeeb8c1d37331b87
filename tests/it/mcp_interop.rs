//! The official MCP SDKs — clients no one here wrote — against a real server: the
//! Python SDK (`mcp` from PyPI) and the TypeScript SDK (`@modelcontextprotocol/sdk`
//! from npm) each connect over Streamable HTTP with a PAT and run the scripts in
//! `tests/interop/` (initialize, 27 tools, create → get → stale update → update →
//! append → search → history → diff → delete → trash → restore → resources → purge).
//!
//! `scripts/test` installs both (a venv under `~/.cache/cairn/mcp-venv`, `npm ci` in
//! `tests/interop/ts`). Missing, they fail the test: they are never skipped.

use std::path::PathBuf;
use std::process::Command;

use crate::common::*;

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// The venv's Python (scripts/test makes it).
fn python() -> String {
    std::env::var("CAIRN_TEST_PYTHON").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{home}/.cache/cairn/mcp-venv/bin/python")
    })
}

async fn run_client(program: &str, args: &[String]) {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let pat = srv.user("agent@x.io").await.pat().await;
    let url = format!("{}/api/mcp", srv.url);
    let mut args = args.to_vec();
    args.extend([url, pat, env!("CARGO_PKG_VERSION").to_owned()]);
    run_script(program, args, "interop passed").await;
    srv.stop().await;
}

/// Runs `program` with `args` to its end: it must succeed and print `passed`.
async fn run_script(program: &str, args: Vec<String>, passed: &str) {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("cannot run {program} (scripts/test installs it): {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(stdout.contains(passed), "{stdout}");
}

#[tokio::test]
async fn the_official_python_sdk_works_unchanged() {
    let script = interop_dir().join("python/client.py").display().to_string();
    run_client(&python(), &[script]).await;
}

#[tokio::test]
async fn the_official_typescript_sdk_works_unchanged() {
    let ts = interop_dir().join("ts");
    assert!(
        ts.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
        "run `npm ci` in {} (scripts/test does)",
        ts.display()
    );
    run_client("node", &[ts.join("client.mjs").display().to_string()]).await;
}

/// The official SDKs' OAuth clients, with nothing but the MCP URL: discovery, dynamic
/// registration, the person's consent (posted as the consent screen posts it), tools/list
/// and a write tool, a refresh, and failure once the person disconnects the app.
async fn run_oauth_client(program: &str, script: PathBuf) {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    srv.user("person@x.io").await;
    // The person's session, as their browser holds it.
    let cookie = {
        let res = reqwest::Client::new()
            .post(format!("{}/api/auth/login", srv.url))
            .json(&serde_json::json!({"email": "person@x.io", "password": PASSWORD}))
            .send()
            .await
            .unwrap();
        let set =
            res.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_owned()).collect::<Vec<_>>();
        let session = set.iter().find(|c| c.starts_with("cairn_session=")).expect("a session cookie").clone();
        session["cairn_session=".len()..].split(';').next().unwrap().to_owned()
    };
    let args = vec![script.display().to_string(), format!("{}/api/mcp", srv.url), cookie];
    run_script(program, args, "oauth interop passed").await;
    srv.stop().await;
}

#[tokio::test]
async fn the_official_python_sdk_connects_by_oauth() {
    run_oauth_client(&python(), interop_dir().join("python/oauth_client.py")).await;
}

#[tokio::test]
async fn the_official_typescript_sdk_connects_by_oauth() {
    run_oauth_client("node", interop_dir().join("ts/oauth_client.mjs")).await;
}
