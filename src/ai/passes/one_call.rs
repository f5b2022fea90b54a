//! The conversation of a pass that ends in one submit call (the survey,
//! planning and synthesis): the same turn loop, the same handling of API
//! errors, refusals and a full context, kept in one place so the passes
//! differ only in what they ask and what they make of the answer.
//!
//! It knows no pass: what to say, which tools to offer and how many turns
//! to allow come in a [`OneCall`]; what each way of ending means for the
//! run is the caller's business ([`CallEnd`]). The per-directory loop is
//! not one of these: it may call many tools and keeps its own loop.

use serde_json::Value;

use crate::ai::engine::agent::{Agent, AgentError, Printer, TurnOutcome};
use crate::ai::engine::session::{Session, stop_for_api_error};
use crate::ai::failure::InvestigationError;
use crate::ai::passes::record_refusal;
use crate::ai::tools::{self, Toolbox};
use crate::cache::Cache;
use crate::progress::Progress;

/// What every conversation of a pass uses: the session that sends it, the
/// cache its tool calls are logged in and the progress lines it prints.
#[derive(Clone, Copy)]
pub(crate) struct PassContext<'a> {
    pub session: &'a Session,
    pub cache: &'a Cache,
    pub progress: &'a Progress,
}

/// What sets one pass's conversation apart from another's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OneCall {
    /// The tools offered (the pass's submit tool among them).
    pub toolbox: Toolbox,
    /// The first user message.
    pub kickoff: &'static str,
    /// What is said when the model replies without calling a tool.
    pub nudge: &'static str,
    /// The `directory` name of its tool calls in `investigation.log`.
    pub log_name: &'static str,
    /// Turns it may take.
    pub max_turns: u32,
}

/// How one conversation ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallEnd {
    /// The submit tool was called with this input.
    Submitted(Value),
    /// The API failed (after retries); the line was printed.
    ApiError,
    /// Every turn went by without a submission.
    OutOfTurns,
    /// The model declined (this says how).
    Refused(String),
    /// The context window filled up (the API said so, or the next request
    /// would not have fit).
    ContextFull,
}

/// One conversation over `system`, up to `call.max_turns` turns. Routine
/// work (`routine`) thinks as little as the model allows; the rest keeps
/// the model's default. An error only for failures that must stop the run.
pub(crate) async fn converse(
    ctx: PassContext<'_>,
    call: OneCall,
    system: String,
    routine: bool,
) -> Result<CallEnd, InvestigationError> {
    let agent = Agent::new(
        call.toolbox,
        system,
        call.kickoff,
        tools::definitions(call.toolbox),
        call.nudge,
        Printer::Pass(ctx.progress.clone()),
    )
    .expecting_one_call();
    let mut agent = if routine {
        agent.for_routine_work()
    } else {
        agent
    };
    for turn in 1..=call.max_turns {
        match agent
            .turn(ctx.session, ctx.cache, call.log_name, turn)
            .await
        {
            Ok(step) => match step.outcome {
                TurnOutcome::Ended(input) => return Ok(CallEnd::Submitted(input)),
                TurnOutcome::Continue => {}
                TurnOutcome::Refused(refusal) => return Ok(CallEnd::Refused(refusal.describe())),
                TurnOutcome::ContextFull => return Ok(CallEnd::ContextFull),
            },
            Err(AgentError::Api(err)) => {
                stop_for_api_error(ctx.session, &err)?;
                ctx.progress.ai(&format!("  API error: {err}"));
                return Ok(CallEnd::ApiError);
            }
            // What would not fit is a full context, said as it happened.
            Err(AgentError::TooLarge(err)) => {
                ctx.progress.ai(&format!("  Not sent: {err}."));
                return Ok(CallEnd::ContextFull);
            }
            Err(AgentError::Tool(err)) => return Err(err.into()),
            Err(AgentError::Prompt(err)) => return Err(err.into()),
        }
    }
    Ok(CallEnd::OutOfTurns)
}

/// How a pass that can do without its answer words its absence.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Without {
    /// The pass as the out-of-turns warning names it.
    pub name: &'static str,
    /// What a refusal left undone ("The survey was not made").
    pub missing: &'static str,
    /// What the run does instead, said after the refusal's reason.
    pub instead: &'static str,
}

/// A pass's conversation, settled: the answer, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// The submit tool was called with this input.
    Submitted(Value),
    /// The API failed (after retries); the line was printed.
    ApiError,
    /// The model declined, the context filled up or the turns ran out;
    /// a refusal is recorded as an info flag and running out is warned of.
    Without,
}

impl Answer {
    /// The submitted input; `None` for a pass whose absence the run takes
    /// the same way whether the API failed or the model gave no answer.
    pub(crate) fn submitted(self) -> Option<Value> {
        match self {
            Answer::Submitted(input) => Some(input),
            Answer::ApiError | Answer::Without => None,
        }
    }
}

/// [`converse`] for a pass the run can go on without: a refusal becomes an
/// info flag in `without`'s words, running out of turns a warning line.
pub(crate) async fn ask(
    ctx: PassContext<'_>,
    call: OneCall,
    system: String,
    without: Without,
) -> Result<Answer, InvestigationError> {
    Ok(match converse(ctx, call, system, false).await? {
        CallEnd::Submitted(input) => Answer::Submitted(input),
        CallEnd::ApiError => Answer::ApiError,
        CallEnd::Refused(why) => {
            let finding = format!("{}: {why}. {}", without.missing, without.instead);
            record_refusal(ctx.cache, ctx.progress, "general", finding);
            Answer::Without
        }
        CallEnd::ContextFull => Answer::Without,
        CallEnd::OutOfTurns => {
            ctx.progress
                .ai(&format!("Warning: {} ran out of turns.", without.name));
            Answer::Without
        }
    })
}
