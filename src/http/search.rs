//! `GET /api/search`: one operation, three modes (docs/api.md, "Search").

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::Ctx;
use crate::core::paging::Paging;
use crate::core::search::{self, SearchRequest, SearchResults};
use crate::error::Result;
use crate::http::Problem;
use crate::http::extract::PagingQuery;
use crate::http::scope::{Member, names_workspace};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new().routes(routes!(search_pages))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SearchQuery {
    /// What to look for: words (of any script), `"a phrase"`, `-excluded`; the last word
    /// also matches as a prefix while it is being typed.
    pub q: Option<String>,
    /// `keyword` (default), `semantic` or `hybrid`.
    pub mode: Option<String>,
    /// Only pages with this tag.
    pub tag: Option<String>,
    /// Workspace slug (default: the caller's default workspace).
    pub ws: Option<String>,
}

names_workspace!(SearchQuery);

/// Searches the live pages of a workspace, best first, with highlighted snippets.
#[utoipa::path(get, path = "/api/search", tag = "search", params(SearchQuery, PagingQuery),
    responses((status = 200, body = SearchResults),
        (status = 400, body = Problem, description = "Empty q, unknown mode, a mode not available, bad paging"),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn search_pages(
    State(ctx): State<Ctx>,
    m: Member<SearchQuery>,
    paging: Paging,
) -> Result<axum::Json<SearchResults>> {
    let q = m.query;
    let req =
        SearchRequest { q: q.q.as_deref().unwrap_or_default(), mode: q.mode.as_deref(), tag: q.tag.as_deref(), paging };
    Ok(axum::Json(search::search(&ctx, &m.access, req).await?))
}
