//! Reads of pages for what is derived from them: the search indexes, embeddings,
//! reranking, snippets, the graph and suggestions. Each reads page rows (by id, or in
//! the order they changed) and hands the markdown back through the one decoder of a
//! row's content ([`Text::take_markdown`]).

use sqlx::{AnyConnection, AssertSqlSafe};

use crate::config::Backend;
use crate::core::pages::stored;
use crate::error::Result;
use crate::store;
use crate::time::Timestamp;

/// A page row as what is derived from it reads it ([`TEXT_SELECT`]'s columns, by name).
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct Text {
    pub id: i64,
    /// The workspace's change counter when the row was last written.
    pub index_seq: i64,
    deleted_at: Option<Timestamp>,
    pub slug: String,
    pub title: String,
    /// Text read from the page's images.
    pub image_text: String,
    content: String,
    #[sqlx(rename = "content_z")]
    packed: stored::Packed,
}

impl Text {
    /// Not in the trash.
    pub(crate) fn live(&self) -> bool {
        self.deleted_at.is_none()
    }

    /// The page's markdown, taken out of the row (inflating it is CPU work: the caller
    /// chooses where it runs).
    pub(crate) fn take_markdown(&mut self) -> Result<String> {
        stored::read(std::mem::take(&mut self.content), self.packed.take())
    }
}

const TEXT_SELECT: &str = "SELECT id, index_seq, deleted_at, slug, title, content, content_z, image_text FROM pages";

/// `column IN` the ids bound as parameter `param` (a JSON array, [`ids_json`]). One
/// statement whatever the ids: listed in its text, every search's ids made a statement
/// of their own, prepared (on PostgreSQL, by a round trip of its own) and cached on each
/// connection in place of the statements that are used again.
fn in_ids(conn: &AnyConnection, column: &str, param: &str) -> String {
    let list = store::json_strings(Backend::of(conn), param);
    format!("{column} IN (SELECT CAST(j.value AS BIGINT) FROM {list})")
}

fn ids_json(ids: &[i64]) -> String {
    serde_json::Value::from(ids).to_string()
}

/// The rows of pages `ids` (live or trashed; of workspace `ws_id` when given), in no
/// particular order; ids without a row are left out.
pub(crate) async fn texts(conn: &mut AnyConnection, ws_id: Option<i64>, ids: &[i64]) -> Result<Vec<Text>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    Ok(match ws_id {
        Some(ws) => {
            let sql = format!("{TEXT_SELECT} WHERE workspace_id = $1 AND {}", in_ids(conn, "id", "$2"));
            sqlx::query_as(AssertSqlSafe(sql)).bind(ws).bind(ids_json(ids)).fetch_all(&mut *conn).await?
        }
        None => {
            let sql = format!("{TEXT_SELECT} WHERE {}", in_ids(conn, "id", "$1"));
            sqlx::query_as(AssertSqlSafe(sql)).bind(ids_json(ids)).fetch_all(&mut *conn).await?
        }
    })
}

/// The rows of a workspace written after its change counter was `since`.
pub(crate) async fn texts_since(conn: &mut AnyConnection, ws_id: i64, since: i64) -> Result<Vec<Text>> {
    let sql = format!("{TEXT_SELECT} WHERE workspace_id = $1 AND index_seq > $2");
    Ok(sqlx::query_as(AssertSqlSafe(sql)).bind(ws_id).bind(since).fetch_all(&mut *conn).await?)
}

/// At most `limit` rows of a workspace written up to counter `upto`, after `after` in
/// (counter, id) order: a keyset, so a row written again meanwhile moves past `upto`
/// and is read by a later pass.
pub(crate) async fn texts_in_order(
    conn: &mut AnyConnection,
    ws_id: i64,
    upto: i64,
    after: (i64, i64),
    limit: i64,
) -> Result<Vec<Text>> {
    let sql = format!(
        "{TEXT_SELECT} WHERE workspace_id = $1 AND index_seq <= $2 \
         AND (index_seq > $3 OR (index_seq = $3 AND id > $4)) ORDER BY index_seq, id LIMIT $5"
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(ws_id)
        .bind(upto)
        .bind(after.0)
        .bind(after.1)
        .bind(limit)
        .fetch_all(&mut *conn)
        .await?)
}

/// A live page as the graph and suggestions list it (its columns by name).
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct Brief {
    pub id: i64,
    pub slug: String,
    pub title: String,
    pub updated_at: Timestamp,
    /// The parent's slug; None at the top level.
    pub parent: Option<String>,
}

/// Every live page of a workspace, by slug.
pub(crate) async fn live_briefs(conn: &mut AnyConnection, ws_id: i64) -> Result<Vec<Brief>> {
    Ok(sqlx::query_as(
        "SELECT p.id, p.slug, p.title, p.updated_at, pp.slug AS parent FROM pages p \
         LEFT JOIN pages pp ON pp.id = p.parent_id AND pp.deleted_at IS NULL \
         WHERE p.workspace_id = $1 AND p.deleted_at IS NULL ORDER BY p.slug",
    )
    .bind(ws_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// (source slug, target slug) of every link a live page of the workspace makes to
/// another page, by source and then the link's place in it.
pub(crate) async fn live_links(conn: &mut AnyConnection, ws_id: i64) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT s.slug, l.target FROM page_links l JOIN pages s ON s.id = l.page_id \
         WHERE l.workspace_id = $1 AND s.deleted_at IS NULL AND l.target <> s.slug ORDER BY s.slug, l.position",
    )
    .bind(ws_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// (page slug, tag) of every tag of the workspace's live pages, by slug then tag.
pub(crate) async fn live_tags(conn: &mut AnyConnection, ws_id: i64) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "SELECT p.slug, t.tag FROM page_tags t JOIN pages p ON p.id = t.page_id \
         WHERE t.workspace_id = $1 AND p.deleted_at IS NULL ORDER BY p.slug, t.tag",
    )
    .bind(ws_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// (page id, tag) of the tags of those of pages `ids` that are live.
pub(crate) async fn tags_of_live(conn: &mut AnyConnection, ids: &[i64]) -> Result<Vec<(i64, String)>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let sql = format!(
        "SELECT t.page_id, t.tag FROM page_tags t JOIN pages p ON p.id = t.page_id \
         WHERE p.deleted_at IS NULL AND {}",
        in_ids(conn, "t.page_id", "$1")
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql)).bind(ids_json(ids)).fetch_all(&mut *conn).await?)
}

/// The ids of the workspace's pages (live or trashed) tagged `tag`.
pub(crate) async fn tagged(conn: &mut AnyConnection, ws_id: i64, tag: &str) -> Result<Vec<i64>> {
    Ok(sqlx::query_scalar("SELECT page_id FROM page_tags WHERE workspace_id = $1 AND tag = $2")
        .bind(ws_id)
        .bind(tag)
        .fetch_all(&mut *conn)
        .await?)
}

/// The workspace's counters: (changes, the change that last reset its rows, vectors
/// written); zeros before its first save.
pub(crate) async fn counters(conn: &mut AnyConnection, ws_id: i64) -> Result<(i64, i64, i64)> {
    let seqs: Option<(i64, i64, i64)> =
        sqlx::query_as("SELECT seq, reset_at, vector_seq FROM index_seqs WHERE workspace_id = $1")
            .bind(ws_id)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(seqs.unwrap_or((0, 0, 0)))
}

/// Bumps and answers the workspace's vector counter. Called inside the transaction that
/// writes the vectors: the row lock orders their commits by counter, so an index that
/// has seen counter n has seen every write below it.
pub(crate) async fn next_vector_seq_in_tx(tx: &mut AnyConnection, ws_id: i64) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO index_seqs (workspace_id, seq, reset_at, vector_seq) VALUES ($1, 0, 0, 1) \
         ON CONFLICT (workspace_id) DO UPDATE SET vector_seq = index_seqs.vector_seq + 1 RETURNING vector_seq",
    )
    .bind(ws_id)
    .fetch_one(&mut *tx)
    .await?)
}
