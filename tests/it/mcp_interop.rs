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

async fn run_client(program: &str, args: &[String]) {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let pat = srv.user("agent@x.io").await.pat().await;
    let url = format!("{}/api/mcp", srv.url);
    let mut cmd = Command::new(program);
    cmd.args(args).arg(&url).arg(&pat).arg(env!("CARGO_PKG_VERSION"));
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("cannot run {program} (scripts/test installs it): {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(stdout.contains("interop passed"), "{stdout}");
    srv.stop().await;
}

#[tokio::test]
async fn the_official_python_sdk_works_unchanged() {
    let python = std::env::var("CAIRN_TEST_PYTHON").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{home}/.cache/cairn/mcp-venv/bin/python")
    });
    let script = interop_dir().join("python/client.py").display().to_string();
    run_client(&python, &[script]).await;
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
