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

pub mod tfidf;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::RwLock;

use super::Ctx;
use crate::error::Result;
use tfidf::TfIdf;

/// A workspace's in-process index.
#[derive(Default)]
pub struct WorkspaceIndex {
    /// The workspace counter this index reflects.
    seen: i64,
    built: bool,
    pub tfidf: TfIdf,
}

/// The open indexes, by workspace id.
#[derive(Default)]
pub struct Indexes {
    by_workspace: Mutex<HashMap<i64, Arc<RwLock<WorkspaceIndex>>>>,
}

/// What a page contributes to term statistics: its title counts twice, as the title
/// says most about what the page is.
pub fn page_terms(title: &str, body: &str) -> Vec<String> {
    let mut terms = crate::text::terms(title);
    terms.extend(terms.clone());
    terms.extend(crate::text::terms(body));
    terms
}

impl Indexes {
    fn slot(&self, ws_id: i64) -> Arc<RwLock<WorkspaceIndex>> {
        self.by_workspace.lock().expect("index map").entry(ws_id).or_default().clone()
    }

    /// Forgets a workspace's index (the workspace was deleted).
    pub fn forget(&self, ws_id: i64) {
        self.by_workspace.lock().expect("index map").remove(&ws_id);
    }
}

/// The workspace's index, caught up with every committed page write.
pub async fn fresh(ctx: &Ctx, ws_id: i64) -> Result<Arc<RwLock<WorkspaceIndex>>> {
    let slot = ctx.semantic.slot(ws_id);
    let (seq, reset_at): (i64, i64) = sqlx::query_as("SELECT seq, reset_at FROM index_seqs WHERE workspace_id = $1")
        .bind(ws_id)
        .fetch_optional(&ctx.db.pool)
        .await?
        .unwrap_or((0, 0));
    {
        let ix = slot.read().await;
        if ix.built && ix.seen >= seq && reset_at <= ix.seen {
            drop(ix);
            return Ok(slot);
        }
    }
    let mut ix = slot.write().await;
    // Another task may have caught up while this one waited.
    if ix.built && ix.seen >= seq && reset_at <= ix.seen {
        drop(ix);
        return Ok(slot);
    }
    let rebuild = !ix.built || reset_at > ix.seen;
    let since = if rebuild { -1 } else { ix.seen };
    let rows: Vec<(i64, i64, Option<String>, String, String)> = sqlx::query_as(
        "SELECT id, index_seq, deleted_at, title, body FROM pages WHERE workspace_id = $1 AND index_seq > $2",
    )
    .bind(ws_id)
    .bind(since)
    .fetch_all(&ctx.db.pool)
    .await?;
    if rebuild {
        ix.tfidf = TfIdf::default();
    }
    let mut seen = seq;
    for (id, row_seq, deleted_at, title, body) in rows {
        seen = seen.max(row_seq);
        if deleted_at.is_some() {
            ix.tfidf.remove(id);
        } else {
            ix.tfidf.upsert(id, &page_terms(&title, &body));
        }
    }
    ix.seen = seen;
    ix.built = true;
    drop(ix);
    Ok(slot)
}
