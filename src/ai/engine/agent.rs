//! The shared tool-loop engine: one conversation with the model, advanced one
//! turn at a time by the pass that owns it.
//!
//! A turn: call the model; print its text and its tool calls (arguments
//! without `data`) on stderr; append its reply to the history; then either
//! nudge it (no tool call) or run the calls in order and answer each with a
//! `tool_result` in the next user message. A call to a tool that was not
//! offered gets an `is_error` result; a call to the loop-ending tool
//! (`submit_report`, `submit_survey`, `submit_plan`) is acknowledged and its
//! input handed back to the pass.
//!
//! A pass may also look at each call before it takes effect ([`CallReview`])
//! and answer it itself: the tool then does not run, and a loop-ending call
//! does not end the loop.
//!
//! The engine knows nothing about budgets, turn limits or what a proposal
//! means: each pass decides those around [`Agent::turn`].

use std::sync::Arc;

use serde_json::Value;
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::ai::api::types::Content;
use crate::ai::api::{ApiError, ContentBlock, Message, Response, ToolDefinition, Usage};
use crate::ai::engine::session::Session;
use crate::ai::prompts::PromptError;
use crate::ai::tools::{self, Dispatch, FatalToolError, ToolContext, ToolOutput, Toolbox};
use crate::cache::Cache;
use crate::progress::Progress;

/// Longest argument value shown in a tool-call line.
const SHOWN_ARG_CHARS: usize = 200;

/// Why a turn could not complete.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The request failed (after the client's retries).
    #[error(transparent)]
    Api(#[from] ApiError),
    /// A tool hit a failure that makes the run unsafe to continue.
    #[error(transparent)]
    Tool(#[from] FatalToolError),
    /// A prompt did not render.
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

/// Where a conversation prints its lines.
#[derive(Clone)]
pub enum Printer {
    /// A whole-run pass (survey, planning, synthesis): `  [AI]   ...`.
    Pass(Progress),
    /// One directory's loop: `  [AI] [dir] ...`.
    Dir { progress: Progress, dir: String },
}

impl Printer {
    /// The progress reporter behind this printer.
    pub fn progress(&self) -> &Progress {
        match self {
            Printer::Pass(progress) | Printer::Dir { progress, .. } => progress,
        }
    }

    /// Print one line of this conversation.
    pub fn line(&self, text: &str) {
        match self {
            Printer::Pass(progress) => progress.ai(&format!("  {text}")),
            Printer::Dir { progress, dir } => progress.ai_dir(dir, text),
        }
    }
}

/// A pass's look at a tool call before it takes effect.
pub trait CallReview: Send + Sync {
    /// `Some(output)` answers the call instead of running it (a loop-ending
    /// call then does not end the loop); `None` lets it run.
    fn review(&self, tool: &str, input: &Value) -> Option<ToolOutput>;
}

/// What a turn amounted to.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// The model called the loop-ending tool; this is its input (the last
    /// one, if it called it more than once).
    Ended(Value),
    /// Tools ran or the model was nudged; the loop goes on.
    Continue,
}

/// One completed turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub outcome: TurnOutcome,
    /// The usage the API reported for this turn's call.
    pub usage: Usage,
}

/// A conversation with the model for one pass or one directory.
pub struct Agent {
    toolbox: Toolbox,
    system: String,
    messages: Vec<Message>,
    tools: Vec<ToolDefinition>,
    nudge: &'static str,
    printer: Printer,
    review: Option<Arc<dyn CallReview>>,
}

impl Agent {
    /// A conversation that starts with `kickoff` as the first user message,
    /// offering `tools` (which must belong to `scope`).
    pub fn new(
        toolbox: Toolbox,
        system: String,
        kickoff: &str,
        tools: Vec<ToolDefinition>,
        nudge: &'static str,
        printer: Printer,
    ) -> Agent {
        Agent {
            toolbox,
            system,
            messages: vec![Message::user_text(kickoff)],
            tools,
            nudge,
            printer,
            review: None,
        }
    }

    /// Show every offered call to `review` before it takes effect.
    pub fn with_review(mut self, review: Arc<dyn CallReview>) -> Agent {
        self.review = Some(review);
        self
    }

    /// The system prompt.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// The tools offered.
    pub fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }

    /// The history so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Where this conversation prints.
    pub fn printer(&self) -> &Printer {
        &self.printer
    }

    /// Add `note` as a text block at the end of the pending user message, so
    /// the next request carries it. Tool results keep their place first, as
    /// the API requires.
    pub fn append_note(&mut self, note: &str) {
        let Some(last) = self.messages.last_mut() else {
            return;
        };
        let note = ContentBlock::text(note);
        match &mut last.content {
            Content::Blocks(blocks) => blocks.push(note),
            Content::Text(text) => {
                let first = ContentBlock::text(std::mem::take(text));
                last.content = Content::Blocks(vec![first, note]);
            }
        }
    }

    /// Run one turn. `directory` names the conversation in
    /// `investigation.log`; `turn` is 1-based.
    pub async fn turn(
        &mut self,
        session: &Session,
        cache: &Cache,
        directory: &str,
        turn: u32,
    ) -> Result<Step, AgentError> {
        let response = session
            .send(&self.system, &self.messages, &self.tools)
            .await?;
        self.print_response(&response);
        self.messages.push(assistant_message(&response));

        let calls = response.tool_uses();
        if calls.is_empty() {
            self.messages.push(Message::user_text(self.nudge));
            return Ok(Step {
                outcome: TurnOutcome::Continue,
                usage: response.usage,
            });
        }

        let ctx = ToolContext {
            target: cache.target(),
            cache,
            redactor: session.redactor(),
            scope: session.scope(),
            progress: self.printer.progress(),
            directory,
            turn,
        };
        let mut ended = None;
        let mut results = Vec::with_capacity(calls.len());
        for call in &calls {
            let reviewed = self
                .review
                .as_ref()
                .filter(|_| self.offers(&call.name))
                .and_then(|review| review.review(&call.name, &call.input));
            let output = if !self.offers(&call.name) {
                unknown_tool(&call.name)
            } else if let Some(answer) = reviewed {
                cache.log_tool_call(
                    directory,
                    turn,
                    &call.name,
                    &call.input,
                    answer.content.chars().count(),
                );
                answer
            } else {
                match run_blocking(|| tools::dispatch(self.toolbox, &call.name, &call.input, &ctx))?
                {
                    Dispatch::Ran(output) => output,
                    Dispatch::EndsLoop => {
                        ended = Some(call.input.clone());
                        ToolOutput::ok("Received. Thank you.")
                    }
                    Dispatch::Unknown => unknown_tool(&call.name),
                }
            };
            results.push(ContentBlock::tool_result(
                call.id.clone(),
                output.content,
                output.is_error,
            ));
        }
        self.messages.push(Message::user_blocks(results));
        Ok(Step {
            outcome: ended.map_or(TurnOutcome::Continue, TurnOutcome::Ended),
            usage: response.usage,
        })
    }

    fn offers(&self, name: &str) -> bool {
        self.tools.iter().any(|tool| tool.name == name)
    }

    fn print_response(&self, response: &Response) {
        for text in response.texts() {
            for line in text.trim().lines() {
                self.printer.line(line);
            }
        }
        for call in response.tool_uses() {
            self.printer.line(&format!(
                "-> {}({})",
                call.name,
                format_args_for_display(&call.input)
            ));
        }
    }
}

/// The assistant turn as it goes back into the history. Empty text blocks
/// are dropped (the API refuses them); an empty reply becomes a short text
/// so the history keeps alternating.
fn assistant_message(response: &Response) -> Message {
    let blocks: Vec<ContentBlock> = response
        .content
        .iter()
        .filter(|block| !matches!(block, ContentBlock::Text { text, .. } if text.trim().is_empty()))
        .cloned()
        .collect();
    if blocks.is_empty() {
        Message::assistant(vec![ContentBlock::text("(no reply)")])
    } else {
        Message::assistant(blocks)
    }
}

fn unknown_tool(name: &str) -> ToolOutput {
    ToolOutput::error(tools::unknown_tool_message(name))
}

/// `path="src/main.rs", max_bytes=8192`: the call's arguments without `data`,
/// each value cut to a readable length.
pub fn format_args_for_display(input: &Value) -> String {
    let Some(map) = input.as_object() else {
        return String::new();
    };
    map.iter()
        .filter(|(key, _)| key.as_str() != "data")
        .map(|(key, value)| format!("{key}={}", shorten(&value.to_string())))
        .collect::<Vec<_>>()
        .join(", ")
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(SHOWN_ARG_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// Run a synchronous tool without stalling other tasks on a multi-threaded
/// runtime (commands may take seconds).
fn run_blocking<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn args_are_shown_without_data_and_shortened() {
        let input = json!({
            "cache_type": "file",
            "path": "src/main.rs",
            "data": {"summary": "secret-ish"},
            "max_bytes": 8192
        });
        assert_eq!(
            format_args_for_display(&input),
            "cache_type=\"file\", path=\"src/main.rs\", max_bytes=8192"
        );
        assert_eq!(format_args_for_display(&json!({})), "");
        let long = json!({ "notes": "x".repeat(500) });
        let shown = format_args_for_display(&long);
        assert!(shown.ends_with("...") && shown.len() < 220, "{shown}");
    }

    #[test]
    fn notes_join_the_pending_user_message_after_tool_results() {
        let printer = Printer::Pass(Progress::silent());
        let mut agent = Agent::new(Toolbox::Dir, "sys".into(), "go", vec![], "nudge", printer);
        agent.append_note("two left");
        assert_eq!(
            agent.messages(),
            [Message::user_blocks(vec![
                ContentBlock::text("go"),
                ContentBlock::text("two left")
            ])]
        );
        agent.messages = vec![Message::user_blocks(vec![ContentBlock::tool_result(
            "t1".to_string(),
            "ok".to_string(),
            false,
        )])];
        agent.append_note("one left");
        let Content::Blocks(blocks) = &agent.messages()[0].content else {
            panic!("blocks expected");
        };
        assert!(matches!(blocks[0], ContentBlock::ToolResult { .. }));
        assert_eq!(blocks[1], ContentBlock::text("one left"));
    }

    #[test]
    fn empty_replies_still_alternate() {
        let response = Response {
            id: "m".into(),
            model: "x".into(),
            content: vec![ContentBlock::text("  "), ContentBlock::text("hi")],
            stop_reason: None,
            usage: Usage::default(),
        };
        assert_eq!(
            assistant_message(&response),
            Message::assistant(vec![ContentBlock::text("hi")])
        );
        let empty = Response {
            content: vec![],
            ..response
        };
        assert_eq!(
            assistant_message(&empty),
            Message::assistant(vec![ContentBlock::text("(no reply)")])
        );
    }
}
