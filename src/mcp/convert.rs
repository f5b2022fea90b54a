//! What a tool call returns: its answer as JSON (as structured content and
//! as the same JSON in a text block, for clients that read only text), or
//! its failure as one line in a result marked `isError`.
//!
//! The MCP specification (revision 2025-11-25, "Tools", error handling,
//! read 2026-11-27) keeps protocol errors for requests the server cannot
//! route (an unknown tool, a malformed request) and asks for everything a
//! model could correct, bad arguments included, as a tool execution error,
//! so the agent sees the message and can retry: that is what
//! [`ToolFailure`] becomes.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use crate::text::escape_line;

/// Why a tool call produced no answer, in one line (luminos's own message,
/// as the command line would print it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(super) struct ToolFailure(pub String);

impl ToolFailure {
    /// A failure saying `message` (kept to one line).
    pub(super) fn new(message: impl std::fmt::Display) -> ToolFailure {
        ToolFailure(escape_line(&message.to_string()).into_owned())
    }
}

/// An answer with the warnings its run gave (a model retiring soon), when
/// there were any, beside its own fields.
#[derive(Debug, Serialize)]
pub(super) struct Warned<T> {
    #[serde(flatten)]
    pub answer: T,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The result of a call that answered `answer` or failed.
pub(super) fn tool_result<T: Serialize>(outcome: Result<T, ToolFailure>) -> CallToolResult {
    match outcome.and_then(|answer| {
        serde_json::to_value(answer)
            .map_err(|err| ToolFailure::new(format!("the answer could not be written: {err}")))
    }) {
        Ok(answer) => CallToolResult::structured(answer),
        Err(failure) => CallToolResult::error(vec![ContentBlock::text(failure.0)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_json_twice_and_a_failure_one_marked_line() {
        let ok = tool_result(Ok(Warned {
            answer: serde_json::json!({"a": 1}),
            warnings: Vec::new(),
        }));
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content, Some(serde_json::json!({"a": 1})));
        let wire = serde_json::to_value(&ok).unwrap();
        assert_eq!(wire["content"][0]["text"], "{\"a\":1}");

        let failed = tool_result::<()>(Err(ToolFailure::new("no such\ndirectory")));
        assert_eq!(failed.is_error, Some(true));
        let wire = serde_json::to_value(&failed).unwrap();
        let text = wire["content"][0]["text"].as_str().unwrap();
        assert!(!text.contains('\n'), "{text}");

        let warned = tool_result(Ok(Warned {
            answer: serde_json::json!({"a": 1}),
            warnings: vec!["retiring".to_string()],
        }));
        assert_eq!(
            warned.structured_content,
            Some(serde_json::json!({"a": 1, "warnings": ["retiring"]}))
        );
    }
}
