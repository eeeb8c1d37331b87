//! Embedding refresh: the durable queue's consumer. A save puts its page in `embed_queue`
//! inside the save's own transaction; this pass claims a batch of queued pages (a lease,
//! so passes in other processes sharing the database take other pages), cuts each
//! into passages, runs the model (off the async threads) and stores the vectors in one
//! transaction that also bumps the workspace's `vector_seq` and removes the queue rows
//! it served. A page saved again meanwhile keeps its (newer) queue row and is embedded
//! again at the next pass; a trashed page loses its vectors. A restart loses nothing:
//! the queue and the vectors are rows.

use std::collections::{BTreeMap, HashMap};

use super::passages::passages;
use super::vectors::to_bytes;
use crate::core::{Ctx, pages};
use crate::error::Result;
use crate::markdown;
use crate::store::Backend;
use crate::time::stored;

/// Pages taken per pass: one transaction's worth, a few seconds of model time at most.
pub(crate) const BATCH_PAGES: i64 = 16;
/// A page whose embedding failed this often is left in the queue and not retried.
const MAX_ATTEMPTS: i64 = 3;

struct Queued {
    page_id: i64,
    ws_id: i64,
    /// The page row's `index_seq` when it was read: what the vectors reflect.
    seq: i64,
    live: Option<(String, String)>,
}

/// How long a pass owns the queue rows it claimed: far more than a batch takes (seconds),
/// so a live pass never loses its rows; a process that died mid-batch leaves them to
/// others after this.
const LEASE: chrono::Duration = chrono::Duration::minutes(10);

/// Claims up to `limit` queued pages for this pass: (page id, workspace id). Rows of a
/// batch that stopped without finishing are claimed again once their lease is over.
async fn claim(ctx: &Ctx, limit: i64) -> Result<Vec<(i64, i64)>> {
    let now = ctx.clock.now();
    let skip_locked = if ctx.db.backend == Backend::Postgres { " FOR UPDATE SKIP LOCKED" } else { "" };
    let sql = format!(
        "UPDATE embed_queue SET locked_until = $1 WHERE page_id IN (\
           SELECT page_id FROM embed_queue WHERE attempts < $2 AND (locked_until IS NULL OR locked_until <= $3) \
           ORDER BY queued_at, page_id LIMIT $4{skip_locked}) \
         RETURNING page_id, workspace_id"
    );
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(stored(now + LEASE))
        .bind(MAX_ATTEMPTS)
        .bind(stored(now))
        .bind(limit)
        .fetch_all(&ctx.db.pool)
        .await?)
}

/// Pages waiting to be embedded (across workspaces).
pub(crate) async fn pending(ctx: &Ctx) -> Result<i64> {
    Ok(sqlx::query_scalar("SELECT COUNT(*) FROM embed_queue WHERE attempts < $1")
        .bind(MAX_ATTEMPTS)
        .fetch_one(&ctx.db.pool)
        .await?)
}

/// Queues the pages whose vectors another model made (the model directory changed):
/// their vectors are not comparable with this model's, so they are embedded again.
pub(crate) async fn requeue_other_models(ctx: &Ctx) -> Result<u64> {
    if !ctx.models.embedding.usable() {
        return Ok(0);
    }
    let done = sqlx::query(
        "INSERT INTO embed_queue (page_id, workspace_id, index_seq, attempts, queued_at) \
         SELECT page_id, workspace_id, index_seq, 0, $2 FROM page_vectors WHERE model <> $1 AND chunk = 0 \
         ON CONFLICT (page_id) DO NOTHING",
    )
    .bind(&ctx.models.embedding_id)
    .bind(ctx.clock.rfc3339())
    .execute(&ctx.db.pool)
    .await?;
    Ok(done.rows_affected())
}

/// Embeds up to `max_pages` queued pages; answers how many queue rows were served.
/// Does nothing (0) when the embedding model is off or unusable.
pub async fn embed_pending(ctx: &Ctx, max_pages: i64) -> Result<usize> {
    if !ctx.models.embedding.usable() || ctx.test_hooks.embedding_held() {
        return Ok(0);
    }
    // One pass at a time in a process (two would only share the same cores); across
    // processes, the claim below keeps passes off each other's rows.
    let _pass = ctx.models.embedding_pass.lock().await;
    let queued = claim(ctx, max_pages).await?;
    if queued.is_empty() {
        return Ok(0);
    }
    // Ids are integers of our own: listing them in the statement is safe.
    let ids = queued.iter().map(|(id, _)| id.to_string()).collect::<Vec<_>>().join(",");
    let Some(encoder) = ctx.models.encoder().await else {
        // The model would not load: the claim goes back for a pass that can use it.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE embed_queue SET locked_until = NULL WHERE page_id IN ({ids})"
        )))
        .execute(&ctx.db.pool)
        .await?;
        return Ok(0);
    };
    let page_ids: Vec<i64> = queued.iter().map(|(id, _)| *id).collect();
    let rows = pages::rows::texts(&mut *ctx.db.pool.acquire().await?, None, &page_ids).await?;
    let mut by_id: HashMap<i64, (i64, bool, String, String)> = HashMap::new();
    for mut t in rows {
        let markdown = t.take_markdown()?;
        by_id.insert(t.id, (t.index_seq, t.live(), t.title, markdown));
    }
    let jobs: Vec<Queued> = queued
        .iter()
        .filter_map(|&(page_id, ws_id)| {
            let (seq, live, title, content) = by_id.remove(&page_id)?;
            let live = live.then(|| (title, markdown::parse(&content).text));
            Some(Queued { page_id, ws_id, seq, live })
        })
        .collect();

    // Every passage of the batch through the model in one go (it batches by length).
    let texts: Vec<(usize, String)> = jobs
        .iter()
        .enumerate()
        .filter_map(|(i, j)| j.live.as_ref().map(|(t, body)| (i, t, body)))
        .flat_map(|(i, t, body)| passages(t, body).into_iter().map(move |p| (i, p)))
        .collect();
    let model = encoder.clone();
    let inputs: Vec<String> = texts.iter().map(|(_, p)| p.clone()).collect();
    let embedded = tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        model.embed(&refs)
    })
    .await
    .map_err(|e| anyhow::anyhow!("embedding task: {e}"))?;
    let vectors = match embedded {
        Ok(v) => v,
        Err(e) => {
            tracing::error!(error = %e, pages = jobs.len(), "embedding failed; pages stay queued");
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "UPDATE embed_queue SET attempts = attempts + 1, locked_until = NULL WHERE page_id IN ({ids})"
            )))
            .execute(&ctx.db.pool)
            .await?;
            return Ok(0);
        }
    };
    let mut per_job: Vec<Vec<Vec<f32>>> = vec![Vec::new(); jobs.len()];
    for ((i, _), v) in texts.into_iter().zip(vectors) {
        per_job[i].push(v);
    }

    let mut by_ws: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, j) in jobs.iter().enumerate() {
        by_ws.entry(j.ws_id).or_default().push(i);
    }
    let mut tx = ctx.db.write().await?;
    for (ws_id, members) in by_ws {
        let vseq = pages::rows::next_vector_seq_in_tx(&mut tx, ws_id).await?;
        for i in members {
            let job = &jobs[i];
            sqlx::query("DELETE FROM page_vectors WHERE page_id = $1").bind(job.page_id).execute(&mut *tx).await?;
            for (chunk, v) in per_job[i].iter().enumerate() {
                sqlx::query(
                    "INSERT INTO page_vectors (page_id, workspace_id, chunk, index_seq, vector_seq, model, vector) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(job.page_id)
                .bind(ws_id)
                .bind(chunk as i64)
                .bind(job.seq)
                .bind(vseq)
                .bind(&ctx.models.embedding_id)
                .bind(to_bytes(v))
                .execute(&mut *tx)
                .await?;
            }
            // Saved again since it was read: its newer queue row stays for the next pass.
            sqlx::query("DELETE FROM embed_queue WHERE page_id = $1 AND index_seq <= $2")
                .bind(job.page_id)
                .bind(job.seq)
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await?;
    Ok(jobs.len())
}
