//! `cairn import`: a folder or a `.zip` of markdown (an Obsidian vault, a Logseq or Foam
//! folder, Cairn's own export) into a workspace, through the same write path as every door.
//!
//! # Layout
//!
//! - [`source`] reads the folder or zip into memory: notes, images, the rest, and what was
//!   passed over (hidden, not UTF-8, over 1 MiB, unreadable) with why.
//! - [`plan`] decides, from the source alone, the slugs, the tree, the link and image
//!   rewrites and the uploads — deterministically, so a second import changes nothing.
//! - [`run`] applies the plan: uploads, then pages level by level through `pages::create`,
//!   `update` and `move_page`, many saves at once so they share batches.
//! - [`report`] is what the import did, file by file (terminal summary, `--report` JSON).
//!
//! - [`history`] takes a git repository instead: its history replayed commit by commit
//!   through the same planner and saves, each save keeping its source commit's author and
//!   date.
//!
//! Who imports: `--as EMAIL`, an account that is a member of the workspace; without it
//! the workspace's (first) owner. Commits are theirs, as for any save (a replayed git
//! commit by a member's email is that member's).

pub(crate) mod history;
pub(crate) mod plan;
pub(crate) mod renames;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod source;

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;

pub(crate) use report::Report;
pub(crate) use run::Progress;

use crate::core::Ctx;
use crate::core::pages::rows;
use crate::core::users::{self, USER_COLUMNS, User};
use crate::core::workspaces::{self, Access};
use crate::ids::Email;

/// One import, as the command line asks for it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The folder or `.zip` to import.
    pub path: PathBuf,
    /// The workspace to import into (its slug).
    pub workspace: String,
    /// The account to save as; None: the workspace's owner.
    pub as_email: Option<String>,
    /// Plan and report, write nothing.
    pub dry_run: bool,
    /// A git repository's history is replayed (false: only its files, as a folder).
    pub history: bool,
}

/// Imports `opts.path` into the workspace; answers what it did. Files that cannot be
/// imported are in the report, not errors: only a missing source, an unknown account or
/// workspace, or a database outage stop an import.
pub async fn import(ctx: &Ctx, opts: &Options, progress: Progress<'_>) -> anyhow::Result<Report> {
    let started = Instant::now();
    let (user, access) = importer(ctx, &opts.workspace, opts.as_email.as_deref()).await?;
    let path = opts.path.clone();
    let repository = path.is_dir() && history::is_repository(&path);
    let git = opts.history && repository;
    // A bare repository has no files but its commits': without its history, its head's.
    let bare_head = !opts.history && repository && git2::Repository::open_bare(&path).is_ok();
    let kind = if git {
        "git"
    } else if bare_head {
        "tree"
    } else if path.is_dir() {
        "folder"
    } else {
        "zip"
    };
    let existing: HashSet<String> = {
        let mut conn = ctx.db.pool.acquire().await?;
        rows::live_tree(&mut conn, access.workspace_id()).await?.into_iter().map(|(_, slug, ..)| slug).collect()
    };
    let mut report = Report {
        source: opts.path.display().to_string(),
        kind: kind.to_owned(),
        workspace: access.slug().to_owned(),
        imported_as: user.email.clone(),
        dry_run: opts.dry_run,
        ..Report::default()
    };
    if git {
        history::replay(ctx, &access, &user, &path, existing, &mut report, progress).await?;
    } else {
        let max_image = ctx.config.upload_max_bytes;
        progress("reading", 0, 1);
        let plan = tokio::task::spawn_blocking(move || -> anyhow::Result<plan::Plan> {
            let given = plan::Given::default();
            if bare_head {
                let mut reader = source::TreeReader::open(&path, max_image)?;
                let source = reader.read(reader.head()?)?;
                let mut plan = plan::plan(&source, &given, &existing, &mut |image| reader.name(image));
                plan.uploads = plan.uploads.iter().map(|u| reader.loaded(u)).collect();
                return Ok(plan);
            }
            let source = source::read(&path, max_image)?;
            Ok(plan::plan(&source, &given, &existing, &mut |image| match image {
                source::Image::Bytes(bytes) => source::upload_name(bytes),
                source::Image::Blob(_) => Err("a repository's file, outside the repository".to_owned()),
            }))
        })
        .await??;
        progress("reading", 1, 1);
        report.renamed = plan.renamed.clone();
        report.skipped = plan.skipped.clone();
        report.broken_links = plan.broken_links.clone();
        let known = crate::core::uploads::names(ctx, &access).await?;
        run::uploads(ctx, &access, &plan.uploads, &known, opts.dry_run, &mut report, progress).await;
        report.pages = run::pages(ctx, &access, &user, &plan.pages, opts.dry_run, progress).await;
    }
    report.seconds = started.elapsed().as_secs_f64();
    tracing::info!(
        workspace = %access.slug(),
        pages = report.pages.len(),
        skipped = report.skipped.len(),
        dry_run = opts.dry_run,
        "import done"
    );
    Ok(report)
}

/// The account that imports and its access to the workspace: `--as EMAIL` (which must be
/// a member), else the workspace's first owner.
async fn importer(ctx: &Ctx, workspace: &str, as_email: Option<&str>) -> anyhow::Result<(User, Access)> {
    let user = match as_email {
        Some(raw) => {
            let email = Email::parse(raw).map_err(|_| anyhow::anyhow!("--as: '{raw}' is not an email address"))?;
            account_by_email(ctx, &email).await?.with_context(|| format!("--as: no account has the email {email}"))?
        }
        None => {
            let owner = workspaces::first_owner(ctx, workspace)
                .await?
                .with_context(|| format!("--workspace: no workspace '{workspace}'"))?;
            users::get(ctx, owner).await?
        }
    };
    let access = workspaces::access(ctx, &user, workspace)
        .await
        .map_err(|_| anyhow::anyhow!("--workspace: {} is not a member of a workspace '{workspace}'", user.email))?;
    Ok((user, access))
}

async fn account_by_email(ctx: &Ctx, email: &Email) -> anyhow::Result<Option<User>> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM users u LEFT JOIN workspaces w ON w.id = u.default_workspace_id \
         WHERE u.email = $1"
    );
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(email.as_str()).fetch_optional(&ctx.db.pool).await?)
}

/// The account with `email` and its access to `workspace`, when it is a member.
pub(crate) async fn member_by_email(ctx: &Ctx, email: &str, workspace: &str) -> anyhow::Result<(User, Access)> {
    let email = Email::parse(email).map_err(|_| anyhow::anyhow!("'{email}' is not an email address"))?;
    let user = account_by_email(ctx, &email).await?.with_context(|| format!("no account has the email {email}"))?;
    let access = workspaces::access(ctx, &user, workspace).await?;
    Ok((user, access))
}
