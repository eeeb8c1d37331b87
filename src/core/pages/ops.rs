//! Page operations that write: create, update (with optimistic concurrency and
//! three-way merge), move, rename (with link rewriting), trash, restore and purge. Each
//! reads the current state under the workspace's write lock, decides, and commits
//! through [`Writer`].

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::json;

use super::read::{Row, State, find_row, live_row, page_from_row};
use super::save::{Action, Change, PageState, Parent, Writer, check_content, new_uid};
use super::{MAX_TITLE_CHARS, Page};
use crate::core::Ctx;
use crate::core::accounts::User;
use crate::core::slug;
use crate::core::workspaces::Access;
use crate::error::{Error, Result};
use crate::git;
use crate::markdown::{self, Parsed};

/// Runs `op` under the workspace's write lock and always releases it.
macro_rules! locked {
    ($ctx:expr, $access:expr, |$w:ident| $body:expr) => {{
        let mut $w = Writer::begin($ctx, $access).await?;
        let result: Result<_> = async { $body }.await;
        $w.release().await;
        $ctx.test_hooks.after_write().await;
        result
    }};
}

fn clean_title(title: &str) -> Result<Option<String>> {
    let t = title.split(['\r', '\n']).map(str::trim).collect::<Vec<_>>().join(" ").trim().to_owned();
    if t.chars().count() > MAX_TITLE_CHARS {
        return Err(Error::bad_request("title_too_long", format!("a title has at most {MAX_TITLE_CHARS} characters")));
    }
    Ok((!t.is_empty()).then_some(t))
}

/// CONTRACT §5: the request's title, else front matter, else the first level-1 heading,
/// else the previous title, else the slug.
fn decide_title(requested: Option<String>, parsed: &Parsed, previous: Option<&str>, slug: &str) -> String {
    requested
        .or_else(|| parsed.front_title.clone())
        .or_else(|| parsed.h1.clone())
        .or_else(|| previous.map(str::to_owned))
        .map(|t| super::save::one_line(&t))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| slug.to_owned())
}

fn state_of(row: &Row) -> PageState {
    PageState {
        uid: row.uid.clone(),
        slug: row.slug.clone(),
        title: row.title.clone(),
        content: row.content.clone(),
        parent: parent_of(row),
        trashed: row.deleted_at.is_some(),
        parsed: None,
    }
}

fn parent_of(row: &Row) -> Option<Parent> {
    Some(Parent { uid: row.parent_uid.clone()?, slug: row.parent_slug.clone()? })
}

/// The one page a single change committed.
fn only(mut pages: Vec<Page>) -> Result<Page> {
    pages.pop().ok_or_else(|| Error::internal(anyhow::anyhow!("a commit answered no page")))
}

pub struct NewPage {
    pub title: Option<String>,
    pub slug: Option<String>,
    pub content: Option<String>,
    pub parent: Option<String>,
}

pub async fn create(ctx: &Ctx, access: &Access, user: &User, req: NewPage) -> Result<Page> {
    let content = req.content.unwrap_or_default();
    check_content(&content)?;
    let requested = req.title.as_deref().map(clean_title).transpose()?.flatten();
    let slug = match (&req.slug, &requested) {
        (Some(s), _) => s.clone(),
        (None, Some(t)) => slug::derive(t),
        (None, None) => {
            return Err(Error::bad_request("title_or_slug_required", "give a title or a slug"));
        }
    };
    slug::validate(&slug)?;
    let parsed = Arc::new(markdown::parse(&content));
    let title = decide_title(requested, &parsed, None, &slug);
    let ws = access.workspace_id;
    locked!(ctx, access, |w| {
        if find_row(w.conn(), ws, &slug, State::Any).await?.is_some() {
            return Err(Error::conflict("page_exists", format!("a page '{slug}' exists (perhaps in the trash)")));
        }
        let parent = match &req.parent {
            Some(p) => {
                let row = parent_row(&mut w, ws, p).await?;
                Some(Parent { uid: row.uid, slug: row.slug })
            }
            None => None,
        };
        let summary = format!("Create {title}");
        let state = PageState {
            uid: new_uid(),
            slug: slug.clone(),
            title,
            content,
            parent,
            trashed: false,
            parsed: Some(parsed.clone()),
        };
        only(
            w.commit(
                user,
                vec![Change { action: Action::Create, summary, before_path: None, state, previous_slug: None }],
            )
            .await?,
        )
    })
}

async fn parent_row(w: &mut Writer, ws: i64, slug: &str) -> Result<Row> {
    find_row(w.conn(), ws, slug, State::Live)
        .await?
        .ok_or_else(|| Error::bad_request("parent_not_found", format!("no live page '{slug}' to be the parent")))
}

pub struct PageUpdate {
    pub content: Option<String>,
    pub title: Option<String>,
    pub base_revision: Option<String>,
    pub merge: bool,
    pub message: Option<String>,
}

fn stale(current: &str) -> Error {
    Error::conflict("stale_revision", "the page changed since base_revision; reload it or send merge: true")
        .with_extra("current_revision", json!(current))
}

/// Updates a page. A stale `base_revision` is 409 with the current revision; with
/// `merge` the edit is merged three-way against its base, and only overlapping changes
/// are 409, carrying the merged text with conflict markers.
pub async fn update(ctx: &Ctx, access: &Access, user: &User, slug: &str, req: PageUpdate) -> Result<Page> {
    if let Some(c) = &req.content {
        check_content(c)?;
    }
    let requested = req.title.as_deref().map(clean_title).transpose()?.flatten();
    let ws = access.workspace_id;
    locked!(ctx, access, |w| {
        let row = live_row(w.conn(), ws, slug).await?;
        let mut content = req.content.clone().unwrap_or_else(|| row.content.clone());
        if let Some(base) = req.base_revision.as_deref().map(str::trim)
            && base != row.revision
        {
            if !req.merge || req.content.is_none() {
                return Err(stale(&row.revision));
            }
            let base_content = revision_content(&mut w, row.id, base).await?.ok_or_else(|| stale(&row.revision))?;
            match diffy::merge(&base_content, &row.content, &content) {
                Ok(merged) => content = merged,
                Err(conflicted) => {
                    return Err(Error::conflict(
                        "merge_conflict",
                        "the edit overlaps a newer change; resolve the conflict markers and save against current_revision",
                    )
                    .with_extra("current_revision", json!(row.revision))
                    .with_extra("merged", json!(conflicted)));
                }
            }
            check_content(&content)?;
        }
        let parsed = Arc::new(markdown::parse(&content));
        let title = decide_title(requested.clone(), &parsed, Some(&row.title), &row.slug);
        if content == row.content && title == row.title {
            // Nothing to save: no empty commit.
            return page_from_row(w.conn(), access, row).await;
        }
        let summary = match req.message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
            Some(m) => m.to_owned(),
            None => format!("Update {title}"),
        };
        let state = PageState { title, content, parsed: Some(parsed), ..state_of(&row) };
        only(
            w.commit(
                user,
                vec![Change { action: Action::Update, summary, before_path: None, state, previous_slug: None }],
            )
            .await?,
        )
    })
}

/// The content of revision `sha` of page `page_id`, if it is one of its revisions (read
/// on the writer's own connection: the lock holds it).
async fn revision_content(w: &mut Writer, page_id: i64, sha: &str) -> Result<Option<String>> {
    let row: Option<(String, Option<String>)> =
        sqlx::query_as("SELECT path, blob FROM revisions WHERE page_id = $1 AND sha = $2")
            .bind(page_id)
            .bind(sha)
            .fetch_optional(w.conn())
            .await?;
    let Some((path, blob)) = row else { return Ok(None) };
    super::history::read_blob(&w.ctx, &w.access, sha, &path, blob.as_deref()).await
}

/// Moves a page (and its subtree) under `parent`, or to the top level with None.
pub async fn move_page(ctx: &Ctx, access: &Access, user: &User, slug: &str, parent: Option<&str>) -> Result<Page> {
    let ws = access.workspace_id;
    locked!(ctx, access, |w| {
        let row = live_row(w.conn(), ws, slug).await?;
        let new_parent = match parent {
            Some(p) => {
                let p = parent_row(&mut w, ws, p).await?;
                // Walk up from the new parent: meeting the page means a cycle.
                let mut cursor = Some(p.id);
                for _ in 0..4096 {
                    let Some(id) = cursor else { break };
                    if id == row.id {
                        return Err(Error::bad_request("move_cycle", "a page cannot move into its own subtree"));
                    }
                    cursor = sqlx::query_scalar("SELECT parent_id FROM pages WHERE id = $1")
                        .bind(id)
                        .fetch_optional(w.conn())
                        .await?
                        .flatten();
                }
                Some(p)
            }
            None => None,
        };
        if new_parent.as_ref().map(|p| p.id) == row.parent_id {
            return page_from_row(w.conn(), access, row).await;
        }
        let summary = match &new_parent {
            Some(p) => format!("Move {} under {}", row.title, p.title),
            None => format!("Move {} to the top level", row.title),
        };
        let state = PageState { parent: new_parent.map(|p| Parent { uid: p.uid, slug: p.slug }), ..state_of(&row) };
        only(
            w.commit(
                user,
                vec![Change { action: Action::Move, summary, before_path: None, state, previous_slug: None }],
            )
            .await?,
        )
    })
}

/// Renames a page; its history follows it, and `[[old]]` links in other live pages are
/// rewritten (one commit each, by the renaming user).
pub async fn rename(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    slug: &str,
    new_slug: &str,
    title: Option<&str>,
) -> Result<Page> {
    slug::validate(new_slug)?;
    let requested = title.map(clean_title).transpose()?.flatten();
    let ws = access.workspace_id;
    locked!(ctx, access, |w| {
        let row = live_row(w.conn(), ws, slug).await?;
        if new_slug == slug && requested.as_ref().is_none_or(|t| *t == row.title) {
            return page_from_row(w.conn(), access, row).await;
        }
        if new_slug != slug && find_row(w.conn(), ws, new_slug, State::Any).await?.is_some() {
            return Err(Error::conflict("page_exists", format!("a page '{new_slug}' exists (perhaps in the trash)")));
        }
        let title = requested.clone().unwrap_or_else(|| row.title.clone());
        let mut changes = vec![Change {
            action: Action::Rename,
            summary: format!("Rename {slug} → {new_slug}"),
            before_path: Some(git::live_path(slug)),
            state: PageState { slug: new_slug.to_owned(), title, ..state_of(&row) },
            previous_slug: Some(slug.to_owned()),
        }];
        if new_slug != slug {
            let linking: Vec<String> = sqlx::query_scalar(
                "SELECT DISTINCT p.slug FROM page_links l JOIN pages p ON p.id = l.page_id \
                 WHERE l.workspace_id = $1 AND l.target = $2 AND p.deleted_at IS NULL AND p.id <> $3",
            )
            .bind(ws)
            .bind(slug)
            .bind(row.id)
            .fetch_all(w.conn())
            .await?;
            for other in linking {
                let o = live_row(w.conn(), ws, &other).await?;
                if let Some(content) = markdown::rewrite_links(&o.content, slug, new_slug) {
                    check_content(&content)?;
                    changes.push(Change {
                        action: Action::Relink,
                        summary: format!("Update links in {}: {slug} → {new_slug}", o.title),
                        before_path: None,
                        state: PageState { content, ..state_of(&o) },
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

/// Moves a page to the trash; with live children only when `recursive` (then the whole
/// subtree goes, one commit per page).
pub async fn delete(ctx: &Ctx, access: &Access, user: &User, slug: &str, recursive: bool) -> Result<()> {
    let ws = access.workspace_id;
    locked!(ctx, access, |w| {
        let row = live_row(w.conn(), ws, slug).await?;
        let mut subtree = vec![row];
        let mut seen: HashSet<i64> = HashSet::new();
        let mut i = 0;
        while i < subtree.len() {
            let id = subtree[i].id;
            seen.insert(id);
            let kids: Vec<String> = sqlx::query_scalar(
                "SELECT slug FROM pages WHERE workspace_id = $1 AND parent_id = $2 AND deleted_at IS NULL",
            )
            .bind(ws)
            .bind(id)
            .fetch_all(w.conn())
            .await?;
            if !kids.is_empty() && !recursive {
                return Err(Error::conflict(
                    "page_has_children",
                    format!("'{slug}' has live child pages; delete with recursive=true to trash the subtree"),
                ));
            }
            for k in kids {
                let child = live_row(w.conn(), ws, &k).await?;
                if !seen.contains(&child.id) {
                    subtree.push(child);
                }
            }
            i += 1;
        }
        // Children first, so every commit leaves a consistent tree.
        let changes = subtree
            .iter()
            .rev()
            .map(|r| Change {
                action: Action::Trash,
                summary: format!("Trash {}", r.title),
                before_path: Some(git::live_path(&r.slug)),
                state: PageState { trashed: true, ..state_of(r) },
                previous_slug: None,
            })
            .collect();
        w.commit(user, changes).await?;
        Ok(())
    })
}

fn not_in_trash(slug: &str) -> Error {
    Error::not_found("trash_entry_not_found", format!("no page '{slug}' in the trash"))
}

/// Restores a trashed page: under its parent if that is live, else at the top level.
pub async fn restore_from_trash(ctx: &Ctx, access: &Access, user: &User, slug: &str) -> Result<Page> {
    let ws = access.workspace_id;
    locked!(ctx, access, |w| {
        let row = find_row(w.conn(), ws, slug, State::Trashed).await?.ok_or_else(|| not_in_trash(slug))?;
        let parent_live = match row.parent_id {
            Some(pid) => {
                sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM pages WHERE id = $1 AND deleted_at IS NULL")
                    .bind(pid)
                    .fetch_one(w.conn())
                    .await?
                    > 0
            }
            None => false,
        };
        let parent = if parent_live { parent_of(&row) } else { None };
        let change = Change {
            action: Action::Untrash,
            summary: format!("Restore {} from the trash", row.title),
            before_path: Some(git::trash_path(slug)),
            state: PageState { trashed: false, parent, ..state_of(&row) },
            previous_slug: None,
        };
        only(w.commit(user, vec![change]).await?)
    })
}

/// Removes a trashed page for good: from the tree, every index and every API, history
/// included. (Its old commits stay in the repository's history, as in any git
/// repository; see docs/operations.md.)
pub async fn purge(ctx: &Ctx, access: &Access, user: &User, slug: &str) -> Result<()> {
    let ws = access.workspace_id;
    locked!(ctx, access, |w| {
        let row = find_row(w.conn(), ws, slug, State::Trashed).await?.ok_or_else(|| not_in_trash(slug))?;
        let change = Change {
            action: Action::Purge,
            summary: format!("Purge {}", row.title),
            before_path: Some(git::trash_path(slug)),
            state: state_of(&row),
            previous_slug: None,
        };
        w.commit(user, vec![change]).await?;
        Ok(())
    })
}

/// Restores the content of an earlier revision as a new revision.
pub async fn restore_revision(ctx: &Ctx, access: &Access, user: &User, slug: &str, sha: &str) -> Result<Page> {
    let ws = access.workspace_id;
    locked!(ctx, access, |w| {
        let row = live_row(w.conn(), ws, slug).await?;
        let content =
            revision_content(&mut w, row.id, sha).await?.ok_or_else(|| super::history::revision_not_found(sha))?;
        let parsed = Arc::new(markdown::parse(&content));
        let title = decide_title(None, &parsed, Some(&row.title), &row.slug);
        let short: String = sha.chars().take(7).collect();
        let change = Change {
            action: Action::Restore,
            summary: format!("Restore {title} to {short}"),
            before_path: None,
            state: PageState { title, content, parsed: Some(parsed), ..state_of(&row) },
            previous_slug: None,
        };
        only(w.commit(user, vec![change]).await?)
    })
}
