//! The 27 MCP tools (docs/mcp.md): what `tools/list` shows, and `tools/call`, where each
//! tool is a few lines that read its arguments and call the core function its HTTP
//! route calls — no rule lives here.

use std::sync::{Arc, LazyLock};

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde::Serialize;
use serde::de::DeserializeOwned;
use utoipa::ToSchema;

use super::args::*;
use super::{result, schema};
use crate::core::Ctx;
use crate::core::intel::{self, Graph, Insights, LinkSuggestions, Summary, TagSuggestions};
use crate::core::pages::{
    self, Diff, HistoryEntry, NewPage, Page, PageRef, PageSummary, PageUpdate, Revision, TagCount, TrashEntry,
    TreeNode, history,
};
use crate::core::search::{self, SearchRequest, SearchResults};
use crate::core::users::User;
use crate::core::workspaces::{self, Access, WorkspaceInfo};
use crate::error::{Error, Result};
use crate::ids::Slug;

/// A list answer: a tool's result is always an object.
#[derive(Serialize, ToSchema)]
pub(crate) struct Items<T: ToSchema> {
    pub items: Vec<T>,
    /// Number of items across all pages.
    pub total: i64,
}

impl<T: ToSchema> Items<T> {
    fn all(items: Vec<T>) -> Self {
        let total = items.len() as i64;
        Items { items, total }
    }
}

/// What `delete_page` answers (the HTTP route answers 204).
#[derive(Serialize, ToSchema)]
pub(crate) struct Trashed {
    pub slug: String,
    /// Always true: the page is in the trash.
    pub trashed: bool,
}

/// What `purge_from_trash` answers (the HTTP route answers 204).
#[derive(Serialize, ToSchema)]
pub(crate) struct Purged {
    pub slug: String,
    /// Always true: the page and its history are gone.
    pub purged: bool,
}

/// How a tool treats the wiki, for its annotations.
#[derive(Clone, Copy)]
enum Effect {
    Read,
    /// Writes: may it destroy what was there, and is calling it twice the same as once?
    Write {
        destructive: bool,
        idempotent: bool,
    },
}

const READ: Effect = Effect::Read;

fn tool<A: ToSchema, O: ToSchema>(name: &'static str, title: &str, effect: Effect, description: &'static str) -> Tool {
    make(name, title, effect, description, schema::of::<A>(), schema::of::<O>())
}

/// A tool answering `{items, total}` of `T`.
fn list_tool<A: ToSchema, T: ToSchema>(name: &'static str, title: &str, description: &'static str) -> Tool {
    make(name, title, READ, description, schema::of::<A>(), schema::of_generic::<Items<T>, T>())
}

fn make(
    name: &'static str,
    title: &str,
    effect: Effect,
    description: &'static str,
    input: Arc<JsonObject>,
    output: Arc<JsonObject>,
) -> Tool {
    let annotations = match effect {
        Effect::Read => ToolAnnotations::new().read_only(true),
        Effect::Write { destructive, idempotent } => {
            ToolAnnotations::new().read_only(false).destructive(destructive).idempotent(idempotent)
        }
    };
    Tool::new(name, description, input)
        .with_title(title)
        .with_raw_output_schema(output)
        .annotate(annotations.open_world(false))
}

/// Whether a write may destroy what was there, and whether calling it twice is the same
/// as once.
const fn w(destructive: bool, idempotent: bool) -> Effect {
    Effect::Write { destructive, idempotent }
}

/// Arguments of the wrong shape are the caller's protocol error, not a tool failure.
fn parse<A: DeserializeOwned>(tool: &str, args: Option<JsonObject>) -> Result<A, McpError> {
    serde_json::from_value(serde_json::Value::Object(args.unwrap_or_default()))
        .map_err(|e| McpError::invalid_params(format!("invalid arguments for {tool}: {e}"), None))
}

async fn access(ctx: &Ctx, user: &User, ws: Option<&str>) -> Result<Access> {
    workspaces::access_or_default(ctx, user, ws).await
}

/// Runs tool `name` as `user` and turns its answer or its error into the tool's result. A
/// page named by an old slug (a renamed page's) is acted on where it is now, and the
/// result says its current slug (CONTRACT §5).
pub(crate) async fn call(
    ctx: &Ctx,
    user: &User,
    name: &str,
    args: Option<JsonObject>,
) -> Result<CallToolResult, McpError> {
    let again = args.as_ref().filter(|a| a.contains_key("slug")).cloned();
    let mut outcome = run(ctx, user, name, args).await?;
    let moved = outcome.as_ref().err().and_then(Error::moved).map(|(from, to)| (from.to_owned(), to.to_owned()));
    if let (Some((from, to)), Some(mut args)) = (moved, again) {
        args.insert("slug".to_owned(), serde_json::Value::String(to.clone()));
        outcome = run(ctx, user, name, Some(args)).await?.map(|r| result::moved(r, &from, &to));
    }
    Ok(outcome.unwrap_or_else(result::fail))
}

/// Every tool, once: what `tools/list` shows (name, title, annotations, description, the
/// argument and answer types' schemas) and what `tools/call` runs, so the two cannot
/// drift apart. `$ctx` and `$user` name the caller's context and account in the bodies.
macro_rules! tools {
    ($ctx:ident, $user:ident; $( $make:ident::<$args:ty, $out:ty>($name:literal, $($meta:expr),+ $(,)?) => |$a:pat_param| $body:expr; )*) => {
        /// Every tool, in the order `tools/list` shows them.
        pub(crate) static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(|| vec![$( $make::<$args, $out>($name, $($meta),+) ),*]);

        /// Runs tool `name` as `user`: reads its arguments (a protocol error if they do not
        /// fit), runs it, and answers its result or the core's error.
        async fn run($ctx: &Ctx, $user: &User, name: &str, args: Option<JsonObject>) -> Result<Result<CallToolResult>, McpError> {
            match name {
                $( $name => {
                    let $a: $args = parse(name, args)?;
                    let out: Result<_> = async { $body }.await;
                    Ok(out.map(|value| result::ok(&value)))
                } )*
                _ => Err(McpError::invalid_params(format!("unknown tool: {name}"), None)),
            }
        }
    };
}

tools! { ctx, user;
    tool::<NoArgs, User>(
        "whoami",
        "Who am I",
        READ,
        "The account the token belongs to: id, email, name, language and default workspace. Use it to learn which workspace tools use when `workspace` is left out.",
    ) => |_a| Ok(user.clone());
    list_tool::<Paged<WsArgs>, WorkspaceInfo>(
        "list_workspaces",
        "List workspaces",
        "The workspaces you belong to, with your role in each. Pass a workspace's slug as `workspace` to any other tool.",
    ) => |a| {
        let (items, total) = workspaces::list(ctx, user, a.paging()?).await?;
        Ok(Items { items, total })
    };
    list_tool::<WsArgs, TreeNode>(
        "list_pages",
        "List pages as a tree",
        "Every live page of a workspace as a tree (slug, title, children). Use it to see how the wiki is organised; use search to find pages by content.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        Ok(Items::all(pages::tree(ctx, &access).await?))
    };
    list_tool::<Paged<RecentArgs>, PageSummary>(
        "list_recent_pages",
        "List recently updated pages",
        "Live pages, most recently updated first, optionally only those with a tag; paged with limit/offset. Returns summaries without content: call get_page for the text.",
    ) => |a| {
        let paging = a.paging()?;
        let access = access(ctx, user, a.args.workspace.as_deref()).await?;
        let (items, total) = pages::notes(ctx, &access, a.args.tag.as_deref(), paging).await?;
        Ok(Items { items, total })
    };
    tool::<PageArgs, Page>(
        "get_page",
        "Get a page",
        READ,
        "One page: its markdown content, title, tags, outgoing links, parent and current revision. Keep `revision` and pass it as `base_revision` to update_page so a concurrent edit is not overwritten.",
    ) => |a| pages::get(ctx, &access(ctx, user, a.workspace.as_deref()).await?, &pages::named(&a.slug)?).await;
    tool::<CreateArgs, Page>(
        "create_page",
        "Create a page",
        w(false, false),
        "Creates a page from markdown. Give a title or a slug (the slug is derived from the title otherwise); `[[slug]]` in the content links to another page and `#tag` tags it. A slug derived from the title that is taken becomes the first free `-2`, `-3`…; a slug given and taken (also by a page in the trash) fails. Returns the new page, with its slug.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        let req = NewPage { title: a.title, slug: a.slug, content: a.content, parent: a.parent };
        pages::create(ctx, &access, user, req).await
    };
    tool::<UpdateArgs, Page>(
        "update_page",
        "Update a page",
        w(true, true),
        "Replaces a page's content and/or title; every save is a revision in its history. Pass the `revision` you read as `base_revision`: if the page changed since, the call fails with the current revision (re-read and retry), or with `merge: true` your edit is merged three-way (overlapping changes fail with the merged text). To add to a page, append_to_page is simpler.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        let req = PageUpdate {
            content: a.content,
            title: a.title,
            base_revision: a.base_revision,
            merge: a.merge,
            message: a.message,
        };
        pages::update(ctx, &access, user, &pages::named(&a.slug)?, req).await
    };
    tool::<AppendArgs, Page>(
        "append_to_page",
        "Append to a page",
        w(false, false),
        "Adds markdown to the end of a page after a blank line, without reading it first and without overwriting a concurrent edit. Good for logs, journals and adding notes. Returns the updated page.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        pages::append(ctx, &access, user, &pages::named(&a.slug)?, &a.text, a.message).await
    };
    tool::<DeleteArgs, Trashed>(
        "delete_page",
        "Move a page to the trash",
        w(true, true),
        "Moves a page to the trash (restore_from_trash brings it back; purge_from_trash removes it for good). A page with live children fails unless `recursive: true`, which trashes the subtree.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        pages::delete(ctx, &access, user, &pages::named(&a.slug)?, a.recursive).await?;
        Ok(Trashed { slug: a.slug, trashed: true })
    };
    tool::<MoveArgs, Page>(
        "move_page",
        "Move a page",
        w(false, true),
        "Puts a page (with its subtree) under another page, or at the top level when `parent` is absent or null. Moving a page into its own subtree fails.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        let slug = pages::named(&a.slug)?;
        let parent = a.parent.as_deref().map(|p| Slug::lookup(p, Error::parent_not_found)).transpose()?;
        pages::move_page(ctx, &access, user, &slug, parent.as_ref()).await
    };
    tool::<RenameArgs, Page>(
        "rename_page",
        "Rename a page",
        w(false, true),
        "Changes a page's slug (and optionally its title). The history follows the page and every `[[link]]` to it in other pages is rewritten. Fails if the new slug is taken.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        let new_slug = Slug::parse(&a.new_slug)?;
        pages::rename(ctx, &access, user, &pages::named(&a.slug)?, &new_slug, a.title.as_deref()).await
    };
    list_tool::<PageArgs, PageSummary>(
        "list_children",
        "List a page's children",
        "The direct live children of a page, in tree order.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        Ok(Items::all(pages::children(ctx, &access, &pages::named(&a.slug)?).await?))
    };
    list_tool::<PageArgs, PageRef>(
        "get_backlinks",
        "List backlinks",
        "The live pages that link to this page with `[[slug]]`. Use it to see what depends on a page before changing or deleting it.",
    ) => |a| Ok(Items::all(pages::backlinks(ctx, &access(ctx, user, a.workspace.as_deref()).await?, &pages::named(&a.slug)?).await?));
    list_tool::<Paged<HistoryArgs>, HistoryEntry>(
        "get_page_history",
        "List a page's revisions",
        "A page's revisions, newest first: sha, message, author and time; paged with limit/offset. Pass a sha to get_page_revision, diff_page_revisions or restore_page_revision.",
    ) => |a| {
        let paging = a.paging()?;
        let access = access(ctx, user, a.args.workspace.as_deref()).await?;
        let (items, total) = history::list(ctx, &access, &pages::named(&a.args.slug)?, paging).await?;
        Ok(Items { items, total })
    };
    tool::<RevisionArgs, Revision>(
        "get_page_revision",
        "Get a revision",
        READ,
        "The content and title of a page at one revision of its history.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        history::get(ctx, &access, &pages::named(&a.slug)?, &a.sha).await
    };
    tool::<DiffArgs, Diff>(
        "diff_page_revisions",
        "Diff two revisions",
        READ,
        "A unified diff of a page from an earlier revision (`against`, default: the one before) to `sha`, with added and removed line counts.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        history::diff(ctx, &access, &pages::named(&a.slug)?, &a.sha, a.against.as_deref()).await
    };
    tool::<RevisionArgs, Page>(
        "restore_page_revision",
        "Restore a revision",
        w(true, false),
        "Makes an earlier revision's content the page's current content, as a new revision (history is kept, nothing is rewritten).",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        pages::restore_revision(ctx, &access, user, &pages::named(&a.slug)?, &a.sha, false).await
    };
    list_tool::<Paged<WsArgs>, TrashEntry>(
        "list_trash",
        "List the trash",
        "Trashed pages, most recently trashed first, with who trashed them and when; paged with limit/offset.",
    ) => |a| {
        let paging = a.paging()?;
        let access = access(ctx, user, a.args.workspace.as_deref()).await?;
        let (items, total) = pages::trash(ctx, &access, paging).await?;
        Ok(Items { items, total })
    };
    tool::<PageArgs, Page>(
        "restore_from_trash",
        "Restore from the trash",
        w(false, true),
        "Brings a trashed page back (to the top level if its parent is gone). Returns the page.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        pages::restore_from_trash(ctx, &access, user, &pages::named_in_trash(&a.slug)?).await
    };
    tool::<PageArgs, Purged>(
        "purge_from_trash",
        "Purge from the trash",
        w(true, true),
        "Removes a trashed page for good, with its history. Cannot be undone. Only pages in the trash can be purged.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        pages::purge(ctx, &access, user, &pages::named_in_trash(&a.slug)?).await?;
        Ok(Purged { slug: a.slug, purged: true })
    };
    tool::<Paged<SearchArgs>, SearchResults>(
        "search",
        "Search pages",
        READ,
        "Finds pages. `keyword` (default) ranks full-text matches, titles first, with a highlighted snippet; `semantic` finds pages by meaning even without shared words; `hybrid` fuses both and is the best choice for questions. `engine` in the answer says what ran.",
    ) => |a| {
        let paging = a.paging()?;
        let access = access(ctx, user, a.args.workspace.as_deref()).await?;
        let req = SearchRequest { q: &a.args.query, mode: a.args.mode.as_deref(), tag: a.args.tag.as_deref(), paging };
        search::search(ctx, &access, req).await
    };
    tool::<PageArgs, LinkSuggestions>(
        "suggest_links",
        "Suggest links",
        READ,
        "Pages this page could link to: similar pages it does not link yet, and other pages' titles mentioned in its text without a link.",
    ) => |a| intel::suggest_links(ctx, &access(ctx, user, a.workspace.as_deref()).await?, &pages::named(&a.slug)?).await;
    tool::<PageArgs, TagSuggestions>(
        "suggest_tags",
        "Suggest tags",
        READ,
        "Tags this page could have: tags of similar pages first, then salient terms. Never a tag the page already has.",
    ) => |a| intel::suggest_tags(ctx, &access(ctx, user, a.workspace.as_deref()).await?, &pages::named(&a.slug)?).await;
    tool::<SummaryArgs, Summary>(
        "summarize_page",
        "Summarize a page",
        READ,
        "An extractive summary: the page's most telling sentences, verbatim and in page order (no code, tables or front matter).",
    ) => |a| {
        let sentences = intel::Sentences::parse(a.sentences)?;
        intel::summary(ctx, &access(ctx, user, a.workspace.as_deref()).await?, &pages::named(&a.slug)?, sentences).await
    };
    tool::<WsArgs, Insights>(
        "get_insights",
        "Workspace insights",
        READ,
        "The state of a workspace: orphan pages, broken links (wanted pages), most linked pages, stale pages, tag counts and topical clusters. Use it to find what needs care.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        intel::insights(ctx, &access).await
    };
    tool::<WsArgs, Graph>(
        "get_graph",
        "Link graph",
        READ,
        "The wikilink graph of a workspace: nodes (pages), edges (links between them) and broken edges (links to pages that do not exist).",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        intel::graph(ctx, &access).await
    };
    list_tool::<WsArgs, TagCount>(
        "list_tags",
        "List tags",
        "Every tag on live pages with how many pages carry it, most used first. Pass one as `tag` to list_recent_pages or search.",
    ) => |a| {
        let access = access(ctx, user, a.workspace.as_deref()).await?;
        Ok(Items::all(pages::tags(ctx, &access).await?))
    };
}

/// The tool named `name`, if there is one.
pub(crate) fn find(name: &str) -> Option<Tool> {
    TOOLS.iter().find(|t| t.name == name).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_annotated_and_has_object_schemas() {
        assert_eq!(TOOLS.len(), 27);
        for t in TOOLS.iter() {
            let a = t.annotations.as_ref().expect("annotations");
            let read_only = a.read_only_hint.expect("readOnlyHint");
            if !read_only {
                assert!(a.destructive_hint.is_some() && a.idempotent_hint.is_some(), "{}", t.name);
            }
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert_eq!(t.output_schema.as_ref().expect("outputSchema")["type"], "object", "{}", t.name);
            assert!(t.description.as_ref().is_some_and(|d| d.len() > 40), "{}", t.name);
            let dangling = schema::dangling_refs(&t.input_schema);
            assert!(dangling.is_empty(), "{} input: {dangling:?}", t.name);
            let dangling = schema::dangling_refs(t.output_schema.as_ref().unwrap());
            assert!(dangling.is_empty(), "{} output: {dangling:?}", t.name);
        }
    }
}
