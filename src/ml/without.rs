//! The models of a build without the `ml` feature: none. Every model directory is
//! unusable, with the reason, so semantic search and reranking stay off and search
//! answers by keywords and TF-IDF, as when no model is configured (`/api/system` shows
//! the reason).

use std::path::Path;

use super::ModelError;

fn absent() -> ModelError {
    ModelError("this build has no local models (built without the `ml` feature)".to_owned())
}

/// No directory holds a model this build can run.
pub(crate) fn check(_dir: &Path) -> Result<(), ModelError> {
    Err(absent())
}

/// A sentence-embedding model, which this build cannot load.
pub enum Encoder {}

impl Encoder {
    pub fn load(_dir: &Path) -> Result<Encoder, ModelError> {
        Err(absent())
    }

    pub fn dim(&self) -> usize {
        match *self {}
    }

    pub fn max_tokens(&self) -> usize {
        match *self {}
    }

    pub fn embed(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, ModelError> {
        match *self {}
    }
}

/// A cross-encoder reranker, which this build cannot load.
pub enum CrossEncoder {}

impl CrossEncoder {
    pub fn load(_dir: &Path) -> Result<CrossEncoder, ModelError> {
        Err(absent())
    }

    pub fn score(&self, _query: &str, _passages: &[&str]) -> Result<Vec<f32>, ModelError> {
        match *self {}
    }
}
