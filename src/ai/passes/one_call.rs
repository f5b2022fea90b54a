//! The conversation of a pass that ends in one submit call (the survey,
//! planning and synthesis): what sets one such pass apart from another
//! ([`OneCall`]), run on the engine's one driver
//! ([`crate::ai::engine::conversation`]) with a policy of its turns alone,
//! so the passes differ only in what they ask and what they make of the
//! answer.
//!
//! What each way of ending means for the run is the caller's business
//! ([`CallEnd`]; [`Without::settle`] says what a missing answer left
//! undone).

use crate::ai::engine::agent::{Agent, Printer};
use crate::ai::engine::context::RunContext;
use crate::ai::engine::conversation::{CallEnd, Policy, converse as drive};
use crate::ai::failure::InvestigationError;
use crate::ai::passes::record_refusal;
use crate::ai::tools::{self, Toolbox};

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
    let conversed = drive(
        &mut agent,
        &ctx.session,
        &tools,
        Policy::turns(call.max_turns),
    )
    .await?;
    Ok(conversed.end)
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
            CallEnd::Malformed => {
                ctx.progress.ai(&format!(
                    "Warning: {} stopped: its tool calls were malformed.",
                    self.name
                ));
            }
            CallEnd::OverBudget(_) => {
                ctx.progress.ai(&format!(
                    "Warning: {} stopped: the budget is spent.",
                    self.name
                ));
            }
            CallEnd::Submitted(_) | CallEnd::ContextFull | CallEnd::ApiError(_) => {}
        }
        end
    }
}
