//! Keyword search (CONTRACT §6) on both backends: ranking, stemming, prefixes, snippets,
//! scripts without spaces, hostile query syntax, paging, tags and isolation.

mod common;

use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// `s` percent-encoded for a query string.
fn enc(s: &str) -> String {
    serde_urlencoded::to_string([("x", s)]).unwrap()[2..].to_owned()
}

async fn search(api: &Api, query: &str) -> Value {
    let r = api.send(Method::GET, &format!("/api/search?{query}"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.text);
    r.json()
}

fn slugs(v: &Value) -> Vec<String> {
    v["items"].as_array().unwrap().iter().map(|i| i["slug"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn keyword_search_ranks_stems_prefixes_and_highlights() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("sam@x.io").await;
    api.page("deploying", "# Deploying services\n\nHow we ship: build, test, release to production.\n").await;
    api.page("runbook", "# Runbook\n\nWhen a release fails, roll back the rollout first. #ops\n").await;
    api.page("lunch", "# Lunch\n\nThe canteen opens at noon.\n").await;
    api.page("xss", "# Notes\n\nA deploy where x < y & z > w is <b>bold</b>.\n").await;

    let r = search(&api, "q=deploy").await;
    assert_eq!(r["mode"], "keyword");
    assert_eq!(r["engine"], "fulltext");
    assert_eq!(r["query"], "deploy");
    // The title match ranks first.
    let found = slugs(&r);
    assert_eq!(found, ["deploying", "xss"], "{r}");
    assert_eq!(r["total"], 2);
    let scores: Vec<f64> = r["items"].as_array().unwrap().iter().map(|i| i["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // Snippets mark the match and carry the page's text HTML-escaped.
    let snippet = r["items"][1]["snippet"].as_str().unwrap();
    assert!(snippet.contains("<mark>deploy</mark>"), "{snippet}");
    assert!(snippet.contains("x &lt; y &amp; z &gt; w") && !snippet.contains("<b>"), "{snippet}");
    // Stemming: "releasing" finds "release".
    let r = search(&api, &format!("q={}", enc("releasing "))).await;
    assert_eq!(slugs(&r), ["deploying", "runbook"], "{r}");

    // The last word is a prefix while typed; a space ends it.
    assert_eq!(slugs(&search(&api, "q=cante").await), ["lunch"]);
    assert!(slugs(&search(&api, &format!("q={}", enc("cante "))).await).is_empty());
    // Phrases, exclusions, tags.
    assert_eq!(slugs(&search(&api, &format!("q={}", enc("\"roll back\""))).await), ["runbook"]);
    assert!(slugs(&search(&api, &format!("q={}", enc("\"back roll\""))).await).is_empty());
    let r = search(&api, &format!("q={}", enc("deploy -production"))).await;
    assert_eq!(slugs(&r), ["xss"], "{r}");
    assert_eq!(slugs(&search(&api, "q=release&tag=ops").await), ["runbook"]);
    assert_eq!(slugs(&search(&api, "q=release&tag=%23OPS").await), ["runbook"]);
    // Paging: total counts every match.
    let r = search(&api, "q=release&limit=1&offset=1").await;
    assert_eq!(r["items"].as_array().unwrap().len(), 1);
    assert_eq!(r["total"], 2);
    srv.stop().await;
}

#[tokio::test]
async fn words_of_every_script_are_found() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("yuki@x.io").await;
    api.page("tenki", "# 天気予報\n\n東京の天気は晴れです。明日は雨が降るでしょう。\n").await;
    api.page("strasse", "# Die Straße\n\nDie Häuser der Straße sind alt und schön.\n").await;
    api.page("korean", "# 회의\n\n내일 회의는 서울에서 열립니다.\n").await;

    let r = search(&api, &format!("q={}", enc("天気"))).await;
    assert_eq!(slugs(&r), ["tenki"], "{r}");
    let snippet = r["items"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("<mark>天</mark>") || snippet.contains("<mark>天気</mark>"), "{snippet}");
    assert!(!snippet.contains("天 "), "CJK text is answered without the index's spaces: {snippet}");
    assert_eq!(slugs(&search(&api, &format!("q={}", enc("雨 "))).await), ["tenki"]);
    // Characters that are not next to each other are no match for the word.
    assert!(slugs(&search(&api, &format!("q={}", enc("京天 "))).await).is_empty());
    assert_eq!(slugs(&search(&api, &format!("q={}", enc("Straße "))).await), ["strasse"]);
    assert_eq!(slugs(&search(&api, &format!("q={}", enc("häuser "))).await), ["strasse"]);
    assert_eq!(slugs(&search(&api, &format!("q={}", enc("서울 "))).await), ["korean"]);
    srv.stop().await;
}

#[tokio::test]
async fn no_query_syntax_is_an_error() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("q@x.io").await;
    api.page("a", "# Alpha\n\nSome text: with (parentheses) and \"quotes\" AND more.\n").await;
    for q in [
        "\"",
        "\"\"",
        "\"unclosed phrase",
        "-",
        "--",
        "-alpha",
        "*",
        "alpha*",
        ":",
        "a:b",
        "()",
        "(alpha",
        "AND",
        "OR",
        "NOT",
        "alpha AND",
        "NOT alpha",
        "'",
        "\\",
        "%",
        "_",
        "^",
        "~",
        "&",
        "|",
        "!",
        "<->",
        "alpha:*",
        "a & b | !c",
        "'; DROP TABLE pages; --",
        "NEAR(alpha text)",
        "title:alpha",
        "{alpha}",
        "alpha\u{0}",
        "ü",
        "the",
        "a",
    ] {
        let r = api.send(Method::GET, &format!("/api/search?q={}", enc(q)), None).await;
        assert_eq!(r.status, StatusCode::OK, "{q:?}: {}", r.text);
        assert!(r.json()["items"].is_array(), "{q:?}");
    }
    // Only an empty query is refused, and a mode that does not exist.
    for q in ["", "%20%20", "q"] {
        let path = if q == "q" { "/api/search".to_owned() } else { format!("/api/search?q={q}") };
        let r = api.send(Method::GET, &path, None).await;
        assert_problem(&r, 400, "empty_query");
    }
    let r = api.send(Method::GET, "/api/search?q=alpha&mode=fuzzy", None).await;
    assert_problem(&r, 400, "invalid_mode");
    // Semantic and hybrid are not served yet, and say so.
    for mode in ["semantic", "hybrid"] {
        let r = api.send(Method::GET, &format!("/api/search?q=alpha&mode={mode}"), None).await;
        assert_problem(&r, 400, "mode_unavailable");
    }
    let r = api.send(Method::GET, "/api/search?q=alpha&limit=0", None).await;
    assert_problem(&r, 400, "invalid_paging");
    assert_eq!(srv.anon().get("/api/search?q=alpha").await.0, StatusCode::UNAUTHORIZED);
    srv.stop().await;
}

#[tokio::test]
async fn search_sees_only_live_pages_of_the_callers_workspace() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let ann = srv.user("ann@x.io").await;
    let bob = srv.user("bob@x.io").await;
    ann.page("secret", "# Zephyr plans\n\nThe zephyr project.\n").await;
    bob.page("mine", "# Zephyr too\n\nBob's zephyr.\n").await;
    assert_eq!(slugs(&search(&ann, "q=zephyr").await), ["secret"]);
    assert_eq!(slugs(&search(&bob, "q=zephyr").await), ["mine"]);
    let r = bob.send(Method::GET, "/api/search?q=zephyr&ws=ann", None).await;
    assert_problem(&r, 404, "workspace_not_found");

    // Trashed: gone; restored: back; edited: found by its new words only; purged: gone.
    ann.delete("/api/pages/secret").await;
    assert!(slugs(&search(&ann, "q=zephyr").await).is_empty());
    ann.post("/api/trash/secret/restore", json!({})).await;
    assert_eq!(slugs(&search(&ann, "q=zephyr").await), ["secret"]);
    ann.put("/api/pages/secret", json!({"content": "# Mistral plans\n\nRenamed wind.\n"})).await;
    assert!(slugs(&search(&ann, "q=zephyr").await).is_empty());
    assert_eq!(slugs(&search(&ann, "q=mistral").await), ["secret"]);
    ann.post("/api/pages/secret/rename", json!({"new_slug": "wind"})).await;
    assert_eq!(slugs(&search(&ann, "q=mistral").await), ["wind"]);
    ann.delete("/api/pages/wind").await;
    ann.post("/api/trash/wind/purge", json!({})).await;
    assert!(slugs(&search(&ann, "q=mistral").await).is_empty());
    srv.stop().await;
}

/// Rows written before the search text had its current form are rebuilt at start-up,
/// so an upgrade needs no manual reindex.
#[tokio::test]
async fn the_start_up_check_rebuilds_old_search_text() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("old@x.io").await;
    api.page("tenki", "# 天気\n\n東京の天気は晴れです。\n").await;
    // What an older release left: the title unindexed, the body unsegmented.
    sqlx::query("UPDATE pages SET search_title = '', body = '東京の天気は晴れです。'")
        .execute(&srv.ctx.db.pool)
        .await
        .unwrap();
    assert!(slugs(&search(&api, &format!("q={}", enc("天気 "))).await).is_empty());
    srv.stop().await;
    let srv = env.start(&[]).await;
    assert_eq!(slugs(&search(&api_for(&srv, &api), &format!("q={}", enc("天気 "))).await), ["tenki"]);
    srv.stop().await;
}

/// The same caller against a restarted server (its session lives in the database).
fn api_for(srv: &Server, api: &Api) -> Api {
    Api { base: srv.url.clone(), client: api.client.clone(), bearer: api.bearer.clone() }
}
