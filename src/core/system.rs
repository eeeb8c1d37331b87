//! What this instance is and which optional features resolved.

use serde::Serialize;
use utoipa::ToSchema;

use super::{Ctx, VERSION};

#[derive(Serialize, ToSchema)]
pub struct SystemReport {
    pub version: &'static str,
    /// `ok` or `error`.
    pub db: &'static str,
    /// `sqlite` or `postgres`.
    pub db_backend: &'static str,
    /// Embedding-backed search is on and its model files are present.
    pub semantic_search: bool,
    /// The cross-encoder reranker is on and its model files are present.
    pub rerank: bool,
    /// OCR of uploaded images is on and an OCR engine is present.
    pub ocr_uploads: bool,
    pub registration_open: bool,
    pub webhook_allow_private: bool,
    pub upload_max_bytes: u64,
    pub languages: Vec<&'static str>,
    /// Why a requested feature did not resolve (empty when all did).
    pub notes: Vec<String>,
}

fn model_present(dir: &std::path::Path) -> bool {
    ["config.json", "tokenizer.json", "model.safetensors"].iter().all(|f| dir.join(f).is_file())
}

pub async fn report(ctx: &Ctx) -> SystemReport {
    let c = &ctx.config;
    let mut notes = Vec::new();
    let semantic_search = c.semantic_search && model_present(&c.embedding_model_dir);
    if c.semantic_search && !semantic_search {
        notes.push(format!(
            "SEMANTIC_SEARCH=1 but no model in {}; semantic features use TF-IDF",
            c.embedding_model_dir.display()
        ));
    }
    let rerank = c.rerank && model_present(&c.rerank_model_dir);
    if c.rerank && !rerank {
        notes.push(format!("RERANK=1 but no model in {}; results are not reranked", c.rerank_model_dir.display()));
    }
    // No OCR engine ships with Cairn yet; say so rather than pretend.
    let ocr_uploads = false;
    if c.ocr_uploads {
        notes.push("OCR_UPLOADS=1 but no OCR engine is available; uploads are stored without text".into());
    }
    SystemReport {
        version: VERSION,
        db: if ctx.db.ping().await { "ok" } else { "error" },
        db_backend: ctx.db.backend.name(),
        semantic_search,
        rerank,
        ocr_uploads,
        registration_open: !c.disable_registration,
        webhook_allow_private: c.webhook_allow_private,
        upload_max_bytes: c.upload_max_bytes,
        languages: super::i18n::LANGUAGES.to_vec(),
        notes,
    }
}
