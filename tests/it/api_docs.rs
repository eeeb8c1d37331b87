//! `/docs` and `/redoc` work offline: a real Chromium (Debian's `chromium`, driven by
//! `playwright-core` from tests/browser/) loads both with every request outside the
//! server's origin blocked, finds the operations, and creates a page through Swagger
//! UI's "Authorize" and "Try it out".

use crate::common::*;
use reqwest::StatusCode;
use serde_json::Value;

#[tokio::test]
async fn both_api_browsers_work_with_no_outbound_network() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("docs@example.com").await;
    let pat = api.pat().await;

    // The pages and their files come from this server.
    for (path, kind) in [
        ("/docs", "text/html"),
        ("/docs/swagger-ui-bundle.js", "text/javascript"),
        ("/docs/swagger-ui.css", "text/css"),
        ("/redoc", "text/html"),
        ("/redoc/redoc.standalone.js", "text/javascript"),
    ] {
        let r = api.send(reqwest::Method::GET, path, None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        assert!(r.headers["content-type"].to_str().unwrap().starts_with(kind), "{path}");
        assert!(r.headers["content-security-policy"].to_str().unwrap().starts_with("default-src 'self'"));
    }

    let script = format!("{}/tests/browser/api_docs.mjs", env!("CARGO_MANIFEST_DIR"));
    let _turn = ONE_BROWSER.lock().await;
    let out = tokio::process::Command::new("node").arg(script).arg(&srv.url).arg(&pat).output().await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let found: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(found["error"], Value::Null, "{found}");
    assert_eq!(found["outside"], serde_json::json!([]), "a request left the origin: {found}");
    assert!(found["swagger_operations"].as_u64().unwrap() > 50, "{found}");
    assert_eq!(found["redoc_lists_create_page"], true, "{found}");
    // ReDoc's overview links the first operations of each tag (the rest behind "+ Show").
    assert!(found["redoc_operations"].as_u64().unwrap() >= 30, "{found}");
    assert_eq!(found["page_errors"], serde_json::json!([]), "{found}");
    assert_eq!(found["try_it_out_status"], "201", "{found}");
    // The page made through Swagger UI exists, made by the token's user.
    let (s, page) = api.get("/api/pages/made-in-swagger").await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["content"], "# Made in Swagger UI\n");
    srv.stop().await;
}
