//! The conversation of a pass that ends in one submit call (the survey,
//! planning and synthesis): the same turn loop, the same handling of API
//! errors, refusals and a full context, kept in one place so the passes
//! differ only in what they ask and what they make of the answer.
//!
//! It knows no pass: what to say, which tools to offer and how many turns
//! to allow come in a [`OneCall`]; what each way of ending means for the
//! run is the caller's business ([`CallEnd`], the one type from the turn
//! to the pass; [`Without::settle`] says what a missing answer left
//! undone). The per-directory loop is not one of these: it may call many
//! tools and keeps its own loop.

use crate::ai::engine::agent::{Agent, AgentError, CallEnd, Printer};
use crate::ai::engine::context::RunContext;
use crate::ai::engine::session::stop_for_api_error;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::record_refusal;
use crate::ai::tools::{self, ToolContext, Toolbox};

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

/// One conversation over `system`, up to `call.max_turns` turns. Routine
/// work (`routine`) thinks as little as the model allows; the rest keeps
/// the model's default. An error only for failures that must stop the run.
pub(crate) async fn converse(
    ctx: &RunContext,
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
    let tools = ctx.tools(call.log_name);
    for turn in 1..=call.max_turns {
        match agent
            .turn(&ctx.session, &ToolContext { turn, ..tools })
            .await
        {
            Ok(step) => {
                if let Some(end) = step.end {
                    return Ok(end);
                }
            }
            Err(AgentError::Api(err)) => {
                stop_for_api_error(&ctx.session, &err)?;
                ctx.progress.ai(&format!("  API error: {err}"));
                return Ok(CallEnd::ApiError);
            }
            // What would not fit is a full context, said as it happened.
            Err(AgentError::TooLarge(err)) => {
                ctx.progress.ai(&format!("  Not sent: {err}."));
                return Ok(CallEnd::ContextFull);
            }
            // The budget cannot pay for it: the pass goes without, as when
            // its turns run out.
            Err(AgentError::OverBudget(err)) => {
                ctx.progress.ai(&format!("  Not sent: {err}."));
                return Ok(CallEnd::OverBudget);
            }
            Err(AgentError::Tool(err)) => return Err(err.into()),
            Err(AgentError::Prompt(err)) => return Err(err.into()),
            Err(AgentError::CacheWrite(fault)) => {
                return Err(InvestigationError::CacheWrite(fault));
            }
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

impl Without {
    /// Say what the missing answer of a conversation that ended on `end`
    /// left undone: a refusal becomes an info flag in these words, running
    /// out of turns a warning line. `end` comes back as it was.
    pub(crate) fn settle(self, ctx: &RunContext, end: CallEnd) -> CallEnd {
        match &end {
            CallEnd::Refused(refusal) => {
                let finding = format!("{}: {}. {}", self.missing, refusal.describe(), self.instead);
                record_refusal(&ctx.cache, &ctx.progress, "general", finding);
            }
            CallEnd::OutOfTurns => {
                ctx.progress
                    .ai(&format!("Warning: {} ran out of turns.", self.name));
            }
            CallEnd::OverBudget => {
                ctx.progress.ai(&format!(
                    "Warning: {} stopped: the budget is spent.",
                    self.name
                ));
            }
            CallEnd::Submitted(_) | CallEnd::ContextFull | CallEnd::ApiError => {}
        }
        end
    }
}
