//! Applying a [`Plan`] through the core write path: the images first (as uploads of the
//! workspace), then the pages level by level — parents before children — each level's
//! saves submitted together (`buffer_unordered`) so that they share batches
//! ([`crate::core::pages::batch`]). Every page save is `pages::create`, `update` or
//! `move_page`, exactly as the HTTP API calls them: one commit per save, its events and
//! index rows in the same transaction. A refused save is reported and the import goes on.

use std::collections::HashSet;

use futures_util::StreamExt;

use super::plan::{PlannedPage, Prior};
use super::report::{PageAction, PageEntry, Report, Skipped, UploadAction, UploadEntry};
use super::source::{Image, PlannedUpload};
use crate::core::Ctx;
use crate::core::pages::{self, NewPage, Replayed};
use crate::core::uploads::Incoming;
use crate::core::users::User;
use crate::core::workspaces::Access;
use crate::error::Code;
use crate::error::Result;
use crate::ids::Slug;

/// Saves submitted at once within one level of the tree.
pub(crate) const CONCURRENCY: usize = 16;

/// Reports progress: (phase, done, total).
pub(crate) type Progress<'a> = &'a (dyn Fn(&str, usize, usize) + Sync);

/// Keeps the planned uploads (or, in a dry run, only lists them); those already `known`
/// to the workspace are listed as unchanged.
pub(crate) async fn uploads(
    ctx: &Ctx,
    access: &Access,
    planned: &[PlannedUpload],
    known: &HashSet<String>,
    dry_run: bool,
    report: &mut Report,
    progress: Progress<'_>,
) {
    let total = planned.len();
    for (i, up) in planned.iter().enumerate() {
        let entry = |action| UploadEntry { source: up.source.clone(), name: up.name.clone(), action };
        if known.contains(&up.name) {
            report.uploads.push(entry(UploadAction::Unchanged));
            continue;
        }
        if dry_run {
            report.uploads.push(entry(UploadAction::Created));
            continue;
        }
        let kept = match &up.image {
            Image::Bytes(bytes) => keep(ctx, access, bytes).await.map_err(|e| e.to_string()),
            Image::Blob(_) => Err("unreadable".to_owned()),
        };
        match kept {
            Ok(name) if name == up.name => report.uploads.push(entry(UploadAction::Created)),
            Ok(name) => report.skipped.push(Skipped {
                source: up.source.clone(),
                reason: format!("kept as {name}, not the planned {}; references to it are broken", up.name),
            }),
            Err(e) => report
                .skipped
                .push(Skipped { source: up.source.clone(), reason: format!("a referenced image, refused: {e}") }),
        }
        progress("uploads", i + 1, total);
    }
}

async fn keep(ctx: &Ctx, access: &Access, bytes: &[u8]) -> Result<String> {
    let mut incoming = Incoming::start(ctx).await?;
    for chunk in bytes.chunks(64 * 1024) {
        incoming.write(chunk).await?;
    }
    Ok(incoming.finish(ctx, access).await?.name)
}

/// The error says no page holds the slug: none ever did, or it is the old name of a page
/// renamed since (an alias).
pub(super) fn holds_no_page(e: &crate::error::Error) -> bool {
    matches!(e.code, Code::PageNotFound | Code::PageMoved)
}

/// Saves the planned pages, parents first; answers one entry per page, in plan order.
pub(crate) async fn pages(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    planned: &[PlannedPage],
    dry_run: bool,
    progress: Progress<'_>,
) -> Vec<PageEntry> {
    let total = planned.len();
    let mut out: Vec<PageEntry> = Vec::with_capacity(total);
    let mut start = 0;
    while start < planned.len() {
        let depth = planned[start].depth;
        let end = planned[start..].iter().position(|p| p.depth != depth).map_or(planned.len(), |n| start + n);
        let mut level: Vec<(usize, PageEntry)> = futures_util::stream::iter(planned[start..end].iter().enumerate())
            .map(|(i, p)| async move { (i, save(ctx, access, user, p, dry_run).await) })
            .buffer_unordered(CONCURRENCY)
            .enumerate()
            .map(|(n, done)| {
                progress("pages", start + n + 1, total);
                done
            })
            .collect()
            .await;
        level.sort_by_key(|(i, _)| *i);
        out.extend(level.into_iter().map(|(_, e)| e));
        start = end;
    }
    out
}

/// One page: created, updated (content, title, parent) or left as it is.
async fn save(ctx: &Ctx, access: &Access, user: &User, p: &PlannedPage, dry_run: bool) -> PageEntry {
    let mut entry = PageEntry {
        source: p.source.clone(),
        slug: p.slug.clone(),
        parent: p.parent.clone(),
        action: PageAction::Unchanged,
        revisions: 0,
        error: None,
    };
    match save_inner(ctx, access, user, p, dry_run, &mut entry).await {
        Ok(()) => {}
        Err(e) => {
            entry.action = PageAction::Failed;
            entry.error = Some(e.to_string());
        }
    }
    entry
}

async fn save_inner(
    ctx: &Ctx,
    access: &Access,
    user: &User,
    p: &PlannedPage,
    dry_run: bool,
    entry: &mut PageEntry,
) -> Result<()> {
    let slug = Slug::parse(&p.slug)?;
    let parent = p.parent.as_deref().map(Slug::parse).transpose()?;
    let replayed = |from: Slug, from_trash: bool| Replayed {
        slug: from,
        from_trash,
        new_slug: slug.clone(),
        title: p.title.clone(),
        content: p.content.to_string(),
        parent: parent.clone(),
        recorded: p.recorded,
    };
    let wrote = |entry: &mut PageEntry, wrote: bool| {
        if wrote {
            entry.action = PageAction::Updated;
            entry.revisions += 1;
        }
    };
    if !dry_run && p.prior != Prior::Here {
        let from = match &p.prior {
            Prior::Renamed(old) => Slug::parse(old)?,
            _ => slug.clone(),
        };
        match pages::replay(ctx, access, user, replayed(from, p.prior == Prior::InTrash)).await {
            Ok((_, changed)) => {
                wrote(entry, changed);
                return Ok(());
            }
            // Done already by an earlier run that stopped in this commit: the page is
            // found at its slug below.
            Err(e) if holds_no_page(&e) || e.code == Code::TrashEntryNotFound => {}
            Err(e) => return Err(e),
        }
    }
    let current = match pages::get(ctx, access, &slug).await {
        Ok(page) => Some(page),
        // A create ends an alias.
        Err(e) if holds_no_page(&e) => None,
        Err(e) => return Err(e),
    };
    let Some(current) = current else {
        entry.action = PageAction::Created;
        entry.revisions = 1;
        if !dry_run {
            let req = NewPage {
                title: p.title.clone(),
                slug: Some(p.slug.clone()),
                content: Some(p.content.to_string()),
                parent: p.parent.clone(),
            };
            pages::create(ctx, access, user, req).await?;
        }
        return Ok(());
    };
    let retitled = p.title.as_ref().is_some_and(|t| *t != current.title);
    if *current.content == *p.content && !retitled && current.parent == p.parent && !p.recorded {
        return Ok(());
    }
    // Content, title and place in one revision.
    if dry_run {
        wrote(entry, true);
    } else {
        let (_, changed) = pages::replay(ctx, access, user, replayed(slug.clone(), false)).await?;
        wrote(entry, changed);
    }
    Ok(())
}
