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

use crate::ai::InvestigationError;
use crate::ai::ask::AskFailure;
use crate::ai::orchestrator::NotCached;
use crate::config::ConfigError;
use crate::report::Investigation;
use crate::text::escape_line;

/// Why a tool call produced no answer: luminos's own error, as the
/// command line would print it, shown to the client in one line.
#[derive(Debug, thiserror::Error)]
pub(super) enum ToolFailure {
    /// The arguments do not fit the tool's type.
    #[error("{tool}: bad arguments: {source}")]
    BadArguments {
        tool: &'static str,
        source: serde_json::Error,
    },
    /// The arguments, as the command line, do not parse (clap's message
    /// without its usage lines).
    #[error("{}", clap_line(.0))]
    Usage(#[source] clap::Error),
    /// The arguments, as the command line, do not resolve.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The arguments resolved to something other than a target's work.
    #[error("the call did not name a target directory")]
    NoTarget,
    /// `path` is not inside the target.
    #[error("'{path}' is not inside the target '{target}'")]
    Outside { path: String, target: String },
    /// `path` has no row in the investigation.
    #[error(transparent)]
    NotADirectory(#[from] NotADirectory),
    /// The investigation cannot be read back.
    #[error(transparent)]
    NotCached(#[from] NotCached),
    /// The investigation ended the run (or could not start).
    #[error(transparent)]
    Investigation(#[from] InvestigationError),
    /// The investigation ran, and failed: its report's line.
    #[error("{}", .0.line())]
    Failed(Box<Investigation>),
    /// The question got no answer.
    #[error(transparent)]
    Ask(Box<AskFailure>),
    /// Work handed to a blocking thread stopped before it ended.
    #[error("{step} failed: {source}")]
    Stopped {
        step: &'static str,
        source: tokio::task::JoinError,
    },
    /// This server holds the target's run: an `investigate` call of this
    /// session, or of another session of this process, is still running
    /// (the binary's "another luminos run (pid N) ... stop it" would name
    /// the server itself).
    #[error(
        "this MCP server is already investigating this target (an investigate call that has \
         not finished); wait for that call's answer, or cancel it, and call investigate again \
         to resume"
    )]
    ServerBusy,
    /// The server's environment has no credential.
    #[error(
        "luminos needs an Anthropic API key to investigate: set ANTHROPIC_API_KEY (or \
         ANTHROPIC_AUTH_TOKEN) in the MCP server's environment (the env block of its entry in \
         the client's configuration). overview, directory and flags need no key."
    )]
    NoKey,
    /// The client cancelled the investigation, or Ctrl-C stopped it.
    #[error(
        "the investigation was interrupted; what it cached is kept, and investigate resumes it"
    )]
    Interrupted,
    /// The client cancelled the question.
    #[error("the question was cancelled: no answer")]
    Cancelled,
    /// The answer did not serialize.
    #[error("the answer could not be written: {0}")]
    Unwritable(#[source] serde_json::Error),
}

impl From<AskFailure> for ToolFailure {
    fn from(failure: AskFailure) -> ToolFailure {
        ToolFailure::Ask(Box::new(failure))
    }
}

/// Why a directory has no row in the investigation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum NotADirectory {
    #[error("'{path}' is a file, not a directory: the answer for '{parent}' holds its summary")]
    File { path: String, parent: String },
    #[error("'{path}' is outside the investigation's scope (hidden, ignored or excluded)")]
    OutOfScope { path: String },
    #[error("'{path}' is not a directory of '{target}'")]
    Missing { path: String, target: String },
}

/// clap's message without its usage lines: `invalid value '0' for
/// '--budget <USD>': a dollar amount above zero, such as 5, or none`.
fn clap_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
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
    match outcome.and_then(|answer| serde_json::to_value(answer).map_err(ToolFailure::Unwritable)) {
        Ok(answer) => CallToolResult::structured(answer),
        Err(failure) => CallToolResult::error(vec![ContentBlock::text(
            escape_line(&failure.to_string()).into_owned(),
        )]),
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

        let failed = tool_result::<()>(Err(ToolFailure::Outside {
            path: "no such\ndirectory".into(),
            target: "t".into(),
        }));
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
