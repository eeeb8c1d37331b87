//! `tools/call` answered directly, without rmcp's per-request service.
//!
//! In stateless mode rmcp builds a service for every request — it spawns a service loop
//! and a handler task and answers through channels. For a one-query tool such as
//! `get_page` that machinery was most of what an MCP read cost beyond the same read by
//! REST (BENCHMARKS.md, "Saves and reads today"). The commonest request — one `tools/call`, from a
//! client on a revision before 2026-07-28, with the headers rmcp expects — is answered
//! here, by the same tool code and with rmcp's own message types, so the answer is what
//! rmcp would send (tests/it/mcp.rs compares the two). Anything else — other methods,
//! batches, per-request versions, `_meta`, unusual headers, unreadable bodies — goes to
//! rmcp unchanged, and rmcp stays the judge of everything but this one shape.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcRequest, ProtocolVersion, ServerJsonRpcMessage,
    ServerResult,
};

use super::tools;
use crate::core::Ctx;
use crate::core::users::User;

/// The first revision whose results carry `resultType` (and per-request versions).
const FIRST_PER_REQUEST_REVISION: &str = "2026-07-28";

/// Whether the headers are those rmcp would accept without comment for a stateless
/// JSON answer: both media types accepted, a JSON body, no SEP-2243 routing headers,
/// and a known revision before 2026-07-28 (or none).
pub(super) fn eligible(headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let accept = text(header::ACCEPT.as_str()).unwrap_or_default();
    let json_body = text(header::CONTENT_TYPE.as_str()).is_some_and(|c| c.starts_with("application/json"));
    let version_ok = match text("mcp-protocol-version") {
        None => headers.get("mcp-protocol-version").is_none(),
        Some(v) => v < FIRST_PER_REQUEST_REVISION && ProtocolVersion::KNOWN_VERSIONS.iter().any(|k| k.as_str() == v),
    };
    accept.contains("application/json")
        && accept.contains("text/event-stream")
        && json_body
        && version_ok
        && !headers.contains_key("mcp-method")
        && !headers.contains_key("mcp-name")
}

/// The answer to a plain `tools/call`, or None when the message is anything else.
pub(super) async fn answer(ctx: &Ctx, user: &User, body: &[u8]) -> Option<Response> {
    let Ok(ClientJsonRpcMessage::Request(JsonRpcRequest { id, request: ClientRequest::CallToolRequest(req), .. })) =
        serde_json::from_slice::<ClientJsonRpcMessage>(body)
    else {
        return None;
    };
    // `_meta` (progress tokens, per-request versions…) is kept in the extensions.
    let params = req.params;
    if !req.extensions.is_empty()
        || params.meta.is_some()
        || params.input_responses.is_some()
        || params.request_state.is_some()
    {
        return None;
    }
    let message: ServerJsonRpcMessage = match tools::call(ctx, user, &params.name, params.arguments).await {
        Ok(result) => {
            let mut result = ServerResult::CallToolResult(result);
            // What rmcp does for a peer before 2026-07-28.
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            JsonRpcMessage::response(result, id)
        }
        Err(e) => JsonRpcMessage::error(e, Some(id)),
    };
    let body = serde_json::to_vec(&message).ok()?;
    let mut res = (StatusCode::OK, body).into_response();
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Some(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call_of(body: &[u8]) -> rmcp::model::CallToolRequest {
        match serde_json::from_slice::<ClientJsonRpcMessage>(body) {
            Ok(ClientJsonRpcMessage::Request(JsonRpcRequest {
                request: ClientRequest::CallToolRequest(req), ..
            })) => req,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_call_with_meta_is_left_to_rmcp() {
        let plain = call_of(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_page"}}"#);
        assert!(plain.extensions.is_empty() && plain.params.meta.is_none());
        // `_meta` lands in the extensions, which `answer` declines.
        let meta = call_of(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{}}}"#);
        assert!(!meta.extensions.is_empty());
    }

    #[test]
    fn only_the_headers_rmcp_takes_as_they_are_are_eligible() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, HeaderValue::from_static(v));
            }
            h
        };
        let base = [("accept", "application/json, text/event-stream"), ("content-type", "application/json")];
        assert!(eligible(&headers(&base)));
        assert!(eligible(&headers(&[base[0], base[1], ("mcp-protocol-version", "2025-11-25")])));
        assert!(!eligible(&headers(&[base[0], base[1], ("mcp-protocol-version", "2026-07-28")])));
        assert!(!eligible(&headers(&[base[0], base[1], ("mcp-protocol-version", "1999-01-01")])));
        assert!(!eligible(&headers(&[base[0], base[1], ("mcp-method", "tools/call")])));
        assert!(!eligible(&headers(&[("accept", "application/json"), base[1]])));
        assert!(!eligible(&headers(&[base[0], ("content-type", "text/plain")])));
    }
}
