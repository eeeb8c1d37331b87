//! Workspaces, memberships and the access check every workspace route goes through.
//!
//! [`access`] answers 404 — never 403 — for a workspace the caller is not a member of,
//! so its existence is not confirmed. What a role may do is in the types: owner-only
//! functions take an [`Owner`], which only [`Access::owner`] hands out.

use serde::{Deserialize, Serialize};
use sqlx::{Any, Transaction};
use utoipa::ToSchema;

use super::Ctx;
use super::accounts::User;
use super::slug;
use crate::error::{Error, Result};
use crate::store::is_unique_violation;
use crate::time::now_rfc3339;

pub const MAX_NAME_LEN: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Owner,
    Member,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Member => "member",
        }
    }
    fn parse(s: &str) -> Role {
        if s == "owner" { Role::Owner } else { Role::Member }
    }
}

/// A workspace as listed for one user.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WorkspaceInfo {
    pub slug: String,
    pub name: String,
    pub role: Role,
    pub created_at: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Member {
    /// The member's user id (what `DELETE …/members/{member_id}` takes).
    pub id: i64,
    pub email: String,
    pub name: String,
    pub role: Role,
}

/// Proof that `user_id` is a member of `workspace`, with its role.
#[derive(Debug, Clone)]
pub struct Access {
    pub workspace_id: i64,
    pub slug: String,
    pub name: String,
    pub created_at: String,
    pub role: Role,
    pub user_id: i64,
}

/// Proof that the caller owns the workspace.
#[derive(Debug, Clone)]
pub struct Owner(Access);

impl std::ops::Deref for Owner {
    type Target = Access;
    fn deref(&self) -> &Access {
        &self.0
    }
}

impl Access {
    /// 403 for a member: it may see the workspace, so saying no openly leaks nothing.
    pub fn owner(self) -> Result<Owner> {
        match self.role {
            Role::Owner => Ok(Owner(self)),
            Role::Member => Err(Error::owner_only()),
        }
    }

    pub fn info(&self) -> WorkspaceInfo {
        WorkspaceInfo {
            slug: self.slug.clone(),
            name: self.name.clone(),
            role: self.role,
            created_at: self.created_at.clone(),
        }
    }
}

/// The caller's access to workspace `slug`; 404 when it does not exist or the caller
/// is not a member.
pub async fn access(ctx: &Ctx, user: &User, ws: &str) -> Result<Access> {
    if !slug::is_valid(ws) {
        return Err(Error::workspace_not_found(ws));
    }
    let row: Option<(i64, String, String, String, String)> = sqlx::query_as(
        "SELECT w.id, w.slug, w.name, w.created_at, m.role FROM workspaces w \
         JOIN memberships m ON m.workspace_id = w.id AND m.user_id = $2 WHERE w.slug = $1",
    )
    .bind(ws)
    .bind(user.id)
    .fetch_optional(&ctx.db.pool)
    .await?;
    let (workspace_id, slug, name, created_at, role) = row.ok_or_else(|| Error::workspace_not_found(ws))?;
    Ok(Access { workspace_id, slug, name, created_at, role: Role::parse(&role), user_id: user.id })
}

/// Access to the workspace named by `ws=`, or else the caller's default workspace.
pub async fn access_or_default(ctx: &Ctx, user: &User, ws: Option<&str>) -> Result<Access> {
    match ws.or(user.default_workspace.as_deref()) {
        Some(ws) => access(ctx, user, ws).await,
        None => Err(Error::not_found(
            "no_default_workspace",
            "no workspace given and no default workspace set; pass ws= or switch to a workspace",
        )),
    }
}

fn clean_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_LEN || name.chars().any(char::is_control) {
        return Err(Error::bad_request(
            "invalid_workspace_name",
            format!("a workspace name has 1-{MAX_NAME_LEN} printable characters"),
        ));
    }
    Ok(name.to_owned())
}

pub async fn list(ctx: &Ctx, user: &User, limit: i64, offset: i64) -> Result<(Vec<WorkspaceInfo>, i64)> {
    let rows: Vec<(String, String, String, String)> = sqlx::query_as(
        "SELECT w.slug, w.name, m.role, w.created_at FROM workspaces w \
         JOIN memberships m ON m.workspace_id = w.id WHERE m.user_id = $1 ORDER BY w.slug LIMIT $2 OFFSET $3",
    )
    .bind(user.id)
    .bind(limit)
    .bind(offset)
    .fetch_all(&ctx.db.pool)
    .await?;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM memberships WHERE user_id = $1")
        .bind(user.id)
        .fetch_one(&ctx.db.pool)
        .await?;
    let items = rows
        .into_iter()
        .map(|(slug, name, role, created_at)| WorkspaceInfo { slug, name, role: Role::parse(&role), created_at })
        .collect();
    Ok((items, total))
}

/// Inserts a workspace owned by `owner_id`; the caller's transaction commits it.
pub async fn insert_in_tx(tx: &mut Transaction<'_, Any>, slug: &str, name: &str, owner_id: i64) -> Result<i64> {
    let now = now_rfc3339();
    let inserted = sqlx::query_scalar::<_, i64>(
        "INSERT INTO workspaces (slug, name, created_at, created_by) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(slug)
    .bind(name)
    .bind(&now)
    .bind(owner_id)
    .fetch_one(&mut **tx)
    .await;
    let id = match inserted {
        Ok(id) => id,
        Err(e) if is_unique_violation(&e) => {
            return Err(Error::conflict("workspace_slug_taken", format!("the workspace slug '{slug}' is taken")));
        }
        Err(e) => return Err(e.into()),
    };
    sqlx::query("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, 'owner', $3)")
        .bind(id)
        .bind(owner_id)
        .bind(&now)
        .execute(&mut **tx)
        .await?;
    Ok(id)
}

/// `base`, or `base-2`, `base-3`… — the first slug no workspace has (for personal
/// workspaces, whose slug nobody chose).
pub async fn free_slug_in_tx(tx: &mut Transaction<'_, Any>, base: &str, user_id: i64) -> Result<String> {
    let base = if slug::is_valid(base) { base.chars().take(100).collect() } else { format!("user-{user_id}") };
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

pub async fn create(ctx: &Ctx, user: &User, name: &str, slug: Option<&str>) -> Result<WorkspaceInfo> {
    let name = clean_name(name)?;
    let slug = match slug {
        Some(s) => s.to_owned(),
        None => slug::derive(&name),
    };
    slug::validate(&slug)?;
    let mut tx = ctx.db.pool.begin().await?;
    insert_in_tx(&mut tx, &slug, &name, user.id).await?;
    tx.commit().await?;
    tracing::info!(user_id = user.id, workspace = %slug, "workspace created");
    Ok(access(ctx, user, &slug).await?.info())
}

pub async fn update(ctx: &Ctx, owner: &Owner, name: Option<&str>) -> Result<WorkspaceInfo> {
    let mut info = owner.info();
    if let Some(name) = name {
        let name = clean_name(name)?;
        sqlx::query("UPDATE workspaces SET name = $1 WHERE id = $2")
            .bind(&name)
            .bind(owner.workspace_id)
            .execute(&ctx.db.pool)
            .await?;
        info.name = name;
    }
    Ok(info)
}

/// Deletes the workspace and its index rows; its files are moved aside under
/// `DATA_DIR/deleted/`, never destroyed. Users whose default it was get another of
/// their workspaces (or none).
pub async fn delete(ctx: &Ctx, owner: Owner) -> Result<()> {
    let mut tx = ctx.db.pool.begin().await?;
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
    ctx.repos.forget(&owner.slug);
    let dir = ctx.workspace_dir(&owner.slug);
    if dir.exists() {
        let aside = ctx.config.data_dir.join("deleted").join(format!(
            "{}-{}",
            owner.slug,
            chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ")
        ));
        std::fs::create_dir_all(aside.parent().unwrap_or(&ctx.config.data_dir))?;
        std::fs::rename(&dir, &aside)?;
        tracing::info!(workspace = %owner.slug, to = %aside.display(), "workspace files moved aside");
    }
    tracing::info!(workspace = %owner.slug, "workspace deleted");
    Ok(())
}

pub async fn members(ctx: &Ctx, access: &Access, limit: i64, offset: i64) -> Result<(Vec<Member>, i64)> {
    let rows: Vec<(i64, String, String, String)> = sqlx::query_as(
        "SELECT u.id, u.email, u.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id \
         WHERE m.workspace_id = $1 ORDER BY u.id LIMIT $2 OFFSET $3",
    )
    .bind(access.workspace_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(&ctx.db.pool)
    .await?;
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM memberships WHERE workspace_id = $1")
        .bind(access.workspace_id)
        .fetch_one(&ctx.db.pool)
        .await?;
    let items =
        rows.into_iter().map(|(id, email, name, role)| Member { id, email, name, role: Role::parse(&role) }).collect();
    Ok((items, total))
}

/// Adds an existing account by email (the service sends no mail).
pub async fn add_member(ctx: &Ctx, owner: &Owner, email: &str, role: Role) -> Result<Member> {
    let email = super::accounts::normalize_email(email)?;
    let user: Option<(i64, String)> =
        sqlx::query_as("SELECT id, name FROM users WHERE email = $1").bind(&email).fetch_optional(&ctx.db.pool).await?;
    let (id, name) =
        user.ok_or_else(|| Error::not_found("user_not_found", format!("no account with email {email}")))?;
    let inserted =
        sqlx::query("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)")
            .bind(owner.workspace_id)
            .bind(id)
            .bind(role.as_str())
            .bind(now_rfc3339())
            .execute(&ctx.db.pool)
            .await;
    match inserted {
        Err(e) if is_unique_violation(&e) => {
            Err(Error::conflict("already_member", format!("{email} is already a member")))
        }
        Err(e) => Err(e.into()),
        Ok(_) => {
            // A user without a default workspace gets this one.
            sqlx::query("UPDATE users SET default_workspace_id = $1 WHERE id = $2 AND default_workspace_id IS NULL")
                .bind(owner.workspace_id)
                .bind(id)
                .execute(&ctx.db.pool)
                .await?;
            Ok(Member { id, email, name, role })
        }
    }
}

/// Removes a member: an owner may remove anyone, a member only itself. The last owner
/// cannot be removed (400), so a workspace is never left without one.
pub async fn remove_member(ctx: &Ctx, access: Access, member_id: i64) -> Result<()> {
    if access.role != Role::Owner && member_id != access.user_id {
        return Err(Error::owner_only());
    }
    let mut tx = ctx.db.pool.begin().await?;
    let role: Option<String> =
        sqlx::query_scalar("SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2")
            .bind(access.workspace_id)
            .bind(member_id)
            .fetch_optional(&mut *tx)
            .await?;
    let role = role.ok_or_else(|| Error::not_found("member_not_found", format!("no member {member_id}")))?;
    if role == "owner" {
        let owners: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM memberships WHERE workspace_id = $1 AND role = 'owner'")
                .bind(access.workspace_id)
                .fetch_one(&mut *tx)
                .await?;
        if owners <= 1 {
            return Err(Error::bad_request("last_owner", "the last owner of a workspace cannot be removed"));
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
    Ok(())
}

/// Makes the workspace the default for all of the user's credentials.
pub async fn switch(ctx: &Ctx, access: &Access) -> Result<String> {
    sqlx::query("UPDATE users SET default_workspace_id = $1 WHERE id = $2")
        .bind(access.workspace_id)
        .bind(access.user_id)
        .execute(&ctx.db.pool)
        .await?;
    Ok(access.slug.clone())
}
