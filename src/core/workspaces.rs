//! Workspaces, memberships and the access check every workspace route goes through.
//!
//! [`access`] answers 404 — never 403 — for a workspace the caller is not a member of,
//! so its existence is not confirmed. What a role may do is in the types: every
//! workspace function takes an [`Access`], which only [`access`] (or, for maintenance,
//! the greppable [`Access::maintenance`]) builds; owner-only functions take an
//! [`Owner`], which only [`Access::owner`] hands out.

use serde::{Deserialize, Serialize};
use sqlx::{Any, AssertSqlSafe, Transaction};
use utoipa::ToSchema;

use super::Ctx;
use super::paging::Paging;
use super::users::User;
use crate::error::{Error, OrConflict, Result};
use crate::ids::{Email, Slug};
use crate::store::Backend;
use crate::time::Timestamp;

pub(crate) const MAX_NAME_LEN: usize = 200;

/// A member's role. A member added without one is a `member`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Owner,
    #[default]
    Member,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Member => "member",
        }
    }
    pub(crate) fn parse(s: &str) -> Role {
        if s == "owner" { Role::Owner } else { Role::Member }
    }

    /// What this role may do in its workspace: the owner-only actions are the ones
    /// [`Access::owner`] lets through.
    pub fn capabilities(self) -> Capabilities {
        let owner = self == Role::Owner;
        Capabilities {
            rename: owner,
            delete: owner,
            manage_members: owner,
            manage_webhooks: owner,
            erase_history: owner,
        }
    }
}

/// What the caller may do in a workspace beyond reading and writing its pages, so a
/// client shows the actions the server accepts without a copy of the rule. An extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct Capabilities {
    /// Rename the workspace.
    pub rename: bool,
    /// Delete the workspace.
    pub delete: bool,
    /// Add members, change roles, remove other members.
    pub manage_members: bool,
    /// Create, change and delete webhooks.
    pub manage_webhooks: bool,
    /// Erase a revision's content from a page's history.
    pub erase_history: bool,
}

/// A workspace as listed for one user.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WorkspaceInfo {
    pub slug: String,
    pub name: String,
    pub role: Role,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// What the caller may do here (an extension).
    pub can: Capabilities,
}

impl WorkspaceInfo {
    fn new(slug: String, name: String, role: Role, created_at: Timestamp) -> WorkspaceInfo {
        WorkspaceInfo { slug, name, role, created_at, can: role.capabilities() }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Member {
    /// The member's user id (what `DELETE …/members/{member_id}` takes).
    pub id: i64,
    pub email: String,
    pub name: String,
    pub role: Role,
}

/// Proof that `user_id` is a member of `workspace`, with its role. Its fields are
/// private: outside this module it can only be obtained, not made.
#[derive(Debug, Clone)]
pub struct Access {
    workspace_id: i64,
    slug: String,
    name: String,
    created_at: Timestamp,
    role: Role,
    user_id: i64,
}

/// Proof that the caller owns the workspace.
#[derive(Debug, Clone)]
pub struct Owner(Access);

/// Proof that the caller may remove member `member_id`: it owns the workspace, or it is
/// that member. Only [`Access::removal`] hands one out.
#[derive(Debug, Clone)]
pub struct Removal {
    access: Access,
    member_id: i64,
}

impl std::ops::Deref for Owner {
    type Target = Access;
    fn deref(&self) -> &Access {
        &self.0
    }
}

impl Access {
    /// Owner access for maintenance that acts for no signed-in user (reindex, import).
    /// The one way to build an `Access` without a membership check — keep it greppable.
    pub fn maintenance(workspace_id: i64, slug: &str) -> Access {
        Access {
            workspace_id,
            slug: slug.to_owned(),
            name: String::new(),
            created_at: Timestamp::default(),
            role: Role::Owner,
            user_id: 0,
        }
    }

    pub fn workspace_id(&self) -> i64 {
        self.workspace_id
    }

    pub fn slug(&self) -> &str {
        &self.slug
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn user_id(&self) -> i64 {
        self.user_id
    }

    /// 403 for a member: it may see the workspace, so saying no openly leaks nothing.
    pub fn owner(self) -> Result<Owner> {
        match self.role {
            Role::Owner => Ok(Owner(self)),
            Role::Member => Err(Error::owner_only()),
        }
    }

    /// An owner may remove anyone, a member only itself (403 otherwise: it may see the
    /// workspace, so saying no openly leaks nothing).
    pub fn removal(self, member_id: i64) -> Result<Removal> {
        if self.role != Role::Owner && member_id != self.user_id {
            return Err(Error::owner_only());
        }
        Ok(Removal { access: self, member_id })
    }

    pub fn info(&self) -> WorkspaceInfo {
        WorkspaceInfo::new(self.slug.clone(), self.name.clone(), self.role, self.created_at.clone())
    }
}

/// The caller's access to workspace `slug`; 404 when it does not exist or the caller
/// is not a member. An access found is kept for the next request
/// (credentials/cache.rs: forgotten when a membership or the workspace changes).
pub(crate) async fn access(ctx: &Ctx, user: &User, ws: &str) -> Result<Access> {
    let ws = Slug::lookup(ws, Error::workspace_not_found)?;
    if let Some(hit) = kept_access(ctx, user.id, &ws) {
        return Ok(hit);
    }
    let generation = ctx.credentials.generation();
    let row: Option<(i64, String, String, Timestamp, String)> = sqlx::query_as(
        "SELECT w.id, w.slug, w.name, w.created_at, m.role FROM workspaces w \
         JOIN memberships m ON m.workspace_id = w.id AND m.user_id = $2 WHERE w.slug = $1",
    )
    .bind(ws.as_str())
    .bind(user.id)
    .fetch_optional(&ctx.db.pool)
    .await?;
    let (workspace_id, slug, name, created_at, role) = row.ok_or_else(|| Error::workspace_not_found(&ws))?;
    let access = Access { workspace_id, slug, name, created_at, role: Role::parse(&role), user_id: user.id };
    ctx.accesses.put(&ctx.credentials, generation, (user.id, access.slug.clone()), access.clone());
    Ok(access)
}

/// The access of `user_id` to workspace `slug` that [`access`] kept, if it still may be
/// used (credentials/cache.rs).
pub fn kept_access(ctx: &Ctx, user_id: i64, slug: &str) -> Option<Access> {
    ctx.accesses.get(&ctx.credentials, &(user_id, slug.to_owned()))
}

/// The caller's access to every workspace it is a member of, by workspace id.
pub(crate) async fn all_accesses(ctx: &Ctx, user: &User) -> Result<Vec<Access>> {
    let rows: Vec<(i64, String, String, Timestamp, String)> = sqlx::query_as(
        "SELECT w.id, w.slug, w.name, w.created_at, m.role FROM workspaces w \
         JOIN memberships m ON m.workspace_id = w.id AND m.user_id = $1 ORDER BY w.id",
    )
    .bind(user.id)
    .fetch_all(&ctx.db.pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(workspace_id, slug, name, created_at, role)| Access {
            workspace_id,
            slug,
            name,
            created_at,
            role: Role::parse(&role),
            user_id: user.id,
        })
        .collect())
}

/// The id of the workspace's first owner (the account an import acts as when none is
/// named); None when there is no such workspace.
pub(crate) async fn first_owner(ctx: &Ctx, slug: &str) -> Result<Option<i64>> {
    Ok(sqlx::query_scalar(
        "SELECT m.user_id FROM memberships m JOIN workspaces w ON w.id = m.workspace_id \
         WHERE w.slug = $1 AND m.role = 'owner' ORDER BY m.user_id LIMIT 1",
    )
    .bind(slug)
    .fetch_optional(&ctx.db.pool)
    .await?)
}

/// The slug of the workspace with id `id`, if it still exists.
pub(crate) async fn slug_of(ctx: &Ctx, id: i64) -> Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT slug FROM workspaces WHERE id = $1").bind(id).fetch_optional(&ctx.db.pool).await?)
}

/// Access to the workspace named by `ws=`, or else the caller's default workspace.
pub(crate) async fn access_or_default(ctx: &Ctx, user: &User, ws: Option<&str>) -> Result<Access> {
    match ws.or(user.default_workspace.as_deref()) {
        Some(ws) => access(ctx, user, ws).await,
        None => Err(Error::no_default_workspace()),
    }
}

fn check_name(name: &str) -> Result<String> {
    crate::ids::display_name(name, MAX_NAME_LEN).ok_or_else(|| Error::invalid_workspace_name(MAX_NAME_LEN))
}

pub(crate) async fn list(ctx: &Ctx, user: &User, paging: Paging) -> Result<(Vec<WorkspaceInfo>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    let (rows, total): (Vec<(String, String, String, Timestamp)>, i64) = paging
        .window(
            &mut tx,
            "SELECT w.slug, w.name, m.role, w.created_at FROM workspaces w \
             JOIN memberships m ON m.workspace_id = w.id WHERE m.user_id = $1 ORDER BY w.slug LIMIT $2 OFFSET $3",
            "SELECT COUNT(*) FROM memberships WHERE user_id = $1",
            user.id,
        )
        .await?;
    tx.commit().await?;
    let items = rows
        .into_iter()
        .map(|(slug, name, role, created_at)| WorkspaceInfo::new(slug, name, Role::parse(&role), created_at))
        .collect();
    Ok((items, total))
}

/// Inserts a workspace owned by `owner_id`; the caller's transaction commits it.
pub(crate) async fn insert_in_tx(
    tx: &mut Transaction<'_, Any>,
    slug: &str,
    name: &str,
    owner_id: i64,
    now: &Timestamp,
) -> Result<i64> {
    let id = sqlx::query_scalar::<_, i64>(
        "INSERT INTO workspaces (slug, name, created_at, created_by) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(slug)
    .bind(name)
    .bind(now)
    .bind(owner_id)
    .fetch_one(&mut **tx)
    .await
    .or_conflict(|| Error::workspace_slug_taken(slug))?;
    sqlx::query("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, 'owner', $3)")
        .bind(id)
        .bind(owner_id)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(id)
}

/// `base`, or `base-2`, `base-3`… — the first slug no workspace has (for personal
/// workspaces, whose slug nobody chose).
pub(crate) async fn free_slug_in_tx(tx: &mut Transaction<'_, Any>, base: &str, user_id: i64) -> Result<String> {
    let base = if Slug::is_valid(base) { base.chars().take(100).collect() } else { format!("user-{user_id}") };
    for n in 1..1000 {
        let candidate = if n == 1 { base.clone() } else { format!("{base}-{n}") };
        let taken: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM workspaces WHERE slug = $1")
            .bind(&candidate)
            .fetch_one(&mut **tx)
            .await?;
        if taken == 0 {
            return Ok(candidate);
        }
    }
    Ok(format!("user-{user_id}-{}", crate::auth::secrets::random_base62(6).to_lowercase()))
}

pub(crate) async fn create(ctx: &Ctx, user: &User, name: &str, slug: Option<&str>) -> Result<WorkspaceInfo> {
    let name = check_name(name)?;
    let slug = match slug {
        Some(s) => Slug::parse(s)?,
        None => Slug::parse(&Slug::derive(&name))?,
    };
    let mut tx = ctx.db.write().await?;
    insert_in_tx(&mut tx, slug.as_str(), &name, user.id, &ctx.clock.rfc3339()).await?;
    tx.commit().await?;
    tracing::info!(user_id = user.id, workspace = %slug, "workspace created");
    Ok(access(ctx, user, slug.as_str()).await?.info())
}

pub(crate) async fn update(ctx: &Ctx, owner: &Owner, name: Option<&str>) -> Result<WorkspaceInfo> {
    let mut info = owner.info();
    if let Some(name) = name {
        let name = check_name(name)?;
        sqlx::query("UPDATE workspaces SET name = $1 WHERE id = $2")
            .bind(&name)
            .bind(owner.workspace_id)
            .execute(&ctx.db.pool)
            .await?;
        // Accesses kept in the cache carry the old name.
        super::credentials::changed(ctx).await;
        info.name = name;
    }
    Ok(info)
}

/// Deletes the workspace and its index rows; its files are moved aside under
/// `DATA_DIR/deleted/`, never destroyed. Users whose default it was get another of
/// their workspaces (or none).
pub(crate) async fn delete(ctx: &Ctx, owner: Owner) -> Result<()> {
    let mut tx = ctx.db.write().await?;
    sqlx::query("DELETE FROM workspaces WHERE id = $1").bind(owner.workspace_id).execute(&mut *tx).await?;
    sqlx::query(
        "UPDATE users SET default_workspace_id = \
           (SELECT MIN(m.workspace_id) FROM memberships m WHERE m.user_id = users.id) \
         WHERE default_workspace_id = $1",
    )
    .bind(owner.workspace_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    super::credentials::changed(ctx).await;
    ctx.repos.forget(&owner.slug);
    ctx.writers.forget(&owner.slug);
    ctx.queued.forget(&owner.slug);
    ctx.semantic.forget(owner.workspace_id);
    // Everything of the workspace goes aside, its repository and its uploads each on its
    // own (a workspace with no page has uploads but no repository): the next workspace
    // given this slug starts with nothing of it.
    let aside = ctx.config.data_dir.join("deleted").join(format!(
        "{}-{}",
        owner.slug,
        ctx.clock.now().format("%Y%m%dT%H%M%S%.6fZ")
    ));
    // `core::uploads::workspace_dir`, spelled out: uploads depends on this module.
    let uploads = ctx.config.data_dir.join("uploads").join(&owner.slug);
    let moves = [
        (ctx.workspace_dir(&owner.slug), aside.clone()),
        (uploads, std::path::PathBuf::from(format!("{}-uploads", aside.display()))),
    ];
    for (from, to) in moves.into_iter().filter(|(from, _)| from.exists()) {
        std::fs::create_dir_all(aside.parent().unwrap_or(&ctx.config.data_dir))?;
        std::fs::rename(&from, &to)?;
        tracing::info!(workspace = %owner.slug, to = %to.display(), "workspace files moved aside");
    }
    tracing::info!(workspace = %owner.slug, "workspace deleted");
    Ok(())
}

pub(crate) async fn members(ctx: &Ctx, access: &Access, paging: Paging) -> Result<(Vec<Member>, i64)> {
    let mut tx = ctx.db.snapshot().await?;
    let (rows, total): (Vec<(i64, String, String, String)>, i64) = paging
        .window(
            &mut tx,
            "SELECT u.id, u.email, u.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id \
             WHERE m.workspace_id = $1 ORDER BY u.id LIMIT $2 OFFSET $3",
            "SELECT COUNT(*) FROM memberships WHERE workspace_id = $1",
            access.workspace_id,
        )
        .await?;
    tx.commit().await?;
    let items =
        rows.into_iter().map(|(id, email, name, role)| Member { id, email, name, role: Role::parse(&role) }).collect();
    Ok((items, total))
}

/// Adds an existing account by email (the service sends no mail), as a `member` unless
/// another role is given.
pub(crate) async fn add_member(ctx: &Ctx, owner: &Owner, email: &str, role: Option<Role>) -> Result<Member> {
    let email = Email::parse(email)?;
    let role = role.unwrap_or_default();
    let user: Option<(i64, String)> = sqlx::query_as("SELECT id, name FROM users WHERE email = $1")
        .bind(email.as_str())
        .fetch_optional(&ctx.db.pool)
        .await?;
    let (id, name) = user.ok_or_else(|| Error::user_not_found(email.as_str()))?;
    sqlx::query("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)")
        .bind(owner.workspace_id)
        .bind(id)
        .bind(role.as_str())
        .bind(ctx.clock.rfc3339())
        .execute(&ctx.db.pool)
        .await
        .or_conflict(|| Error::already_member(email.as_str()))?;
    // A user without a default workspace gets this one.
    let defaulted =
        sqlx::query("UPDATE users SET default_workspace_id = $1 WHERE id = $2 AND default_workspace_id IS NULL")
            .bind(owner.workspace_id)
            .bind(id)
            .execute(&ctx.db.pool)
            .await?;
    if defaulted.rows_affected() > 0 {
        super::credentials::changed(ctx).await;
    }
    Ok(Member { id, email: email.as_str().to_owned(), name, role })
}

/// The account with `email`, if any, and whether it is a member of workspace
/// `workspace_id` (inside `tx`).
pub(crate) async fn account_and_membership(
    tx: &mut Transaction<'_, Any>,
    workspace_id: i64,
    email: &Email,
) -> Result<Option<(i64, bool)>> {
    let row: Option<(i64, i64)> = sqlx::query_as(
        "SELECT u.id, (SELECT COUNT(*) FROM memberships m WHERE m.user_id = u.id AND m.workspace_id = $2) \
         FROM users u WHERE u.email = $1",
    )
    .bind(email.as_str())
    .bind(workspace_id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|(id, memberships)| (id, memberships > 0)))
}

/// Makes `user_id` a member of workspace `workspace_id` with `role` inside `tx` (an
/// invitation taken); a member already keeps its role. Answers the workspace's slug.
pub(crate) async fn join_in_tx(
    ctx: &Ctx,
    tx: &mut Transaction<'_, Any>,
    workspace_id: i64,
    user_id: i64,
    role: Role,
) -> Result<String> {
    sqlx::query(
        "INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (workspace_id, user_id) DO NOTHING",
    )
    .bind(workspace_id)
    .bind(user_id)
    .bind(role.as_str())
    .bind(ctx.clock.rfc3339())
    .execute(&mut **tx)
    .await?;
    Ok(sqlx::query_scalar("SELECT slug FROM workspaces WHERE id = $1").bind(workspace_id).fetch_one(&mut **tx).await?)
}

/// Removes a member (who may is [`Access::removal`]'s rule). The last owner cannot be
/// removed (400), so a workspace is never left without one.
pub(crate) async fn remove_member(ctx: &Ctx, removal: Removal) -> Result<()> {
    let Removal { access, member_id } = removal;
    let mut tx = ctx.db.write().await?;
    let role: Option<String> =
        sqlx::query_scalar("SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2")
            .bind(access.workspace_id)
            .bind(member_id)
            .fetch_optional(&mut *tx)
            .await?;
    let role = role.ok_or_else(|| Error::member_not_found(member_id))?;
    if role == "owner" {
        // Two owners leaving at once must not both count two owners and both go. On
        // PostgreSQL the owners' rows are locked until this transaction ends, so the
        // second counts again after the first committed; on SQLite the transaction holds
        // the write lock from its start (`Db::write`), so the second begins after the first.
        let lock = if ctx.db.backend == Backend::Postgres { " FOR UPDATE" } else { "" };
        let sql = format!("SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'{lock}");
        let owners: Vec<i64> =
            sqlx::query_scalar(AssertSqlSafe(sql)).bind(access.workspace_id).fetch_all(&mut *tx).await?;
        if owners.len() <= 1 {
            return Err(Error::last_owner());
        }
    }
    sqlx::query("DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2")
        .bind(access.workspace_id)
        .bind(member_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "UPDATE users SET default_workspace_id = \
           (SELECT MIN(m.workspace_id) FROM memberships m WHERE m.user_id = users.id) \
         WHERE id = $1 AND default_workspace_id = $2",
    )
    .bind(member_id)
    .bind(access.workspace_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    super::credentials::changed(ctx).await;
    Ok(())
}

/// Makes the workspace the default for all of the user's credentials.
pub(crate) async fn switch(ctx: &Ctx, access: &Access) -> Result<String> {
    sqlx::query("UPDATE users SET default_workspace_id = $1 WHERE id = $2")
        .bind(access.workspace_id)
        .bind(access.user_id)
        .execute(&ctx.db.pool)
        .await?;
    super::credentials::changed(ctx).await;
    Ok(access.slug.clone())
}
