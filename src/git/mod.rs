//! Workspace repositories: one ordinary bare git repository per workspace under
//! `DATA_DIR/workspaces/<slug>.git`, written without a work tree.
//!
//! Layout, chosen so a person browsing a clone finds a page by its slug while a save stays
//! cheap in a workspace of 10,000 pages (only the small trees on the changed path are
//! rewritten): a live page is `<first char>/<first two chars>/<slug>.md`
//! (`o/on/onboarding.md`); a trashed one is
//! `.trash/<slug>.md`. Each save is exactly one commit on `refs/heads/main`, authored by
//! the saving user, whose message ends in `Cairn-*` trailers (page id, action, slug,
//! title, parent, actor, time) — enough for `cairn reindex` to rebuild every index row.
//!
//! Durability: an acknowledged commit survives a power cut, and no ref ever names an
//! object that is not on disk. [`make_commit`] makes a commit's objects and
//! [`Unwritten::write`] writes them, [`sync_objects`]
//! makes them durable, and only then [`write_ref`] moves the branch (an exchange of files).
//! The branch's move itself is not flushed: the database commit that follows records the
//! same head, and after a power cut [`catch_up`] moves a branch that lost its move
//! forward to it (one barrier fewer per batch). On Linux the objects' barrier is one
//! `syncfs(2)` of the repository's filesystem: measured here at ≈ 0.4 ms against ≈ 1.8 ms
//! for fsyncing four object files and their directories one by one (the disk's ext4 runs
//! without a journal, so each fsync is a synchronous inode write and a device flush).
//! Elsewhere each file and directory is fsynced.

mod ofs_delta;
pub mod pack;
mod pack_index;
pub(crate) mod rewrite;
pub(crate) mod tree;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use git2::{ErrorCode, ObjectType, Oid, Repository, Signature, Time};

pub(crate) const BRANCH: &str = "refs/heads/main";

/// Where a live page's file lives.
pub fn live_path(slug: &str) -> String {
    // Two levels (`o/on/onboarding.md`): every tree on a page's path stays small — tens
    // of entries at 10,000 pages — so a save rewrites little whatever the wiki's size.
    let one: String = slug.chars().take(1).collect();
    let two: String = slug.chars().take(2).collect();
    format!("{one}/{two}/{slug}.md")
}

/// Where a trashed page's file lives.
pub(crate) fn trash_path(slug: &str) -> String {
    format!(".trash/{slug}.md")
}

/// Where a page's file lives, live or trashed.
pub(crate) fn page_path(slug: &str, trashed: bool) -> String {
    if trashed { trash_path(slug) } else { live_path(slug) }
}

/// One workspace repository. (Writes to it are serialised by the workspace's write lock,
/// `core::pages::batch`.)
pub struct WorkspaceRepo {
    repo: Arc<Mutex<Kept>>,
}

/// A repository handle kept open across uses, which lets go of packs removed since it was
/// opened.
///
/// libgit2 adds the packs it finds to a handle's list but never drops one whose file is
/// gone, so a handle kept for the life of the process kept every pack that packing later
/// folded away open and mapped: a server saving beside eight `cairn gc` runs held seven
/// removed packs, each a whole copy of the repository at its time, whose blocks the disk
/// frees only when their last descriptor closes, and whose pages stayed resident
/// (measured in commit 3477548). So a kept handle is reopened when the
/// pack directory changed since it was opened — one `stat` per use; a change is a packing
/// pass (this process's or another's), about one a minute while saves come in. A reader's
/// handle on a thread that does not read that repository again holds the packs of its
/// last use until the thread ends (tokio ends an idle blocking thread after 10 s).
struct Kept {
    repo: Repository,
    /// The pack directory's modification time when `repo` was opened.
    packs: Option<std::time::SystemTime>,
}

impl Kept {
    /// Opens the repository at `dir` with `open` ([`open_or_init`] for the writer's handle).
    fn open(dir: &Path, open: fn(&Path) -> anyhow::Result<Repository>) -> anyhow::Result<Kept> {
        // Read before opening: a change between the two makes one reopen too many, never
        // one too few.
        let packs = packs_changed_at(dir);
        Ok(Kept { repo: open(dir)?, packs })
    }

    /// The handle, reopened first if the packs changed since it was opened.
    fn current(&mut self) -> anyhow::Result<&Repository> {
        if packs_changed_at(self.repo.path()) != self.packs {
            let dir = self.repo.path().to_owned();
            *self = Kept::open(&dir, open_bare)?;
        }
        Ok(&self.repo)
    }
}

fn open_bare(dir: &Path) -> anyhow::Result<Repository> {
    Ok(Repository::open_bare(dir)?)
}

/// When the repository's pack directory last changed (a pack added or removed).
fn packs_changed_at(dir: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(dir.join("objects/pack")).and_then(|m| m.modified()).ok()
}

impl WorkspaceRepo {
    /// Runs `f` on the repository on the blocking pool (git work does file I/O and fsync).
    pub async fn with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Repository) -> anyhow::Result<R> + Send + 'static,
    ) -> anyhow::Result<R> {
        self.start(f).await
    }

    /// Like [`WorkspaceRepo::with`], but `f` starts now, not when the answer is first
    /// awaited: the caller does other work meanwhile (a save writes its rows while its
    /// objects are written).
    pub fn start<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Repository) -> anyhow::Result<R> + Send + 'static,
    ) -> impl Future<Output = anyhow::Result<R>> + Send + 'static {
        let repo = self.repo.clone();
        let task = tokio::task::spawn_blocking(move || {
            let mut repo = repo.lock().map_err(|_| anyhow::anyhow!("repository lock poisoned"))?;
            f(repo.current()?)
        });
        async move { task.await.context("git task failed")? }
    }
}

/// The open repositories, by workspace slug (slugs never change).
#[derive(Default)]
pub struct Repos {
    open: Mutex<HashMap<String, Arc<WorkspaceRepo>>>,
}

impl Repos {
    pub fn get(&self, dir: &Path, slug: &str) -> anyhow::Result<Arc<WorkspaceRepo>> {
        let mut open = self.open.lock().map_err(|_| anyhow::anyhow!("repos lock poisoned"))?;
        if let Some(r) = open.get(slug) {
            return Ok(r.clone());
        }
        let r = Arc::new(WorkspaceRepo { repo: Arc::new(Mutex::new(Kept::open(dir, open_or_init)?)) });
        open.insert(slug.to_owned(), r.clone());
        Ok(r)
    }

    /// Forgets a workspace's repository (after its files were moved aside).
    pub fn forget(&self, slug: &str) {
        if let Ok(mut open) = self.open.lock() {
            open.remove(slug);
        }
    }
}

pub fn open_or_init(dir: &Path) -> anyhow::Result<Repository> {
    match Repository::open_bare(dir) {
        Ok(r) => Ok(r),
        Err(_) => {
            std::fs::create_dir_all(dir)?;
            let r = Repository::init_bare(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            r.set_head(BRANCH)?;
            Ok(r)
        }
    }
}

pub fn head(repo: &Repository) -> anyhow::Result<Option<Oid>> {
    match repo.refname_to_id(BRANCH) {
        Ok(oid) => Ok(Some(oid)),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// A file change in a commit: write `content` at `path`, or remove `path` (None).
pub struct FileChange {
    pub path: String,
    pub content: Option<Vec<u8>>,
}

pub struct Author<'a> {
    pub name: &'a str,
    pub email: &'a str,
    /// Unix seconds of the save.
    pub time: i64,
}

/// A commit and its tree: where the next commit on top of it starts, without reading
/// the commit back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tip {
    pub commit: Oid,
    pub tree: Oid,
}

/// The branch's head and its tree.
pub(crate) fn tip(repo: &Repository) -> anyhow::Result<Option<Tip>> {
    let Some(commit) = head(repo)? else { return Ok(None) };
    Ok(Some(Tip { commit, tree: repo.find_commit(commit)?.tree_id() }))
}

/// What [`make_commit`] made: the new tip, and the id of each change's content (None
/// for a removal), in the order of the changes.
pub struct Written {
    pub tip: Tip,
    pub blobs: Vec<Option<Oid>>,
}

/// Makes the objects of one commit of `changes` on top of `parent` in memory — blobs,
/// the trees on the changed paths, the commit — with their ids, and adds them to
/// `made`. Nothing is written: [`Unwritten::write`] writes them (a save hands the ids to
/// its database rows meanwhile), the caller passes the ids it pushed onto its list to
/// [`sync_objects`], and only then does [`write_ref`] name the commit (a group of saves
/// shares those two barriers).
///
/// The objects are written by [`write_loose`], not through libgit2's object database:
/// for each new object libgit2 first tries to freshen an existing copy, then re-lists
/// `objects/pack/`, and reads back the objects a tree or commit names — about 80 file
/// system calls a save under the write lock, where these files need five creations and
/// five renames (measured in commit b696015). libgit2 still reads them; the
/// commit is laid out by [`commit_body`] as libgit2 would, from the parent's tree the
/// caller carries in its [`Tip`].
pub(crate) fn make_commit(
    repo: &Repository,
    parent: Option<Tip>,
    changes: &[FileChange],
    author: &Author<'_>,
    committer: &Author<'_>,
    message: &str,
    made: &mut Unwritten,
) -> anyhow::Result<Written> {
    let mut tree_id = parent.map(|p| p.tree);
    let mut blobs = Vec::with_capacity(changes.len());
    for change in changes {
        let blob = change.content.as_ref().map(|c| made.add(ObjectType::Blob, Arc::new(c.clone()))).transpose()?;
        blobs.push(blob);
        let parts: Vec<&str> = change.path.split('/').collect();
        tree_id = update_tree(repo, made, tree_id, &parts, blob)?;
    }
    let tree = match tree_id {
        Some(t) => t,
        None => made.add(ObjectType::Tree, Arc::new(Vec::new()))?,
    };
    let body = commit_body(tree, parent.map(|p| p.commit), author, committer, message)?;
    let commit = made.add(ObjectType::Commit, Arc::new(body))?;
    Ok(Written { tip: Tip { commit, tree }, blobs })
}

/// [`make_commit`] and [`Unwritten::write`] at once, for a caller with nothing to do
/// between them (the packing bench builds repositories with it).
pub fn write_commit(
    repo: &Repository,
    parent: Option<Tip>,
    changes: &[FileChange],
    author: &Author<'_>,
    committer: &Author<'_>,
    message: &str,
    written: &mut Vec<Oid>,
) -> anyhow::Result<Written> {
    let mut made = Unwritten::default();
    let commit = make_commit(repo, parent, changes, author, committer, message, &mut made)?;
    made.write(repo, written)?;
    Ok(commit)
}

/// Objects made in memory and not written yet, in the order they were made.
#[derive(Default)]
pub struct Unwritten {
    objects: Vec<(Oid, ObjectType, Arc<Vec<u8>>)>,
    /// The trees among them, by id: a later commit of the same save builds on them, and
    /// [`tree::keep`]'s cache may have passed over (large) or dropped them.
    trees: HashMap<Oid, usize>,
}

impl Unwritten {
    fn add(&mut self, kind: ObjectType, body: Arc<Vec<u8>>) -> anyhow::Result<Oid> {
        let oid = object_id(kind, &body)?;
        if kind == ObjectType::Tree {
            self.trees.insert(oid, self.objects.len());
        }
        self.objects.push((oid, kind, body));
        Ok(oid)
    }

    /// Adds a blob: content a rewrite puts in place of another.
    pub fn blob(&mut self, body: &[u8]) -> anyhow::Result<Oid> {
        self.add(ObjectType::Blob, Arc::new(body.to_vec()))
    }

    /// The body of tree `id`: made here, kept from a recent save, or read from the
    /// repository.
    fn tree(&self, repo: &Repository, id: Oid) -> anyhow::Result<Arc<Vec<u8>>> {
        match self.trees.get(&id) {
            Some(&n) => Ok(self.objects[n].2.clone()),
            None => tree::body(repo, id),
        }
    }

    /// Writes every object loose ([`write_loose`]), pushing its id onto `written`.
    pub fn write(&self, repo: &Repository, written: &mut Vec<Oid>) -> anyhow::Result<()> {
        let objects = repo.path().join("objects");
        for (oid, kind, body) in &self.objects {
            write_loose(&objects, *oid, *kind, body)?;
            written.push(*oid);
        }
        Ok(())
    }
}

/// A commit's body as git lays it out (and libgit2's `commit_create_buffer`, which the
/// tests compare it with): written here rather than by libgit2, which would first read
/// the new tree back from its file — the whole directory's tree, for a page in a
/// directory many pages share. Names and emails go through libgit2's `Signature`, which
/// trims them and refuses the ones git cannot store.
fn commit_body(
    tree: Oid,
    parent: Option<Oid>,
    author: &Author<'_>,
    committer: &Author<'_>,
    message: &str,
) -> anyhow::Result<Vec<u8>> {
    use std::io::Write;
    let mut body = Vec::with_capacity(300 + message.len());
    writeln!(body, "tree {tree}")?;
    if let Some(parent) = parent {
        writeln!(body, "parent {parent}")?;
    }
    for (key, who) in [("author", author), ("committer", committer)] {
        let (name, email) = (signable(who.name, "unknown"), signable(who.email, "unknown"));
        let sig = Signature::new(&name, &email, &Time::new(who.time, 0))?;
        write!(body, "{key} ")?;
        body.extend_from_slice(sig.name_bytes());
        body.extend_from_slice(b" <");
        body.extend_from_slice(sig.email_bytes());
        writeln!(body, "> {} +0000", who.time)?;
    }
    body.push(b'\n');
    body.extend_from_slice(message.as_bytes());
    Ok(body)
}

/// A name or email as a commit can hold it: git refuses `<`, `>` and line breaks in
/// either (names are checked where they are accepted, but rows of older releases, or an
/// imported commit's author, may hold anything), so those are dropped; what is left
/// empty becomes `fallback`. A save never fails over its author's name.
fn signable(text: &str, fallback: &str) -> String {
    let kept: String = text.chars().filter(|c| !matches!(c, '<' | '>' | '\n' | '\r' | '\0')).collect();
    if kept.trim().is_empty() { fallback.to_owned() } else { kept }
}

/// Writes one loose object as git does: `<kind> <size>\0<body>`, zlib-deflated, at
/// `objects/xx/<38 hex digits>`, so that a reader sees the whole object or none: on Linux
/// by a file with no name linked into place once written ([`write_unnamed`]), elsewhere
/// (or where that cannot be done) by way of a temporary file in `objects/` (`tmp_obj_*`,
/// the name git gives its own, which `git gc` cleans up there after a crash) renamed
/// into place. That temporary name sits in the one directory every object of a batch
/// shares rather than in the object's own: a file's two names in one hashed directory
/// usually fall in two of its blocks, and each block a save dirties is written back by
/// the batch's barrier (the object writers dirtied ≈ 92 KiB per save
/// for ≈ 9 KiB of objects; measured in commit 21ed310). An object that
/// is already there loose is not written again; one that is only packed gets a loose
/// copy, which is harmless. Not durable until [`sync_objects`].
/// `oid` is the object's id ([`object_id`]), which the caller already needed.
fn write_loose(objects: &Path, oid: Oid, kind: ObjectType, body: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static TMP: AtomicU64 = AtomicU64::new(0);
    let hex = oid.to_string();
    let dir = objects.join(&hex[..2]);
    let path = dir.join(&hex[2..]);
    if path.exists() {
        return Ok(());
    }
    let bytes = deflated(kind, body)?;
    #[cfg(target_os = "linux")]
    if write_unnamed(objects, &dir, &path, &bytes)? {
        return Ok(());
    }
    let tmp = objects.join(format!("tmp_obj_{}_{}", std::process::id(), TMP.fetch_add(1, Ordering::Relaxed)));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o444);
    let mut file = options.open(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    file.write_all(&bytes)?;
    drop(file);
    let moved = match std::fs::rename(&tmp, &path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&dir)?;
            std::fs::rename(&tmp, &path)
        }
        moved => moved,
    };
    moved.with_context(|| format!("cannot move {} into place", tmp.display()))?;
    Ok(())
}

/// Writes a loose object's bytes to a file with no name yet (`O_TMPFILE` in `objects/`)
/// and links it in at `path` once whole: what [`write_loose`]'s temporary file and
/// rename do, with one directory entry fewer to make and remove per object, and none in
/// `objects/` for the batch's barrier to write back (16-client updates at 10,000 pages
/// 973–975 → 1,018–1,117/s: measured in commit 6dac29f). A crash
/// before the link leaves nothing to clean up. False when this system cannot (a
/// filesystem without `O_TMPFILE`, no `/proc` to link through), from then on without
/// trying: the caller writes a named temporary file instead.
#[cfg(target_os = "linux")]
fn write_unnamed(objects: &Path, dir: &Path, path: &Path, bytes: &[u8]) -> anyhow::Result<bool> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    use std::sync::atomic::{AtomicBool, Ordering};
    // Once this system could not, no object tries again (as [`exchanged`]).
    static UNSUPPORTED: AtomicBool = AtomicBool::new(false);
    let unsupported = || {
        UNSUPPORTED.store(true, Ordering::Relaxed);
        Ok(false)
    };
    if UNSUPPORTED.load(Ordering::Relaxed) {
        return Ok(false);
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).custom_flags(libc::O_TMPFILE).mode(0o444);
    let mut file = match options.open(objects) {
        Ok(file) => file,
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => {
            return unsupported();
        }
        Err(e) => return Err(e).with_context(|| format!("cannot create a file in {}", objects.display())),
    };
    file.write_all(bytes)?;
    // Linking a descriptor by its `/proc` name needs no privilege (`AT_EMPTY_PATH` does).
    let from = c_path(Path::new(&format!("/proc/self/fd/{}", file.as_raw_fd())))?;
    let to = c_path(path)?;
    let link = || {
        // SAFETY: two NUL-terminated paths that outlive the call.
        let done = unsafe {
            libc::linkat(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW)
        };
        if done == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
    };
    let linked = match link() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !dir.exists() => {
            std::fs::create_dir_all(dir)?;
            link()
        }
        linked => linked,
    };
    match linked {
        Ok(()) => Ok(true),
        // Another writer (a second process) put the same object there first.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(true),
        // No `/proc` to link through; or the directory went again (an operator's `git
        // prune`), which the named file's way mends.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if Path::new("/proc/self/fd").is_dir() {
                Ok(false)
            } else {
                unsupported()
            }
        }
        Err(e) => Err(e).with_context(|| format!("cannot link {} into place", path.display())),
    }
}

/// A path as the C string a system call takes.
#[cfg(target_os = "linux")]
fn c_path(path: &Path) -> anyhow::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes()).context("a path with a NUL byte")
}

/// The id git gives an object. Blobs (what users wrote) through libgit2's SHA-1 with
/// collision detection, as git does; trees and commits, which Cairn lays out itself from
/// slugs, ids and trailers, through a plain SHA-1 (with the CPU's SHA instructions where
/// it has them): a tree of a directory many pages share is hundreds of KiB, hashed at
/// each save there, and collision detection made that several times slower.
pub(crate) fn object_id(kind: ObjectType, body: &[u8]) -> anyhow::Result<Oid> {
    use sha1::{Digest, Sha1};
    if kind == ObjectType::Blob {
        return Ok(Oid::hash_object(kind, body)?);
    }
    let mut hash = Sha1::new();
    hash.update(format!("{} {}\0", kind.str(), body.len()).as_bytes());
    hash.update(body);
    Ok(Oid::from_bytes(&hash.finalize())?)
}

/// `<kind> <size>\0<body>` as a zlib stream (by the thread's kept encoder). A tree
/// larger than [`STORED_TREE`] is stored uncompressed (git reads any zlib stream).
fn deflated(kind: ObjectType, body: &[u8]) -> anyhow::Result<Vec<u8>> {
    use crate::zlib::Level;
    let header = format!("{} {}\0", kind.str(), body.len());
    let level = if kind == ObjectType::Tree && body.len() > STORED_TREE { Level::Stored } else { Level::Fast };
    Ok(crate::zlib::compress(level, &[header.as_bytes(), body])?)
}

/// The size past which a loose tree is written uncompressed. The tree of a directory
/// that many pages share (slugs with one prefix: `meeting-…`) is hundreds of KiB, and a
/// save there writes it again: deflating it was half of such a save's time under the
/// workspace's lock, for a file that lives only until the next packing pass compresses
/// it with the rest (measured in commit b5c9bdb). Its twenty-byte ids
/// hardly compress anyway.
const STORED_TREE: usize = 16 * 1024;

/// Makes the given loose objects durable, with the directories that name them. None
/// given: nothing to wait for (a group's trip made its own durable already).
pub(crate) fn sync_objects(repo: &Repository, oids: &[Oid]) -> anyhow::Result<()> {
    if oids.is_empty() {
        return Ok(());
    }
    if cfg!(target_os = "linux") {
        return sync_filesystem(repo.path());
    }
    let objects = repo.path().join("objects");
    let mut dirs: Vec<PathBuf> = Vec::new();
    for oid in oids {
        let hex = oid.to_string();
        let dir = objects.join(&hex[..2]);
        // An object that was already packed has no loose file; it is durable already.
        if let Ok(f) = std::fs::File::open(dir.join(&hex[2..])) {
            f.sync_all()?;
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs.push(objects);
    for dir in dirs {
        std::fs::File::open(&dir)?.sync_all()?;
    }
    Ok(())
}

/// One barrier for everything written so far on the filesystem holding `path`.
#[cfg(target_os = "linux")]
fn sync_filesystem(path: &Path) -> anyhow::Result<()> {
    use std::os::fd::AsRawFd;
    let dir = std::fs::File::open(path)?;
    // SAFETY: syncfs takes an open descriptor, valid for the duration of the call.
    if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error()).context("syncfs failed");
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn sync_filesystem(_path: &Path) -> anyhow::Result<()> {
    unreachable!("only called on Linux")
}

/// Moves the branch to `new` if it is still at `expected`, so that a reader sees the old
/// head or the new one ([`put_ref`]). **Not durable**: a batch does not pay a
/// barrier for it, because the database transaction that follows records the same head
/// (`workspace_heads`), and after a power cut [`catch_up`] moves a branch that lost its
/// last move forward to that recorded head, whose objects were made durable before the
/// branch named them. Writers are already serialised (process lock, and PostgreSQL's
/// advisory lock across processes).
pub fn write_ref(repo: &Repository, new: Oid, expected: Option<Oid>) -> anyhow::Result<()> {
    let current = head(repo)?;
    if current != expected {
        anyhow::bail!("the branch moved from {expected:?} to {current:?} under the write lock");
    }
    put_ref(repo, new)
}

/// The file a branch move writes the new head into before exchanging it with the branch's
/// file: outside `refs/` (git reads no ref there) and beside it (one filesystem).
pub(crate) const REF_SPARE: &str = "cairn-ref-spare";

/// Names `new` in the branch's file. Where it can (Linux, a filesystem with
/// `renameat2(RENAME_EXCHANGE)`, a branch file there already), the head is written in
/// place into [`REF_SPARE`] and the two files are exchanged in one step: the branch's old
/// file becomes the spare for the next move. A move then neither makes nor frees an
/// inode, and frees no block — git's way (`main.lock` made, renamed over `main`) does all
/// three, and on this project's disks (ext4 without a journal, mounted with `discard`) a
/// new inode scans past every one freed in the last minute, which made the branch's move
/// a tenth of a lone save's CPU (measured in commit 384e88a).
/// Otherwise, git's way; a lock file found then is a leftover from a crash and is replaced.
///
/// A reader that opened the branch's file just before one move and reads it only after
/// the next one began writing the spare in place could read a mix of two heads (41 bytes
/// copied at the same instant): it would fail to read the branch, never misread it, and
/// the file on disk is whole either way.
fn put_ref(repo: &Repository, new: Oid) -> anyhow::Result<()> {
    use std::io::Write;
    let path = repo.path().join(BRANCH);
    let line = format!("{new}\n");
    #[cfg(target_os = "linux")]
    if exchanged(repo, &path, line.as_bytes())? {
        return Ok(());
    }
    let dir = path.parent().context("ref has a directory")?;
    std::fs::create_dir_all(dir)?;
    let lock = path.with_extension("lock");
    let _ = std::fs::remove_file(&lock);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&lock)?;
    f.write_all(line.as_bytes())?;
    drop(f);
    std::fs::rename(&lock, &path)?;
    Ok(())
}

/// [`put_ref`]'s exchange: false (nothing exchanged) when the branch has no file yet, or
/// when the filesystem cannot exchange two names (then never tried again in this process).
#[cfg(target_os = "linux")]
fn exchanged(repo: &Repository, branch: &Path, line: &[u8]) -> anyhow::Result<bool> {
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    static UNSUPPORTED: AtomicBool = AtomicBool::new(false);
    if UNSUPPORTED.load(Ordering::Relaxed) {
        return Ok(false);
    }
    let spare = repo.path().join(REF_SPARE);
    let file = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(&spare)?;
    file.write_all_at(line, 0)?;
    // The branch's old file holds a head of the same length; anything longer is cut.
    if file.metadata()?.len() != line.len() as u64 {
        file.set_len(line.len() as u64)?;
    }
    drop(file);
    let (from, to) = (c_path(&spare)?, c_path(branch)?);
    // SAFETY: two NUL-terminated paths that live across the call; no descriptors.
    let done =
        unsafe { libc::renameat2(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::RENAME_EXCHANGE) };
    if done == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        // The branch has no file yet (its first move, or refs packed by an operator's git).
        Some(libc::ENOENT) => Ok(false),
        Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => {
            UNSUPPORTED.store(true, Ordering::Relaxed);
            Ok(false)
        }
        _ => Err(e).with_context(|| format!("cannot exchange {} with {}", spare.display(), branch.display())),
    }
}

/// Makes the branch file as it now is durable: its content and name, or its removal.
fn sync_ref(repo: &Repository) -> anyhow::Result<()> {
    if cfg!(target_os = "linux") {
        return sync_filesystem(repo.path());
    }
    let path = repo.path().join(BRANCH);
    if let Ok(file) = std::fs::File::open(&path) {
        file.sync_all()?;
    }
    std::fs::File::open(path.parent().context("ref has a directory")?)?.sync_all()?;
    Ok(())
}

/// After a crash: moves the branch forward to `recorded`, the head the database recorded
/// with its last committed batch, when the branch lost that move — its file still names
/// an ancestor of `recorded`, or is missing or unreadable (renamed into place, its content
/// not yet written back) — and `recorded` is a commit on disk. Durably; answers whether
/// it moved. A branch at or ahead of `recorded` (a crash before the database commit, or
/// a backup's files taken after its database) is left alone: the start-up check indexes
/// its commits.
pub(crate) fn catch_up(repo: &Repository, recorded: Oid) -> anyhow::Result<bool> {
    let current = head(repo).ok();
    if current == Some(Some(recorded)) || repo.find_commit(recorded).is_err() {
        return Ok(false);
    }
    let behind = match current {
        Some(Some(branch)) => repo.graph_descendant_of(recorded, branch)?,
        // No branch at all, or a file that names nothing.
        _ => true,
    };
    if behind {
        put_ref(repo, recorded)?;
        sync_ref(repo)?;
    }
    Ok(behind)
}

/// Puts the branch back to `to` (used when the database transaction after a commit
/// fails, so the failed save leaves nothing behind), durably: the database recorded
/// nothing that would bring it back.
pub(crate) fn reset_branch(repo: &Repository, to: Option<Oid>, from: Oid) -> anyhow::Result<()> {
    match to {
        Some(oid) => write_ref(repo, oid, Some(from))?,
        None => repo.find_reference(BRANCH)?.delete()?,
    }
    sync_ref(repo)
}

/// The tree `base` with `blob` at `parts` (or nothing there, with None), made; None when
/// it ends up empty (git keeps no empty trees below the root).
fn update_tree(
    repo: &Repository,
    made: &mut Unwritten,
    base: Option<Oid>,
    parts: &[&str],
    blob: Option<Oid>,
) -> anyhow::Result<Option<Oid>> {
    let name = parts[0].as_bytes();
    let body = base.map(|id| made.tree(repo, id)).transpose()?;
    let body: &[u8] = body.as_ref().map_or(&[], |b| b.as_slice());
    let entries = tree::entries(body)?;
    let child = if parts.len() == 1 {
        blob.map(|b| (tree::FILE_MODE, b))
    } else {
        let sub = tree::find(&entries, name).filter(|e| e.is_tree()).map(|e| e.id());
        update_tree(repo, made, sub, &parts[1..], blob)?.map(|t| (tree::TREE_MODE, t))
    };
    let new = tree::splice(body, &entries, name, child);
    if new.is_empty() {
        return Ok(None);
    }
    let new = Arc::new(new);
    let oid = made.add(ObjectType::Tree, new.clone())?;
    tree::keep(oid, new);
    Ok(Some(oid))
}

/// The bytes of `path` as of commit `sha`, if it existed there.
pub(crate) fn read_at(repo: &Repository, sha: Oid, path: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let commit = match repo.find_commit(sha) {
        Ok(c) => c,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let tree = commit.tree()?;
    let entry = match tree.get_path(Path::new(path)) {
        Ok(e) => e,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let blob = repo.find_blob(entry.id())?;
    Ok(Some(blob.content().to_vec()))
}

thread_local! {
    /// Read-only handles, one per repository per blocking thread: reads neither wait for
    /// the writer's handle nor reopen the repository each time.
    static READERS: std::cell::RefCell<HashMap<PathBuf, Kept>> = Default::default();
}

/// Runs `f` on a read-only handle of the repository at `dir`, on the blocking pool.
pub(crate) async fn read<R: Send + 'static>(
    dir: PathBuf,
    f: impl FnOnce(&Repository) -> anyhow::Result<R> + Send + 'static,
) -> anyhow::Result<R> {
    tokio::task::spawn_blocking(move || {
        READERS.with(|cell| {
            let mut readers = cell.borrow_mut();
            let kept = match readers.entry(dir) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let kept = Kept::open(e.key(), open_bare)?;
                    e.insert(kept)
                }
            };
            f(kept.current()?)
        })
    })
    .await
    .context("git task failed")?
}

/// The bytes of blob `oid`, if the repository has it.
pub(crate) fn read_blob(repo: &Repository, oid: Oid) -> anyhow::Result<Option<Vec<u8>>> {
    match repo.find_blob(oid) {
        Ok(b) => Ok(Some(b.content().to_vec())),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The `Cairn-*` trailers of a commit message, keys without the prefix.
pub(crate) fn trailers(message: &str) -> HashMap<String, String> {
    message
        .lines()
        .filter_map(|l| l.strip_prefix("Cairn-"))
        .filter_map(|l| l.split_once(": ").or_else(|| l.strip_suffix(':').map(|k| (k, ""))))
        .map(|(k, v)| (k.to_lowercase(), v.to_owned()))
        .collect()
}

/// Every commit reachable from the branch head, newest first.
pub(crate) fn log(repo: &Repository) -> anyhow::Result<Vec<Oid>> {
    let Some(head) = head(repo)? else { return Ok(vec![]) };
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL)?;
    walk.push(head)?;
    Ok(walk.collect::<Result<Vec<_>, _>>()?)
}

/// A bare repository's path for workspace `slug`.
pub(crate) fn repo_dir(data_dir: &Path, slug: &str) -> PathBuf {
    data_dir.join("workspaces").join(format!("{slug}.git"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::Tree;

    fn author() -> Author<'static> {
        Author { name: "Ada", email: "ada@example.com", time: 1_700_000_000 }
    }

    /// `git fsck --strict --full` passes on the repository; answers what it printed on
    /// stderr (warnings, for a test that wants none).
    fn fsck_strict(repo: &Repository) -> String {
        let fsck = std::process::Command::new("git")
            .args(["fsck", "--strict", "--full"])
            .current_dir(repo.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&fsck.stderr).into_owned();
        assert!(fsck.status.success(), "{stderr}");
        stderr
    }

    /// The branch moves by exchanging its file with a spare written in place: every move
    /// is read back by libgit2 and by git, the spare then holds the head before (the
    /// branch's old file, kept rather than freed), and the repository stays clean.
    #[test]
    fn the_branch_moves_by_exchanging_its_file_with_a_spare() {
        let dir = tempfile::tempdir().unwrap();
        let repo = open_or_init(dir.path()).unwrap();
        let mut heads = Vec::new();
        let mut parent = None;
        for n in 0..3 {
            let change = FileChange { path: format!("p/pa/page-{n}.md"), content: Some(b"text\n".to_vec()) };
            let mut written = Vec::new();
            let saved = write_commit(&repo, parent, &[change], &author(), &author(), "Save\n", &mut written).unwrap();
            write_ref(&repo, saved.tip.commit, parent.map(|t: Tip| t.commit)).unwrap();
            assert_eq!(head(&repo).unwrap(), Some(saved.tip.commit));
            let git = std::process::Command::new("git")
                .args(["rev-parse", "refs/heads/main"])
                .current_dir(repo.path())
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&git.stdout).trim(), saved.tip.commit.to_string());
            heads.push(saved.tip.commit);
            parent = Some(saved.tip);
        }
        let branch = repo.path().join(BRANCH);
        let spare = repo.path().join(REF_SPARE);
        if cfg!(target_os = "linux") {
            // The first move made the branch's file; the later ones exchanged it.
            assert_eq!(std::fs::read_to_string(&spare).unwrap(), format!("{}\n", heads[1]));
        }
        assert_eq!(std::fs::read_to_string(&branch).unwrap(), format!("{}\n", heads[2]));
        assert!(!branch.with_extension("lock").exists());
        // A spare longer than a head (left by anything) is cut to the head's length.
        if cfg!(target_os = "linux") {
            std::fs::write(&spare, "x".repeat(100)).unwrap();
            reset_branch(&repo, Some(heads[1]), heads[2]).unwrap();
            assert_eq!(std::fs::read_to_string(&branch).unwrap(), format!("{}\n", heads[1]));
        }
        let complaints = fsck_strict(&repo);
        assert!(complaints.is_empty(), "{complaints}");
    }

    /// A kept handle lets go of the packs a packing pass removed: once it is used again,
    /// nothing of theirs stays open or mapped in the process (libgit2's own handle would
    /// keep them until it is dropped).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_kept_handle_lets_go_of_removed_packs() {
        let dir = tempfile::tempdir().unwrap();
        let mut kept = Kept::open(dir.path(), open_or_init).unwrap();
        let mut parent: Option<Tip> = None;
        // Reads every page version through the handle, so each pack is open and mapped.
        let read_all = |kept: &mut Kept| {
            let repo = kept.current().unwrap();
            for commit in log(repo).unwrap() {
                let tree = repo.find_commit(commit).unwrap().tree().unwrap();
                tree.walk(git2::TreeWalkMode::PreOrder, |_, entry| {
                    repo.find_object(entry.id(), None).unwrap();
                    git2::TreeWalkResult::Ok
                })
                .unwrap();
            }
        };
        for round in 0..2 {
            for n in 0..3 {
                let repo = kept.current().unwrap();
                let content = format!("round {round}, version {n}\n").repeat(50).into_bytes();
                let change = FileChange { path: format!("p/pa/page-{n}.md"), content: Some(content) };
                let saved =
                    write_commit(repo, parent, &[change], &author(), &author(), "Save\n", &mut Vec::new()).unwrap();
                write_ref(repo, saved.tip.commit, parent.map(|t| t.commit)).unwrap();
                parent = Some(saved.tip);
            }
            pack::pack(dir.path(), false, &|| false).unwrap();
            read_all(&mut kept);
        }
        assert!(!pack::packs(dir.path()).unwrap().is_empty());
        pack::pack(dir.path(), true, &|| false).unwrap();
        read_all(&mut kept);
        let removed_but_held = |listing: String| -> Vec<String> {
            let dir = dir.path().to_string_lossy().into_owned();
            listing.lines().filter(|l| l.contains(&dir) && l.contains("(deleted)")).map(str::to_owned).collect()
        };
        let maps = removed_but_held(std::fs::read_to_string("/proc/self/maps").unwrap());
        assert!(maps.is_empty(), "removed packs still mapped: {maps:#?}");
        let fds = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .map(|target| target.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        let fds = removed_but_held(fds);
        assert!(fds.is_empty(), "removed packs still open: {fds:#?}");
        assert_eq!(pack::packs(dir.path()).unwrap().len(), 1);
        fsck_strict(kept.current().unwrap());
    }

    /// A directory's tree past [`STORED_TREE`] is written uncompressed, and is the same
    /// object for libgit2 and for git itself.
    #[test]
    fn a_large_tree_is_stored_uncompressed_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let repo = open_or_init(dir.path()).unwrap();
        let changes: Vec<FileChange> = (0..600)
            .map(|n| FileChange {
                path: format!("m/me/meeting-notes-{n}.md"),
                content: Some(format!("notes {n}\n").into_bytes()),
            })
            .collect();
        let mut written = Vec::new();
        let saved = write_commit(&repo, None, &changes, &author(), &author(), "Notes\n", &mut written).unwrap();
        let tree = repo.find_commit(saved.tip.commit).unwrap().tree().unwrap();
        let me = repo.find_tree(tree.get_path(Path::new("m/me")).unwrap().id()).unwrap();
        assert_eq!(me.len(), 600);
        // The first deflate block's type (bits 1–2 of the byte after zlib's two-byte
        // header): 0 is stored, 1 and 2 compressed.
        let block_type = |id: Oid| {
            let hex = id.to_string();
            let bytes = std::fs::read(repo.path().join("objects").join(&hex[..2]).join(&hex[2..])).unwrap();
            (bytes[2] >> 1) & 3
        };
        assert!(repo.odb().unwrap().read_header(me.id()).unwrap().0 > STORED_TREE);
        assert_eq!(block_type(me.id()), 0, "a large tree is stored");
        // A small tree, and the blobs, are still deflated.
        assert_ne!(block_type(tree.get_path(Path::new("m")).unwrap().id()), 0);
        assert_ne!(block_type(me.get(0).unwrap().id()), 0);
        fsck_strict(&repo);
    }

    /// On Linux an object is written as a file with no name and linked into place (its
    /// fan-out directory made on the way): no temporary file is left in `objects/`, the
    /// object is read-only as git makes it, and one another process linked first is
    /// taken as written.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_object_is_linked_into_place_whole() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let repo = open_or_init(dir.path()).unwrap();
        let objects = repo.path().join("objects");
        let body = b"unnamed\n";
        let id = object_id(ObjectType::Blob, body).unwrap();
        let hex = id.to_string();
        let fan = objects.join(&hex[..2]);
        let path = fan.join(&hex[2..]);
        assert!(!fan.exists());
        let bytes = deflated(ObjectType::Blob, body).unwrap();
        assert!(write_unnamed(&objects, &fan, &path, &bytes).unwrap(), "this filesystem has O_TMPFILE");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o444);
        assert_eq!(repo.find_blob(id).unwrap().content(), body);
        assert!(write_unnamed(&objects, &fan, &path, &bytes).unwrap(), "the name taken is the same object");
        assert_eq!(repo.find_blob(id).unwrap().content(), body);
        let names = std::fs::read_dir(&objects).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
        let left: Vec<String> = names.filter(|n| n.starts_with("tmp")).collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
        fsck_strict(&repo);
    }

    /// The objects Cairn writes itself are the ones libgit2 would write: the same ids
    /// (so the same bytes before compression), readable through libgit2, in git's tree
    /// order — where `a/` sorts after `a-b.md` and `a.md`, though `a` sorts before both.
    #[test]
    fn loose_objects_are_the_ones_libgit2_writes() {
        let dir = tempfile::tempdir().unwrap();
        let repo = open_or_init(dir.path()).unwrap();
        let objects = repo.path().join("objects");
        let body = b"# Page\n\nSome text.\n";
        let ours = object_id(ObjectType::Blob, body).unwrap();
        write_loose(&objects, ours, ObjectType::Blob, body).unwrap();
        assert_eq!(ours, Oid::hash_object(ObjectType::Blob, body).unwrap());
        assert_eq!(repo.find_blob(ours).unwrap().content(), body);
        // Written once: a second write finds it.
        write_loose(&objects, ours, ObjectType::Blob, body).unwrap();
        assert_eq!(repo.find_blob(ours).unwrap().content(), body);

        let mut written = Vec::new();
        let files = ["a-b.md", "a.md", "a/x.md", "a/b/y.md", "b.md", "a0.md"];
        let mut head = None;
        for (n, path) in files.iter().enumerate() {
            let change = FileChange { path: path.to_string(), content: Some(format!("page {n}\n").into_bytes()) };
            let message = format!("Save {path}\n");
            let saved = write_commit(&repo, head, &[change], &author(), &author(), &message, &mut written).unwrap();
            // The content's id, as git gives it.
            let content = format!("page {n}\n");
            assert_eq!(saved.blobs, [Some(Oid::hash_object(ObjectType::Blob, content.as_bytes()).unwrap())]);
            head = Some(saved.tip);
        }
        let commit = repo.find_commit(head.unwrap().commit).unwrap();
        assert_eq!(commit.tree_id(), head.unwrap().tree);
        // The same tree, built by libgit2's tree builder from the same entries.
        fn rebuilt(repo: &Repository, tree: &Tree<'_>) -> Oid {
            let mut builder = repo.treebuilder(None).unwrap();
            for e in tree.iter() {
                let id = match e.kind() {
                    Some(ObjectType::Tree) => rebuilt(repo, &repo.find_tree(e.id()).unwrap()),
                    _ => e.id(),
                };
                builder.insert(e.name_bytes(), id, e.filemode()).unwrap();
            }
            builder.write().unwrap()
        }
        let tree = commit.tree().unwrap();
        assert_eq!(rebuilt(&repo, &tree), tree.id());
        // Removing the only file of `a/b/` removes that tree, and `a/` keeps the rest.
        let gone = FileChange { path: "a/b/y.md".into(), content: None };
        let without = write_commit(&repo, head, &[gone], &author(), &author(), "Remove\n", &mut written).unwrap();
        assert_eq!(without.blobs, [None]);
        let without = repo.find_commit(without.tip.commit).unwrap().tree().unwrap();
        assert_eq!(rebuilt(&repo, &without), without.id());
        assert!(without.get_path(Path::new("a/b")).is_err());
        assert!(without.get_path(Path::new("a/x.md")).is_ok());
        let names: Vec<String> = tree.iter().map(|e| e.name().unwrap().to_owned()).collect();
        assert_eq!(names, ["a-b.md", "a.md", "a", "a0.md", "b.md"]);
        assert_eq!(read_at(&repo, commit.id(), "a/b/y.md").unwrap().unwrap(), b"page 3\n");
        // The commit as libgit2 lays it out, with its parent (and without one).
        let sig = |a: &Author<'_>| Signature::new(a.name, a.email, &Time::new(a.time, 0)).unwrap();
        let parent = commit.parent(0).unwrap();
        let by_libgit2 =
            repo.commit_create_buffer(&sig(&author()), &sig(&author()), "Save a0.md\n", &tree, &[&parent]).unwrap();
        let ours = commit_body(tree.id(), Some(parent.id()), &author(), &author(), "Save a0.md\n").unwrap();
        assert_eq!(&ours[..], &by_libgit2[..]);
        let padded = Author { name: " Ada Lovelace ", email: "ada@example.com ", time: 1_700_000_000 };
        let by_libgit2 = repo.commit_create_buffer(&sig(&padded), &sig(&author()), "First\n", &tree, &[]).unwrap();
        let ours = commit_body(tree.id(), None, &padded, &author(), "First\n").unwrap();
        assert_eq!(&ours[..], &by_libgit2[..]);
        // Names git cannot hold lose what it refuses; nothing refuses the commit.
        let odd = Author { name: "Eve <admin>\n", email: "<eve@x.io>", time: 1_700_000_000 };
        let ours = String::from_utf8(commit_body(tree.id(), None, &odd, &odd, "Odd\n").unwrap()).unwrap();
        assert!(ours.contains("author Eve admin <eve@x.io> 1700000000 +0000\n"), "{ours}");
        let empty = Author { name: "<>", email: "", time: 1_700_000_000 };
        assert!(commit_body(tree.id(), None, &empty, &empty, "Empty\n").is_ok());
        assert_eq!(commit.message().ok(), Some("Save a0.md\n"));
        assert_eq!(commit.parent_count(), 1);
        assert_eq!(commit.author().name().ok(), Some("Ada"));
        // Removing the last file of a directory removes the directory.
        let gone = FileChange { path: "a/b/y.md".into(), content: None };
        let next = write_commit(&repo, head, &[gone], &author(), &author(), "Remove\n", &mut written).unwrap();
        let tree = repo.find_commit(next.tip.commit).unwrap().tree().unwrap();
        let a = repo.find_tree(tree.get_name("a").unwrap().id()).unwrap();
        assert!(a.get_name("b").is_none());
        assert_eq!(rebuilt(&repo, &tree), tree.id());
        // No temporary file is left behind.
        let leftovers = walk(&objects).into_iter().filter(|p| p.to_string_lossy().contains("tmp_obj_")).count();
        assert_eq!(leftovers, 0);
    }

    /// The kept compressor starts each object afresh, and grows its output for bodies that
    /// do not compress (more bytes out than in).
    #[test]
    fn each_object_is_its_own_zlib_stream() {
        use std::io::Read;
        let mut noise = Vec::with_capacity(300_000);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        while noise.len() < 300_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            noise.extend_from_slice(&x.to_le_bytes());
        }
        for body in [&b"small"[..], &noise, b"", &b"small"[..]] {
            let mut inflated = Vec::new();
            flate2::read::ZlibDecoder::new(&deflated(ObjectType::Blob, body).unwrap()[..])
                .read_to_end(&mut inflated)
                .unwrap();
            let mut expected = format!("blob {}\0", body.len()).into_bytes();
            expected.extend_from_slice(body);
            assert_eq!(inflated, expected);
        }
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
        }
        out
    }
}
