//! One turn of a conversation ([`Agent::turn`]): send the history, print the
//! reply, append it, then either nudge the model or run its tool calls in
//! order (each reviewed, dispatched or refused) and answer each; with how
//! a turn ends ([`TurnEnd`]: most go on), what it amounts to ([`Turn`]) and
//! why it could not complete ([`AgentError`]). Setting the conversation up
//! is the parent module's job; formatting its lines is `printer.rs`'s; how
//! a whole conversation ends is the driver's
//! ([`crate::ai::engine::conversation`]).
//!
//! How the reply stopped decides the rest (stop reasons page, read
//! 2026-11-23):
//! - `refusal`: the model declined; the turn ends the conversation
//!   ([`TurnEnd::Refused`]) and the pass decides what that means;
//! - `model_context_window_exceeded`: the window filled up mid-answer
//!   ([`TurnEnd::ContextFull`]);
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

use std::borrow::Cow;

use serde_json::Value;
use tokio::runtime::{Handle, RuntimeFlavor};

use super::printer::format_args_for_display;
use super::{Agent, SubmitCheck};
use crate::ai::api::types::ToolUse;
use crate::ai::api::types::{StopDetails, StopReason};
use crate::ai::api::{ApiError, ContentBlock, Response, Usage};
use crate::ai::engine::notes::RunNotes;
use crate::ai::engine::purse::OverBudget;
use crate::ai::engine::session::{SendError, Session};
use crate::ai::engine::transcript::Transcript;
use crate::ai::engine::window::{TooLarge, shrink_pending};
use crate::ai::prompts::PromptError;
use crate::ai::tools::{
    Dispatch, FatalToolError, ToolContext, ToolOutput, dispatch, unknown_tool_message,
};
use crate::cache::WriteFault;
use crate::text::escape_line;

/// The user message after a reply the output limit cut short without a
/// tool call.
pub(crate) const CUT_SHORT_NOTE: &str = "[luminos] Your previous reply reached the output limit \
before it was finished. Keep each reply brief and go on with tool calls.";

/// The note added when the output limit cut off a call to `tool`.
pub(crate) fn cut_off_note(tool: &str) -> String {
    format!(
        "[luminos] Your previous reply reached the output limit in the middle of a call to \
         {}, so nothing was run. Make smaller calls: read, cache or report less in each one.",
        escape_line(tool)
    )
}

/// Why a turn could not complete.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AgentError {
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
    /// The money left cannot pay for the request; it was not sent.
    #[error(transparent)]
    OverBudget(#[from] OverBudget),
    /// A cache write failed earlier in the run: the request was not sent,
    /// since its answer could not be kept.
    #[error(transparent)]
    CacheWrite(#[from] WriteFault),
}

impl From<SendError> for AgentError {
    fn from(err: SendError) -> AgentError {
        match err {
            SendError::Api(err) => AgentError::Api(err),
            SendError::OverBudget(err) => AgentError::OverBudget(err),
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TurnEnd {
    /// Tools ran or the model was nudged: the conversation goes on.
    GoesOn,
    /// The model called the loop-ending tool and it was accepted; this is
    /// its input (the last one, if it called it more than once).
    Submitted(Value),
    /// The model declined (stop reason `refusal`); the conversation cannot
    /// go on.
    Refused(ModelRefusal),
    /// The context window filled up while the model answered (stop reason
    /// `model_context_window_exceeded`).
    ContextFull,
    /// The model made [`MALFORMED_IN_A_ROW`] malformed tool calls in a row.
    Malformed,
}

/// What became of one tool call.
enum Ran {
    /// Its handler ran.
    Tool(ToolOutput),
    /// luminos answered it without running a handler (a tool not offered,
    /// or the review's answer).
    Answered(ToolOutput),
    /// It is the loop-ending tool's.
    EndsLoop,
}

/// What the API said when the model declined (not a command refused by
/// the toolbox: that is [`crate::ai::tools::command::Refusal`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ModelRefusal {
    /// `cyber`, `bio`, ... when the API names one.
    pub category: Option<String>,
}

impl ModelRefusal {
    fn from_details(details: Option<StopDetails>) -> ModelRefusal {
        ModelRefusal {
            category: details
                .and_then(|d| d.category)
                .filter(|c| !c.trim().is_empty()),
        }
    }

    /// `the model declined to continue (category: cyber)`, one line.
    pub(crate) fn describe(&self) -> String {
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
pub(crate) struct Turn {
    /// How it ended.
    pub end: TurnEnd,
    /// The usage the API reported for this turn's call.
    pub usage: Usage,
    /// Tool calls whose handler ran this turn (not the loop-ending one, not
    /// those refused or answered by the review): what the model looked at.
    pub tools_run: u32,
}

impl Agent {
    /// Run one turn, its tool calls in `tools` (whose `directory` names the
    /// conversation in `investigation.log` and whose `turn` is this turn's,
    /// 1-based); a call of the loop-ending tool is accepted unless `answer`
    /// refuses it.
    pub(crate) async fn turn(
        &mut self,
        session: &Session,
        tools: &ToolContext<'_>,
        answer: &mut Option<SubmitCheck>,
    ) -> Result<Turn, AgentError> {
        // An answer the cache cannot keep would be paid for again by the
        // next run: once a write has failed, nothing more is sent.
        if let Some(fault) = tools.cache.write_fault() {
            return Err(fault.into());
        }
        self.fit_window(session)?;
        let reads = self.next_reads();
        self.calls += 1;
        let response = session.send(&mut self.transcript, reads, self.pace).await?;
        self.print_response(&response);
        let usage = response.usage;
        let (end, tools_run) = self.read_reply(response, tools, answer, session.notes())?;
        Ok(Turn {
            end,
            usage,
            tools_run,
        })
    }

    /// What the reply decides: its stop reason alone, or its tool calls
    /// run and answered (with how many of their handlers ran), or a nudge.
    fn read_reply(
        &mut self,
        response: Response,
        tools: &ToolContext<'_>,
        answer: &mut Option<SubmitCheck>,
        notes: &RunNotes,
    ) -> Result<(TurnEnd, u32), AgentError> {
        match response.stop_reason {
            Some(StopReason::Refusal) => {
                let refusal = ModelRefusal::from_details(response.stop_details);
                self.printer
                    .line(&format!("Stopped: {}.", refusal.describe()));
                return Ok((TurnEnd::Refused(refusal), 0));
            }
            Some(StopReason::ModelContextWindowExceeded) => {
                self.printer
                    .line("Stopped: the model's context window is full.");
                return Ok((TurnEnd::ContextFull, 0));
            }
            Some(StopReason::PauseTurn) => {
                // Continued by sending the turn back as it is and calling
                // again; a paused turn with nothing in it has nothing to
                // send back.
                if !response.content.is_empty() {
                    self.transcript.push_assistant(response.content);
                }
                return Ok((TurnEnd::GoesOn, 0));
            }
            _ => {}
        }
        if let Some(tool) = &response.cut_off_tool {
            self.printer.line(&format!(
                "Reply cut off at the output limit in a call to {}; asking for smaller calls.",
                escape_line(tool)
            ));
            self.transcript.append_note(&cut_off_note(tool));
            return Ok((TurnEnd::GoesOn, 0));
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
            return Ok((TurnEnd::GoesOn, 0));
        }
        self.run_calls(&calls, tools, answer, notes)
    }

    /// Run `calls` in order and answer each in the next user message: the
    /// turn's end (the accepted call of the loop-ending tool, if any; or,
    /// after [`MALFORMED_IN_A_ROW`] malformed calls in a row, that) and how
    /// many handlers ran. A call whose input is a JSON string holding an
    /// object (small models send that) is run with the object, and `notes`
    /// count it.
    fn run_calls(
        &mut self,
        calls: &[ToolUse],
        tools: &ToolContext<'_>,
        answer: &mut Option<SubmitCheck>,
        notes: &RunNotes,
    ) -> Result<(TurnEnd, u32), AgentError> {
        let mut ended = None;
        let mut tools_run = 0;
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            let input = lenient_input(&call.input);
            if matches!(input, Some(Cow::Owned(_))) {
                notes.count(STRING_INPUT_NOTE, string_input_note);
            }
            if input.is_none() || !self.offers(&call.name) {
                self.malformed += 1;
            } else {
                self.malformed = 0;
            }
            let input = input.unwrap_or(Cow::Borrowed(&call.input));
            let call = ToolUse {
                id: call.id.clone(),
                name: call.name.clone(),
                input: input.into_owned(),
            };
            let call = &call;
            let output = match self.run_call(call, tools)? {
                Ran::Tool(output) => {
                    tools_run += 1;
                    output
                }
                Ran::Answered(output) => output,
                Ran::EndsLoop => match answer.as_mut().and_then(|check| check(&call.input)) {
                    Some(refusal) => ToolOutput::error(refusal),
                    None => {
                        ended = Some(call.input.clone());
                        ToolOutput::ok("Received. Thank you.")
                    }
                },
            };
            results.push(ContentBlock::tool_result(
                call.id.clone(),
                output.content,
                output.is_error,
            ));
        }
        self.transcript.push_user(results);
        let end = match ended {
            Some(input) => TurnEnd::Submitted(input),
            None if self.malformed >= MALFORMED_IN_A_ROW => {
                self.printer.line(&format!(
                    "Stopped: {MALFORMED_IN_A_ROW} malformed tool calls in a row."
                ));
                TurnEnd::Malformed
            }
            None => TurnEnd::GoesOn,
        };
        Ok((end, tools_run))
    }

    /// One call: refused when not offered, answered by the review when it
    /// has an answer (logged as a call), or dispatched.
    fn run_call(&self, call: &ToolUse, tools: &ToolContext<'_>) -> Result<Ran, FatalToolError> {
        if !self.offers(&call.name) {
            let offered: Vec<&str> = self.tools().iter().map(|t| t.name.as_str()).collect();
            return Ok(Ran::Answered(ToolOutput::error(unknown_tool_message(
                &call.name, &offered,
            ))));
        }
        if let Some(answer) = self
            .review
            .as_ref()
            .and_then(|review| review.review(&call.name, &call.input))
        {
            tools.cache.log_tool_call(
                tools.directory,
                tools.turn,
                &call.name,
                &call.input,
                answer.content.chars().count(),
            );
            return Ok(Ran::Answered(answer));
        }
        Ok(
            match run_blocking(|| dispatch(self.toolbox, &call.name, &call.input, tools))? {
                Dispatch::Ran(output) => Ran::Tool(output),
                Dispatch::EndsLoop => Ran::EndsLoop,
                Dispatch::Unknown => {
                    Ran::Answered(ToolOutput::error(unknown_tool_message(&call.name, &[])))
                }
            },
        )
    }

    /// Make the request about to be sent fit the model's window: cut the
    /// pending tool results if need be, refuse it if that is not enough.
    fn fit_window(&mut self, session: &Session) -> Result<(), TooLarge> {
        let limit = session.window_limit(self.transcript.workload());
        let estimate = session.token_estimate();
        let measure = |t: &Transcript| estimate.at_most(t.request_bytes());
        let tokens = measure(&self.transcript);
        if tokens <= limit {
            return Ok(());
        }
        if shrink_pending(self.transcript.unsent_mut(), tokens - limit, estimate) {
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
        if !self.printer.progress().is_verbose() {
            return;
        }
        for text in response.texts() {
            for line in text.trim().lines() {
                self.printer.detail(line);
            }
        }
        for call in response.tool_uses() {
            self.printer.detail(&format!(
                "-> {}({})",
                call.name,
                format_args_for_display(&call.input)
            ));
        }
    }
}

/// The assistant turn as it goes back into the history: as received, in
/// order, thinking included. Two exceptions, each a block the Messages API
/// refuses in a request and never sends itself: text blocks with nothing
/// but whitespace are left out, and a tool call's input that is no object
/// (a small model's JSON string, which a compatible server such as
/// Ollama's also reads back as an object) goes back as the object it was
/// run with, `{}` when it held none. A reply with no blocks at all becomes
/// a short text so the history keeps alternating.
fn assistant_blocks(content: Vec<ContentBlock>) -> Vec<ContentBlock> {
    let blocks: Vec<ContentBlock> = content
        .into_iter()
        .filter(|block| !matches!(block, ContentBlock::Text { text, .. } if text.trim().is_empty()))
        .map(|mut block| {
            if let ContentBlock::ToolUse { input, .. } = &mut block
                && !input.is_object()
            {
                *input = lenient_input(input)
                    .map(Cow::into_owned)
                    .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
            }
            block
        })
        .collect();
    if blocks.is_empty() {
        vec![ContentBlock::text("(no reply)")]
    } else {
        blocks
    }
}

/// Malformed tool calls in a row (a tool that is not offered, or an input
/// that is no object) after which a conversation ends: a model that keeps
/// getting them wrong would otherwise spend every turn it has.
pub(crate) const MALFORMED_IN_A_ROW: u32 = 3;

/// The run's note of tool inputs read from a JSON string.
const STRING_INPUT_NOTE: &str = "string-input";

fn string_input_note(times: u32) -> String {
    format!(
        "{times} tool call{} sent its input as a JSON string instead of an object; luminos read \
         the object the string held",
        if times == 1 { "" } else { "s" }
    )
}

/// The input a tool runs with: the call's object, or the object a JSON
/// string holds (owned, so the caller can tell); `None` when it is neither.
fn lenient_input(input: &Value) -> Option<Cow<'_, Value>> {
    match input {
        Value::Object(_) => Some(Cow::Borrowed(input)),
        Value::String(text) => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_object)
            .map(Cow::Owned),
        _ => None,
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
    fn refusals_and_cut_offs_say_so_in_one_line() {
        let refusal = ModelRefusal::from_details(Some(StopDetails {
            category: Some("cyber".into()),
            explanation: Some("long\ntext".into()),
        }));
        assert_eq!(
            refusal.describe(),
            "the model declined to continue (category: cyber)"
        );
        assert_eq!(
            ModelRefusal::from_details(None).describe(),
            "the model declined to continue"
        );
        let note = cut_off_note("write\ncache");
        assert!(
            note.contains("write\\ncache") && !note.contains('\n'),
            "{note}"
        );
    }
}
