//! Local intelligence (docs/api.md, "Intelligence") with term statistics, on both backends: link and tag
//! suggestions, extractive summaries, insights and the graph. Trashed pages take part in
//! none of it; another workspace's pages are invisible.

use std::time::Duration;

use crate::common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn field(v: &Value, list: &str, key: &str) -> Vec<String> {
    v[list]
        .as_array()
        .unwrap_or_else(|| panic!("{list} in {v}"))
        .iter()
        .map(|i| i[key].as_str().unwrap().to_owned())
        .collect()
}

async fn ok(api: &Api, path: &str) -> Value {
    let (status, body) = api.get(path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    assert_eq!(body["mode"], "tfidf", "{path}: {body}");
    body
}

/// A small wiki about operations, and one page in the trash.
async fn ops_wiki(api: &Api) {
    api.page(
        "kubernetes",
        "# Kubernetes\n\nKubernetes schedules containers onto nodes. Pods restart when probes fail. #ops #containers\n",
    )
    .await;
    api.page(
        "deploys",
        "# Deploys\n\nWe deploy containers to Kubernetes with rolling updates. Pods are replaced one node at a time; \
         see the [[on-call]] rota when a rollout fails. #ops\n",
    )
    .await;
    api.page("on-call", "# On-call\n\nThe on-call engineer answers pages. Escalate after thirty minutes. #ops\n").await;
    api.page("lunch", "# Lunch\n\nThe canteen serves soup on Fridays. [[menu]] is not written yet.\n").await;
    api.page("old-pods", "# Old pods\n\nContainers pods nodes kubernetes probes restart.\n").await;
    assert_eq!(api.delete("/api/pages/old-pods").await.0, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn link_suggestions_are_similar_or_mentioned_pages_not_yet_linked() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("links@x.io").await;
    ops_wiki(&api).await;

    let r = ok(&api, "/api/pages/deploys/suggest-links").await;
    let slugs = field(&r, "items", "slug");
    // Kubernetes: mentioned by title and similar; on-call is already linked; the trashed
    // page never appears, nor the page itself.
    assert_eq!(slugs.first().map(String::as_str), Some("kubernetes"), "{r}");
    assert!(!slugs.iter().any(|s| s == "on-call" || s == "old-pods" || s == "deploys"), "{r}");
    let reason = r["items"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("mentions \"Kubernetes\"") && reason.contains("similar content"), "{reason}");
    let scores: Vec<f64> = r["items"].as_array().unwrap().iter().map(|i| i["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    // Once linked, it is no longer suggested.
    let (_, page) = api.get("/api/pages/deploys").await;
    let content = page["content"].as_str().unwrap().replace("to Kubernetes", "to [[kubernetes]]");
    assert_eq!(api.put("/api/pages/deploys", json!({"content": content})).await.0, StatusCode::OK);
    let r = ok(&api, "/api/pages/deploys/suggest-links").await;
    assert!(!field(&r, "items", "slug").contains(&"kubernetes".to_owned()), "{r}");

    // A page about nothing else in the wiki gets nothing.
    api.page("poem", "# Poem\n\nZephyr quietly.\n").await;
    assert_eq!(ok(&api, "/api/pages/poem/suggest-links").await["items"], json!([]));
    // Missing page, another workspace's page: 404.
    assert_eq!(api.get("/api/pages/nope/suggest-links").await.0, StatusCode::NOT_FOUND);
    let other = srv.user("other@x.io").await;
    assert_eq!(other.get("/api/pages/deploys/suggest-links").await.0, StatusCode::NOT_FOUND);
    assert_eq!(srv.anon().get("/api/pages/deploys/suggest-links").await.0, StatusCode::UNAUTHORIZED);
    srv.stop().await;
}

#[tokio::test]
async fn tag_suggestions_come_from_similar_pages_then_telling_words_never_the_pages_own() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("tags@x.io").await;
    ops_wiki(&api).await;
    api.page("pods", "# Pods\n\nPods run containers on Kubernetes nodes; probes restart them. #ops\n").await;

    let r = ok(&api, "/api/pages/pods/suggest-tags").await;
    let tags = field(&r, "items", "tag");
    // The similar Kubernetes page's other tag comes first; `ops` is the page's own.
    assert_eq!(tags.first().map(String::as_str), Some("containers"), "{r}");
    assert!(!tags.contains(&"ops".to_owned()), "{r}");
    assert!(r["items"][0]["score"].as_f64().unwrap() > 0.5, "{r}");
    // Then salient words of the page itself, scored lower.
    assert!(tags.iter().any(|t| t == "probes" || t == "pods"), "{r}");
    let scores: Vec<f64> = r["items"].as_array().unwrap().iter().map(|i| i["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    srv.stop().await;
}

#[tokio::test]
async fn summaries_are_verbatim_prose_sentences_in_page_order() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("sum@x.io").await;
    let content = "---\ntitle: Backups\nsecret: front matter never shows\n---\n# Backups\n\n\
        Backups run every night at two. The database is dumped first, the files second. \
        It is fine.\n\n```sh\necho code is never summarised.\n```\n\n\
        | table | cells |\n|---|---|\n| are never | summarised. |\n\n\
        Restores are tested monthly on a spare machine. We like coffee.\n";
    api.page("backups", content).await;
    api.page("other", "# Other\n\nCoffee is fine. We like it.\n").await;

    let r = ok(&api, "/api/pages/backups/summary").await;
    let sentences: Vec<String> =
        r["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_owned()).collect();
    assert_eq!(sentences.len(), 3, "{r}");
    for s in &sentences {
        assert!(content.contains(s.as_str()), "not verbatim: {s}");
        assert!(!s.contains("front matter") && !s.contains("echo") && !s.contains("cells"), "{s}");
    }
    let positions: Vec<usize> = sentences.iter().map(|s| content.find(s.as_str()).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "page order: {sentences:?}");
    assert_eq!(r["summary"], sentences.join(" "));
    assert!(!sentences.contains(&"It is fine.".to_owned()), "{r}");

    let r = ok(&api, "/api/pages/backups/summary?sentences=1").await;
    assert_eq!(r["sentences"].as_array().unwrap().len(), 1);
    let all = ok(&api, "/api/pages/backups/summary?sentences=50").await;
    assert_eq!(all["sentences"].as_array().unwrap().len(), 5, "{all}");
    for bad in ["0", "51", "-1", "three"] {
        let (status, body) = api.get(&format!("/api/pages/backups/summary?sentences={bad}")).await;
        assert!(
            status == StatusCode::BAD_REQUEST || status == StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {status} {body}"
        );
    }
    // A page without prose has an empty summary, not an error.
    api.page("code", "# Code\n\n```\nonly code\n```\n").await;
    let r = ok(&api, "/api/pages/code/summary").await;
    assert_eq!(r["sentences"], json!([]));
    assert_eq!(r["summary"], "");
    srv.stop().await;
}

#[tokio::test]
async fn insights_and_graph_see_live_pages_only() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("graph@x.io").await;
    ops_wiki(&api).await;
    api.page("index", "# Index\n\n[[deploys]] [[kubernetes]] [[on-call]] [[old-pods]]\n").await;

    let g = ok(&api, "/api/graph").await;
    let nodes = field(&g, "nodes", "id");
    assert_eq!(nodes, ["deploys", "index", "kubernetes", "lunch", "on-call"], "{g}");
    let edges: Vec<(String, String)> = g["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["source"].as_str().unwrap().to_owned(), e["target"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(edges.len(), 4, "{g}");
    assert!(
        edges.contains(&("deploys".into(), "on-call".into())) && edges.contains(&("index".into(), "kubernetes".into()))
    );
    // Links to a trashed page and to a page never written are broken.
    let broken: Vec<String> =
        g["broken"].as_array().unwrap().iter().map(|e| e["target"].as_str().unwrap().to_owned()).collect();
    assert_eq!(broken.len(), 2, "{g}");
    assert!(broken.contains(&"menu".to_owned()) && broken.contains(&"old-pods".to_owned()), "{g}");
    let on_call = g["nodes"].as_array().unwrap().iter().find(|n| n["id"] == "on-call").unwrap();
    assert_eq!(on_call["degree"], 2);
    assert_eq!(on_call["tags"], json!(["ops"]));

    let i = ok(&api, "/api/insights").await;
    assert_eq!(i["pages"], 5, "{i}");
    assert!(i["words"].as_u64().unwrap() > 40, "{i}");
    // Orphans: nothing links to index or lunch.
    assert_eq!(field(&i, "orphans", "slug"), ["index", "lunch"], "{i}");
    assert_eq!(field(&i, "broken_links", "target").len(), 2, "{i}");
    assert_eq!(i["most_linked"][0]["slug"], "on-call", "{i}");
    assert_eq!(i["most_linked"][0]["count"], 2, "{i}");
    assert_eq!(i["tags"][0], json!({"tag": "ops", "count": 3}), "{i}");
    assert_eq!(i["stale"], json!([]));
    // The operations pages form a topic; lunch is alone (a cluster has two pages or
    // more) and the trashed page is in none.
    assert_eq!(i["clusters"].as_array().unwrap().len(), 1, "{i}");
    let mut topic: Vec<String> =
        i["clusters"][0]["pages"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_owned()).collect();
    topic.sort();
    assert_eq!(topic, ["deploys", "index", "kubernetes", "on-call"], "{i}");

    // Half a year later every page is stale, oldest first. (Sessions end after 7 days;
    // a personal access token lasts.)
    let (_, token) = api.post("/api/tokens", json!({"name": "later"})).await;
    let later = api.with_bearer(token["token"].as_str().unwrap());
    srv.ctx.clock.advance(Duration::from_secs(181 * 24 * 3600));
    let i = ok(&later, "/api/insights").await;
    assert_eq!(field(&i, "stale", "slug").len(), 5, "{i}");
    assert_eq!(i["stale"][0]["slug"], "kubernetes", "{i}");

    // Another workspace's insights and graph say nothing of these pages; outsiders get 404.
    let other = srv.user("graph-other@x.io").await;
    let g = ok(&other, "/api/graph").await;
    assert_eq!(g["nodes"], json!([]));
    let (_, mine) = later.get("/api/workspaces").await;
    let ws = mine["items"][0]["slug"].as_str().unwrap().to_owned();
    assert_eq!(other.get(&format!("/api/insights?ws={ws}")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(other.get(&format!("/api/graph?ws={ws}")).await.0, StatusCode::NOT_FOUND);
    assert_eq!(ok(&later, &format!("/api/graph?ws={ws}")).await["nodes"].as_array().unwrap().len(), 5);
    srv.stop().await;
}

/// Every insight list says how long it is and pages through all of it; an orphan says
/// its parent (a subpage is reached from its parent even when no page links to it).
#[tokio::test]
async fn insight_lists_answer_totals_and_page_through_every_item() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("many@x.io").await;
    api.page("home", "# Home\n\n[[linked]] [[missing-1]]\n").await;
    api.page("linked", "# Linked\n").await;
    for n in 1..=36 {
        let (s, _) = api.post("/api/pages", json!({"slug": format!("note-{n:02}"), "parent": "home"})).await;
        assert_eq!(s, StatusCode::CREATED);
    }
    let i = ok(&api, "/api/insights").await;
    // home and the 36 notes: nothing links to them.
    assert_eq!(i["totals"], json!({"orphans": 37, "broken_links": 1, "most_linked": 1, "stale": 0}), "{i}");
    assert_eq!(i["orphans"].as_array().unwrap().len(), 20);
    assert_eq!(i["orphans"][0], json!({"slug": "home", "title": "Home", "parent": null}));
    assert_eq!(i["orphans"][1]["parent"], "home");

    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let (s, page) = api.get(&format!("/api/insights/orphans?limit=15&offset={offset}")).await;
        assert_eq!(s, StatusCode::OK, "{page}");
        assert_eq!(page["total"], 37);
        let items = field(&page, "items", "slug");
        if items.is_empty() {
            break;
        }
        seen.extend(items);
        offset += 15;
    }
    assert_eq!(seen.len(), 37);
    assert_eq!(seen[..20], field(&i, "orphans", "slug")[..], "the same order as the first 20");
    let (_, broken) = api.get("/api/insights/broken-links").await;
    assert_eq!(broken, json!({"items": [{"source": "home", "target": "missing-1"}], "total": 1}));
    let (_, linked) = api.get("/api/insights/most-linked").await;
    assert_eq!((linked["total"].as_i64(), linked["items"][0]["slug"].as_str()), (Some(1), Some("linked")));
    assert_eq!(api.get("/api/insights/stale").await.1, json!({"items": [], "total": 0}));
    let (s, bad) = api.get("/api/insights/orphans?limit=0").await;
    assert_eq!((s, bad["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_paging")));
    let other = srv.user("other-many@x.io").await;
    let ws = api.get("/api/me").await.1["default_workspace"].as_str().unwrap().to_owned();
    assert_eq!(other.get(&format!("/api/insights/orphans?ws={ws}")).await.0, StatusCode::NOT_FOUND);
    srv.stop().await;
}

/// Without the embedding model, a suggestion needs evidence: a deploy page is not offered
/// links to sprint retrospectives that merely mention a deploy in passing, nor their
/// `#retro` tag — while the page it really resembles still is.
#[tokio::test]
async fn suggestions_without_evidence_are_not_shown() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("floor@x.io").await;
    for n in 1..=8 {
        let content = format!(
            "# Sprint {n} Retro\n\nWhat went well: the team shipped the search filters and the new onboarding \
             flow. What went badly: estimates slipped, and the deploy script failed once, so we rolled back the \
             release. Action items: smaller stories, pair on reviews, demo on Thursday. #retro\n"
        );
        api.page(&format!("sprint-{n}-retro"), &content).await;
    }
    api.page(
        "release-checklist",
        "# Release checklist\n\nBuild the release artifact, run the database migrations on staging, roll out \
         to production with the deploy script, watch error rates and latency dashboards, roll back on alerts. #ops\n",
    )
    .await;
    api.page(
        "deploy",
        "# Deploy\n\nTo deploy, build the release artifact, run the migrations, then roll out with the deploy \
         script and watch the dashboards for errors; roll back when alerts fire.\n",
    )
    .await;
    let links = ok(&api, "/api/pages/deploy/suggest-links").await;
    let slugs = field(&links, "items", "slug");
    assert_eq!(slugs, ["release-checklist"], "{links}");
    let tags = field(&ok(&api, "/api/pages/deploy/suggest-tags").await, "items", "tag");
    assert!(!tags.contains(&"retro".to_owned()), "{tags:?}");
    assert_eq!(tags.first().map(String::as_str), Some("ops"), "{tags:?}");
    srv.stop().await;
}
