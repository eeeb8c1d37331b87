//! Local models run in-process on the CPU with candle: a sentence-embedding model and a
//! cross-encoder reranker, each read from a sentence-transformers directory
//! (`config.json`, `tokenizer.json`, `model.safetensors`). Nothing here knows about
//! pages or the database; `core::semantic` decides what to embed and when.

#[cfg(feature = "ml")]
mod bert;
#[cfg(feature = "ml")]
pub(crate) mod cross_encoder;
#[cfg(feature = "ml")]
pub(crate) mod encoder;
#[cfg(not(feature = "ml"))]
mod without;

use std::path::Path;

#[cfg(feature = "ml")]
pub use cross_encoder::CrossEncoder;
#[cfg(feature = "ml")]
pub use encoder::Encoder;
#[cfg(not(feature = "ml"))]
pub(crate) use without::{CrossEncoder, Encoder, check};

/// Why a model directory cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub String);

impl ModelError {
    #[cfg_attr(not(feature = "ml"), allow(dead_code))]
    fn at(dir: &Path, what: impl std::fmt::Display) -> Self {
        ModelError(format!("model in {}: {what}", dir.display()))
    }
}

/// A cheap look at a model directory without reading its weights: the three files are
/// there, `config.json` is a BERT configuration and the safetensors header parses. What
/// start-up and `/api/system` may do; loading the weights waits for the first use.
#[cfg(feature = "ml")]
pub(crate) fn check(dir: &Path) -> Result<(), ModelError> {
    bert::read_config(dir)?;
    let tokenizer = dir.join("tokenizer.json");
    if !tokenizer.is_file() {
        return Err(ModelError::at(dir, "tokenizer.json is missing"));
    }
    bert::check_weights(dir)?;
    Ok(())
}

/// A short fingerprint of a model directory (its config and the size of its weights),
/// stored beside each vector: vectors of another model are not comparable.
pub(crate) fn fingerprint(dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(std::fs::read(dir.join("config.json")).unwrap_or_default());
    let weights = std::fs::metadata(dir.join("model.safetensors")).map(|m| m.len()).unwrap_or(0);
    h.update(weights.to_le_bytes());
    hex::encode(&h.finalize()[..8])
}
