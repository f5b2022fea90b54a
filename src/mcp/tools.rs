//! The MCP server's tools, in one table: each tool's name, title,
//! description, argument type (whose JSON Schema is what `tools/list`
//! shows, and whose parser is what `tools/call` runs) and hints, and the
//! dispatch from a call to the file that answers it.
//!
//! Arguments that do not fit a tool's type are a failed call carrying
//! serde's one line (see `convert.rs` for why that is not a protocol
//! error).

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use rmcp::service::{RequestContext, RoleServer};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::convert::{ToolFailure, tool_result};
use super::{ask, directory, flags, investigate, overview};
use crate::config::Env;
use crate::report::Severity;

/// Every tool the server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum McpTool {
    Investigate,
    Overview,
    Directory,
    Flags,
    Ask,
}

impl McpTool {
    /// The table, in the order `tools/list` shows it.
    pub(super) const ALL: [McpTool; 5] = [
        McpTool::Investigate,
        McpTool::Overview,
        McpTool::Directory,
        McpTool::Flags,
        McpTool::Ask,
    ];

    /// The tool's name on the wire.
    pub(super) fn name(self) -> &'static str {
        match self {
            McpTool::Investigate => "investigate",
            McpTool::Overview => "overview",
            McpTool::Directory => "directory",
            McpTool::Flags => "flags",
            McpTool::Ask => "ask",
        }
    }

    /// The tool called `name`, if there is one.
    pub(super) fn named(name: &str) -> Option<McpTool> {
        McpTool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    fn title(self) -> &'static str {
        match self {
            McpTool::Investigate => "Investigate a directory",
            McpTool::Overview => "Overview of an investigated directory",
            McpTool::Directory => "One directory of an investigated tree",
            McpTool::Flags => "Findings of an investigated tree",
            McpTool::Ask => "Ask a question about a directory",
        }
    }

    fn description(self) -> &'static str {
        match self {
            McpTool::Investigate => {
                "Investigate a directory with luminos: a quick local scan, then AI agents that \
                 read it directory by directory and write a summary of each, findings (flags) \
                 and a verdict. A directory investigated before is resumed: summaries that still \
                 match the files are kept, so a tree that has not changed costs nothing. This \
                 spends money on the Anthropic API (at most `budget` dollars) and can take \
                 minutes; progress comes as progress notifications. Answers like `overview`, \
                 with what the run cost."
            }
            McpTool::Overview => {
                "What luminos's investigation of a directory concluded, read from its cache: \
                 the verdict (a brief and the detailed analysis), the domain sections, how the \
                 directories were covered, and every flag, most severe first. No API call, no \
                 cost. Says when the tree has changed since it was investigated. A directory \
                 never investigated is an error: call `investigate` first."
            }
            McpTool::Directory => {
                "One directory of an investigated tree, read from the cache: its summary, how it \
                 was covered, the summaries of the files in it, the flags raised in it and its \
                 subdirectories. `path` is relative to `target` (`.` is the target itself). No \
                 API call, no cost; says when the directory has changed since."
            }
            McpTool::Flags => {
                "The findings of an investigated tree, most severe first, read from the cache: \
                 each with its path (and line), what was found, its severity, and whether the \
                 path was found in the tree. `severity` keeps those at least that severe. No \
                 API call, no cost."
            }
            McpTool::Ask => {
                "Ask one question about a directory. An AI agent answers it from what \
                 luminos's investigation of the directory cached (the verdict, the flags, the \
                 summaries the question points at) and from the files, which it may read but \
                 never change; the cache is left as it was. Answers with the answer, the paths \
                 and symbols it cites (each checked against the tree), what it cost and, when \
                 the directory was never investigated, a note saying the answer rests on the \
                 files alone. This spends money on the Anthropic API (at most `budget` \
                 dollars, $0.50 unless said)."
            }
        }
    }

    /// The JSON Schema of the tool's arguments, without the Rust type's
    /// name as its title.
    fn input_schema(self) -> Arc<JsonObject> {
        use rmcp::handler::server::common::schema_for_type;
        let schema = match self {
            McpTool::Investigate => schema_for_type::<InvestigateArgs>(),
            McpTool::Overview => schema_for_type::<TargetArgs>(),
            McpTool::Directory => schema_for_type::<DirectoryArgs>(),
            McpTool::Flags => schema_for_type::<FlagsArgs>(),
            McpTool::Ask => schema_for_type::<QuestionArgs>(),
        };
        let mut schema = Arc::unwrap_or_clone(schema);
        schema.remove("title");
        Arc::new(schema)
    }

    /// What the client may assume: only `investigate` writes (the cache);
    /// it and `ask` reach beyond the machine (the API, and its bill);
    /// nothing deletes.
    fn annotations(self) -> ToolAnnotations {
        let writes = self == McpTool::Investigate;
        let calls_the_api = matches!(self, McpTool::Investigate | McpTool::Ask);
        ToolAnnotations::with_title(self.title())
            .read_only(!writes)
            .destructive(false)
            .idempotent(true)
            .open_world(calls_the_api)
    }

    /// The tool as `tools/list` shows it.
    pub(super) fn definition(self) -> Tool {
        Tool::new(self.name(), self.description(), self.input_schema())
            .with_title(self.title())
            .with_annotations(self.annotations())
    }
}

/// Every tool's definition, in table order.
pub(super) fn definitions() -> Vec<Tool> {
    McpTool::ALL.into_iter().map(McpTool::definition).collect()
}

/// What a call brings besides its arguments.
pub(super) struct Call {
    /// The environment the server started with: the key, the cache, the
    /// endpoint, the model.
    pub env: Arc<Env>,
    /// The request: its progress token, its cancellation, the client.
    pub request: RequestContext<RoleServer>,
}

/// Run `tool` on `arguments`: its answer, or its failure as one line.
pub(super) async fn call(tool: McpTool, arguments: JsonObject, call: &Call) -> CallToolResult {
    match tool {
        McpTool::Investigate => {
            answer(tool, arguments, |a| investigate::investigate(call, a)).await
        }
        McpTool::Overview => answer(tool, arguments, |a| overview::overview(call, a)).await,
        McpTool::Directory => answer(tool, arguments, |a| directory::directory(call, a)).await,
        McpTool::Flags => answer(tool, arguments, |a| flags::flags(call, a)).await,
        McpTool::Ask => answer(tool, arguments, |a| ask::ask(call, a)).await,
    }
}

/// `arguments` parsed as `tool`'s argument type and handed to `answering`.
async fn answer<A, T, F>(
    tool: McpTool,
    arguments: JsonObject,
    answering: impl FnOnce(A) -> F,
) -> CallToolResult
where
    A: DeserializeOwned,
    T: Serialize,
    F: Future<Output = Result<T, ToolFailure>>,
{
    match parse(tool, arguments) {
        Ok(args) => tool_result(answering(args).await),
        Err(failure) => tool_result::<T>(Err(failure)),
    }
}

/// `arguments` as `tool`'s argument type.
fn parse<T: DeserializeOwned>(tool: McpTool, arguments: JsonObject) -> Result<T, ToolFailure> {
    serde_json::from_value(Value::Object(arguments)).map_err(|source| ToolFailure::BadArguments {
        tool: tool.name(),
        source,
    })
}

/// What each argument means, as the schemas show it.
const TARGET_DOC: &str = "The directory, as a path on the machine luminos runs on (absolute is \
best; a relative one is taken from the server's working directory).";
const BUDGET_DOC: &str = "The most this run may spend, in US dollars (such as 2.5), or \"none\" \
for no ceiling; a tree too large for it gets fewer agents and more summaries built from the scan. \
Default: the command line's default budget.";
const PATH_DOC: &str = "The directory inside `target`, relative to it (such as src/core), or . for \
the target itself.";
const QUESTION_DOC: &str = "The question, in plain words (such as: Where is the configuration \
read, and what happens when it is missing?).";
const ASK_BUDGET_DOC: &str = "The most this question may spend, in US dollars (such as 0.25), or \
\"none\" for no ceiling; every request is priced at its worst case before it is sent. Default: \
0.50.";
const SEVERITY_DOC: &str = "Keep only the flags at least this severe (concern keeps critical and \
concern); every flag without it.";

// The argument types: their schemas are the tools' input schemas (the
// types' own names and comments stay out of them).

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct TargetArgs {
    #[schemars(description = TARGET_DOC)]
    pub target: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct InvestigateArgs {
    #[schemars(description = TARGET_DOC)]
    pub target: String,
    #[serde(default)]
    #[schemars(description = BUDGET_DOC)]
    pub budget: Option<BudgetArg>,
}

// A budget as a number of dollars or as text (`"$2"`, `"none"`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(crate = "rmcp::schemars")]
pub(super) enum BudgetArg {
    Dollars(f64),
    Text(String),
}

impl BudgetArg {
    /// The value as `--budget` takes it.
    pub(super) fn as_flag_value(&self) -> String {
        match self {
            BudgetArg::Dollars(usd) => usd.to_string(),
            BudgetArg::Text(text) => text.clone(),
        }
    }

    /// The command line's `--budget VALUE` for a call that gave `budget`,
    /// else nothing.
    pub(super) fn flags(budget: Option<&BudgetArg>) -> Vec<String> {
        budget
            .map(|budget| vec!["--budget".to_string(), budget.as_flag_value()])
            .unwrap_or_default()
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct DirectoryArgs {
    #[schemars(description = TARGET_DOC)]
    pub target: String,
    #[schemars(description = PATH_DOC)]
    pub path: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct QuestionArgs {
    #[schemars(description = TARGET_DOC)]
    pub target: String,
    #[schemars(description = QUESTION_DOC)]
    pub question: String,
    #[serde(default)]
    #[schemars(description = ASK_BUDGET_DOC)]
    pub budget: Option<BudgetArg>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct FlagsArgs {
    #[schemars(description = TARGET_DOC)]
    pub target: String,
    #[serde(default, deserialize_with = "severity_arg")]
    #[schemars(description = SEVERITY_DOC)]
    pub severity: Option<Severity>,
}

// A flag's severity as the `flags` tool takes it: one of the report's
// words, most severe first; another word is a bad argument (the report's
// lenient reading is for what luminos reads back, not what a client asks).
impl JsonSchema for Severity {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Severity".into()
    }

    fn json_schema(_: &mut rmcp::schemars::SchemaGenerator) -> rmcp::schemars::Schema {
        let words: Vec<&str> = Severity::ALL.iter().map(Severity::as_str).collect();
        rmcp::schemars::json_schema!({"type": "string", "enum": words})
    }
}

/// A severity the `flags` tool was asked for: exactly one of the words.
fn severity_arg<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Severity>, D::Error> {
    let Some(word) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    Severity::named(&word)
        .map(Some)
        .ok_or_else(|| serde::de::Error::unknown_variant(&word, &["critical", "concern", "info"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The set of tools is pinned: adding one is a decision, not an
    /// accident.
    #[test]
    fn the_tool_set_is_pinned_and_every_name_round_trips() {
        let names: Vec<&str> = McpTool::ALL.iter().map(|tool| tool.name()).collect();
        assert_eq!(
            names,
            ["investigate", "overview", "directory", "flags", "ask"]
        );
        for tool in McpTool::ALL {
            assert_eq!(McpTool::named(tool.name()), Some(tool));
        }
        assert_eq!(McpTool::named("nope"), None);
    }

    /// The question's default budget is said where a model reads it, and
    /// said right: the description and the schema name the constant's
    /// value.
    #[test]
    fn ask_says_its_default_budget() {
        let default = crate::config::defaults::DEFAULT_ASK_BUDGET_USD;
        assert!(
            McpTool::Ask
                .description()
                .contains(&format!("{default} unless said")),
            "{}",
            McpTool::Ask.description()
        );
        assert!(ASK_BUDGET_DOC.ends_with(&format!("Default: {}.", default.flag_value())));
    }

    #[test]
    fn every_schema_requires_a_target_and_refuses_strangers() {
        for tool in McpTool::ALL {
            let schema = tool.input_schema();
            assert_eq!(schema["type"], "object", "{}", tool.name());
            let required = schema["required"].as_array().unwrap();
            assert!(required.contains(&Value::from("target")), "{}", tool.name());
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name());
            assert!(schema.get("title").is_none(), "{}", tool.name());
            assert!(
                schema["properties"]["target"]["description"]
                    .as_str()
                    .is_some_and(|text| text.contains("absolute")),
                "{}",
                tool.name()
            );
        }
        let flags = McpTool::Flags.input_schema();
        let text = serde_json::to_string(&*flags).unwrap();
        for severity in Severity::ALL {
            assert!(text.contains(&format!("\"{severity}\"")), "{text}");
        }
    }

    #[test]
    fn bad_arguments_fail_in_one_line() {
        let args = |value: Value| value.as_object().unwrap().clone();
        let err = parse::<FlagsArgs>(
            McpTool::Flags,
            args(serde_json::json!({"target": ".", "severity": "high"})),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("flags: bad arguments: unknown variant `high`"),
            "{err}"
        );
        let err = parse::<TargetArgs>(McpTool::Overview, args(serde_json::json!({}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "overview: bad arguments: missing field `target`"
        );
        let budget = parse::<InvestigateArgs>(
            McpTool::Investigate,
            args(serde_json::json!({"target": ".", "budget": 2.5})),
        )
        .unwrap();
        assert_eq!(
            BudgetArg::flags(budget.budget.as_ref()),
            ["--budget", "2.5"]
        );
        assert!(BudgetArg::flags(None).is_empty());
    }
}
