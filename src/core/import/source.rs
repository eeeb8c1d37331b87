//! Reading a source — a folder or a `.zip` — into memory: its notes (UTF-8 markdown of at
//! most 1 MiB), its images (what a note may embed), the names of its other files, and
//! every file passed over with the reason. Nothing here decides slugs or writes anything.
//!
//! Paths are relative, `/`-separated, in byte order. Hidden entries (a name starting with
//! `.`: `.obsidian/`, `.trash/`, `.git/`, dot-files) are passed over and reported once per
//! hidden folder. A zip whose entries all sit under one top-level folder is read from
//! inside it (how a zipped vault usually looks).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use super::report::Skipped;
use crate::core::pages::MAX_CONTENT_BYTES;

/// Extensions of the files a note may embed as an image.
pub const IMAGE_EXTENSIONS: [&str; 7] = ["png", "jpg", "jpeg", "gif", "webp", "avif", "svg"];

/// What was read.
#[derive(Debug, Default)]
pub struct Source {
    /// Markdown notes by path.
    pub notes: BTreeMap<String, String>,
    /// Image files by path (bytes; `Err` holds why one could not be read).
    pub images: BTreeMap<String, Result<Vec<u8>, String>>,
    /// Other files (neither markdown nor an image): skipped unless a note links them.
    pub others: Vec<String>,
    /// Files passed over while reading, with why.
    pub skipped: Vec<Skipped>,
}

pub fn is_markdown(path: &str) -> bool {
    let lower = path.to_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

pub fn is_image(path: &str) -> bool {
    let lower = path.to_lowercase();
    lower.rsplit_once('.').is_some_and(|(_, ext)| IMAGE_EXTENSIONS.contains(&ext))
}

fn skip(out: &mut Source, path: impl Into<String>, reason: impl Into<String>) {
    out.skipped.push(Skipped { source: path.into(), reason: reason.into() });
}

/// Files one reads: what kind, then the bytes (capped) when they are wanted.
fn take(
    out: &mut Source,
    path: String,
    size: u64,
    max_image: u64,
    read: &mut dyn FnMut(u64) -> std::io::Result<Vec<u8>>,
) {
    if is_markdown(&path) {
        if size > MAX_CONTENT_BYTES as u64 {
            return skip(out, path, format!("over 1 MiB, the page limit ({size} bytes)"));
        }
        match read(MAX_CONTENT_BYTES as u64 + 1) {
            Err(e) => skip(out, path, format!("unreadable: {e}")),
            Ok(bytes) if bytes.len() > MAX_CONTENT_BYTES => {
                skip(out, path, format!("over 1 MiB, the page limit ({} bytes)", bytes.len()))
            }
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => {
                    out.notes.insert(path, text);
                }
                Err(_) => skip(out, path, "not UTF-8 text"),
            },
        }
    } else if is_image(&path) {
        let bytes = if size > max_image {
            Err(format!("larger than UPLOAD_MAX_BYTES ({size} bytes)"))
        } else {
            read(max_image + 1).map_err(|e| format!("unreadable: {e}")).and_then(|b| {
                if b.len() as u64 > max_image {
                    Err(format!("larger than UPLOAD_MAX_BYTES ({} bytes)", b.len()))
                } else {
                    Ok(b)
                }
            })
        };
        out.images.insert(path, bytes);
    } else {
        out.others.push(path);
    }
}

/// Reads a folder (recursively) or a `.zip` file.
pub fn read(path: &Path, max_image: u64) -> anyhow::Result<Source> {
    let meta = std::fs::metadata(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let mut out = Source::default();
    if meta.is_dir() {
        walk(path, "", max_image, &mut out);
    } else {
        read_zip(path, max_image, &mut out)?;
    }
    out.others.sort();
    out.skipped.sort_by(|a, b| a.source.cmp(&b.source));
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, max_image: u64, out: &mut Source) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => return skip(out, prefix.to_owned(), format!("unreadable folder: {e}")),
    };
    let mut names: Vec<(String, std::path::PathBuf)> = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => match entry.file_name().into_string() {
                Ok(name) => names.push((name, entry.path())),
                Err(raw) => skip(out, format!("{prefix}{}", raw.to_string_lossy()), "file name is not UTF-8"),
            },
            Err(e) => skip(out, prefix.to_owned(), format!("unreadable folder entry: {e}")),
        }
    }
    names.sort();
    for (name, full) in names {
        let rel = format!("{prefix}{name}");
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(m) => m,
            Err(e) => {
                skip(out, rel, format!("unreadable: {e}"));
                continue;
            }
        };
        if name.starts_with('.') {
            let what = if meta.is_dir() { format!("{rel}/") } else { rel };
            skip(out, what, "hidden (a dot-file or dot-folder, e.g. the source app's settings or trash)");
        } else if meta.file_type().is_symlink() {
            skip(out, rel, "a symbolic link");
        } else if meta.is_dir() {
            walk(&full, &format!("{rel}/"), max_image, out);
        } else if meta.is_file() {
            take(out, rel, meta.len(), max_image, &mut |cap| {
                let mut buf = Vec::new();
                std::fs::File::open(&full)?.take(cap).read_to_end(&mut buf)?;
                Ok(buf)
            });
        } else {
            skip(out, rel, "not a regular file");
        }
    }
}

fn read_zip(path: &Path, max_image: u64, out: &mut Source) -> anyhow::Result<()> {
    let file = std::fs::File::open(path)?;
    let mut zip = zip::ZipArchive::new(file)
        .map_err(|e| anyhow::anyhow!("{} is neither a folder nor a readable zip: {e}", path.display()))?;
    // Names first, to see whether everything sits under one folder.
    let mut names: Vec<(usize, Option<String>, String)> = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let f = zip.by_index(i)?;
        if f.is_dir() {
            continue;
        }
        let raw = f.name().map(|n| n.into_owned()).unwrap_or_else(|_| format!("entry {i}"));
        let safe = f
            .enclosed_name()
            .and_then(|p| p.to_str().map(|s| s.replace('\\', "/")))
            .filter(|s| !s.is_empty() && !s.starts_with('/'));
        names.push((i, safe, raw));
    }
    let roots: std::collections::BTreeSet<&str> = names
        .iter()
        .filter_map(|(_, s, _)| s.as_deref())
        .map(|s| s.split_once('/').map_or(s, |(root, _)| root))
        .collect();
    let strip = match roots.iter().next() {
        Some(root)
            if roots.len() == 1 && names.iter().all(|(_, s, _)| s.as_deref().is_some_and(|s| s.contains('/'))) =>
        {
            Some(format!("{root}/"))
        }
        _ => None,
    };
    let mut hidden_reported: std::collections::BTreeSet<String> = Default::default();
    names.sort_by(|a, b| a.1.cmp(&b.1));
    for (i, safe, raw) in names {
        let Some(mut rel) = safe else {
            skip(out, raw, "an unsafe path in the zip (absolute or leaving it)");
            continue;
        };
        if let Some(prefix) = &strip {
            rel = rel[prefix.len()..].to_owned();
        }
        let parts: Vec<&str> = rel.split('/').collect();
        if let Some(pos) = parts.iter().position(|p| p.starts_with('.')) {
            let hidden = if pos + 1 < parts.len() { format!("{}/", parts[..=pos].join("/")) } else { rel.clone() };
            if hidden_reported.insert(hidden.clone()) {
                skip(out, hidden, "hidden (a dot-file or dot-folder, e.g. the source app's settings or trash)");
            }
            continue;
        }
        let mut f = zip.by_index(i)?;
        if f.is_symlink() {
            skip(out, rel, "a symbolic link");
            continue;
        }
        let size = f.size();
        take(out, rel, size, max_image, &mut |cap| {
            let mut buf = Vec::new();
            (&mut f).take(cap).read_to_end(&mut buf)?;
            Ok(buf)
        });
    }
    Ok(())
}

/// Reads a commit's tree of a git repository, as a folder with the same contents would be
/// read: hidden entries, links and submodules passed over and reported.
pub fn read_tree(repo: &git2::Repository, tree: &git2::Tree<'_>, max_image: u64) -> anyhow::Result<Source> {
    let mut out = Source::default();
    let mut failed: Option<git2::Error> = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let Ok(name) = entry.name() else {
            skip(&mut out, format!("{dir}{}", String::from_utf8_lossy(entry.name_bytes())), "file name is not UTF-8");
            return git2::TreeWalkResult::Skip;
        };
        let rel = format!("{dir}{name}");
        let kind = entry.kind();
        if name.starts_with('.') {
            let what = if kind == Some(git2::ObjectType::Tree) { format!("{rel}/") } else { rel };
            skip(&mut out, what, "hidden (a dot-file or dot-folder, e.g. the source app's settings or trash)");
            return git2::TreeWalkResult::Skip;
        }
        match kind {
            Some(git2::ObjectType::Tree) => {}
            Some(git2::ObjectType::Blob) if entry.filemode() == 0o120000 => skip(&mut out, rel, "a symbolic link"),
            Some(git2::ObjectType::Blob) => match repo.find_blob(entry.id()) {
                Ok(blob) => {
                    let size = blob.size() as u64;
                    take(&mut out, rel, size, max_image, &mut |cap| {
                        Ok(blob.content()[..blob.size().min(cap as usize)].to_vec())
                    });
                }
                Err(e) => {
                    failed = Some(e);
                    return git2::TreeWalkResult::Abort;
                }
            },
            _ => skip(&mut out, rel, "a submodule"),
        }
        git2::TreeWalkResult::Ok
    })
    .or_else(|e| if failed.is_some() { Ok(()) } else { Err(e) })?;
    if let Some(e) = failed {
        anyhow::bail!("cannot read a file of the repository: {e}");
    }
    out.others.sort();
    out.skipped.sort_by(|a, b| a.source.cmp(&b.source));
    Ok(out)
}
