//! A git repository as a source (An Otter Wiki's, Gollum's, a docs repository, a vault
//! kept in git): the branch's first-parent history replayed, oldest commit first, as
//! Cairn saves — one pass of the folder planner per source commit, and only what that
//! commit changed is saved.
//!
//! For each source commit:
//! 1. its tree is read like a folder ([`source::read_tree`]) and planned ([`plan::plan`]);
//! 2. renames git finds in it (`git log --follow`'s similarity) rename the page, so its
//!    history follows it;
//! 3. images new to it become uploads; pages whose planned content, title or parent
//!    differ from the previous commit's plan are saved (`run::pages`: created, updated,
//!    moved);
//! 4. pages its tree no longer has go to the trash (their history stays there).
//!
//! Every save of a source commit runs inside its [`Origin`]: the commit Cairn writes
//! keeps the source's author and date (the importer is the committer) and names the
//! source commit in a `Cairn-Import-Commit` trailer. An author whose email belongs to a
//! member of the workspace saves as that account.
//!
//! A second import reads those trailers back, starts again at the last source commit it
//! finds (so one cut short is completed) and replays only what follows; pages already as
//! the source has them get no new revision. As with a folder, the source wins: a page
//! edited in Cairn since is overwritten when the source changes it again.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use chrono::{DateTime, Utc};
use git2::{Oid, Repository};

use super::plan::{self, Plan, PlannedPage};
use super::report::{FollowedRename, PageAction, PageEntry, Report};
use super::{Progress, run, source};
use crate::core::Ctx;
use crate::core::pages::{self, origin::Origin};
use crate::core::users::User;
use crate::core::workspaces::Access;
use crate::git;

/// Whether `path` is a git repository (a working tree or a bare one) itself, not a
/// folder inside one.
pub fn is_repository(path: &Path) -> bool {
    Repository::open(path).is_ok()
}

/// One commit of the source's first-parent history.
#[derive(Debug, Clone)]
pub struct Step {
    pub commit: Oid,
    pub parent: Option<Oid>,
    pub subject: String,
    pub author_name: String,
    pub author_email: String,
    pub time: DateTime<Utc>,
}

impl Step {
    fn origin(&self) -> Origin {
        Origin {
            commit: self.commit.to_string(),
            subject: self.subject.clone(),
            author_name: self.author_name.clone(),
            author_email: self.author_email.clone(),
            time: self.time,
        }
    }
}

/// The first-parent history of the source's checked-out branch, oldest first.
pub fn steps(repo: &Repository) -> anyhow::Result<Vec<Step>> {
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| anyhow::anyhow!("{} has no commit to import: {}", repo.path().display(), e.message()))?;
    let mut walk = repo.revwalk()?;
    walk.push(head.id())?;
    walk.simplify_first_parent()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
    let mut out = Vec::new();
    for oid in walk {
        let c = repo.find_commit(oid?)?;
        let author = c.author();
        let when = author.when();
        out.push(Step {
            commit: c.id(),
            parent: c.parent_ids().next(),
            subject: c.summary().ok().flatten().unwrap_or_default().to_owned(),
            author_name: author.name().unwrap_or("unknown").to_owned(),
            author_email: author.email().unwrap_or("").to_owned(),
            time: DateTime::from_timestamp(when.seconds(), 0).unwrap_or_default(),
        });
    }
    Ok(out)
}

/// Markdown renames git finds between a commit and its parent: (old path, new path).
fn renames(repo: &Repository, step: &Step) -> anyhow::Result<Vec<(String, String)>> {
    let Some(parent) = step.parent else { return Ok(vec![]) };
    let old = repo.find_commit(parent)?.tree()?;
    let new = repo.find_commit(step.commit)?.tree()?;
    let mut diff = repo.diff_tree_to_tree(Some(&old), Some(&new), None)?;
    diff.find_similar(Some(git2::DiffFindOptions::new().renames(true)))?;
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

/// The plan of one source commit's tree.
fn plan_at(repo: &Repository, commit: Oid, max_image: u64, existing: &HashSet<String>) -> anyhow::Result<Plan> {
    let tree = repo.find_commit(commit)?.tree()?;
    Ok(plan::plan(source::read_tree(repo, &tree, max_image)?, existing))
}

/// The source commit a previous import of this workspace got to: the newest
/// `Cairn-Import-Commit` trailer in its history that names a commit of `steps`.
async fn resume_point(ctx: &Ctx, access: &Access, steps: &[Step]) -> anyhow::Result<Option<usize>> {
    let index: HashMap<String, usize> = steps.iter().enumerate().map(|(i, s)| (s.commit.to_string(), i)).collect();
    let key = Origin::TRAILER.to_lowercase();
    let repo = ctx.repo(access.slug())?;
    let found = repo
        .with(move |r| {
            for oid in git::log(r)? {
                let commit = r.find_commit(oid)?;
                if let Some(i) =
                    git::trailers(commit.message().unwrap_or_default()).get(&key).and_then(|c| index.get(c))
                {
                    return Ok(Some(*i));
                }
            }
            Ok(None)
        })
        .await?;
    Ok(found)
}

/// Replays the source's history into the workspace; fills `report.pages`, `uploads`,
/// `commits`, `followed_renames`, `trashed` and, from the last commit's plan, `renamed`,
/// `skipped` and `broken_links`.
pub async fn replay(
    ctx: &Ctx,
    access: &Access,
    importer: &User,
    path: &Path,
    existing: HashSet<String>,
    report: &mut Report,
    progress: Progress<'_>,
) -> anyhow::Result<()> {
    let max_image = ctx.config.upload_max_bytes;
    let repo_path = path.to_owned();
    let all = tokio::task::spawn_blocking(move || steps(&Repository::open(&repo_path)?)).await??;
    let start = resume_point(ctx, access, &all).await?.unwrap_or(0);
    let todo = all[start..].to_vec();
    let before = match todo.first().and_then(|s| s.parent) {
        Some(parent) if start > 0 => {
            let (p, existing) = (path.to_owned(), existing.clone());
            tokio::task::spawn_blocking(move || plan_at(&Repository::open(&p)?, parent, max_image, &existing)).await??
        }
        _ => Plan::default(),
    };
    let mut entries: BTreeMap<String, PageEntry> = BTreeMap::new();
    let mut authors = Authors::new(importer, access);
    let mut prev = before;
    let total = todo.len();
    // Revisions are listed by time: a source commit dated before the one it follows (a
    // rebase, a wrong clock) takes its predecessor's time, so history keeps its order.
    let mut not_before = DateTime::<Utc>::MIN_UTC;
    for (n, mut step) in todo.into_iter().enumerate() {
        step.time = step.time.max(not_before);
        not_before = step.time;
        let (p, existing, s) = (path.to_owned(), existing.clone(), step.clone());
        let (next, moved) = tokio::task::spawn_blocking(move || -> anyhow::Result<(Plan, Vec<(String, String)>)> {
            let repo = Repository::open(&p)?;
            Ok((plan_at(&repo, s.commit, max_image, &existing)?, renames(&repo, &s)?))
        })
        .await??;
        if !report.dry_run {
            let (user, at) = authors.of(ctx, &step).await;
            step.origin().scope(apply(ctx, &at, &user, &step, &prev, &next, &moved, &mut entries, report)).await;
        }
        report.commits += 1;
        prev = next;
        progress("commits", n + 1, total);
    }
    if report.dry_run {
        // What the workspace would hold: the last commit's plan against it, written nowhere.
        let last = match all.last() {
            Some(s) => {
                let (p, existing, c) = (path.to_owned(), existing.clone(), s.commit);
                tokio::task::spawn_blocking(move || plan_at(&Repository::open(&p)?, c, max_image, &existing)).await??
            }
            None => Plan::default(),
        };
        let done = run::pages(ctx, access, importer, &last.pages, true, progress).await;
        entries.extend(done.into_iter().map(|e| (e.slug.clone(), e)));
        prev = last;
    }
    report.renamed = prev.renamed;
    report.skipped = prev.skipped;
    report.broken_links = prev.broken_links;
    report.pages = entries.into_values().collect();
    Ok(())
}

/// Who saves a source commit: the member of the workspace with the author's email, else
/// the importer (the commit still names the source's author).
struct Authors {
    importer: (User, Access),
    known: HashMap<String, Option<(User, Access)>>,
}

impl Authors {
    fn new(importer: &User, access: &Access) -> Self {
        Authors { importer: (importer.clone(), access.clone()), known: HashMap::new() }
    }

    async fn of(&mut self, ctx: &Ctx, step: &Step) -> (User, Access) {
        let email = step.author_email.to_lowercase();
        if !self.known.contains_key(&email) {
            let found = super::member_by_email(ctx, &email, self.importer.1.slug()).await.ok();
            self.known.insert(email.clone(), found);
        }
        self.known[&email].clone().unwrap_or_else(|| self.importer.clone())
    }
}

/// Applies one source commit: renames, new images, changed pages, removed pages.
#[allow(clippy::too_many_arguments)]
async fn apply(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    step: &Step,
    prev: &Plan,
    next: &Plan,
    moved: &[(String, String)],
    entries: &mut BTreeMap<String, PageEntry>,
    report: &mut Report,
) {
    let slug_in = |plan: &Plan, source: &str| plan.pages.iter().find(|p| p.source == source).map(|p| p.slug.clone());
    let mut renamed_from: HashSet<String> = HashSet::new();
    for (from, to) in moved {
        let (Some(old), Some(new)) = (slug_in(prev, from), slug_in(next, to)) else { continue };
        if old == new || prev.pages.iter().any(|p| p.slug == new) {
            continue;
        }
        match pages::rename(ctx, access, user, &old, &new, None).await {
            Ok(_) => {
                renamed_from.insert(old.clone());
                let mut entry = entries.remove(&old).unwrap_or_else(|| unchanged(from, &old));
                entry.slug = new.clone();
                entry.revisions += 1;
                if entry.action == PageAction::Unchanged {
                    entry.action = PageAction::Updated;
                }
                entries.insert(new.clone(), entry);
                report.followed_renames.push(FollowedRename { commit: step.commit.to_string(), from: old, to: new });
            }
            // Already renamed by an earlier run that stopped in this commit.
            Err(e) if e.code == "page_not_found" => {}
            Err(e) => tracing::warn!(from = %old, to = %new, error = %e, "import: a rename was not followed"),
        }
    }

    let known_uploads: HashSet<&str> = prev.uploads.iter().map(|u| u.name.as_str()).collect();
    let new_uploads = Plan {
        uploads: next.uploads.iter().filter(|u| !known_uploads.contains(u.name.as_str())).cloned().collect(),
        ..Plan::default()
    };
    run::uploads(ctx, access, &new_uploads, false, report, &|_, _, _| {}).await;

    let before: HashMap<&str, &PlannedPage> = prev.pages.iter().map(|p| (p.slug.as_str(), p)).collect();
    let changed: Vec<PlannedPage> = next
        .pages
        .iter()
        .filter(|p| {
            before
                .get(p.slug.as_str())
                .is_none_or(|b| b.content != p.content || b.title != p.title || b.parent != p.parent)
        })
        .cloned()
        .collect();
    for done in run::pages(ctx, access, user, &changed, false, &|_, _, _| {}).await {
        merge(entries, done);
    }

    let kept: HashSet<&str> = next.pages.iter().map(|p| p.slug.as_str()).collect();
    let mut gone: Vec<&PlannedPage> =
        prev.pages.iter().filter(|p| !kept.contains(p.slug.as_str()) && !renamed_from.contains(&p.slug)).collect();
    gone.sort_by_key(|p| std::cmp::Reverse(p.depth));
    for p in gone {
        match pages::delete(ctx, access, user, &p.slug, true).await {
            Ok(()) => {
                let entry = entries.entry(p.slug.clone()).or_insert_with(|| unchanged(&p.source, &p.slug));
                entry.revisions += 1;
                if entry.action == PageAction::Unchanged {
                    entry.action = PageAction::Updated;
                }
                report.trashed.push(p.slug.clone());
            }
            Err(e) if e.code == "page_not_found" => {}
            Err(e) => {
                let entry = entries.entry(p.slug.clone()).or_insert_with(|| unchanged(&p.source, &p.slug));
                entry.action = PageAction::Failed;
                entry.error = Some(format!("removed in {}, but not trashed: {e}", step.commit));
            }
        }
    }
}

fn unchanged(source: &str, slug: &str) -> PageEntry {
    PageEntry {
        source: source.to_owned(),
        slug: slug.to_owned(),
        parent: None,
        action: PageAction::Unchanged,
        revisions: 0,
        error: None,
    }
}

/// Folds one commit's entry for a page into what the import did to it so far.
fn merge(entries: &mut BTreeMap<String, PageEntry>, e: PageEntry) {
    let Some(had) = entries.get_mut(&e.slug) else {
        entries.insert(e.slug.clone(), e);
        return;
    };
    had.revisions += e.revisions;
    had.source = e.source;
    had.parent = e.parent;
    had.action = match (had.action, e.action) {
        (_, PageAction::Failed) | (PageAction::Failed, _) => PageAction::Failed,
        (PageAction::Created, _) | (_, PageAction::Created) => PageAction::Created,
        (PageAction::Updated, _) | (_, PageAction::Updated) => PageAction::Updated,
        _ => PageAction::Unchanged,
    };
    if e.error.is_some() {
        had.error = e.error;
    }
}
