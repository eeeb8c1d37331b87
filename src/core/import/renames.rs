//! The renames in a git source's history: which markdown file of a commit's parent is
//! which file of the commit, so that a page follows its file as `git log --follow`
//! follows it.
//!
//! git's own rename detection finds them when the `git` command can read the
//! repository: one `git log -M` over the first-parent history, read once before the
//! replay (about a second for Obsidian's 1,919 commits). git and libgit2 both pair files
//! of 50 % similarity or more, but they score similarity differently and choose between
//! several similar files differently, so only git's own pairs give every page the
//! history `git log --follow` lists. Without a `git` command, or when it cannot read the
//! repository (a markdown blob missing from a partial clone, a repository git refuses as
//! another user's), libgit2 finds them commit by commit, and the report says so.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use git2::{Oid, Repository};

use super::source;

/// A rename: (old path, new path).
pub(crate) type Rename = (String, String);

/// Where a history's renames come from.
pub(crate) enum Renames {
    /// Read from `git log -M`: each commit's markdown renames (commits without any are
    /// not keys).
    Git(HashMap<Oid, Vec<Rename>>),
    /// Found by libgit2 for each commit; why git did not find them.
    Libgit2 { why: String },
}

impl Renames {
    /// git's renames for the first-parent history of the repository at `path`, else
    /// libgit2's.
    pub(crate) fn find(path: &Path) -> Renames {
        match by_git(path) {
            Ok(found) => Renames::Git(found),
            Err(why) => Renames::Libgit2 { why },
        }
    }

    /// What found them, for the report.
    pub(crate) fn found_by(&self) -> String {
        match self {
            Renames::Git(_) => "git".to_owned(),
            Renames::Libgit2 { why } => format!("libgit2 ({why}; a few files may pair otherwise than git pairs them)"),
        }
    }

    /// The markdown renames between `commit` and `parent`.
    pub(crate) fn of(&self, repo: &Repository, commit: Oid, parent: Option<Oid>) -> anyhow::Result<Vec<Rename>> {
        match self {
            Renames::Git(found) => Ok(found.get(&commit).cloned().unwrap_or_default()),
            Renames::Libgit2 { .. } => by_libgit2(repo, commit, parent),
        }
    }
}

/// One `git log` of the first-parent history, markdown files only (so git reads no
/// image or video for its similarity, as the import reads none), renames detected.
/// Configuration outside the repository is not read (a user's `diff.renames` or rename
/// limit would change the pairs), nor any diff driver run.
fn by_git(path: &Path) -> Result<HashMap<Oid, Vec<Rename>>, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(path)
        .args(["-c", "core.quotePath=false", "-c", "core.fsmonitor=false"])
        .args(["log", "--first-parent", "--diff-merges=first-parent", "-M", "--name-status", "-z"])
        .args(["--no-ext-diff", "--no-textconv", "--format=@%H", "--", ":(icase)*.md", ":(icase)*.markdown"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .map_err(|e| format!("no git command: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(format!("git log failed: {}", said.lines().next().unwrap_or("no message").trim()));
    }
    parse_log(&out.stdout)
}

/// Reads `git log --name-status -z --format=@%H`: a commit's `@id`, then for each file
/// its status and path (two paths for a rename or a copy), every field ended by a NUL;
/// the first status after a commit starts with a newline.
fn parse_log(out: &[u8]) -> Result<HashMap<Oid, Vec<Rename>>, String> {
    let mut fields = out.split(|b| *b == 0).map(|f| f.strip_prefix(b"\n").unwrap_or(f));
    let mut found: HashMap<Oid, Vec<Rename>> = HashMap::new();
    let mut commit = None;
    while let Some(field) = fields.next() {
        if field.is_empty() {
            continue;
        }
        if let Some(id) = field.strip_prefix(b"@") {
            let id = std::str::from_utf8(id).ok().and_then(|s| Oid::from_str(s).ok());
            commit = Some(id.ok_or_else(|| "a commit line without a commit id".to_owned())?);
            continue;
        }
        let status = field[0];
        let first = next_path(&mut fields)?;
        if status != b'R' && status != b'C' {
            continue;
        }
        let second = next_path(&mut fields)?;
        // A name that is not UTF-8 is no page's file (the tree's reading skips it).
        if let (b'R', Ok(from), Ok(to)) = (status, first, second)
            && source::is_markdown(&from)
            && source::is_markdown(&to)
        {
            found.entry(commit.ok_or_else(|| "a file before any commit".to_owned())?).or_default().push((from, to));
        }
    }
    Ok(found)
}

/// The next field, a path (Err(_) inside when it is not UTF-8); an error when the log ends.
fn next_path<'a>(
    fields: &mut impl Iterator<Item = &'a [u8]>,
) -> Result<Result<String, std::string::FromUtf8Error>, String> {
    fields.next().map(|p| String::from_utf8(p.to_vec())).ok_or_else(|| "a file without its path".to_owned())
}

/// Markdown renames libgit2 finds between a commit and its parent.
///
/// Only markdown files are compared (a pathspec), so the similarity never reads an image
/// or a video the import would not read either. When a markdown blob itself cannot be
/// read (a partial or shallow clone), renames are found by identical content only, which
/// reads nothing; the file is reported unreadable by the tree's reading.
fn by_libgit2(repo: &Repository, commit: Oid, parent: Option<Oid>) -> anyhow::Result<Vec<Rename>> {
    let Some(parent) = parent else { return Ok(vec![]) };
    let old = repo.find_commit(parent)?.tree()?;
    let new = repo.find_commit(commit)?.tree()?;
    let mut options = git2::DiffOptions::new();
    options.pathspec("*.[mM][dD]").pathspec("*.[mM][aA][rR][kK][dD][oO][wW][nN]");
    let mut diff = repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut options))?;
    if diff.find_similar(Some(git2::DiffFindOptions::new().renames(true))).is_err() {
        diff = repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut options))?;
        diff.find_similar(Some(git2::DiffFindOptions::new().renames(true).exact_match_only(true)))?;
    }
    Ok(diff
        .deltas()
        .filter(|d| d.status() == git2::Delta::Renamed)
        .filter_map(|d| {
            let from = d.old_file().path()?.to_str()?.to_owned();
            let to = d.new_file().path()?.to_str()?.to_owned();
            (source::is_markdown(&from) && source::is_markdown(&to)).then_some((from, to))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_logs_renames_are_read_by_commit() {
        let a = "1111111111111111111111111111111111111111";
        let b = "2222222222222222222222222222222222222222";
        let log = format!(
            "@{a}\0\nM\0en/Home.md\0R087\0en/Use callouts.md\0en/Callouts.md\0A\0@odd.md\0\
             @{b}\0\nR100\0de/Tab.md\0de/Tabs.md\0C075\0x.md\0y.md\0D\0gone.md\0R100\0a.md\0a.txt\0"
        );
        let found = parse_log(log.as_bytes()).unwrap();
        let pairs = |id: &str| found.get(&Oid::from_str(id).unwrap()).cloned().unwrap_or_default();
        let pair = |x: &str, y: &str| (x.to_owned(), y.to_owned());
        assert_eq!(pairs(a), [pair("en/Use callouts.md", "en/Callouts.md")]);
        // A copy is no rename, nor is a rename out of markdown.
        assert_eq!(pairs(b), [pair("de/Tab.md", "de/Tabs.md")]);
        assert_eq!(found.len(), 2);
    }

    #[test]
    fn a_log_cut_short_is_refused() {
        assert!(parse_log(b"@1111111111111111111111111111111111111111\0\nR100\0a.md").is_err());
        assert!(parse_log(b"@not-an-id\0").is_err());
    }
}
