//! Health, system report, OpenAPI, error shapes, request ids and schema convergence.

use crate::common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn health_and_system() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let anon = srv.anon();
    let r = anon.send(Method::GET, "/health", None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.headers.get("content-type").unwrap(), "application/json; charset=utf-8");
    let health = r.json();
    assert_eq!(health, json!({"status": "ok", "db": "ok", "version": env!("CARGO_PKG_VERSION")}));

    let r = anon.send(Method::GET, "/api/system", None).await;
    assert_problem(&r, 401, "unauthorized");
    let api = srv.user("sys@x.io").await;
    let (s, sys) = api.get("/api/system").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(sys["version"], health["version"]);
    assert_eq!(sys["db"], "ok");
    assert_eq!(sys["db_backend"], backend());
    assert_eq!(sys["semantic_search"], false);
    assert_eq!(sys["rerank"], false);
    assert_eq!(sys["ocr_uploads"], false);
    assert_eq!(sys["registration_open"], true);
    assert_eq!(sys["notes"], json!([]));
    srv.stop().await;

    // Asking for a feature whose model is missing is reported, not pretended. (OCR's
    // engine is installed by CI: it resolves; tests/it/uploads.rs runs without it.)
    let srv =
        env.start(&["--semantic-search", "--rerank", "--ocr-uploads", "--embedding-model-dir", "/nonexistent"]).await;
    let api = srv.anon();
    api.post("/api/auth/login", json!({"email": "sys@x.io", "password": PASSWORD})).await;
    let (_, sys) = api.get("/api/system").await;
    assert_eq!(sys["semantic_search"], false);
    assert_eq!(sys["rerank"], false);
    assert_eq!(sys["ocr_uploads"], true);
    assert_eq!(sys["notes"].as_array().unwrap().len(), 2, "{sys}");
    srv.stop().await;
}

#[tokio::test]
async fn one_version_everywhere() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let (_, doc) = srv.anon().get("/openapi.json").await;
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(doc["info"]["title"], "Cairn");
    srv.stop().await;
}

/// Every operation the router serves — the document is generated from the same
/// `routes!` registrations, so this list is the router's own — has response schemas,
/// documents 401 when secured, and is really served.
#[tokio::test]
async fn openapi_describes_every_route() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let (_, doc) = srv.anon().get("/openapi.json").await;
    let paths = doc["paths"].as_object().unwrap();
    let (_, generated) = cairn::testing::api();
    let generated = serde_json::to_value(&generated).unwrap();
    assert_eq!(paths, generated["paths"].as_object().unwrap(), "the served document is the router's");
    let mut operations = 0;
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            operations += 1;
            let responses = op["responses"].as_object().unwrap();
            // A success, the switch to a WebSocket (a co-editing session), or a browser's
            // way on (single sign-on's redirects).
            let ok = responses
                .keys()
                .find(|k| k.starts_with('2') || *k == "101" || *k == "303")
                .unwrap_or_else(|| panic!("{method} {path}: no 2xx"));
            if ok != "204" && ok != "101" && ok != "303" {
                let content =
                    responses[ok]["content"].as_object().unwrap_or_else(|| panic!("{method} {path}: no content"));
                assert!(content.values().all(|c| c["schema"].is_object()), "{method} {path}: no schema");
            }
            if op.get("security").is_some() {
                assert!(responses.contains_key("401"), "{method} {path}: 401 not documented");
            }
            // A query parameter that is not a plain string can fail to parse: 400 is
            // documented (Schemathesis found `DELETE /api/pages/{slug}?recursive=…`).
            let text_only = |schema: &serde_json::Value| match &schema["type"] {
                serde_json::Value::String(t) => t == "string",
                serde_json::Value::Array(ts) => ts.iter().all(|t| t == "string" || t == "null"),
                _ => false,
            };
            let typed_query = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["in"] == "query" && !text_only(&p["schema"]));
            if typed_query {
                assert!(responses.contains_key("400"), "{method} {path}: 400 not documented");
            }
            // Errors are documented as what they are sent as: problems, but for OAuth's own
            // (RFC 6749 §5.2), which OAuth clients read as plain JSON.
            for (status, r) in responses.iter().filter(|(s, _)| s.starts_with('4') || s.starts_with('5')) {
                if let Some(content) = r["content"].as_object() {
                    let oauth = |c: &serde_json::Value| c["schema"]["$ref"] == "#/components/schemas/OAuthError";
                    assert!(
                        content
                            .iter()
                            .all(|(k, c)| k == "application/problem+json" || (k == "application/json" && oauth(c))),
                        "{method} {path} {status}: {content:?}"
                    );
                }
            }
            // The route exists (whatever the answer, it is not "no such route").
            let concrete = path
                .replace("{token_id}", "1")
                .replace("{member_id}", "1")
                .replace("{slug}", "x")
                .replace("{code}", "en")
                .replace("{sha}", "abc");
            let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = srv.anon().send(m, &concrete, Some(json!({}))).await;
            assert_ne!(r.json()["code"], "route_not_found", "{method} {path}");
        }
    }
    assert!(operations >= 42, "only {operations} operations");
    srv.stop().await;
}

/// The whole document, snapshot-tested: every change to the API shows in review as a
/// change to `tests/snapshots/system__openapi.snap`.
#[test]
fn openapi_snapshot() {
    let (_, doc) = cairn::testing::api();
    let mut doc = serde_json::to_value(&doc).unwrap();
    doc["info"]["version"] = json!("[version]");
    // Kept where the web app's type generator and build.rs read it: tests/snapshots/.
    insta::with_settings!({ snapshot_path => "../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("system__openapi", serde_json::to_string_pretty(&doc).unwrap());
    });
}

/// The browser door beside the API: `/` leads into the app, any `/app/…` path gets the
/// app (it routes on the client), and an unknown path elsewhere — `/api/…` above all —
/// stays a JSON 404.
#[tokio::test]
async fn the_app_and_the_api_have_their_own_fallbacks() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let c = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for (from, to) in [("/", "/app/"), ("/login", "/app/login"), ("/register", "/app/register"), ("/app", "/app/")] {
        let r = c.get(format!("{}{from}", srv.url)).send().await.unwrap();
        assert!(r.status().is_redirection(), "{from}: {}", r.status());
        assert_eq!(r.headers()["location"], to, "{from}");
    }
    for path in ["/app/", "/app/pages/getting-started", "/app/deep/ly/nested?x=1"] {
        let r = c.get(format!("{}{path}", srv.url)).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{path}");
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"), "{path}");
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
        assert!(r.headers().contains_key("content-security-policy"));
        assert!(r.text().await.unwrap().contains("<title>Cairn</title>"));
    }
    for path in ["/api/nothing-here", "/api/pages/x/nothing", "/nothing", "/apps"] {
        let r = srv.anon().send(Method::GET, path, None).await;
        assert_problem(&r, 404, "route_not_found");
    }
    let r = srv.anon().send(Method::POST, "/app/pages", None).await;
    assert_problem(&r, 405, "method_not_allowed");
    srv.stop().await;
}

#[tokio::test]
async fn unknown_routes_and_methods_are_problems() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let r = srv.anon().send(Method::GET, "/api/nothing-here", None).await;
    assert_problem(&r, 404, "route_not_found");
    let r = srv.anon().send(Method::PATCH, "/api/workspaces", None).await;
    assert_problem(&r, 405, "method_not_allowed");
    srv.stop().await;
}

#[tokio::test]
async fn request_ids_are_generated_or_echoed() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let c = reqwest::Client::new();
    let r = c.get(format!("{}/health", srv.url)).send().await.unwrap();
    let id = r.headers().get("x-request-id").unwrap().to_str().unwrap();
    assert_eq!(id.len(), 36);
    let r = c.get(format!("{}/api/me", srv.url)).header("x-request-id", "trace-me-42").send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(r.headers().get("x-request-id").unwrap(), "trace-me-42");
    // An id that is not a plain token never reaches the log: a fresh one replaces it.
    for odd in ["a b", "x\"y", &"z".repeat(129), "id=1;drop", "ü"] {
        let r = c.get(format!("{}/health", srv.url)).header("x-request-id", odd).send().await.unwrap();
        let id = r.headers().get("x-request-id").unwrap().to_str().unwrap();
        assert_eq!(id.len(), 36, "{odd:?} → {id}");
    }
    srv.stop().await;
}

/// Every answer — API, app, errors — says not to sniff its type and to send no
/// `Referer` elsewhere; HSTS only where Cairn runs behind TLS (`COOKIE_SECURE=1`).
#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let c = reqwest::Client::new();
    for path in ["/health", "/api/me", "/app/", "/openapi.json", "/api/nothing", "/app/assets/nope.js"] {
        let r = c.get(format!("{}{path}", srv.url)).send().await.unwrap();
        assert_eq!(r.headers()["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(r.headers()["referrer-policy"], "no-referrer", "{path}");
        assert!(r.headers().get("strict-transport-security").is_none(), "{path}");
    }
    srv.stop().await;
    let srv = env.start(&["--cookie-secure"]).await;
    let r = c.get(format!("{}/health", srv.url)).send().await.unwrap();
    assert_eq!(r.headers()["strict-transport-security"], "max-age=31536000");
    srv.stop().await;
}

/// A crude fuzz over every documented operation: hostile bodies, paths and queries
/// never produce a 5xx.
#[tokio::test]
async fn no_client_input_produces_a_500() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let owner = srv.user("fuzz@x.io").await;
    // Some content to aim at: a page, a child, a trashed page.
    owner.page("x", "# X\n[[ü]]").await;
    owner.post("/api/pages", serde_json::json!({"slug": "ü", "parent": "x", "content": "# Ü"})).await;
    owner.page("gone", "# Gone").await;
    owner.delete("/api/pages/gone").await;
    // A bearer, so that fuzzing POST /api/auth/logout cannot end the caller's session.
    let api = owner.with_bearer(&owner.pat().await);
    let (_, doc) = api.get("/openapi.json").await;
    let bodies = [
        None,
        Some(json!(null)),
        Some(json!([])),
        Some(json!("string")),
        Some(json!({"name": null, "email": {"a": 1}, "password": [1, 2]})),
        Some(
            json!({"name": "x".repeat(10_000), "email": "é@é.é", "password": "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}"}),
        ),
        Some(json!({"name": "ok", "slug": "../../etc", "role": "owner", "current_password": "", "new_password": ""})),
        Some(
            json!({"name": "nul\u{0}byte", "email": "nul\u{0}@x.io", "password": "nul\u{0}nul\u{0}nul", "language": "\u{0}"}),
        ),
    ];
    let params = ["x", "%2e%2e", "..", "-1", "99999999999999999999", "%00", "ü", "a%2Fb"];
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            for p in params {
                let concrete = path
                    .replace("{token_id}", p)
                    .replace("{member_id}", p)
                    .replace("{slug}", p)
                    .replace("{code}", p)
                    .replace("{sha}", p);
                for body in &bodies {
                    for suffix in ["", "?limit=-5", "?limit=x&offset=%zz", "?lang=%ff"] {
                        let r = api.send(m.clone(), &format!("{concrete}{suffix}"), body.clone()).await;
                        assert!(
                            !r.status.is_server_error(),
                            "{m} {concrete}{suffix} {body:?} → {} {}",
                            r.status,
                            r.text
                        );
                    }
                }
            }
        }
    }
    // Raw garbage bodies with odd content types.
    for ct in ["text/plain", "application/x-www-form-urlencoded", "application/json"] {
        let r = api
            .client
            .post(format!("{}/api/workspaces", srv.url))
            .bearer_auth(api.bearer.as_deref().unwrap())
            .header("content-type", ct)
            .body(vec![0xff, 0xfe, 0x00, b'{'])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    }
    // The account still works.
    assert_eq!(api.get("/api/me").await.0, StatusCode::OK);
    srv.stop().await;
}

async fn schema_dump(srv: &Server) -> Vec<String> {
    let sql = if backend() == "postgres" {
        "SELECT table_name || '.' || column_name || ':' || data_type || ':' || coalesce(column_default, '') \
         FROM information_schema.columns WHERE table_schema = current_schema() \
         UNION ALL SELECT indexname || ':' || indexdef FROM pg_indexes WHERE schemaname = current_schema()"
    } else {
        "SELECT type || ':' || name || ':' || coalesce(sql, '') FROM sqlite_master"
    };
    let mut rows: Vec<String> = sqlx::query_scalar(sql).fetch_all(&srv.ctx.db.pool).await.unwrap();
    rows.sort();
    rows
}

#[tokio::test]
async fn schema_convergence_is_idempotent() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    assert!(!srv.report.created_tables.is_empty());
    srv.user("conv@x.io").await;
    let before = schema_dump(&srv).await;
    srv.stop().await;
    let srv = env.start(&[]).await;
    assert!(srv.report.is_empty(), "second start changed the schema: {:?}", srv.report);
    assert_eq!(schema_dump(&srv).await, before);
    srv.stop().await;
}

/// SQLite: every pooled connection, not only the first, enforces foreign keys, fsyncs
/// its commits (`synchronous=FULL`) and carries the process's limit on SQLite's memory,
/// which keeps 16 connections' page caches from holding 45–48 MiB, as they did after the
/// bench's 10,000-page run.
#[tokio::test]
async fn sqlite_only_every_connection_is_configured() {
    // PostgreSQL's connections have none of these settings: its pass skips `sqlite_only`.
    assert_eq!(backend(), "sqlite", "a SQLite-only test");
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    // Held together, so that the pool opens new connections rather than lending one.
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(srv.ctx.db.pool.acquire().await.unwrap());
    }
    for conn in &mut held {
        let foreign_keys: i64 = sqlx::query_scalar("PRAGMA foreign_keys").fetch_one(&mut **conn).await.unwrap();
        let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(&mut **conn).await.unwrap();
        let heap: i64 = sqlx::query_scalar("PRAGMA soft_heap_limit").fetch_one(&mut **conn).await.unwrap();
        assert_eq!((foreign_keys, synchronous, heap), (1, 2, cairn::testing::SQLITE_HEAP_BYTES));
    }
    drop(held);
    srv.stop().await;
}

/// SQLite: the tables of small rows found by their key are made `WITHOUT ROWID`, so the
/// key's index is the table. Those an older release made as rowid tables stay as they
/// are, and links, backlinks and tags work on them as on the new ones.
#[tokio::test]
async fn sqlite_only_small_keyed_tables_are_made_without_rowid_and_older_ones_are_kept() {
    // PostgreSQL has no rowid tables: its pass skips `sqlite_only`.
    assert_eq!(backend(), "sqlite", "a SQLite-only test");
    let without_rowid = ["page_tags", "page_links", "embed_queue"];
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("rowid@x.io").await;
    api.page("target", "# Target").await;
    api.page("before", "# Before\n\n[[target]] #old").await;
    let token = api.pat().await;
    srv.stop().await;
    // An older release's shape: each table made again as a rowid table, rows kept. On
    // one connection, in one transaction, no server running: a pooled connection still
    // reading an earlier snapshot would not see the others' schema changes.
    let config = env.config(&[]);
    let (db, _) = cairn::testing::store::Db::connect(&config).await.unwrap();
    let mut tx = db.pool.begin().await.unwrap();
    for table in without_rowid {
        let sql: String = sqlx::query_scalar("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = $1")
            .bind(table)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        assert!(sql.ends_with("WITHOUT ROWID"), "{sql}");
        let older = sql.trim_end_matches(" WITHOUT ROWID").replacen(table, &format!("{table}_older"), 1);
        for stmt in [
            older,
            format!("INSERT INTO {table}_older SELECT * FROM {table}"),
            format!("DROP TABLE {table}"),
            format!("ALTER TABLE {table}_older RENAME TO {table}"),
        ] {
            sqlx::query(sqlx::AssertSqlSafe(stmt)).execute(&mut *tx).await.unwrap();
        }
    }
    tx.commit().await.unwrap();
    db.pool.close().await;
    let srv = env.start(&[]).await;
    assert!(srv.report.is_empty(), "{:?}", srv.report);
    let kept: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND sql LIKE '%WITHOUT ROWID' \
         AND name IN ('page_tags', 'page_links', 'embed_queue')",
    )
    .fetch_one(&srv.ctx.db.pool)
    .await
    .unwrap();
    assert_eq!(kept, 0, "an older release's tables were made again");
    let api = srv.anon().with_bearer(&token);
    api.page("after", "# After\n\n[[target]] #new").await;
    let (s, body) = api.put("/api/pages/before", json!({"content": "# Before\n\n[[target]] #changed"})).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (_, view) = api.get("/api/pages/target/view").await;
    let mut backlinks: Vec<&str> =
        view["backlinks"].as_array().unwrap().iter().map(|b| b["slug"].as_str().unwrap()).collect();
    backlinks.sort();
    assert_eq!(backlinks, ["after", "before"], "{view}");
    assert_eq!(api.get("/api/pages/before").await.1["tags"], json!(["changed"]));
    assert_eq!(api.get("/api/pages/after").await.1["tags"], json!(["new"]));
    srv.stop().await;
}

/// An index earlier releases made that no query reads (`revisions (workspace_id, sha)`:
/// written at every save) is dropped at the next start; revisions are still found by
/// sha, and a deleted workspace still takes its revisions with it.
#[tokio::test]
async fn an_index_no_query_reads_is_dropped_from_an_older_database() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("retired@x.io").await;
    api.page("note", "# Note\n\nfirst").await;
    api.put("/api/pages/note", json!({"content": "# Note\n\nsecond"})).await;
    // The older release's shape.
    sqlx::query("CREATE INDEX IF NOT EXISTS revisions_sha_idx ON revisions (workspace_id, sha)")
        .execute(&srv.ctx.db.pool)
        .await
        .unwrap();
    srv.stop().await;
    let srv = env.start(&[]).await;
    let dump = schema_dump(&srv).await;
    assert!(!dump.iter().any(|d| d.contains("revisions_sha_idx")), "{dump:?}");
    let api = Api { base: srv.url.clone(), ..api };
    let (_, history) = api.get("/api/pages/note/history").await;
    let first = history["items"][1]["sha"].as_str().unwrap().to_owned();
    let (s, old) = api.get(&format!("/api/pages/note/history/{first}")).await;
    assert_eq!(s, StatusCode::OK, "{old}");
    assert_eq!(old["content"], "# Note\n\nfirst");
    let ws_id: i64 = sqlx::query_scalar("SELECT id FROM workspaces WHERE slug = 'retired'")
        .fetch_one(&srv.ctx.db.pool)
        .await
        .unwrap();
    assert_eq!(api.delete("/api/workspaces/retired").await.0, StatusCode::NO_CONTENT);
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM revisions WHERE workspace_id = $1")
        .bind(ws_id)
        .fetch_one(&srv.ctx.db.pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
    srv.stop().await;
}

#[tokio::test]
async fn a_newer_schema_does_not_stop_an_older_binary() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    srv.user("new@x.io").await;
    // What a newer release might have added.
    for stmt in [
        "CREATE TABLE future_things (id BIGINT PRIMARY KEY, what TEXT NOT NULL)",
        "ALTER TABLE users ADD COLUMN future_flag BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE workspaces ADD COLUMN future_note TEXT",
        "INSERT INTO future_things (id, what) VALUES (1, 'kept')",
    ] {
        sqlx::query(stmt).execute(&srv.ctx.db.pool).await.unwrap();
    }
    srv.stop().await;
    let srv = env.start(&[]).await;
    assert!(srv.report.is_empty(), "{:?}", srv.report);
    let api = srv.anon();
    assert_eq!(api.post("/api/auth/login", json!({"email": "new@x.io", "password": PASSWORD})).await.0, StatusCode::OK);
    let other = srv.user("newer@x.io").await;
    assert_eq!(other.post("/api/workspaces", json!({"name": "Works"})).await.0, StatusCode::CREATED);
    // Nothing the newer release made was dropped.
    let what: String =
        sqlx::query_scalar("SELECT what FROM future_things WHERE id = 1").fetch_one(&srv.ctx.db.pool).await.unwrap();
    assert_eq!(what, "kept");
    srv.stop().await;
}

#[tokio::test]
async fn a_missing_column_is_added() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    srv.stop().await;
    // An older schema: the table exists without a column this release has.
    {
        let srv = env.start(&[]).await;
        sqlx::query("ALTER TABLE api_tokens DROP COLUMN last_used_at").execute(&srv.ctx.db.pool).await.unwrap();
        srv.stop().await;
    }
    let srv = env.start(&[]).await;
    assert_eq!(srv.report.added_columns, ["api_tokens.last_used_at"]);
    let api = srv.user("col@x.io").await;
    let token = api.pat().await;
    assert_eq!(api.with_bearer(&token).get("/api/me").await.0, StatusCode::OK);
    srv.stop().await;
}

#[tokio::test]
async fn a_changed_search_expression_is_rebuilt_exactly_once() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    assert_eq!(srv.report.created_search.len(), 1);
    let api = srv.user("fts@x.io").await;
    api.page("p", "# Zebra facts\n\nStripes everywhere.\n").await;
    env.age_search_definition(&srv).await;
    srv.stop().await;

    let srv = env.start(&[]).await;
    assert_eq!(srv.report.rebuilt_search.len(), 1, "{:?}", srv.report);
    assert!(srv.report.created_tables.is_empty() && srv.report.added_columns.is_empty());
    let api = srv.anon();
    assert_eq!(api.post("/api/auth/login", json!({"email": "fts@x.io", "password": PASSWORD})).await.0, StatusCode::OK);
    let (_, found) = api.get("/api/search?q=zebra+stripes").await;
    assert_eq!(found["total"], 1, "{found}");
    // The index was created empty; the start-up check (PostgreSQL) or the catch-up
    // (SQLite's search file) wrote the existing page into it.
    let hits: i64 = if backend() == "postgres" {
        sqlx::query_scalar("SELECT COUNT(*) FROM pages WHERE search_vector @@ to_tsquery('english', 'stripes')")
    } else {
        sqlx::query_scalar("SELECT COUNT(*) FROM search.pages_fts WHERE pages_fts MATCH 'stripes'")
    }
    .fetch_one(&srv.ctx.db.pool)
    .await
    .unwrap();
    assert_eq!(hits, 1);
    assert!(found["items"][0]["snippet"].as_str().unwrap().contains("<mark>Stripes</mark> everywhere"), "{found}");
    srv.stop().await;
    let srv = env.start(&[]).await;
    assert!(srv.report.is_empty(), "{:?}", srv.report);
    srv.stop().await;
}

/// A [`Script`](cairn::testing::store::Script) runs every statement, in order, and answers the
/// rows of each `RETURNING`, in order — on SQLite as one query string (the statements
/// after the first would silently not run if the driver stopped at the first row or
/// dropped several statements per query), on PostgreSQL one by one.
#[tokio::test]
async fn a_script_runs_every_statement_in_order() {
    use cairn::testing::store::{Script, Value};
    use sqlx::{Connection, Row};
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let mut conn = srv.ctx.db.pool.acquire().await.unwrap();
    let mut tx = conn.begin().await.unwrap();
    sqlx::query("CREATE TEMPORARY TABLE script_probe (n BIGINT, label TEXT)").execute(&mut *tx).await.unwrap();
    let mut script = Script::new();
    script.push("INSERT INTO script_probe (n, label) VALUES ($1, $2) RETURNING n", vec![1.into(), "one".into()]);
    script.push("UPDATE script_probe SET label = $1 WHERE n = $2", vec!["first".into(), 1.into()]);
    script.push("INSERT INTO script_probe (n, label) VALUES ($2, $1) RETURNING n", vec!["two".into(), 2.into()]);
    script.push(
        "INSERT INTO script_probe (n, label) SELECT MAX(n) + $1, $2 FROM script_probe RETURNING n",
        vec![1.into(), Value::OptText(None)],
    );
    let rows = script.run(&mut tx).await.unwrap();
    let returned: Vec<i64> = rows.iter().map(|r| r.try_get(0).unwrap()).collect();
    assert_eq!(returned, [1, 2, 3]);
    let table: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT n, label FROM script_probe ORDER BY n").fetch_all(&mut *tx).await.unwrap();
    assert_eq!(table, [(1, Some("first".to_owned())), (2, Some("two".to_owned())), (3, None)]);
    tx.rollback().await.unwrap();
    drop(conn);
    srv.stop().await;
}

/// Reads from `s` until the server closes it or `within` passes: true when it closed.
async fn closed_within(s: &mut tokio::net::TcpStream, within: std::time::Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let deadline = tokio::time::Instant::now() + within;
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// A connection that sends nothing, one that trickles its headers and an idle keep-alive
/// one are all closed once `HEADER_TIMEOUT_SECS` has passed; none holds the server for good.
#[tokio::test]
async fn silent_trickling_and_idle_connections_are_closed() {
    use tokio::io::AsyncWriteExt;
    let env = Env::new().await;
    let srv = env.start(&["--header-timeout-secs", "1"]).await;
    let addr = srv.url.trim_start_matches("http://").to_owned();
    let connect = || tokio::net::TcpStream::connect(addr.clone());
    let window = std::time::Duration::from_secs(5);

    let mut silent = connect().await.unwrap();
    assert!(closed_within(&mut silent, window).await, "a connection that sends nothing");

    let mut trickling = connect().await.unwrap();
    trickling.write_all(b"GET /health HTTP/1.1\r\n").await.unwrap();
    let trickle = async {
        for _ in 0..40 {
            if trickling.write_all(b"X-Slow: 1\r\n").await.is_err() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    };
    trickle.await;
    assert!(closed_within(&mut trickling, window).await, "a connection that trickles its headers");

    let mut idle = connect().await.unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut head = [0u8; 12];
    tokio::io::AsyncReadExt::read_exact(&mut idle, &mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    assert!(closed_within(&mut idle, window).await, "an idle keep-alive connection");
    srv.stop().await;
}

/// A connection from `ip` (any address of the loopback network) to the server at `addr`.
async fn connect_from(ip: &str, addr: &str) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{ip}:0").parse().unwrap()).unwrap();
    socket.connect(addr.parse().unwrap()).await.unwrap()
}

/// One request on its own connection from `ip`: the status line's code, or 0 when the
/// connection was closed without an answer.
async fn status_from(ip: &str, addr: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = connect_from(ip, addr).await;
    let _ = s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
    let mut answer = String::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), s.read_to_string(&mut answer)).await;
    answer.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0)
}

/// A connection from `ip` in the middle of a request (its body half sent): busy.
async fn busy_from(ip: &str, addr: &str) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut s = connect_from(ip, addr).await;
    s.write_all(
        b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    )
    .await
    .unwrap();
    s
}

/// Past `MAX_CONNECTIONS`: a newcomer from an address within its share (a quarter) makes
/// room by closing an idle connection of the address holding the most; one from an
/// address over its share, or any when every connection is serving a request, is
/// answered 503 with Retry-After and closed; once one closes, the next is served.
#[tokio::test]
async fn connections_past_the_cap_are_answered_503() {
    use tokio::io::AsyncReadExt;
    let env = Env::new().await;
    let srv = env.start(&["--max-connections", "8", "--header-timeout-secs", "30"]).await;
    let addr = srv.url.trim_start_matches("http://").to_owned();
    let settle = || tokio::time::sleep(std::time::Duration::from_millis(200));
    // Below the cap nobody is limited: one address may hold them all.
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(connect_from("127.0.0.2", &addr).await);
    }
    settle().await;
    // Full: that address gets no more, another one's newcomer closes its oldest.
    assert_eq!(status_from("127.0.0.2", &addr).await, 503);
    assert_eq!(status_from("127.0.0.3", &addr).await, 200);
    let mut first = idle.remove(0);
    let mut buf = [0u8; 1];
    let read = tokio::time::timeout(std::time::Duration::from_secs(5), first.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "the oldest idle connection was closed: {read:?}");
    drop(idle);
    settle().await;
    // Full of connections serving requests: the newcomer is answered 503.
    let mut busy = Vec::new();
    for ip in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"] {
        busy.push(busy_from(ip, &addr).await);
        busy.push(busy_from(ip, &addr).await);
    }
    settle().await;
    let mut over = connect_from("127.0.0.9", &addr).await;
    tokio::io::AsyncWriteExt::write_all(&mut over, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut answer = String::new();
    over.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("Retry-After: 1"), "{answer}");
    assert!(answer.contains("\"code\":\"busy\""), "{answer}");
    drop(busy);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while status_from("127.0.0.9", &addr).await != 200 {
        assert!(std::time::Instant::now() < deadline, "a freed slot is used again");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    srv.stop().await;
}

/// One address holding idle connections — reopening each as it is closed — cannot lock
/// everyone else out: every request from another address is answered.
#[tokio::test]
async fn one_address_cannot_lock_everyone_out() {
    let env = Env::new().await;
    let srv = env.start(&["--max-connections", "40", "--header-timeout-secs", "30"]).await;
    let addr = srv.url.trim_start_matches("http://").to_owned();
    let mut held = Vec::new();
    for _ in 0..60 {
        held.push(connect_from("127.0.0.2", &addr).await);
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let mut answered = 0;
    for i in 0..40 {
        let ip = format!("127.0.0.{}", 3 + i % 3);
        if status_from(&ip, &addr).await == 200 {
            answered += 1;
        }
        // The attacker reopens what was closed.
        held.push(connect_from("127.0.0.2", &addr).await);
    }
    assert_eq!(answered, 40);
    drop(held);
    srv.stop().await;
}

/// Shutting down closes idle connections at once: an idle keep-alive client does not
/// hold the server for its grace period.
#[tokio::test]
async fn shutdown_does_not_wait_for_idle_connections() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let env = Env::new().await;
    let srv = env.start(&["--shutdown-grace-secs", "60", "--header-timeout-secs", "60"]).await;
    let addr = srv.url.trim_start_matches("http://").to_owned();
    let mut idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut head = [0u8; 12];
    idle.read_exact(&mut head).await.unwrap();
    let mut silent = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let stopped = tokio::time::timeout(std::time::Duration::from_secs(20), srv.stop()).await;
    assert!(stopped.is_ok(), "the server waited on idle connections");
    assert!(closed_within(&mut idle, std::time::Duration::from_secs(5)).await);
    assert!(closed_within(&mut silent, std::time::Duration::from_secs(5)).await);
}
