//! The OpenAPI description of `POST /api/mcp`. The route itself is the MCP door's
//! (`crate::mcp`), mounted beside this router; this only documents it, so the API
//! document lists every route.

use serde::Serialize;
use utoipa::ToSchema;

use crate::http::Problem;

/// A JSON-RPC 2.0 message (request, notification or response) of the Model Context
/// Protocol.
#[derive(Serialize, ToSchema)]
pub(crate) struct JsonRpcMessage {
    #[schema(example = "2.0")]
    pub jsonrpc: String,
    /// A string or a number (absent on notifications).
    pub id: Option<serde_json::Value>,
    #[schema(example = "tools/call")]
    pub method: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub params: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub result: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    pub error: Option<serde_json::Value>,
}

/// The Model Context Protocol over Streamable HTTP (stateless; answers `application/json`).
/// `initialize` and `server/discover` need no credential; every other method needs a
/// Bearer token (a session cookie is not enough). Send `Accept: application/json,
/// text/event-stream`. See `docs/mcp.md` for the 27 tools.
#[utoipa::path(post, path = "/api/mcp", tag = "mcp", request_body = JsonRpcMessage, security((), ("pat" = []), ("jwt" = [])),
    responses((status = 200, body = JsonRpcMessage, description = "The JSON-RPC response"),
        (status = 202, description = "A notification was accepted"),
        (status = 400, description = "Not a JSON-RPC message, or an unsupported MCP-Protocol-Version"),
        (status = 401, body = Problem, description = "A method other than initialize without a Bearer token"),
        (status = 403, body = Problem, description = "Host or Origin not allowed"),
        (status = 405, body = Problem, description = "GET and DELETE: the server is stateless"),
        (status = 406, description = "Accept does not allow application/json and text/event-stream"),
        (status = 413, body = Problem), (status = 415, description = "Content-Type is not application/json"),
        (status = 422, body = Problem, description = "The body is not JSON (nested past any message's depth, say)")))]
#[allow(dead_code)] // Documentation only: the MCP door serves the route.
pub(crate) async fn mcp_endpoint() {}
