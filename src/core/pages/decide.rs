//! What a create or an edit does to a page as it stands: the one place where a save is
//! refused (its page exists, its parent or its page is missing, its base revision is
//! stale), found to change nothing, or turned into the commit it makes.
//!
//! A save alone ([`Intent::save_in`]) and a group of queued saves ([`super::group`])
//! both decide here. They differ only in what they know of the pages ([`Known`]): a save
//! alone knows the rows read under the lock; a save in a group also knows what the
//! group's earlier saves leave.

use std::collections::HashMap;
use std::sync::Arc;

use super::Page;
use super::inputs::PageUpdate;
use super::rows::{self, Lists, Row, State};
use super::save::{Action, Change, PageState, Parent, Writer, new_uid, one_line};
use crate::core::users::User;
use crate::error::{Error, Result};
use crate::markdown::{self, Parsed};

/// A create or an edit, checked and parsed before the workspace's lock: what a save
/// queues for its workspace's group of saves ([`super::group`]).
pub(super) enum Intent {
    Create(Creation),
    Edit(Edit),
}

impl Intent {
    /// The pages the save reads: its own, and a create's parent.
    pub(super) fn slugs(&self) -> impl Iterator<Item = &str> {
        let (own, parent) = match self {
            Intent::Create(c) => (c.slug.as_str(), c.parent.as_deref()),
            Intent::Edit(e) => (e.slug.as_str(), None),
        };
        std::iter::once(own).chain(parent)
    }

    /// What the save does to the pages as `known` holds them (`workspace`: the slug
    /// a page answered without a commit carries).
    pub(super) fn decide(&self, known: &HashMap<String, Known>, workspace: &str) -> Decided {
        match self {
            Intent::Create(c) => decide_create(c, known),
            Intent::Edit(e) => decide_edit(e, known, workspace),
        }
    }

    /// Decides and commits the save on its own, under the lock `w` holds.
    pub(super) async fn save_in(&self, w: &mut Writer, user: &User) -> Result<Page> {
        let slugs: Vec<&str> = self.slugs().collect();
        let known = known(w, &slugs).await?;
        match self.decide(&known, w.access.slug()) {
            Decided::Commit(change) => w.commit_one(user, *change).await,
            Decided::Answered(Answer::Now(answer)) => *answer,
            // Only a group knows pages as its earlier commits leave them.
            Decided::Answered(Answer::Page(_) | Answer::Stale(_)) => {
                Err(Error::internal(anyhow::anyhow!("a save alone was answered by a commit of a group")))
            }
        }
    }
}

pub(super) struct Creation {
    pub slug: String,
    pub title: String,
    pub content: String,
    pub parsed: Arc<Parsed>,
    /// The parent's slug, as the request named it.
    pub parent: Option<String>,
}

impl Creation {
    /// The commit of the new page, under `parent`.
    fn change(&self, parent: Option<Parent>) -> Change {
        let state = PageState {
            uid: new_uid(),
            slug: self.slug.clone(),
            title: self.title.clone(),
            content: self.content.clone(),
            parent,
            position: None,
            trashed: false,
            parsed: Some(self.parsed.clone()),
            indexed: None,
        };
        let summary = format!("Create {}", self.title);
        Change {
            co_authors: Vec::new(),
            action: Action::Create,
            summary,
            before_path: None,
            state,
            previous_slug: None,
        }
    }
}

#[derive(Clone)]
pub(super) struct Edit {
    pub slug: String,
    pub req: PageUpdate,
    /// The request's title, cleaned.
    pub requested: Option<String>,
    /// The request's content, parsed.
    pub sent: Option<Arc<Parsed>>,
    /// The others whose edits it holds ([`Change::co_authors`]).
    pub co_authors: Vec<String>,
}

impl Edit {
    /// The commit that saves `content` over the page as `base` holds it, or None when
    /// that changes nothing (no empty commit).
    fn change(&self, base: PageState, content: String) -> Option<Change> {
        let parsed = match (&self.sent, &self.req.content) {
            (Some(parsed), Some(c)) if *c == content => parsed.clone(),
            _ => Arc::new(markdown::parse(&content)),
        };
        let title = decide_title(self.requested.clone(), &parsed, Some(&base), &base.slug);
        if content == base.content && title == base.title {
            return None;
        }
        let summary = match self.req.message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
            Some(m) => m.to_owned(),
            None => format!("Update {title}"),
        };
        let state = PageState { title, content, parsed: Some(parsed), ..base };
        let co_authors = self.co_authors.clone();
        Some(Change { co_authors, action: Action::Update, summary, before_path: None, state, previous_slug: None })
    }

    /// The base revision the request names, if any.
    pub(super) fn base(&self) -> Option<&str> {
        self.req.base_revision.as_deref().map(str::trim)
    }
}

/// A page as a save knows it: its rows, or what a commit of the group leaves.
pub(super) enum Known {
    Stored(Row, Lists),
    /// As the group's `by`-th commit leaves it.
    Changed {
        state: PageState,
        by: usize,
    },
}

impl Known {
    fn live(&self) -> bool {
        match self {
            Known::Stored(row, _) => row.deleted_at.is_none(),
            Known::Changed { state, .. } => !state.trashed,
        }
    }

    fn as_parent(&self) -> Parent {
        match self {
            Known::Stored(row, _) => Parent { uid: row.uid.clone(), slug: row.slug.clone() },
            Known::Changed { state, .. } => Parent { uid: state.uid.clone(), slug: state.slug.clone() },
        }
    }
}

/// The rows of pages `slugs`, live or trashed, by slug, read on the writer's connection
/// (the lock holds it).
pub(super) async fn known(w: &mut Writer, slugs: &[&str]) -> Result<HashMap<String, Known>> {
    let ws = w.access.workspace_id();
    let found = match slugs {
        // A save alone reads its one page with the plain lookup.
        [slug] => rows::find_listed(w.conn(), ws, slug, State::Any).await?.into_iter().collect(),
        _ => rows::find_listed_many(w.conn(), ws, slugs).await?.into_values().collect::<Vec<_>>(),
    };
    Ok(found.into_iter().map(|(row, lists)| (row.slug.clone(), Known::Stored(row, lists))).collect())
}

/// What a save does: a change to commit (boxed: a change is large, an answer two
/// words), or its answer already.
pub(super) enum Decided {
    Commit(Box<Change>),
    Answered(Answer),
}

/// A save's answer without a commit of its own.
pub(super) enum Answer {
    /// Answered now. Boxed: a page is large, and most answers are the other kinds.
    Now(Box<Result<Page>>),
    /// The page as the group's `k`-th commit left it (one the save would not change).
    Page(usize),
    /// Refused as stale: based on a revision the group's `k`-th commit replaced.
    Stale(usize),
}

impl Decided {
    fn now(answer: Result<Page>) -> Decided {
        Decided::Answered(Answer::Now(Box::new(answer)))
    }
}

fn decide_create(c: &Creation, known: &HashMap<String, Known>) -> Decided {
    if known.contains_key(&c.slug) {
        return Decided::now(Err(Error::page_exists(&c.slug)));
    }
    let parent = match &c.parent {
        None => None,
        Some(p) => match known.get(p.as_str()).filter(|k| k.live()) {
            Some(k) => Some(k.as_parent()),
            None => return Decided::now(Err(Error::parent_not_found(p))),
        },
    };
    Decided::Commit(Box::new(c.change(parent)))
}

fn decide_edit(e: &Edit, known: &HashMap<String, Known>, workspace: &str) -> Decided {
    let Some(page) = known.get(&e.slug).filter(|k| k.live()) else {
        return Decided::now(Err(Error::page_not_found(&e.slug)));
    };
    let content = |now: &str| e.req.content.clone().unwrap_or_else(|| now.to_owned());
    match page {
        Known::Stored(row, lists) => {
            if let Some(base) = e.base()
                && base != row.revision
            {
                let theirs = super::theirs(&row.revision, &row.updated_by, &row.updated_at);
                return Decided::now(Err(Error::stale_revision(&row.revision).with_extra("theirs", theirs)));
            }
            match e.change(PageState::listed(row, lists.clone()), content(&row.content)) {
                Some(change) => Decided::Commit(Box::new(change)),
                None => Decided::now(Ok(row.clone().into_page(lists.tags.clone(), lists.links.clone(), workspace))),
            }
        }
        // No request can name the revision of a commit not answered yet.
        Known::Changed { by, .. } if e.base().is_some() => Decided::Answered(Answer::Stale(*by)),
        Known::Changed { state, by } => match e.change(state.clone(), content(&state.content)) {
            Some(change) => Decided::Commit(Box::new(change)),
            None => Decided::Answered(Answer::Page(*by)),
        },
    }
}

/// The page as `change`, the group's `by`-th commit, leaves it, with the tags and links
/// its rows will then hold: what the group's later saves know of it.
pub(super) fn after(change: &Change, by: usize) -> Known {
    let mut state = change.state.clone();
    state.indexed = state
        .parsed
        .take()
        .map(|p| Lists { tags: p.tags.clone(), links: p.links.iter().map(|l| l.slug.clone()).collect() });
    Known::Changed { state, by }
}

/// The title a save gives the page: the request's title, else front-matter `title:`,
/// else the first level-1 heading when the page is new or this save changed that heading,
/// else the previous title, else the slug. So a title a person set (at creation, in the
/// editor's title field, by a rename) is never replaced by a heading nobody touched.
/// `before` is the page as it was, None for a new page.
pub(super) fn decide_title(
    requested: Option<String>,
    parsed: &Parsed,
    before: Option<&PageState>,
    slug: &str,
) -> String {
    let heading = parsed.h1.as_ref().filter(|h| match before {
        None => true,
        // The previous text is read only when its heading could decide.
        Some(b) => **h != b.title && previous_h1(b).as_ref() != Some(*h),
    });
    requested
        .or_else(|| parsed.front_title.clone())
        .or_else(|| heading.cloned())
        .or_else(|| before.map(|b| b.title.clone()))
        .map(|t| one_line(&t))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| slug.to_owned())
}

/// The first level-1 heading of the page as it was.
fn previous_h1(before: &PageState) -> Option<String> {
    match &before.parsed {
        Some(p) => p.h1.clone(),
        None => markdown::parse(&before.content).h1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pages::Actor;
    use crate::error::Code;
    use crate::time::Timestamp;

    fn row(slug: &str, content: &str, trashed: bool) -> Row {
        Row {
            id: 1,
            uid: format!("uid-{slug}"),
            slug: slug.to_owned(),
            title: slug.to_owned(),
            content: content.to_owned(),
            parent_id: None,
            parent_slug: None,
            parent_uid: None,
            revision: "r1".to_owned(),
            created_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
            updated_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
            updated_by: Actor { id: 7, name: "Ada".to_owned() },
            deleted_at: trashed.then(|| Timestamp::parse("2026-01-02T00:00:00Z").unwrap()),
            deleted_by: trashed.then_some(7),
            position: None,
        }
    }

    fn stored(rows: &[Row]) -> HashMap<String, Known> {
        rows.iter().map(|r| (r.slug.clone(), Known::Stored(r.clone(), Lists::default()))).collect()
    }

    fn creation(slug: &str, parent: Option<&str>) -> Intent {
        let content = "# A heading\n\nText #tag".to_owned();
        Intent::Create(Creation {
            slug: slug.to_owned(),
            title: slug.to_owned(),
            parsed: Arc::new(markdown::parse(&content)),
            content,
            parent: parent.map(str::to_owned),
        })
    }

    fn edit(slug: &str, content: Option<&str>, base: Option<&str>) -> Intent {
        let req = PageUpdate {
            content: content.map(str::to_owned),
            title: None,
            base_revision: base.map(str::to_owned),
            merge: false,
            message: None,
        };
        let sent = req.content.as_deref().map(|c| Arc::new(markdown::parse(c)));
        Intent::Edit(Edit { slug: slug.to_owned(), req, requested: None, sent, co_authors: Vec::new() })
    }

    fn refused(d: Decided) -> Code {
        match d {
            Decided::Answered(Answer::Now(answer)) => match *answer {
                Err(e) => e.code,
                Ok(page) => panic!("answered {} without a commit", page.slug),
            },
            Decided::Answered(_) => panic!("answered by a group's commit"),
            Decided::Commit(c) => panic!("committed {:?}", c.action),
        }
    }

    fn committed(d: Decided) -> Change {
        match d {
            Decided::Commit(c) => *c,
            Decided::Answered(_) => panic!("answered without a commit"),
        }
    }

    #[test]
    fn a_create_is_refused_when_its_slug_is_taken_even_in_the_trash() {
        let known = stored(&[row("a", "", false), row("b", "", true)]);
        assert_eq!(refused(creation("a", None).decide(&known, "ws")), Code::PageExists);
        assert_eq!(refused(creation("b", None).decide(&known, "ws")), Code::PageExists);
    }

    #[test]
    fn a_create_needs_a_live_parent_and_takes_its_id() {
        let known = stored(&[row("live", "", false), row("gone", "", true)]);
        assert_eq!(refused(creation("c", Some("missing")).decide(&known, "ws")), Code::ParentNotFound);
        assert_eq!(refused(creation("c", Some("gone")).decide(&known, "ws")), Code::ParentNotFound);
        let change = committed(creation("c", Some("live")).decide(&known, "ws"));
        assert_eq!(change.action, Action::Create);
        assert_eq!(change.state.parent.map(|p| p.uid), Some("uid-live".to_owned()));
        assert_eq!(change.summary, "Create c");
    }

    #[test]
    fn an_edit_needs_a_live_page_and_a_current_base() {
        let known = stored(&[row("a", "old", false), row("t", "old", true)]);
        assert_eq!(refused(edit("missing", Some("x"), None).decide(&known, "ws")), Code::PageNotFound);
        assert_eq!(refused(edit("t", Some("x"), None).decide(&known, "ws")), Code::PageNotFound);
        let Decided::Answered(Answer::Now(answer)) = edit("a", Some("x"), Some("r0")).decide(&known, "ws") else {
            panic!("a stale base is answered at once");
        };
        let e = answer.expect_err("a stale base is refused");
        assert_eq!(e.code, Code::StaleRevision);
        assert_eq!(e.extra.as_ref().and_then(|x| x["theirs"]["author"]["name"].as_str()), Some("Ada"));
        let change = committed(edit("a", Some("new"), Some(" r1 ")).decide(&known, "ws"));
        assert_eq!((change.action, change.state.content.as_str()), (Action::Update, "new"));
        assert_eq!(change.summary, "Update a");
    }

    #[test]
    fn an_edit_that_changes_nothing_makes_no_commit() {
        let known = stored(&[row("a", "same", false)]);
        match edit("a", Some("same"), None).decide(&known, "ws") {
            Decided::Answered(Answer::Now(answer)) => {
                let page = answer.expect("the page as it is");
                assert_eq!((page.slug.as_str(), page.workspace.as_str(), page.revision.as_str()), ("a", "ws", "r1"));
            }
            _ => panic!("no commit for an edit that changes nothing"),
        }
    }

    #[test]
    fn in_a_group_a_save_sees_what_the_earlier_ones_leave() {
        // An earlier create of the group: a later create of its slug is refused, an edit
        // of it is decided against its content, a create under it finds its parent.
        let mut known = stored(&[]);
        let first = committed(creation("a", None).decide(&known, "ws"));
        known.insert("a".to_owned(), after(&first, 0));
        assert_eq!(refused(creation("a", None).decide(&known, "ws")), Code::PageExists);
        let child = committed(creation("c", Some("a")).decide(&known, "ws"));
        assert_eq!(child.state.parent.map(|p| p.uid), Some(first.state.uid.clone()));
        let edited = committed(edit("a", Some("more"), None).decide(&known, "ws"));
        assert_eq!(edited.state.uid, first.state.uid);
        // Nothing to change: the page as the group's commit leaves it.
        assert!(matches!(
            edit("a", Some(&first.state.content), None).decide(&known, "ws"),
            Decided::Answered(Answer::Page(0))
        ));
        // No request can have seen a revision not answered yet.
        assert!(matches!(edit("a", Some("x"), Some("r1")).decide(&known, "ws"), Decided::Answered(Answer::Stale(0))));
        // Its rows will hold the tags and links of its content.
        let Known::Changed { state, .. } = &known["a"] else { panic!("changed by the group") };
        assert_eq!(state.indexed.as_ref().map(|l| l.tags.clone()), Some(vec!["tag".to_owned()]));
    }

    #[test]
    fn a_title_a_person_set_is_not_replaced_by_a_heading_nobody_touched() {
        let parse = |s: &str| markdown::parse(s);
        // The request's title first, then front matter, then a new page's heading.
        assert_eq!(decide_title(Some("Asked".into()), &parse("# H"), None, "s"), "Asked");
        assert_eq!(decide_title(None, &parse("---\ntitle: Front\n---\n# H"), None, "s"), "Front");
        assert_eq!(decide_title(None, &parse("# Heading\n"), None, "s"), "Heading");
        assert_eq!(decide_title(None, &parse("no heading"), None, "slug"), "slug");
        // An existing page renamed by hand keeps its title while its heading stays ...
        let mut before = PageState::of(&row("s", "# Heading\n\nold", false));
        before.title = "Renamed".into();
        assert_eq!(decide_title(None, &parse("# Heading\n\nnew"), Some(&before), "s"), "Renamed");
        // ... and takes the heading when the edit changes it.
        assert_eq!(decide_title(None, &parse("# Other\n\nnew"), Some(&before), "s"), "Other");
        // Titles are one line.
        assert_eq!(decide_title(Some("a\nb".into()), &parse(""), None, "s"), "a b");
    }
}
