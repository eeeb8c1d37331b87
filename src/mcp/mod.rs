//! The MCP door (docs/mcp.md): `POST /api/mcp`, the Model Context Protocol over
//! Streamable HTTP on the official Rust SDK (`rmcp`), stateless, answering
//! `application/json`. Each tool calls the same core function as its HTTP route.
//!
//! - [`guard`]: method, `Host`, `Origin`, body size and credential checks.
//! - [`direct`]: a plain `tools/call` answered without rmcp's per-request service.
//! - [`server`]: the protocol handler (capabilities, revisions, methods).
//! - [`tools`]: the 27 tools; [`args`] their arguments; [`schema`] their JSON Schemas;
//!   [`result`] how answers and failures are shaped.
//! - [`resources`]: pages as resources, and completion (beyond the tools).

mod args;
mod direct;
mod guard;
mod resources;
mod result;
mod schema;
mod server;
pub(crate) mod tools;

use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::core::Ctx;

/// Largest request body: a 1 MiB page, JSON-escaped, inside a JSON-RPC message.
const BODY_LIMIT: usize = 8 * 1024 * 1024;

/// The `/api/mcp` route.
pub(crate) fn router(ctx: &Ctx) -> Router<Ctx> {
    let factory_ctx = ctx.clone();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        // The guard checks Host and Origin first, answering problem+json.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(BODY_LIMIT);
    let service = StreamableHttpService::new(
        move || Ok(server::CairnMcp { ctx: factory_ctx.clone() }),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route("/api/mcp", axum::routing::any_service(service))
        .layer(axum::middleware::from_fn_with_state(ctx.clone(), guard::guard))
}
