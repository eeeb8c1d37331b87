//! Deciding, from a [`Source`] alone, what the workspace should hold: one page per note,
//! a page per folder (its folder note's, or an empty one), slugs, the tree, the links and
//! image references rewritten, the uploads. Pure and deterministic: the same source gives
//! the same plan, which is what makes a second import change nothing.
//!
//! # Rules (docs/import.md explains them to users)
//!
//! - A note's slug is its file name without the extension when that is a valid slug, else
//!   `Slug::derive` of it (`Getting Started.md` → `getting-started`); nothing left → `untitled`.
//!   Slugs are given in (depth, path) order, so a top-level note keeps its name; a later
//!   one that collides gets `-2`, `-3`… and is reported as renamed.
//! - A folder is a page. Its note is, in this order: the note beside it with its name
//!   (`a/b.md` for `a/b/`, as Cairn's export writes it), the note inside it with its name
//!   (`a/b/b.md`), `a/b/index.md`, `a/b/README.md`. Without one, the folder's page is empty.
//! - A wikilink target is looked up as Obsidian does: by path when it holds a `/` (relative
//!   to the note, then from the root, then as a path suffix), else by file name anywhere
//!   (the shortest path wins). Found, it is rewritten to the page's slug — only when the
//!   target as written would not already lead there, so text that needs no change keeps
//!   every byte. Not found and naming no page, it is reported broken and left as written.
//! - `[text](other.md)` to a note becomes `[[slug|text]]` (a link Cairn counts).
//! - `![[image.png]]` becomes `![image.png](/uploads/<name>)`; `![alt](img/x.png)` keeps its
//!   form with the destination rewritten. `<name>` is the upload's own (SHA-256 of the
//!   bytes + the sniffed type's extension), so it is known before anything is written.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;

use sha2::{Digest, Sha256};

use super::report::{BrokenLink, Renamed, Skipped};
use super::source::{self, Source};
use crate::core::pages::{MAX_CONTENT_BYTES, MAX_TITLE_CHARS};
use crate::core::uploads;
use crate::ids::{SLUG_MAX_LEN, Slug};
use crate::markdown::{self, LinkKind};

/// One page to save.
#[derive(Debug, Clone)]
pub struct PlannedPage {
    /// The note's path, or `folder/` for a folder without a note.
    pub source: String,
    pub slug: String,
    /// The title to ask for: the note's name, when its content names no title itself.
    pub title: Option<String>,
    pub content: String,
    pub parent: Option<String>,
    /// Folders above it: pages are saved level by level, parents first.
    pub depth: usize,
}

/// One image to keep as an upload.
#[derive(Debug, Clone)]
pub struct PlannedUpload {
    pub source: String,
    pub name: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Default)]
pub struct Plan {
    pub pages: Vec<PlannedPage>,
    pub uploads: Vec<PlannedUpload>,
    pub renamed: Vec<Renamed>,
    pub skipped: Vec<Skipped>,
    pub broken_links: Vec<BrokenLink>,
}

/// A page-to-be: a note, or a folder (with its note, if it has one).
#[derive(Debug)]
struct Node {
    /// What the report calls it: the note's path, or `folder/`.
    source: String,
    /// The name its slug and default title come from.
    name: String,
    note: Option<String>,
    parent_folder: Option<String>,
    /// This node is a folder: its path.
    folder: Option<String>,
    slug: String,
}

fn parent_dir(path: &str) -> Option<&str> {
    path.rsplit_once('/').map(|(d, _)| d)
}

fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, n)| n)
}

/// A path without a markdown extension.
fn without_md(path: &str) -> &str {
    let lower = path.to_lowercase();
    for ext in [".md", ".markdown"] {
        if lower.ends_with(ext) && path.is_char_boundary(path.len() - ext.len()) {
            return &path[..path.len() - ext.len()];
        }
    }
    path
}

/// `a/./b/../c` → `a/c`; None when it climbs out of the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn join(dir: Option<&str>, rel: &str) -> Option<String> {
    match dir {
        Some(d) if !rel.starts_with('/') => normalize(&format!("{d}/{rel}")),
        _ => normalize(rel),
    }
}

fn base_slug(name: &str) -> String {
    let s = if Slug::is_valid(name) { name.to_owned() } else { Slug::derive(name) };
    if s.is_empty() { "untitled".to_owned() } else { s }
}

/// The first free slug: `base`, else `base-2`, `base-3`…
fn free_slug(base: &str, taken: &HashSet<String>) -> String {
    if !taken.contains(base) {
        return base.to_owned();
    }
    (2..)
        .map(|n| {
            let suffix = format!("-{n}");
            let keep: String = base.chars().take(SLUG_MAX_LEN - suffix.len()).collect();
            format!("{}{suffix}", keep.trim_end_matches('-'))
        })
        .find(|s| !taken.contains(s))
        .expect("some suffix is free")
}

fn is_external(dest: &str) -> bool {
    let lower = dest.to_ascii_lowercase();
    dest.starts_with('#')
        || lower.contains("://")
        || ["mailto:", "tel:", "data:", "javascript:"].iter().any(|p| lower.starts_with(p))
}

/// Shortest path first, then byte order: Obsidian's choice among notes of one name.
fn by_shortest(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

struct Index<'a> {
    nodes: &'a [Node],
    /// Lower-cased path without extension (notes) or folder path → node.
    by_path: HashMap<String, usize>,
    /// Lower-cased file stem → nodes, shortest path first.
    by_name: HashMap<String, Vec<usize>>,
    by_slug: HashMap<&'a str, usize>,
    /// Lower-cased image path → its path.
    image_by_path: HashMap<String, String>,
    /// Lower-cased image file name → paths, shortest first.
    image_by_name: HashMap<String, Vec<String>>,
}

impl<'a> Index<'a> {
    fn new(nodes: &'a [Node], images: &BTreeMap<String, Result<Vec<u8>, String>>) -> Self {
        let mut by_path = HashMap::new();
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            if let Some(note) = &n.note {
                by_path.insert(without_md(note).to_lowercase(), i);
                by_name.entry(without_md(file_name(note)).to_lowercase()).or_default().push(i);
            }
            if let Some(folder) = &n.folder {
                by_path.entry(folder.to_lowercase()).or_insert(i);
            }
        }
        for v in by_name.values_mut() {
            v.sort_by(|a, b| by_shortest(&nodes[*a].source, &nodes[*b].source));
        }
        let by_slug = nodes.iter().enumerate().map(|(i, n)| (n.slug.as_str(), i)).collect();
        let mut image_by_path = HashMap::new();
        let mut image_by_name: HashMap<String, Vec<String>> = HashMap::new();
        for path in images.keys() {
            image_by_path.insert(path.to_lowercase(), path.clone());
            image_by_name.entry(file_name(path).to_lowercase()).or_default().push(path.clone());
        }
        for v in image_by_name.values_mut() {
            v.sort_by(|a, b| by_shortest(a, b));
        }
        Index { nodes, by_path, by_name, by_slug, image_by_path, image_by_name }
    }

    /// The node a link target (a wikilink's, or a markdown link's path) names.
    fn note(&self, target: &str, from_dir: Option<&str>, wiki: bool) -> Option<usize> {
        let t = without_md(target.trim()).to_lowercase();
        if t.is_empty() {
            return None;
        }
        let by_path = |p: Option<String>| p.and_then(|p| self.by_path.get(&p).copied());
        if t.contains('/') || !wiki {
            if let Some(i) = by_path(join(from_dir, &t)).or_else(|| by_path(normalize(&t))) {
                return Some(i);
            }
            if wiki {
                let suffix = format!("/{}", t.trim_start_matches('/'));
                let mut hits: Vec<usize> =
                    self.by_path.iter().filter(|(k, _)| k.ends_with(&suffix)).map(|(_, i)| *i).collect();
                hits.sort_by(|a, b| by_shortest(&self.nodes[*a].source, &self.nodes[*b].source));
                if let Some(i) = hits.first() {
                    return Some(*i);
                }
            }
        } else if let Some(v) = self.by_name.get(&t) {
            return v.first().copied();
        }
        if wiki { self.by_slug.get(markdown::link_slug(target.trim()).as_str()).copied() } else { None }
    }

    /// The image file a reference names: relative to the note, from the root, else by
    /// file name anywhere (Obsidian's attachment folder).
    fn image(&self, target: &str, from_dir: Option<&str>) -> Option<String> {
        let t = target.trim().to_lowercase();
        let by_path = |p: Option<String>| p.and_then(|p| self.image_by_path.get(&p).cloned());
        by_path(join(from_dir, &t))
            .or_else(|| by_path(normalize(&t)))
            .or_else(|| self.image_by_name.get(file_name(&t)).and_then(|v| v.first().cloned()))
    }
}

/// The upload name an image will get, computed from the bytes it is kept as (an SVG's,
/// sanitized).
fn upload_name(bytes: &[u8]) -> Result<String, String> {
    let (kept, _, ext) =
        uploads::kept_form(bytes).ok_or("not an accepted image type (PNG, JPEG, GIF, WebP, AVIF or SVG)")?;
    Ok(format!("{}.{ext}", hex::encode(Sha256::digest(&kept))))
}

/// Plans the import of `source`. `existing` holds the workspace's live slugs, so a link
/// to a page already there is not reported broken.
pub fn plan(source: Source, existing: &HashSet<String>) -> Plan {
    let Source { notes, images, others, skipped } = source;
    let mut plan = Plan { skipped, ..Plan::default() };

    // Folders holding notes, and the note each folder takes as its own.
    let mut folders: Vec<String> = Vec::new();
    {
        let mut seen = HashSet::new();
        for path in notes.keys() {
            let mut dir = parent_dir(path);
            while let Some(d) = dir {
                if !seen.insert(d.to_owned()) {
                    break;
                }
                folders.push(d.to_owned());
                dir = parent_dir(d);
            }
        }
        folders.sort();
    }
    let note_by_lower: HashMap<String, &String> = notes.keys().map(|p| (without_md(p).to_lowercase(), p)).collect();
    let mut folder_note: HashMap<&str, String> = HashMap::new();
    let mut claimed: HashSet<String> = HashSet::new();
    // Beside it first (Cairn's export), then inside it.
    for f in &folders {
        if let Some(note) = note_by_lower.get(&f.to_lowercase())
            && claimed.insert((*note).clone())
        {
            folder_note.insert(f, (*note).clone());
        }
    }
    for f in &folders {
        if folder_note.contains_key(f.as_str()) {
            continue;
        }
        let name = file_name(f).to_lowercase();
        let lower = f.to_lowercase();
        for candidate in [name.as_str(), "index", "readme"] {
            if let Some(note) = note_by_lower.get(&format!("{lower}/{candidate}"))
                && !claimed.contains(*note)
            {
                claimed.insert((*note).clone());
                folder_note.insert(f, (*note).clone());
                break;
            }
        }
    }

    let mut nodes: Vec<Node> = Vec::new();
    for f in &folders {
        let note = folder_note.get(f.as_str()).cloned();
        nodes.push(Node {
            source: note.clone().unwrap_or_else(|| format!("{f}/")),
            name: file_name(f).to_owned(),
            note,
            parent_folder: parent_dir(f).map(str::to_owned),
            folder: Some(f.clone()),
            slug: String::new(),
        });
    }
    for path in notes.keys().filter(|p| !claimed.contains(*p)) {
        nodes.push(Node {
            source: path.clone(),
            name: without_md(file_name(path)).to_owned(),
            note: Some(path.clone()),
            parent_folder: parent_dir(path).map(str::to_owned),
            folder: None,
            slug: String::new(),
        });
    }
    let depth = |n: &Node| n.parent_folder.as_deref().map_or(0, |p| p.split('/').count());
    nodes.sort_by(|a, b| depth(a).cmp(&depth(b)).then_with(|| a.source.cmp(&b.source)));

    let mut taken = HashSet::new();
    for n in &mut nodes {
        let wanted = base_slug(&n.name);
        n.slug = free_slug(&wanted, &taken);
        taken.insert(n.slug.clone());
        if n.slug != wanted {
            plan.renamed.push(Renamed { source: n.source.clone(), wanted, slug: n.slug.clone() });
        }
    }
    let folder_slug: HashMap<&str, &str> =
        nodes.iter().filter_map(|n| Some((n.folder.as_deref()?, n.slug.as_str()))).collect();

    let index = Index::new(&nodes, &images);
    let mut upload_of: BTreeMap<String, Result<String, String>> = BTreeMap::new();
    let mut upload = |path: &str, plan: &mut Plan| -> Result<String, String> {
        if let Some(done) = upload_of.get(path) {
            return done.clone();
        }
        let result = match images.get(path) {
            Some(Ok(bytes)) => upload_name(bytes).inspect(|name| {
                plan.uploads.push(PlannedUpload { source: path.to_owned(), name: name.clone(), bytes: bytes.clone() })
            }),
            Some(Err(e)) => Err(e.clone()),
            None => Err("not in the source".to_owned()),
        };
        if let Err(reason) = &result {
            plan.skipped
                .push(Skipped { source: path.to_owned(), reason: format!("a referenced image, not kept: {reason}") });
        }
        upload_of.insert(path.to_owned(), result.clone());
        result
    };

    for n in &nodes {
        let title_from_name = || Some(n.name.chars().take(MAX_TITLE_CHARS).collect::<String>());
        let parent = n.parent_folder.as_deref().and_then(|p| folder_slug.get(p)).map(|s| (*s).to_owned());
        let Some(note) = &n.note else {
            plan.pages.push(PlannedPage {
                source: n.source.clone(),
                slug: n.slug.clone(),
                title: title_from_name(),
                content: String::new(),
                parent,
                depth: depth(n),
            });
            continue;
        };
        let original = &notes[note];
        let from_dir = parent_dir(note);
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        let broken = |target: &str, plan: &mut Plan| {
            plan.broken_links.push(BrokenLink { source: note.clone(), target: target.to_owned() });
        };
        for span in markdown::link_spans(original) {
            let target = &original[span.target.clone()];
            match span.kind {
                LinkKind::WikiEmbed if source::is_image(target) => match index.image(target, from_dir) {
                    Some(path) => match upload(&path, &mut plan) {
                        Ok(name) => {
                            let alt = file_name(target).replace(['[', ']'], "");
                            edits.push((span.whole.clone(), format!("![{alt}](/uploads/{name})")));
                        }
                        Err(_) => broken(target, &mut plan),
                    },
                    None => broken(target, &mut plan),
                },
                LinkKind::Wiki | LinkKind::WikiEmbed => match index.note(target, from_dir, true) {
                    Some(i) => {
                        let slug = &nodes[i].slug;
                        if markdown::link_slug(target) != *slug {
                            edits.push((span.target.clone(), slug.clone()));
                        }
                    }
                    None if existing.contains(&markdown::link_slug(target)) => {}
                    None => broken(target, &mut plan),
                },
                LinkKind::Inline | LinkKind::InlineImage => {
                    if is_external(target) {
                        continue;
                    }
                    let (path, fragment) = match target.split_once('#') {
                        Some((p, f)) => (p, Some(f)),
                        None => (target, None),
                    };
                    let path = path.split('?').next().unwrap_or_default();
                    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned();
                    if span.kind == LinkKind::Inline && source::is_markdown(&decoded) {
                        match index.note(&decoded, from_dir, false) {
                            Some(i) => {
                                let slug = &nodes[i].slug;
                                let whole = &original[span.whole.clone()];
                                let text_end = original[span.whole.start..span.target.start].rfind("](");
                                let text = text_end.map(|e| &whole[1..e]).unwrap_or_default();
                                if !text.is_empty() && !text.contains(['[', ']', '|', '\n', '\r']) {
                                    let anchor = fragment.map(|f| format!("#{f}")).unwrap_or_default();
                                    edits.push((span.whole.clone(), format!("[[{slug}{anchor}|{text}]]")));
                                }
                            }
                            None => broken(target, &mut plan),
                        }
                    } else if source::is_image(&decoded) {
                        match index.image(&decoded, from_dir) {
                            Some(p) => match upload(&p, &mut plan) {
                                Ok(name) => {
                                    let url = format!("/uploads/{name}");
                                    if url != target {
                                        edits.push((span.target.clone(), url));
                                    }
                                }
                                Err(_) => broken(target, &mut plan),
                            },
                            None if crate::ids::is_upload_name(decoded.trim_start_matches("/uploads/")) => {}
                            None if span.kind == LinkKind::InlineImage => broken(target, &mut plan),
                            None => {}
                        }
                    }
                }
            }
        }
        let mut content = apply(original, edits);
        if content.len() > MAX_CONTENT_BYTES {
            plan.skipped.push(Skipped {
                source: note.clone(),
                reason: "links left as written: rewritten, the note would pass 1 MiB".to_owned(),
            });
            content = original.clone();
        }
        let parsed = markdown::parse(&content);
        let title = if parsed.front_title.is_none() && parsed.h1.is_none() { title_from_name() } else { None };
        plan.pages.push(PlannedPage {
            source: n.source.clone(),
            slug: n.slug.clone(),
            title,
            content,
            parent,
            depth: depth(n),
        });
    }
    for path in images.keys() {
        if !upload_of.contains_key(path) {
            plan.skipped.push(Skipped { source: path.clone(), reason: "an image no note references".to_owned() });
        }
    }
    for path in others {
        plan.skipped.push(Skipped { source: path, reason: "neither markdown nor an image".to_owned() });
    }
    plan.skipped.sort_by(|a, b| a.source.cmp(&b.source));
    plan.broken_links.sort();
    plan.broken_links.dedup();
    plan
}

/// `text` with each edit applied (in order; an edit overlapping an earlier one is dropped).
fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    if edits.is_empty() {
        return text.to_owned();
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for (range, with) in edits {
        if range.start < at {
            continue;
        }
        out.push_str(&text[at..range.start]);
        out.push_str(&with);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(notes: &[(&str, &str)]) -> Source {
        Source { notes: notes.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect(), ..Source::default() }
    }

    #[test]
    fn slugs_tree_and_links_are_decided_deterministically() {
        let src = source(&[
            ("Home.md", "See [[Notes]], [[b/Notes|theirs]], [[Deep Note#Part]] and [x](a/Deep%20Note.md).\n"),
            ("a/Deep Note.md", "# Deep\n[[Home]] [[missing]]\n"),
            ("a/Notes.md", "a"),
            ("b/Notes.md", "b"),
            ("b/index.md", "# B folder\n"),
        ]);
        let plan = plan(src, &HashSet::new());
        let got: Vec<(&str, &str, Option<&str>)> =
            plan.pages.iter().map(|p| (p.source.as_str(), p.slug.as_str(), p.parent.as_deref())).collect();
        assert_eq!(
            got,
            [
                ("Home.md", "home", None),
                ("a/", "a", None),
                ("b/index.md", "b", None),
                ("a/Deep Note.md", "deep-note", Some("a")),
                ("a/Notes.md", "notes", Some("a")),
                ("b/Notes.md", "notes-2", Some("b")),
            ]
        );
        assert_eq!(
            plan.pages[0].content,
            "See [[Notes]], [[notes-2|theirs]], [[Deep Note#Part]] and [[deep-note|x]].\n"
        );
        assert_eq!(plan.pages[0].title.as_deref(), Some("Home"));
        assert_eq!(plan.pages[3].title, None);
        assert_eq!(plan.renamed.len(), 1);
        assert_eq!(plan.broken_links, [BrokenLink { source: "a/Deep Note.md".into(), target: "missing".into() }]);
    }

    #[test]
    fn suffixes_fit_the_slug_limit() {
        let base = "x".repeat(128);
        let taken: HashSet<String> = [base.clone()].into();
        let s = free_slug(&base, &taken);
        assert!(Slug::is_valid(&s) && s.ends_with("-2"), "{s}");
        assert_eq!(normalize("a/../../b"), None);
        assert_eq!(join(Some("a/b"), "../c.md").as_deref(), Some("a/c.md"));
    }
}
