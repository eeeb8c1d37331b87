//! Page operations that write: create, update (with optimistic concurrency and
//! three-way merge), move, rename (with link rewriting), trash and restore (a purge,
//! which rewrites the history, is in [`super::forget`]). Each
//! reads the current state under the workspace's write lock, decides, and commits
//! through [`Writer`].

use std::sync::Arc;

use super::decide::{Creation, Edit, Intent, decide_title};
use super::group;
use super::inputs::{NewPage, PageUpdate};
use super::origin::Origin;
use super::rows::{self, Row, State};
use super::save::{Action, Change, PageState, Parent, Writer, check_content};
use super::{MAX_TITLE_CHARS, Page};
use crate::core::Ctx;
use crate::core::users::User;
use crate::core::workspaces::Access;
use crate::error::{Code, Error, Result};
use crate::git;
use crate::ids::Slug;
use crate::markdown;
use crate::time::Timestamp;

/// Runs `op` under the workspace's write lock, in the open batch, and answers
/// once that is durable.
macro_rules! locked {
    ($ctx:expr, $access:expr, |$w:ident| $body:expr) => {{
        let mut $w = Writer::begin($ctx, $access).await?;
        let result: Result<_> = async { $body }.await;
        // The answer stands once the batch holding it is durable.
        let durable = $w.finish().await;
        $ctx.test_hooks.after_write().await;
        durable.and(result)
    }};
}

fn clean_title(title: &str) -> Result<Option<String>> {
    if title.contains('\0') {
        return Err(Error::invalid_text());
    }
    let t = title.split(['\r', '\n']).map(str::trim).collect::<Vec<_>>().join(" ").trim().to_owned();
    if t.chars().count() > MAX_TITLE_CHARS {
        return Err(Error::title_too_long(MAX_TITLE_CHARS));
    }
    Ok((!t.is_empty()).then_some(t))
}

pub(crate) async fn create(ctx: &Ctx, access: &Access, user: &User, req: NewPage) -> Result<Page> {
    let content = req.content.unwrap_or_default();
    check_content(&content)?;
    let requested = req.title.as_deref().map(clean_title).transpose()?.flatten();
    let parsed = Arc::new(markdown::parse(&content));
    let (stem, derived) = match (&req.slug, &requested) {
        (Some(s), _) => (Slug::parse(s)?, false),
        (None, Some(t)) => (Slug::parse(&Slug::derive(t))?, true),
        (None, None) => return Err(Error::title_or_slug_required()),
    };
    // A derived slug is the first free one when the create is decided; another create
    // may take it in between, and then the next free one is tried.
    let mut tries = 0;
    loop {
        let slug = if derived { first_free(ctx, access, &stem).await? } else { stem.clone() }.into_string();
        let title = decide_title(requested.clone(), &parsed, None, &slug);
        let creation =
            Creation { slug, title, content: content.clone(), parsed: parsed.clone(), parent: req.parent.clone() };
        match save(ctx, access, user, Intent::Create(creation)).await {
            Err(e) if derived && e.code == Code::PageExists && tries < 8 => tries += 1,
            answer => return answer,
        }
    }
}

/// The address a page titled `title` would get now: its derived slug, or the first free
/// `-2`, `-3`… when a page (live or in the trash) or an old slug has it.
pub(crate) async fn slug_for_title(ctx: &Ctx, access: &Access, title: &str) -> Result<Slug> {
    let title = clean_title(title)?.ok_or_else(Error::title_or_slug_required)?;
    first_free(ctx, access, &Slug::parse(&Slug::derive(&title))?).await
}

/// Whether `slug` is free for a new page: no page has it, live or in the trash. (An old
/// slug is free for a page created with it explicitly, which ends the alias.)
pub(crate) async fn slug_available(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<bool> {
    let mut conn = ctx.db.pool.acquire().await?;
    Ok(rows::find(&mut conn, access.workspace_id(), slug, State::Any).await?.is_none())
}

async fn first_free(ctx: &Ctx, access: &Access, stem: &Slug) -> Result<Slug> {
    let mut conn = ctx.db.pool.acquire().await?;
    let taken = rows::aliases::numbered_taken(&mut conn, access.workspace_id(), stem).await?;
    Ok(stem.first_free(|s| taken.contains(s)))
}

/// Queues a save for its workspace's next group of saves and answers once that group is
/// durable — except a replayed save (`cairn import`), whose origin belongs to this task,
/// so it runs here, under the lock.
async fn save(ctx: &Ctx, access: &Access, user: &User, intent: Intent) -> Result<Page> {
    if Origin::current().is_some() {
        return locked!(ctx, access, |w| intent.save_in(&mut w, user).await);
    }
    group::submit(ctx, access, user, intent).await
}

async fn parent_row(w: &mut Writer, ws: i64, slug: &str) -> Result<Row> {
    rows::find(w.conn(), ws, slug, State::Live).await?.ok_or_else(|| Error::parent_not_found(slug))
}

/// Updates a page. A stale `base_revision` is 409 with the current revision; with
/// `merge` the edit is merged three-way against its base, and only overlapping changes
/// are 409, carrying the merged text with conflict markers.
pub(crate) async fn update(ctx: &Ctx, access: &Access, user: &User, slug: &Slug, req: PageUpdate) -> Result<Page> {
    update_together(ctx, access, user, slug, req, Vec::new()).await
}

/// [`update`] with a text several people wrote together (a co-editing session's save):
/// its commit names the others (`Name <email>`) in `Co-authored-by:` trailers.
pub(crate) async fn update_together(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    slug: &Slug,
    req: PageUpdate,
    co_authors: Vec<String>,
) -> Result<Page> {
    if let Some(c) = &req.content {
        check_content(c)?;
    }
    edit(ctx, access, user, slug, req, None, co_authors).await
}

/// Adds `text` at the end of a page, after a blank line (MCP's `append_to_page`). The
/// page is read and written under the workspace's lock, so an append never overwrites a
/// save that landed between a read and a write.
pub(crate) async fn append(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    slug: &Slug,
    text: &str,
    message: Option<String>,
) -> Result<Page> {
    check_content(text)?;
    let req = PageUpdate { content: None, title: None, base_revision: None, merge: false, message };
    edit(ctx, access, user, slug, req, Some(text), Vec::new()).await
}

/// `page` with `text` after it, a blank line between, ending in a newline.
fn appended(page: &str, text: &str) -> String {
    let head = page.trim_end_matches(['\n', '\r']);
    let tail = text.trim_matches(['\n', '\r']);
    match (head.is_empty(), tail.is_empty()) {
        (_, true) => page.to_owned(),
        (true, false) => format!("{tail}\n"),
        (false, false) => format!("{head}\n\n{tail}\n"),
    }
}

/// An update, or with `append` an append to the content read under the lock. Plain
/// updates queue for their workspace's group of saves; an append or a merge, which read
/// more than the page's row, take the lock on their own.
async fn edit(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    slug: &str,
    req: PageUpdate,
    append: Option<&str>,
    co_authors: Vec<String>,
) -> Result<Page> {
    let requested = req.title.as_deref().map(clean_title).transpose()?.flatten();
    // Parsed before the lock is taken, where other saves need not wait for it; parsed
    // again under the lock only if the content saved is not the one sent (an append, a
    // merge).
    let sent = match (&req.content, append) {
        (Some(c), None) => Some(Arc::new(markdown::parse(c))),
        _ => None,
    };
    let e = Edit { slug: slug.to_owned(), req, requested, sent, co_authors };
    match edit_once(ctx, access, user, e.clone(), append).await {
        // A base named by an id that a history rewrite replaced is that commit all the
        // same. Looked up only when the base is not the page's revision, which is rare.
        Err(stale) if stale.code == Code::StaleRevision => {
            let Some(base) = e.base() else { return Err(stale) };
            let now = rows::revision_now(&mut *ctx.db.pool.acquire().await?, access.workspace_id(), base).await?;
            if now == base {
                return Err(stale);
            }
            let mut e = e;
            e.req.base_revision = Some(now);
            edit_once(ctx, access, user, e, append).await
        }
        // Decided in the group of saves, which reads pages by slug only: an old slug or a
        // trashed page is told apart here, off the common path.
        Err(missing) if missing.code == Code::PageNotFound && missing.extra.is_none() => {
            let mut conn = ctx.db.pool.acquire().await?;
            Err(rows::aliases::missing(&mut conn, access.workspace_id(), slug).await)
        }
        answer => answer,
    }
}

async fn edit_once(ctx: &Ctx, access: &Access, user: &User, e: Edit, append: Option<&str>) -> Result<Page> {
    if append.is_some() || e.req.merge {
        return locked!(ctx, access, |w| edit_in(&mut w, user, &e, append).await);
    }
    save(ctx, access, user, Intent::Edit(e)).await
}

/// An edit under the lock `w` holds. An append or a merge first works out the content it
/// saves from the page as it stands; then the edit is decided as every save is.
async fn edit_in(w: &mut Writer, user: &User, e: &Edit, append: Option<&str>) -> Result<Page> {
    let ws = w.access.workspace_id();
    let row = rows::live(w.conn(), ws, &e.slug).await?;
    let content = match append {
        Some(text) => {
            let content = appended(&row.content, text);
            check_content(&content)?;
            Some(content)
        }
        None => merged(w, &row, e).await?,
    };
    // The content worked out here replaces the request's; it stands on the page as read.
    let prepared = content.map(|content| Edit {
        req: PageUpdate { content: Some(content), base_revision: None, ..e.req.clone() },
        sent: None,
        ..e.clone()
    });
    Intent::Edit(prepared.unwrap_or_else(|| e.clone())).save_in(w, user).await
}

/// With `merge`, an edit based on an older revision than the page's: its content merged
/// three-way with the saves it did not see (409 `merge_conflict` where they overlap).
/// None when there is nothing to merge: the edit then stands or falls as sent.
async fn merged(w: &mut Writer, row: &Row, e: &Edit) -> Result<Option<String>> {
    let (Some(base), Some(content), true) = (e.base(), &e.req.content, e.req.merge) else { return Ok(None) };
    if base == row.revision {
        return Ok(None);
    }
    // A base that is not one of the page's revisions is stale, as decided for every save.
    let Some((_, base_content)) = revision_of(w, row.id, base).await? else { return Ok(None) };
    // From the saver's side, as git shows a merge to the one merging: "ours" is the edit
    // being saved, "theirs" the saves it did not see.
    match diffy::merge(&base_content, content, &row.content) {
        Ok(merged) => {
            check_content(&merged)?;
            Ok(Some(merged))
        }
        Err(conflicted) => {
            let labelled = labelled_conflict(&conflicted, &row.updated_by.name, &row.updated_at);
            let theirs = super::theirs(&row.revision, &row.updated_by, &row.updated_at);
            Err(Error::merge_conflict(&row.revision, &labelled).with_extra("theirs", theirs))
        }
    }
}

/// A merge's conflict markers named for the people behind each side: the edit being
/// saved is "Your edit", the newer save it meets is its author's with the time (UTC), the
/// common base "Before both edits" — never git's "ours" and "theirs".
fn labelled_conflict(merged: &str, author: &str, at: &Timestamp) -> String {
    let when = at.as_str().get(..16).map(|t| t.replacen('T', " ", 1)).unwrap_or_default();
    let author = author.replace(['\r', '\n'], " ");
    merged
        .split_inclusive('\n')
        .map(|line| match line.trim_end_matches(['\r', '\n']) {
            "<<<<<<< ours" => "<<<<<<< Your edit\n".to_owned(),
            "||||||| original" => "||||||| Before both edits\n".to_owned(),
            ">>>>>>> theirs" => format!(">>>>>>> {author}, {when} UTC\n"),
            _ => line.to_owned(),
        })
        .collect()
}

/// Revision `sha` of page `page_id` with its content, if it is one of its revisions
/// (read on the writer's own connection: the lock holds it).
async fn revision_of(w: &mut Writer, page_id: i64, sha: &str) -> Result<Option<(rows::RevRow, String)>> {
    let Some(r) = rows::revision(w.conn(), page_id, sha).await? else { return Ok(None) };
    let content = super::history::read_blob(&w.ctx, &w.access, &r.sha, &r.path, r.blob.as_deref()).await?;
    Ok(content.map(|c| (r, c)))
}

/// Moves a page (and its subtree) under `parent`, or to the top level with None.
pub(crate) async fn move_page(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    slug: &Slug,
    parent: Option<&Slug>,
) -> Result<Page> {
    let ws = access.workspace_id();
    locked!(ctx, access, |w| {
        let (row, lists) = rows::live_listed(w.conn(), ws, slug).await?;
        let new_parent = parent_for(&mut w, ws, &row, parent).await?;
        if new_parent.as_ref().map(|p| p.id) == row.parent_id {
            return Ok(row.into_page(lists.tags, lists.links, access.slug()));
        }
        let summary = match &new_parent {
            Some(p) => format!("Move {} under {}", row.title, p.title),
            None => format!("Move {} to the top level", row.title),
        };
        let parent = new_parent.map(|p| Parent { uid: p.uid, slug: p.slug });
        let state = PageState { parent, position: None, ..PageState::listed(&row, lists) };
        w.commit_one(
            user,
            Change {
                co_authors: Vec::new(),
                action: Action::Move,
                summary,
                before_path: None,
                state,
                previous_slug: None,
            },
        )
        .await
    })
}

/// The row of the page `row` is to go under (None: the top level); `move_cycle` when that
/// is the page itself or one of its descendants.
async fn parent_for(w: &mut Writer, ws: i64, row: &Row, parent: Option<&Slug>) -> Result<Option<Row>> {
    let Some(p) = parent else { return Ok(None) };
    let p = parent_row(w, ws, p).await?;
    // The new parent, or one of its ancestors, being the page means a cycle.
    if p.id == row.id || rows::ancestors(w.conn(), p.id).await?.iter().any(|(id, _)| *id == row.id) {
        return Err(Error::move_cycle());
    }
    Ok(Some(p))
}

/// Puts a page right after its sibling `after` (None: first among its siblings), and
/// keeps that order: every sibling whose place changes gets it as its `position`, one
/// commit each (a page's first hand ordering numbers all its siblings).
pub(crate) async fn reorder(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    slug: &Slug,
    after: Option<&Slug>,
) -> Result<Page> {
    let ws = access.workspace_id();
    locked!(ctx, access, |w| {
        let (row, lists) = rows::live_listed(w.conn(), ws, slug).await?;
        let mut siblings = rows::siblings(w.conn(), ws, row.parent_id).await?;
        let at = siblings.iter().position(|(r, _)| r.id == row.id).ok_or_else(|| Error::page_not_found(slug))?;
        let moved = siblings.remove(at);
        let to = match after {
            None => 0,
            Some(a) => {
                1 + siblings.iter().position(|(r, _)| r.slug == a.as_str()).ok_or_else(|| Error::not_a_sibling(a))?
            }
        };
        siblings.insert(to, moved);
        let changes: Vec<Change> = siblings
            .into_iter()
            .zip(0_i64..)
            .filter(|((r, _), place)| r.position != Some(*place))
            .map(|((r, lists), place)| Change {
                co_authors: Vec::new(),
                action: Action::Order,
                summary: format!("Order {} as number {} among its siblings", r.title, place + 1),
                before_path: None,
                state: PageState { position: Some(place), ..PageState::listed(&r, lists) },
                previous_slug: None,
            })
            .collect();
        let pages = if changes.is_empty() { vec![] } else { w.commit(user, changes).await? };
        // The page itself may keep its number while its siblings' change around it.
        Ok(match pages.into_iter().find(|p| p.slug == slug.as_str()) {
            Some(page) => page,
            None => row.into_page(lists.tags, lists.links, access.slug()),
        })
    })
}

/// Renames a page; its history follows it, and `[[old]]` links in other live pages are
/// rewritten (one commit each, by the renaming user).
pub(crate) async fn rename(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    slug: &Slug,
    new_slug: &Slug,
    title: Option<&str>,
) -> Result<Page> {
    let requested = title.map(clean_title).transpose()?.flatten();
    let ws = access.workspace_id();
    locked!(ctx, access, |w| {
        let (row, lists) = rows::live_listed(w.conn(), ws, slug).await?;
        if new_slug == slug && requested.as_ref().is_none_or(|t| *t == row.title) {
            return Ok(row.into_page(lists.tags, lists.links, access.slug()));
        }
        if new_slug != slug && rows::find(w.conn(), ws, new_slug, State::Any).await?.is_some() {
            return Err(Error::page_exists(new_slug));
        }
        let title = requested.clone().unwrap_or_else(|| row.title.clone());
        // A first heading that read the old title reads the new one, in the same commit.
        let retitled = (title != row.title).then(|| markdown::replace_h1(&row.content, &row.title, &title)).flatten();
        let mut state = PageState { slug: new_slug.to_string(), title, ..PageState::listed(&row, lists) };
        if let Some(content) = retitled {
            check_content(&content)?;
            state.parsed = Some(Arc::new(markdown::parse(&content)));
            state.content = content;
        }
        let mut changes = vec![Change {
            co_authors: Vec::new(),
            action: Action::Rename,
            summary: format!("Rename {slug} → {new_slug}"),
            before_path: Some(git::live_path(slug)),
            state,
            previous_slug: Some(slug.to_string()),
        }];
        if new_slug != slug {
            for other in rows::backlinks(w.conn(), ws, row.id, slug).await? {
                let (o, o_lists) = rows::live_listed(w.conn(), ws, &other.slug).await?;
                if let Some(content) = markdown::rewrite_links(&o.content, slug, new_slug) {
                    check_content(&content)?;
                    changes.push(Change {
                        co_authors: Vec::new(),
                        action: Action::Relink,
                        summary: format!("Update links in {}: {slug} → {new_slug}", o.title),
                        before_path: None,
                        state: PageState { content, ..PageState::listed(&o, o_lists) },
                        previous_slug: None,
                    });
                }
            }
        }
        // The renamed page is the first change; link rewrites in other pages follow.
        let mut pages = w.commit(user, changes).await?;
        Ok(pages.swap_remove(0))
    })
}

/// What a replayed source commit makes of one page (`cairn import` of a git history):
/// its slug, title, content and parent as the commit leaves them.
pub(crate) struct Replayed {
    /// The page's slug now: the old one when the commit renamed its file.
    pub slug: Slug,
    /// The page is in the trash (its file comes back).
    pub from_trash: bool,
    pub new_slug: Slug,
    /// The title asked for; None: the content's, as a save decides it.
    pub title: Option<String>,
    pub content: String,
    pub parent: Option<Slug>,
    /// The source commit changed the page's file: it gets a revision even when nothing
    /// of the page changes (the commit only spelled its links otherwise, and they lead
    /// where they led), so the page lists every commit of its file.
    pub recorded: bool,
}

/// Gives a page all that a replayed source commit changed of it — slug, title, content,
/// parent, a return from the trash — in one revision, so that its history has one
/// revision for each commit that changed its file, as `git log --follow` lists them.
/// Links to an old slug in other pages are left as the source has them (the old slug
/// stays an alias of the page). Answers the page, and whether a revision was written.
pub(crate) async fn replay(ctx: &Ctx, access: &Access, user: &User, r: Replayed) -> Result<(Page, bool)> {
    check_content(&r.content)?;
    let requested = r.title.as_deref().map(clean_title).transpose()?.flatten();
    let ws = access.workspace_id();
    locked!(ctx, access, |w| {
        let (row, lists) = if r.from_trash {
            rows::find_listed(w.conn(), ws, &r.slug, State::Trashed)
                .await?
                .ok_or_else(|| Error::trash_entry_not_found(&r.slug))?
        } else {
            rows::live_listed(w.conn(), ws, &r.slug).await?
        };
        let renamed = r.new_slug != r.slug;
        if renamed && rows::find(w.conn(), ws, &r.new_slug, State::Any).await?.is_some() {
            return Err(Error::page_exists(&r.new_slug));
        }
        let parent =
            parent_for(&mut w, ws, &row, r.parent.as_ref()).await?.map(|p| Parent { uid: p.uid, slug: p.slug });
        let before = PageState::listed(&row, lists);
        let parsed = Arc::new(markdown::parse(&r.content));
        let title = decide_title(requested, &parsed, Some(&before), r.new_slug.as_str());
        let moved = parent.as_ref().map(|p| &p.uid) != before.parent.as_ref().map(|p| &p.uid);
        let edited = r.content != before.content || title != before.title;
        // A recorded commit that changes nothing writes its revision once, even when an
        // import stopped in the middle of it runs again.
        let changed = renamed || moved || edited || r.from_trash;
        if !changed && (!r.recorded || replays_this(&w, &row.revision).await?) {
            let lists = before.indexed.unwrap_or_default();
            return Ok((row.into_page(lists.tags, lists.links, access.slug()), false));
        }
        // The action that writes every column the change touches: an update's rows keep
        // their slug and parent (`rows::RowWrite::Content`).
        let (action, summary) = if r.from_trash {
            (Action::Untrash, format!("Restore {} from the trash", row.title))
        } else if renamed {
            (Action::Rename, format!("Rename {} → {}", r.slug, r.new_slug))
        } else if moved {
            (Action::Move, format!("Move {}", row.title))
        } else {
            (Action::Update, format!("Update {title}"))
        };
        let before_path = Some(if r.from_trash { git::trash_path(&r.slug) } else { git::live_path(&r.slug) });
        let position = if moved { None } else { before.position };
        let state = PageState {
            slug: r.new_slug.to_string(),
            title,
            content: r.content.clone(),
            parent,
            position,
            trashed: false,
            parsed: Some(parsed),
            ..before
        };
        let previous_slug = renamed.then(|| r.slug.to_string());
        let page = w
            .commit_one(user, Change { co_authors: Vec::new(), action, summary, before_path, state, previous_slug })
            .await?;
        Ok((page, true))
    })
}

/// Whether the page's revision `sha` replays the source commit this task replays: an
/// import stopped in the middle of that commit, and runs again.
async fn replays_this(w: &Writer, sha: &str) -> Result<bool> {
    let Some(origin) = Origin::current() else { return Ok(false) };
    let Ok(id) = git2::Oid::from_str(sha) else { return Ok(false) };
    let key = Origin::TRAILER.to_lowercase();
    let repo = w.ctx.repo(w.access.slug())?;
    let named = repo.with(move |r| Ok(git::trailers(r.find_commit(id)?.message().unwrap_or_default()).remove(&key)));
    Ok(named.await?.is_some_and(|c| c == origin.commit))
}

/// Moves a page to the trash; with live children only when `recursive` (then the whole
/// subtree goes, one commit per page).
pub(crate) async fn delete(ctx: &Ctx, access: &Access, user: &User, slug: &Slug, recursive: bool) -> Result<()> {
    let ws = access.workspace_id();
    locked!(ctx, access, |w| {
        let (row, lists) = rows::live_listed(w.conn(), ws, slug).await?;
        let descendants = rows::descendants(w.conn(), ws, row.id, rows::Among::Live).await?;
        if !descendants.is_empty() && !recursive {
            return Err(Error::page_has_children(slug));
        }
        let mut subtree = vec![(row, lists)];
        subtree.extend(descendants);
        // Deepest first, so every commit leaves a consistent tree.
        let changes = subtree
            .into_iter()
            .rev()
            .map(|(r, lists)| Change {
                co_authors: Vec::new(),
                action: Action::Trash,
                summary: format!("Trash {}", r.title),
                before_path: Some(git::live_path(&r.slug)),
                state: PageState { trashed: true, ..PageState::listed(&r, lists) },
                previous_slug: None,
            })
            .collect();
        w.commit(user, changes).await?;
        Ok(())
    })
}

/// Restores a trashed page: under its parent if that is live, else at the top level; and
/// with it, under it, the subpages the same delete trashed (one commit each, parents
/// first). A subpage trashed on its own earlier stays in the trash.
pub(crate) async fn restore_from_trash(ctx: &Ctx, access: &Access, user: &User, slug: &Slug) -> Result<Page> {
    let ws = access.workspace_id();
    locked!(ctx, access, |w| {
        let (row, lists) = rows::find_listed(w.conn(), ws, slug, State::Trashed)
            .await?
            .ok_or_else(|| Error::trash_entry_not_found(slug))?;
        let parent_live = match row.parent_id {
            Some(pid) => rows::is_live(w.conn(), pid).await?,
            None => false,
        };
        let parent = if parent_live { Parent::of(&row) } else { None };
        let deleted_at = row.deleted_at.clone().unwrap_or_default();
        let with =
            rows::descendants(w.conn(), ws, row.id, rows::Among::TrashedWith(&deleted_at, row.deleted_by)).await?;
        let untrash = |r: &Row, lists, parent| Change {
            co_authors: Vec::new(),
            action: Action::Untrash,
            summary: format!("Restore {} from the trash", r.title),
            before_path: Some(git::trash_path(&r.slug)),
            state: PageState { trashed: false, parent, ..PageState::listed(r, lists) },
            previous_slug: None,
        };
        let mut changes = vec![untrash(&row, lists, parent)];
        changes.extend(with.into_iter().map(|(r, lists)| {
            let parent = Parent::of(&r);
            untrash(&r, lists, parent)
        }));
        let mut pages = w.commit(user, changes).await?;
        Ok(pages.swap_remove(0))
    })
}

/// Restores the content of an earlier revision as a new revision, with the title that
/// revision had, or with `keep_title` the page's current one.
pub(crate) async fn restore_revision(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    slug: &Slug,
    sha: &str,
    keep_title: bool,
) -> Result<Page> {
    let ws = access.workspace_id();
    locked!(ctx, access, |w| {
        let (row, lists) = rows::live_listed(w.conn(), ws, slug).await?;
        let (rev, content) = revision_of(&mut w, row.id, sha).await?.ok_or_else(|| Error::revision_not_found(sha))?;
        let parsed = Arc::new(markdown::parse(&content));
        let wanted = if keep_title { row.title.clone() } else { rev.title };
        let title = decide_title(Some(wanted), &parsed, None, &row.slug);
        let short: String = sha.chars().take(7).collect();
        let change = Change {
            co_authors: Vec::new(),
            action: Action::Restore,
            summary: format!("Restore {title} to {short}"),
            before_path: None,
            state: PageState { title, content, parsed: Some(parsed), ..PageState::listed(&row, lists) },
            previous_slug: None,
        };
        w.commit_one(user, change).await
    })
}

#[cfg(test)]
mod tests {
    use super::appended;

    #[test]
    fn conflict_markers_name_the_sides() {
        let conflicted = diffy::merge("a\n", "mine\n", "theirs\n").unwrap_err();
        let at = crate::time::Timestamp::parse("2026-12-07T10:02:33Z").unwrap();
        let labelled = super::labelled_conflict(&conflicted, "Alice", &at);
        assert_eq!(
            labelled,
            "<<<<<<< Your edit\nmine\n||||||| Before both edits\na\n=======\ntheirs\n>>>>>>> Alice, 2026-12-07 10:02 UTC\n"
        );
    }

    #[test]
    fn appends_after_a_blank_line() {
        assert_eq!(appended("# A\n\nOne.\n", "Two."), "# A\n\nOne.\n\nTwo.\n");
        assert_eq!(appended("# A\n\nOne.", "\nTwo.\n\n"), "# A\n\nOne.\n\nTwo.\n");
        assert_eq!(appended("", "Two."), "Two.\n");
        assert_eq!(appended("One.\n", "\n"), "One.\n");
    }

    proptest::proptest! {
        /// The three-way merge a stale save goes through: a side that changed nothing
        /// yields the other side exactly, two equal edits yield that edit, and no input
        /// makes it (or the diff history shows) panic.
        #[test]
        fn merges_keep_what_only_one_side_changed(
            base in "(\\PC{0,12}\n){0,12}",
            edit in "(\\PC{0,12}\n){0,12}",
            other in "(\\PC{0,12}\n){0,12}",
        ) {
            proptest::prop_assert_eq!(diffy::merge(&base, &edit, &base), Ok(edit.clone()));
            proptest::prop_assert_eq!(diffy::merge(&base, &base, &other), Ok(other.clone()));
            proptest::prop_assert_eq!(diffy::merge(&base, &edit, &edit), Ok(edit.clone()));
            let _ = diffy::merge(&base, &edit, &other);
            let _ = similar::TextDiff::from_lines(&base, &other).unified_diff().to_string();
        }
    }
}
