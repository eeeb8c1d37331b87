//! Talking to the search API: request paths, answers, and waiting until the server has
//! embedded every page (with `SEMANTIC_SEARCH=1`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use cairn_bench::api::get_json;
use cairn_bench::numbers::round2;
use reqwest::Client;
use serde_json::{Value, json};

/// The modes asked for, in the order they are measured.
pub const MODES: [&str; 3] = ["keyword", "semantic", "hybrid"];

/// `GET /api/search` with `q` percent-encoded.
pub fn search_path(q: &str, mode: &str, limit: usize, ws: Option<&str>) -> String {
    let mut url = reqwest::Url::parse("http://localhost/api/search").expect("a valid URL");
    {
        let mut p = url.query_pairs_mut();
        p.append_pair("q", q).append_pair("mode", mode).append_pair("limit", &limit.to_string());
        if let Some(ws) = ws {
            p.append_pair("ws", ws);
        }
    }
    format!("/api/search?{}", url.query().unwrap_or_default())
}

/// What one search answered: which engine ran, and the pages, best first.
pub struct Answer {
    pub engine: String,
    pub slugs: Vec<String>,
}

impl Answer {
    pub fn parse(body: &str) -> Result<Answer> {
        Answer::from_json(&serde_json::from_str(body).context("search answer is not JSON")?)
    }

    pub fn from_json(v: &Value) -> Result<Answer> {
        let engine = v["engine"].as_str().unwrap_or("?").to_owned();
        let slugs = v["items"]
            .as_array()
            .context("search answer has no items")?
            .iter()
            .filter_map(|h| h["slug"].as_str().map(str::to_owned))
            .collect();
        Ok(Answer { engine, slugs })
    }
}

/// The engines a run's answers reported, as one label: `fulltext`, or `a / b` when
/// answers of one run disagree (a feature that degraded part way).
pub fn engine_label<'a>(engines: impl IntoIterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in engines {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    if seen.is_empty() { "(no answer)".to_owned() } else { seen.join(" / ") }
}

/// The server's environment for the embedding configurations: SEMANTIC_SEARCH=1 with
/// the model, and RERANK=1 (with its model when given) when `rerank`.
pub fn model_env(model_dir: &Path, rerank: bool, rerank_dir: Option<&Path>) -> Result<Vec<(String, String)>> {
    let abs = |p: &Path| -> Result<String> {
        Ok(std::fs::canonicalize(p).with_context(|| format!("model directory {}", p.display()))?.display().to_string())
    };
    let mut env =
        vec![("SEMANTIC_SEARCH".to_owned(), "1".to_owned()), ("EMBEDDING_MODEL_DIR".to_owned(), abs(model_dir)?)];
    if rerank {
        env.push(("RERANK".to_owned(), "1".to_owned()));
        if let Some(d) = rerank_dir {
            env.push(("RERANK_MODEL_DIR".to_owned(), abs(d)?));
        }
    }
    Ok(env)
}

pub enum Embedded {
    /// Every page is embedded.
    Done,
    /// The server says embedding search is not available (its `/api/system` notes).
    Unavailable(String),
    TimedOut,
}

pub struct EmbedWait {
    pub outcome: Embedded,
    /// From the start of the wait to the outcome.
    pub secs: f64,
    /// `embedding_queue` over time: (seconds since the start, pages waiting).
    pub samples: Vec<(f64, i64)>,
    /// False when `/api/system` has no `embedding_queue` and the wait watched the
    /// engine semantic answers report instead.
    pub by_queue: bool,
    /// The last `GET /api/system` answer (which engines resolved, the model's state).
    pub system: Value,
}

impl EmbedWait {
    /// Pages embedded per second while the queue drained: its first sample over the
    /// time it took to reach 0 (NaN when it was already empty, or never emptied).
    pub fn pages_per_sec(&self) -> f64 {
        match (&self.outcome, self.samples.first()) {
            (Embedded::Done, Some(&(t0, q0))) if q0 > 0 => q0 as f64 / (self.secs - t0),
            _ => f64::NAN,
        }
    }

    pub fn json(&self) -> Value {
        json!({
            "summary": self.describe(), "done": matches!(self.outcome, Embedded::Done), "by_queue": self.by_queue,
            "wait_secs": round2(self.secs), "pages_per_sec": round2(self.pages_per_sec()),
            "queue_samples": self.samples, "system": self.system,
        })
    }

    pub fn describe(&self) -> String {
        match &self.outcome {
            Embedded::Done if self.by_queue && self.samples.first().is_some_and(|s| s.1 == 0) => {
                "embedding queue already empty (every page embedded)".to_owned()
            }
            Embedded::Done if self.by_queue => format!(
                "embedding queue empty after {:.1} s (first seen at {} pages; {:.1} pages/s)",
                self.secs,
                self.samples.first().map_or(0, |s| s.1),
                self.pages_per_sec()
            ),
            Embedded::Done => format!(
                "semantic answers report engine `embedding` after {:.1} s (the server has no `embedding_queue`, \
                 so whether every page is embedded is unknown)",
                self.secs
            ),
            Embedded::Unavailable(why) => format!("embedding search is not available: {why}"),
            Embedded::TimedOut => format!(
                "gave up after {:.0} s: {}",
                self.secs,
                match self.samples.last() {
                    Some((_, q)) => format!("{q} pages still waiting to be embedded"),
                    None => "semantic answers never reported engine `embedding`".to_owned(),
                }
            ),
        }
    }
}

/// Polls `GET /api/system` until its `embedding_queue` is 0. A server without that
/// field is instead asked `probe` (a semantic search) until it answers with engine
/// `embedding`. Gives up after `timeout`, or at once when the server reports that
/// embedding search did not resolve.
///
/// The server loads the model and starts embedding only when a save or a semantic
/// query wants it, so the wait starts with one `probe`, as a user's first semantic
/// search would (after a restart no save may come).
pub async fn wait_embedded(client: &Client, base: &str, probe: &str, timeout: Duration) -> Result<EmbedWait> {
    let start = Instant::now();
    let mut samples = Vec::new();
    let mut by_queue = true;
    get_json(client, base, probe).await.context("the semantic search that starts embedding")?;
    let mut sys;
    let outcome = loop {
        sys = get_json(client, base, "/api/system").await?;
        if sys["semantic_search"] == Value::Bool(false) {
            let notes: Vec<&str> = sys["notes"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            break Embedded::Unavailable(if notes.is_empty() {
                "semantic_search is false".into()
            } else {
                notes.join("; ")
            });
        }
        if let Some(q) = sys["embedding_queue"].as_i64() {
            samples.push((start.elapsed().as_secs_f64(), q));
            if q == 0 {
                break Embedded::Done;
            }
        } else {
            by_queue = false;
            let answer = Answer::from_json(&get_json(client, base, probe).await?)?;
            if answer.engine.contains("embedding") {
                break Embedded::Done;
            }
        }
        if start.elapsed() >= timeout {
            break Embedded::TimedOut;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    Ok(EmbedWait { outcome, secs: start.elapsed().as_secs_f64(), samples, by_queue, system: sys })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_labels() {
        assert_eq!(
            search_path("what is a \"thesaurus\"? & why", "hybrid", 10, Some("cisi")),
            "/api/search?q=what+is+a+%22thesaurus%22%3F+%26+why&mode=hybrid&limit=10&ws=cisi"
        );
        assert_eq!(engine_label(["tfidf", "tfidf"]), "tfidf");
        assert_eq!(engine_label(["embedding", "tfidf", "embedding"]), "embedding / tfidf");
        let a =
            Answer::parse(r#"{"engine":"fulltext","items":[{"slug":"cisi-3"},{"slug":"cisi-1"}],"total":2}"#).unwrap();
        assert_eq!((a.engine.as_str(), a.slugs.len()), ("fulltext", 2));
    }
}
