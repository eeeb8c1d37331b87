//! The local models, loaded lazily: never at start-up, but on
//! the first use that needs them — a semantic query, or pages waiting to be embedded
//! after a save. Start-up only *checks* a model directory (files present, config and
//! safetensors header readable), so `/api/system` can tell at once whether a model will
//! resolve; a model that then fails to load is reported the same way, with its reason
//! logged, and every feature carries on with TF-IDF.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;

use crate::config::Config;
use crate::ml::{self, CrossEncoder, Encoder};

/// One optional model: off, unusable (and why), or loaded on first use.
pub struct Lazy<T> {
    name: &'static str,
    dir: PathBuf,
    /// `None` when switched off; `Some(Err)` when the directory failed its check.
    checked: Option<Result<(), String>>,
    loaded: OnceCell<Option<Arc<T>>>,
    failure: Mutex<Option<String>>,
}

impl<T: Send + Sync + 'static> Lazy<T> {
    fn new(name: &'static str, enabled: bool, dir: &Path) -> Self {
        let checked = enabled.then(|| ml::check(dir).map_err(|e| e.to_string()));
        if let Some(Err(why)) = &checked {
            tracing::warn!(model = name, reason = %why, "model unusable; features fall back");
        }
        Lazy { name, dir: dir.to_owned(), checked, loaded: OnceCell::new(), failure: Mutex::new(None) }
    }

    /// Switched on, its directory checked out, and it did not fail to load.
    pub fn usable(&self) -> bool {
        matches!(self.checked, Some(Ok(()))) && self.failure.lock().expect("model failure").is_none()
    }

    /// Why a switched-on model is not usable (None when it is, or when it is off).
    pub fn problem(&self) -> Option<String> {
        match &self.checked {
            Some(Err(why)) => Some(why.clone()),
            Some(Ok(())) => self.failure.lock().expect("model failure").clone(),
            None => None,
        }
    }

    /// Whether the weights are in memory (without loading them).
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some_and(Option::is_some)
    }

    /// The model, loading it on the first call (off the async threads; concurrent callers
    /// wait for the one load). None when off or unusable.
    pub async fn get(&self, load: fn(&Path) -> Result<T, ml::ModelError>) -> Option<Arc<T>> {
        if !matches!(self.checked, Some(Ok(()))) {
            return None;
        }
        self.loaded
            .get_or_init(|| async {
                let dir = self.dir.clone();
                let started = std::time::Instant::now();
                let result = tokio::task::spawn_blocking(move || load(&dir))
                    .await
                    .unwrap_or_else(|e| Err(ml::ModelError(format!("loading panicked: {e}"))));
                match result {
                    Ok(model) => {
                        tracing::info!(model = self.name, dir = %self.dir.display(),
                            ms = started.elapsed().as_millis() as u64, "model loaded");
                        Some(Arc::new(model))
                    }
                    Err(e) => {
                        tracing::error!(model = self.name, reason = %e, "model failed to load; features fall back");
                        *self.failure.lock().expect("model failure") = Some(e.to_string());
                        None
                    }
                }
            })
            .await
            .clone()
    }
}

/// Both models of an instance.
pub struct Models {
    pub embedding: Lazy<Encoder>,
    pub rerank: Lazy<CrossEncoder>,
    /// Fingerprint of the embedding model, stored beside each vector.
    pub embedding_id: String,
    /// Woken by saves and semantic queries: the embedding worker does nothing before the
    /// first of them, so start-up never loads the model.
    pub wanted: tokio::sync::Notify,
    /// Held by an embedding pass from taking its batch to committing it: a second pass
    /// in this process (the worker, a test, `cairn reindex`) waits instead of taking —
    /// and embedding again — the same queue rows.
    pub embedding_pass: tokio::sync::Mutex<()>,
}

impl Models {
    pub fn new(config: &Config) -> Models {
        let embedding = Lazy::new("embedding", config.semantic_search.on(), &config.embedding_model_dir);
        let embedding_id =
            if embedding.usable() { ml::fingerprint(&config.embedding_model_dir) } else { String::new() };
        Models {
            embedding,
            rerank: Lazy::new("rerank", config.rerank.on(), &config.rerank_model_dir),
            embedding_id,
            wanted: tokio::sync::Notify::new(),
            embedding_pass: tokio::sync::Mutex::new(()),
        }
    }

    /// The embedding model when `SEMANTIC_SEARCH=1` and it resolves.
    pub async fn encoder(&self) -> Option<Arc<Encoder>> {
        self.embedding.get(Encoder::load).await
    }

    /// The cross-encoder when `RERANK=1` and it resolves.
    pub async fn cross_encoder(&self) -> Option<Arc<CrossEncoder>> {
        self.rerank.get(CrossEncoder::load).await
    }

    /// Tells the embedding worker there may be pages to embed.
    pub fn wake(&self) {
        if self.embedding.usable() {
            self.wanted.notify_one();
        }
    }
}
