//! docs/api.md's tour runs as written: every `sh` block of its "A tour" section, in
//! order, in one bash (so `TOKEN` and `REV` carry over), against a live server.

use crate::common::*;
use reqwest::StatusCode;

#[tokio::test]
async fn the_tour_in_docs_api_md_runs() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/api.md")).unwrap();
    let tour = doc.split("## A tour").nth(1).expect("docs/api.md has a tour");
    let tour = tour.split("\n## ").next().unwrap();
    let mut script = String::from("set -euo pipefail\n");
    let mut blocks = 0;
    for block in tour.split("```sh\n").skip(1) {
        script.push_str(block.split("```").next().unwrap());
        script.push('\n');
        blocks += 1;
    }
    assert!(blocks >= 8, "only {blocks} sh blocks");

    let env = Env::new().await;
    // The webhook example names a public host: no resolution in a sandbox without DNS.
    let srv = env.start(&["--webhook-allow-private=1"]).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("diagram.png"), PNG).unwrap();
    let out = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir.path())
        .env("BASE", &srv.url)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the tour failed:\n{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    // What the tour says it shows, it shows.
    assert!(stdout.contains(r#""code":"page_not_found""#), "{stdout}");
    assert!(stdout.contains("then check [[status]]"), "{stdout}");
    assert!(stdout.contains(r#""content_type":"image/png""#), "{stdout}");

    // And it left what it says: the page in the new workspace, restored to its first text.
    let ada = srv.anon();
    let (s, _) =
        ada.post("/api/auth/login", serde_json::json!({"email": "ada@example.com", "password": PASSWORD})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, page) = ada.get("/api/pages/runbook?ws=platform").await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["content"], "# Runbook\n\nRestart with `systemctl restart app`. #ops");
    srv.stop().await;
}
