//! A git repository as a source (An Otter Wiki's, Gollum's, a docs repository, a vault
//! kept in git): the branch's first-parent history replayed, oldest commit first, as
//! Cairn saves — one pass of the folder planner per source commit, and only what that
//! commit changed is saved.
//!
//! A file is the same page from commit to commit by its path, and by git's rename
//! detection (`git log --follow`'s similarity) across a rename; never by the slug it
//! happens to get. A slug once given stays with its file ([`plan::Given`]): a note of the
//! same name arriving later in a folder that sorts first gets `-2`, and takes nothing
//! from the file that had the name first.
//!
//! For each source commit:
//! 1. its tree is read like a folder ([`source::TreeReader`], each blob read once for the
//!    whole history) and planned ([`plan::plan`]) with the slugs the commit before gave;
//! 2. renames git finds in it ([`Renames`]: git's own, else libgit2's) rename the page
//!    when the file's name changed (a file moved to another folder keeps its slug), so
//!    its history follows it;
//! 3. images new to it become uploads; pages whose planned content, title or parent
//!    differ from the previous commit's plan are saved (`run::pages`: created, updated,
//!    moved), a page this import trashed coming back first restored;
//! 4. pages its tree no longer has go to the trash (their history stays there).
//!
//! A save's revision message is the source commit's subject.
//!
//! Every save of a source commit runs inside its [`Origin`]: the commit Cairn writes
//! keeps the source's author and date (the importer is the committer) and names the
//! source commit in a `Cairn-Import-Commit` trailer. An author whose email belongs to a
//! member of the workspace saves as that account.
//!
//! A second import reads those trailers back, starts again at the last source commit it
//! finds (so one cut short is completed) and replays only what follows; pages already as
//! the source has them get no new revision. The slugs the commits before it gave are found
//! again by deciding them once more, commit by commit, from the trees alone (the rule
//! depends on the source only), without planning any content. As with a folder, the source wins: a page
//! edited in Cairn since is overwritten when the source changes it again.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use super::plan::{self, Given, Plan, PlannedPage, Prior};
use super::renames::Renames;
use super::report::{FollowedRename, PageAction, PageEntry, Report};
use super::source::{PlannedUpload, TreeReader};
use super::{Progress, run};
use crate::core::Ctx;
use crate::core::pages::{self, origin::Origin};
use crate::core::users::User;
use crate::core::workspaces::Access;
use crate::git;
use crate::ids::Slug;

/// Whether `path` is a git repository (a working tree or a bare one) itself, not a
/// folder inside one.
pub(crate) fn is_repository(path: &Path) -> bool {
    Repository::open(path).is_ok()
}

/// One commit of the source's first-parent history.
#[derive(Debug, Clone)]
pub(crate) struct Step {
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
pub(crate) fn steps(repo: &Repository) -> anyhow::Result<Vec<Step>> {
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

/// The slugs the history gave so far: each file's of the last commit (`live`), and those
/// of files removed since whose pages this import trashed (`gone`).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Slugs {
    live: HashMap<String, String>,
    gone: HashMap<String, String>,
}

impl Slugs {
    /// After a commit gave `next` (file → slug): files no longer there are gone, unless
    /// their page went with a rename — one from a note's own page to a note's own page
    /// ([`followed`]); a folder's note renamed away leaves its page to the folder.
    fn advance(&mut self, next: HashMap<String, String>, renames: &[(String, String)]) {
        let renamed: HashSet<&str> = followed(&self.live, &next, &self.gone, renames).map(|(from, _)| from).collect();
        let live_slugs: HashSet<&String> = next.values().collect();
        for (key, slug) in self.live.drain() {
            if !next.contains_key(&key) && !renamed.contains(key.as_str()) && !live_slugs.contains(&slug) {
                self.gone.insert(key, slug);
            }
        }
        self.gone.retain(|k, s| !next.contains_key(k) && !live_slugs.contains(s));
        self.live = next;
    }
}

/// The slugs the commits before one source commit gave, kept beside the workspace's
/// repository when an import ends, so the next one resumes without deciding them again
/// from every tree (on Obsidian's help repository that was most of a re-run's time).
/// A cache: any doubt — another commit, another rename finder, an unreadable file —
/// and the slugs are decided again.
#[derive(Serialize, Deserialize)]
struct Checkpoint {
    /// The source commit these slugs come before (commit ids name their whole history).
    before: String,
    /// Who found the renames ([`Renames::found_by`]): the slugs depend on them.
    renames: String,
    slugs: Slugs,
}

impl Checkpoint {
    const FILE: &'static str = "cairn-import-slugs.json";

    fn path(ctx: &Ctx, access: &Access) -> std::path::PathBuf {
        ctx.workspace_dir(access.slug()).join(Self::FILE)
    }

    /// The slugs before `commit`, if the checkpoint holds them.
    fn read(ctx: &Ctx, access: &Access, commit: Oid, renames: &str) -> Option<Slugs> {
        let bytes = std::fs::read(Self::path(ctx, access)).ok()?;
        let kept: Checkpoint = serde_json::from_slice(&bytes).ok()?;
        (kept.before == commit.to_string() && kept.renames == renames).then_some(kept.slugs)
    }

    /// Keeps the slugs before `commit` (written whole, then renamed into place); a
    /// checkpoint that cannot be written only costs the next import time.
    fn write(ctx: &Ctx, access: &Access, commit: Oid, renames: String, slugs: Slugs) {
        let path = Self::path(ctx, access);
        let kept = Checkpoint { before: commit.to_string(), renames, slugs };
        let written = serde_json::to_vec(&kept).map_err(std::io::Error::other).and_then(|bytes| {
            let part = path.with_extension("json.part");
            std::fs::write(&part, bytes)?;
            std::fs::rename(&part, &path)
        });
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), error = %e, "the import's slugs were not kept; the next import decides them again");
        }
    }
}

/// The renames a page follows: from a note's own page to a note's own page, onto a path
/// whose earlier page is not in the trash (that page comes back instead). `before` and
/// `after` are the slugs given by file (a folder's note is not a key of its own: its
/// folder, `dir/`, is), so a rename into or out of a folder's note is not one; `gone`
/// the files whose pages this import trashed.
fn followed<'r>(
    before: &HashMap<String, String>,
    after: &HashMap<String, String>,
    gone: &HashMap<String, String>,
    renames: &'r [(String, String)],
) -> impl Iterator<Item = (&'r str, &'r str)> {
    renames
        .iter()
        .filter(|(from, to)| before.contains_key(from) && after.contains_key(to) && !gone.contains_key(to))
        .map(|(from, to)| (from.as_str(), to.as_str()))
}

/// What one source commit is, read and planned on a blocking thread.
struct Planned {
    plan: Plan,
    renames: Vec<(String, String)>,
    /// The images new to this commit, with their bytes read (or why they could not be).
    new_uploads: Vec<PlannedUpload>,
}

type Reader = Arc<Mutex<TreeReader>>;

/// Reads and plans `step` given the slugs so far; with `known_uploads`, reads the bytes of
/// the images that are not among them.
fn plan_step(
    reader: &mut TreeReader,
    renames: &Renames,
    step: &Step,
    slugs: &Slugs,
    existing: &HashSet<String>,
    known_uploads: Option<&HashSet<String>>,
) -> anyhow::Result<Planned> {
    let renames = renames.of(reader.repo(), step.commit, step.parent)?;
    let given = Given::next(&slugs.live, &slugs.gone, &renames);
    let source = reader.read(step.commit)?;
    let plan = plan::plan(&source, &given, existing, &mut |image| reader.name(image));
    let Some(known_uploads) = known_uploads else { return Ok(Planned { plan, renames, new_uploads: vec![] }) };
    let new_uploads =
        plan.uploads.iter().filter(|u| !known_uploads.contains(&u.name)).map(|u| reader.loaded(u)).collect();
    Ok(Planned { plan, renames, new_uploads })
}

/// The slugs the commits in `steps` gave, decided again from their trees alone.
fn slugs_through(reader: &mut TreeReader, renames: &Renames, steps: &[Step]) -> anyhow::Result<Slugs> {
    let mut slugs = Slugs::default();
    for step in steps {
        let renames = renames.of(reader.repo(), step.commit, step.parent)?;
        let given = Given::next(&slugs.live, &slugs.gone, &renames);
        let next = plan::slugs(&reader.read(step.commit)?, &given);
        slugs.advance(next, &renames);
    }
    Ok(slugs)
}

async fn blocking<T: Send + 'static>(
    reader: &Reader,
    f: impl FnOnce(&mut TreeReader) -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let reader = reader.clone();
    tokio::task::spawn_blocking(move || f(&mut reader.lock().expect("the reader is not poisoned"))).await?
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
pub(crate) async fn replay(
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
    let reader: Reader =
        Arc::new(Mutex::new(tokio::task::spawn_blocking(move || TreeReader::open(&repo_path, max_image)).await??));
    let all = Arc::new(blocking(&reader, |r| steps(r.repo())).await?);
    let source = path.to_owned();
    let renames = Arc::new(tokio::task::spawn_blocking(move || Renames::find(&source)).await?);
    report.renames_found_by = Some(renames.found_by());
    let existing = Arc::new(existing);
    let start = if report.dry_run { all.len() } else { resume_point(ctx, access, &all).await?.unwrap_or(0) };
    // The next import resumes at the last commit, from the slugs before the one ahead of
    // it: those are kept when this one ends.
    let keep_at = all.len().checked_sub(2);
    let mut keep: Option<Slugs> = None;
    // Where the commits before `start` left the slugs, and the last one's plan (what the
    // workspace holds already).
    let (mut slugs, mut prev) = if start == 0 {
        (Slugs::default(), Plan::default())
    } else {
        let kept = Checkpoint::read(ctx, access, all[start - 1].commit, &renames.found_by());
        let decide_again = kept.is_none();
        let (all, existing, renames) = (all.clone(), existing.clone(), renames.clone());
        let (before, slugs, plan) = blocking(&reader, move |r| {
            let before = match kept {
                Some(slugs) => slugs,
                None => slugs_through(r, &renames, &all[..start - 1])?,
            };
            let planned = plan_step(r, &renames, &all[start - 1], &before, &existing, None)?;
            let mut slugs = before.clone();
            slugs.advance(planned.plan.given.clone(), &planned.renames);
            Ok((before, slugs, planned.plan))
        })
        .await?;
        if decide_again && keep_at == Some(start - 1) {
            keep = Some(before);
        }
        (slugs, plan)
    };
    if report.dry_run {
        // What the workspace would hold: the last commit's plan against it, written nowhere.
        let done = run::pages(ctx, access, importer, &prev.pages, true, progress).await;
        report.commits = all.len();
        let known = crate::core::uploads::names(ctx, access).await?;
        run::uploads(ctx, access, &prev.uploads, &known, true, report, progress).await;
        finish(report, done.into_iter().map(|e| (e.slug.clone(), e)).collect(), prev);
        return Ok(());
    }
    let mut known_uploads: HashSet<String> = crate::core::uploads::names(ctx, access).await?;
    let mut entries: BTreeMap<String, PageEntry> = BTreeMap::new();
    let mut authors = Authors::new(importer, access);
    let total = all.len() - start;
    // Revisions are listed by time: a source commit dated before the one it follows (a
    // rebase, a wrong clock) takes its predecessor's time, so history keeps its order.
    let mut not_before = DateTime::<Utc>::MIN_UTC;
    for n in start..all.len() {
        if keep_at == Some(n) {
            keep = Some(slugs.clone());
        }
        let mut step = all[n].clone();
        step.time = step.time.max(not_before);
        not_before = step.time;
        let planned = {
            let (s, slugs, existing, known) = (step.clone(), slugs.clone(), existing.clone(), known_uploads.clone());
            let renames = renames.clone();
            blocking(&reader, move |r| plan_step(r, &renames, &s, &slugs, &existing, Some(&known))).await?
        };
        let (user, at) = authors.of(ctx, &step).await;
        let commit =
            Commit { step: &step, prev: &prev, next: &planned.plan, moved: &planned.renames, gone: &slugs.gone };
        step.origin().scope(apply(ctx, &at, &user, &commit, &planned.new_uploads, &mut entries, report)).await;
        known_uploads.extend(planned.new_uploads.iter().map(|u| u.name.clone()));
        slugs.advance(planned.plan.given.clone(), &planned.renames);
        report.commits += 1;
        prev = planned.plan;
        progress("commits", n - start + 1, total);
        // Each commit's plan and reading free what the one before allocated; glibc keeps
        // the freed pages unless asked (on Obsidian's help repository the peak went from
        // 216 to 168 MiB of heap; asking every 8 commits instead kept 214).
        crate::memory::trim();
    }
    if let (Some(at), Some(slugs)) = (keep_at, keep) {
        Checkpoint::write(ctx, access, all[at].commit, renames.found_by(), slugs);
    }
    verify(ctx, access, &prev, &mut entries).await;
    finish(report, entries, prev);
    Ok(())
}

/// Checks that the workspace holds what the last commit's plan says — every page live,
/// with its content and under its parent — and reports a failure for each page that is
/// not: a save refused in this run or in an earlier one (whose commit a re-run does not
/// replay) shows here every time.
async fn verify(ctx: &Ctx, access: &Access, last: &Plan, entries: &mut BTreeMap<String, PageEntry>) {
    for p in &last.pages {
        let page = async { pages::get(ctx, access, &Slug::parse(&p.slug)?).await };
        let wrong = match page.await {
            Err(e) => Some(format!("not live at the end of the import: {e}")),
            Ok(page) if page.parent != p.parent => Some(format!(
                "under {} at the end of the import, not under {}",
                page.parent.as_deref().unwrap_or("no page"),
                p.parent.as_deref().unwrap_or("no page")
            )),
            Ok(page) if outside_links(&page.content) != outside_links(&p.content) => {
                Some("its content at the end of the import is not the source's".to_owned())
            }
            Ok(_) => None,
        };
        if let Some(why) = wrong {
            let entry = entries.entry(p.slug.clone()).or_insert_with(|| unchanged(&p.source, &p.slug));
            entry.action = PageAction::Failed;
            entry.error.get_or_insert(why);
        }
    }
}

/// A page's text without its links: what must be the source's whatever the links were
/// rewritten to (a page keeps the links of its file's last change; see `apply`).
fn outside_links(content: &str) -> String {
    let mut out = String::with_capacity(content.len());
    let mut at = 0;
    for span in crate::markdown::link_spans(content) {
        if span.whole.start >= at {
            out.push_str(&content[at..span.whole.start]);
            at = span.whole.end;
        }
    }
    out.push_str(&content[at..]);
    out
}

/// The report's pages, and what the last commit's plan says of the source.
fn finish(report: &mut Report, entries: BTreeMap<String, PageEntry>, last: Plan) {
    report.renamed = last.renamed;
    report.skipped.extend(last.skipped);
    report.skipped.sort_by(|a, b| a.source.cmp(&b.source));
    report.broken_links = last.broken_links;
    report.pages = entries.into_values().collect();
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

/// One source commit against the one before.
struct Commit<'a> {
    step: &'a Step,
    prev: &'a Plan,
    next: &'a Plan,
    /// Its renames (old path, new path).
    moved: &'a [(String, String)],
    /// Files removed earlier whose pages this import trashed (file → slug).
    gone: &'a HashMap<String, String>,
}

/// Applies one source commit: renames, new images, pages back from the trash, changed
/// pages, removed pages.
async fn apply(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    c: &Commit<'_>,
    new_uploads: &[PlannedUpload],
    entries: &mut BTreeMap<String, PageEntry>,
    report: &mut Report,
) {
    run::uploads(ctx, access, new_uploads, &HashSet::new(), false, report, &|_, _, _| {}).await;

    // A rename is followed from a note's own page to a note's own page. A folder's note
    // renamed away (or a note renamed into a folder's) leaves the folder's page where it
    // is, with its children: the file's new page starts there.
    let renamed: HashMap<&str, &str> = followed(&c.prev.given, &c.next.given, c.gone, c.moved)
        .map(|(from, to)| (c.next.given[to].as_str(), c.prev.given[from].as_str()))
        .filter(|(new, old)| new != old)
        .collect();
    // A file this import removed earlier is back: its page comes back from the trash.
    let back: HashSet<&String> = c.gone.values().collect();
    let before: HashMap<&str, &PlannedPage> = c.prev.pages.iter().map(|p| (p.slug.as_str(), p)).collect();
    // Each page the commit changed, saved once: renamed, back from the trash, edited and
    // moved in one revision (`pages::replay`).
    let changed: Vec<PlannedPage> = c
        .next
        .pages
        .iter()
        .filter_map(|p| {
            let prior = match renamed.get(p.slug.as_str()) {
                Some(old) => Prior::Renamed((*old).to_owned()),
                None if back.contains(&p.slug) => Prior::InTrash,
                None => Prior::Here,
            };
            // A page whose file the commit did not change is not saved, even when a link
            // in it now leads elsewhere (another file came, went or was renamed): its
            // links are written anew with its file's next change, so its history stays
            // its file's. (The old slug of a renamed page is an alias: links to it lead on.)
            let had = before.get(p.slug.as_str());
            let same_text = had.is_some_and(|b| match (&b.text, &p.text) {
                (Some(b), Some(p)) => Arc::ptr_eq(b, p) || b == p,
                (b, p) => b.is_none() && p.is_none(),
            });
            let differs = had.is_none_or(|b| !same_text || b.title != p.title || b.parent != p.parent);
            // A file the commit changed gets its revision even when only how its links
            // are spelled changed (they lead where they led: the same content).
            let recorded = had.is_some() && !same_text && p.text.is_some();
            (differs || prior != Prior::Here).then(|| PlannedPage { prior, recorded, ..p.clone() })
        })
        .collect();
    for done in run::pages(ctx, access, user, &changed, false, &|_, _, _| {}).await {
        let planned = changed.iter().find(|p| p.slug == done.slug);
        if let Some(Prior::Renamed(old)) = planned.map(|p| &p.prior)
            && done.action != PageAction::Failed
        {
            // The page's entry so far is under its old slug.
            if let Some(mut had) = entries.remove(old) {
                had.slug = done.slug.clone();
                entries.insert(done.slug.clone(), had);
            }
            let (from, to) = (old.clone(), done.slug.clone());
            report.followed_renames.push(FollowedRename { commit: c.step.commit.to_string(), from, to });
        }
        merge(entries, done);
    }
    let renamed_from: HashSet<&str> = renamed.values().copied().collect();

    let kept: HashSet<&str> = c.next.pages.iter().map(|p| p.slug.as_str()).collect();
    let mut gone: Vec<&PlannedPage> = c
        .prev
        .pages
        .iter()
        .filter(|p| !kept.contains(p.slug.as_str()) && !renamed_from.contains(p.slug.as_str()))
        .collect();
    gone.sort_by_key(|p| std::cmp::Reverse(p.depth));
    for p in gone {
        // That file's page only: its children were moved (above) where their files are.
        let trashed = async { pages::delete(ctx, access, user, &Slug::parse(&p.slug)?, false).await };
        match trashed.await {
            Ok(()) => {
                let entry = entries.entry(p.slug.clone()).or_insert_with(|| unchanged(&p.source, &p.slug));
                entry.revisions += 1;
                if entry.action == PageAction::Unchanged {
                    entry.action = PageAction::Updated;
                }
                report.trashed.push(p.slug.clone());
            }
            // An earlier run trashed it, or the slug names a renamed page now.
            Err(e) if run::holds_no_page(&e) => {}
            Err(e) => {
                let entry = entries.entry(p.slug.clone()).or_insert_with(|| unchanged(&p.source, &p.slug));
                entry.action = PageAction::Failed;
                entry.error = Some(format!("removed in {}, but not trashed: {e}", c.step.commit));
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
