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
//! [`MIN_HANDOFFS_FOR_REPLAN`] handoffs, and whenever nothing is left to run,
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
//! [`investigate_dir`] over the run's [`DirShared`], each mechanical entry
//! [`mechanical_update`]; what it hands a loop and gets back is the loop's
//! ([`DirJob`], [`DirOutcome`]). [`Schedule`] (the dependency graph, in `schedule.rs`), the ledger and
//! the cost rules (`cost.rs`) are pure; [`run_work`], here, is the async
//! driver on a tokio `JoinSet`. Cancellation (Ctrl-C) is the caller's:
//! dropping the driver aborts the running loops at their next await point,
//! after any tool call (and its cache write) in progress has returned. The
//! rules' unit tests are in `tests.rs`.

mod cost;
mod ledger;
#[cfg(test)]
mod props;
mod replanning;
mod schedule;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::task::JoinSet;

use crate::ai::engine::session::Session;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirJob, DirOutcome, DirShared, LoopEnd, investigate_dir};
use crate::ai::passes::mechanical::{mechanical_update, write_mechanical};
use crate::ai::rules::decide::{MIN_HANDOFFS_FOR_REPLAN, Work};
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::discover::display_name;
use crate::ai::rules::mechanical::MechanicalReason;
use crate::ai::rules::plan::children_first;
use crate::progress::DirBoard;

pub(crate) use cost::{committed_spend, expected_loop_cost, within_budget, within_cap};
use ledger::{Ledger, MoneyThen, Stage};
pub(crate) use replanning::Replanning;
pub(crate) use schedule::Schedule;

/// How the dir loops are run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoopOptions {
    /// Loops at once (at least 1).
    pub jobs: usize,
    /// `--max-cost`, in dollars.
    pub max_cost: Option<f64>,
    /// `--budget`, in dollars; `None` without one. The loops may spend it
    /// less what the purse holds back for the synthesis.
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

/// Every token the run has processed or produced so far.
fn tokens_so_far(session: &Session) -> u64 {
    let totals = session.tracker().totals();
    totals
        .all_input_tokens()
        .saturating_add(totals.usage.output_tokens)
}

/// Write the entries from the scan of `dirs` (leaf-first, with why), a
/// level of the tree at a time so each reads the entries below it.
fn write_from_scan(
    shared: &DirShared,
    stats: &TreeStats,
    ledger: &mut Ledger,
    dirs: Vec<(PathBuf, MechanicalReason)>,
) -> Result<usize, InvestigationError> {
    let mut written = 0;
    let mut rest = dirs.as_slice();
    while let Some((first, _)) = rest.first() {
        let depth = first.components().count();
        let level = rest
            .iter()
            .take_while(|(dir, _)| dir.components().count() == depth)
            .count();
        let mut batch = Vec::new();
        for (dir, reason) in &rest[..level] {
            let changed = shared.changed.contains(dir);
            batch.extend(mechanical_update(shared, stats, dir, changed, *reason)?);
            ledger.mark_written(dir);
        }
        written += write_mechanical(shared, &batch)?;
        rest = &rest[level..];
    }
    Ok(written)
}

/// Run the loops of `work` (`options.jobs` at a time), replanning as they
/// finish, and write its mechanical entries, each once everything below it
/// that is part of the work is done.
pub(crate) async fn run_work(
    shared: Arc<DirShared>,
    work: &Work,
    stats: &TreeStats,
    options: LoopOptions,
    board: &DirBoard,
    replanning: &Replanning<'_>,
) -> Result<LoopsDone, InvestigationError> {
    let target = shared.run.target().to_path_buf();
    let session = &shared.run.session;
    let model = session.model_facts().model;
    // The plan's money: dollars, or tokens under a token budget that binds
    // first (see `plan_money`).
    let pricing = session.plan_pricing();
    let batching = session.is_batching();
    let width = if batching {
        usize::MAX
    } else {
        options.jobs.max(1)
    };
    let mut ledger = Ledger::new(&target, &work.loops, &work.mechanical, &work.candidates);
    // The schedule holds the loops, children first; entries from the scan
    // are written when a loop above needs them, or at the end.
    let roots: Vec<PathBuf> = work.loops.iter().map(|l| l.unit.root.clone()).collect();
    let order = children_first(&roots);
    let by_root: HashMap<&Path, usize> = roots
        .iter()
        .enumerate()
        .map(|(n, root)| (root.as_path(), n))
        .collect();
    let mut loop_of: Vec<usize> = order.iter().map(|root| by_root[root.as_path()]).collect();
    let mut schedule = Schedule::new(&order);
    // Each running loop's batch lane; the lane of the loop that ended last
    // is let go only after the work its end made ready has started.
    let mut lanes = HashMap::new();
    let mut ended_lane = None;
    let mut running: JoinSet<(usize, Result<DirOutcome, InvestigationError>)> = JoinSet::new();
    let mut done = LoopsDone::default();
    let mut finished_costs = Vec::new();
    let mut started = 0;
    // The loop a round was last held for without buying anything: it
    // starts now.
    let mut decided_before = None;
    let mut refresh = tokio::time::interval(BOARD_REFRESH);
    let replan =
        |ledger: &mut Ledger, schedule: &mut Schedule, loop_of: &mut Vec<usize>, trigger: &str| {
            let (new, record, round) = ledger.round(
                session.plan_spent(),
                &shared.spend.snapshot(),
                trigger,
                |input| replanning.round(input),
            );
            session.purse().hold(round.reserve);
            let mut added = 0;
            for n in new {
                match schedule.add(&ledger.bought[n].planned.unit.root) {
                    Some(i) if i == loop_of.len() => {
                        loop_of.push(n);
                        added += 1;
                    }
                    // A loop the budget could not start, bought back: it
                    // takes its place in the schedule again.
                    Some(i) => {
                        loop_of[i] = n;
                        added += 1;
                    }
                    None => ledger.unbuy(n),
                }
            }
            let (loops, mechanical) = ledger.shape();
            for warning in replanning.keep(record, &loops, &mechanical, &ledger.open_candidates()) {
                shared.run.progress.ai(&warning);
            }
            board.add_to_total(added);
            shared.run.progress.ai_detail(&format!(
                "Replanning (round {}, {trigger}): {} spent, {} kept for the synthesis; \
             {added} more {} bought{}.",
                ledger.rounds,
                session.show_plan(session.plan_spent()),
                session.show_plan(round.reserve),
                if added == 1 { "loop" } else { "loops" },
                if ledger.bought_for_leads > 0 {
                    format!(" ({} so far for leads)", ledger.bought_for_leads)
                } else {
                    String::new()
                },
            ));
            added
        };
    loop {
        // A loop starts sending at once: the round waits until every loop
        // ready now has started (and holds a lane of its own).
        let starting = session.lane();
        while running.len() < width && !done.cap_hit && schedule.has_ready() {
            let spent = session.plan_spent();
            let by_running = shared.spend.snapshot();
            // Each run makes progress: its first loop starts whatever the
            // cap, so reruns under the same cap finish the work.
            let expected_next = expected_loop_cost(&finished_costs, model, &pricing);
            let committed = committed_spend(spent, ledger.running(&by_running), batching);
            if started > 0 && !within_cap(committed, expected_next, options.max_cost) {
                done.cap_hit = true;
                shared.run.progress.ai(&format!(
                    "Spending cap reached ({} spent of ${:.2}): no new directories \
                     start; the running ones finish.",
                    session.show_plan(spent),
                    options.max_cost.unwrap_or_default()
                ));
                break;
            }
            let Some(i) = schedule.peek_next() else {
                break;
            };
            let n = loop_of[i];
            let plan = ledger.bought[n].planned.clone();
            // Its start closes the candidates below it: while money is left
            // that could buy one, a round decides first (what it buys below
            // it makes it wait).
            if let Some(limit) = options.budget
                && !done.cap_hit
                && decided_before != Some(n)
                && ledger.open_below(&plan.unit.root)
                && ledger.cheapest_open().is_some_and(|cost| {
                    cost <= limit - spent - ledger.committed(&by_running) - session.purse().held()
                })
            {
                let shown = display_name(&target, &plan.unit.root);
                let trigger = format!("before {shown}/ starts");
                if replan(&mut ledger, &mut schedule, &mut loop_of, &trigger) == 0 {
                    decided_before = Some(n);
                }
                continue;
            }
            schedule.start_next();
            let expected = ledger.expected(n);
            let shown = display_name(&target, &plan.unit.root);
            let for_loops = options.budget.map(|limit| limit - session.purse().held());
            if !within_budget(
                spent,
                ledger.running(&by_running),
                expected,
                ledger.reserved_before(n),
                for_loops,
            ) {
                shared.run.progress.ai(&format!(
                    "Budget reached ({} spent): {shown}/ is summarised from the scan \
                     instead of investigated, unless money is left for it later.",
                    session.show_plan(spent)
                ));
                let money = MoneyThen {
                    limit: options.budget,
                    spent,
                    held: session.purse().held(),
                    by_running: &by_running,
                };
                ledger.drop_loop(n, money);
                done.budget_spent += 1;
                schedule.finish(i);
                continue;
            }
            // Its prompt reads the entries below it: those from the scan
            // are written now, and nothing below it can be bought any more.
            let below = ledger.close_below(&plan.unit.root);
            done.mechanical_written += write_from_scan(&shared, stats, &mut ledger, below)?;
            started += 1;
            ledger.start(n, expected);
            let job = DirJob {
                dir: plan.unit.root.clone(),
                members: plan.unit.members.clone(),
                max_turns: plan.turns,
                changed: plan
                    .unit
                    .dirs()
                    .filter(|dir| shared.changed.contains(*dir))
                    .cloned()
                    .collect(),
            };
            let folded = if job.members.is_empty() {
                String::new()
            } else {
                format!(", with {} folded", job.members.len())
            };
            let total = ledger
                .bought
                .iter()
                .filter(|b| b.stage != Stage::Dropped)
                .count();
            shared.run.progress.ai(&format!(
                "Investigating: {shown}/ ({started}/{total}, {} turns{folded})",
                job.max_turns
            ));
            board.started(&shown);
            if let Some(lane) = session.lane() {
                lanes.insert(i, lane);
            }
            let shared = shared.clone();
            running.spawn(async move { (i, investigate_dir(&shared, &job).await) });
        }
        drop(starting);
        drop(ended_lane.take());
        if running.is_empty() {
            if !done.cap_hit && schedule.has_ready() {
                continue;
            }
            // Nothing runs and nothing is ready: money left over buys the
            // next loops, if any are open.
            if !done.cap_hit
                && options.budget.is_some()
                && ledger.has_open_candidates()
                && replan(
                    &mut ledger,
                    &mut schedule,
                    &mut loop_of,
                    "nothing left to run",
                ) > 0
            {
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
        // The first failure that stops the run stops it now; dropping the
        // set aborts the other loops.
        let outcome = result?;
        schedule.finish(i);
        shared.spend.end(&outcome.dir);
        let n = loop_of[i];
        board.finished(&outcome.shown);
        board.spent(tokens_so_far(session), session.tracker().cost());
        if outcome.end == LoopEnd::Unaffordable {
            // Nothing was sent: its directories wait for the scan, or for
            // more money than it had, which a round may find later.
            let by_running = shared.spend.snapshot();
            let money = MoneyThen {
                limit: options.budget,
                spent: session.spent(),
                held: session.purse().held(),
                by_running: &by_running,
            };
            ledger.drop_loop(n, money);
            done.budget_spent += 1;
            continue;
        }
        // Priced request by request as the loop went (a price tier is per
        // request).
        finished_costs.push(outcome.usage.cost);
        ledger.hand_off(n, &outcome);
        done.outcomes.push(outcome);
        if options.budget.is_some()
            && !done.cap_hit
            && ledger.handoffs_pending() >= MIN_HANDOFFS_FOR_REPLAN
            && ledger.has_open_candidates()
        {
            replan(&mut ledger, &mut schedule, &mut loop_of, "3 handoffs");
        }
    }
    // What is left to the scan: every stale directory no loop covers whose
    // loops below have all finished (the cap may have left some undone).
    let rest = ledger.unwritten(|dir| !schedule.unfinished_at_or_below(dir));
    done.mechanical_written += write_from_scan(&shared, stats, &mut ledger, rest)?;
    done.rounds = ledger.rounds;
    done.bought_by_rounds = ledger.bought_by_rounds;
    done.bought_for_leads = ledger.bought_for_leads;
    Ok(done)
}
