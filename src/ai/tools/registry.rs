//! The registry: the one list of tools ([`REGISTRY`]), what each is
//! ([`ToolSpec`], [`Tool`]), and the two things made from it: the
//! definitions sent to the model ([`definitions`]) and the dispatch of a
//! call to its handler ([`dispatch`]).
//!
//! Its edges are where JSON meets the tools: a schema becomes JSON in
//! [`ToolSpec::definition`], and a call's input object is read into the
//! tool's own [`Tool::Input`] in [`handle`], the one place a handler's
//! input is seen as JSON (grounding reads a `flag` call the same way
//! before it runs: `crate::grounding::LoopCheck::review`).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::schema::Schema;
use super::{
    FatalToolError, ToolContext, ToolOutput, Toolbox, cache_tools, command, fs, notes, structure,
    submit,
};
use crate::ai::api::ToolDefinition;
use crate::text::escape_line;

/// What the model is told about one tool, and the loops that offer it: the
/// one value the registry reads to build [`definitions`] and to [`find`] a
/// handler.
#[derive(Clone, Copy)]
pub struct ToolSpec {
    /// The name the model calls.
    pub(crate) name: &'static str,
    /// What the model is told the tool does.
    pub(crate) description: &'static str,
    /// The loops that offer it.
    pub(crate) toolboxes: &'static [Toolbox],
    /// Builds the schema of the input.
    pub(crate) schema: fn() -> Schema,
}

impl ToolSpec {
    /// Whether `toolbox` offers the tool.
    fn offered_in(&self, toolbox: Toolbox) -> bool {
        self.toolboxes.contains(&toolbox)
    }

    /// The definition sent to the model: the one place a schema becomes
    /// JSON.
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.to_string(),
            description: self.description.to_string(),
            // A schema is strings, lists and maps keyed by strings: nothing
            // in it can fail to serialize (the tests read every one).
            input_schema: serde_json::to_value((self.schema)()).unwrap_or_default(),
            cache_control: None,
        }
    }

    /// The schema of the input as the model gets it.
    #[cfg(test)]
    pub(crate) fn input_schema(&self) -> Value {
        self.definition().input_schema
    }
}

/// One tool: its [`ToolSpec`] and its handler, which takes the tool's own
/// input type. The registry reads the call's JSON into it ([`handle`]), so
/// the trait stays usable as `dyn Tool` for the rest.
pub trait Tool: Send + Sync {
    /// What the handler takes: read from the call's input object, unknown
    /// fields ignored.
    type Input: DeserializeOwned
    where
        Self: Sized;
    /// The tool's name, description, schema and toolboxes.
    fn spec(&self) -> ToolSpec;
    /// Whether calling it ends the loop (no handler runs).
    fn ends_loop(&self) -> bool {
        false
    }
    /// Run the tool. Not called for tools that end a loop.
    fn run(&self, ctx: &ToolContext<'_>, input: Self::Input) -> Result<ToolOutput, FatalToolError>
    where
        Self: Sized;
}

/// A tool's handler with its input type erased: what [`dispatch`] calls.
type Handler = fn(&ToolContext<'_>, &Value) -> Result<ToolOutput, FatalToolError>;

/// One entry of the registry: a tool, and its handler behind [`handle`]
/// (made by `registered!`, so the two cannot be paired wrong).
#[derive(Clone, Copy)]
pub struct Registered {
    tool: &'static dyn Tool,
    handler: Handler,
}

impl Registered {
    /// The tool's name, description, schema and toolboxes.
    pub fn spec(&self) -> ToolSpec {
        self.tool.spec()
    }

    /// Whether calling it ends the loop (no handler runs).
    pub fn ends_loop(&self) -> bool {
        self.tool.ends_loop()
    }
}

/// The registry entry of the tool `$tool` (a constant expression).
macro_rules! registered {
    ($tool:expr) => {
        Registered {
            tool: &$tool,
            handler: |ctx, input| handle(&$tool, ctx, input),
        }
    };
}

/// Run `tool` on a call's input object: the one place a handler's input is
/// read from JSON. Its fields read any JSON ([`super::input`]), so this
/// fails only on a tool whose input type is stricter than theirs.
fn handle<T: Tool>(
    tool: &T,
    ctx: &ToolContext<'_>,
    input: &Value,
) -> Result<ToolOutput, FatalToolError> {
    match T::Input::deserialize(input) {
        Ok(input) => tool.run(ctx, input),
        Err(err) => Ok(ToolOutput::error(format!(
            "Error: the arguments could not be read: {err}"
        ))),
    }
}

/// What [`dispatch`] did with a call.
#[derive(Debug)]
pub enum Dispatch {
    /// A handler ran; send this back.
    Ran(ToolOutput),
    /// The tool ends the loop; the caller reads its input.
    EndsLoop,
    /// No such tool in this toolbox.
    Unknown,
}

/// Every tool, in the order the model sees them within a toolbox. Per toolbox this
/// is the original's order:
/// - dir: read_file, list_directory, run_command, parse_structure,
///   write_cache, think, checkpoint, flag, submit_report;
/// - synthesis: flag, submit_report (the original also offered read_cache
///   and list_cache, which its prompt told the model not to call: every
///   summary is in the prompt, and their definitions were paid for in
///   every synthesis request for nothing);
/// - survey: submit_survey;
/// - planning: submit_plan.
///
/// Ours, after the original's: `ask` offers the dir loop's read-only tools,
/// read_cache and submit_answer; `--refine` the same with list_cache, and
/// its own submit_report (the synthesis's fields, and the flags it adds or
/// withdraws).
pub(crate) static REGISTRY: &[Registered] = &[
    registered!(fs::ReadFile),
    registered!(fs::ListDirectory),
    registered!(command::RunCommand::new()),
    registered!(structure::ParseStructure),
    registered!(cache_tools::WriteCache),
    registered!(notes::THINK),
    registered!(notes::CHECKPOINT),
    registered!(cache_tools::ReadCache),
    registered!(cache_tools::ListCache),
    registered!(notes::FlagTool),
    registered!(submit::DIR_REPORT),
    registered!(submit::SYNTHESIS_REPORT),
    registered!(submit::SURVEY),
    registered!(submit::PLAN),
    registered!(submit::ANSWER),
    registered!(submit::REFINED_REPORT),
];

/// The tool `name` as offered in `toolbox` (`submit_report` has one schema per
/// toolbox).
pub fn find(toolbox: Toolbox, name: &str) -> Option<&'static Registered> {
    REGISTRY.iter().find(|tool| {
        let spec = tool.spec();
        spec.name == name && spec.offered_in(toolbox)
    })
}

/// The specs of the tools offered in `toolbox`, in registry order.
fn offered(toolbox: Toolbox) -> impl Iterator<Item = ToolSpec> {
    REGISTRY
        .iter()
        .map(|tool| tool.spec())
        .filter(move |spec| spec.offered_in(toolbox))
}

/// The tool definitions offered in `toolbox`, in registry order.
pub(crate) fn definitions(toolbox: Toolbox) -> Vec<ToolDefinition> {
    offered(toolbox).map(|spec| spec.definition()).collect()
}

/// The tool names offered in `toolbox`, in registry order.
pub fn names(toolbox: Toolbox) -> Vec<&'static str> {
    offered(toolbox).map(|spec| spec.name).collect()
}

/// Run the tool `name` offered in `toolbox`, logging the call to the cache's
/// `investigation.log` (args without `data`, and the result's length in
/// characters, as the original counts it). Loop-ending and unknown tools
/// run nothing and are not logged.
pub fn dispatch(
    toolbox: Toolbox,
    name: &str,
    input: &Value,
    ctx: &ToolContext<'_>,
) -> Result<Dispatch, FatalToolError> {
    let Some(tool) = find(toolbox, name) else {
        return Ok(Dispatch::Unknown);
    };
    if tool.ends_loop() {
        return Ok(Dispatch::EndsLoop);
    }
    // Every value in the tree's text files is known before any tool's
    // result is made (the learning runs beside the survey and planning).
    ctx.redactor.wait_learned();
    // The API sends an object; anything else is treated as "no arguments" so
    // handlers see the usual missing-argument errors.
    let no_args = Value::Object(serde_json::Map::new());
    let args = if input.is_object() { input } else { &no_args };
    let output = (tool.handler)(ctx, args)?;
    if !ctx.records {
        return Ok(Dispatch::Ran(output));
    }
    ctx.cache.log_tool_call(
        ctx.directory,
        ctx.turn,
        name,
        input,
        output.content.chars().count(),
    );
    Ok(Dispatch::Ran(output))
}

/// The result to send back for a tool that is not offered in this loop,
/// naming the `offered` ones when there are any.
pub(crate) fn unknown_tool_message(name: &str, offered: &[&str]) -> String {
    let mut message = format!(
        "Error: there is no tool named '{}' in this step.",
        escape_line(name)
    );
    if !offered.is_empty() {
        message.push_str(&format!(" The tools are: {}.", offered.join(", ")));
    }
    message
}
