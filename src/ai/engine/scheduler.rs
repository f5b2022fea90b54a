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
//! [`Schedule`] and the cost rules are pure; [`run_work`] is the async
//! driver on a tokio `JoinSet`. Cancellation (Ctrl-C) is the caller's: dropping
//! the driver aborts the running loops at their next await point, after any
//! tool call (and its cache write) in progress has returned.

use std::collections::BTreeSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::task::JoinSet;

use crate::ai::PassError;
use crate::ai::api::Usage;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::cost::Pricing;
use crate::ai::api::settings::{CallSettings, Workload};
use crate::ai::passes::dir_loop::{DirJob, DirOutcome, DirShared, investigate_dir};
use crate::ai::passes::mechanical::{mechanical_update, summarise_mechanically, write_mechanical};
use crate::ai::rules::decide::PlannedLoop;
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::discover::{display_name, sort_leaf_first};
use crate::ai::rules::mechanical::MechanicalReason;
use crate::ai::rules::plan::children_first;
use crate::progress::DirBoard;

/// Directory loops run at once when `-j` is not given.
pub(crate) const DEFAULT_JOBS: u32 = 4;

/// What a first loop is assumed to use before any loop of this run has
/// finished: a handful of turns over a small directory, in reference tokens
/// (4 bytes each), before the model's tokenizer and thinking.
pub(crate) const PRIOR_LOOP_USAGE: Usage = Usage {
    input_tokens: 30_000,
    output_tokens: 1_500,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
};

/// The turns [`PRIOR_LOOP_USAGE`] stands for, for the thinking it adds.
pub(crate) const PRIOR_LOOP_TURNS: u64 = 3;

/// Where a directory of the order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Pending,
    Running,
    Done,
}

/// The dependency graph over an order: who is ready, who is waiting.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    order: Vec<PathBuf>,
    slots: Vec<Slot>,
    /// Indexes of each directory's ancestors that are also in the order.
    ancestors: Vec<Vec<usize>>,
    /// How many listed descendants each directory still waits for.
    waiting: Vec<usize>,
    ready: BTreeSet<usize>,
}

impl Schedule {
    /// The graph for `order` (any order; the plan's is children-first).
    pub(crate) fn new(order: &[PathBuf]) -> Schedule {
        let index: HashMap<&Path, usize> = order
            .iter()
            .enumerate()
            .map(|(i, dir)| (dir.as_path(), i))
            .collect();
        let ancestors: Vec<Vec<usize>> = order
            .iter()
            .map(|dir| {
                dir.ancestors()
                    .skip(1)
                    .filter_map(|a| index.get(a).copied())
                    .collect()
            })
            .collect();
        let mut waiting = vec![0; order.len()];
        for list in &ancestors {
            for &a in list {
                waiting[a] += 1;
            }
        }
        let ready = (0..order.len()).filter(|&i| waiting[i] == 0).collect();
        Schedule {
            order: order.to_vec(),
            slots: vec![Slot::Pending; order.len()],
            ancestors,
            waiting,
            ready,
        }
    }

    /// The earliest ready directory, marked running.
    #[cfg(test)]
    pub(crate) fn start_next(&mut self) -> Option<usize> {
        let i = self.ready.pop_first()?;
        self.slots[i] = Slot::Running;
        Some(i)
    }

    /// The earliest ready directory for which `wanted` holds, marked
    /// running.
    pub(crate) fn start_next_where(&mut self, wanted: impl Fn(usize) -> bool) -> Option<usize> {
        let i = self.ready.iter().copied().find(|&i| wanted(i))?;
        self.ready.remove(&i);
        self.slots[i] = Slot::Running;
        Some(i)
    }

    /// Whether some directory could start now.
    #[cfg(test)]
    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Whether some directory for which `wanted` holds could start now.
    pub(crate) fn has_ready_where(&self, wanted: impl Fn(usize) -> bool) -> bool {
        self.ready.iter().any(|&i| wanted(i))
    }

    /// Mark `i` finished; its ancestors may become ready.
    pub(crate) fn finish(&mut self, i: usize) {
        debug_assert_eq!(self.slots[i], Slot::Running);
        self.slots[i] = Slot::Done;
        for &a in &self.ancestors[i] {
            self.waiting[a] -= 1;
            if self.waiting[a] == 0 {
                self.ready.insert(a);
            }
        }
    }

    /// The directory at `i`.
    pub(crate) fn dir(&self, i: usize) -> &Path {
        &self.order[i]
    }

    /// Directories that never started.
    #[cfg(test)]
    pub(crate) fn not_started(&self) -> usize {
        self.slots.iter().filter(|s| **s == Slot::Pending).count()
    }
}

/// What a new loop is expected to cost: the mean of the loops this run
/// finished, or [`PRIOR_LOOP_USAGE`] in `model`'s tokens (the catalog's
/// tokens per byte), with its thinking, at `pricing` (the model's, at batch
/// prices under `--batch`), before any has.
pub(crate) fn expected_loop_cost(finished: &[f64], model: &str, pricing: &Pricing) -> f64 {
    if !finished.is_empty() {
        return finished.iter().sum::<f64>() / finished.len() as f64;
    }
    let facts = ModelFacts::of(model);
    let scale = facts.model.tokens_per_byte * 4.0;
    let thinking = CallSettings::new(facts.model, Workload::Routine).expected_thinking_tokens();
    let tokens = |n: u64| (n as f64 * scale).ceil() as u64;
    let prior = Usage {
        input_tokens: tokens(PRIOR_LOOP_USAGE.input_tokens),
        output_tokens: tokens(PRIOR_LOOP_USAGE.output_tokens) + thinking * PRIOR_LOOP_TURNS,
        ..PRIOR_LOOP_USAGE
    };
    pricing.cost(&prior)
}

/// The cap rule: start another loop only if the spend so far plus what it is
/// expected to cost stays within the cap.
pub(crate) fn within_cap(spent: f64, expected_next: f64, cap: Option<f64>) -> bool {
    cap.is_none_or(|cap| spent + expected_next <= cap)
}

/// The spend the cap rule weighs: what was spent, and under `--batch` also
/// what the running loops are expected to cost (`running`, the sum of
/// their expectations: their spend shows only once their round is read,
/// and every ready loop starts at once).
pub(crate) fn committed_spend(spent: f64, running: f64, batching: bool) -> f64 {
    if batching { spent + running } else { spent }
}

/// The budget rule: start a loop only if the spend so far, what the loops
/// already running are expected to cost (`running`, the sum of each one's
/// expectation), what this one is expected to cost, and what the loops
/// ranked before it that have not started are expected to cost
/// (`reserved`), stay within what the loops may spend. When money runs
/// short, the loops that matter most (the target's first) keep theirs.
///
/// Each running loop counts at its own expectation, not at the next one's:
/// under `--batch` hundreds start at once, a unit's loop beside a leaf's.
pub(crate) fn within_budget(
    spent: f64,
    running: f64,
    expected_next: f64,
    reserved: f64,
    for_loops: Option<f64>,
) -> bool {
    for_loops.is_none_or(|limit| spent + running + expected_next + reserved <= limit)
}

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
fn tokens_so_far(shared: &DirShared) -> u64 {
    let totals = shared.session.tracker().totals();
    totals
        .all_input_tokens()
        .saturating_add(totals.output_tokens)
}

/// Run the loops of `planned` (`options.jobs` at a time) and write the
/// mechanical entries of `mechanical`, each once everything below it that
/// is part of the work is done. `contents_changed` names the directories
/// whose own files changed since their cached summary.
pub(crate) async fn run_work(
    shared: Arc<DirShared>,
    stats: &TreeStats,
    planned: &[PlannedLoop],
    mechanical: &[PathBuf],
    contents_changed: &dyn Fn(&Path) -> bool,
    options: LoopOptions,
    board: &DirBoard,
) -> Result<LoopsDone, PassError> {
    let total = planned.len();
    let model = shared.session.model().to_string();
    let pricing = shared.session.tracker().pricing();
    let batching = shared.session.is_batching();
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
    let mut running: JoinSet<(usize, Result<DirOutcome, PassError>)> = JoinSet::new();
    let mut done = LoopsDone::default();
    let mut finished_costs = Vec::new();
    let mut launched = vec![false; planned.len()];
    let mut started = 0;
    let mut refresh = tokio::time::interval(BOARD_REFRESH);
    loop {
        // A loop starts sending at once: the round waits until every loop
        // ready now has started (and holds a lane of its own).
        let starting = shared.session.lane();
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
            let spent = shared.session.spent();
            let expected = expected_loop_cost(&finished_costs, &model, &pricing);
            let committed = committed_spend(spent, expectations.values().sum(), batching);
            if !within_cap(committed, expected, options.max_cost) {
                done.cap_hit = true;
                shared.progress.ai(&format!(
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
                expected_loop_cost(&finished_costs, &model, &pricing)
            };
            let shown = display_name(&shared.target, &plan.unit.root);
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
                shared.progress.ai(&format!(
                    "Budget reached (${spent:.2} spent): {shown}/ is summarised from the scan \
                     instead of investigated."
                ));
                let mut dirs: Vec<PathBuf> = plan.unit.dirs().cloned().collect();
                sort_leaf_first(&mut dirs);
                for dir in dirs {
                    let changed = contents_changed(&dir);
                    if summarise_mechanically(
                        &shared,
                        stats,
                        &dir,
                        changed,
                        MechanicalReason::BudgetSpent,
                    )? {
                        done.mechanical_written += 1;
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
            shared.progress.ai(&format!(
                "Investigating: {shown}/ ({started}/{total}, {} turns{folded})",
                job.max_turns
            ));
            board.started(&shown);
            expectations.insert(i, expected);
            if let Some(lane) = shared.session.lane() {
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
                _ = refresh.tick() => board.spent(tokens_so_far(&shared), shared.session.tracker().cost()),
            }
        };
        let Some(joined) = joined else {
            continue;
        };
        let (i, result) =
            joined.map_err(|err| PassError::Failed(format!("a directory loop failed: {err}")))?;
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
        board.spent(tokens_so_far(&shared), shared.session.tracker().cost());
        done.outcomes.push(outcome);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    /// Drive a schedule with `jobs` workers where the running directory
    /// that started first always finishes first; returns the start order.
    fn simulate(order: &[PathBuf], jobs: usize) -> Vec<PathBuf> {
        let mut schedule = Schedule::new(order);
        let mut running: std::collections::VecDeque<usize> = Default::default();
        let mut started = Vec::new();
        loop {
            while running.len() < jobs {
                match schedule.start_next() {
                    Some(i) => {
                        started.push(order[i].clone());
                        running.push_back(i);
                    }
                    None => break,
                }
            }
            match running.pop_front() {
                Some(i) => schedule.finish(i),
                None => break,
            }
        }
        started
    }

    #[test]
    fn one_job_reproduces_the_order() {
        let order = paths(&["/t/a/x", "/t/b", "/t/a", "/t/c", "/t"]);
        assert_eq!(simulate(&order, 1), order);
    }

    #[test]
    fn no_parent_starts_before_its_children_finish() {
        let order = paths(&["/t/a/x/y", "/t/a/x", "/t/b/z", "/t/a", "/t/b", "/t/c", "/t"]);
        let mut schedule = Schedule::new(&order);
        // Everything without listed descendants is ready at once, in order.
        let mut first = Vec::new();
        while let Some(i) = schedule.start_next() {
            first.push(order[i].clone());
        }
        assert_eq!(first, paths(&["/t/a/x/y", "/t/b/z", "/t/c"]));
        let index = |p: &str| order.iter().position(|d| d == Path::new(p)).unwrap();
        schedule.finish(index("/t/b/z"));
        assert_eq!(schedule.start_next(), Some(index("/t/b")));
        assert!(
            !schedule.has_ready(),
            "/t/a waits for /t/a/x, /t waits for all"
        );
        schedule.finish(index("/t/a/x/y"));
        assert_eq!(schedule.start_next(), Some(index("/t/a/x")));
        for p in ["/t/a/x", "/t/b", "/t/c"] {
            schedule.finish(index(p));
        }
        assert_eq!(schedule.start_next(), Some(index("/t/a")));
        assert!(!schedule.has_ready());
        schedule.finish(index("/t/a"));
        assert_eq!(schedule.start_next(), Some(index("/t")));
        assert_eq!(schedule.not_started(), 0);
    }

    #[test]
    fn band_order_holds_among_ready_directories() {
        // A priority-first order: the priority band first, then default.
        let order = paths(&["/t/p2", "/t/p1", "/t/d1", "/t/d2", "/t"]);
        assert_eq!(simulate(&order, 3), order);
        for jobs in 1..=5 {
            let started = simulate(&order, jobs);
            assert_eq!(started.last().unwrap(), Path::new("/t"), "jobs {jobs}");
        }
    }

    #[test]
    fn every_jobs_count_respects_dependencies() {
        let order = paths(&[
            "/t/a/b/c", "/t/a/b/d", "/t/e/f", "/t/a/b", "/t/e", "/t/g", "/t/a", "/t",
        ]);
        for jobs in 1..=8 {
            let started = simulate(&order, jobs);
            assert_eq!(started.len(), order.len());
            for (pos, dir) in started.iter().enumerate() {
                for later in &started[pos + 1..] {
                    assert!(!later.starts_with(dir), "{dir:?} started before {later:?}");
                }
            }
        }
    }

    #[test]
    fn the_budget_counts_the_running_loops_and_the_higher_ranked_ones() {
        assert!(within_budget(100.0, 8.0, 1.0, 50.0, None));
        assert!(within_budget(1.0, 0.0, 1.0, 0.0, Some(2.0)));
        assert!(within_budget(1.0, 0.5, 0.5, 0.0, Some(2.0)));
        assert!(!within_budget(1.0, 1.0, 0.5, 0.0, Some(2.0)));
        assert!(!within_budget(1.0, 0.0, 0.5, 0.6, Some(2.0)));
        assert!(!within_budget(0.0, 0.0, 0.01, 0.0, Some(0.0)));
        // A cheap loop beside an expensive one running: their own
        // expectations count, not twice the cheap one's.
        assert!(!within_budget(0.0, 1.5, 0.1, 0.0, Some(1.5)));
        assert!(within_budget(0.0, 1.4, 0.1, 0.0, Some(1.5)));
    }

    #[test]
    fn a_filter_picks_the_earliest_ready_of_its_kind() {
        let order = paths(&["/t/a", "/t/b", "/t/c", "/t"]);
        let mut schedule = Schedule::new(&order);
        assert!(schedule.has_ready_where(|i| i == 1));
        assert_eq!(schedule.start_next_where(|i| i > 0), Some(1));
        assert_eq!(schedule.start_next_where(|i| i == 3), None);
        assert_eq!(schedule.start_next(), Some(0));
    }

    #[test]
    fn the_cap_counts_the_expected_next_loop() {
        assert!(within_cap(100.0, 100.0, None));
        assert!(within_cap(0.5, 0.4, Some(1.0)));
        assert!(within_cap(0.6, 0.4, Some(1.0)));
        assert!(!within_cap(0.61, 0.4, Some(1.0)));
        assert!(!within_cap(0.0, 0.01, Some(0.0)));
    }

    #[test]
    fn under_batch_the_cap_counts_the_running_loops() {
        assert_eq!(committed_spend(1.0, 1.5, false), 1.0);
        assert_eq!(committed_spend(1.0, 1.5, true), 2.5);
        // Three loops of 0.5 running and 1.0 spent: a fourth fits a cap of
        // 3.0, not of 2.9.
        assert!(within_cap(committed_spend(1.0, 1.5, true), 0.5, Some(3.0)));
        assert!(!within_cap(committed_spend(1.0, 1.5, true), 0.5, Some(2.9)));
    }

    #[test]
    fn expected_cost_is_the_mean_of_finished_loops_or_the_prior() {
        let priced = |model: &str| Pricing::for_model(model);
        let prior = expected_loop_cost(&[], "claude-sonnet-4-5", &priced("claude-sonnet-4-5"));
        assert!((prior - (0.09 + 0.0225)).abs() < 1e-9, "{prior}");
        assert_eq!(
            expected_loop_cost(
                &[0.1, 0.3],
                "claude-sonnet-4-5",
                &priced("claude-sonnet-4-5")
            ),
            0.2
        );
        // At batch prices the prior is half.
        let batch = expected_loop_cost(
            &[],
            "claude-sonnet-4-5",
            &priced("claude-sonnet-4-5").batch(),
        );
        assert!((batch - prior / 2.0).abs() < 1e-12, "{batch}");
        // Opus 4.8: 5/3 the price, 1.3 the tokens for the same text, no
        // thinking in loops (it is opt-in there).
        let opus = expected_loop_cost(&[], "claude-opus-4-8", &priced("claude-opus-4-8"));
        assert!(
            (opus - (39_000.0 * 5.0 + 1_950.0 * 25.0) / 1e6).abs() < 1e-9,
            "{opus}"
        );
        // Sonnet 5.5 thinks between tools: 3 turns of notes on top.
        let sonnet = expected_loop_cost(&[], "claude-sonnet-5-5", &priced("claude-sonnet-5-5"));
        let thinking = 3 * crate::ai::api::settings::BETWEEN_TOOLS_THINKING_TOKENS;
        let expected = (39_000.0 * 2.0 + (1_950 + thinking) as f64 * 10.0) / 1e6;
        assert!((sonnet - expected).abs() < 1e-9, "{sonnet}");
    }
}
