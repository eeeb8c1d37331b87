//! Meaning-level search state kept in the process, per workspace: TF-IDF vectors
//! (always) and, with `SEMANTIC_SEARCH=1`, embedding vectors.
//!
//! The database is the truth; these are caches that catch up on it. Every page-row write
//! bumps the workspace's counter (`index_seqs.seq`) and stamps the row with it
//! (`pages.index_seq`), so before answering, an index reads the counter — one primary-key
//! lookup — and, if it moved, reads only the rows written since. That one path serves a
//! save in this process, a save by another process sharing the database, and a
//! `cairn reindex` (which moves `reset_at` past what any index has seen, so they start
//! again). Nothing is lost at a restart: the first query of a workspace builds its index
//! from the rows.

pub(crate) mod embed;
pub(crate) mod models;
pub(crate) mod passages;
pub(crate) mod tfidf;
pub(crate) mod vectors;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::RwLock;

use super::Ctx;
use crate::error::Result;
use tfidf::TfIdf;
use vectors::VectorIndex;

/// A workspace's in-process index.
#[derive(Default)]
pub struct WorkspaceIndex {
    /// The workspace counter this index reflects.
    seen: i64,
    built: bool,
    pub tfidf: TfIdf,
    /// Words in each live page's search text (insights count them).
    pub words: HashMap<i64, usize>,
    /// The workspace's `vector_seq` the vectors reflect.
    vectors_seen: i64,
    /// Passage vectors of the embedded live pages (empty unless the model is usable).
    pub vectors: VectorIndex,
}

/// The open indexes, by workspace id.
#[derive(Default)]
pub struct Indexes {
    by_workspace: Mutex<HashMap<i64, Arc<RwLock<WorkspaceIndex>>>>,
    /// Workspaces whose index is built (true) or being built in the background (false),
    /// readable without waiting for a build that holds the index.
    built: Mutex<HashMap<i64, bool>>,
}

impl Indexes {
    fn slot(&self, ws_id: i64) -> Arc<RwLock<WorkspaceIndex>> {
        self.by_workspace.lock().expect("index map").entry(ws_id).or_default().clone()
    }

    /// Forgets a workspace's index (the workspace was deleted).
    pub fn forget(&self, ws_id: i64) {
        self.by_workspace.lock().expect("index map").remove(&ws_id);
        self.built.lock().expect("built map").remove(&ws_id);
    }
}

/// Whether the workspace's index is built in this process. When it is not, a build
/// starts in the background and this answers false at once: keyword search ranks in the
/// database meanwhile rather than make the first query after a start wait seconds for
/// a large wiki's index.
pub(crate) fn built_or_start(ctx: &Ctx, ws_id: i64) -> bool {
    {
        let mut built = ctx.semantic.built.lock().expect("built map");
        match built.get(&ws_id) {
            Some(&done) => return done,
            None => built.insert(ws_id, false),
        };
    }
    let ctx = ctx.clone();
    // Already a task of its own: the catching up itself, not `fresh`'s wrapper task.
    tokio::spawn(async move {
        if let Err(e) = catch_up(&ctx, ws_id).await {
            tracing::warn!(error = %e, workspace = ws_id, "building the search index failed; retried on the next query");
            ctx.semantic.built.lock().expect("built map").remove(&ws_id);
        }
    });
    false
}

/// Whether the workspace's index is built in this process (and no build is under way).
pub fn is_built(ctx: &Ctx, ws_id: i64) -> bool {
    ctx.semantic.built.lock().expect("built map").get(&ws_id) == Some(&true)
}

/// The workspace's index, caught up with every committed page write (and, when the
/// embedding model is usable, every stored vector).
///
/// The catching up runs in a task of its own: a request that gives up while waiting (its
/// timeout, a client gone) leaves it to finish. Building a 100,000-page workspace's
/// index takes longer than `REQUEST_TIMEOUT_SECS`' default; were it dropped with the
/// request, every later first query would start it again and none would ever finish.
pub async fn fresh(ctx: &Ctx, ws_id: i64) -> Result<Arc<RwLock<WorkspaceIndex>>> {
    let ctx = ctx.clone();
    tokio::spawn(async move { catch_up(&ctx, ws_id).await }).await.map_err(crate::error::Error::internal)?
}

async fn catch_up(ctx: &Ctx, ws_id: i64) -> Result<Arc<RwLock<WorkspaceIndex>>> {
    let slot = ctx.semantic.slot(ws_id);
    let (seq, reset_at, vseq) = crate::core::pages::rows::counters(&mut *ctx.db.pool.acquire().await?, ws_id).await?;
    let with_vectors = ctx.models.embedding.usable();
    let current = |ix: &WorkspaceIndex| {
        ix.built && ix.seen >= seq && reset_at <= ix.seen && (!with_vectors || ix.vectors_seen >= vseq)
    };
    if current(&*slot.read().await) {
        return Ok(slot);
    }
    let mut ix = slot.write().await;
    // Another task may have caught up while this one waited.
    if current(&ix) {
        drop(ix);
        return Ok(slot);
    }
    let rebuild = !ix.built || reset_at > ix.seen;
    let since = if rebuild { -1 } else { ix.seen };
    let rows = crate::core::pages::rows::texts_since(&mut *ctx.db.pool.acquire().await?, ws_id, since).await?;
    if rebuild {
        ix.tfidf = TfIdf::default();
        ix.words.clear();
        ix.vectors.clear();
        ix.vectors_seen = 0;
    }
    let mut seen = seq;
    for mut row in rows {
        let id = row.id;
        seen = seen.max(row.index_seq);
        if !row.live() {
            ix.tfidf.remove(id);
            ix.vectors.remove(id);
            ix.words.remove(&id);
        } else {
            let content = row.take_markdown()?;
            let body = crate::core::pages::search_text::search_body(&content, &row.image_text);
            ix.words.insert(id, crate::text::words(&body).len());
            ix.tfidf.upsert(id, &crate::text::term_pairs(&row.title), &crate::text::term_pairs(&body));
        }
    }
    ix.seen = seen;
    ix.built = true;
    ctx.semantic.built.lock().expect("built map").insert(ws_id, true);
    if with_vectors && ix.vectors_seen < vseq {
        catch_up_vectors(ctx, ws_id, &mut ix).await?;
    }
    drop(ix);
    Ok(slot)
}

/// Reads the vectors stored since the index last looked; a page's rows replace all its
/// passages (they are written together, under one counter value).
async fn catch_up_vectors(ctx: &Ctx, ws_id: i64, ix: &mut WorkspaceIndex) -> Result<()> {
    let rows: Vec<(i64, i64, i64, String, Vec<u8>)> = sqlx::query_as(
        "SELECT page_id, chunk, vector_seq, model, vector FROM page_vectors \
         WHERE workspace_id = $1 AND vector_seq > $2 ORDER BY page_id, chunk",
    )
    .bind(ws_id)
    .bind(ix.vectors_seen)
    .fetch_all(&ctx.db.pool)
    .await?;
    let mut seen = ix.vectors_seen;
    let mut current: Option<(i64, Vec<f32>, usize)> = None;
    let put = |ix: &mut WorkspaceIndex, page: Option<(i64, Vec<f32>, usize)>| {
        if let Some((id, flat, dim)) = page {
            // A page trashed since it was embedded stays out.
            if ix.tfidf.contains(id) {
                ix.vectors.replace(id, dim, flat);
            } else {
                ix.vectors.remove(id);
            }
        }
    };
    for (page, _chunk, vseq, model, bytes) in rows {
        seen = seen.max(vseq);
        if model != ctx.models.embedding_id {
            continue; // another model's vectors; the page is re-embedded by `reindex`
        }
        let v = vectors::from_bytes(&bytes);
        match &mut current {
            Some((id, flat, _)) if *id == page => flat.extend(v),
            _ => {
                let dim = v.len();
                put(ix, current.replace((page, v, dim)));
            }
        }
    }
    put(ix, current.take());
    ix.vectors_seen = seen;
    Ok(())
}
