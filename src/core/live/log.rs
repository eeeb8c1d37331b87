//! A co-editing session's update log (`live_updates`): every update a client sent, in
//! the order the server stored them, written before the update is acknowledged or
//! passed on. The first row of a session is the server's own: the page's text as the
//! session began, so that replaying the log rebuilds the same document after a restart.
//! A session that ended leaves one row, its whole document (user 0), which the page's
//! next session goes on from; purging the page erases it.

use crate::core::Ctx;
use crate::error::Result;

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

/// Stores one update; answers its id once it is durable.
pub(super) async fn append(ctx: &Ctx, ws_id: i64, uid: &str, user_id: i64, update: &[u8]) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO live_updates (workspace_id, page_uid, user_id, body, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(ws_id)
    .bind(uid)
    .bind(user_id)
    .bind(update)
    .bind(ctx.clock.rfc3339())
    .fetch_one(&ctx.db.pool)
    .await?)
}

/// Replaces the rows up to `covered` with `snapshot`, the whole document as one update
/// holding all of theirs (written after the session's text became a revision, and when
/// it ends). Rows stored after the snapshot was taken stay: replaying an update twice
/// changes nothing.
pub(super) async fn compact(ctx: &Ctx, ws_id: i64, uid: &str, snapshot: &[u8], covered: i64) -> Result<()> {
    let mut tx = ctx.db.write().await?;
    sqlx::query(
        "INSERT INTO live_updates (workspace_id, page_uid, user_id, body, created_at) VALUES ($1, $2, 0, $3, $4)",
    )
    .bind(ws_id)
    .bind(uid)
    .bind(snapshot)
    .bind(ctx.clock.rfc3339())
    .execute(&mut *tx)
    .await?;
    sqlx::query("DELETE FROM live_updates WHERE workspace_id = $1 AND page_uid = $2 AND id <= $3")
        .bind(ws_id)
        .bind(uid)
        .bind(covered)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The pages with a log left by a process that stopped (or was killed) before their
/// sessions' text became a revision — rows of people's updates, which a session that
/// ended compacted away: (workspace id, page uid).
pub(super) async fn orphans(ctx: &Ctx) -> Result<Vec<(i64, String)>> {
    Ok(sqlx::query_as("SELECT DISTINCT workspace_id, page_uid FROM live_updates WHERE user_id <> 0")
        .fetch_all(&ctx.db.pool)
        .await?)
}
