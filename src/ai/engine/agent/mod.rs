//! The shared tool-loop engine: one conversation with the model, advanced one
//! turn at a time by the pass that owns it.
//!
//! A turn: fit the request to the model's window (or refuse to send it),
//! call the model; print its text and its tool calls (arguments without
//! `data`) on stderr, never its thinking; append its reply to the history
//! exactly as received; then either nudge it (no tool call) or run the
//! calls in order, in the [`ToolContext`](crate::ai::tools::ToolContext)
//! the pass hands the turn, and answer each with a `tool_result` in the
//! next user message. A call to a tool that was not offered gets an
//! `is_error` result; a call to the loop-ending tool (`submit_report`,
//! `submit_survey`, `submit_plan`) is acknowledged (unless the pass's
//! [`SubmitCheck`] refuses it) and its input handed back to the pass. Once
//! a cache write has failed, no turn sends anything.
//!
//! A dir loop's grounding may also look at each call before it takes
//! effect ([`LoopCheck`], which the engine asks; grounding knows no engine)
//! and answer it itself: the tool then does not run, and a loop-ending call
//! does not end the loop.
//!
//! A turn knows nothing about turn limits, money or what a proposal means:
//! the one driver ([`crate::ai::engine::conversation`]) takes the turns
//! under a pass's policy, and is the only caller of [`Agent::turn`].
//!
//! This file holds the conversation and how a pass sets it up ([`Agent`],
//! [`Agent::new`] and its builders, [`SubmitCheck`]);
//! `turn.rs` holds one turn ([`Agent::turn`]: the call, what its stop
//! reason decides, the tool calls it runs) and how it ends ([`TurnEnd`]);
//! `printer.rs` holds where the conversation's lines go and how a call is
//! shown ([`Printer`]).

mod printer;
mod turn;

use std::sync::Arc;

use serde_json::Value;

use crate::ai::api::ToolDefinition;
use crate::ai::api::caching::ExpectedReads;
use crate::ai::api::settings::Workload;
use crate::ai::engine::purse::{Allowance, OverBudget, Pace};
use crate::ai::engine::session::Session;
use crate::ai::engine::transcript::Transcript;
use crate::ai::tools::Toolbox;
use crate::grounding::LoopCheck;

pub(crate) use printer::Printer;
pub(crate) use turn::{AgentError, MALFORMED_IN_A_ROW, ModelRefusal, TurnEnd};

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
    review: Option<Arc<LoopCheck>>,
    /// How its requests share the purse (its policy sets it).
    pace: Pace,
    /// The pass expects its first call to be its only one.
    one_call_expected: bool,
    /// Other conversations open with the same tools and system prompt (the
    /// run's dir loops): later ones read that prefix back.
    shared_prefix: bool,
    /// Requests the conversation is expected to make after the next one, as
    /// its driver last said ([`Agent::expect_later`]).
    later: f64,
    /// Calls made so far.
    calls: u32,
    /// Malformed tool calls in a row, up to the latest.
    malformed: u32,
}

/// How much a conversation of `toolbox` thinks: the directory loops are
/// routine, the whole-run passes judgment (see
/// [`crate::ai::api::settings`]).
pub(crate) fn workload(toolbox: Toolbox) -> Workload {
    match toolbox {
        // A question reads files as a loop does.
        Toolbox::Dir | Toolbox::Ask => Workload::Routine,
        // The refinement rewrites the verdict.
        Toolbox::Survey | Toolbox::Planning | Toolbox::Synthesis | Toolbox::Refine => {
            Workload::Judgment
        }
    }
}

impl Agent {
    /// A conversation that starts with `kickoff` as the first user message,
    /// offering `tools` (which must belong to `toolbox`).
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
            pace: Pace::Shared,
            one_call_expected: false,
            shared_prefix: false,
            later: 1.0,
            calls: 0,
            malformed: 0,
        }
    }

    /// Show every offered call to `review` before it takes effect (see
    /// [`LoopCheck::review`]).
    pub(crate) fn with_review(mut self, review: Arc<LoopCheck>) -> Agent {
        self.review = Some(review);
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

    /// Other conversations of the run open with this one's tools and
    /// system prompt (the dir loops): its prefix is worth caching for them
    /// even on its last request.
    pub(crate) fn sharing_prefix(mut self) -> Agent {
        self.shared_prefix = true;
        self
    }

    /// After its next request the conversation is expected to make `later`
    /// more (its driver knows its turns, and which request is the last).
    pub(crate) fn expect_later(&mut self, later: f64) {
        self.later = later;
    }

    /// The same conversation as routine work (it thinks as little as the
    /// model allows; see [`crate::ai::api::settings`]), for a pass whose
    /// toolbox is otherwise a judgment call's. Only before its first turn.
    pub(crate) fn for_routine_work(mut self) -> Agent {
        self.transcript = self.transcript.with_workload(Workload::Routine);
        self
    }

    /// The tools offered.
    pub(crate) fn tools(&self) -> &[ToolDefinition] {
        self.transcript.tools()
    }

    /// Where the conversation's lines go.
    pub(crate) fn printer(&self) -> &Printer {
        &self.printer
    }

    /// Its requests share the purse as `pace` says.
    pub(crate) fn set_pace(&mut self, pace: Pace) {
        self.pace = pace;
    }

    /// How often later requests are expected to read the next request's
    /// parts back.
    fn next_reads(&self) -> ExpectedReads {
        let later = if self.one_call_expected && self.calls == 0 {
            0.0
        } else {
            self.later
        };
        ExpectedReads::of(later, self.shared_prefix)
    }

    /// What the purse would allow the next request if it went now.
    pub(crate) fn quote(&self, session: &Session) -> Result<Allowance, OverBudget> {
        session.quote(&self.transcript, self.next_reads(), self.pace)
    }

    /// Add `note` as a text block at the end of the pending user message, so
    /// the next request carries it. Tool results keep their place first, as
    /// the API requires. After a paused turn there is no pending user
    /// message, and the note is dropped.
    pub(crate) fn append_note(&mut self, note: &str) {
        self.transcript.append_note(note);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_are_routine_and_passes_judgment() {
        assert_eq!(workload(Toolbox::Dir), Workload::Routine);
        assert_eq!(workload(Toolbox::Ask), Workload::Routine);
        for toolbox in [
            Toolbox::Survey,
            Toolbox::Planning,
            Toolbox::Synthesis,
            Toolbox::Refine,
        ] {
            assert_eq!(workload(toolbox), Workload::Judgment);
        }
    }
}
