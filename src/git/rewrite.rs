//! Rewriting a workspace's history, for what must be forgotten: a purged page's every
//! version, or one revision's content. As `git filter-repo` does it: each commit from the
//! first one that changes is made again, with the same author, committer, dates and
//! message, on its rewritten parent — dropped, or with some files of its tree replaced or
//! removed. Commits before the first change keep their ids. Nothing is written to disk
//! and the branch is not moved: the caller writes the objects ([`Unwritten::write`]),
//! makes them durable, and moves the branch with its database commit, as a save does;
//! then [`super::pack::expunge`] removes what is no longer reachable.

use std::collections::HashMap;

use anyhow::{Context, bail};
use git2::{Commit, ObjectType, Oid, Repository};

use super::{Tip, Unwritten, update_tree};

/// What becomes of one commit.
pub(crate) enum Fate {
    /// Left out: its children follow its parent.
    Drop,
    /// Kept, with these files of its tree set to a blob (which the repository must hold)
    /// or removed (None). No edits and an unchanged parent keep the commit as it is.
    Keep(Vec<(String, Option<Oid>)>),
}

/// A rewritten history, not yet written.
pub struct Rewritten {
    /// The branch's new head (None when no commit is left).
    pub tip: Option<Tip>,
    /// Each kept commit whose id changed: (old, new), oldest first.
    pub renamed: Vec<(Oid, Oid)>,
    /// The new trees and commits.
    pub made: Unwritten,
}

/// Rewrites the history ending at `head`, oldest commit first, asking `fate` what becomes
/// of each. The history is a line (Cairn never makes merges); a merge is refused.
pub(crate) fn rewrite(
    repo: &Repository,
    head: Oid,
    mut fate: impl FnMut(&Commit<'_>) -> anyhow::Result<Fate>,
) -> anyhow::Result<Rewritten> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
    walk.push(head)?;
    let mut made = Unwritten::default();
    // Each commit seen, by old id: where its children now attach (None: nothing left
    // before them).
    let mut now: HashMap<Oid, Option<Tip>> = HashMap::new();
    let mut renamed = Vec::new();
    let mut tip = None;
    for oid in walk {
        let oid = oid?;
        let commit = repo.find_commit(oid)?;
        if commit.parent_count() > 1 {
            bail!("commit {oid} is a merge; a workspace's history is a line");
        }
        let old_parent = commit.parent_id(0).ok();
        let parent = match old_parent {
            Some(p) => *now.get(&p).with_context(|| format!("the parent of {oid} was not walked first"))?,
            None => None,
        };
        let kept = match fate(&commit)? {
            Fate::Drop => parent,
            Fate::Keep(edits) => {
                let mut tree = Some(commit.tree_id());
                for (path, blob) in &edits {
                    let parts: Vec<&str> = path.split('/').collect();
                    tree = update_tree(repo, &mut made, tree, &parts, *blob)?;
                }
                let tree = match tree {
                    Some(t) => t,
                    None => made.add(ObjectType::Tree, std::sync::Arc::new(Vec::new()))?,
                };
                let new_parent = parent.map(|p| p.commit);
                if tree == commit.tree_id() && new_parent == old_parent {
                    Some(Tip { commit: oid, tree })
                } else {
                    let odb = repo.odb()?;
                    let raw = odb.read(oid)?;
                    let body = remade(raw.data(), tree, new_parent)?;
                    let new = made.add(ObjectType::Commit, std::sync::Arc::new(body))?;
                    renamed.push((oid, new));
                    Some(Tip { commit: new, tree })
                }
            }
        };
        now.insert(oid, kept);
        tip = kept;
    }
    Ok(Rewritten { tip, renamed, made })
}

/// A commit's body with another tree and parent, everything else (author, committer,
/// their dates and zones, the message) byte for byte.
fn remade(body: &[u8], tree: Oid, parent: Option<Oid>) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    out.extend_from_slice(format!("tree {tree}\n").as_bytes());
    if let Some(p) = parent {
        out.extend_from_slice(format!("parent {p}\n").as_bytes());
    }
    let mut rest = body;
    loop {
        let end = rest.iter().position(|b| *b == b'\n').context("a commit without a message")?;
        let line = &rest[..end];
        if line.starts_with(b"tree ") || line.starts_with(b"parent ") {
            rest = &rest[end + 1..];
        } else {
            break;
        }
    }
    out.extend_from_slice(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::{Author, FileChange, write_commit};

    fn commit(repo: &Repository, parent: Option<Tip>, path: &str, content: Option<&str>, msg: &str) -> Tip {
        let who = Author { name: "Ada", email: "ada@example.com", time: 1_700_000_000 };
        let change = FileChange { path: path.into(), content: content.map(|c| c.as_bytes().to_vec()) };
        write_commit(repo, parent, &[change], &who, &who, msg, &mut Vec::new()).unwrap().tip
    }

    #[test]
    fn dropping_a_files_commits_and_removing_it_keeps_the_rest_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let a = commit(&repo, None, "a/a.md", Some("A1"), "A1\n");
        let s = commit(&repo, Some(a), "s/s.md", Some("secret"), "S\n");
        let b = commit(&repo, Some(s), "b/b.md", Some("B1"), "B1\n");
        let head = commit(&repo, Some(b), "a/a.md", Some("A2"), "A2\n");
        let out = rewrite(&repo, head.commit, |c| {
            Ok(if c.message().ok() == Some("S\n") { Fate::Drop } else { Fate::Keep(vec![("s/s.md".into(), None)]) })
        })
        .unwrap();
        out.made.write(&repo, &mut Vec::new()).unwrap();
        // The first commit is untouched; the two after the dropped one are made again.
        let old: Vec<Oid> = out.renamed.iter().map(|(o, _)| *o).collect();
        assert_eq!(old, vec![b.commit, head.commit]);
        let new_head = repo.find_commit(out.tip.unwrap().commit).unwrap();
        assert_eq!(new_head.message().ok(), Some("A2\n"));
        assert_eq!(new_head.author().when(), repo.find_commit(head.commit).unwrap().author().when());
        let tree = new_head.tree().unwrap();
        assert!(tree.get_path(std::path::Path::new("s/s.md")).is_err());
        assert!(tree.get_path(std::path::Path::new("b/b.md")).is_ok());
        let parent = new_head.parent(0).unwrap();
        assert_eq!(parent.parent_id(0).unwrap(), a.commit);
    }
}
