//! The one conversation driver: any agent run to its end under a
//! [`Policy`], whatever pass owns it (the survey, the plan, the synthesis
//! and its parts, a directory's loop, `luminos ask`, a refinement round).
//!
//! Before each turn the driver applies the policy: the context limit (a
//! conversation whose latest request passed it ends as full), the turns
//! (its own, then any it may borrow from the shared pool), the note that
//! tells the model its turns are running out, and, for a conversation that
//! runs alone on what is left, the note that the money pays for one last
//! request. It tells the agent how many requests are expected to follow
//! this one ([`expected_later`]): none on the last allowed turn (no turn
//! left to borrow) or on the last request the money pays for, so that
//! request writes nothing to the prompt cache that no one would read; for
//! a directory loop, what the loops below its directory took, when that is
//! fewer than its turns allow. Then it takes the turn ([`Agent::turn`], called from here
//! alone) and reads how it ended; a turn that could not complete ends the
//! conversation too, and a failure that makes every later request fail
//! ends the investigation ([`stop_for_api_error`]). What is left is one
//! [`CallEnd`], which the pass reads: every one of its arms can happen.
//!
//! Its edges: it knows turns, the purse's pace and the window, never what
//! a pass asks or what its answer means; lines go through the agent's
//! [`Printer`](crate::ai::engine::agent::Printer).

use crate::ai::api::ApiError;
use crate::ai::api::cost::LoopUsage;
use crate::ai::engine::agent::{Agent, AgentError, ModelRefusal, SubmitCheck, TurnEnd};
use crate::ai::engine::pool::TurnPool;
use crate::ai::engine::purse::{OverBudget, Pace};
use crate::ai::engine::session::{Session, stop_for_api_error};
use crate::ai::failure::InvestigationError;
use crate::ai::tools::ToolContext;
use crate::text::format_thousands;

/// How one conversation is run.
pub(crate) struct Policy<'a> {
    /// Turns it is allotted.
    pub turns: u32,
    /// Where it may borrow a turn at a time once those are used (the
    /// directory loops' shared pool).
    pub pool: Option<&'a TurnPool>,
    /// The context (input and cache, as the API reports it) past which the
    /// conversation ends as full before its next turn; the window alone
    /// bounds it otherwise.
    pub context_limit: Option<u64>,
    /// What the model is told as its turns run out.
    pub closing: Option<Closing>,
    /// How its requests share the purse.
    pub pace: Pace,
    /// Told to the model when the money left pays for one last request
    /// ([`Pace::Alone`] only says so).
    pub last_call_note: Option<&'static str>,
    /// What counts as the answer: a call of the loop-ending tool this
    /// refuses (with the reason it returns) does not end the conversation.
    pub answer: Option<SubmitCheck>,
    /// Told the conversation's usage after every turn (a directory loop's
    /// running spend).
    pub on_turn: Option<&'a (dyn Fn(&LoopUsage) + Sync)>,
    /// How many requests conversations like it made (a directory loop's:
    /// the loops below its directory, all ended before it started): what
    /// its later requests are expected from ([`expected_later`]).
    pub ended: &'a [u32],
}

impl Policy<'_> {
    /// A conversation of `turns` turns and nothing else: no pool, no limit
    /// but the window, no closing note, its requests shared with the run's.
    pub(crate) fn turns(turns: u32) -> Policy<'static> {
        Policy {
            turns,
            pool: None,
            context_limit: None,
            closing: None,
            pace: Pace::Shared,
            last_call_note: None,
            answer: None,
            on_turn: None,
            ended: &[],
        }
    }
}

/// The note of a conversation's last turns: from `from` turns left, each
/// request carries `note(turns_left)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Closing {
    pub from: u32,
    pub note: fn(u32) -> String,
}

/// How a conversation ended.
#[derive(Debug, Clone)]
pub(crate) enum CallEnd {
    /// The model called the loop-ending tool and its policy accepted it;
    /// this is its input.
    Submitted(serde_json::Value),
    /// The model declined (stop reason `refusal`).
    Refused(ModelRefusal),
    /// The context filled up: the model's window while it answered, a
    /// request that would not fit it (or that the API found too long), or
    /// the policy's context limit.
    ContextFull,
    /// Every turn, borrowed ones included, went by without an answer.
    OutOfTurns,
    /// The model's tool calls kept being malformed (see
    /// [`crate::ai::engine::agent::MALFORMED_IN_A_ROW`]).
    Malformed,
    /// A request failed after its retries, in a way later requests need
    /// not share.
    ApiError(ApiError),
    /// The money left could not pay for the next request, which was not
    /// sent.
    OverBudget(OverBudget),
}

impl CallEnd {
    /// The submitted input, if the conversation ended on one.
    pub(crate) fn submitted(self) -> Option<serde_json::Value> {
        match self {
            CallEnd::Submitted(input) => Some(input),
            CallEnd::Refused(_)
            | CallEnd::ContextFull
            | CallEnd::OutOfTurns
            | CallEnd::Malformed
            | CallEnd::ApiError(_)
            | CallEnd::OverBudget(_) => None,
        }
    }
}

/// A conversation run to its end.
#[derive(Debug, Clone)]
pub(crate) struct Conversed {
    pub end: CallEnd,
    /// What its requests used and cost.
    pub usage: LoopUsage,
    /// Turns borrowed from the pool.
    pub borrowed: u32,
    /// Tool calls whose handler ran: what the model looked at.
    pub tools_run: u32,
}

/// Run `agent`'s conversation to its end under `policy`, its tool calls in
/// `tools` (each turn numbered from 1). An error only for the failures that
/// end the investigation.
pub(crate) async fn converse(
    agent: &mut Agent,
    session: &Session,
    tools: &ToolContext<'_>,
    mut policy: Policy<'_>,
) -> Result<Conversed, InvestigationError> {
    agent.set_pace(policy.pace);
    // A loop's running spend is counted as the run's plan counts it.
    let pricing = session.plan_pricing();
    let mut run = Conversed {
        end: CallEnd::OutOfTurns,
        usage: LoopUsage::default(),
        borrowed: 0,
        tools_run: 0,
    };
    let mut limit = policy.turns;
    for turn in 1.. {
        if let Some(end) = before_turn(agent, session, &policy, &mut run, (turn, &mut limit))? {
            run.end = end;
            break;
        }
        let tools = ToolContext { turn, ..*tools };
        let done = match agent.turn(session, &tools, &mut policy.answer).await {
            Ok(done) => done,
            Err(err) => {
                run.end = not_sent(agent, err, session)?;
                break;
            }
        };
        run.usage.record(&done.usage, &pricing);
        run.tools_run += done.tools_run;
        if let Some(on_turn) = policy.on_turn {
            on_turn(&run.usage);
        }
        run.end = match done.end {
            TurnEnd::GoesOn => continue,
            TurnEnd::Submitted(input) => CallEnd::Submitted(input),
            TurnEnd::Refused(refusal) => CallEnd::Refused(refusal),
            TurnEnd::ContextFull => CallEnd::ContextFull,
            TurnEnd::Malformed => CallEnd::Malformed,
        };
        break;
    }
    Ok(run)
}

/// The policy before turn `turn` of a conversation allowed `limit` turns so
/// far: how it ends here, if it does (its context past the limit, its turns
/// gone and none to borrow, no money for the next request); otherwise the
/// turn borrowed if need be, and the notes of its last turns and last
/// request added.
fn before_turn(
    agent: &mut Agent,
    session: &Session,
    policy: &Policy<'_>,
    run: &mut Conversed,
    (turn, limit): (u32, &mut u32),
) -> Result<Option<CallEnd>, InvestigationError> {
    // The context comes first: a conversation past it must not borrow a
    // turn it cannot use.
    if let Some(budget) = policy.context_limit
        && run.usage.budget_exceeded(budget)
    {
        agent.printer().line(&format!(
            "Context budget reached — exiting early (context size {} > {} budget; loop spend {} tokens)",
            format_thousands(run.usage.last_context),
            format_thousands(budget),
            format_thousands(run.usage.total()),
        ));
        return Ok(Some(CallEnd::ContextFull));
    }
    if turn > *limit {
        if !policy.pool.is_some_and(|pool| pool.borrow_one(*limit)) {
            return Ok(Some(CallEnd::OutOfTurns));
        }
        *limit += 1;
        run.borrowed += 1;
        agent.printer().detail(&format!(
            "Borrowed a turn from the shared pool ({} so far)",
            run.borrowed
        ));
    }
    if let Some(closing) = policy.closing
        && *limit - turn < closing.from
    {
        agent.append_note(&(closing.note)(*limit - turn + 1));
    }
    let borrowable = policy.pool.is_some_and(|pool| pool.could_lend(*limit));
    let most = later_requests(turn, *limit, borrowable);
    agent.expect_later(expected_later(turn, most, policy.ended));
    if let Some(note) = policy.last_call_note {
        match agent.quote(session) {
            Ok(allowed) if allowed.last => {
                agent.append_note(note);
                agent.expect_later(0.0);
            }
            Ok(_) => {}
            Err(over) => return not_sent(agent, AgentError::OverBudget(over), session).map(Some),
        }
    }
    Ok(None)
}

/// How many requests may follow turn `turn` of a conversation allowed
/// `limit` turns so far: its turns left, none on its last unless a turn
/// can still be borrowed (`borrowable`), then at least that one.
pub(crate) fn later_requests(turn: u32, limit: u32, borrowable: bool) -> u32 {
    let left = limit.saturating_sub(turn);
    if left == 0 && borrowable { 1 } else { left }
}

/// The requests a conversation at turn `turn` is expected to make after
/// it, when at most `most` may follow and conversations of its kind that
/// ended before it made `ended` requests each: of those that lasted to
/// this turn, how many they made after it, on average, when that is fewer;
/// `most` when none lasted that long (nothing is known of such a turn).
pub(crate) fn expected_later(turn: u32, most: u32, ended: &[u32]) -> f64 {
    let after: Vec<u32> = ended
        .iter()
        .filter(|n| **n >= turn)
        .map(|n| n - turn)
        .collect();
    if after.is_empty() {
        return f64::from(most);
    }
    let mean = f64::from(after.iter().sum::<u32>()) / after.len() as f64;
    mean.min(f64::from(most))
}

/// How a conversation ends when its turn could not complete, said in one
/// line; an error for what ends the investigation.
fn not_sent(
    agent: &Agent,
    err: AgentError,
    session: &Session,
) -> Result<CallEnd, InvestigationError> {
    let printer = agent.printer();
    match err {
        AgentError::Api(err) => {
            stop_for_api_error(session, &err)?;
            printer.line(&format!("API error: {err}"));
            // The window is full: the API's words for it.
            Ok(if err.prompt_too_long().is_some() {
                CallEnd::ContextFull
            } else {
                CallEnd::ApiError(err)
            })
        }
        AgentError::TooLarge(err) => {
            printer.line(&format!("Context window reached — {err}; exiting early"));
            Ok(CallEnd::ContextFull)
        }
        AgentError::OverBudget(over) => {
            printer.line(&format!("Budget reached — {over}; exiting early"));
            Ok(CallEnd::OverBudget(over))
        }
        AgentError::Tool(err) => Err(err.into()),
        AgentError::Prompt(err) => Err(err.into()),
        AgentError::CacheWrite(fault) => Err(InvestigationError::CacheWrite(fault)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_allowed_turn_expects_nothing_after_it() {
        assert_eq!(later_requests(1, 10, false), 9);
        assert_eq!(later_requests(9, 10, true), 1);
        assert_eq!(later_requests(10, 10, false), 0);
        // A turn the pool can still lend is not the last.
        assert_eq!(later_requests(10, 10, true), 1);
        assert_eq!(later_requests(12, 10, false), 0);
    }

    #[test]
    fn ended_conversations_say_what_to_expect_after_a_turn() {
        // Nothing known: what the turns allow.
        assert_eq!(expected_later(1, 9, &[]), 9.0);
        // Loops of two requests: one after the first, none after the second.
        assert_eq!(expected_later(1, 9, &[2, 2, 2]), 1.0);
        assert_eq!(expected_later(2, 8, &[2, 2, 2]), 0.0);
        // Past every ended loop: nothing known again.
        assert_eq!(expected_later(3, 7, &[2, 2]), 7.0);
        // Only those that lasted to the turn count, and never more than
        // the turns allow.
        assert_eq!(expected_later(2, 8, &[1, 2, 6]), 2.0);
        assert_eq!(expected_later(2, 1, &[10]), 1.0);
    }
}
