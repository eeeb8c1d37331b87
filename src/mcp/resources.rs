//! Pages as MCP resources — an addition beyond the tools, for clients that browse
//! resources rather than call tools: `resources/list` (every live page the user can
//! see, paged), `resources/read` (a page's markdown), one resource template, and
//! `completion/complete` of the template's arguments.
//!
//! A page's URI is `cairn://pages/{workspace}/{slug}`, each segment percent-encoded.
//! The workspace is in the path, not the authority: URL parsers would IDNA-mangle a
//! non-ASCII slug in the host part.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate,
};

use crate::core::Ctx;
use crate::core::pages;
use crate::core::paging::Paging;
use crate::core::users::User;
use crate::core::workspaces;
use crate::error::Error;

const SCHEME: &str = "cairn://pages/";
pub(super) const TEMPLATE: &str = "cairn://pages/{workspace}/{slug}";
const MARKDOWN: &str = "text/markdown";
/// Resources per `resources/list` page.
const PAGE_SIZE: i64 = 100;
/// Everything but RFC 3986's unreserved characters is encoded.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

pub(super) fn uri(workspace: &str, slug: &str) -> String {
    format!("{SCHEME}{}/{}", utf8_percent_encode(workspace, SEGMENT), utf8_percent_encode(slug, SEGMENT))
}

/// `(workspace, slug)` of a page URI.
fn parse(uri: &str) -> Option<(String, String)> {
    let (ws, slug) = uri.strip_prefix(SCHEME)?.split_once('/')?;
    if slug.contains('/') {
        return None;
    }
    let decode = |s: &str| percent_decode_str(s).decode_utf8().ok().map(|c| c.into_owned());
    let (ws, slug) = (decode(ws)?, decode(slug)?);
    (!ws.is_empty() && !slug.is_empty()).then_some((ws, slug))
}

/// A core error as a JSON-RPC error: what the caller may not see is "not found".
fn rpc_error(err: Error, uri: &str) -> McpError {
    if err.is_not_found() {
        McpError::resource_not_found(err.detail, Some(serde_json::json!({ "uri": uri })))
    } else {
        err.log();
        McpError::internal_error(err.detail, None)
    }
}

pub(super) async fn list(ctx: &Ctx, user: &User, cursor: Option<&str>) -> Result<ListResourcesResult, McpError> {
    let offset = match cursor {
        None => 0,
        Some(c) => {
            c.parse::<i64>().ok().filter(|o| *o >= 0).ok_or_else(|| McpError::invalid_params("invalid cursor", None))?
        }
    };
    let (pages, total) =
        pages::member_pages(ctx, user, Paging { limit: PAGE_SIZE, offset }).await.map_err(|e| rpc_error(e, ""))?;
    let next = offset + pages.len() as i64;
    let resources = pages
        .into_iter()
        .map(|p| {
            Resource::new(uri(&p.workspace, &p.slug), format!("{}/{}", p.workspace, p.slug))
                .with_title(p.title)
                .with_mime_type(MARKDOWN)
        })
        .collect();
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = (next < total).then(|| next.to_string());
    Ok(result)
}

pub(super) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(TEMPLATE, "page")
            .with_title("A wiki page")
            .with_description("The markdown of a live page, by workspace slug and page slug.")
            .with_mime_type(MARKDOWN),
    ])
}

pub(super) async fn read(ctx: &Ctx, user: &User, uri: &str) -> Result<ReadResourceResult, McpError> {
    let Some((ws, slug)) = parse(uri) else {
        return Err(McpError::resource_not_found(format!("not a page URI: {uri} (expected {TEMPLATE})"), None));
    };
    let access = workspaces::access(ctx, user, &ws).await.map_err(|e| rpc_error(e, uri))?;
    let named = pages::named(&slug).map_err(|e| rpc_error(e, uri))?;
    let page = match pages::get(ctx, &access, &named).await {
        // An old slug of a renamed page: its contents, under the page's URI now.
        Err(e) if e.moved().is_some() => {
            let now = pages::named(e.moved().map(|(_, to)| to).unwrap_or_default()).map_err(|e| rpc_error(e, uri))?;
            pages::get(ctx, &access, &now).await
        }
        found => found,
    }
    .map_err(|e| rpc_error(e, uri))?;
    let uri = if page.slug == slug { uri.to_owned() } else { self::uri(&ws, &page.slug) };
    Ok(ReadResourceResult::new(vec![ResourceContents::text(page.content, uri).with_mime_type(MARKDOWN)]))
}

/// Values for the template's `workspace` or `slug` argument that start with what was
/// typed; `slug` in the workspace given as context (default: the user's).
pub(super) async fn complete(ctx: &Ctx, user: &User, req: &CompleteRequestParams) -> Result<CompleteResult, McpError> {
    let limit = CompletionInfo::MAX_VALUES as i64;
    let Reference::Resource(r) = &req.r#ref else { return Ok(CompleteResult::default()) };
    if r.uri != TEMPLATE {
        return Ok(CompleteResult::default());
    }
    let typed = req.argument.value.as_str();
    let (values, total) = match req.argument.name.as_str() {
        "slug" => {
            let ws = req.context.as_ref().and_then(|c| c.arguments.as_ref()).and_then(|a| a.get("workspace"));
            let access = workspaces::access_or_default(ctx, user, ws.map(String::as_str)).await;
            let access = access.map_err(|e| rpc_error(e, TEMPLATE))?;
            pages::slugs_starting(ctx, &access, typed, limit).await.map_err(|e| rpc_error(e, TEMPLATE))?
        }
        "workspace" => {
            let (all, _) = workspaces::list(ctx, user, Paging { limit: crate::core::paging::MAX_LIMIT, offset: 0 })
                .await
                .map_err(|e| rpc_error(e, TEMPLATE))?;
            let matching: Vec<String> = all.into_iter().map(|w| w.slug).filter(|s| s.starts_with(typed)).collect();
            let total = matching.len() as i64;
            (matching.into_iter().take(limit as usize).collect(), total)
        }
        _ => (Vec::new(), 0),
    };
    let shown = values.len() as i64;
    let mut info = CompletionInfo::new(values).map_err(|e| McpError::internal_error(e, None))?;
    info.total = u32::try_from(total).ok();
    info.has_more = Some(total > shown);
    Ok(CompleteResult::new(info))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_any_slug() {
        assert_eq!(uri("team", "getting-started"), "cairn://pages/team/getting-started");
        let u = uri("équipe", "東京.notes");
        assert!(u.is_ascii(), "{u}");
        assert_eq!(parse(&u), Some(("équipe".into(), "東京.notes".into())));
        assert_eq!(parse("cairn://pages/team/"), None);
        assert_eq!(parse("file:///etc/passwd"), None);
        assert_eq!(parse("cairn://pages/a/b/c"), None);
    }
}
