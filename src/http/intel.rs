//! Local intelligence routes (docs/api.md, "Intelligence"): suggestions and summaries of one page,
//! insights and the graph of a workspace. Every answer carries `mode`.

use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::core::Ctx;
use crate::core::intel::graph::{Edge, Linked, PageLink, Stale};
use crate::core::intel::{self, Graph, Insights, LinkSuggestions, Summary, TagSuggestions};
use crate::core::paging::Paging;
use crate::error::Result;
use crate::http::extract::PagingQuery;
use crate::http::scope::{Member, OnPage, Ws, names_workspace};
use crate::http::{List, Problem};

pub(crate) fn router() -> OpenApiRouter<Ctx> {
    OpenApiRouter::new()
        .routes(routes!(suggest_links))
        .routes(routes!(suggest_tags))
        .routes(routes!(summary))
        .routes(routes!(insights))
        .routes(routes!(insight_orphans))
        .routes(routes!(insight_broken_links))
        .routes(routes!(insight_most_linked))
        .routes(routes!(insight_stale))
        .routes(routes!(graph))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct SummaryQuery {
    /// Workspace slug (default: the caller's default workspace).
    pub ws: Option<String>,
    /// Sentences wanted, 1 to 50 (default 3).
    #[param(minimum = 1, maximum = 50)]
    pub sentences: Option<i64>,
}

names_workspace!(SummaryQuery);

/// Pages worth linking from this one that it does not link yet: similar pages, and
/// pages whose titles it mentions.
#[utoipa::path(get, path = "/api/pages/{slug}/suggest-links", tag = "intelligence", params(("slug" = String, Path), Ws),
    responses((status = 200, body = LinkSuggestions), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn suggest_links(State(ctx): State<Ctx>, p: OnPage) -> Result<axum::Json<LinkSuggestions>> {
    Ok(axum::Json(intel::suggest_links(&ctx, &p.access, &p.slug).await?))
}

/// Tags worth adding to this page: tags of similar pages first, then its most telling
/// words; never a tag it has.
#[utoipa::path(get, path = "/api/pages/{slug}/suggest-tags", tag = "intelligence", params(("slug" = String, Path), Ws),
    responses((status = 200, body = TagSuggestions), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn suggest_tags(State(ctx): State<Ctx>, p: OnPage) -> Result<axum::Json<TagSuggestions>> {
    Ok(axum::Json(intel::suggest_tags(&ctx, &p.access, &p.slug).await?))
}

/// An extractive summary: sentences taken verbatim from the page's prose, in page order.
#[utoipa::path(get, path = "/api/pages/{slug}/summary", tag = "intelligence", params(("slug" = String, Path), SummaryQuery),
    responses((status = 200, body = Summary), (status = 400, body = Problem, description = "sentences out of range"),
        (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn summary(State(ctx): State<Ctx>, p: OnPage<SummaryQuery>) -> Result<axum::Json<Summary>> {
    let sentences = intel::Sentences::parse(p.query.sentences)?;
    Ok(axum::Json(intel::summary(&ctx, &p.access, &p.slug, sentences).await?))
}

/// Workspace insights: orphans, broken links, most linked, stale pages, tags, clusters.
#[utoipa::path(get, path = "/api/insights", tag = "intelligence", params(Ws),
    responses((status = 200, body = Insights), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn insights(State(ctx): State<Ctx>, m: Member) -> Result<axum::Json<Insights>> {
    Ok(axum::Json(intel::insights(&ctx, &m.access).await?))
}

/// The wikilink graph of the workspace's live pages, with broken links apart.
#[utoipa::path(get, path = "/api/graph", tag = "intelligence", params(Ws),
    responses((status = 200, body = Graph), (status = 404, body = Problem), (status = 503, body = Problem)))]
async fn graph(State(ctx): State<Ctx>, m: Member) -> Result<axum::Json<Graph>> {
    Ok(axum::Json(intel::graph(&ctx, &m.access).await?))
}

/// One insight list whole, a window at a time (an extension): `/api/insights` answers the
/// first 20 of each and their totals.
macro_rules! insight_list {
    ($name:ident, $path:literal, $field:ident, $item:ty, $doc:literal) => {
        #[doc = $doc]
        #[utoipa::path(get, path = $path, tags = ["intelligence", "extension"], params(Ws, PagingQuery),
                                    responses((status = 200, body = List<$item>), (status = 400, body = Problem),
                                        (status = 404, body = Problem), (status = 503, body = Problem)))]
        async fn $name(State(ctx): State<Ctx>, m: Member, paging: Paging) -> Result<axum::Json<List<$item>>> {
            let (items, total) = paging.slice(intel::graph::insight_lists(&ctx, &m.access).await?.$field);
            Ok(axum::Json(List::new(items, total)))
        }
    };
}

insight_list!(
    insight_orphans,
    "/api/insights/orphans",
    orphans,
    PageLink,
    "Every orphan (a live page no other live page links to), by title."
);
insight_list!(
    insight_broken_links,
    "/api/insights/broken-links",
    broken_links,
    Edge,
    "Every link to a page that does not exist, by source."
);
insight_list!(
    insight_most_linked,
    "/api/insights/most-linked",
    most_linked,
    Linked,
    "Every page other pages link to, most linked first."
);
insight_list!(insight_stale, "/api/insights/stale", stale, Stale, "Every page not updated for 180 days, oldest first.");
