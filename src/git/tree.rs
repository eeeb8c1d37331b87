//! Trees as git stores them, edited in place. A save changes one entry of each tree on its
//! page's path, so each new tree is its parent's bytes with that one entry spliced in: no
//! entries parsed into owned values, no sort, no allocation per entry. A directory many
//! pages share (every `bench-…` slug lands in `b/be/`, every `meeting-…` in `m/me/`)
//! holds thousands of entries, and a create there used to rebuild, sort and re-hash all
//! of them (measured in commit ac92d67). The trees a save writes are kept,
//! by id (so never stale), for the next save, which starts from them.

use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, LazyLock, Mutex};

use anyhow::Context;
use git2::{ObjectType, Oid, Repository};

/// The mode git writes for a file.
pub(crate) const FILE_MODE: &[u8] = b"100644";
/// The mode git writes for a tree.
pub(crate) const TREE_MODE: &[u8] = b"40000";

/// One entry of a tree's body: `<mode> <name>\0<20-byte id>`, at `start..end`.
pub(crate) struct Entry<'a> {
    mode: &'a [u8],
    name: &'a [u8],
    id: &'a [u8],
    start: usize,
    end: usize,
}

impl Entry<'_> {
    pub(crate) fn is_tree(&self) -> bool {
        // Some old tools wrote the zero-padded form.
        self.mode == TREE_MODE || self.mode == b"040000"
    }

    pub(crate) fn id(&self) -> Oid {
        Oid::from_bytes(self.id).expect("20 bytes, checked by `entries`")
    }
}

/// The entries of a tree's body, in its order.
pub(crate) fn entries(body: &[u8]) -> anyhow::Result<Vec<Entry<'_>>> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let start = at;
        let space = body[at..].iter().position(|&b| b == b' ').context("a tree entry without a mode")?;
        let mode = &body[at..at + space];
        at += space + 1;
        let nul = body[at..].iter().position(|&b| b == 0).context("a tree entry without a name")?;
        let name = &body[at..at + nul];
        at += nul + 1;
        let id = body.get(at..at + 20).context("a tree entry cut short")?;
        at += 20;
        found.push(Entry { mode, name, id, start, end: at });
    }
    Ok(found)
}

/// The entry called `name`.
pub(crate) fn find<'a>(entries: &'a [Entry<'a>], name: &[u8]) -> Option<&'a Entry<'a>> {
    entries.iter().find(|e| e.name == name)
}

/// `body` (whose `entries` are given) with the entry called `name` replaced by `new`
/// (a mode and an id), or removed when `new` is None; at its place in git's order.
pub(crate) fn splice(body: &[u8], entries: &[Entry<'_>], name: &[u8], new: Option<(&[u8], Oid)>) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + name.len() + 32);
    let put = |out: &mut Vec<u8>, (mode, id): (&[u8], Oid)| {
        out.extend_from_slice(mode);
        out.push(b' ');
        out.extend_from_slice(name);
        out.push(0);
        out.extend_from_slice(id.as_bytes());
    };
    let mut pending = new;
    for e in entries.iter().filter(|e| e.name != name) {
        if let Some(n) = pending
            && git_order(e.name, e.is_tree(), name, n.0 == TREE_MODE) == Ordering::Greater
        {
            put(&mut out, n);
            pending = None;
        }
        out.extend_from_slice(&body[e.start..e.end]);
    }
    if let Some(n) = pending {
        put(&mut out, n);
    }
    out
}

/// Git's order of tree entries: by name, a tree's name compared as if it ended in '/'
/// (so `a/` sorts after `a-b.md` and `a.md`, though `a` sorts before both).
fn git_order(a: &[u8], a_tree: bool, b: &[u8], b_tree: bool) -> Ordering {
    let n = a.len().min(b.len());
    a[..n].cmp(&b[..n]).then_with(|| {
        // Past the shorter name: nothing (a file) sorts before any byte, a tree as '/'.
        let next = |name: &[u8], tree: bool| name.get(n).copied().or(tree.then_some(b'/'));
        next(a, a_tree).cmp(&next(b, b_tree))
    })
}

/// Trees recently written or read, by id, up to this many bytes.
const KEPT_BYTES: usize = 4 << 20;

#[derive(Default)]
struct Kept {
    trees: HashMap<Oid, Arc<Vec<u8>>>,
    order: VecDeque<Oid>,
    bytes: usize,
}

static KEPT: LazyLock<Mutex<Kept>> = LazyLock::new(Default::default);

/// The body of tree `id`: kept from a recent save, or read from the repository.
pub(crate) fn body(repo: &Repository, id: Oid) -> anyhow::Result<Arc<Vec<u8>>> {
    if let Some(kept) = crate::sync::lock(&KEPT).trees.get(&id) {
        return Ok(kept.clone());
    }
    let odb = repo.odb()?;
    let object = odb.read(id)?;
    anyhow::ensure!(object.kind() == ObjectType::Tree, "{id} is not a tree");
    let body = Arc::new(object.data().to_vec());
    keep(id, body.clone());
    Ok(body)
}

/// Keeps a tree's body for the saves after this one (the oldest make room).
pub(crate) fn keep(id: Oid, body: Arc<Vec<u8>>) {
    if body.len() > KEPT_BYTES / 4 {
        return;
    }
    let mut kept = crate::sync::lock(&KEPT);
    let len = body.len();
    if kept.trees.insert(id, body).is_some() {
        return;
    }
    kept.order.push_back(id);
    kept.bytes += len;
    while kept.bytes > KEPT_BYTES {
        let Some(old) = kept.order.pop_front() else { break };
        if let Some(gone) = kept.trees.remove(&old) {
            kept.bytes -= gone.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(mode: &[u8], name: &str, n: u8) -> Vec<u8> {
        [mode, b" ", name.as_bytes(), b"\0", &[n; 20]].concat()
    }

    #[test]
    fn entries_are_spliced_in_git_order() {
        let body = [entry(FILE_MODE, "a-b.md", 1), entry(FILE_MODE, "a.md", 2), entry(TREE_MODE, "a", 3)].concat();
        let parsed = entries(&body).unwrap();
        assert_eq!(parsed.len(), 3);
        assert!(parsed[2].is_tree() && !parsed[0].is_tree());
        // A new file between the two files and the tree; a file called like the tree
        // would come before all of them.
        let id = Oid::from_bytes(&[9; 20]).unwrap();
        let added = splice(&body, &parsed, b"a0", Some((FILE_MODE, id)));
        let names: Vec<&[u8]> = entries(&added).unwrap().iter().map(|e| e.name).collect();
        assert_eq!(names, [&b"a-b.md"[..], b"a.md", b"a", b"a0"]);
        // Replaced in place; removed.
        let replaced = splice(&body, &parsed, b"a.md", Some((FILE_MODE, id)));
        assert_eq!(replaced.len(), body.len());
        assert_eq!(find(&entries(&replaced).unwrap(), b"a.md").unwrap().id(), id);
        let removed = splice(&body, &parsed, b"a", None);
        assert_eq!(removed, [entry(FILE_MODE, "a-b.md", 1), entry(FILE_MODE, "a.md", 2)].concat());
        // A cut-short tree is an error, not a panic.
        assert!(entries(&body[..body.len() - 1]).is_err());
    }
}
