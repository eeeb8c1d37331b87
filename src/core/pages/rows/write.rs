//! Writing the index, inside a save's or a reindex's transaction: page rows with their
//! tags, links and search text, revisions, the workspace's head and change counters.

use std::sync::Arc;

use serde_json::json;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, AssertSqlSafe, Row as _};

use super::pages::Lists;
use crate::core::pages::search_text::{self, search_body, search_body_of};
use crate::core::pages::stored;
use crate::error::{Error, Result};
use crate::markdown::{self, Parsed};
use crate::store::{self, Backend, Script, Value};
use crate::text;
use crate::time::Timestamp;

/// A page's index row, as a save or `reindex` writes it.
pub(crate) struct IndexedPage {
    pub uid: String,
    pub slug: String,
    pub title: String,
    pub content: String,
    pub parent_uid: Option<String>,
    pub path: String,
    pub revision: String,
    /// Used only when the row is new.
    pub created_at: Timestamp,
    pub created_by: i64,
    pub updated_at: Timestamp,
    pub updated_by: i64,
    /// When and by whom it was trashed; None for a live page.
    pub deleted: Option<(Timestamp, i64)>,
    /// `content` parsed, when the caller has it already.
    pub parsed: Option<Arc<Parsed>>,
    /// What the write may change of the row (the statement that writes it).
    pub write: RowWrite,
    /// The tags and links the row holds now, when the caller read them with it: a list
    /// that would be written the same again is left as it is.
    pub indexed: Option<Lists>,
    /// The page's place among its siblings, when the write sets it (None: left as it is).
    pub position: Option<Option<i64>>,
}

/// What a page's write may change of its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowWrite {
    /// The row cannot exist yet (a page created with a new id): it has no tags or links
    /// to delete first.
    New,
    /// The row may exist, and any of its fields may change.
    Any,
    /// The row exists and keeps its slug, parent and trash state: an edit. Written by an
    /// `UPDATE` that leaves those columns out, because SQLite rewrites the entries of
    /// every index on a column its `SET` names, changed or not — three index pages fewer
    /// per edit (`(workspace_id, slug)`, `(workspace_id, parent_id)` and the search
    /// filter's).
    Content,
}

pub(crate) struct RevisionRow {
    pub sha: String,
    pub path: String,
    pub blob: Option<String>,
    pub action: String,
    pub title: String,
    pub message: String,
    pub author_id: Option<i64>,
    pub author_name: String,
    pub created_at: Timestamp,
}

/// Workspaces with page rows marked as missing from the full-text index (written by an
/// older release, restored from a backup, or left when the index was rebuilt empty):
/// the start-up check reindexes them. On SQLite a row with compressed markdown has no
/// search title by design (`stored`: the mark is for older releases); this release's
/// SQLite search file keeps its own count of what it has seen.
pub(crate) async fn workspaces_with_stale_search_text(conn: &mut AnyConnection) -> Result<Vec<i64>> {
    let sql = match Backend::of(conn) {
        Backend::Sqlite => "SELECT DISTINCT workspace_id FROM pages WHERE search_title = '' AND content_z IS NULL",
        Backend::Postgres => "SELECT DISTINCT workspace_id FROM pages WHERE search_title = ''",
    };
    Ok(sqlx::query_scalar(sql).fetch_all(&mut *conn).await?)
}

/// How many plain rows one maintenance pass compresses at most (one short transaction).
pub(crate) const COMPRESS_BATCH: i64 = 200;

/// SQLite: compresses the markdown of up to [`COMPRESS_BATCH`] rows that hold it plain
/// (written by an older release, or before this one compressed rows), as a save of this
/// release would keep it (`stored`). A row saved since it was read is left alone (its
/// save compressed it). Answers how many rows changed; 0 on PostgreSQL. The rows are
/// found through a partial index of the plain ones (`pages_plain_markdown_idx`), so a
/// pass that finds none reads nothing of the table.
pub(crate) async fn compress_plain_rows(pool: &sqlx::AnyPool) -> Result<usize> {
    let mut conn = pool.acquire().await?;
    if Backend::of(&conn) != Backend::Sqlite {
        return Ok(0);
    }
    let plain: Vec<(i64, String, i64)> =
        sqlx::query_as("SELECT id, content, index_seq FROM pages WHERE content <> '' AND content_z IS NULL LIMIT $1")
            .bind(COMPRESS_BATCH)
            .fetch_all(&mut *conn)
            .await?;
    if plain.is_empty() {
        return Ok(0);
    }
    // Compressed before the transaction: it holds SQLite's write lock.
    let packed: Vec<(i64, Vec<u8>, i64)> =
        plain.iter().map(|(id, content, seq)| Ok((*id, stored::pack(content)?, *seq))).collect::<Result<_>>()?;
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let mut changed = 0;
    for (id, packed, seq) in packed {
        changed += sqlx::query(
            "UPDATE pages SET content = '', content_z = $1, search_title = '' \
             WHERE id = $2 AND index_seq = $3 AND content_z IS NULL",
        )
        .bind(packed)
        .bind(id)
        .bind(seq)
        .execute(&mut *tx)
        .await?
        .rows_affected() as usize;
    }
    tx.commit().await?;
    Ok(changed)
}

/// The branch head the index has caught up with (compared at start-up).
pub(crate) async fn recorded_head(conn: &mut AnyConnection, ws_id: i64) -> Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT head FROM workspace_heads WHERE workspace_id = $1")
        .bind(ws_id)
        .fetch_optional(&mut *conn)
        .await?)
}

const SET_HEAD: &str = "INSERT INTO workspace_heads (workspace_id, head) VALUES ($1, $2) \
     ON CONFLICT (workspace_id) DO UPDATE SET head = excluded.head";

pub(crate) async fn set_head_in_tx(tx: &mut AnyConnection, ws_id: i64, head: &str) -> Result<()> {
    sqlx::query(SET_HEAD).bind(ws_id).bind(head).execute(&mut *tx).await?;
    Ok(())
}

/// [`set_head_in_tx`] as a statement of a script.
pub(crate) fn set_head(script: &mut Script, ws_id: i64, head: &str) {
    script.push(SET_HEAD, vec![ws_id.into(), head.into()]);
}

/// Bumps workspace `$1`'s change counter (`index_seqs.seq`), creating it at 1.
const BUMP_INDEX_SEQ: &str = "INSERT INTO index_seqs (workspace_id, seq, reset_at, vector_seq) VALUES ($1, 1, 0, 0) \
     ON CONFLICT (workspace_id) DO UPDATE SET seq = index_seqs.seq + 1";

/// Bumps and answers the workspace's change counter (`index_seqs.seq`): what in-process
/// search indexes compare with what they have seen. Called inside the write transaction,
/// under the workspace lock, so counters are committed in order.
pub(crate) async fn next_index_seq_in_tx(tx: &mut AnyConnection, ws_id: i64) -> Result<i64> {
    Ok(sqlx::query_scalar(AssertSqlSafe(format!("{BUMP_INDEX_SEQ} RETURNING seq")))
        .bind(ws_id)
        .fetch_one(&mut *tx)
        .await?)
}

/// Removes every page row of a workspace (and, by cascade, its revisions, tags and
/// links) and its recorded head: the start of a rebuild.
pub(crate) async fn clear_workspace_in_tx(tx: &mut AnyConnection, ws_id: i64) -> Result<()> {
    // In-process search indexes built before this point start again from nothing.
    let seq = next_index_seq_in_tx(tx, ws_id).await?;
    sqlx::query("UPDATE index_seqs SET reset_at = $2 WHERE workspace_id = $1")
        .bind(ws_id)
        .bind(seq)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM pages WHERE workspace_id = $1").bind(ws_id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM workspace_heads WHERE workspace_id = $1").bind(ws_id).execute(&mut *tx).await?;
    Ok(())
}

/// Marks every page row's full-text entry as not written (a restore: the index is
/// derived, and the start-up check writes it again for every row marked so).
pub(crate) async fn forget_fulltext_in_tx(tx: &mut AnyConnection) -> Result<()> {
    sqlx::query("UPDATE pages SET search_title = ''").execute(&mut *tx).await?;
    Ok(())
}

/// Sets a page's parent by the parent's page id (`uid`), as a rebuild learns it.
pub(crate) async fn set_parent_in_tx(tx: &mut AnyConnection, ws_id: i64, page_id: i64, parent_uid: &str) -> Result<()> {
    sqlx::query(
        "UPDATE pages SET parent_id = (SELECT p.id FROM pages p WHERE p.workspace_id = $1 AND p.uid = $2) WHERE id = $3",
    )
    .bind(ws_id)
    .bind(parent_uid)
    .bind(page_id)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

/// The text read (OCR, when it has run) from the images `content` embeds, in index form.
async fn image_text_in_tx(tx: &mut AnyConnection, ws_id: i64, content: &str) -> Result<String> {
    let mut out = String::new();
    for name in crate::ids::upload_names_in(content) {
        let ocr: Option<Option<String>> =
            sqlx::query_scalar("SELECT ocr_text FROM uploads WHERE workspace_id = $1 AND name = $2")
                .bind(ws_id)
                .bind(&name)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(Some(found)) = ocr
            && !found.is_empty()
        {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&text::index_form(&found));
        }
    }
    Ok(out)
}

/// A page that embeds an upload, as [`pages_embedding`] read it.
pub(crate) struct Embedding {
    id: i64,
    content: String,
    search_title: String,
    index_seq: i64,
}

/// The pages of a workspace that embed `upload`, for [`refresh_search_body_in_tx`]. Read
/// outside its transaction: compressed markdown (`stored`) cannot be matched in SQL, so
/// on SQLite every row of the workspace is read and matched here, which must not hold
/// the database's write lock.
pub(crate) async fn pages_embedding(conn: &mut AnyConnection, ws_id: i64, upload: &str) -> Result<Vec<Embedding>> {
    let needle = format!("/uploads/{upload}");
    let rows: Vec<(i64, String, stored::Packed, String, i64)> = sqlx::query_as(
        "SELECT id, content, content_z, search_title, index_seq FROM pages \
         WHERE workspace_id = $1 AND (content LIKE $2 OR content_z IS NOT NULL)",
    )
    .bind(ws_id)
    .bind(format!("%{needle}%"))
    .fetch_all(&mut *conn)
    .await?;
    let mut found = Vec::new();
    for (id, content, packed, search_title, index_seq) in rows {
        let content = stored::read(content, packed)?;
        if content.contains(&needle) {
            found.push(Embedding { id, content, search_title, index_seq });
        }
    }
    Ok(found)
}

/// After an image's text was read: the image text (and PostgreSQL's search vector; for
/// SQLite's search file, a new change counter) of every page that embeds it
/// ([`pages_embedding`]), again. A page saved since it was read is left alone (its save
/// read the text already). Answers how many pages changed.
pub(crate) async fn refresh_search_body_in_tx(
    tx: &mut AnyConnection,
    ws_id: i64,
    pages: Vec<Embedding>,
) -> Result<usize> {
    let backend = Backend::of(tx);
    let mut changed = 0;
    for Embedding { id, content, search_title, index_seq: seen_seq } in pages {
        let image_text = image_text_in_tx(tx, ws_id, &content).await?;
        let seq = next_index_seq_in_tx(tx, ws_id).await?;
        let vector = match backend {
            Backend::Postgres => format!(", search_vector = {}", search_text::pg_vector("$5", "$6")),
            Backend::Sqlite => String::new(),
        };
        let sql = format!("UPDATE pages SET image_text = $1, index_seq = $2{vector} WHERE id = $3 AND index_seq = $4");
        let mut update = sqlx::query(AssertSqlSafe(sql)).bind(&image_text).bind(seq).bind(id).bind(seen_seq);
        if backend == Backend::Postgres {
            update = update.bind(&search_title).bind(search_body(&content, &image_text));
        }
        changed += update.execute(&mut *tx).await?.rows_affected() as usize;
    }
    Ok(changed)
}

/// A page's row id inside a [`Script`]'s statement whose `$1` is the workspace id and
/// `$2` the page's uid (the statements after the row's own do not know the id yet).
const PAGE_ID: &str = "(SELECT id FROM pages WHERE workspace_id = $1 AND uid = $2)";

/// Writes (inserts or updates) a page's row (with PostgreSQL's search vector),
/// embedding-queue entry, tags and links — and, when given, the workspace's head and the
/// page's new revision — as one [`Script`] (one hand-off on SQLite); answers its row id
/// and creation time.
pub(crate) async fn upsert_page_in_tx(
    tx: &mut AnyConnection,
    ws_id: i64,
    p: &IndexedPage,
    head: Option<&str>,
    revision: Option<&RevisionRow>,
) -> Result<(i64, Timestamp)> {
    let script = page_script(tx, ws_id, p, head, revision).await?;
    page_written(&script.run(tx).await?)
}

/// What [`upsert_page_in_tx`] runs, for a caller that adds statements of its own after
/// it (their rows come after the page's one row).
pub(crate) async fn page_script(
    tx: &mut AnyConnection,
    ws_id: i64,
    p: &IndexedPage,
    head: Option<&str>,
    revision: Option<&RevisionRow>,
) -> Result<Script> {
    let parsed = match &p.parsed {
        Some(parsed) => parsed.clone(),
        None => Arc::new(markdown::parse(&p.content)),
    };
    let image_text = image_text_in_tx(tx, ws_id, &p.content).await?;
    let backend = Backend::of(tx);
    let [content, content_z, search_title] = stored::columns_for(backend, &p.content, &p.title)?;
    let mut script = Script::new();
    // The workspace's change counter, which the row then takes (see `next_index_seq_in_tx`).
    script.push(BUMP_INDEX_SEQ, vec![ws_id.into()]);
    let text = RowText { content, content_z, search_title };
    let (statement, mut values) = match p.write {
        RowWrite::Content => (edit(backend), edit_values(ws_id, p, text, &image_text)),
        RowWrite::New | RowWrite::Any => (upsert(backend), upsert_values(ws_id, p, text, &image_text)),
    };
    if backend == Backend::Postgres {
        values.push(search_body_of(&parsed.text, &image_text).into());
    }
    script.push(statement, values);
    let page = || -> Vec<Value> { vec![ws_id.into(), (&p.uid).into()] };
    let with_page = |more: Vec<Value>| -> Vec<Value> { page().into_iter().chain(more).collect() };
    if let Some(position) = p.position {
        script.push(
            "UPDATE pages SET position = $3 WHERE workspace_id = $1 AND uid = $2",
            with_page(vec![position.into()]),
        );
    }
    // Embedding happens off the request path: the worker picks this row up. One row per
    // page at most, so the queue stays bounded while semantic search is off.
    script.push(
        "INSERT INTO embed_queue (page_id, workspace_id, index_seq, attempts, queued_at) \
         SELECT id, workspace_id, index_seq, 0, $3 FROM pages WHERE workspace_id = $1 AND uid = $2 \
         ON CONFLICT (page_id) DO UPDATE SET index_seq = excluded.index_seq, attempts = 0, \
           queued_at = excluded.queued_at, locked_until = NULL",
        with_page(vec![(&p.updated_at).into()]),
    );
    let links: Vec<&str> = parsed.links.iter().map(|l| l.slug.as_str()).collect();
    // An edit that keeps the page's tags or links leaves their rows alone: two statements
    // fewer each (on PostgreSQL, two round trips), and no index entries rewritten.
    let (same_tags, same_links) = p.indexed.as_ref().map_or((false, false), |now| now.hold(&parsed.tags, &links));
    if p.write != RowWrite::New && !same_tags {
        script.push(format!("DELETE FROM page_tags WHERE page_id = {PAGE_ID}"), page());
    }
    if p.write != RowWrite::New && !same_links {
        script.push(format!("DELETE FROM page_links WHERE page_id = {PAGE_ID}"), page());
    }
    let list = store::json_strings(backend, "$3");
    if !parsed.tags.is_empty() && !same_tags {
        script.push(
            format!("INSERT INTO page_tags (page_id, workspace_id, tag) SELECT {PAGE_ID}, $1, j.value FROM {list}"),
            with_page(vec![json!(parsed.tags).to_string().into()]),
        );
    }
    if !links.is_empty() && !same_links {
        script.push(
            format!(
                "INSERT INTO page_links (page_id, workspace_id, target, position) \
                 SELECT {PAGE_ID}, $1, j.value, j.key FROM {list}"
            ),
            with_page(vec![json!(links).to_string().into()]),
        );
    }
    if let Some(r) = revision {
        script.push(
            format!("INSERT INTO revisions {REVISION_COLUMNS} VALUES ($1, {PAGE_ID}, {REVISION_VALUES})"),
            with_page(revision_values(r)),
        );
    }
    if let Some(head) = head {
        set_head(&mut script, ws_id, head);
    }
    Ok(script)
}

/// The page's row id and creation time, from the rows a [`page_script`] returned.
pub(crate) fn page_written(rows: &[AnyRow]) -> Result<(i64, Timestamp)> {
    let row = rows.first().ok_or_else(|| Error::internal(anyhow::anyhow!("a page's row write returned no row")))?;
    Ok((row.try_get("id")?, row.try_get("created_at")?))
}

/// PostgreSQL's search vector is a column of the row, computed from the search title and
/// one extra parameter, the search text (given by their numbers); SQLite's search file is
/// written after the commit, from the row (`fulltext::catch_up`).
fn search_vector(backend: Backend, title: &str, body: &str) -> Option<String> {
    (backend == Backend::Postgres).then(|| search_text::pg_vector(title, body))
}

/// One statement for new and existing rows: the row is keyed by the page id kept in the
/// commit trailers, and creation fields are written only once. `body` is emptied (rows
/// of older releases held the search text there).
fn upsert(backend: Backend) -> String {
    let vector = search_vector(backend, "$16", "$18");
    let (vector_column, vector_value, vector_set) = match &vector {
        Some(v) => (", search_vector", format!(", {v}"), ", search_vector = excluded.search_vector"),
        None => ("", String::new(), ""),
    };
    format!(
        "INSERT INTO pages (workspace_id, uid, slug, title, content, image_text, parent_id, path, revision, \
         created_at, created_by, updated_at, updated_by, deleted_at, deleted_by, search_title, content_z, index_seq{vector_column}) \
         VALUES ($1, $2, $3, $4, $5, $6, (SELECT id FROM pages WHERE workspace_id = $1 AND uid = $7), \
                 $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
                 (SELECT seq FROM index_seqs WHERE workspace_id = $1){vector_value}) \
         ON CONFLICT (workspace_id, uid) DO UPDATE SET slug = excluded.slug, title = excluded.title, \
           content = excluded.content, content_z = excluded.content_z, image_text = excluded.image_text, body = '', \
           search_title = excluded.search_title, parent_id = excluded.parent_id, path = excluded.path, \
           revision = excluded.revision, updated_at = excluded.updated_at, updated_by = excluded.updated_by, \
           deleted_at = excluded.deleted_at, deleted_by = excluded.deleted_by, index_seq = excluded.index_seq{vector_set} \
         RETURNING id, created_at"
    )
}

/// A page's markdown and search title as its row keeps them (`stored::columns_for`).
struct RowText {
    content: Value,
    content_z: Value,
    search_title: Value,
}

/// The upsert's parameters but PostgreSQL's search text (`$18`).
fn upsert_values(ws_id: i64, p: &IndexedPage, text: RowText, image_text: &str) -> Vec<Value> {
    let (deleted_at, deleted_by) = match &p.deleted {
        Some((at, by)) => (Some(at.clone()), Some(*by)),
        None => (None, None),
    };
    vec![
        ws_id.into(),
        (&p.uid).into(),
        (&p.slug).into(),
        (&p.title).into(),
        text.content,
        image_text.into(),
        p.parent_uid.as_ref().into(),
        (&p.path).into(),
        (&p.revision).into(),
        (&p.created_at).into(),
        p.created_by.into(),
        (&p.updated_at).into(),
        p.updated_by.into(),
        deleted_at.into(),
        deleted_by.into(),
        text.search_title,
        text.content_z,
    ]
}

/// An edit ([`RowWrite::Content`]): the columns an edit changes, and none that an index
/// holds but `updated_at` and `index_seq`, which move at every save.
fn edit(backend: Backend) -> String {
    let vector_set = search_vector(backend, "$9", "$11").map_or_else(String::new, |v| format!(", search_vector = {v}"));
    format!(
        "UPDATE pages SET title = $3, content = $4, content_z = $5, image_text = $6, body = '', \
           search_title = $9, revision = $7, updated_at = $8, updated_by = $10, \
           index_seq = (SELECT seq FROM index_seqs WHERE workspace_id = $1){vector_set} \
         WHERE workspace_id = $1 AND uid = $2 \
         RETURNING id, created_at"
    )
}

/// The edit's parameters but PostgreSQL's search text (`$11`).
fn edit_values(ws_id: i64, p: &IndexedPage, text: RowText, image_text: &str) -> Vec<Value> {
    vec![
        ws_id.into(),
        (&p.uid).into(),
        (&p.title).into(),
        text.content,
        text.content_z,
        image_text.into(),
        (&p.revision).into(),
        (&p.updated_at).into(),
        text.search_title,
        p.updated_by.into(),
    ]
}

const REVISION_COLUMNS: &str =
    "(workspace_id, page_id, sha, path, blob, action, title, message, author_id, author_name, created_at)";
/// A revision's values after its workspace and page: `$3` to `$11`.
const REVISION_VALUES: &str = "$3, $4, $5, $6, $7, $8, $9, $10, $11";

fn revision_values(r: &RevisionRow) -> Vec<Value> {
    vec![
        (&r.sha).into(),
        (&r.path).into(),
        r.blob.as_ref().into(),
        (&r.action).into(),
        (&r.title).into(),
        (&r.message).into(),
        r.author_id.into(),
        (&r.author_name).into(),
        (&r.created_at).into(),
    ]
}

/// One revision row (reindex writes a page's whole history; a save writes its revision
/// with the page's row, in [`upsert_page_in_tx`]).
pub(crate) async fn insert_revision_in_tx(
    tx: &mut AnyConnection,
    ws_id: i64,
    page_id: i64,
    r: &RevisionRow,
) -> Result<()> {
    let mut script = Script::new();
    script.push(format!("INSERT INTO revisions {REVISION_COLUMNS} VALUES ($1, $2, {REVISION_VALUES})"), {
        let mut v: Vec<Value> = vec![ws_id.into(), page_id.into()];
        v.extend(revision_values(r));
        v
    });
    script.run(tx).await?;
    Ok(())
}

/// Removes a page's row (revisions, tags and links go by cascade) and its co-editing
/// document; its children, if any are left, move to the top level.
pub(crate) async fn purge_in_tx(tx: &mut AnyConnection, ws_id: i64, uid: &str) -> Result<()> {
    let id: Option<i64> = sqlx::query_scalar("SELECT id FROM pages WHERE workspace_id = $1 AND uid = $2")
        .bind(ws_id)
        .bind(uid)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(id) = id else { return Ok(()) };
    sqlx::query("UPDATE pages SET parent_id = NULL WHERE parent_id = $1").bind(id).execute(&mut *tx).await?;
    sqlx::query("DELETE FROM pages WHERE id = $1").bind(id).execute(&mut *tx).await?;
    // Its co-editing document (core/live) holds its text too.
    sqlx::query("DELETE FROM live_updates WHERE workspace_id = $1 AND page_uid = $2")
        .bind(ws_id)
        .bind(uid)
        .execute(&mut *tx)
        .await?;
    Ok(())
}
