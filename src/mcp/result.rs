//! Tool results: a success carries the answer twice, as `structuredContent` and as the
//! same JSON in a text block (for clients that read only text); a failure is a result
//! with `isError: true` whose text is the problem+json body the HTTP route would answer
//! (`code`, `detail`, and extras such as `current_revision`).
//!
//! An error result carries no `structuredContent`: clients check structured content
//! against the tool's `outputSchema` even on errors (the TypeScript SDK does), and a
//! problem is not a page.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use crate::error::Error;

pub(super) fn ok<T: Serialize>(value: &T) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(v) => CallToolResult::structured(v),
        Err(e) => fail(Error::internal(e)),
    }
}

pub(super) fn fail(err: Error) -> CallToolResult {
    err.log();
    CallToolResult::error(vec![ContentBlock::text(err.body().to_string())])
}

/// A result for a page named by an old slug: it says where the page is now, in a text
/// block after the answer (whose structured content already carries the current slug
/// where the answer is a page).
pub(super) fn moved(mut result: CallToolResult, from: &str, to: &str) -> CallToolResult {
    let note = format!("The page '{from}' was renamed: its slug is now '{to}'. Use '{to}' from now on.");
    result.content.push(ContentBlock::text(note));
    result
}
