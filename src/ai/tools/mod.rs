//! The agent's toolbelt: one registry of tools, each implementing [`Tool`].
//!
//! The registry ([`REGISTRY`]) is the single list of tools. It yields both the
//! schemas sent to the model ([`definitions`]) and the handlers that run
//! ([`dispatch`]), so adding a tool happens in one place. Names, fields,
//! required lists and enums are the reference's; descriptions are ours.
//!
//! Tools that end a loop (`submit_report`, `submit_survey`, `submit_plan`) have
//! a schema but no handler: the loop that offered them reads their input.
//!
//! Every path the model names goes through [`sandbox`]. Errors the model should
//! see are returned as results (`is_error: true`); only failures that make the
//! run itself unsafe to continue are [`FatalToolError`]s.

use std::path::Path;

use serde_json::Value;

use crate::ai::api::ToolDefinition;
use crate::cache::Cache;
use crate::progress::Progress;
use crate::redact::Redactor;

pub mod command;
pub mod sandbox;

/// Which loop offers a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The per-directory investigation loop.
    Dir,
    /// The survey pass.
    Survey,
    /// The planning pass.
    Planning,
    /// The synthesis pass.
    Synthesis,
}

/// What a tool handler gets to work with.
pub struct ToolContext<'a> {
    /// The canonical target: the sandbox root.
    pub target: &'a Path,
    /// This investigation's cache.
    pub cache: &'a Cache,
    /// The outgoing-text filter.
    pub redactor: &'a Redactor,
    /// stderr reporting.
    pub progress: &'a Progress,
    /// The directory being investigated, relative (`(synthesis)` in synthesis),
    /// for logs and stderr lines.
    pub directory: &'a str,
    /// 1-based turn number, for the log.
    pub turn: u32,
}

/// A tool's result as the model will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
        }
    }
}

/// A failure that must stop the run rather than be shown to the model.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FatalToolError(pub String);

/// One tool.
pub trait Tool: Send + Sync {
    /// The name the model calls.
    fn name(&self) -> &'static str;
    /// What the model is told the tool does.
    fn description(&self) -> &'static str;
    /// The JSON schema of the input.
    fn input_schema(&self) -> Value;
    /// The loops that offer it.
    fn scopes(&self) -> &'static [Scope];
    /// Whether calling it ends the loop (no handler runs).
    fn ends_loop(&self) -> bool {
        false
    }
    /// Run the tool. Not called for tools that end a loop.
    fn run(&self, ctx: &ToolContext<'_>, input: &Value) -> Result<ToolOutput, FatalToolError>;
}

/// What [`dispatch`] did with a call.
#[derive(Debug)]
pub enum Dispatch {
    /// A handler ran; send this back.
    Ran(ToolOutput),
    /// The tool ends the loop; the caller reads its input.
    EndsLoop,
    /// No such tool in this scope.
    Unknown,
}

/// Every tool, in the order the model sees them within a scope.
pub static REGISTRY: &[&dyn Tool] = &[&command::RunCommand::new()];

/// The tool definitions offered in `scope`, in registry order.
pub fn definitions(scope: Scope) -> Vec<ToolDefinition> {
    REGISTRY
        .iter()
        .filter(|tool| tool.scopes().contains(&scope))
        .map(|tool| ToolDefinition {
            name: tool.name().to_string(),
            description: tool.description().to_string(),
            input_schema: tool.input_schema(),
            cache_control: None,
        })
        .collect()
}

/// The tool names offered in `scope`, in registry order.
pub fn names(scope: Scope) -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|tool| tool.scopes().contains(&scope))
        .map(|tool| tool.name())
        .collect()
}

/// Run the tool `name` offered in `scope`, logging the call to the cache's
/// `investigation.log`.
pub fn dispatch(
    scope: Scope,
    name: &str,
    input: &Value,
    ctx: &ToolContext<'_>,
) -> Result<Dispatch, FatalToolError> {
    let _ = (scope, name, input, ctx);
    todo!("issue 4")
}
