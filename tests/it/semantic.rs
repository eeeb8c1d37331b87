//! Embedding-backed search and suggestions with the real all-MiniLM-L6-v2 model
//! (`CAIRN_TEST_MODEL_DIR`, installed by `scripts/get-model`; `scripts/test` sets it),
//! on both backends: vectors that match the model's own library, lazy loading, the
//! durable queue, passages of long pages, restarts, fallbacks and reranking.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::process::Proc;
use crate::common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn model_dir() -> PathBuf {
    let dir = std::env::var("CAIRN_TEST_MODEL_DIR").expect(
        "CAIRN_TEST_MODEL_DIR must name the all-MiniLM-L6-v2 directory: run `./scripts/get-model DIR` \
         and set it (scripts/test does both)",
    );
    let dir = PathBuf::from(dir);
    assert!(dir.join("model.safetensors").is_file(), "no model in {}", dir.display());
    dir
}

fn enc(s: &str) -> String {
    serde_urlencoded::to_string([("x", s)]).unwrap()[2..].to_owned()
}

async fn search(api: &Api, mode: &str, q: &str) -> Value {
    let r = api.send(Method::GET, &format!("/api/search?q={}&mode={mode}", enc(q)), None).await;
    assert_eq!(r.status, StatusCode::OK, "{q}: {}", r.text);
    r.json()
}

fn slugs(v: &Value) -> Vec<String> {
    v["items"].as_array().unwrap().iter().map(|i| i["slug"].as_str().unwrap().to_owned()).collect()
}

async fn system(api: &Api) -> Value {
    let (status, body) = api.get("/api/system").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Waits (bounded) until no page waits to be embedded.
async fn embedded(api: &Api) {
    let until = Instant::now() + Duration::from_secs(180);
    loop {
        let s = system(api).await;
        if s["embedding_queue"] == 0 {
            return;
        }
        assert!(Instant::now() < until, "embedding queue not drained: {s}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

/// Reference vectors made once with sentence-transformers itself
/// (`scripts/reference-embeddings.py`): ours must match them.
#[test]
fn embeddings_match_the_models_own_library() {
    let fixture: Value =
        serde_json::from_str(include_str!("../fixtures/minilm-reference.json")).expect("fixture parses");
    let encoder = cairn::testing::ml::Encoder::load(&model_dir()).expect("model loads");
    assert_eq!(encoder.dim(), 384);
    let sentences: Vec<&str> = fixture["sentences"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    let ours = encoder.embed(&sentences).unwrap();
    for (i, reference) in fixture["vectors"].as_array().unwrap().iter().enumerate() {
        let reference: Vec<f32> = reference.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        let c = cosine(&ours[i], &reference);
        assert!(c >= 0.999, "sentence {i} ({:.40}…): cosine {c}", sentences[i]);
        let norm: f32 = ours[i].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "unit length: {norm}");
    }
    // One at a time gives the same vectors as a padded batch.
    let alone = encoder.embed(&sentences[..1]).unwrap();
    assert!(cosine(&alone[0], &ours[0]) > 0.9999);
}

const CARS: &str = "# Automobiles\n\nA car needs fuel, tyres and an engine check every year. \
    Change the oil before a long drive.\n";
const DOGS: &str = "# Dogs\n\nPuppies need walks twice a day and a bowl of water. Train them with treats.\n";
const BREAD: &str = "# Bread\n\nKnead flour, water, salt and yeast; let the dough rise, then bake it hot.\n";

/// As a user runs it: `SEMANTIC_SEARCH=1` and `EMBEDDING_MODEL_DIR` in the environment of
/// the real binary. The model loads on first use, never at start-up; vectors persist.
#[tokio::test]
async fn semantic_search_with_the_model_loads_lazily_and_survives_a_restart() {
    let env = Env::new().await;
    let model = model_dir();
    let vars = [("SEMANTIC_SEARCH", "1"), ("EMBEDDING_MODEL_DIR", model.to_str().unwrap())];
    let p = Proc::start(env.dir.path(), &env.db_url, &vars);
    let mut api =
        Api { base: p.url(), client: reqwest::Client::builder().cookie_store(true).build().unwrap(), bearer: None };
    let (status, _) =
        api.post("/api/auth/register", json!({"email": "m@x.io", "password": PASSWORD, "name": "M"})).await;
    assert_eq!(status, StatusCode::CREATED);
    let s = system(&api).await;
    assert_eq!(s["semantic_search"], true, "{s}");
    assert_eq!(s["embedding_model_loaded"], false, "not loaded at start-up: {s}");
    assert_eq!(s["notes"], json!([]), "{s}");

    api.page("cars", CARS).await;
    api.page("dogs", DOGS).await;
    api.page("bread", BREAD).await;
    embedded(&api).await;
    assert_eq!(system(&api).await["embedding_model_loaded"], true);

    // Meaning without shared words: none of these query words is on the page.
    let r = search(&api, "semantic", "vehicle maintenance").await;
    assert_eq!(r["engine"], "embedding", "{r}");
    assert_eq!(slugs(&r)[0], "cars", "{r}");
    assert_eq!(slugs(&search(&api, "semantic", "caring for a young pet").await)[0], "dogs");
    assert_eq!(slugs(&search(&api, "semantic", "baking at home").await)[0], "bread");
    let r = search(&api, "hybrid", "vehicle maintenance").await;
    assert_eq!(r["engine"], "fulltext+embedding", "{r}");
    assert_eq!(slugs(&r)[0], "cars", "{r}");
    let r = api.get("/api/pages/cars/suggest-links").await.1;
    assert_eq!(r["mode"], "embedding", "{r}");

    // A trashed page leaves at once; an edited page is found by its new meaning.
    assert_eq!(api.delete("/api/pages/dogs").await.0, StatusCode::NO_CONTENT);
    assert!(!slugs(&search(&api, "semantic", "caring for a young pet").await).contains(&"dogs".to_owned()));
    api.put(
        "/api/pages/bread",
        json!({"content": "# Bread\n\nThe train to the city leaves at nine from platform two.\n"}),
    )
    .await;
    embedded(&api).await;
    assert_eq!(slugs(&search(&api, "semantic", "railway timetable").await)[0], "bread");

    // Restart: the vectors are rows, so nothing is embedded again and the model is not
    // loaded until a query needs it.
    assert_eq!(p.terminate(), 0);
    let p = Proc::start(env.dir.path(), &env.db_url, &vars);
    api.base = p.url();
    let s = system(&api).await;
    assert_eq!((s["embedding_queue"].clone(), s["embedding_model_loaded"].clone()), (json!(0), json!(false)), "{s}");
    let r = search(&api, "semantic", "vehicle maintenance").await;
    assert_eq!((r["engine"].as_str(), slugs(&r)[0].as_str()), (Some("embedding"), "cars"), "{r}");
    assert_eq!(p.terminate(), 0);
}

/// Long pages are cut into passages, so what a page says at its end is found.
#[tokio::test]
async fn long_pages_are_covered_passage_by_passage() {
    let env = Env::new().await;
    let model = model_dir();
    let flags = ["--semantic-search=1", "--embedding-model-dir", model.to_str().unwrap()];
    let srv = env.start(&flags).await;
    let api = srv.user("long@x.io").await;
    let filler: String =
        (0..120).map(|i| format!("Clause {i} of the agreement concerns invoices and payment terms. ")).collect();
    api.page(
        "contract",
        &format!("# Contract\n\n{filler}\n\nFinally, the penguins at the zoo are fed fish every morning.\n"),
    )
    .await;
    api.page("zoo", "# Opening hours\n\nThe park opens at nine.\n").await;
    embedded(&api).await;
    let chunks: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM page_vectors v JOIN pages p ON p.id = v.page_id WHERE p.slug = 'contract'",
    )
    .fetch_one(&srv.ctx.db.pool)
    .await
    .unwrap();
    assert!(chunks >= 5, "{chunks} passages");
    let r = search(&api, "semantic", "feeding penguins").await;
    assert_eq!(slugs(&r)[0], "contract", "{r}");

    // RERANK=1 without a cross-encoder: the hybrid head is reranked by passages.
    srv.stop().await;
    let flags = [&flags[..], &["--rerank=1", "--rerank-model-dir", "/nonexistent"]].concat();
    let srv = env.start(&flags).await;
    let api = Api { base: srv.url.clone(), client: api.client.clone(), bearer: None };
    let s = system(&api).await;
    assert_eq!((s["rerank"].clone(), s["rerank_engine"].clone()), (json!(true), json!("passage")), "{s}");
    assert!(s["notes"].to_string().contains("RERANK=1"), "{s}");
    let r = search(&api, "hybrid", "penguins fed fish").await;
    assert_eq!(r["engine"], "fulltext+embedding+rerank", "{r}");
    assert_eq!(slugs(&r)[0], "contract", "{r}");
    srv.stop().await;
}

/// Twenty pages saved while semantic search is off: they wait in the queue.
async fn queue_twenty_pages(env: &Env) {
    let srv = env.start(&[]).await;
    let api = srv.user("passes@x.io").await;
    for i in 0..20 {
        api.page(&format!("p{i}"), &format!("# Page {i}\n\nNotes about topic number {i}.\n")).await;
    }
    srv.stop().await;
}

/// Runs a pass on each context at once; checks that they served the twenty pages
/// between them and that each page was embedded.
async fn two_passes_serve_each_page_once(one: &Server, two: &Server) {
    let (a, b) = tokio::join!(
        cairn::testing::semantic::embed_pending(&one.ctx, 16),
        cairn::testing::semantic::embed_pending(&two.ctx, 16)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a + b, 20, "{a} + {b} pages served");
    let (queued, embedded): (i64, i64) =
        sqlx::query_as("SELECT (SELECT COUNT(*) FROM embed_queue), (SELECT COUNT(DISTINCT page_id) FROM page_vectors)")
            .fetch_one(&one.ctx.db.pool)
            .await
            .unwrap();
    assert_eq!((queued, embedded), (0, 20));
}

/// Two embedding passes at once (the worker and another caller) share the queue: each
/// queued page is embedded by one of them, once.
#[tokio::test]
async fn concurrent_embedding_passes_take_each_queued_page_once() {
    let env = Env::new().await;
    queue_twenty_pages(&env).await;
    // Nothing saved or searched after this start, so the worker has not woken yet.
    let model = model_dir();
    let srv = env.start(&["--semantic-search=1", "--embedding-model-dir", model.to_str().unwrap()]).await;
    two_passes_serve_each_page_once(&srv, &srv).await;
    srv.stop().await;
}

/// Two processes sharing the database (two servers, each with its own embedding pass)
/// take different pages: each queued page is embedded once.
#[tokio::test]
async fn embedding_passes_of_two_processes_take_each_queued_page_once() {
    let env = Env::new().await;
    queue_twenty_pages(&env).await;
    let model = model_dir();
    let args = ["--semantic-search=1", "--embedding-model-dir", model.to_str().unwrap()];
    let (one, two) = (env.start(&args).await, env.start(&args).await);
    two_passes_serve_each_page_once(&one, &two).await;
    one.stop().await;
    two.stop().await;
}

/// A saved page's claim is cleared, so its new version need not wait for the lease of
/// a pass that read the old one.
#[tokio::test]
async fn a_save_clears_its_pages_embedding_claim() {
    let env = Env::new().await;
    let srv = env.start(&[]).await;
    let api = srv.user("claim@x.io").await;
    api.page("claimed", "# Claimed\n\nFirst words.\n").await;
    sqlx::query("UPDATE embed_queue SET locked_until = '9999-12-31T00:00:00.000000Z'")
        .execute(&srv.ctx.db.pool)
        .await
        .unwrap();
    let (status, body) = api.put("/api/pages/claimed", json!({"content": "# Claimed\n\nSecond words.\n"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let locked: Option<String> =
        sqlx::query_scalar("SELECT locked_until FROM embed_queue").fetch_one(&srv.ctx.db.pool).await.unwrap();
    assert_eq!(locked, None);
    srv.stop().await;
}

/// A model directory that is missing, broken, or fails to load: reported, logged, and
/// every feature carries on with TF-IDF.
#[tokio::test]
async fn an_unusable_model_falls_back_to_term_statistics() {
    let env = Env::new().await;
    let broken = env.dir.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::copy(model_dir().join("config.json"), broken.join("config.json")).unwrap();
    std::fs::copy(model_dir().join("tokenizer.json"), broken.join("tokenizer.json")).unwrap();
    std::fs::write(broken.join("model.safetensors"), b"not weights").unwrap();
    // Passes the start-up check (a valid safetensors header) but holds no BERT weights.
    let wrong = env.dir.path().join("wrong");
    std::fs::create_dir_all(&wrong).unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(model_dir().join(f), wrong.join(f)).unwrap();
    }
    let t = candle_core::Tensor::zeros((2, 2), candle_core::DType::F32, &candle_core::Device::Cpu).unwrap();
    candle_core::safetensors::save(
        &[("unrelated".to_owned(), t)].into_iter().collect(),
        wrong.join("model.safetensors"),
    )
    .unwrap();

    for (dir, loads_later) in
        [(Path::new("/nonexistent/model"), false), (broken.as_path(), false), (wrong.as_path(), true)]
    {
        let srv = env.start(&["--semantic-search=1", "--embedding-model-dir", dir.to_str().unwrap()]).await;
        let api = srv.user(&format!("u{}@x.io", dir.to_str().unwrap().len())).await;
        api.page("incidents", "# Incident response\n\nPage the on-call engineer when production breaks.\n").await;
        if !loads_later {
            // Known at once: the start-up check failed.
            assert_eq!(system(&api).await["semantic_search"], false, "{dir:?}");
        }
        let r = search(&api, "semantic", "incident engineer").await;
        assert_eq!(r["engine"], "tfidf", "{dir:?}: {r}");
        assert_eq!(slugs(&r), ["incidents"]);
        assert_eq!(search(&api, "hybrid", "incident").await["engine"], "fulltext+tfidf");
        assert_eq!(api.get("/api/pages/incidents/suggest-links").await.1["mode"], "tfidf");
        let s = system(&api).await;
        assert_eq!(s["semantic_search"], false, "{dir:?}: {s}");
        assert!(s["notes"].to_string().contains("SEMANTIC_SEARCH=1"), "{s}");
        srv.stop().await;
    }
    // The reason is in the log of the real binary, for a directory that fails the
    // start-up check and for one that fails to load.
    for (dir, expected) in [(broken.as_path(), "model unusable"), (wrong.as_path(), "model failed to load")] {
        let run = tempfile::tempdir().unwrap();
        let vars = [("SEMANTIC_SEARCH", "1"), ("EMBEDDING_MODEL_DIR", dir.to_str().unwrap())];
        let p = Proc::start(run.path(), &format!("sqlite://{}/cairn.db", run.path().display()), &vars);
        let api =
            Api { base: p.url(), client: reqwest::Client::builder().cookie_store(true).build().unwrap(), bearer: None };
        api.post("/api/auth/register", json!({"email": "log@x.io", "password": PASSWORD, "name": "L"})).await;
        api.page("p", "# P\n\nwords\n").await;
        assert_eq!(search(&api, "semantic", "words").await["engine"], "tfidf");
        assert_eq!(p.terminate(), 0);
        let logs = std::fs::read_dir(run.path().join("logs")).unwrap();
        let text: String = logs.map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default()).collect();
        assert!(text.contains(expected), "{expected:?} not logged for {dir:?}:\n{text}");
    }
}

/// Right after an import the model has not embedded every page yet: semantic search still
/// finds those pages (by their TF-IDF vectors, fused by rank with the embedded ones) and
/// says how many wait.
#[tokio::test]
async fn pages_waiting_for_their_embedding_are_found_meanwhile() {
    use std::sync::atomic::Ordering;
    let env = Env::new().await;
    let model = model_dir();
    let srv = env.start(&["--semantic-search=1", "--embedding-model-dir", model.to_str().unwrap()]).await;
    let api = srv.user("pending@x.io").await;
    api.page("dogs", DOGS).await;
    api.page("bread", BREAD).await;
    embedded(&api).await;
    srv.ctx.test_hooks.hold_embedding.store(true, Ordering::SeqCst);
    api.page("cars", CARS).await;
    let r = search(&api, "semantic", "engine fuel tyres").await;
    assert_eq!((r["engine"].as_str(), r["pending_embeddings"].as_u64()), (Some("embedding"), Some(1)), "{r}");
    assert_eq!(slugs(&r).first().map(String::as_str), Some("cars"), "{r}");
    let hybrid = search(&api, "hybrid", "engine fuel tyres").await;
    assert_eq!(hybrid["pending_embeddings"], 1, "{hybrid}");
    assert_eq!(slugs(&hybrid).first().map(String::as_str), Some("cars"), "{hybrid}");

    srv.ctx.test_hooks.hold_embedding.store(false, Ordering::SeqCst);
    srv.ctx.models.wake();
    embedded(&api).await;
    let r = search(&api, "semantic", "engine fuel tyres").await;
    assert_eq!((r["engine"].as_str(), r["pending_embeddings"].as_u64()), (Some("embedding"), Some(0)), "{r}");
    assert_eq!(slugs(&r).first().map(String::as_str), Some("cars"), "{r}");
    // Without the model nothing is pending: the field is absent.
    assert!(search(&api, "keyword", "engine").await.get("pending_embeddings").is_none());
    srv.stop().await;
}
