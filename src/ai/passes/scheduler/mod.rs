//! Running the run's work: the dir loops, up to `-j` at once, and the
//! mechanical entries (built without the model, at once, as soon as what
//! they summarise is done); children before parents, band order among the
//! ready, a spending cap and the budget.
//!
//! The original ran one loop at a time. Most of a loop's wall time is spent
//! waiting for the model, so loops on independent directories overlap well.
//! The one real dependency is that a parent's prompt embeds its children's
//! summaries, so the scheduler is a dependency graph over the plan's order:
//! a directory is *ready* once every directory below it in the order has
//! finished, and among the ready ones the earliest in the order starts first.
//! With one job that is exactly the plan's order.
//!
//! Under `--batch` every ready loop starts at once (`-j` does not limit a
//! round's width), each holding a batch lane (see
//! [`crate::ai::engine::batch`]) until the scheduler has started the loops
//! (and written the mechanical entries) its end made ready, so those join
//! the same next round; and the cap counts what the running loops are
//! expected to cost, since their spend only shows once a round is read.
//!
//! The budget is a softer stop than `--max-cost`: a loop the money left
//! (less the synthesis's share) cannot pay for is not started, and its
//! directories get mechanical entries instead, so every directory still
//! ends with one. `--max-cost` stays the hard stop it always was: past it
//! nothing new starts, and what was not done is left for the next run.
//!
//! It sits with the passes because it runs two of them: each loop is
//! [`investigate_dir`] over the run's [`DirShared`], each mechanical entry
//! [`mechanical_update`]; what it hands a loop and gets back is the loop's
//! ([`DirJob`], [`DirOutcome`]).
//! [`Schedule`] (the dependency graph, in `schedule.rs`) and the cost
//! rules (`cost.rs`) are pure; [`run_work`], here, is the async
//! driver on a tokio `JoinSet`. Cancellation (Ctrl-C) is the caller's: dropping
//! the driver aborts the running loops at their next await point, after any
//! tool call (and its cache write) in progress has returned. The rules'
//! unit tests are in `tests.rs`.

mod cost;
mod schedule;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::task::JoinSet;

use crate::ai::engine::session::Session;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirJob, DirOutcome, DirShared, investigate_dir};
use crate::ai::passes::mechanical::{mechanical_update, write_mechanical};
use crate::ai::rules::decide::Work;
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::discover::{display_name, sort_leaf_first};
use crate::ai::rules::mechanical::MechanicalReason;
use crate::ai::rules::plan::children_first;
use crate::progress::DirBoard;

pub(crate) use cost::{committed_spend, expected_loop_cost, within_budget, within_cap};
pub(crate) use schedule::Schedule;

/// Directory loops run at once when `-j` is not given.
pub(crate) const DEFAULT_JOBS: u32 = 4;

/// How the dir loops are run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoopOptions {
    /// Loops at once (at least 1).
    pub jobs: usize,
    /// `--max-cost`, in dollars.
    pub max_cost: Option<f64>,
    /// What the run may have spent when its last loop starts: the budget
    /// less the synthesis's share; `None` without a budget.
    pub budget_for_loops: Option<f64>,
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
}

/// One piece of the work, as the schedule knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// The loop `planned[n]`.
    Loop(usize),
    /// A directory summarised without the model.
    Mechanical,
}

/// How often the live display's token and dollar figures are refreshed.
const BOARD_REFRESH: std::time::Duration = std::time::Duration::from_millis(500);

/// Every token the run has processed or produced so far.
fn tokens_so_far(session: &Session) -> u64 {
    let totals = session.tracker().totals();
    totals
        .all_input_tokens()
        .saturating_add(totals.usage.output_tokens)
}

/// Run the loops of `work` (`options.jobs` at a time) and write its
/// mechanical entries, each once everything below it that is part of the
/// work is done.
pub(crate) async fn run_work(
    shared: Arc<DirShared>,
    work: &Work,
    stats: &TreeStats,
    options: LoopOptions,
    board: &DirBoard,
) -> Result<LoopsDone, InvestigationError> {
    let (planned, mechanical) = (&work.loops, &work.mechanical);
    let contents_changed = |dir: &Path| shared.changed.contains(dir);
    let total = planned.len();
    let session = &shared.run.session;
    let model = session.model_facts().model;
    let pricing = session.tracker().pricing();
    let batching = session.is_batching();
    let width = if batching {
        usize::MAX
    } else {
        options.jobs.max(1)
    };
    // Each running loop's batch lane; the lane of the loop that ended last
    // is let go only after the work its end made ready has started.
    let mut lanes = HashMap::new();
    let mut ended_lane = None;
    // What each running loop was expected to cost when it started.
    let mut expectations: HashMap<usize, f64> = HashMap::new();
    let mut pieces: HashMap<PathBuf, Piece> = planned
        .iter()
        .enumerate()
        .map(|(n, p)| (p.unit.root.clone(), Piece::Loop(n)))
        .collect();
    let mut preferred: Vec<PathBuf> = planned.iter().map(|p| p.unit.root.clone()).collect();
    for dir in mechanical {
        pieces.insert(dir.clone(), Piece::Mechanical);
        preferred.push(dir.clone());
    }
    let order = children_first(&preferred);
    let kinds: Vec<Piece> = order.iter().map(|dir| pieces[dir]).collect();
    let is_loop = |i: usize| matches!(kinds[i], Piece::Loop(_));
    let mut schedule = Schedule::new(&order);
    let mut running: JoinSet<(usize, Result<DirOutcome, InvestigationError>)> = JoinSet::new();
    let mut done = LoopsDone::default();
    let mut finished_costs = Vec::new();
    let mut launched = vec![false; planned.len()];
    let mut started = 0;
    let mut refresh = tokio::time::interval(BOARD_REFRESH);
    loop {
        // A loop starts sending at once: the round waits until every loop
        // ready now has started (and holds a lane of its own).
        let starting = session.lane();
        // Mechanical entries cost nothing (and send no request): they are
        // written as soon as they are ready, even past the cap, each batch
        // of ready ones at once (their parents become ready when the batch
        // is written).
        loop {
            let mut batch = Vec::new();
            let mut ready = Vec::new();
            while let Some(i) = schedule.start_next_where(|i| !is_loop(i)) {
                let dir = schedule.dir(i).to_path_buf();
                let changed = contents_changed(&dir);
                let update =
                    mechanical_update(&shared, stats, &dir, changed, MechanicalReason::NotChosen)?;
                batch.extend(update);
                ready.push(i);
            }
            if ready.is_empty() {
                break;
            }
            done.mechanical_written += write_mechanical(&shared, &batch)?;
            for i in ready {
                schedule.finish(i);
            }
        }
        while running.len() < width && !done.cap_hit && schedule.has_ready_where(is_loop) {
            let spent = session.spent();
            let expected = expected_loop_cost(&finished_costs, model, &pricing);
            let committed = committed_spend(spent, expectations.values().sum(), batching);
            if !within_cap(committed, expected, options.max_cost) {
                done.cap_hit = true;
                shared.run.progress.ai(&format!(
                    "Spending cap reached (${spent:.2} spent of ${:.2}): no new directories \
                     start; the running ones finish.",
                    options.max_cost.unwrap_or_default()
                ));
                break;
            }
            let Some(i) = schedule.start_next_where(is_loop) else {
                break;
            };
            let Piece::Loop(n) = kinds[i] else {
                continue;
            };
            let plan = &planned[n];
            let expected = if finished_costs.is_empty() {
                plan.cost
            } else {
                expected_loop_cost(&finished_costs, model, &pricing)
            };
            let shown = display_name(shared.run.target(), &plan.unit.root);
            let reserved: f64 = planned
                .iter()
                .enumerate()
                .filter(|(m, other)| !launched[*m] && other.rank < plan.rank)
                .map(|(_, other)| other.cost)
                .sum();
            launched[n] = true;
            if !within_budget(
                spent,
                expectations.values().sum(),
                expected,
                reserved,
                options.budget_for_loops,
            ) {
                shared.run.progress.ai(&format!(
                    "Budget reached (${spent:.2} spent): {shown}/ is summarised from the scan \
                     instead of investigated."
                ));
                let mut dirs: Vec<PathBuf> = plan.unit.dirs().cloned().collect();
                sort_leaf_first(&mut dirs);
                for dir in dirs {
                    let changed = contents_changed(&dir);
                    let reason = MechanicalReason::BudgetSpent;
                    if let Some(update) = mechanical_update(&shared, stats, &dir, changed, reason)?
                    {
                        done.mechanical_written += write_mechanical(&shared, &[update])?;
                    }
                }
                done.budget_spent += 1;
                schedule.finish(i);
                continue;
            }
            started += 1;
            let job = DirJob {
                dir: plan.unit.root.clone(),
                members: plan.unit.members.clone(),
                max_turns: plan.turns,
                changed: plan
                    .unit
                    .dirs()
                    .filter(|dir| contents_changed(dir))
                    .cloned()
                    .collect(),
            };
            let folded = if job.members.is_empty() {
                String::new()
            } else {
                format!(", with {} folded", job.members.len())
            };
            shared.run.progress.ai(&format!(
                "Investigating: {shown}/ ({started}/{total}, {} turns{folded})",
                job.max_turns
            ));
            board.started(&shown);
            expectations.insert(i, expected);
            if let Some(lane) = session.lane() {
                lanes.insert(i, lane);
            }
            let shared = shared.clone();
            running.spawn(async move { (i, investigate_dir(&shared, &job).await) });
        }
        drop(starting);
        drop(ended_lane.take());
        if running.is_empty() {
            let more = schedule.has_ready_where(|i| !is_loop(i))
                || (!done.cap_hit && schedule.has_ready_where(is_loop));
            if more {
                continue;
            }
            break;
        }
        // While loops run, the live display's spend follows every turn, not
        // only finished loops.
        let joined = loop {
            tokio::select! {
                joined = running.join_next() => break joined,
                _ = refresh.tick() => board.spent(tokens_so_far(session), session.tracker().cost()),
            }
        };
        let Some(joined) = joined else {
            continue;
        };
        let (i, result) = joined.map_err(InvestigationError::LoopAborted)?;
        ended_lane = lanes.remove(&i);
        expectations.remove(&i);
        // The first failure that stops the run stops it now; dropping the
        // set aborts the other loops.
        let outcome = result?;
        schedule.finish(i);
        // Priced request by request as the loop went (a price tier is per
        // request).
        finished_costs.push(outcome.usage.cost);
        board.finished(&outcome.shown);
        board.spent(tokens_so_far(session), session.tracker().cost());
        done.outcomes.push(outcome);
    }
    Ok(done)
}
