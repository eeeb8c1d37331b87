//! The wikilink graph of a workspace and the insights read from it: orphans, wanted
//! pages (broken links), the most linked pages, stale pages, tag counts and topical
//! clusters. Only live pages count, as sources and as targets: a link to a trashed page
//! is broken, and a trashed page's links link nothing.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;
use utoipa::ToSchema;

use super::Mode;
use super::clusters::{Cluster, clusters};
use crate::core::Ctx;
pub(crate) use crate::core::pages::TagCount;
use crate::core::pages::rows;
use crate::core::semantic;
use crate::core::workspaces::Access;
use crate::error::Result;
use crate::time::Timestamp;

/// Pages listed in each insight list at most.
const LIST_LIMIT: usize = 20;
/// A page not updated for this many days is stale.
pub(crate) const STALE_AFTER_DAYS: i64 = 180;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Node {
    /// The page's slug.
    pub id: String,
    pub title: String,
    pub tags: Vec<String>,
    /// Links in and out, between live pages.
    pub degree: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, ToSchema)]
pub(crate) struct Edge {
    pub source: String,
    pub target: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Graph {
    pub mode: Mode,
    pub nodes: Vec<Node>,
    /// Links between live pages (one per pair and direction; none to itself).
    pub edges: Vec<Edge>,
    /// Links to slugs no live page has.
    pub broken: Vec<Edge>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct PageLink {
    pub slug: String,
    pub title: String,
    /// The parent's slug, or null at the top level (an extension). An orphan with a parent
    /// is still reached from its parent's list of subpages; one without is reached from
    /// nowhere but the tree's top level.
    pub parent: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Linked {
    pub slug: String,
    pub title: String,
    /// Live pages linking to it.
    pub count: usize,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Stale {
    pub slug: String,
    pub title: String,
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Insights {
    pub mode: Mode,
    /// Live pages.
    pub pages: usize,
    /// Words in live pages.
    pub words: usize,
    /// Live pages no other live page links to (the first 20, by title; all of them at
    /// `/api/insights/orphans`).
    pub orphans: Vec<PageLink>,
    /// Links to pages that do not exist ("wanted pages").
    pub broken_links: Vec<Edge>,
    /// Most linked-to pages (the first 20).
    pub most_linked: Vec<Linked>,
    /// Pages not updated for 180 days, oldest first (the first 20).
    pub stale: Vec<Stale>,
    /// Tags of live pages by use.
    pub tags: Vec<TagCount>,
    /// Topical clusters, largest first.
    pub clusters: Vec<Cluster>,
    /// How many items each list has in all (an extension).
    pub totals: Totals,
}

/// The length of each insight list (an extension): the answer's lists stop at 20, and
/// `/api/insights/{list}` pages through all of them.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct Totals {
    pub orphans: usize,
    pub broken_links: usize,
    pub most_linked: usize,
    pub stale: usize,
}

/// Every item of every insight list, in the order they are answered.
pub(crate) struct Lists {
    pub orphans: Vec<PageLink>,
    pub broken_links: Vec<Edge>,
    pub most_linked: Vec<Linked>,
    pub stale: Vec<Stale>,
}

/// The live pages, their links and tags.
struct Wiki {
    pages: Vec<rows::Brief>,
    /// (source slug, target slug), source live, itself excluded.
    links: Vec<(String, String)>,
    tags: Vec<(String, String)>,
}

async fn load(ctx: &Ctx, ws_id: i64) -> Result<Wiki> {
    let mut conn = ctx.db.pool.acquire().await?;
    let pages = rows::live_briefs(&mut conn, ws_id).await?;
    let links = rows::live_links(&mut conn, ws_id).await?;
    let tags = rows::live_tags(&mut conn, ws_id).await?;
    Ok(Wiki { pages, links, tags })
}

impl Wiki {
    fn split_links(&self) -> (Vec<Edge>, Vec<Edge>) {
        let live: HashSet<&str> = self.pages.iter().map(|p| p.slug.as_str()).collect();
        let (mut edges, mut broken) = (Vec::new(), Vec::new());
        for (source, target) in &self.links {
            let e = Edge { source: source.clone(), target: target.clone() };
            if live.contains(target.as_str()) { edges.push(e) } else { broken.push(e) }
        }
        (edges, broken)
    }
}

pub(crate) async fn graph(ctx: &Ctx, access: &Access) -> Result<Graph> {
    let wiki = load(ctx, access.workspace_id()).await?;
    let (edges, broken) = wiki.split_links();
    let mut degree: HashMap<&str, usize> = HashMap::new();
    for e in &edges {
        *degree.entry(e.source.as_str()).or_default() += 1;
        *degree.entry(e.target.as_str()).or_default() += 1;
    }
    let mut tags: HashMap<&str, Vec<String>> = HashMap::new();
    for (slug, tag) in &wiki.tags {
        tags.entry(slug.as_str()).or_default().push(tag.clone());
    }
    let nodes = wiki
        .pages
        .iter()
        .map(|p| Node {
            id: p.slug.clone(),
            title: p.title.clone(),
            tags: tags.remove(p.slug.as_str()).unwrap_or_default(),
            degree: degree.get(p.slug.as_str()).copied().unwrap_or(0),
        })
        .collect();
    Ok(Graph { mode: Mode::Tfidf, nodes, edges, broken })
}

/// The insight lists whole (`/api/insights/{list}` pages through them).
pub(crate) async fn insight_lists(ctx: &Ctx, access: &Access) -> Result<Lists> {
    Ok(lists(ctx, &load(ctx, access.workspace_id()).await?))
}

fn lists(ctx: &Ctx, wiki: &Wiki) -> Lists {
    let (edges, broken_links) = wiki.split_links();
    let mut inbound: HashMap<&str, usize> = HashMap::new();
    for e in &edges {
        *inbound.entry(e.target.as_str()).or_default() += 1;
    }
    let page_link =
        |p: &rows::Brief| PageLink { slug: p.slug.clone(), title: p.title.clone(), parent: p.parent.clone() };
    let mut orphans: Vec<PageLink> =
        wiki.pages.iter().filter(|p| !inbound.contains_key(p.slug.as_str())).map(page_link).collect();
    orphans.sort_by(|a, b| a.title.to_lowercase().cmp(&b.title.to_lowercase()).then_with(|| a.slug.cmp(&b.slug)));

    let by_slug: HashMap<&str, &rows::Brief> = wiki.pages.iter().map(|p| (p.slug.as_str(), p)).collect();
    let mut most_linked: Vec<Linked> = inbound
        .iter()
        .map(|(slug, count)| Linked { slug: slug.to_string(), title: by_slug[slug].title.clone(), count: *count })
        .collect();
    most_linked.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.slug.cmp(&b.slug)));

    let cutoff = crate::time::stored(ctx.clock.now() - chrono::Duration::days(STALE_AFTER_DAYS));
    let mut stale: Vec<Stale> = wiki
        .pages
        .iter()
        .filter(|p| p.updated_at < cutoff)
        .map(|p| Stale { slug: p.slug.clone(), title: p.title.clone(), updated_at: p.updated_at.clone() })
        .collect();
    stale.sort_by(|a, b| a.updated_at.cmp(&b.updated_at).then_with(|| a.slug.cmp(&b.slug)));
    Lists { orphans, broken_links, most_linked, stale }
}

pub(crate) async fn insights(ctx: &Ctx, access: &Access) -> Result<Insights> {
    let ws_id = access.workspace_id();
    let wiki = load(ctx, ws_id).await?;
    let Lists { mut orphans, broken_links, mut most_linked, mut stale } = lists(ctx, &wiki);
    let totals = Totals {
        orphans: orphans.len(),
        broken_links: broken_links.len(),
        most_linked: most_linked.len(),
        stale: stale.len(),
    };
    orphans.truncate(LIST_LIMIT);
    most_linked.truncate(LIST_LIMIT);
    stale.truncate(LIST_LIMIT);

    let mut tag_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, tag) in &wiki.tags {
        *tag_counts.entry(tag.as_str()).or_default() += 1;
    }
    let mut tags: Vec<TagCount> =
        tag_counts.into_iter().map(|(tag, count)| TagCount { tag: tag.to_owned(), count }).collect();
    tags.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.tag.cmp(&b.tag)));

    let index = semantic::fresh(ctx, ws_id).await?;
    let words: usize = index.read().await.words.values().sum();
    let live_ids: HashMap<i64, &str> = wiki.pages.iter().map(|p| (p.id, p.slug.as_str())).collect();
    let clusters = clusters(&index.read().await.tfidf, |id| live_ids.get(&id).map(|s| s.to_string()));
    Ok(Insights {
        mode: Mode::Tfidf,
        pages: wiki.pages.len(),
        words,
        orphans,
        broken_links,
        most_linked,
        stale,
        tags,
        clusters,
        totals,
    })
}
