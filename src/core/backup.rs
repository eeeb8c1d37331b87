//! `cairn backup DIR` and `cairn restore DIR`.
//!
//! The database first, the files second. The database half is
//! a logical dump written by Cairn itself — every row of every table this release knows,
//! read in one snapshot transaction — as JSON lines (`database.jsonl`). One format for
//! both engines (it also moves an instance from SQLite to PostgreSQL), restored by the
//! same code path. The files half is a mirror clone of each workspace repository (whose
//! refs are read once, so the copy is consistent) plus the rest of `DATA_DIR`. A page
//! saved between the two halves exists in the files without an index row: the start-up
//! check after a restore finds the branch head ahead of the index and reindexes it.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use base64::Engine;
use serde_json::{Map, Value, json};
use sqlx::{AnyConnection, Column, Row};

use crate::core::Ctx;
use crate::store::{Backend, schema, search_file};

const DUMP: &str = "database.jsonl";
const FILES: &str = "files";
const MANIFEST: &str = "backup.json";

/// Columns never dumped: derived (the index entry is written again after a restore).
const GENERATED: &[&str] = &["search_vector"];

#[derive(Debug, Default)]
pub struct Summary {
    pub rows: usize,
    pub repositories: usize,
}

fn value_of(row: &sqlx::any::AnyRow, i: usize) -> Value {
    if let Ok(v) = row.try_get::<Option<i64>, _>(i) {
        return v.map_or(Value::Null, Value::from);
    }
    if let Ok(v) = row.try_get::<Option<String>, _>(i) {
        return v.map_or(Value::Null, Value::from);
    }
    if let Ok(v) = row.try_get::<Option<f64>, _>(i) {
        return v.map_or(Value::Null, Value::from);
    }
    if let Ok(v) = row.try_get::<Option<Vec<u8>>, _>(i) {
        return v.map_or(Value::Null, |b| json!({"$bytes": base64::engine::general_purpose::STANDARD.encode(b)}));
    }
    Value::Null
}

fn prepare_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        bail!("{} is not empty; back up into a new directory", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(())
}

/// Writes a backup of the whole instance into `dir` (which must be empty or missing).
pub async fn backup(ctx: &Ctx, dir: &Path) -> anyhow::Result<Summary> {
    prepare_dir(dir)?;
    let mut summary = Summary::default();

    // 1. The database, in one snapshot.
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join(DUMP))?);
    let mut tx = ctx.db.snapshot().await?;
    let mut counts = Map::new();
    for table in schema::table_names() {
        let columns: Vec<String> = schema::columns_of(&mut tx, ctx.db.backend, table)
            .await?
            .into_iter()
            .filter(|c| !GENERATED.contains(&c.as_str()))
            .collect();
        let sql = format!("SELECT {} FROM {table}", columns.join(", "));
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch_all(&mut *tx).await?;
        for row in &rows {
            let mut obj = Map::new();
            for (i, col) in row.columns().iter().enumerate() {
                obj.insert(col.name().to_owned(), value_of(row, i));
            }
            serde_json::to_writer(&mut out, &json!({"table": table, "row": obj}))?;
            out.write_all(b"\n")?;
        }
        counts.insert(table.to_owned(), json!(rows.len()));
        summary.rows += rows.len();
    }
    tx.rollback().await.ok();
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;

    // 2. The files.
    let data = ctx.config.data_dir.clone();
    let files = dir.join(FILES);
    let db_file = ctx.config.database_url().strip_prefix("sqlite://").map(PathBuf::from);
    summary.repositories = tokio::task::spawn_blocking(move || copy_files(&data, &files, db_file.as_deref())).await??;

    let manifest = json!({
        "cairn_version": crate::core::VERSION,
        "created_at": ctx.clock.rfc3339(),
        "backend": ctx.db.backend.name(),
        "rows": counts,
        "repositories": summary.repositories,
    });
    std::fs::write(dir.join(MANIFEST), serde_json::to_vec_pretty(&manifest)?)?;
    Ok(summary)
}

/// Mirrors every workspace repository and copies the rest of `DATA_DIR` (but not an
/// embedded SQLite database, which the dump holds, nor its search file, which is derived
/// and made again from the rows).
fn copy_files(data: &Path, to: &Path, db_file: Option<&Path>) -> anyhow::Result<usize> {
    std::fs::create_dir_all(to)?;
    let mut repos = 0;
    for entry in std::fs::read_dir(data)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let is_db = db_file.is_some_and(|db| {
            let db_name = db.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name == db_name || name == format!("{db_name}-wal") || name == format!("{db_name}-shm")
        });
        if is_db
            || search_file::is_search_file(&name)
            || name == crate::store::compact::LOCK_FILE
            || name.starts_with(".cairn-write-probe")
        {
            continue;
        }
        if name == "workspaces" {
            std::fs::create_dir_all(to.join("workspaces"))?;
            for repo in std::fs::read_dir(&path)? {
                let repo = repo?;
                let target = to.join("workspaces").join(repo.file_name());
                git2::build::RepoBuilder::new()
                    .bare(true)
                    .clone(&repo.path().to_string_lossy(), &target)
                    .with_context(|| format!("cannot copy repository {}", repo.path().display()))?;
                repos += 1;
            }
        } else {
            copy_tree(&path, &to.join(&name))?;
        }
    }
    Ok(repos)
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for e in std::fs::read_dir(from)? {
            let e = e?;
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
    } else {
        std::fs::copy(from, to)?;
    }
    Ok(())
}

/// Restores a backup into this instance, whose database and `DATA_DIR` must be empty.
pub async fn restore(ctx: &Ctx, dir: &Path) -> anyhow::Result<Summary> {
    let dump = dir.join(DUMP);
    if !dump.is_file() || !dir.join(FILES).is_dir() {
        bail!("{} is not a Cairn backup (no {DUMP} or {FILES}/)", dir.display());
    }
    let users: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(&ctx.db.pool).await?;
    let ws_dir = ctx.config.data_dir.join("workspaces");
    if users > 0 || (ws_dir.exists() && std::fs::read_dir(&ws_dir)?.next().is_some()) {
        bail!("restore needs an empty database and DATA_DIR");
    }
    let mut summary = Summary::default();
    // Files first here: the index rows must not point at commits that are not there yet.
    let (from, to) = (dir.join(FILES), ctx.config.data_dir.clone());
    summary.repositories = tokio::task::spawn_blocking(move || -> anyhow::Result<usize> {
        copy_tree(&from, &to)?;
        Ok(std::fs::read_dir(to.join("workspaces")).map(|d| d.count()).unwrap_or(0))
    })
    .await??;

    // The server's own workers may write meanwhile: `Db::write` holds the write lock
    // from the start, so reading the columns first cannot make the inserts fail.
    let mut tx = ctx.db.write().await?;
    let mut known: std::collections::HashMap<String, Vec<(String, NullKind)>> = Default::default();
    for table in schema::table_names() {
        known.insert(table.to_owned(), column_kinds(&mut tx, ctx.db.backend, table).await?);
    }
    let reader = std::io::BufReader::new(std::fs::File::open(&dump)?);
    for line in reader.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let record: Value = serde_json::from_str(&line).context("corrupt backup line")?;
        let table = record["table"].as_str().unwrap_or_default();
        // Convergence already wrote this release's fingerprints; unknown tables are
        // those of a newer release.
        let Some(columns) = known.get(table).filter(|_| table != "schema_meta") else { continue };
        let Some(row) = record["row"].as_object() else { continue };
        insert_row(&mut tx, table, columns, row).await?;
        summary.rows += 1;
    }
    // The full-text index is derived and not in the dump: the start-up check after a
    // restore (`reindex::repair`) writes it for every page marked so.
    crate::core::pages::rows::forget_fulltext_in_tx(&mut tx).await?;
    if ctx.db.backend == Backend::Postgres {
        for table in schema::table_names().filter(|t| schema::has_serial_id(t)) {
            let sql = format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
            );
            sqlx::query(sqlx::AssertSqlSafe(sql)).execute(&mut *tx).await?;
        }
    }
    tx.commit().await?;
    Ok(summary)
}

/// The type a NULL must be bound as: PostgreSQL refuses a text NULL in a bigint column.
#[derive(Clone, Copy)]
enum NullKind {
    Int,
    Float,
    Bytes,
    Text,
}

async fn column_kinds(
    conn: &mut AnyConnection,
    backend: Backend,
    table: &str,
) -> anyhow::Result<Vec<(String, NullKind)>> {
    let names = schema::columns_of(conn, backend, table).await?;
    if backend == Backend::Sqlite {
        // SQLite is dynamically typed: any NULL fits.
        return Ok(names.into_iter().map(|n| (n, NullKind::Text)).collect());
    }
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT column_name::text, data_type::text FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name = $1",
    )
    .bind(table)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(name, ty)| {
            let kind = match ty.as_str() {
                "bigint" | "integer" | "smallint" => NullKind::Int,
                "double precision" | "real" | "numeric" => NullKind::Float,
                "bytea" => NullKind::Bytes,
                _ => NullKind::Text,
            };
            (name, kind)
        })
        .collect())
}

async fn insert_row(
    tx: &mut AnyConnection,
    table: &str,
    known: &[(String, NullKind)],
    row: &Map<String, Value>,
) -> anyhow::Result<()> {
    let kind_of = |k: &str| known.iter().find(|(n, _)| n == k).map(|(_, kind)| *kind);
    let cols: Vec<(&String, &Value)> =
        row.iter().filter(|(k, _)| kind_of(k).is_some() && !GENERATED.contains(&k.as_str())).collect();
    let names: Vec<&str> = cols.iter().map(|(k, _)| k.as_str()).collect();
    let marks: Vec<String> = (1..=cols.len()).map(|i| format!("${i}")).collect();
    let sql = format!("INSERT INTO {table} ({}) VALUES ({})", names.join(", "), marks.join(", "));
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
    for (k, v) in &cols {
        q = match v {
            Value::Null => match kind_of(k) {
                Some(NullKind::Int) => q.bind(None::<i64>),
                Some(NullKind::Float) => q.bind(None::<f64>),
                Some(NullKind::Bytes) => q.bind(None::<Vec<u8>>),
                _ => q.bind(None::<String>),
            },
            Value::Number(n) if n.is_i64() => q.bind(n.as_i64()),
            Value::Number(n) => q.bind(n.as_f64()),
            Value::String(s) => q.bind(s.clone()),
            Value::Object(o) if o.contains_key("$bytes") => {
                let b64 = o["$bytes"].as_str().unwrap_or_default();
                q.bind(base64::engine::general_purpose::STANDARD.decode(b64)?)
            }
            other => q.bind(other.to_string()),
        };
    }
    q.execute(&mut *tx).await.with_context(|| format!("cannot restore a row of {table}"))?;
    Ok(())
}
