//! The MCP request handler: capabilities, protocol revisions, and the methods Cairn
//! answers (tools, resources, completion). It is built per request (the transport is
//! stateless) and reads the caller that [`super::guard`] put into the request.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use super::{resources, tools};
use crate::core::credentials::Authenticated;
use crate::core::users::User;
use crate::core::{Ctx, VERSION};

/// The revisions understood: two with `initialize`, and 2026-07-28 (`server/discover`,
/// no handshake). `initialize` agrees on the client's revision when it is one of these,
/// else on the newest with a handshake.
static VERSIONS: [ProtocolVersion; 3] =
    [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

const INSTRUCTIONS: &str = "Cairn is a wiki of markdown pages in workspaces; every save is a revision. \
Find pages with `search` (mode `hybrid` for questions), read them with `get_page`, and pass the page's \
`revision` as `base_revision` to `update_page` so a concurrent edit is never overwritten; \
`append_to_page` adds to a page safely. `[[slug]]` links pages and `#tag` tags them. Deleted pages go \
to the trash and can be restored. Tools act on your default workspace unless given `workspace`.";

pub(super) struct CairnMcp {
    pub ctx: Ctx,
}

/// The user the guard authenticated. Every method but the exempt ones passes the guard,
/// so a missing caller is a bug, answered as an internal error.
fn caller(cx: &RequestContext<RoleServer>) -> Result<User, McpError> {
    cx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<Authenticated>())
        .map(|a| a.user.clone())
        .ok_or_else(|| McpError::internal_error("request reached a tool without a credential", None))
}

impl ServerHandler for CairnMcp {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_resources().enable_completions().build();
        ServerConfig::new(capabilities)
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
            .with_server_info(Implementation::new("cairn", VERSION).with_title("Cairn"))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&VERSIONS)
    }

    async fn list_tools(
        &self,
        _req: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::TOOLS.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::find(name)
    }

    async fn call_tool(
        &self,
        req: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let user = caller(&cx)?;
        Ok(tools::call(&self.ctx, &user, &req.name, req.arguments).await?.into())
    }

    async fn list_resources(
        &self,
        req: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let user = caller(&cx)?;
        resources::list(&self.ctx, &user, req.as_ref().and_then(|r| r.cursor.as_deref())).await
    }

    async fn list_resource_templates(
        &self,
        _req: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        req: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let user = caller(&cx)?;
        Ok(resources::read(&self.ctx, &user, &req.uri).await?.into())
    }

    async fn complete(
        &self,
        req: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let user = caller(&cx)?;
        resources::complete(&self.ctx, &user, &req).await
    }
}
