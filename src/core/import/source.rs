//! Reading a source — a folder, a `.zip`, or the tree of a commit of a git repository —
//! into memory: its notes (UTF-8 markdown of at most 1 MiB, parsed once), its images (what
//! a note may embed), the names of its other files, and every file passed over with the
//! reason. Nothing here decides slugs or writes anything.
//!
//! Paths are relative, `/`-separated, in byte order. Hidden entries (a name starting with
//! `.`: `.obsidian/`, `.trash/`, `.git/`, dot-files) are passed over and reported once per
//! hidden folder. A zip whose entries all sit under one top-level folder is read from
//! inside it (how a zipped vault usually looks).
//!
//! A repository's commits are read by a [`TreeReader`], which reads each blob at most once
//! for the whole history: a note's text and parse, an image's size and its upload name,
//! are kept by blob id while the tree still holds it, so a commit costs what it changes. An image's
//! bytes are read only when a note references it, and a file that would be skipped
//! anyway (neither markdown nor an image) is never read.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use git2::{Oid, Repository};
use sha2::{Digest, Sha256};

use super::report::Skipped;
use crate::core::export::Manifest;
use crate::core::pages::MAX_CONTENT_BYTES;
use crate::core::uploads;
use crate::markdown::{self, LinkSpan};

/// Why a file was passed over, for every hidden one.
const HIDDEN: &str = "hidden (a dot-file or dot-folder, e.g. the source app's settings or trash)";

/// Extensions of the files a note may embed as an image.
pub(crate) const IMAGE_EXTENSIONS: [&str; 7] = ["png", "jpg", "jpeg", "gif", "webp", "avif", "svg"];

/// A note as read: its text, and what planning needs of its markdown, parsed once.
#[derive(Debug, Clone)]
pub(crate) struct Note {
    pub text: Arc<str>,
    /// Its links, wikilinks and images, outside code.
    pub links: Arc<[LinkSpan]>,
    /// Whether its content names a title (front matter `title:` or a first `# heading`).
    pub titled: bool,
}

impl Note {
    pub(crate) fn new(text: String) -> Note {
        let parsed = markdown::parse(&text);
        let links = markdown::link_spans(&text).into();
        Note { titled: parsed.front_title.is_some() || parsed.h1.is_some(), links, text: text.into() }
    }
}

/// An image file: its bytes (a folder or a zip), or a repository's blob, read when a
/// note references it.
#[derive(Debug, Clone)]
pub(crate) enum Image {
    Bytes(Arc<Vec<u8>>),
    Blob(Oid),
}

/// What was read.
#[derive(Debug, Default)]
pub(crate) struct Source {
    /// Markdown notes by path.
    pub notes: BTreeMap<String, Note>,
    /// Image files by path (`Err` holds why one cannot be kept: too large, unreadable).
    pub images: BTreeMap<String, Result<Image, String>>,
    /// Other files (neither markdown nor an image): skipped unless a note links them.
    pub others: Vec<String>,
    /// Files passed over while reading, with why.
    pub skipped: Vec<Skipped>,
    /// Titles by note path, from the `cairn.json` of a Cairn export.
    pub titles: HashMap<String, String>,
}

pub(crate) fn is_markdown(path: &str) -> bool {
    let lower = path.to_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

pub(crate) fn is_image(path: &str) -> bool {
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
    if path == Manifest::FILE {
        match read(MAX_CONTENT_BYTES as u64 * 16)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Manifest>(&b).map_err(|e| e.to_string()))
        {
            Ok(m) if m.format == Manifest::FORMAT => {
                out.titles = m.pages.into_iter().map(|p| (p.path, p.title)).collect();
            }
            Ok(_) => out.others.push(path),
            Err(e) => skip(out, path, format!("not a Cairn export's manifest: {e}")),
        }
    } else if is_markdown(&path) {
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
                    out.notes.insert(path, Note::new(text));
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
        out.images.insert(path, bytes.map(|b| Image::Bytes(Arc::new(b))));
    } else {
        out.others.push(path);
    }
}

/// Reads a folder (recursively) or a `.zip` file.
pub(crate) fn read(path: &Path, max_image: u64) -> anyhow::Result<Source> {
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
            skip(out, what, HIDDEN);
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
        // `enclosed_name` makes `/etc/x` the relative `etc/x`: an absolute name (or a drive
        // letter's) is refused here on its own.
        let absolute = raw.starts_with(['/', '\\']) || raw.as_bytes().get(1) == Some(&b':');
        let safe = f
            .enclosed_name()
            .and_then(|p| p.to_str().map(|s| s.replace('\\', "/")))
            .filter(|s| !absolute && !s.is_empty() && !s.starts_with('/'));
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
                skip(out, hidden, HIDDEN);
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

/// Reads the trees of one repository's commits, each blob once (see the module's head).
pub(crate) struct TreeReader {
    repo: Repository,
    max_image: u64,
    /// Notes of the last tree read, by blob: the note, or why it was skipped.
    notes: HashMap<Oid, Result<Note, String>>,
    /// Images of the last tree read, by blob: kept as the blob, or why not (its size
    /// read once from its header).
    images: HashMap<Oid, Result<Image, String>>,
    /// Upload names of the images read so far, by blob (or why one is not kept).
    names: HashMap<Oid, Result<String, String>>,
}

impl TreeReader {
    pub(crate) fn open(path: &Path, max_image: u64) -> anyhow::Result<TreeReader> {
        Ok(TreeReader {
            repo: Repository::open(path)?,
            max_image,
            notes: HashMap::new(),
            images: HashMap::new(),
            names: HashMap::new(),
        })
    }

    pub(crate) fn repo(&self) -> &Repository {
        &self.repo
    }

    /// Reads `commit`'s tree as a folder with the same files would be read: hidden
    /// entries, links and submodules passed over and reported. A blob that cannot be read
    /// (missing from a partial or shallow clone, say) is reported with its path and the
    /// commit, and the rest is read.
    pub(crate) fn read(&mut self, commit: Oid) -> anyhow::Result<Source> {
        let tree = self.repo.find_commit(commit)?.tree()?;
        let mut out = Source::default();
        let mut blobs: Vec<(String, Oid)> = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let Ok(name) = entry.name() else {
                let raw = String::from_utf8_lossy(entry.name_bytes());
                skip(&mut out, format!("{dir}{raw}"), "file name is not UTF-8");
                return git2::TreeWalkResult::Skip;
            };
            let rel = format!("{dir}{name}");
            let kind = entry.kind();
            if name.starts_with('.') {
                let what = if kind == Some(git2::ObjectType::Tree) { format!("{rel}/") } else { rel };
                skip(&mut out, what, HIDDEN);
                return git2::TreeWalkResult::Skip;
            }
            match kind {
                Some(git2::ObjectType::Tree) => {}
                Some(git2::ObjectType::Blob) if entry.filemode() == 0o120000 => skip(&mut out, rel, "a symbolic link"),
                Some(git2::ObjectType::Blob) => blobs.push((rel, entry.id())),
                _ => skip(&mut out, rel, "a submodule"),
            }
            git2::TreeWalkResult::Ok
        })?;
        let mut notes = HashMap::with_capacity(self.notes.len());
        let mut images = HashMap::with_capacity(self.images.len());
        for (path, oid) in blobs {
            if is_markdown(&path) {
                let note = match self.notes.remove(&oid).or_else(|| notes.get(&oid).cloned()) {
                    Some(known) => known,
                    None => self.read_note(oid, commit),
                };
                match &note {
                    Ok(n) => {
                        out.notes.insert(path, n.clone());
                    }
                    Err(why) => skip(&mut out, path, why.clone()),
                }
                notes.insert(oid, note);
            } else if is_image(&path) {
                let image = match self.images.remove(&oid).or_else(|| images.get(&oid).cloned()) {
                    Some(known) => known,
                    None => match self.size(oid) {
                        Ok(size) if size > self.max_image => {
                            Err(format!("larger than UPLOAD_MAX_BYTES ({size} bytes)"))
                        }
                        Ok(_) => Ok(Image::Blob(oid)),
                        Err(e) => Err(self.unreadable(&e, commit)),
                    },
                };
                out.images.insert(path, image.clone());
                images.insert(oid, image);
            } else {
                out.others.push(path);
            }
        }
        self.notes = notes;
        self.images = images;
        out.others.sort();
        out.skipped.sort_by(|a, b| a.source.cmp(&b.source));
        Ok(out)
    }

    fn unreadable(&self, e: &git2::Error, commit: Oid) -> String {
        format!("unreadable in commit {commit}: {}", e.message())
    }

    /// A blob's size, from the object's header (not its content).
    fn size(&self, oid: Oid) -> Result<u64, git2::Error> {
        Ok(self.repo.odb()?.read_header(oid)?.0 as u64)
    }

    fn read_note(&self, oid: Oid, commit: Oid) -> Result<Note, String> {
        let size = self.size(oid).map_err(|e| self.unreadable(&e, commit))?;
        if size > MAX_CONTENT_BYTES as u64 {
            return Err(format!("over 1 MiB, the page limit ({size} bytes)"));
        }
        let blob = self.repo.find_blob(oid).map_err(|e| self.unreadable(&e, commit))?;
        match std::str::from_utf8(blob.content()) {
            Ok(text) => Ok(Note::new(text.to_owned())),
            Err(_) => Err("not UTF-8 text".to_owned()),
        }
    }

    /// The bytes of an image blob.
    pub(crate) fn bytes(&self, oid: Oid) -> Result<Vec<u8>, String> {
        self.repo.find_blob(oid).map(|b| b.content().to_vec()).map_err(|e| format!("unreadable: {}", e.message()))
    }

    /// `up` with its bytes read, when they are a blob's (what `run::uploads` keeps); a blob
    /// that cannot be read stays one, and is reported unreadable.
    pub(crate) fn loaded(&self, up: &PlannedUpload) -> PlannedUpload {
        let image = match &up.image {
            Image::Blob(oid) => self.bytes(*oid).map_or_else(|_| up.image.clone(), |b| Image::Bytes(Arc::new(b))),
            here => here.clone(),
        };
        PlannedUpload { image, ..up.clone() }
    }

    /// The commit the repository's HEAD names.
    pub(crate) fn head(&self) -> anyhow::Result<Oid> {
        Ok(self.repo.head()?.peel_to_commit()?.id())
    }

    /// The upload name an image will be kept as (or why it will not be), each blob read
    /// once for the whole history.
    pub(crate) fn name(&mut self, image: &Image) -> Result<String, String> {
        match image {
            Image::Bytes(bytes) => upload_name(bytes),
            Image::Blob(oid) => {
                if let Some(known) = self.names.get(oid) {
                    return known.clone();
                }
                let name = self.bytes(*oid).and_then(|b| upload_name(&b));
                self.names.insert(*oid, name.clone());
                name
            }
        }
    }
}

/// One image to keep as an upload.
#[derive(Debug, Clone)]
pub(crate) struct PlannedUpload {
    pub source: String,
    pub name: String,
    pub image: Image,
}

/// The upload name an image will get, computed from the bytes it is kept as (an SVG's,
/// sanitized).
pub(crate) fn upload_name(bytes: &[u8]) -> Result<String, String> {
    let (kept, _, ext) =
        uploads::kept_form(bytes).ok_or("not an accepted image type (PNG, JPEG, GIF, WebP, AVIF or SVG)")?;
    Ok(format!("{}.{ext}", hex::encode(Sha256::digest(&kept))))
}
