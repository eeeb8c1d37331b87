//! A co-editing session's update log (`live_updates`): every update a client sent, in
//! the order the server stored them, written before the update is acknowledged or
//! passed on. The first row of a session is the server's own: the page's text as the
//! session began, so that replaying the log rebuilds the same document after a restart.
//! A session that ended leaves one row, its whole document (user 0), which the page's
//! next session goes on from; purging the page erases it.

use super::relay;
use crate::core::Ctx;
use crate::error::Result;
use crate::store::Backend;

/// The session's updates, in the order they were stored: (row, who sent it, the update).
pub(super) async fn read(ctx: &Ctx, ws_id: i64, uid: &str) -> Result<Vec<(i64, i64, Vec<u8>)>> {
    Ok(sqlx::query_as(
        "SELECT id, user_id, body FROM live_updates WHERE workspace_id = $1 AND page_uid = $2 ORDER BY id",
    )
    .bind(ws_id)
    .bind(uid)
    .fetch_all(&ctx.db.pool)
    .await?)
}

/// Stores one update; answers its id once it is durable. With PostgreSQL the insert
/// also announces the row to the other processes sharing the database (`relay`): the
/// note goes out when the row is committed, never before.
pub(super) async fn append(ctx: &Ctx, ws_id: i64, uid: &str, user_id: i64, update: &[u8]) -> Result<i64> {
    const SQLITE: &str = "INSERT INTO live_updates (workspace_id, page_uid, user_id, body, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id";
    const POSTGRES: &str = "WITH r AS (INSERT INTO live_updates (workspace_id, page_uid, user_id, body, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id) \
         SELECT r.id FROM r, LATERAL (SELECT pg_notify($6, $7 || r.id::text)) AS n";
    let postgres = ctx.db.backend == Backend::Postgres;
    let query = sqlx::query_scalar(if postgres { POSTGRES } else { SQLITE })
        .bind(ws_id)
        .bind(uid)
        .bind(user_id)
        .bind(update)
        .bind(ctx.clock.rfc3339());
    let query = if postgres {
        query.bind(relay::CHANNEL).bind(relay::update_prefix(ctx.live.process(), ws_id, uid))
    } else {
        query
    };
    Ok(query.fetch_one(&ctx.db.pool).await?)
}

/// One stored update, by its row; none once a compaction dropped it.
pub(super) async fn row(ctx: &Ctx, id: i64) -> Result<Option<Vec<u8>>> {
    Ok(sqlx::query_scalar("SELECT body FROM live_updates WHERE id = $1").bind(id).fetch_optional(&ctx.db.pool).await?)
}

/// Announces a note to the other processes sharing the database (PostgreSQL only).
pub(super) async fn announce(ctx: &Ctx, payload: &str) -> Result<()> {
    sqlx::query("SELECT pg_notify($1, $2)").bind(relay::CHANNEL).bind(payload).execute(&ctx.db.pool).await?;
    Ok(())
}

/// Replaces the rows `covered` with `snapshot`, the whole document as one update
/// holding all of theirs (written after the session's text became a revision, and when
/// it ends); answers the snapshot's row. Other rows stay — stored after the snapshot was
/// taken, or by another process and not yet taken in: replaying an update twice changes
/// nothing.
pub(super) async fn compact(ctx: &Ctx, ws_id: i64, uid: &str, snapshot: &[u8], covered: &[i64]) -> Result<i64> {
    let mut tx = ctx.db.write().await?;
    let row: i64 = sqlx::query_scalar(
        "INSERT INTO live_updates (workspace_id, page_uid, user_id, body, created_at) \
         VALUES ($1, $2, 0, $3, $4) RETURNING id",
    )
    .bind(ws_id)
    .bind(uid)
    .bind(snapshot)
    .bind(ctx.clock.rfc3339())
    .fetch_one(&mut *tx)
    .await?;
    let ids = format!("[{}]", covered.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
    // The rows by their ids, given as one JSON array.
    let delete = match ctx.db.backend {
        Backend::Sqlite => {
            "DELETE FROM live_updates WHERE workspace_id = $1 AND page_uid = $2 \
             AND id IN (SELECT CAST(value AS INTEGER) FROM json_each($3))"
        }
        Backend::Postgres => {
            "DELETE FROM live_updates WHERE workspace_id = $1 AND page_uid = $2 \
             AND id IN (SELECT CAST(value AS BIGINT) FROM json_array_elements_text($3::json))"
        }
    };
    sqlx::query(delete).bind(ws_id).bind(uid).bind(ids).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(row)
}

/// The pages with a log left by a process that stopped (or was killed) before their
/// sessions' text became a revision — rows of people's updates, which a session that
/// ended compacted away: (workspace id, page uid).
pub(super) async fn orphans(ctx: &Ctx) -> Result<Vec<(i64, String)>> {
    Ok(sqlx::query_as("SELECT DISTINCT workspace_id, page_uid FROM live_updates WHERE user_id <> 0")
        .fetch_all(&ctx.db.pool)
        .await?)
}
