//! Deciding, from a [`Source`] (and the slugs earlier commits of a git source gave), what
//! the workspace should hold: one page per note, a page per folder (its folder note's, or
//! an empty one), slugs, the tree, the links and image references rewritten, the uploads.
//! Deterministic: the same source gives the same plan, which is what makes a second import
//! change nothing.
//!
//! # Rules (docs/import.md explains them to users)
//!
//! - A note's slug is its file name without the extension when that is a valid slug, else
//!   `Slug::derive` of it (`Getting Started.md` → `getting-started`); nothing left → `untitled`.
//!   Slugs are given in (depth, path) order, notes before folders that have none, so a
//!   top-level note keeps its name; a later one that collides gets `-2`, `-3`… and is
//!   reported as renamed. A slug once given stays with its file ([`Given`]): in a git
//!   source's history a file is the same page from commit to commit by its path (and
//!   git's rename detection), whatever arrives beside it later.
//! - A folder is a page. Its note is, in this order: the note beside it with its name
//!   (`a/b.md` for `a/b/`, as Cairn's export writes it), the note inside it with its name
//!   (`a/b/b.md`), `a/b/index.md`, `a/b/README.md`. Without one, the folder's page is empty.
//! - A wikilink target is looked up as Obsidian does: by path when it holds a `/` (relative
//!   to the note, then from the root, then as a path suffix), else by file name anywhere
//!   (the shortest path wins). Found, it is rewritten to the page's slug — only when the
//!   target as written would not already lead there, so text that needs no change keeps
//!   every byte. Not found and naming no page, it is reported broken and left as written.
//!   A rewritten link keeps the text readers saw, as a rename's does
//!   ([`markdown::relink`]): `[[Import notes]]` → `[[import-notes-2|Import notes]]`.
//! - `[text](other.md)` to a note becomes `[[slug|text]]` (a link Cairn counts).
//! - `![[image.png]]` becomes `![image.png](/uploads/<name>)` (`![[x.png|300]]` →
//!   `![x.png|300](…)`, the size kept; `![[x.png|a caption]]` → `![a caption](…)`);
//!   `![alt](img/x.png)` keeps its form with the destination rewritten; `[[shot.png|see]]`
//!   becomes `[see](/uploads/<name>)`. `<name>` is the upload's own (SHA-256 of the bytes
//!   + the sniffed type's extension), so it is known before anything is written.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use super::report::{BrokenLink, Renamed, Skipped};
use super::source::{self, Image, PlannedUpload, Source};
use crate::core::pages::{MAX_CONTENT_BYTES, MAX_TITLE_CHARS};
use crate::ids::{SLUG_MAX_LEN, Slug};
use crate::markdown::{self, LinkKind};

/// One page to save.
#[derive(Debug, Clone)]
pub(crate) struct PlannedPage {
    /// The note's path, or `folder/` for a folder without a note.
    pub source: String,
    pub slug: String,
    /// The title to ask for: the note's name, when its content names no title itself.
    pub title: Option<String>,
    pub content: Arc<str>,
    pub parent: Option<String>,
    /// Folders above it: pages are saved level by level, parents first.
    pub depth: usize,
    /// Where the page is before this save.
    pub prior: Prior,
    /// The note's text as the source has it (before links are rewritten); None for a
    /// folder without a note.
    pub text: Option<Arc<str>>,
    /// A git history's commit changed the note's file: the page gets a revision for it
    /// even when its content, once the links are rewritten, stays the same.
    pub recorded: bool,
}

/// Where a page to save is before its save: a git history's replay knows when the commit
/// renamed its file, or brought it back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Prior {
    /// At its slug, or nowhere yet.
    #[default]
    Here,
    /// At this slug: the commit renamed its file.
    Renamed(String),
    /// In the trash: its file came back.
    InTrash,
}

/// The slugs already given to a source's files, by file: a note's path, or `folder/` for
/// a folder's page. What the last commit of a git source gave, carried to the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct Given {
    /// File → its slug, kept by the file.
    pub kept: HashMap<String, String>,
    /// Slugs a new file must not take: held by files of the previous commit, or by pages
    /// this import moved to the trash.
    pub reserved: HashSet<String>,
}

impl Given {
    /// What a commit of a git source starts from: the slugs the commit before gave to its
    /// files (`live`), those of files removed earlier whose pages this import moved to the
    /// trash (`gone`: a file that comes back gets its page back), and that commit's
    /// renames (from, to). A file moved to another folder under the same name keeps its
    /// slug (its page moves); one renamed gets the slug of its new name (its page is
    /// renamed), never one another file holds.
    pub(crate) fn next(
        live: &HashMap<String, String>,
        gone: &HashMap<String, String>,
        renames: &[(String, String)],
    ) -> Given {
        let mut kept: HashMap<String, String> =
            gone.iter().filter(|(k, _)| !live.contains_key(*k)).map(|(k, s)| (k.clone(), s.clone())).collect();
        kept.extend(live.iter().map(|(k, s)| (k.clone(), s.clone())));
        let reserved = kept.values().cloned().collect();
        for (from, to) in renames {
            let same_name = base_slug(without_md(file_name(from))) == base_slug(without_md(file_name(to)));
            if let Some(slug) = kept.remove(from)
                && same_name
            {
                kept.insert(to.clone(), slug);
            }
        }
        Given { kept, reserved }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub pages: Vec<PlannedPage>,
    /// File → slug, for the next commit's [`Given`].
    pub given: HashMap<String, String>,
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

impl Node {
    /// What the node is by, from commit to commit: its folder (`folder/`), else its note.
    fn key(&self) -> String {
        match &self.folder {
            Some(f) => format!("{f}/"),
            None => self.source.clone(),
        }
    }
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

/// Obsidian's choice among notes of one name, for a link from a note in `from_dir`: the
/// one in the linking note's own folder, else the one in the fewest folders; between
/// equally deep ones, one under the linking note's top folder (its language folder, in a
/// vault kept in several languages); then byte order.
fn nearest(a: &str, b: &str, from_dir: Option<&str>) -> std::cmp::Ordering {
    let top = |p: &str| p.split_once('/').map(|(t, _)| t.to_owned());
    let from_top = from_dir.map(|d| d.split('/').next().unwrap_or(d).to_owned());
    let key = |p: &str| {
        let here = parent_dir(p) == from_dir;
        let depth = p.matches('/').count();
        let same_top = from_top.is_some() && top(p) == from_top;
        (!here, depth, !same_top)
    };
    key(a).cmp(&key(b)).then_with(|| a.cmp(b))
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
    fn new(nodes: &'a [Node], images: &BTreeMap<String, Result<Image, String>>) -> Self {
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
            return v.iter().copied().min_by(|a, b| nearest(&self.nodes[*a].source, &self.nodes[*b].source, from_dir));
        }
        if wiki { self.by_slug.get(markdown::link_slug(target.trim()).as_str()).copied() } else { None }
    }

    /// The image file a reference names: relative to the note, from the root, else by
    /// file name anywhere (Obsidian's attachment folder).
    fn image(&self, target: &str, from_dir: Option<&str>) -> Option<String> {
        let t = target.trim().to_lowercase();
        let by_path = |p: Option<String>| p.and_then(|p| self.image_by_path.get(&p).cloned());
        by_path(join(from_dir, &t)).or_else(|| by_path(normalize(&t))).or_else(|| {
            let named = self.image_by_name.get(file_name(&t))?;
            named.iter().min_by(|a, b| nearest(a, b, from_dir)).cloned()
        })
    }
}

/// Names an image: the upload it will be kept as, or why it will not be.
pub(crate) type Namer<'a> = &'a mut dyn FnMut(&Image) -> Result<String, String>;

/// The folders holding notes, and the note each folder takes as its own.
fn folders(notes: &BTreeMap<String, source::Note>) -> (Vec<String>, HashMap<String, String>) {
    let mut folders: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for path in notes.keys() {
        let mut dir = parent_dir(path);
        while let Some(d) = dir {
            if !seen.insert(d) {
                break;
            }
            folders.push(d.to_owned());
            dir = parent_dir(d);
        }
    }
    folders.sort();
    let note_by_lower: HashMap<String, &String> = notes.keys().map(|p| (without_md(p).to_lowercase(), p)).collect();
    let mut folder_note: HashMap<String, String> = HashMap::new();
    let mut claimed: HashSet<&String> = HashSet::new();
    // Beside it first (Cairn's export), then inside it.
    for f in &folders {
        if let Some(note) = note_by_lower.get(&f.to_lowercase())
            && claimed.insert(*note)
        {
            folder_note.insert(f.clone(), (*note).clone());
        }
    }
    for f in &folders {
        if folder_note.contains_key(f) {
            continue;
        }
        let name = file_name(f).to_lowercase();
        let lower = f.to_lowercase();
        for candidate in [name.as_str(), "index", "readme"] {
            if let Some(note) = note_by_lower.get(&format!("{lower}/{candidate}"))
                && !claimed.contains(*note)
            {
                claimed.insert(*note);
                folder_note.insert(f.clone(), (*note).clone());
                break;
            }
        }
    }
    (folders, folder_note)
}

fn depth(n: &Node) -> usize {
    n.parent_folder.as_deref().map_or(0, |p| p.split('/').count())
}

/// The pages-to-be of `notes`, in (depth, path) order, each with its slug: the one it
/// was given, else the first free one. Collisions are reported in `renamed`.
fn nodes(notes: &BTreeMap<String, source::Note>, given: &Given, renamed: &mut Vec<Renamed>) -> Vec<Node> {
    let (folders, folder_note) = folders(notes);
    let claimed: HashSet<&String> = folder_note.values().collect();
    let mut nodes: Vec<Node> = Vec::with_capacity(folders.len() + notes.len());
    for f in &folders {
        let note = folder_note.get(f).cloned();
        nodes.push(Node {
            source: note.clone().unwrap_or_else(|| format!("{f}/")),
            name: file_name(f).to_owned(),
            note,
            parent_folder: parent_dir(f).map(str::to_owned),
            folder: Some(f.clone()),
            slug: String::new(),
        });
    }
    for path in notes.keys().filter(|p| !claimed.contains(p)) {
        nodes.push(Node {
            source: path.clone(),
            name: without_md(file_name(path)).to_owned(),
            note: Some(path.clone()),
            parent_folder: parent_dir(path).map(str::to_owned),
            folder: None,
            slug: String::new(),
        });
    }
    nodes.sort_by(|a, b| depth(a).cmp(&depth(b)).then_with(|| a.source.cmp(&b.source)));

    // Slugs kept by their files first; then the others, notes before folders without one
    // (whose page is only a place in the tree), each in (depth, path) order.
    let mut taken: HashSet<String> = given.reserved.clone();
    let mut held: HashSet<&str> = HashSet::new();
    for n in nodes.iter_mut() {
        if let Some(slug) = given.kept.get(&n.key())
            && held.insert(slug.as_str())
        {
            n.slug = slug.clone();
            taken.insert(slug.clone());
        }
    }
    let mut order: Vec<usize> = (0..nodes.len()).filter(|i| nodes[*i].slug.is_empty()).collect();
    order.sort_by_key(|i| nodes[*i].note.is_none());
    for i in order {
        let n = &mut nodes[i];
        n.slug = free_slug(&base_slug(&n.name), &taken);
        taken.insert(n.slug.clone());
    }
    for n in &nodes {
        let wanted = base_slug(&n.name);
        if n.slug != wanted {
            renamed.push(Renamed { source: n.source.clone(), wanted, slug: n.slug.clone() });
        }
    }
    nodes
}

/// The slug of every file of `source` (see [`Plan::given`]), without planning its pages:
/// how a second import of a git source finds the slugs its first one gave.
pub(crate) fn slugs(source: &Source, given: &Given) -> HashMap<String, String> {
    nodes(&source.notes, given, &mut Vec::new()).iter().map(|n| (n.key(), n.slug.clone())).collect()
}

/// `[[x.png|300]]`'s size or label: the text after the first `|`, if any.
fn wiki_label<'t>(text: &'t str, whole: &Range<usize>) -> Option<&'t str> {
    wiki_inner(text, whole)?.split_once('|').map(|(_, label)| label.trim())
}

/// `![[x.svg#icon]]`'s fragment (`icon`): kept on the upload's address, where themes
/// and the help vault's CSS look for it.
fn wiki_fragment<'t>(text: &'t str, whole: &Range<usize>) -> Option<&'t str> {
    let target = wiki_inner(text, whole)?.split('|').next()?.trim_end_matches('\\');
    target.split_once('#').map(|(_, fragment)| fragment.trim()).filter(|f| !f.is_empty())
}

/// What is between a wikilink's brackets.
fn wiki_inner<'t>(text: &'t str, whole: &Range<usize>) -> Option<&'t str> {
    text.get(whole.start..whole.end)?.trim_start_matches('!').strip_prefix("[[")?.strip_suffix("]]")
}

/// A size an image embed may carry: `600` or `600x400`.
fn is_size(label: &str) -> bool {
    let mut parts = label.splitn(2, 'x');
    parts.all(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Plans the import of `source`. `given` holds the slugs earlier commits gave (empty for
/// a folder or a zip); `existing` the workspace's live slugs, so a link to a page already
/// there is not reported broken; `name` names the images notes reference.
pub(crate) fn plan(source: &Source, given: &Given, existing: &HashSet<String>, name: Namer<'_>) -> Plan {
    let Source { notes, images, others, skipped, .. } = source;
    let mut plan = Plan { skipped: skipped.clone(), ..Plan::default() };
    let nodes = nodes(notes, given, &mut plan.renamed);
    plan.given = nodes.iter().map(|n| (n.key(), n.slug.clone())).collect();
    let folder_slug: HashMap<&str, &str> =
        nodes.iter().filter_map(|n| Some((n.folder.as_deref()?, n.slug.as_str()))).collect();

    let index = Index::new(&nodes, images);
    let mut upload_of: BTreeMap<String, Result<String, String>> = BTreeMap::new();
    let mut upload = |path: &str, plan: &mut Plan| -> Result<String, String> {
        if let Some(done) = upload_of.get(path) {
            return done.clone();
        }
        let result = match images.get(path) {
            Some(Ok(image)) => name(image).inspect(|n| {
                plan.uploads.push(PlannedUpload { source: path.to_owned(), name: n.clone(), image: image.clone() })
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
        let Some(path) = &n.note else {
            plan.pages.push(PlannedPage {
                source: n.source.clone(),
                slug: n.slug.clone(),
                title: title_from_name(),
                content: "".into(),
                parent,
                depth: depth(n),
                prior: Prior::Here,
                text: None,
                recorded: false,
            });
            continue;
        };
        let note = &notes[path];
        let original: &str = &note.text;
        let from_dir = parent_dir(path);
        let mut edits: Vec<(Range<usize>, String)> = Vec::new();
        let broken = |target: &str, plan: &mut Plan| {
            plan.broken_links.push(BrokenLink { source: path.clone(), target: target.to_owned() });
        };
        for span in note.links.iter() {
            let target = &original[span.target.clone()];
            match span.kind {
                LinkKind::Wiki | LinkKind::WikiEmbed if source::is_image(target) => {
                    match index.image(target, from_dir).map(|p| upload(&p, &mut plan)) {
                        Some(Ok(name)) => {
                            let file = file_name(target).replace(['[', ']', '|'], "");
                            let label = wiki_label(original, &span.whole).filter(|l| !l.is_empty());
                            let url = match wiki_fragment(original, &span.whole) {
                                Some(fragment) => format!("/uploads/{name}#{fragment}"),
                                None => format!("/uploads/{name}"),
                            };
                            edits.push((
                                span.whole.clone(),
                                match (span.kind, label) {
                                    // Inside a table a bare `|` would end the cell.
                                    (LinkKind::WikiEmbed, Some(size)) if is_size(size) => {
                                        let pipe = if span.in_table { "\\|" } else { "|" };
                                        format!("![{file}{pipe}{size}]({url})")
                                    }
                                    (kind, label) => {
                                        let text = label.unwrap_or(&file).replace(['[', ']'], "");
                                        let bang = if kind == LinkKind::WikiEmbed { "!" } else { "" };
                                        format!("{bang}[{text}]({url})")
                                    }
                                },
                            ));
                        }
                        _ => broken(target, &mut plan),
                    }
                }
                LinkKind::Wiki | LinkKind::WikiEmbed => match index.note(target, from_dir, true) {
                    Some(i) => {
                        let slug = &nodes[i].slug;
                        if markdown::link_slug(target) != *slug {
                            edits.extend(markdown::relink(original, span, slug));
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
        let content: Arc<str> = if edits.is_empty() {
            note.text.clone()
        } else {
            let rewritten = markdown::apply_edits(original, edits);
            if rewritten.len() > MAX_CONTENT_BYTES {
                plan.skipped.push(Skipped {
                    source: path.clone(),
                    reason: "links left as written: rewritten, the note would pass 1 MiB".to_owned(),
                });
                note.text.clone()
            } else {
                rewritten.into()
            }
        };
        // A Cairn export names each page's title; else the content does, or the file's name.
        let title = match source.titles.get(path) {
            Some(title) => Some(title.clone()),
            None if note.titled => None,
            None => title_from_name(),
        };
        plan.pages.push(PlannedPage {
            source: n.source.clone(),
            slug: n.slug.clone(),
            title,
            content,
            parent,
            depth: depth(n),
            prior: Prior::Here,
            text: Some(note.text.clone()),
            recorded: false,
        });
    }
    for path in images.keys() {
        if !upload_of.contains_key(path) {
            plan.skipped.push(Skipped { source: path.clone(), reason: "an image no note references".to_owned() });
        }
    }
    for path in others {
        plan.skipped.push(Skipped { source: path.clone(), reason: "neither markdown nor an image".to_owned() });
    }
    plan.skipped.sort_by(|a, b| a.source.cmp(&b.source));
    plan.broken_links.sort();
    plan.broken_links.dedup();
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(notes: &[(&str, &str)]) -> Source {
        Source {
            notes: notes.iter().map(|(p, c)| (p.to_string(), source::Note::new(c.to_string()))).collect(),
            ..Source::default()
        }
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
        let plan = plan(&src, &Given::default(), &HashSet::new(), &mut |_| Err("no images".into()));
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
            &*plan.pages[0].content,
            "See [[Notes]], [[notes-2|theirs]], [[Deep Note#Part]] and [[deep-note|x]].\n"
        );
        assert_eq!(plan.pages[0].title.as_deref(), Some("Home"));
        assert_eq!(plan.pages[3].title, None);
        assert_eq!(plan.renamed.len(), 1);
        assert_eq!(plan.broken_links, [BrokenLink { source: "a/Deep Note.md".into(), target: "missing".into() }]);
    }

    #[test]
    fn a_slug_stays_with_its_file_whatever_arrives_later() {
        let no_images = &mut |_: &Image| Err("no images".to_owned());
        let first = plan(&source(&[("en/Canvas.md", "v1")]), &Given::default(), &HashSet::new(), no_images);
        assert_eq!(first.given["en/Canvas.md"], "canvas");
        // `de` sorts first and arrives later: it gets the suffix.
        let given = Given::next(&first.given, &HashMap::new(), &[]);
        let second =
            plan(&source(&[("de/Canvas.md", "de"), ("en/Canvas.md", "v2")]), &given, &HashSet::new(), no_images);
        assert_eq!(
            (second.given["en/Canvas.md"].as_str(), second.given["de/Canvas.md"].as_str()),
            ("canvas", "canvas-2")
        );
        // A move keeps the slug; a rename takes its new name's, never one held.
        let moves = [("en/Canvas.md".to_owned(), "docs/Canvas.md".to_owned())];
        assert_eq!(Given::next(&second.given, &HashMap::new(), &moves).kept["docs/Canvas.md"], "canvas");
        let renames = [("de/Canvas.md".to_owned(), "de/Leinwand.md".to_owned())];
        let given = Given::next(&second.given, &HashMap::new(), &renames);
        assert!(!given.kept.contains_key("de/Leinwand.md") && given.reserved.contains("canvas-2"));
        // A removed file's slug waits for it in the trash; no other file takes it.
        let gone = HashMap::from([("en/Temp.md".to_owned(), "temp".to_owned())]);
        let given = Given::next(&second.given, &gone, &[]);
        let back = plan(&source(&[("en/Temp.md", "back"), ("Temp.md", "new")]), &given, &HashSet::new(), no_images);
        assert_eq!((back.given["en/Temp.md"].as_str(), back.given["Temp.md"].as_str()), ("temp", "temp-2"));
    }

    #[test]
    fn rewritten_links_keep_their_text_and_images_their_size() {
        let src = source(&[
            ("Guides/Import notes.md", "how"),
            ("Import notes/a.md", "a"),
            ("Import notes.md", "x"),
            ("b/Import notes.md", "b"),
            ("c/Links.md", "See [[Import notes]], [[Import notes#Part|label]] and | [[import-notes]] |.\n"),
        ]);
        let planned = plan(&src, &Given::default(), &HashSet::new(), &mut |_| Err("no images".to_owned()));
        let page = |source: &str| planned.pages.iter().find(|p| p.source == source).unwrap();
        // `Import notes.md` (the folder's own note, beside it) keeps the plain slug.
        assert_eq!(page("b/Import notes.md").slug, "import-notes-3");
        let links = "See [[Import notes]], [[Import notes#Part|label]] and | [[import-notes]] |.\n";
        assert_eq!(&*page("c/Links.md").content, links);
        let src =
            source(&[("a/Page.md", "p"), ("b/Page.md", "b"), ("c/Links.md", "[[a/Page]] [[Page#Top]] ![[Page]]")]);
        let planned = plan(&src, &Given::default(), &HashSet::new(), &mut |_| Err("no images".to_owned()));
        let c = planned.pages.iter().find(|p| p.source == "c/Links.md").unwrap();
        assert_eq!(&*c.content, "[[page|a/Page]] [[Page#Top]] ![[Page]]");
        let src = source(&[("x.md", "![[d.png|300]] ![[d.png|a caption]] [[d.png|see]] [[d.png]] ![[d.png#icon]]")]);
        let mut with_image = src;
        with_image.images.insert("d.png".to_owned(), Ok(Image::Bytes(std::sync::Arc::new(vec![1]))));
        let planned = plan(&with_image, &Given::default(), &HashSet::new(), &mut |_| Ok("h.png".to_owned()));
        assert_eq!(
            &*planned.pages[0].content,
            "![d.png|300](/uploads/h.png) ![a caption](/uploads/h.png) [see](/uploads/h.png) [d.png](/uploads/h.png) \
             ![d.png](/uploads/h.png#icon)"
        );
        assert!(
            planned.broken_links.is_empty() && planned.skipped.is_empty(),
            "{:?} {:?}",
            planned.broken_links,
            planned.skipped
        );
    }

    #[test]
    fn names_resolve_to_the_nearest_note_and_table_embeds_keep_their_cell() {
        let src = source(&[
            ("en/Publish/Security and privacy.md", "publish"),
            ("en/Publish/Setup.md", "[[Security and privacy]]"),
            ("en/A Sync/Security and privacy.md", "sync"),
            ("en/Home.md", "[[Canvas]] [[Security and privacy]]"),
            ("de/Canvas.md", "de"),
            ("en/Canvas.md", "en"),
            ("fr/Accueil.md", "[[Canvas]]"),
            ("fr/x/Canvas.md", "fr"),
            ("ko/Home.md", "[[Canvas]]"),
            ("t.md", "| a | ![[e.png\\|100]] |\n|---|---|\n| b | c |\n"),
        ]);
        let mut with_image = src;
        with_image.images.insert("img/e.png".to_owned(), Ok(Image::Bytes(std::sync::Arc::new(vec![1]))));
        let planned = plan(&with_image, &Given::default(), &HashSet::new(), &mut |_| Ok("h.png".to_owned()));
        let content = |source: &str| planned.pages.iter().find(|p| p.source == source).unwrap().content.to_string();
        let slug = |source: &str| planned.pages.iter().find(|p| p.source == source).unwrap().slug.clone();
        // Same folder first, though another is as deep and shorter, and took the name first.
        let publish = slug("en/Publish/Security and privacy.md");
        assert_eq!(publish, "security-and-privacy-2");
        assert_eq!(content("en/Publish/Setup.md"), format!("[[{publish}|Security and privacy]]"));
        // Else the fewest folders, and between equally deep ones the linking note's own
        // top folder: `en/Canvas.md` for English, the shallowest (`de`, then byte order)
        // for a language without one at that depth.
        let en = slug("en/Canvas.md");
        assert!(content("en/Home.md").starts_with(&format!("[[{en}|Canvas]]")), "{}", content("en/Home.md"));
        // `fr/x/Canvas.md` is deeper than `de/` and `en/`'s: the link goes to `de`'s (byte
        // order), whose slug it already names.
        assert_eq!(content("fr/Accueil.md"), "[[Canvas]]");
        assert_eq!(content("ko/Home.md"), "[[Canvas]]");
        // An image embed with a size keeps its cell: the pipe is escaped in a table.
        assert_eq!(content("t.md"), "| a | ![e.png\\|100](/uploads/h.png) |\n|---|---|\n| b | c |\n");
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
