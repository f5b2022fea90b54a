//! Running the run's work: the dir loops, up to `-j` at once, and the
//! mechanical entries (built without the model); children before parents,
//! band order among the ready, a spending cap, the budget, and replanning
//! as loops finish.
//!
//! The original ran one loop at a time. Most of a loop's wall time is spent
//! waiting for the model, so loops on independent directories overlap well.
//! The one real dependency is that a parent's prompt embeds its children's
//! summaries, so the scheduler is a dependency graph over the loops' order:
//! a loop is *ready* once every loop below it has finished, and among the
//! ready ones the earliest in the order starts first. With one job that is
//! exactly the plan's order.
//!
//! Under `--batch` every ready loop starts at once (`-j` does not limit a
//! round's width), each holding a batch lane (see
//! [`crate::ai::engine::batch`]) until the scheduler has started the loops
//! its end made ready, so those join the same next round; and the cap
//! counts what the running loops are expected to cost, since their spend
//! only shows once a round is read.
//!
//! **Replanning** (seed 003). Each loop that ends is a handoff (`ledger.rs`):
//! its cost against its expectation, its leads. After every
//! [`crate::ai::rules::decide::MIN_HANDOFFS_FOR_REPLAN`] handoffs, and whenever nothing is left to run,
//! a round decides again with the money actually left
//! ([`crate::ai::rules::decide::Replanner`], through [`Replanning`], which
//! also keeps each round in the cache, `replanning.rs`): what it buys joins the schedule
//! after the loops already bought, and the synthesis's share is held back
//! in the session's purse at what the round projects.
//!
//! **Entries from the scan** are written late: a stale directory without a
//! loop stays open to a round until a loop above it is about to start (its
//! prompt reads them), or the work ends. So a round never buys a directory
//! below a loop that started.
//!
//! The budget is enforced three ways: a loop the money left (less the
//! synthesis's share) is not expected to pay for does not start (its unit
//! goes back among the candidates); each request is priced at its worst case
//! before it is sent ([`crate::ai::engine::purse`]); and a loop the money
//! could not start leaves its directories to the scan. `--max-cost` stops
//! new loops once the spend so far and the next loop's expected cost would
//! pass it, after the run's first loop: each rerun under the same cap makes
//! progress; what was not done is left for the next run.
//!
//! It sits with the passes because it runs two of them: each loop is
//! [`crate::ai::passes::dir_loop::investigate_dir`] over the run's
//! [`DirShared`], each mechanical entry
//! [`crate::ai::passes::mechanical::mechanical_update`]; what it hands a
//! loop and gets back is the loop's ([`crate::ai::passes::dir_loop::DirJob`],
//! [`DirOutcome`]). [`Schedule`] (the dependency graph, in `schedule.rs`),
//! the ledger and the cost rules (`cost.rs`) are pure; [`run_work`], here,
//! is the async driver on a tokio `JoinSet`, its steps [`Runner`]'s
//! (`runner.rs`). Cancellation (Ctrl-C) is the caller's:
//! dropping the driver aborts the running loops at their next await point,
//! after any tool call (and its cache write) in progress has returned. The
//! rules' unit tests are in `tests.rs`.

mod cost;
mod ledger;
#[cfg(test)]
mod props;
mod records;
mod replanning;
mod runner;
mod schedule;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirOutcome, DirShared};
use crate::ai::rules::decide::Work;
use crate::ai::rules::dir_stats::TreeStats;
use crate::progress::DirBoard;

pub(crate) use cost::{committed_spend, expected_loop_cost, within_budget, within_cap};
pub(crate) use replanning::Replanning;
use runner::Runner;
pub(crate) use schedule::Schedule;

/// How the dir loops are run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoopOptions {
    /// Loops at once (at least 1).
    pub jobs: usize,
    /// `--max-cost`, in the plan's meter (a plan in tokens has none).
    pub max_cost: Option<f64>,
    /// The budget in the plan's meter (dollars, or millions of tokens);
    /// `None` without one. The loops may spend it less what the purse
    /// holds back for the synthesis.
    pub budget: Option<f64>,
}

/// What the work phase did.
#[derive(Debug, Default)]
pub(crate) struct LoopsDone {
    /// In the order the loops finished.
    pub outcomes: Vec<DirOutcome>,
    /// The cap kept at least one directory from starting.
    pub cap_hit: bool,
    /// Mechanical entries written (new or changed).
    pub mechanical_written: usize,
    /// Loops the budget could no longer pay for, summarised mechanically.
    pub budget_spent: usize,
    /// Replanning rounds.
    pub rounds: usize,
    /// Loops the rounds bought, and of those, for a lead.
    pub bought_by_rounds: usize,
    pub bought_for_leads: usize,
}

/// How often the live display's token and dollar figures are refreshed.
const BOARD_REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

/// Run the loops of `work` (`options.jobs` at a time), replanning as they
/// finish, and write its mechanical entries, each once everything below it
/// that is part of the work is done. The steps are [`Runner`]'s.
pub(crate) async fn run_work(
    shared: Arc<DirShared>,
    work: &Work,
    stats: &TreeStats,
    options: LoopOptions,
    board: &DirBoard,
    replanning: &Replanning<'_>,
) -> Result<LoopsDone, InvestigationError> {
    let mut runner = Runner::new(shared, work, stats, options, (board, replanning));
    let mut refresh = tokio::time::interval(BOARD_REFRESH);
    loop {
        runner.start_ready()?;
        if runner.is_idle() {
            if runner.goes_on_when_idle() {
                continue;
            }
            break;
        }
        let Some((i, result)) = runner.next_end(&mut refresh).await? else {
            continue;
        };
        // The first failure that stops the run stops it now; dropping the
        // runner aborts the other loops.
        runner.ended(i, result?);
    }
    runner.finish()
}
