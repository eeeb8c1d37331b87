//! Users as every door answers them, and reading one from the database. The accounts
//! (registration, sessions, settings), credentials and workspaces modules build on it.

use serde::Serialize;
use utoipa::ToSchema;

use super::Ctx;
use crate::error::{Error, Result};
use crate::time::Timestamp;

/// Longest display name of a user.
pub(crate) const MAX_NAME_LEN: usize = 200;

/// A user as every route answers it.
#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
pub struct User {
    pub id: i64,
    pub email: String,
    pub name: String,
    pub language: String,
    /// Slug of the workspace used when a request names none.
    pub default_workspace: Option<String>,
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// Unix second before which JWTs of this user are void (bumped by a password change).
    #[serde(skip)]
    pub credentials_since: i64,
    /// How many times the password changed: a JWT issued under a lower count is void.
    #[serde(skip)]
    pub credential_generation: i64,
}

/// The columns a [`User`] is read from (by name: it derives `FromRow`), from `users u
/// LEFT JOIN workspaces w` (the default workspace).
pub(crate) const USER_COLUMNS: &str = "u.id, u.email, u.name, u.language, w.slug AS default_workspace, u.created_at, u.credentials_since, \
     u.credential_generation";

/// The user, or 401: a credential that outlived its account proves nothing.
pub(crate) async fn get(ctx: &Ctx, id: i64) -> Result<User> {
    find(ctx, id).await?.ok_or_else(Error::account_gone)
}

pub(crate) async fn find(ctx: &Ctx, id: i64) -> Result<Option<User>> {
    let sql = format!(
        "SELECT {USER_COLUMNS} FROM users u LEFT JOIN workspaces w ON w.id = u.default_workspace_id WHERE u.id = $1"
    );
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&ctx.db.pool).await?)
}

/// The display name, or 400 `invalid_name`. A person's name is the author of their
/// commits, whose line git ends at a `<`: names with angle brackets are refused here.
pub(crate) fn check_name(raw: &str) -> Result<String> {
    crate::ids::display_name(raw, MAX_NAME_LEN)
        .filter(|n| !n.contains(['<', '>']))
        .ok_or_else(|| Error::invalid_name(MAX_NAME_LEN))
}
