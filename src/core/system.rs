//! What this instance is and which optional features resolved.

use serde::Serialize;
use utoipa::ToSchema;

use super::{Ctx, VERSION};

#[derive(Serialize, ToSchema)]
pub(crate) struct SystemReport {
    pub version: &'static str,
    /// `ok` or `error`.
    pub db: &'static str,
    /// `sqlite` or `postgres`.
    pub db_backend: &'static str,
    /// Embedding-backed search is on and its model resolves (checked at start-up,
    /// loaded on first use; false from the moment a load fails).
    pub semantic_search: bool,
    /// Hybrid results are reranked: `RERANK=1` and a cross-encoder or the embedding model
    /// resolves.
    pub rerank: bool,
    /// How reranking works: `cross-encoder`, `passage` (best passage by embedding), or
    /// null when results are not reranked.
    pub rerank_engine: Option<&'static str>,
    /// Whether the embedding model is in memory yet (it loads on first use).
    pub embedding_model_loaded: bool,
    /// Pages waiting to be embedded (the durable queue; drained in the background).
    pub embedding_queue: i64,
    /// OCR of uploaded images is on and an OCR engine is present.
    pub ocr_uploads: bool,
    pub registration_open: bool,
    pub webhook_allow_private: bool,
    /// Whether the web app shows images from other sites (`https:`); false with
    /// `BLOCK_EXTERNAL_IMAGES=1`, and they show as a placeholder with their link.
    pub external_images: bool,
    pub upload_max_bytes: u64,
    pub languages: Vec<&'static str>,
    /// Why a requested feature did not resolve (empty when all did).
    pub notes: Vec<String>,
    pub limits: Limits,
}

/// The rules a client may check before it asks (the server checks them all again), so
/// that an app shows them from the server's answer rather than from copies.
#[derive(Serialize, ToSchema)]
pub(crate) struct Limits {
    /// A page's content, in bytes of UTF-8.
    pub content_max_bytes: usize,
    /// A page's title, in characters.
    pub title_max_chars: usize,
    /// The fewest characters of a password.
    pub password_min_length: usize,
    /// An API token's name, in characters.
    pub token_name_max_length: usize,
    /// The image types an upload may be (judged by its bytes).
    pub upload_types: Vec<&'static str>,
    /// The most items one page of a list holds (`limit`).
    pub list_max_limit: i64,
    /// Attempts a webhook delivery gets before it is failed.
    pub webhook_max_attempts: i64,
    /// The kinds of event a webhook may receive.
    pub webhook_events: Vec<&'static str>,
}

impl Limits {
    fn now() -> Limits {
        Limits {
            content_max_bytes: super::pages::MAX_CONTENT_BYTES,
            title_max_chars: super::pages::MAX_TITLE_CHARS,
            password_min_length: super::accounts::PASSWORD_MIN_LEN,
            token_name_max_length: super::tokens::MAX_TOKEN_NAME_LEN,
            upload_types: super::uploads::TYPES.iter().map(|(mime, _)| *mime).collect(),
            list_max_limit: super::paging::MAX_LIMIT,
            webhook_max_attempts: super::webhooks::deliver::MAX_ATTEMPTS,
            webhook_events: super::webhooks::EventKind::ALL.iter().map(|k| k.as_str()).collect(),
        }
    }
}

pub(crate) async fn report(ctx: &Ctx) -> SystemReport {
    let c = &ctx.config;
    let m = &ctx.models;
    let mut notes = Vec::new();
    let semantic_search = m.embedding.usable();
    if let Some(why) = m.embedding.problem() {
        notes.push(format!(
            "SEMANTIC_SEARCH=1 but the embedding model does not resolve ({why}); semantic features use TF-IDF"
        ));
    }
    let rerank_engine = if !c.rerank.on() {
        None
    } else if m.rerank.usable() {
        Some("cross-encoder")
    } else if semantic_search {
        Some("passage")
    } else {
        None
    };
    if let Some(why) = m.rerank.problem() {
        notes.push(format!(
            "RERANK=1 but the cross-encoder does not resolve ({why}); {}",
            if semantic_search {
                "hybrid results are reranked by passage embeddings"
            } else {
                "results are not reranked"
            }
        ));
    }
    let embedding_queue = super::semantic::embed::pending(ctx).await.unwrap_or_default();
    let ocr_uploads = ctx.ocr.usable();
    if let Some(why) = ctx.ocr.problem() {
        notes.push(format!("OCR_UPLOADS=1 but OCR is off ({why}); uploads are stored without their text"));
    }
    SystemReport {
        version: VERSION,
        db: if ctx.db.ping().await { "ok" } else { "error" },
        db_backend: ctx.db.backend.name(),
        semantic_search,
        rerank: rerank_engine.is_some(),
        rerank_engine,
        embedding_model_loaded: m.embedding.is_loaded(),
        embedding_queue,
        ocr_uploads,
        registration_open: !c.disable_registration.on(),
        webhook_allow_private: c.webhook_allow_private.on(),
        external_images: !c.block_external_images.on(),
        upload_max_bytes: c.upload_max_bytes,
        languages: super::i18n::LANGUAGES.to_vec(),
        notes,
        limits: Limits::now(),
    }
}
