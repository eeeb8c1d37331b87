//! Workspace export: a zip with one `.md` per live page, laid out like the page tree
//! (`parent/child.md`), each the stored markdown byte for byte except that its links to
//! uploads are relative to the file (`../uploads/<name>`), and every upload a page embeds
//! as `uploads/<name>` — so the zip opens in other markdown tools as it does in Cairn.
//! Beside them, `cairn.json` ([`Manifest`]) names each file's page: its title, which the
//! markdown alone may not carry (a title set by hand), so that `cairn import` of the zip
//! gives every page back as it was.
//!
//! The zip is written on the blocking pool straight into a bounded channel that feeds the
//! response body, so memory stays flat whatever the workspace's size: one page's content
//! and one 64 KiB chunk at a time (plus the zip's small per-file directory entries).

use std::collections::HashMap;
use std::io::Write;

use axum::body::Bytes;
use futures_util::Stream;
use zip::write::SimpleFileOptions;

use crate::core::Ctx;
use crate::core::pages::rows;
use crate::core::uploads;
use crate::core::workspaces::Access;
use crate::error::Result;
use crate::git;
use crate::markdown::{self, LinkKind};

const CHUNK: usize = 64 * 1024;

/// `cairn.json`, at the root of an export: what the files alone do not say.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Manifest {
    /// What wrote it: `cairn-export`.
    pub format: String,
    pub version: u32,
    pub pages: Vec<ManifestPage>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct ManifestPage {
    /// The page's file in the zip.
    pub path: String,
    pub slug: String,
    pub title: String,
}

impl Manifest {
    /// Its name in the zip.
    pub(crate) const FILE: &'static str = "cairn.json";
    pub(crate) const FORMAT: &'static str = "cairn-export";
}

/// `io::Write` into a channel of chunks.
struct ChannelWriter {
    tx: tokio::sync::mpsc::Sender<std::io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            let chunk = Bytes::from(std::mem::take(&mut self.buf));
            // The receiver is gone when the client hung up: stop writing.
            self.tx.blocking_send(Ok(chunk)).map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        }
        Ok(())
    }
}

/// One live page's file: (path in the zip, path in the repository, its manifest entry).
type Entry = (String, String, ManifestPage);

/// Every live page's file, by path in the zip.
async fn entries(ctx: &Ctx, access: &Access) -> Result<Vec<Entry>> {
    let mut conn = ctx.db.pool.acquire().await?;
    let rows = rows::live_tree(&mut conn, access.workspace_id()).await?;
    let by_id: HashMap<i64, (&str, Option<i64>)> =
        rows.iter().map(|(id, s, _, p, _)| (*id, (s.as_str(), *p))).collect();
    let mut out = Vec::with_capacity(rows.len());
    for (_, slug, title, parent, _) in &rows {
        let mut parts = vec![slug.as_str()];
        let mut next = *parent;
        while let Some(id) = next {
            let Some((s, p)) = by_id.get(&id) else { break };
            if parts.len() > 256 {
                break;
            }
            parts.push(s);
            next = *p;
        }
        parts.reverse();
        let path = format!("{}.md", parts.join("/"));
        let page = ManifestPage { path: path.clone(), slug: slug.clone(), title: title.clone() };
        out.push((path, git::live_path(slug), page));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// `markdown` with its links to uploads (`/uploads/<name>`) made relative to a page file
/// `depth` folders deep (`../uploads/<name>`), so the zip opens as it is in other markdown
/// tools; `cairn import` of the zip makes them `/uploads/<name>` again. None when the
/// page links no upload (a non-UTF-8 file is never rewritten: it holds none).
fn relative_uploads(markdown: &str, depth: usize) -> Option<String> {
    if !markdown.contains("/uploads/") {
        return None;
    }
    let up = "../".repeat(depth);
    let edits: Vec<_> = markdown::link_spans(markdown)
        .into_iter()
        .filter(|l| matches!(l.kind, LinkKind::Inline | LinkKind::InlineImage))
        .filter_map(|l| {
            let name = markdown[l.target.clone()].strip_prefix("/uploads/")?;
            crate::ids::is_upload_name(name).then(|| (l.target.clone(), format!("{up}uploads/{name}")))
        })
        .collect();
    (!edits.is_empty()).then(|| markdown::apply_edits(markdown, edits))
}

pub(crate) async fn zip_stream(
    ctx: &Ctx,
    access: &Access,
) -> Result<impl Stream<Item = std::io::Result<Bytes>> + use<>> {
    let files = entries(ctx, access).await?;
    let dir = ctx.workspace_dir(access.slug());
    let uploads_dir = uploads::workspace_dir(ctx, access.slug());
    let known = uploads::names(ctx, access).await?;
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::task::spawn_blocking(move || {
        let err_tx = tx.clone();
        let result = (|| -> anyhow::Result<()> {
            let mut zip = zip::ZipWriter::new_stream(ChannelWriter { tx, buf: Vec::with_capacity(CHUNK) });
            let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            // A repository of its own: a long export never holds the save path's handle.
            if let Ok(repo) = git2::Repository::open_bare(&dir)
                && let Some(head) = git::head(&repo)?
            {
                let tree = repo.find_commit(head)?.tree()?;
                let mut embedded: Vec<String> = Vec::new();
                let mut manifest = Manifest {
                    format: Manifest::FORMAT.to_owned(),
                    version: 1,
                    pages: Vec::with_capacity(files.len()),
                };
                for (name, path, page) in files {
                    let Ok(entry) = tree.get_path(std::path::Path::new(&path)) else { continue };
                    manifest.pages.push(page);
                    let blob = repo.find_blob(entry.id())?;
                    let depth = name.matches('/').count();
                    zip.start_file(name, options)?;
                    let text = String::from_utf8_lossy(blob.content());
                    match relative_uploads(&text, depth) {
                        Some(relinked) => zip.write_all(relinked.as_bytes())?,
                        None => zip.write_all(blob.content())?,
                    }
                    for upload in crate::ids::upload_names_in(&text) {
                        if !embedded.contains(&upload) {
                            embedded.push(upload);
                        }
                    }
                }
                zip.start_file(Manifest::FILE, options)?;
                serde_json::to_writer_pretty(&mut zip, &manifest)?;
                // Images are compressed already: stored as they are.
                let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
                // Only this workspace's uploads, as its uploads table lists them: a name
                // uploaded elsewhere, or a file an earlier workspace left, is not leaked.
                for name in embedded.into_iter().filter(|n| known.contains(n)) {
                    let Ok(mut file) = std::fs::File::open(uploads_dir.join(&name)) else { continue };
                    zip.start_file(format!("uploads/{name}"), stored)?;
                    std::io::copy(&mut file, &mut zip)?;
                }
            }
            let mut w = zip.finish()?.into_inner();
            w.flush()?;
            Ok(())
        })();
        if let Err(e) = result {
            tracing::warn!(error = %e, "export stopped");
            let _ = err_tx.blocking_send(Err(std::io::Error::other("export failed")));
        }
    });
    Ok(futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) }))
}
