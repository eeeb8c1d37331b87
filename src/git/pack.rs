//! Packing: a save writes its objects loose (a blob, a few trees, a commit — ≈ 30 KiB of
//! files and inodes per save), so a busy workspace grows without bound until its objects
//! are packed. [`pack`] moves the loose objects into a pack with libgit2's pack builder
//! (delta-compressed), together with the small packs of earlier runs, chosen as git's
//! `repack --geometric=2` chooses them ([`rollup`]): the packs left behind each hold at
//! least twice the objects of the next smaller one, so a repository of n objects has at
//! most log₂ n packs, and a run rewrites only the small recent ones — an object is
//! repacked O(log n) times over the wiki's life, never the whole history every few runs.
//! `cairn gc` folds everything into one pack. Neither ever takes the write lock:
//!
//! 1. it lists the loose objects and the packs it folds **before** building, and
//!    adds commits through a revision walk, so libgit2 knows each tree and blob by path and
//!    compares versions of the same page when it looks for deltas (by id alone, a blob
//!    is compared with whatever sorts beside it: 2.46 KiB a save after `cairn gc`
//!    in the bench, against 1.76 KiB with the walk);
//! 2. the new pack and its index are written (libgit2 writes them under temporary names
//!    and renames them into place), copied with offset deltas (`ofs_delta.rs`; the copy
//!    is named the same way, and libgit2's first pack removed once the copy is durable),
//!    and made durable, with the directory naming them;
//! 3. only then are the listed loose files and packs removed — every object in them is
//!    in the new, durable pack, so a reader or writer that misses a removed loose file
//!    finds the object in the pack (libgit2 re-reads the pack list on a miss). A worker's
//!    run moves the loose files aside into [`HELD`] rather than unlinking them there and
//!    then; [`release_held`] unlinks them once nobody is saving (see [`HELD`] for why).
//!
//! Objects written while it runs are not listed, so they stay loose until the next run;
//! nothing reachable or in flight is ever dropped (unreachable objects are kept too:
//! pruning them is `git gc`'s job, which an operator may still run). kill -9 at any step
//! leaves either the old files, or the old files plus a complete new pack (duplicates
//! are harmless), or a temporary file libgit2 ignores. Two processes packing the same
//! repository at once at worst both write a pack of the same objects.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use git2::{Oid, Repository};

use super::pack_index::index_of;

/// Loose objects that make packing worth it on its own (about 60 saves' worth).
pub const LOOSE_THRESHOLD: usize = 256;

/// The file in a repository that one packer at a time holds (see [`pack`]).
pub const PACK_LOCK: &str = "cairn-pack.lock";

/// The directory of a repository where a worker's run puts the loose files it packed, one
/// directory per run, until [`release_held`] unlinks them. Outside `objects/`, so to git
/// and libgit2 they are gone the moment they are moved (git ignores what it does not know
/// in a repository's directory; `git fsck --strict` is clean, a clone or a backup leaves
/// them behind). Why not unlink them at once: on an ext4 without a journal every inode
/// made within a minute of an unlink scans past each inode unlinked in that minute, so a
/// run that unlinked thousands of files made the saves of the next minute pay for it:
/// after a pass of ≈ 6,000 objects, lone updates spent 18–29 % of the server's CPU there
/// (measured in commit 420badb). A
/// rename frees no inode.
pub const HELD: &str = "cairn-packed";

/// Each pack a run leaves must hold at least this many times the objects of the next
/// smaller one (git's `repack --geometric` factor).
const GEOMETRIC_FACTOR: u64 = 2;

/// What one packing run did.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PackReport {
    /// Loose objects moved into the new pack (and their files removed, or held aside).
    pub loose_packed: usize,
    /// Older packs folded into the new one (and removed).
    pub packs_folded: usize,
    /// Objects in the new pack (0 when there was nothing to do).
    pub objects: usize,
}

/// Whether a repository is due for packing: [`LOOSE_THRESHOLD`] loose objects; or any,
/// the newest of them older than `idle` (nobody is saving there now); or packs out of
/// geometric progression (written by another process, or an operator's git).
pub fn due(dir: &Path, idle: Duration) -> anyhow::Result<bool> {
    if !rollup(&packs(dir)?, 0).is_empty() {
        return Ok(true);
    }
    // Counted, not listed: this runs in the server for every workspace at every look,
    // and stops at the threshold (a workspace 25,000 objects behind costs 256 names).
    let mut loose = Vec::new();
    visit_loose(dir, |_, path| {
        loose.push(path);
        if loose.len() >= LOOSE_THRESHOLD { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    })?;
    if loose.len() >= LOOSE_THRESHOLD {
        return Ok(true);
    }
    let newest = loose.iter().filter_map(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok()).max();
    Ok(newest.is_some_and(|t| t.elapsed().unwrap_or_default() >= idle))
}

/// A packing run given up because it was asked to stop: nothing was removed, no pack was
/// named (a temporary file libgit2 was writing may be left, which git ignores).
#[derive(Debug, thiserror::Error)]
#[error("packing stopped before its pack was written")]
pub struct Stopped;

/// Packs the repository at `dir`: every loose object into a new pack, with the small
/// packs [`rollup`] picks — or with every pack when `fold` is set (`cairn gc`). See the
/// module's comment for why this is safe beside readers, writers and other processes.
///
/// `stopped` is asked while objects are added and, through libgit2's progress callback,
/// while deltas are searched — the long part of a large run — so a server shutting down
/// does not wait for minutes of packing; once it answers true it must keep answering
/// true. Once the pack is written the run completes, except that it stops moving the
/// packed loose files aside (they stay loose, to be packed again). A run stopped before
/// its pack is written answers [`Stopped`].
pub fn pack(dir: &Path, fold: bool, stopped: &dyn Fn() -> bool) -> anyhow::Result<PackReport> {
    // One packer at a time per repository, across processes. Two would each pack the
    // same loose objects into a pack of their own, and the next pass fold both: a
    // `cairn gc` run beside the server's worker at 10,000 pages left the repository 2.5
    // times its size until the worker refolded all of it under requests (measured in commit
    // 89bcd07). A fold (`cairn gc`) waits for the other packer; the
    // worker's pass gives way and comes back at its next pass.
    let Some(_one_packer) = lock_packing(dir, fold)? else { return Ok(PackReport::default()) };
    // `cairn gc` (asked to fold) unlinks at once, what earlier runs held aside included.
    if fold {
        release_locked(dir, Duration::ZERO, Duration::ZERO)?;
    }
    let repo = Repository::open_bare(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    let loose = loose_objects(dir)?;
    let old_packs = packs(dir)?;
    // Folding one pack with nothing loose would only rewrite it.
    let fold_all = fold && (old_packs.len() > 1 || (old_packs.len() == 1 && !loose.is_empty()));
    let folded = if fold_all { old_packs } else { rollup(&old_packs, loose.len()) };
    if loose.is_empty() && folded.is_empty() {
        return Ok(PackReport::default());
    }
    let mut builder = repo.packbuilder()?;
    // One thread: packing runs beside the server on a small machine, never in a hurry.
    builder.set_threads(1);
    // Returning false makes libgit2 give up (its error is answered as `Stopped` below).
    builder.set_progress_callback(|_, _, _| !stopped())?;
    if fold_all {
        // The history first, every object under its path (see `insert_history`).
        let mut added = HashSet::new();
        if super::head(&repo)?.is_some() {
            let mut walk = repo.revwalk()?;
            walk.push_ref(super::BRANCH)?;
            added = insert_history(&repo, &mut builder, walk, &|_| true, stopped)?;
        }
        // Then every other object the repository holds, packed or loose, reachable or
        // not (an in-flight save's objects are not reachable yet and must survive).
        let mut all = Vec::new();
        repo.odb()?.foreach(|oid| {
            all.push(*oid);
            true
        })?;
        for oid in all.into_iter().filter(|oid| !added.contains(oid)) {
            insert(&mut builder, oid, None, stopped)?;
        }
    } else {
        // The loose commits and those of the folded packs, through a walk that stops at
        // their parents in the packs left alone, and of what they reach only the loose
        // and folded objects, under their paths.
        let mut ids: HashSet<Oid> = loose.iter().map(|(oid, _)| *oid).collect();
        for pack in &folded {
            ids.extend(pack_ids(pack)?);
        }
        let mut walk = repo.revwalk()?;
        for oid in &ids {
            // A lookup per loose object: ~100,000 after a busy minute, long enough for a
            // shutdown to ask meanwhile.
            if stopped() {
                return Err(Stopped.into());
            }
            let Ok(commit) = repo.find_commit(*oid) else { continue };
            walk.push(*oid)?;
            for parent in commit.parent_ids().filter(|p| !ids.contains(p)) {
                walk.hide(parent)?;
            }
        }
        let added = insert_history(&repo, &mut builder, walk, &|oid| ids.contains(&oid), stopped)?;
        // Then the rest (unreachable ones, an operator's).
        for oid in ids.iter().filter(|oid| !added.contains(oid)) {
            insert(&mut builder, *oid, None, stopped)?;
        }
    }
    let objects = builder.object_count();
    let name = write_pack(dir, &mut builder, stopped)?;
    // Durable: now the copies it replaces can go — `cairn gc`'s at once, a worker's run's
    // aside until nobody is saving ([`HELD`]). A file already gone (another packer, or
    // an operator's `git gc`) is fine.
    if fold {
        for (_, path) in &loose {
            remove_if_present(path)?;
        }
    } else {
        hold(dir, &name, &loose, stopped)?;
    }
    let mut packs_folded = 0;
    // (The new pack has the name of an old one when it holds exactly its objects.)
    for pack in folded.iter().filter(|p| !p.ends_with(format!("pack-{name}.pack"))) {
        remove_pack(pack)?;
        packs_folded += 1;
    }
    Ok(PackReport { loose_packed: loose.len(), packs_folded, objects })
}

/// Writes the pack `builder` holds into the repository at `dir`, durably, and answers
/// its name.
fn write_pack(dir: &Path, builder: &mut git2::PackBuilder<'_>, stopped: &dyn Fn() -> bool) -> anyhow::Result<String> {
    let pack_dir = dir.join("objects").join("pack");
    std::fs::create_dir_all(&pack_dir)?;
    if let Err(e) = builder.write(&pack_dir, 0o444) {
        return Err(if stopped() { Stopped.into() } else { anyhow::Error::new(e).context("writing the pack") });
    }
    let written = builder.name()?.map(str::to_owned).context("the pack builder named no pack")?;
    // The same pack with deltas naming their bases by offset (smaller; see ofs_delta.rs).
    // Should that fail, libgit2's own is kept: it holds the same objects.
    let name = super::ofs_delta::rewrite(&pack_dir, &written).unwrap_or_else(|e| {
        tracing::warn!(error = %format!("{e:#}"), pack = %written, "could not rewrite a pack with offset deltas; kept as written");
        written.clone()
    });
    make_durable(&pack_dir, &name)?;
    if name != written {
        remove_pack(&pack_dir.join(format!("pack-{written}.pack")))?;
    }
    Ok(name)
}

/// Leaves in the repository at `dir` only what its branch reaches: one pack of the
/// history; every other pack and loose object, the files earlier runs held aside
/// ([`HELD`]) and temporary files of interrupted writes removed. What a purge or an
/// erasure calls once the branch no longer reaches what must be forgotten, so that no
/// file of the repository (nor a copy made from it later) still holds it. Must run under
/// the workspace's write lock — a save in flight has objects nothing reaches yet — and,
/// like `cairn gc`, waits for another packer.
pub fn expunge(dir: &Path) -> anyhow::Result<PackReport> {
    let _one_packer = lock_packing(dir, true)?;
    release_locked(dir, Duration::ZERO, Duration::ZERO)?;
    let repo = Repository::open_bare(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    let loose = loose_objects(dir)?;
    let old_packs = packs(dir)?;
    let mut builder = repo.packbuilder()?;
    builder.set_threads(1);
    if super::head(&repo)?.is_some() {
        let mut walk = repo.revwalk()?;
        walk.push_ref(super::BRANCH)?;
        insert_history(&repo, &mut builder, walk, &|_| true, &|| false)?;
    }
    let objects = builder.object_count();
    let name = if objects > 0 { Some(write_pack(dir, &mut builder, &|| false)?) } else { None };
    drop(builder);
    for (_, path) in &loose {
        remove_if_present(path)?;
    }
    let mut packs_folded = 0;
    for pack in old_packs.iter().filter(|p| name.as_ref().is_none_or(|n| !p.ends_with(format!("pack-{n}.pack")))) {
        remove_pack(pack)?;
        packs_folded += 1;
    }
    // What interrupted writes left: git's and libgit2's temporary objects and packs.
    for sub in ["objects", "objects/pack"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("tmp_") || name.starts_with("pack_git2_") || name.starts_with("tmp-") {
                remove_if_present(&entry.path())?;
            }
        }
    }
    Ok(PackReport { loose_packed: loose.len(), packs_folded, objects })
}

/// Moves a run's packed loose files into a directory of [`HELD`] named for its pack —
/// until `stopped`: the pack is durable by then, and what stays loose is packed again by
/// the next run, so a shutdown need not wait for ~100,000 renames.
fn hold(dir: &Path, pack_name: &str, loose: &[(Oid, PathBuf)], stopped: &dyn Fn() -> bool) -> anyhow::Result<()> {
    let aside = dir.join(HELD).join(pack_name);
    std::fs::create_dir_all(&aside)?;
    for (oid, path) in loose {
        if stopped() {
            return Ok(());
        }
        unless_gone(std::fs::rename(path, aside.join(oid.to_string())))
            .with_context(|| format!("cannot move {} aside", path.display()))?;
    }
    Ok(())
}

/// Unlinks the packed loose files a worker's runs held aside ([`HELD`]) once the
/// repository has had no save for `idle` — a save writes its branch's file (and, where
/// it names its objects' temporary files, `objects/`), so the later of their
/// modification times is the last save's — or, busy or not, once a run's files have
/// waited `at_most`. Answers how many files went. Nothing
/// while another packer holds the repository (a run may be moving files aside); `cairn
/// gc` releases everything first.
pub fn release_held(dir: &Path, idle: Duration, at_most: Duration) -> anyhow::Result<usize> {
    if !dir.join(HELD).is_dir() {
        return Ok(0);
    }
    let Some(_one_packer) = lock_packing(dir, false)? else { return Ok(0) };
    release_locked(dir, idle, at_most)
}

fn release_locked(dir: &Path, idle: Duration, at_most: Duration) -> anyhow::Result<usize> {
    let Ok(runs) = std::fs::read_dir(dir.join(HELD)) else { return Ok(0) };
    let age = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
    let since = |path: &Path| age(path).unwrap_or_default();
    let last_save = [dir.join("objects"), dir.join(super::BRANCH)].iter().filter_map(|p| age(p)).min();
    let quiet = last_save.unwrap_or_default() >= idle;
    let mut released = 0;
    for run in runs {
        let run = run?.path();
        if quiet || since(&run) >= at_most {
            released += std::fs::read_dir(&run).map(|files| files.count()).unwrap_or(0);
            unless_gone(std::fs::remove_dir_all(&run)).with_context(|| format!("cannot remove {}", run.display()))?;
        }
    }
    Ok(released)
}

/// The packs a worker's run folds into its new pack with `loose` loose objects, as git's
/// `repack --geometric=2` picks them: packs by object count, smallest first; from the
/// largest down, the first that is not at least twice the next smaller one is folded
/// with every pack below it; then the next larger ones too while the folded objects
/// together are at least half of them. What is left is a progression, so a repository
/// keeps O(log n) packs and a run rewrites only the small, recent ones. A pack whose
/// index cannot be read (another writer still naming it) is left alone.
pub fn rollup(packs: &[PathBuf], loose: usize) -> Vec<PathBuf> {
    let mut sized: Vec<(u64, &PathBuf)> = packs.iter().filter_map(|p| Some((objects_in(p).ok()?, p))).collect();
    sized.sort();
    let sizes: Vec<u64> = sized.iter().map(|(n, _)| *n).collect();
    let split = geometric_split(&sizes, loose as u64);
    sized.into_iter().take(split).map(|(_, p)| p.clone()).collect()
}

/// How many of the packs of `sizes` (ascending) to fold with `loose` loose objects.
fn geometric_split(sizes: &[u64], loose: u64) -> usize {
    let mut split = (1..sizes.len()).rev().find(|&i| GEOMETRIC_FACTOR * sizes[i - 1] > sizes[i]).map_or(0, |i| i + 1);
    let mut total = loose + sizes[..split].iter().sum::<u64>();
    while split < sizes.len() && GEOMETRIC_FACTOR * total >= sizes[split] {
        total += sizes[split];
        split += 1;
    }
    // One pack and nothing loose: folding would only rewrite it.
    if split == 1 && loose == 0 { 0 } else { split }
}

/// How many objects a pack holds (from its index's head: the worker asks every minute).
fn objects_in(pack: &Path) -> anyhow::Result<u64> {
    Ok(u64::from(index_of(pack, false)?.2))
}

/// The ids of the objects a pack holds.
fn pack_ids(pack: &Path) -> anyhow::Result<Vec<Oid>> {
    let (bytes, fanout, count) = index_of(pack, true)?;
    let table = fanout + 256 * 4;
    // Version 2 lists the ids together; version 1 gives each a 4-byte offset first.
    let (first, stride) = if fanout == 8 { (table, 20) } else { (table + 4, 24) };
    (0..count as usize)
        .map(|n| {
            let at = first + n * stride;
            let id = bytes.get(at..at + 20).context("a pack index cut short")?;
            Ok(Oid::from_bytes(id)?)
        })
        .collect()
}

/// Adds the commits of `walk` and the trees and blobs they reach that are `wanted`, each
/// tree and blob under its path; answers the ids it looked at (every one it added).
/// libgit2's delta search sorts objects by a hash of their name before it compares
/// neighbours, so named objects are compared with the other versions of the same page or
/// directory; added by id alone, a tree or blob is compared with whatever happens to sort
/// beside it (2.46 KiB a save after `cairn gc` in the bench; 1.83 KiB with blobs named,
/// 1.76 KiB with trees named too).
fn insert_history(
    repo: &Repository,
    builder: &mut git2::PackBuilder<'_>,
    walk: git2::Revwalk<'_>,
    wanted: &dyn Fn(Oid) -> bool,
    stopped: &dyn Fn() -> bool,
) -> anyhow::Result<HashSet<Oid>> {
    let mut seen = HashSet::new();
    for commit in walk {
        let commit = repo.find_commit(commit?)?;
        seen.insert(commit.id());
        insert(builder, commit.id(), None, stopped)?;
        insert_tree(repo, builder, commit.tree_id(), "", &mut seen, wanted, stopped)?;
    }
    Ok(seen)
}

fn insert_tree(
    repo: &Repository,
    builder: &mut git2::PackBuilder<'_>,
    id: Oid,
    path: &str,
    seen: &mut HashSet<Oid>,
    wanted: &dyn Fn(Oid) -> bool,
    stopped: &dyn Fn() -> bool,
) -> anyhow::Result<()> {
    // A tree seen before (unchanged since the last commit) holds nothing new.
    if !seen.insert(id) || !wanted(id) {
        return Ok(());
    }
    insert(builder, id, Some(path), stopped)?;
    let tree = repo.find_tree(id)?;
    for entry in tree.iter() {
        let name = entry.name().unwrap_or_default();
        let child = if path.is_empty() { name.to_owned() } else { format!("{path}/{name}") };
        match entry.kind() {
            Some(git2::ObjectType::Tree) => insert_tree(repo, builder, entry.id(), &child, seen, wanted, stopped)?,
            Some(git2::ObjectType::Blob) if seen.insert(entry.id()) && wanted(entry.id()) => {
                insert(builder, entry.id(), Some(&child), stopped)?
            }
            _ => {}
        }
    }
    Ok(())
}

/// Adds one object to the pack being built, unless asked to stop (libgit2 may call the
/// progress callback, which can give up, while adding).
fn insert(
    builder: &mut git2::PackBuilder<'_>,
    oid: Oid,
    name: Option<&str>,
    stopped: &dyn Fn() -> bool,
) -> anyhow::Result<()> {
    if stopped() {
        return Err(Stopped.into());
    }
    builder.insert_object(oid, name).map_err(|e| if stopped() { Stopped.into() } else { anyhow::Error::new(e) })
}

/// The loose objects of a repository: (id, file).
pub fn loose_objects(dir: &Path) -> anyhow::Result<Vec<(Oid, PathBuf)>> {
    let mut found = Vec::new();
    visit_loose(dir, |oid, path| {
        found.push((oid, path));
        ControlFlow::Continue(())
    })?;
    Ok(found)
}

/// Hands each loose object of a repository (id, file) to `visit` until it breaks.
fn visit_loose(dir: &Path, mut visit: impl FnMut(Oid, PathBuf) -> ControlFlow<()>) -> anyhow::Result<()> {
    let objects = dir.join("objects");
    for fan in std::fs::read_dir(&objects).with_context(|| format!("cannot list {}", objects.display()))? {
        let fan = fan?;
        let prefix = fan.file_name();
        let Some(prefix) = prefix.to_str().filter(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_hexdigit())) else {
            continue;
        };
        for entry in std::fs::read_dir(fan.path())? {
            let entry = entry?;
            let rest = entry.file_name();
            // Skip libgit2's temporary files (`tmp_object_git2_*`) and anything else.
            let Some(rest) = rest.to_str().filter(|r| r.len() == 38 && r.bytes().all(|b| b.is_ascii_hexdigit())) else {
                continue;
            };
            if visit(Oid::from_str(&format!("{prefix}{rest}"))?, entry.path()).is_break() {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The `.pack` files of a repository.
pub fn packs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let pack_dir = dir.join("objects").join("pack");
    let Ok(entries) = std::fs::read_dir(&pack_dir) else { return Ok(Vec::new()) };
    let mut found = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "pack") {
            found.push(path);
        }
    }
    Ok(found)
}

/// fsyncs the new pack, its index and the directory that names them.
fn make_durable(pack_dir: &Path, name: &str) -> anyhow::Result<()> {
    for ext in ["pack", "idx"] {
        let file = pack_dir.join(format!("pack-{name}.{ext}"));
        std::fs::File::open(&file)
            .and_then(|f| f.sync_all())
            .with_context(|| format!("cannot sync {}", file.display()))?;
    }
    std::fs::File::open(pack_dir)?.sync_all()?;
    Ok(())
}

/// Removes a pack and the files beside it, its index first (so no reader opens it).
fn remove_pack(pack: &Path) -> anyhow::Result<()> {
    for ext in ["idx", "rev", "bitmap", "pack"] {
        remove_if_present(&pack.with_extension(ext))?;
    }
    Ok(())
}

fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    unless_gone(std::fs::remove_file(path)).with_context(|| format!("cannot remove {}", path.display()))
}

/// A file or directory already gone (another packer, an operator's `git gc`) is fine.
fn unless_gone(done: std::io::Result<()>) -> std::io::Result<()> {
    match done {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        done => done,
    }
}

/// Takes the repository's packing lock (an flock on [`PACK_LOCK`]): waiting for it when
/// `wait`, else None while another packer holds it.
fn lock_packing(dir: &Path, wait: bool) -> anyhow::Result<Option<std::fs::File>> {
    let path = dir.join(PACK_LOCK);
    if wait { crate::lockfile::exclusive(&path).map(Some) } else { crate::lockfile::try_exclusive(&path) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// flock locks belong to an open file, so a lock held here excludes `pack` as another
    /// process's would.
    #[test]
    fn one_packer_at_a_time_the_worker_gives_way_and_gc_waits() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        for i in 0..5 {
            repo.blob(format!("blob {i}").as_bytes()).unwrap();
        }
        let held = lock_packing(dir.path(), false).unwrap().expect("nobody packs yet");
        // The worker's pass: nothing done, the loose objects stay.
        assert_eq!(pack(dir.path(), false, &|| false).unwrap(), PackReport::default());
        assert_eq!(loose_objects(dir.path()).unwrap().len(), 5);
        // gc waits until the other packer is done, then packs.
        let path = dir.path().to_owned();
        let gc = std::thread::spawn(move || pack(&path, true, &|| false).unwrap());
        std::thread::sleep(Duration::from_millis(300));
        assert!(!gc.is_finished(), "gc packed beside another packer");
        drop(held);
        assert_eq!(gc.join().unwrap().loose_packed, 5);
        assert!(loose_objects(dir.path()).unwrap().is_empty());
        // And the worker packs once nobody else does.
        repo.blob(b"one more").unwrap();
        assert_eq!(pack(dir.path(), false, &|| false).unwrap().loose_packed, 1);
    }

    /// The worker's run moves what it packed aside, where git no longer sees it and from
    /// where only quiet (or age, or `cairn gc`) unlinks it.
    #[test]
    fn a_workers_run_holds_its_packed_loose_files_aside_until_nobody_saves() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let held_files = || -> usize {
            std::fs::read_dir(dir.path().join(HELD))
                .map(|runs| runs.map(|run| std::fs::read_dir(run.unwrap().path()).unwrap().count()).sum())
                .unwrap_or(0)
        };
        // `cairn gc` with no pack yet (nothing to fold into) unlinks at once too.
        repo.blob(b"before any pack").unwrap();
        assert_eq!(pack(dir.path(), true, &|| false).unwrap().loose_packed, 1);
        assert_eq!(held_files(), 0);
        let ids: Vec<Oid> = (0..4).map(|i| repo.blob(format!("blob {i}").as_bytes()).unwrap()).collect();
        assert_eq!(pack(dir.path(), false, &|| false).unwrap().loose_packed, 4);
        assert!(loose_objects(dir.path()).unwrap().is_empty());
        assert_eq!(held_files(), 4);
        // To git the objects are packed only, and the repository is whole.
        let repo = Repository::open_bare(dir.path()).unwrap();
        for id in &ids {
            assert!(repo.find_blob(*id).is_ok());
        }
        let fsck = std::process::Command::new("git")
            .args(["fsck", "--strict", "--full"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(fsck.status.success(), "{}", String::from_utf8_lossy(&fsck.stderr));
        // A save just now (its temporary file in objects/): nothing goes, unless the files
        // waited long enough; another packer at work: nothing either.
        repo.blob(b"a save").unwrap();
        std::fs::write(dir.path().join("objects").join("tmp_obj_test"), b"").unwrap();
        let (long, none) = (Duration::from_secs(3600), Duration::ZERO);
        assert_eq!(release_held(dir.path(), long, long).unwrap(), 0);
        let other = lock_packing(dir.path(), false).unwrap().unwrap();
        assert_eq!(release_held(dir.path(), none, none).unwrap(), 0);
        drop(other);
        assert_eq!(held_files(), 4);
        assert_eq!(release_held(dir.path(), long, none).unwrap(), 4);
        assert_eq!(held_files(), 0);
        // Quiet for long enough releases them too; and `cairn gc` unlinks its own at once
        // and anything held before.
        assert_eq!(pack(dir.path(), false, &|| false).unwrap().loose_packed, 1);
        assert_eq!(release_held(dir.path(), none, long).unwrap(), 1);
        repo.blob(b"another save").unwrap();
        assert_eq!(pack(dir.path(), false, &|| false).unwrap().loose_packed, 1);
        repo.blob(b"and one more").unwrap();
        assert_eq!(held_files(), 1);
        assert_eq!(pack(dir.path(), true, &|| false).unwrap().loose_packed, 1);
        assert_eq!(held_files(), 0);
        assert!(loose_objects(dir.path()).unwrap().is_empty());
        assert!(repo.find_blob(ids[0]).is_ok());
        // A save whose objects left no name in `objects/` (written unnamed and linked
        // into their own directories) still counts, by its branch's file.
        repo.blob(b"a linked save").unwrap();
        assert_eq!(pack(dir.path(), false, &|| false).unwrap().loose_packed, 1);
        let hours_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
        std::fs::File::open(dir.path().join("objects")).unwrap().set_modified(hours_ago).unwrap();
        std::fs::create_dir_all(dir.path().join("refs/heads")).unwrap();
        std::fs::write(dir.path().join(crate::git::BRANCH), format!("{}\n", ids[0])).unwrap();
        assert_eq!(release_held(dir.path(), long, long).unwrap(), 0);
        std::fs::File::open(dir.path().join(crate::git::BRANCH)).unwrap().set_modified(hours_ago).unwrap();
        assert_eq!(release_held(dir.path(), long, long).unwrap(), 1);
    }

    #[test]
    fn a_repository_is_due_at_the_threshold_or_once_idle() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let long = Duration::from_secs(3600);
        // Nothing loose: never due.
        assert!(!due(dir.path(), Duration::ZERO).unwrap());
        // A few fresh objects: due only once idle.
        for i in 0..3 {
            repo.blob(format!("blob {i}").as_bytes()).unwrap();
        }
        assert!(!due(dir.path(), long).unwrap());
        assert!(due(dir.path(), Duration::ZERO).unwrap());
        // The threshold, however fresh: due at once (the count stops there).
        for i in 3..LOOSE_THRESHOLD {
            repo.blob(format!("blob {i}").as_bytes()).unwrap();
        }
        assert!(due(dir.path(), long).unwrap());
        assert_eq!(loose_objects(dir.path()).unwrap().len(), LOOSE_THRESHOLD);
    }

    #[test]
    fn small_packs_are_folded_until_the_rest_is_a_geometric_progression() {
        // Nothing to do: one pack; a progression with nothing loose.
        assert_eq!(geometric_split(&[], 0), 0);
        assert_eq!(geometric_split(&[5_000], 0), 0);
        assert_eq!(geometric_split(&[300, 900, 10_000], 0), 0);
        // Loose objects alone, when the smallest pack is more than twice their number.
        assert_eq!(geometric_split(&[10_000], 300), 0);
        // ...and with the small packs they are at least half of.
        assert_eq!(geometric_split(&[300, 10_000], 300), 1);
        assert_eq!(geometric_split(&[300, 900, 10_000], 300), 2);
        // Two packs of similar size break the progression: both folded, and the next
        // larger one too when the two together are at least half of it.
        assert_eq!(geometric_split(&[400, 500, 10_000], 0), 2);
        assert_eq!(geometric_split(&[400, 500, 1_500, 10_000], 0), 3);
        // A break high up folds everything below it.
        assert_eq!(geometric_split(&[10, 100, 6_000, 7_000], 0), 4);
        // Everything folds when the loose objects outnumber the packs.
        assert_eq!(geometric_split(&[100, 1_000], 5_000), 2);
    }
}
