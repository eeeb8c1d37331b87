//! Text in uploaded images (`OCR_UPLOADS=1`), found by Tesseract run as a separate
//! process — with a timeout, a memory limit (`prlimit --as`) and one thread — so a
//! hostile image can hang or bloat only that process. The text is kept on the upload's
//! row and joins the search text of every page that embeds the image.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::config::Config;
use crate::core::Ctx;
use crate::core::pages::rows;
use crate::error::Result;

/// Longest one image may take.
const TIMEOUT: Duration = Duration::from_secs(60);
/// Address space one Tesseract process may use.
const MEMORY_LIMIT_BYTES: u64 = 1024 * 1024 * 1024;
/// Longest text kept per image.
const MAX_TEXT_CHARS: usize = 20_000;

/// Whether OCR is on, and if not although asked for, why.
#[derive(Debug, Default)]
pub struct Ocr {
    /// The engine's version line when `OCR_UPLOADS=1` and `tesseract` runs.
    engine: Option<String>,
    /// Wrap the engine in `prlimit` (util-linux) when it is present.
    prlimit: bool,
    problem: Option<String>,
}

impl Ocr {
    /// Looks for the engine once, at start-up (a fraction of a second, only when asked for).
    pub fn detect(config: &Config) -> Ocr {
        if !config.ocr_uploads.on() {
            return Ocr::default();
        }
        let version = std::process::Command::new("tesseract").arg("--version").stdin(Stdio::null()).output();
        match version {
            Ok(out) if out.status.success() => {
                let text = String::from_utf8_lossy(&out.stdout);
                let line = text.lines().next().unwrap_or("tesseract").trim().to_owned();
                let prlimit = std::process::Command::new("prlimit")
                    .arg("--version")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                tracing::info!(engine = %line, prlimit, "OCR of uploads is on");
                Ocr { engine: Some(line), prlimit, problem: None }
            }
            _ => {
                let why = "the `tesseract` command was not found (install tesseract-ocr)".to_owned();
                tracing::warn!(%why, "OCR_UPLOADS=1 but OCR is off");
                Ocr { engine: None, prlimit: false, problem: Some(why) }
            }
        }
    }

    pub fn usable(&self) -> bool {
        self.engine.is_some()
    }

    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// The text Tesseract reads in an image; empty when it finds none or fails.
    pub async fn extract(&self, image: &Path) -> String {
        let mut cmd = if self.prlimit {
            let mut c = tokio::process::Command::new("prlimit");
            c.arg(format!("--as={MEMORY_LIMIT_BYTES}")).arg("--").arg("tesseract");
            c
        } else {
            tokio::process::Command::new("tesseract")
        };
        cmd.arg(image)
            .arg("stdout")
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let run = async { cmd.output().await };
        match tokio::time::timeout(TIMEOUT, run).await {
            Ok(Ok(out)) if out.status.success() => String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(MAX_TEXT_CHARS)
                .collect(),
            Ok(Ok(out)) => {
                tracing::warn!(image = %image.display(), status = %out.status, "OCR failed");
                String::new()
            }
            Ok(Err(e)) => {
                tracing::warn!(image = %image.display(), error = %e, "OCR could not run");
                String::new()
            }
            Err(_) => {
                tracing::warn!(image = %image.display(), "OCR timed out");
                String::new()
            }
        }
    }
}

/// Reads the text of up to `limit` uploads not yet looked at, and refreshes the search
/// text of the pages that embed them. Answers how many uploads were read.
pub(crate) async fn ocr_pending(ctx: &Ctx, limit: i64) -> Result<usize> {
    if !ctx.ocr.usable() {
        return Ok(0);
    }
    let todo: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT u.workspace_id, w.slug, u.name FROM uploads u JOIN workspaces w ON w.id = u.workspace_id \
         WHERE u.ocr_text IS NULL ORDER BY u.created_at LIMIT $1",
    )
    .bind(limit)
    .fetch_all(&ctx.db.pool)
    .await?;
    for (ws_id, slug, name) in &todo {
        let text = ctx.ocr.extract(&super::file_path(ctx, slug, name)).await;
        sqlx::query("UPDATE uploads SET ocr_text = $1 WHERE workspace_id = $2 AND name = $3")
            .bind(&text)
            .bind(ws_id)
            .bind(name)
            .execute(&ctx.db.pool)
            .await?;
        if !text.is_empty() {
            let embedding = rows::pages_embedding(&mut *ctx.db.pool.acquire().await?, *ws_id, name).await?;
            let mut tx = ctx.db.write().await?;
            let pages = rows::refresh_search_body_in_tx(&mut tx, *ws_id, embedding).await?;
            tx.commit().await?;
            if let (Some(search), true) = (&ctx.db.search, pages > 0) {
                search.changed(*ws_id);
            }
            tracing::info!(workspace = %slug, %name, chars = text.len(), pages, "image text read");
        }
    }
    Ok(todo.len())
}
