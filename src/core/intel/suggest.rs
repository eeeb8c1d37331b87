//! Suggestions for one page: links worth adding (similar pages, and other pages whose
//! titles the page mentions without linking them) and tags worth adding (tags of similar
//! pages first, then the page's most telling words).

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, MatchKind};
use serde::Serialize;
use utoipa::ToSchema;

use super::Mode;
use crate::core::Ctx;
use crate::core::pages::{self, rows};
use crate::core::semantic;
use crate::core::workspaces::Access;
use crate::error::Result;
use crate::ids::Slug;
use crate::markdown;

/// Suggestions answered at most.
const MAX_SUGGESTIONS: usize = 10;
/// Similar pages whose tags are offered.
const TAG_NEIGHBOURS: usize = 10;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct LinkSuggestion {
    pub slug: String,
    pub title: String,
    /// Higher is better: similarity in 0–1, plus 1 when the page's title is mentioned.
    pub score: f64,
    /// Why: `mentions "Title"`, `similar content`, or both.
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct LinkSuggestions {
    pub mode: Mode,
    pub items: Vec<LinkSuggestion>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TagSuggestion {
    pub tag: String,
    /// Tags of similar pages score above 0.5, salient words below.
    pub score: f64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub(crate) struct TagSuggestions {
    pub mode: Mode,
    pub items: Vec<TagSuggestion>,
}

/// Live pages of a workspace: id → (slug, title).
async fn live_pages(ctx: &Ctx, ws_id: i64) -> Result<HashMap<i64, (String, String)>> {
    let briefs = rows::live_briefs(&mut *ctx.db.pool.acquire().await?, ws_id).await?;
    Ok(briefs.into_iter().map(|b| (b.id, (b.slug, b.title))).collect())
}

/// Ids of the live pages whose titles `text` mentions as whole words, with the title.
fn mentions(text: &str, pages: &HashMap<i64, (String, String)>, skip: &HashSet<i64>) -> HashMap<i64, String> {
    let candidates: Vec<(i64, String)> = pages
        .iter()
        .filter(|(id, (_, title))| {
            // A title of one short word or a stop word would be "mentioned" everywhere.
            let t = title.trim().to_lowercase();
            !skip.contains(id) && t.chars().count() >= 3 && !crate::text::is_stop_word(&t)
        })
        .map(|(id, (_, title))| (*id, title.trim().to_lowercase()))
        .collect();
    if candidates.is_empty() {
        return HashMap::new();
    }
    let Ok(ac) =
        AhoCorasick::builder().match_kind(MatchKind::LeftmostLongest).build(candidates.iter().map(|(_, t)| t.as_str()))
    else {
        return HashMap::new();
    };
    let hay = text.to_lowercase();
    let word_char = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let mut found = HashMap::new();
    for m in ac.find_iter(&hay) {
        let before = hay[..m.start()].chars().next_back();
        let after = hay[m.end()..].chars().next();
        if !word_char(before) && !word_char(after) {
            let (id, _) = &candidates[m.pattern().as_usize()];
            found.insert(*id, pages[id].1.clone());
        }
    }
    found
}

/// Pages worth linking from `slug` that it does not link yet.
pub(crate) async fn suggest_links(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<LinkSuggestions> {
    let (ids, page) = pages::read::visible(ctx, access, slug).await?;
    let live = live_pages(ctx, ids.workspace).await?;
    let linked: HashSet<&str> = page.links.iter().map(String::as_str).collect();
    let skip: HashSet<i64> =
        live.iter().filter(|(id, (s, _))| **id == ids.page || linked.contains(s.as_str())).map(|(id, _)| *id).collect();
    let (similar, mode) = super::similar_pages(ctx, ids.workspace, ids.page).await?;
    let parsed = markdown::parse(&page.content);
    let mentioned = mentions(&parsed.text, &live, &skip);

    let mut scored: HashMap<i64, (f64, Vec<String>)> = HashMap::new();
    for (id, title) in &mentioned {
        scored.entry(*id).or_insert((0.0, vec![])).1.push(format!("mentions \"{title}\""));
        scored.get_mut(id).expect("just inserted").0 += 1.0;
    }
    for (id, sim) in similar.into_iter().filter(|(id, _)| !skip.contains(id)) {
        if !live.contains_key(&id) {
            continue;
        }
        let entry = scored.entry(id).or_insert((0.0, vec![]));
        entry.0 += f64::from(sim);
        entry.1.push("similar content".to_owned());
    }
    let mut items: Vec<LinkSuggestion> = scored
        .into_iter()
        .map(|(id, (score, reasons))| {
            let (slug, title) = live[&id].clone();
            LinkSuggestion { slug, title, score, reason: reasons.join(" and ") }
        })
        .collect();
    items.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.slug.cmp(&b.slug)));
    items.truncate(MAX_SUGGESTIONS);
    Ok(LinkSuggestions { mode, items })
}

/// Tags worth adding to `slug`: never one it has.
pub(crate) async fn suggest_tags(ctx: &Ctx, access: &Access, slug: &Slug) -> Result<TagSuggestions> {
    let (ids, page) = pages::read::visible(ctx, access, slug).await?;
    let has: HashSet<String> = page.tags.iter().cloned().collect();
    let (mut similar, mode) = super::similar_pages(ctx, ids.workspace, ids.page).await?;
    similar.truncate(TAG_NEIGHBOURS);
    let salient =
        semantic::fresh(ctx, ids.workspace).await?.read().await.tfidf.top_terms(ids.page, MAX_SUGGESTIONS * 2);
    let mut items: Vec<TagSuggestion> = Vec::new();
    if !similar.is_empty() {
        let ids: Vec<i64> = similar.iter().map(|(id, _)| *id).collect();
        let tags = rows::tags_of_live(&mut *ctx.db.pool.acquire().await?, &ids).await?;
        let sim: HashMap<i64, f32> = similar.iter().copied().collect();
        let total: f32 = similar.iter().map(|(_, s)| s).sum();
        let mut weight: HashMap<String, f32> = HashMap::new();
        for (id, tag) in tags.into_iter().filter(|(_, t)| !has.contains(t)) {
            *weight.entry(tag).or_default() += sim[&id];
        }
        items.extend(weight.into_iter().map(|(tag, w)| TagSuggestion { tag, score: 0.5 + 0.5 * f64::from(w / total) }));
        items.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.tag.cmp(&b.tag)));
    }
    for (word, weight) in salient {
        let Some(tag) = crate::ids::page_tag(&word) else { continue };
        if has.contains(&tag) || items.iter().any(|i| i.tag == tag) || tag.chars().count() < 3 {
            continue;
        }
        items.push(TagSuggestion { tag, score: 0.5 * f64::from(weight.min(1.0)) });
    }
    items.truncate(MAX_SUGGESTIONS);
    Ok(TagSuggestions { mode, items })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_whole_words_and_skip_what_is_linked() {
        let pages: HashMap<i64, (String, String)> = [
            (1, ("kubernetes".to_owned(), "Kubernetes".to_owned())),
            (2, ("k8s-ops".to_owned(), "Ops".to_owned())),
            (3, ("on-call".to_owned(), "On-call rota".to_owned())),
            (4, ("the".to_owned(), "The".to_owned())),
        ]
        .into_iter()
        .collect();
        let text = "Our kubernetes clusters; see the on-call rota. Kubernetesish is not a word. DevOps";
        let found = mentions(text, &pages, &HashSet::new());
        assert_eq!(found.keys().copied().collect::<HashSet<_>>(), [1, 3].into_iter().collect());
        assert!(mentions(text, &pages, &[1, 3].into_iter().collect()).is_empty());
    }
}
