//! The shared tool-loop engine: one conversation with the model, advanced one
//! turn at a time by the pass that owns it.
//!
//! A turn: call the model; print its text and its tool calls (arguments
//! without `data`) on stderr, never its thinking; append its reply to the
//! history exactly as received; then either nudge it (no tool call) or run
//! the calls in order and answer each with a `tool_result` in the next user
//! message. A call to a tool that was not offered gets an `is_error` result;
//! a call to the loop-ending tool (`submit_report`, `submit_survey`,
//! `submit_plan`) is acknowledged and its input handed back to the pass.
//!
//! How the reply stopped decides the rest (stop reasons page, read
//! 2026-11-23):
//! - `refusal`: the model declined; the turn ends the conversation
//!   ([`TurnOutcome::Refused`]) and the pass decides what that means;
//! - `model_context_window_exceeded`: the window filled up mid-answer
//!   ([`TurnOutcome::ContextFull`]); the pass treats it as its budget;
//! - `pause_turn`: the reply goes back unchanged and the next turn calls
//!   again without a new user message, as the docs describe;
//! - `max_tokens` in the middle of a tool call: the cut-off call is not run
//!   and the reply is dropped; the user message it answered gets a note
//!   asking for smaller calls, so the next request is never the same one
//!   again (resending it unchanged would be cut off the same way, and
//!   billed each time). A larger `max_tokens` is not tried: the reply
//!   already had [`crate::ai::api::settings`]'s room for its thinking, and
//!   a call that large is better split than paid for twice;
//! - `max_tokens` anywhere else: the reply is kept and the nudge becomes a
//!   note that it was cut short.
//!
//! A pass may also look at each call before it takes effect ([`CallReview`])
//! and answer it itself: the tool then does not run, and a loop-ending call
//! does not end the loop.
//!
//! The engine knows nothing about budgets, turn limits or what a proposal
//! means: each pass decides those around [`Agent::turn`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::runtime::{Handle, RuntimeFlavor};

use crate::ai::api::caching::Reuse;
use crate::ai::api::settings::Workload;
use crate::ai::api::types::{StopDetails, StopReason};
use crate::ai::api::{ApiError, ContentBlock, Message, Response, ToolDefinition, Usage};
use crate::ai::engine::session::Session;
use crate::ai::engine::transcript::Transcript;
use crate::ai::engine::window::{TooLarge, request_tokens, shrink_pending};
use crate::ai::prompts::PromptError;
use crate::ai::tools::{self, Dispatch, FatalToolError, ToolContext, ToolOutput, Toolbox};
use crate::cache::Cache;
use crate::progress::Progress;
use crate::text::escape_line;

/// Longest argument value shown in a tool-call line.
const SHOWN_ARG_CHARS: usize = 200;

/// The user message after a reply the output limit cut short without a
/// tool call.
pub const CUT_SHORT_NOTE: &str = "[luminos] Your previous reply reached the output limit \
before it was finished. Keep each reply brief and go on with tool calls.";

/// The note added when the output limit cut off a call to `tool`.
pub fn cut_off_note(tool: &str) -> String {
    format!(
        "[luminos] Your previous reply reached the output limit in the middle of a call to \
         {}, so nothing was run. Make smaller calls: read, cache or report less in each one.",
        escape_line(tool)
    )
}

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
    /// The request would not fit the model's window, even cut; it was not
    /// sent.
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
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
    /// The model declined (stop reason `refusal`); the conversation cannot
    /// go on.
    Refused(Refusal),
    /// The context window filled up while the model answered (stop reason
    /// `model_context_window_exceeded`).
    ContextFull,
}

/// What the API said about a refusal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refusal {
    /// `cyber`, `bio`, ... when the API names one.
    pub category: Option<String>,
}

impl Refusal {
    fn from_details(details: Option<StopDetails>) -> Refusal {
        Refusal {
            category: details
                .and_then(|d| d.category)
                .filter(|c| !c.trim().is_empty()),
        }
    }

    /// `the model declined to continue (category: cyber)`, one line.
    pub fn describe(&self) -> String {
        match &self.category {
            Some(category) => format!(
                "the model declined to continue (category: {})",
                escape_line(category)
            ),
            None => "the model declined to continue".to_string(),
        }
    }
}

/// One completed turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub outcome: TurnOutcome,
    /// The usage the API reported for this turn's call.
    pub usage: Usage,
}

/// Decides whether a call to the loop-ending tool is accepted: `None`
/// accepts it, `Some(reason)` answers the call with `reason` as an error
/// and lets the loop go on.
pub type SubmitCheck = Box<dyn FnMut(&Value) -> Option<String> + Send>;

/// A conversation with the model for one pass or one directory.
pub struct Agent {
    toolbox: Toolbox,
    transcript: Transcript,
    nudge: &'static str,
    printer: Printer,
    review: Option<Arc<dyn CallReview>>,
    submit_check: Option<SubmitCheck>,
    /// The pass expects its first call to be its only one.
    one_call_expected: bool,
    /// Calls made so far.
    calls: u32,
    /// The directory a dir loop investigates, for its tools.
    home: Option<PathBuf>,
    /// The other directories of a unit's assignment, for its tools.
    unit: Vec<PathBuf>,
    /// What its tools add to the dir entries it writes (see
    /// [`ToolContext::stamps`]).
    stamps: Vec<(PathBuf, Map<String, Value>)>,
}

/// How much a conversation of `toolbox` thinks: the directory loops are
/// routine, the whole-run passes judgment (see
/// [`crate::ai::api::settings`]).
pub fn workload(toolbox: Toolbox) -> Workload {
    match toolbox {
        Toolbox::Dir => Workload::Routine,
        Toolbox::Survey | Toolbox::Planning | Toolbox::Synthesis => Workload::Judgment,
    }
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
            transcript: Transcript::new(system, kickoff, tools, workload(toolbox)),
            nudge,
            printer,
            review: None,
            submit_check: None,
            one_call_expected: false,
            calls: 0,
            home: None,
            unit: Vec::new(),
            stamps: Vec::new(),
        }
    }

    /// Show every offered call to `review` before it takes effect.
    pub fn with_review(mut self, review: Arc<dyn CallReview>) -> Agent {
        self.review = Some(review);
        self
    }

    /// Check every call of the loop-ending tool with `check` before the
    /// loop ends on it.
    pub fn with_submit_check(mut self, check: SubmitCheck) -> Agent {
        self.submit_check = Some(check);
        self
    }

    /// The pass asks for its answer at once (survey, planning, synthesis):
    /// its first call writes nothing to the prompt cache, since a prefix
    /// written at 1.25x the input price and never read back costs a
    /// quarter more than not caching it. Should the conversation go on,
    /// later calls cache as usual.
    pub fn expecting_one_call(mut self) -> Agent {
        self.one_call_expected = true;
        self
    }

    /// The same conversation as routine work (it thinks as little as the
    /// model allows; see [`crate::ai::api::settings`]), for a pass whose
    /// toolbox is otherwise a judgment call's. Only before its first turn.
    pub fn as_routine(mut self) -> Agent {
        self.transcript = self.transcript.with_workload(Workload::Routine);
        self
    }

    /// The same conversation, investigating `dir` (absolute, canonical): its
    /// tools resolve relative paths against it where they also accept that
    /// (see [`ToolContext::home`]).
    pub fn investigating(mut self, dir: &Path) -> Agent {
        self.home = Some(dir.to_path_buf());
        self
    }

    /// The same conversation, covering `members` too (the directories
    /// folded into the unit of the directory it investigates): it writes
    /// their dir entries (see [`ToolContext::unit`]).
    pub fn covering(mut self, members: &[PathBuf]) -> Agent {
        self.unit = members.to_vec();
        self
    }

    /// The same conversation, adding `stamps` to the dir entries its tools
    /// write (see [`ToolContext::stamps`]).
    pub fn stamping(mut self, stamps: Vec<(PathBuf, Map<String, Value>)>) -> Agent {
        self.stamps = stamps;
        self
    }

    /// The system prompt.
    pub fn system(&self) -> &str {
        self.transcript.system()
    }

    /// The tools offered.
    pub fn tools(&self) -> &[ToolDefinition] {
        self.transcript.tools()
    }

    /// The history so far.
    pub fn messages(&self) -> &[Message] {
        self.transcript.messages()
    }

    /// Where this conversation prints.
    pub fn printer(&self) -> &Printer {
        &self.printer
    }

    /// Add `note` as a text block at the end of the pending user message, so
    /// the next request carries it. Tool results keep their place first, as
    /// the API requires. After a paused turn there is no pending user
    /// message, and the note is dropped.
    pub fn append_note(&mut self, note: &str) {
        self.transcript.append_note(note);
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
        self.fit_window(session)?;
        let reuse = if self.one_call_expected && self.calls == 0 {
            Reuse::None
        } else {
            Reuse::Expected
        };
        self.calls += 1;
        let response = session.send(&mut self.transcript, reuse).await?;
        self.print_response(&response);
        let usage = response.usage;
        let step = |outcome| Ok(Step { outcome, usage });
        match response.stop_reason {
            Some(StopReason::Refusal) => {
                let refusal = Refusal::from_details(response.stop_details);
                self.printer
                    .line(&format!("Stopped: {}.", refusal.describe()));
                return step(TurnOutcome::Refused(refusal));
            }
            Some(StopReason::ModelContextWindowExceeded) => {
                self.printer
                    .line("Stopped: the model's context window is full.");
                return step(TurnOutcome::ContextFull);
            }
            Some(StopReason::PauseTurn) => {
                // Continued by sending the turn back as it is and calling
                // again; a paused turn with nothing in it has nothing to
                // send back.
                if !response.content.is_empty() {
                    self.transcript.push_assistant(response.content);
                }
                return step(TurnOutcome::Continue);
            }
            _ => {}
        }
        if let Some(tool) = &response.cut_off_tool {
            self.printer.line(&format!(
                "Reply cut off at the output limit in a call to {}; asking for smaller calls.",
                escape_line(tool)
            ));
            self.transcript.append_note(&cut_off_note(tool));
            return step(TurnOutcome::Continue);
        }
        let cut_short = response.stop_reason == Some(StopReason::MaxTokens);
        let calls = response.tool_uses();
        self.transcript
            .push_assistant(assistant_blocks(response.content));

        if calls.is_empty() {
            let nudge = if cut_short {
                CUT_SHORT_NOTE
            } else {
                self.nudge
            };
            self.transcript.push_user(vec![ContentBlock::text(nudge)]);
            return step(TurnOutcome::Continue);
        }

        let ctx = ToolContext {
            target: cache.target(),
            cache,
            redactor: session.redactor(),
            scope: session.scope(),
            progress: self.printer.progress(),
            directory,
            home: self.home.as_deref(),
            unit: &self.unit,
            stamps: &self.stamps,
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
                    Dispatch::EndsLoop => match self
                        .submit_check
                        .as_mut()
                        .and_then(|check| check(&call.input))
                    {
                        Some(refusal) => ToolOutput::error(refusal),
                        None => {
                            ended = Some(call.input.clone());
                            ToolOutput::ok("Received. Thank you.")
                        }
                    },
                    Dispatch::Unknown => unknown_tool(&call.name),
                }
            };
            results.push(ContentBlock::tool_result(
                call.id.clone(),
                output.content,
                output.is_error,
            ));
        }
        self.transcript.push_user(results);
        step(ended.map_or(TurnOutcome::Continue, TurnOutcome::Ended))
    }

    /// Make the request about to be sent fit the model's window: cut the
    /// pending tool results if need be, refuse it if that is not enough.
    fn fit_window(&mut self, session: &Session) -> Result<(), TooLarge> {
        let limit = session.window_limit(self.transcript.workload());
        let per_byte = session.tokens_per_byte();
        let measure =
            |t: &Transcript| request_tokens(t.system(), t.messages(), t.tools(), per_byte);
        let tokens = measure(&self.transcript);
        if tokens <= limit {
            return Ok(());
        }
        if shrink_pending(self.transcript.unsent_mut(), tokens - limit, per_byte) {
            self.printer.line(
                "A tool result was cut: the request would not have fit the model's context window.",
            );
        }
        let tokens = measure(&self.transcript);
        if tokens <= limit {
            Ok(())
        } else {
            Err(TooLarge { tokens, limit })
        }
    }

    fn offers(&self, name: &str) -> bool {
        self.tools().iter().any(|tool| tool.name == name)
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

/// The assistant turn as it goes back into the history: as received, in
/// order, thinking included. Text blocks with nothing but whitespace are
/// the one exception (the API refuses them in a request; it does not send
/// them in practice); a reply with no blocks at all becomes a short text so
/// the history keeps alternating.
fn assistant_blocks(content: Vec<ContentBlock>) -> Vec<ContentBlock> {
    let blocks: Vec<ContentBlock> = content
        .into_iter()
        .filter(|block| !matches!(block, ContentBlock::Text { text, .. } if text.trim().is_empty()))
        .collect();
    if blocks.is_empty() {
        vec![ContentBlock::text("(no reply)")]
    } else {
        blocks
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
    fn replies_go_back_as_received_with_their_thinking() {
        let thinking = ContentBlock::Thinking {
            thinking: String::new(),
            signature: "sig".into(),
        };
        let redacted = ContentBlock::RedactedThinking { data: "enc".into() };
        let content = vec![
            thinking.clone(),
            ContentBlock::text("  "),
            redacted.clone(),
            ContentBlock::text("hi"),
        ];
        assert_eq!(
            assistant_blocks(content),
            vec![thinking.clone(), redacted, ContentBlock::text("hi")]
        );
        // A reply that only thought is still a reply.
        assert_eq!(assistant_blocks(vec![thinking.clone()]), vec![thinking]);
        assert_eq!(
            assistant_blocks(vec![]),
            vec![ContentBlock::text("(no reply)")]
        );
    }

    #[test]
    fn loops_are_routine_and_passes_judgment() {
        assert_eq!(workload(Toolbox::Dir), Workload::Routine);
        for toolbox in [Toolbox::Survey, Toolbox::Planning, Toolbox::Synthesis] {
            assert_eq!(workload(toolbox), Workload::Judgment);
        }
    }

    #[test]
    fn refusals_and_cut_offs_say_so_in_one_line() {
        let refusal = Refusal::from_details(Some(StopDetails {
            category: Some("cyber".into()),
            explanation: Some("long\ntext".into()),
        }));
        assert_eq!(
            refusal.describe(),
            "the model declined to continue (category: cyber)"
        );
        assert_eq!(
            Refusal::from_details(None).describe(),
            "the model declined to continue"
        );
        let note = cut_off_note("write\ncache");
        assert!(
            note.contains("write\\ncache") && !note.contains('\n'),
            "{note}"
        );
    }
}
