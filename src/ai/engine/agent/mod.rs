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
//! A pass may also look at each call before it takes effect ([`CallReview`])
//! and answer it itself: the tool then does not run, and a loop-ending call
//! does not end the loop.
//!
//! The engine knows nothing about budgets, turn limits or what a proposal
//! means: each pass decides those around [`Agent::turn`].
//!
//! This file holds the conversation and how a pass sets it up ([`Agent`],
//! [`Agent::new`] and its builders, [`CallReview`], [`SubmitCheck`]);
//! `turn.rs` holds one turn ([`Agent::turn`]: the call, what its stop
//! reason decides, the tool calls it runs) and what it amounts to;
//! `printer.rs` holds where the conversation's lines go and how a call is
//! shown ([`Printer`]).

mod printer;
mod turn;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::ai::api::ToolDefinition;
use crate::ai::api::settings::Workload;
use crate::ai::engine::transcript::Transcript;
use crate::ai::failure::PassError;
use crate::ai::tools::{ToolOutput, Toolbox};

pub(crate) use printer::Printer;
pub(crate) use turn::{AgentError, TurnOutcome};

/// A pass's look at a tool call before it takes effect.
pub(crate) trait CallReview: Send + Sync {
    /// `Some(output)` answers the call instead of running it (a loop-ending
    /// call then does not end the loop); `None` lets it run.
    fn review(&self, tool: &str, input: &Value) -> Option<ToolOutput>;
}

/// Decides whether a call to the loop-ending tool is accepted: `None`
/// accepts it, `Some(reason)` answers the call with `reason` as an error
/// and lets the loop go on.
pub(crate) type SubmitCheck = Box<dyn FnMut(&Value) -> Option<String> + Send>;

/// A conversation with the model for one pass or one directory.
pub(crate) struct Agent {
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
    /// [`ToolContext::stamps`](crate::ai::tools::ToolContext::stamps)).
    stamps: Vec<(PathBuf, Map<String, Value>)>,
}

/// How much a conversation of `toolbox` thinks: the directory loops are
/// routine, the whole-run passes judgment (see
/// [`crate::ai::api::settings`]).
pub(crate) fn workload(toolbox: Toolbox) -> Workload {
    match toolbox {
        Toolbox::Dir => Workload::Routine,
        Toolbox::Survey | Toolbox::Planning | Toolbox::Synthesis => Workload::Judgment,
    }
}

impl Agent {
    /// A conversation that starts with `kickoff` as the first user message,
    /// offering `tools` (which must belong to `scope`).
    pub(crate) fn new(
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
    pub(crate) fn with_review(mut self, review: Arc<dyn CallReview>) -> Agent {
        self.review = Some(review);
        self
    }

    /// Check every call of the loop-ending tool with `check` before the
    /// loop ends on it.
    pub(crate) fn with_submit_check(mut self, check: SubmitCheck) -> Agent {
        self.submit_check = Some(check);
        self
    }

    /// The pass asks for its answer at once (survey, planning, synthesis):
    /// its first call writes nothing to the prompt cache, since a prefix
    /// written at 1.25x the input price and never read back costs a
    /// quarter more than not caching it. Should the conversation go on,
    /// later calls cache as usual.
    pub(crate) fn expecting_one_call(mut self) -> Agent {
        self.one_call_expected = true;
        self
    }

    /// The same conversation as routine work (it thinks as little as the
    /// model allows; see [`crate::ai::api::settings`]), for a pass whose
    /// toolbox is otherwise a judgment call's. Only before its first turn.
    pub(crate) fn for_routine_work(mut self) -> Agent {
        self.transcript = self.transcript.with_workload(Workload::Routine);
        self
    }

    /// The same conversation, investigating `dir` (absolute, canonical): its
    /// tools resolve relative paths against it where they also accept that
    /// (see [`ToolContext::home`](crate::ai::tools::ToolContext::home)).
    pub(crate) fn investigating(mut self, dir: &Path) -> Agent {
        self.home = Some(dir.to_path_buf());
        self
    }

    /// The same conversation, covering `members` too (the directories
    /// folded into the unit of the directory it investigates): it writes
    /// their dir entries (see [`ToolContext::unit`](crate::ai::tools::ToolContext::unit)).
    pub(crate) fn covering(mut self, members: &[PathBuf]) -> Agent {
        self.unit = members.to_vec();
        self
    }

    /// The same conversation, adding `stamps` to the dir entries its tools
    /// write (see [`ToolContext::stamps`](crate::ai::tools::ToolContext::stamps)).
    pub(crate) fn stamping(mut self, stamps: Vec<(PathBuf, Map<String, Value>)>) -> Agent {
        self.stamps = stamps;
        self
    }

    /// The tools offered.
    pub(crate) fn tools(&self) -> &[ToolDefinition] {
        self.transcript.tools()
    }

    /// Add `note` as a text block at the end of the pending user message, so
    /// the next request carries it. Tool results keep their place first, as
    /// the API requires. After a paused turn there is no pending user
    /// message, and the note is dropped.
    pub(crate) fn append_note(&mut self, note: &str) {
        self.transcript.append_note(note);
    }
}

impl From<AgentError> for PassError {
    fn from(err: AgentError) -> Self {
        match err {
            AgentError::CacheWrite(fault) => {
                PassError::Fatal(crate::ai::failure::InvestigationError::CacheWrite(fault))
            }
            other => PassError::Failed(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_are_routine_and_passes_judgment() {
        assert_eq!(workload(Toolbox::Dir), Workload::Routine);
        for toolbox in [Toolbox::Survey, Toolbox::Planning, Toolbox::Synthesis] {
            assert_eq!(workload(toolbox), Workload::Judgment);
        }
    }
}
