//! Workspaces and their members. Every route answers 404 for a workspace the caller is
//! not a member of.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::core::workspaces::{self, Member, Role, WorkspaceInfo};
use crate::error::Result;
use crate::http::auth::AuthUser;
use crate::http::extract::{Json, PagingQuery, Path};
use crate::http::{List, Problem};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new()
        .routes(routes!(list_workspaces, create_workspace))
        .routes(routes!(update_workspace, delete_workspace))
        .routes(routes!(list_members, add_member))
        .routes(routes!(remove_member))
        .routes(routes!(switch_workspace))
        .routes(routes!(export_workspace))
}

#[derive(Deserialize, ToSchema)]
#[schema(example = json!({"name": "Platform team", "slug": "platform"}))]
pub(crate) struct CreateWorkspace {
    pub name: String,
    /// Derived from the name when absent; page slug rules apply.
    pub slug: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct UpdateWorkspace {
    pub name: Option<String>,
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct AddMember {
    /// Email of an existing account.
    pub email: String,
    /// Defaults to `member`.
    pub role: Option<Role>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct Switched {
    pub default_workspace: String,
}

/// The caller's workspaces.
#[utoipa::path(get, path = "/api/workspaces", tag = "workspaces", params(PagingQuery),
    responses((status = 200, body = List<WorkspaceInfo>), (status = 400, body = Problem), (status = 503, body = Problem)))]
async fn list_workspaces(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    paging: Paging,
) -> Result<axum::Json<List<WorkspaceInfo>>> {
    let (items, total) = workspaces::list(&ctx, &auth.user, paging).await?;
    Ok(axum::Json(List::new(items, total)))
}

/// Creates a workspace owned by the caller.
#[utoipa::path(post, path = "/api/workspaces", tag = "workspaces", request_body = CreateWorkspace,
    responses((status = 201, body = WorkspaceInfo), (status = 400, body = Problem, description = "Bad slug or name"),
        (status = 409, body = Problem, description = "Slug taken"),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn create_workspace(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Json(req): Json<CreateWorkspace>,
) -> Result<(StatusCode, axum::Json<WorkspaceInfo>)> {
    let ws = workspaces::create(&ctx, &auth.user, &req.name, req.slug.as_deref()).await?;
    Ok((StatusCode::CREATED, axum::Json(ws)))
}

/// Renames a workspace (owner only; the slug never changes).
#[utoipa::path(put, path = "/api/workspaces/{slug}", tag = "workspaces", request_body = UpdateWorkspace,
    params(("slug" = String, Path)),
    responses((status = 200, body = WorkspaceInfo), (status = 400, body = Problem),
        (status = 403, body = Problem, description = "A member, not an owner"), (status = 404, body = Problem),
        (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn update_workspace(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(slug): Path<String>,
    Json(req): Json<UpdateWorkspace>,
) -> Result<axum::Json<WorkspaceInfo>> {
    let owner = workspaces::access(&ctx, &auth.user, &slug).await?.owner()?;
    Ok(axum::Json(workspaces::update(&ctx, &owner, req.name.as_deref()).await?))
}

/// Deletes a workspace (owner only). Its files are moved aside under `DATA_DIR/deleted/`.
#[utoipa::path(delete, path = "/api/workspaces/{slug}", tag = "workspaces",
    params(("slug" = String, Path)),
    responses((status = 204, description = "Deleted"),
        (status = 403, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn delete_workspace(State(ctx): State<Ctx>, auth: AuthUser, Path(slug): Path<String>) -> Result<StatusCode> {
    let owner = workspaces::access(&ctx, &auth.user, &slug).await?.owner()?;
    workspaces::delete(&ctx, owner).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The workspace's members.
#[utoipa::path(get, path = "/api/workspaces/{slug}/members", tag = "workspaces",
    params(("slug" = String, Path), PagingQuery),
    responses((status = 200, body = List<Member>), (status = 400, body = Problem),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn list_members(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(slug): Path<String>,
    paging: Paging,
) -> Result<axum::Json<List<Member>>> {
    let access = workspaces::access(&ctx, &auth.user, &slug).await?;
    let (items, total) = workspaces::members(&ctx, &access, paging).await?;
    Ok(axum::Json(List::new(items, total)))
}

/// Adds the account with this email (owner only).
#[utoipa::path(post, path = "/api/workspaces/{slug}/members", tag = "workspaces", request_body = AddMember,
    params(("slug" = String, Path)),
    responses((status = 201, body = Member), (status = 400, body = Problem),
        (status = 403, body = Problem), (status = 404, body = Problem, description = "No such workspace, or no account with that email"),
        (status = 409, body = Problem, description = "Already a member"), (status = 422, body = Problem), (status = 503, body = Problem)))]
async fn add_member(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(slug): Path<String>,
    Json(req): Json<AddMember>,
) -> Result<(StatusCode, axum::Json<Member>)> {
    let owner = workspaces::access(&ctx, &auth.user, &slug).await?.owner()?;
    let member = workspaces::add_member(&ctx, &owner, &req.email, req.role).await?;
    Ok((StatusCode::CREATED, axum::Json(member)))
}

/// Removes a member (an owner removes anyone; a member only itself). The last owner
/// cannot be removed.
#[utoipa::path(delete, path = "/api/workspaces/{slug}/members/{member_id}", tag = "workspaces",
    params(("slug" = String, Path), ("member_id" = i64, Path, description = "The member's user id")),
    responses((status = 204, description = "Removed"), (status = 400, body = Problem, description = "The last owner"),
        (status = 403, body = Problem), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn remove_member(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path((slug, member_id)): Path<(String, i64)>,
) -> Result<StatusCode> {
    let removal = workspaces::access(&ctx, &auth.user, &slug).await?.removal(member_id)?;
    workspaces::remove_member(&ctx, removal).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Makes this workspace the default for all of the caller's credentials.
#[utoipa::path(post, path = "/api/workspaces/{slug}/switch", tag = "workspaces",
    params(("slug" = String, Path)),
    responses((status = 200, body = Switched), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn switch_workspace(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(slug): Path<String>,
) -> Result<axum::Json<Switched>> {
    let access = workspaces::access(&ctx, &auth.user, &slug).await?;
    Ok(axum::Json(Switched { default_workspace: workspaces::switch(&ctx, &access).await? }))
}

/// A zip of the workspace's live pages, one markdown file each, laid out like the page
/// tree. Streamed.
#[utoipa::path(get, path = "/api/workspaces/{slug}/export", tag = "workspaces",
    params(("slug" = String, Path)),
    responses((status = 200, content_type = "application/zip", body = Vec<u8>),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn export_workspace(
    State(ctx): State<Ctx>,
    auth: AuthUser,
    Path(slug): Path<String>,
) -> Result<axum::response::Response> {
    use axum::response::IntoResponse;
    let access = workspaces::access(&ctx, &auth.user, &slug).await?;
    let stream = crate::core::export::zip_stream(&ctx, &access).await?;
    let disposition = format!("attachment; filename=\"{}.zip\"", access.slug());
    Ok((
        [
            (axum::http::header::CONTENT_TYPE, "application/zip".to_owned()),
            (axum::http::header::CONTENT_DISPOSITION, disposition),
        ],
        axum::body::Body::from_stream(stream),
    )
        .into_response())
}
