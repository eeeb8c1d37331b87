//! Fuzzing from the document: Schemathesis (PyPI; the interop venv) runs against a live
//! server with a valid PAT, bounded (examples per operation, a fixed seed), checking
//! that no answer is a server error, every status and content type is documented, and
//! every body matches its documented schema — over generated, coverage and stateful
//! (linked: create → get → update → delete) phases. `/api/mcp` is left out: it speaks
//! JSON-RPC, which the document only names; the official MCP clients test it
//! (tests/mcp_interop.rs).

mod common;

use common::*;

#[tokio::test]
async fn schemathesis_finds_nothing() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("fuzz@example.com").await;
    let pat = api.pat().await;
    let py = std::env::var("CAIRN_TEST_PYTHON")
        .expect("CAIRN_TEST_PYTHON names the interop venv's python (scripts/test sets it)");
    // Bounded: 20 examples per operation, a fixed seed, 10 s per request, and the whole
    // run cut at 10 minutes (it takes about 30 s).
    let run = tokio::process::Command::new(py)
        .args(["-m", "schemathesis.cli", "run"])
        .arg(format!("{}/openapi.json", srv.url))
        .args(["--header", &format!("Authorization: Bearer {pat}")])
        .args([
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,\
             response_schema_conformance,response_headers_conformance",
        ])
        .args(["--max-examples", "20", "--seed", "20261123", "--request-timeout", "10", "--exclude-path", "/api/mcp"])
        .args(["--no-color"])
        .env("SCHEMATHESIS_HOOKS", "")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(600), run)
        .await
        .expect("Schemathesis ran past its 10-minute cap")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "Schemathesis found failures:\n{stdout}\n{stderr}");
    assert!(stdout.contains("passed"), "{stdout}");
    srv.stop().await;
}
