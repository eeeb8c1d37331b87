//! The cross-encoder reranker (`RERANK=1`, `RERANK_MODEL_DIR`). No package ships a
//! cross-encoder's weights, so the test writes a tiny, randomly initialised BERT for
//! sequence classification in the sentence-transformers layout — config, WordPiece
//! tokenizer, safetensors — and checks that Cairn loads it and reranks the head of a
//! hybrid list by exactly the scores the model gives.

use std::collections::HashMap;
use std::path::Path;

use crate::common::*;
use candle_core::{DType, Device, Tensor};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const WORDS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "report", "notes", "budget", "plan", "team", "meeting", "monday", "the", "a",
    "of", "and", "for", "is", "on", "about",
];

/// Writes a 2-layer BERT cross-encoder with hidden size 32 and random weights into `dir`.
fn tiny_cross_encoder(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut vocab: Vec<&str> = vec!["[PAD]", "[UNK]", "[CLS]", "[SEP]"];
    vocab.extend(WORDS);
    vocab.extend(["\\n", ".", ",", "#"]);
    let (h, layers, inter, positions) = (32usize, 2usize, 64usize, 128usize);
    let config = json!({
        "architectures": ["BertForSequenceClassification"], "model_type": "bert",
        "vocab_size": vocab.len(), "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": 2,
        "intermediate_size": inter, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1, "max_position_embeddings": positions, "type_vocab_size": 2,
        "initializer_range": 0.02, "layer_norm_eps": 1e-12, "pad_token_id": 0, "num_labels": 1,
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let ids: serde_json::Map<String, Value> =
        vocab.iter().enumerate().map(|(i, w)| (w.to_string(), json!(i))).collect();
    let tokenizer = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "decoder": null,
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": ids},
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();

    let dev = Device::Cpu;
    let mut t: HashMap<String, Tensor> = HashMap::new();
    let mut put = |name: &str, shape: &[usize]| {
        let v = Tensor::randn(0f32, 0.5, shape, &dev).unwrap();
        t.insert(name.to_owned(), v);
    };
    put("bert.embeddings.word_embeddings.weight", &[vocab.len(), h]);
    put("bert.embeddings.position_embeddings.weight", &[positions, h]);
    put("bert.embeddings.token_type_embeddings.weight", &[2, h]);
    for i in 0..layers {
        let l = format!("bert.encoder.layer.{i}");
        for m in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"] {
            put(&format!("{l}.{m}.weight"), &[h, h]);
            put(&format!("{l}.{m}.bias"), &[h]);
        }
        put(&format!("{l}.intermediate.dense.weight"), &[inter, h]);
        put(&format!("{l}.intermediate.dense.bias"), &[inter]);
        put(&format!("{l}.output.dense.weight"), &[h, inter]);
        put(&format!("{l}.output.dense.bias"), &[h]);
    }
    put("bert.pooler.dense.weight", &[h, h]);
    put("bert.pooler.dense.bias", &[h]);
    put("classifier.weight", &[1, h]);
    put("classifier.bias", &[1]);
    let norms: Vec<String> = std::iter::once("bert.embeddings.LayerNorm".to_owned())
        .chain((0..layers).flat_map(|i| {
            [
                format!("bert.encoder.layer.{i}.attention.output.LayerNorm"),
                format!("bert.encoder.layer.{i}.output.LayerNorm"),
            ]
        }))
        .collect();
    for n in norms {
        t.insert(format!("{n}.weight"), Tensor::ones(h, DType::F32, &dev).unwrap());
        t.insert(format!("{n}.bias"), Tensor::zeros(h, DType::F32, &dev).unwrap());
    }
    candle_core::safetensors::save(&t, dir.join("model.safetensors")).unwrap();
}

#[test]
fn a_cross_encoder_loads_and_scores_pairs() {
    let dir = tempfile::tempdir().unwrap();
    tiny_cross_encoder(dir.path());
    let model = cairn::testing::ml::CrossEncoder::load(dir.path()).expect("loads");
    let passages = ["alpha beta report", "team meeting on monday", "budget plan"];
    let scores = model.score("alpha report", &passages).unwrap();
    assert_eq!(scores.len(), 3);
    assert!(scores.iter().all(|s| s.is_finite()), "{scores:?}");
    assert!(scores[0] != scores[1] && scores[1] != scores[2], "{scores:?}");
    // Deterministic, and batch-independent: one pair alone scores as in the batch.
    assert_eq!(model.score("alpha report", &passages).unwrap(), scores);
    let alone = model.score("alpha report", &passages[1..2]).unwrap()[0];
    assert!((alone - scores[1]).abs() < 1e-4, "{alone} vs {}", scores[1]);
    // The query is read with the passage: another query, other scores.
    assert_ne!(model.score("budget", &passages).unwrap(), scores);
    // A directory without weights does not load.
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    assert!(cairn::testing::ml::CrossEncoder::load(dir.path()).is_err());
}

#[tokio::test]
async fn hybrid_results_are_reranked_by_the_cross_encoder() {
    let env = Env::new().await;
    let model = env.dir.path().join("rerank");
    tiny_cross_encoder(&model);
    let srv = env.start(&["--rerank=1", "--rerank-model-dir", model.to_str().unwrap()]).await;
    let api = srv.user("rr@x.io").await;
    let pages = [
        ("one", "Alpha", "alpha beta report"),
        ("two", "Notes", "alpha notes about the budget"),
        ("three", "Team", "team meeting on monday about alpha"),
        ("four", "Plan", "the plan for alpha and delta"),
        ("five", "Gamma", "gamma report of the team"),
    ];
    for (slug, title, body) in pages {
        api.page(slug, &format!("# {title}\n\n{body}\n")).await;
    }
    let (_, s) = api.get("/api/system").await;
    assert_eq!((s["rerank"].clone(), s["rerank_engine"].clone()), (json!(true), json!("cross-encoder")), "{s}");

    let r = api.send(Method::GET, "/api/search?q=alpha%20report&mode=hybrid", None).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = r.json();
    assert_eq!(r["engine"], "fulltext+tfidf+rerank", "{r}");
    let got: Vec<String> =
        r["items"].as_array().unwrap().iter().map(|i| i["slug"].as_str().unwrap().to_owned()).collect();
    assert_eq!(got.len(), 5, "{r}");
    // The order is the model's: score each page's passage (title and text) directly.
    let direct = cairn::testing::ml::CrossEncoder::load(&model).unwrap();
    let passages: Vec<String> = got
        .iter()
        .map(|slug| {
            let (_, title, body) = pages.iter().find(|p| p.0 == slug).unwrap();
            let text = cairn::testing::markdown::parse(&format!("# {title}\n\n{body}\n")).text;
            cairn::testing::semantic::passages(title, &text).remove(0)
        })
        .collect();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let scores = direct.score("alpha report", &refs).unwrap();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "not in model order: {got:?} {scores:?}");
    let answered: Vec<f64> = r["items"].as_array().unwrap().iter().map(|i| i["score"].as_f64().unwrap()).collect();
    assert!(answered.windows(2).all(|w| w[0] >= w[1]) && answered.iter().all(|s| *s > 1.0), "{answered:?}");
    srv.stop().await;
}
