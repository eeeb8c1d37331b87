//! Image uploads (docs/uploads.md): sniffed, content-addressed, private to their workspace.
//!
//! An upload is streamed to a temporary file under `DATA_DIR/uploads/.tmp/` while it is
//! counted, hashed and sniffed — never held in memory, and refused (413) the moment it
//! passes `UPLOAD_MAX_BYTES`. Its type comes from its first bytes alone (the client's
//! claim is ignored); only PNG, JPEG, GIF, WebP and AVIF pass. Kept, it is
//! `DATA_DIR/uploads/<workspace>/<sha256>.<ext>` — inside `DATA_DIR`, so backups and
//! restores carry it — and a row in `uploads` says which workspace may see it.

pub(crate) mod ocr;
mod svg_refs;

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use utoipa::ToSchema;

use super::Ctx;
use super::users::User;
use super::workspaces::{self, Access};
use crate::error::{Error, Result};
use crate::ids;

/// Bytes looked at to judge a type (AVIF's `ftyp` box needs a few dozen).
const SNIFF_BYTES: usize = 256;

/// The accepted types: (MIME type, extension of the stored name; see `ids::UPLOAD_EXTENSIONS`).
pub(crate) const TYPES: [(&str, &str); 6] = [
    ("image/png", "png"),
    ("image/jpeg", "jpg"),
    ("image/gif", "gif"),
    ("image/webp", "webp"),
    ("image/avif", "avif"),
    (SVG.0, SVG.1),
];

/// SVG: judged by its first bytes as XML that may be an SVG image, and kept only as
/// [`sanitized_svg`] leaves it (which refuses what is not one).
const SVG: (&str, &str) = ("image/svg+xml", "svg");

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Upload {
    /// `<sha256>.<ext>`.
    pub name: String,
    /// Where it is served: `/uploads/<name>` (needs a credential).
    pub url: String,
    /// The type judged from the bytes.
    pub content_type: String,
    pub size: i64,
}

/// The MIME type and extension of an accepted image, judged from its first bytes.
pub(crate) fn sniff(head: &[u8]) -> Option<(&'static str, &'static str)> {
    if looks_like_svg(head) {
        return Some(SVG);
    }
    let mime = infer::get(head)?.mime_type();
    TYPES.iter().copied().find(|(m, _)| *m == mime)
}

/// Text that starts as an SVG file does: `<svg`, or an XML declaration, a comment or a
/// doctype before it (the root is checked when the whole file is read).
fn looks_like_svg(head: &[u8]) -> bool {
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = text.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(text.len());
    let text = &text[start..];
    text.starts_with(b"<svg")
        || text.starts_with(b"<?xml")
        || text.starts_with(b"<!--")
        || text.starts_with(b"<!DOCTYPE svg")
}

/// An SVG image as it is kept: filtered by svg-hush (no script, event handlers, external
/// references, `foreignObject`; `data:` URLs only for standard images), then its
/// references kept to its own `#fragments` ([`svg_refs`]), its root an
/// `<svg>` element. None when it is not one (malformed XML, another root).
pub(crate) fn sanitized_svg(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut filter = svg_hush::Filter::new();
    filter.set_data_url_filter(svg_hush::data_url_filter::allow_standard_images);
    let mut out = Vec::with_capacity(bytes.len());
    filter.filter(&mut &bytes[..], &mut out).ok()?;
    let out = svg_refs::only_fragment_references(&out)?;
    let root = root_is_svg(&out);
    root.then_some(out)
}

/// Whether the document's first element is `<svg>` (in the SVG namespace or none).
fn root_is_svg(doc: &[u8]) -> bool {
    let text = String::from_utf8_lossy(doc);
    let mut rest = text.as_ref();
    // Past the declaration, comments and doctype: the first element's name.
    loop {
        let Some(at) = rest.find('<') else { return false };
        rest = &rest[at + 1..];
        if rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let name: String = rest.chars().take_while(|c| !c.is_whitespace() && *c != '>' && *c != '/').collect();
        return name == "svg" || name.ends_with(":svg");
    }
}

/// The bytes an image is kept as, and its type: SVG sanitized, every other type as sent.
/// None when it is not an accepted image.
pub(crate) fn kept_form(bytes: &[u8]) -> Option<(std::borrow::Cow<'_, [u8]>, &'static str, &'static str)> {
    let (mime, ext) = sniff(&bytes[..bytes.len().min(SNIFF_BYTES)])?;
    if (mime, ext) == SVG {
        return sanitized_svg(bytes).map(|clean| (std::borrow::Cow::Owned(clean), mime, ext));
    }
    Some((std::borrow::Cow::Borrowed(bytes), mime, ext))
}

fn uploads_dir(ctx: &Ctx) -> PathBuf {
    ctx.config.data_dir.join("uploads")
}

/// Where a workspace's uploads live.
pub(crate) fn workspace_dir(ctx: &Ctx, workspace: &str) -> PathBuf {
    uploads_dir(ctx).join(workspace)
}

/// Where a workspace's upload lives.
pub(crate) fn file_path(ctx: &Ctx, workspace: &str, name: &str) -> PathBuf {
    workspace_dir(ctx, workspace).join(name)
}

/// An upload being received.
pub(crate) struct Incoming {
    tmp: PathBuf,
    file: Option<tokio::fs::File>,
    hasher: Sha256,
    size: u64,
    max: u64,
    head: Vec<u8>,
    kind: Option<(&'static str, &'static str)>,
}

impl Incoming {
    pub(crate) async fn start(ctx: &Ctx) -> Result<Incoming> {
        let dir = uploads_dir(ctx).join(".tmp");
        tokio::fs::create_dir_all(&dir).await?;
        let tmp = dir.join(uuid::Uuid::new_v4().simple().to_string());
        let file = tokio::fs::File::create(&tmp).await?;
        Ok(Incoming {
            tmp,
            file: Some(file),
            hasher: Sha256::new(),
            size: 0,
            max: ctx.config.upload_max_bytes,
            head: Vec::with_capacity(SNIFF_BYTES),
            kind: None,
        })
    }

    /// Takes the next piece: 413 past the limit, 415 as soon as the first bytes show
    /// a type that is refused.
    pub(crate) async fn write(&mut self, chunk: &[u8]) -> Result<()> {
        self.size += chunk.len() as u64;
        if self.size > self.max {
            return Err(Error::upload_too_large(self.max));
        }
        if self.head.len() < SNIFF_BYTES {
            let take = chunk.len().min(SNIFF_BYTES - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
            if self.head.len() == SNIFF_BYTES {
                self.judge()?;
            }
        }
        self.hasher.update(chunk);
        if let Some(f) = self.file.as_mut() {
            f.write_all(chunk).await?;
        }
        Ok(())
    }

    fn judge(&mut self) -> Result<(&'static str, &'static str)> {
        let kind = sniff(&self.head).ok_or_else(Error::upload_type_refused)?;
        self.kind = Some(kind);
        Ok(kind)
    }

    /// Keeps the upload in `access`'s workspace (the same bytes twice are one file).
    pub(crate) async fn finish(mut self, ctx: &Ctx, access: &Access) -> Result<Upload> {
        let (content_type, ext) = match self.kind {
            Some(k) => k,
            None => self.judge()?,
        };
        let mut file = self.file.take().expect("an upload is finished once");
        file.flush().await?;
        drop(file);
        if (content_type, ext) == SVG {
            // Kept in its kept form (sanitized), and named by what is kept.
            let raw = tokio::fs::read(&self.tmp).await?;
            let (clean, ..) = kept_form(&raw).ok_or_else(Error::upload_type_refused)?;
            tokio::fs::write(&self.tmp, &clean).await?;
            self.hasher = Sha256::new();
            self.hasher.update(&clean);
            self.size = clean.len() as u64;
        }
        tokio::fs::File::open(&self.tmp).await?.sync_all().await?;
        let hash = hex::encode(std::mem::take(&mut self.hasher).finalize());
        let name = format!("{hash}.{ext}");
        let dest = file_path(ctx, access.slug(), &name);
        let dir = dest.parent().expect("an upload path has a parent").to_owned();
        tokio::fs::create_dir_all(&dir).await?;
        tokio::fs::rename(&self.tmp, &dest).await?;
        sync_dir(&dir).await;
        let size = self.size as i64;
        sqlx::query(
            "INSERT INTO uploads (workspace_id, name, content_type, size, created_by, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workspace_id, name) DO NOTHING",
        )
        .bind(access.workspace_id())
        .bind(&name)
        .bind(content_type)
        .bind(size)
        .bind(access.user_id())
        .bind(ctx.clock.rfc3339())
        .execute(&ctx.db.pool)
        .await?;
        tracing::info!(workspace = %access.slug(), %name, size, "upload kept");
        ctx.ocr_wake.notify_one();
        Ok(Upload { url: format!("/uploads/{name}"), name, content_type: content_type.to_owned(), size })
    }
}

impl Drop for Incoming {
    /// Refused or abandoned (the client went away): the temporary file goes.
    fn drop(&mut self) {
        // After `finish` the file was renamed away and this finds nothing.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Makes a rename durable (the directory entry), best effort.
async fn sync_dir(dir: &Path) {
    if let Ok(d) = tokio::fs::File::open(dir).await {
        let _ = d.sync_all().await;
    }
}

/// An upload the caller may see: its file, opened, and its type. 404 for a name that is
/// malformed, unknown, or only in workspaces the caller is not a member of.
pub(crate) async fn find(ctx: &Ctx, user: &User, name: &str) -> Result<(tokio::fs::File, String)> {
    if !ids::is_upload_name(name) {
        return Err(Error::upload_not_found());
    }
    // The same bytes may be uploaded to several workspaces: the caller sees the file of
    // the first one it is a member of, by the one membership rule.
    let holders: Vec<(String, String)> = sqlx::query_as(
        "SELECT w.slug, u.content_type FROM uploads u JOIN workspaces w ON w.id = u.workspace_id \
         WHERE u.name = $1 ORDER BY u.workspace_id",
    )
    .bind(name)
    .fetch_all(&ctx.db.pool)
    .await?;
    let mut seen = None;
    for (workspace, content_type) in holders {
        match workspaces::access(ctx, user, &workspace).await {
            Ok(_) => {
                seen = Some((workspace, content_type));
                break;
            }
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        }
    }
    let (workspace, content_type) = seen.ok_or_else(Error::upload_not_found)?;
    let file = tokio::fs::File::open(file_path(ctx, &workspace, name)).await.map_err(|_| Error::upload_not_found())?;
    Ok((file, content_type))
}

/// The names of the uploads a workspace holds, by its uploads table: what an export may
/// put in its zip (a file under the workspace's folder that the table does not know — left
/// by an earlier workspace of the same slug, say — is not the workspace's).
pub(crate) async fn names(ctx: &Ctx, access: &Access) -> Result<std::collections::HashSet<String>> {
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM uploads WHERE workspace_id = $1")
        .bind(access.workspace_id())
        .fetch_all(&ctx.db.pool)
        .await?;
    Ok(names.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a hostile SVG can do is taken out; what draws stays.
    #[test]
    fn svg_is_kept_sanitized() {
        let hostile = br#"<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(1)" width="10" height="10">
  <script>alert(2)</script>
  <foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil.example/"/></foreignObject>
  <image href="https://evil.example/track.png" width="5" height="5"/>
  <use xlink:href="https://evil.example/sprite.svg#x"/>
  <a href="javascript:alert(3)"><rect width="4" height="4" fill="url(#g)" onclick="alert(4)"/></a>
  <image href="http://host/leak/img.png" width="5" height="5"/>
  <a href="/api/tokens"><rect width="1" height="1" style="filter:url(http://host/leak/f.svg#f)" mask="url(/api/me)"/></a>
  <circle cx="5" cy="5" r="4" fill="teal"/>
</svg>"#;
        let clean = String::from_utf8(sanitized_svg(hostile).expect("an SVG")).unwrap();
        // svg-hush alone makes external references same-origin paths (`/leak/img.png`);
        // none but the document's own `#fragments` are kept.
        for gone in [
            "alert",
            "script",
            "foreignObject",
            "iframe",
            "evil.example",
            "javascript:",
            "onload",
            "onclick",
            "/leak",
            "/api/",
        ] {
            assert!(!clean.contains(gone), "{gone} left in {clean}");
        }
        assert!(clean.contains("<circle") && clean.contains("teal"), "{clean}");
        // Not an SVG image: refused.
        assert!(sanitized_svg(b"<?xml version=\"1.0\"?><html><body/></html>").is_none());
        assert!(sanitized_svg(b"<svg><unclosed></svg>").is_none());
    }

    #[test]
    fn sniffing_goes_by_bytes() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(sniff(png), Some(("image/png", "png")));
        assert_eq!(sniff(b"\xff\xd8\xff\xe0\0\x10JFIF\0"), Some(("image/jpeg", "jpg")));
        assert_eq!(sniff(b"GIF89a\x01\0\x01\0"), Some(("image/gif", "gif")));
        assert_eq!(sniff(b"RIFF\x24\0\0\0WEBPVP8 "), Some(("image/webp", "webp")));
        assert_eq!(sniff(b"\0\0\0\x1cftypavif\0\0\0\0avifmif1miaf"), Some(("image/avif", "avif")));
        assert_eq!(sniff(br#"<svg xmlns="http://www.w3.org/2000/svg"></svg>"#), Some(SVG));
        assert_eq!(sniff(b"\xef\xbb\xbf  <?xml version=\"1.0\"?>\n<svg"), Some(SVG));
        assert_eq!(sniff(b"<html><script>"), None);
        assert_eq!(sniff(b"%PDF-1.7\n"), None);
        assert_eq!(sniff(b"hello"), None);
    }
}
