//! The steps of [`super::run_work`]: what it holds between them (the
//! ledger, the schedule, the running loops and their batch lanes) and each
//! step on its own — start what is ready, replan, wait for a loop's end,
//! take its handoff, write what is left to the scan.
//!
//! The driver's loop is in `mod.rs`; the rules each step follows (the cap,
//! the budget, when a round decides) are the pure ones of `cost.rs` and the
//! ledger. Nothing here sends a request: the loops it spawns do.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::task::JoinSet;

use super::ledger::{Ledger, MoneyThen, Stage};
use super::{LoopOptions, LoopsDone, Replanning, Schedule};
use super::{committed_spend, expected_loop_cost, within_budget, within_cap};
use crate::ai::api::cost::Pricing;
use crate::ai::engine::batch::Lane;
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

/// A loop's place in the schedule, and its result.
type Joined = (usize, Result<DirOutcome, InvestigationError>);

/// The money at one moment of the start step: what the plan has spent, and
/// what each running loop has.
struct Now {
    spent: f64,
    by_running: HashMap<PathBuf, f64>,
}

/// The work phase between its steps.
pub(super) struct Runner<'a> {
    shared: Arc<DirShared>,
    stats: &'a TreeStats,
    options: LoopOptions,
    board: &'a DirBoard,
    replanning: &'a Replanning<'a>,
    target: PathBuf,
    /// The plan's money: dollars, or tokens under a token budget that binds
    /// first (see `plan_money`).
    pricing: Pricing,
    batching: bool,
    /// Loops at once: `-j`, or every ready one under `--batch`.
    width: usize,
    ledger: Ledger,
    schedule: Schedule,
    /// The ledger's loop of each place in the schedule.
    loop_of: Vec<usize>,
    /// Each running loop's batch lane; the lane of the loop that ended last
    /// is let go only after the work its end made ready has started.
    lanes: HashMap<usize, Lane>,
    ended_lane: Option<Lane>,
    running: JoinSet<Joined>,
    done: LoopsDone,
    finished_costs: Vec<f64>,
    started: usize,
    /// The loop a round was last held for without buying anything: it
    /// starts now.
    decided_before: Option<usize>,
}

impl<'a> Runner<'a> {
    /// The schedule of `work`'s loops, children first; entries from the
    /// scan are written when a loop above needs them, or at the end.
    pub(super) fn new(
        shared: Arc<DirShared>,
        work: &Work,
        stats: &'a TreeStats,
        options: LoopOptions,
        (board, replanning): (&'a DirBoard, &'a Replanning<'a>),
    ) -> Runner<'a> {
        let target = shared.run.target().to_path_buf();
        let session = &shared.run.session;
        let (pricing, batching) = (session.plan_pricing(), session.is_batching());
        let width = if batching {
            usize::MAX
        } else {
            options.jobs.max(1)
        };
        let ledger = Ledger::new(&target, &work.loops, &work.mechanical, &work.candidates);
        let roots: Vec<PathBuf> = work.loops.iter().map(|l| l.unit.root.clone()).collect();
        let order = children_first(&roots);
        let by_root: HashMap<&Path, usize> = roots
            .iter()
            .enumerate()
            .map(|(n, root)| (root.as_path(), n))
            .collect();
        let loop_of = order.iter().map(|root| by_root[root.as_path()]).collect();
        Runner {
            schedule: Schedule::new(&order),
            shared,
            stats,
            options,
            board,
            replanning,
            target,
            pricing,
            batching,
            width,
            ledger,
            loop_of,
            lanes: HashMap::new(),
            ended_lane: None,
            running: JoinSet::new(),
            done: LoopsDone::default(),
            finished_costs: Vec::new(),
            started: 0,
            decided_before: None,
        }
    }

    fn session(&self) -> &Session {
        &self.shared.run.session
    }

    fn now(&self) -> Now {
        Now {
            spent: self.session().plan_spent(),
            by_running: self.shared.spend.snapshot(),
        }
    }

    /// Start every loop that is ready and may start. A loop starts sending
    /// at once: the next round waits until every loop ready now has started
    /// (and holds a lane of its own).
    pub(super) fn start_ready(&mut self) -> Result<(), InvestigationError> {
        let starting = self.session().lane();
        while self.running.len() < self.width && !self.done.cap_hit && self.schedule.has_ready() {
            let now = self.now();
            if self.cap_reached(&now) {
                break;
            }
            let Some(i) = self.schedule.peek_next() else {
                break;
            };
            let n = self.loop_of[i];
            if self.decides_first(n, &now) {
                continue;
            }
            self.schedule.start_next();
            if !self.affordable(i, n, &now) {
                continue;
            }
            self.start(i, n)?;
        }
        drop(starting);
        drop(self.ended_lane.take());
        Ok(())
    }

    /// `--max-cost`: whether the spend so far and the next loop's expected
    /// cost pass it (never before the run's first loop, so reruns under the
    /// same cap finish the work); said once.
    fn cap_reached(&mut self, now: &Now) -> bool {
        let model = self.session().model_facts().model;
        let expected_next = expected_loop_cost(&self.finished_costs, model, &self.pricing);
        let running = self.ledger.running(&now.by_running);
        let committed = committed_spend(now.spent, running, self.batching);
        if self.started == 0 || within_cap(committed, expected_next, self.options.max_cost) {
            return false;
        }
        self.done.cap_hit = true;
        self.shared.run.progress.ai(&format!(
            "Spending cap reached ({} spent of {}): no new directories start; the running ones \
             finish.",
            self.session().show_plan(now.spent),
            self.session()
                .show_plan(self.options.max_cost.unwrap_or_default())
        ));
        true
    }

    /// Loop `n`'s start closes the candidates below it: while money is left
    /// that could buy one, a round decides first (what it buys below it
    /// makes it wait). Whether a round was held.
    fn decides_first(&mut self, n: usize, now: &Now) -> bool {
        let Some(limit) = self.options.budget else {
            return false;
        };
        let root = self.ledger.bought[n].planned.unit.root.clone();
        let left = limit
            - now.spent
            - self.ledger.committed(&now.by_running)
            - self.session().purse().held();
        let worth_a_round = self.decided_before != Some(n)
            && self.ledger.open_below(&root)
            && self.ledger.cheapest_open().is_some_and(|cost| cost <= left);
        if !worth_a_round {
            return false;
        }
        let shown = display_name(&self.target, &root);
        if self.replan(&format!("before {shown}/ starts")) == 0 {
            self.decided_before = Some(n);
        }
        true
    }

    /// Whether the money left (less the synthesis's share) is expected to
    /// pay for loop `n`; if not, its directories wait for the scan, or for
    /// money a round finds later.
    fn affordable(&mut self, i: usize, n: usize, now: &Now) -> bool {
        let held = self.session().purse().held();
        let for_loops = self.options.budget.map(|limit| limit - held);
        let expected = self.ledger.expected(n);
        let running = self.ledger.running(&now.by_running);
        if within_budget(
            now.spent,
            running,
            expected,
            self.ledger.reserved_before(n),
            for_loops,
        ) {
            return true;
        }
        let shown = display_name(&self.target, &self.ledger.bought[n].planned.unit.root);
        self.shared.run.progress.ai(&format!(
            "Budget reached ({} spent): {shown}/ is summarised from the scan instead of \
             investigated, unless money is left for it later.",
            self.session().show_plan(now.spent)
        ));
        let money = MoneyThen {
            limit: self.options.budget,
            spent: now.spent,
            held,
            by_running: &now.by_running,
        };
        self.ledger.drop_loop(n, money);
        self.done.budget_spent += 1;
        self.schedule.finish(i);
        false
    }

    /// Start loop `n` (place `i`): the entries from the scan below it are
    /// written first (its prompt reads them), and nothing below it can be
    /// bought any more.
    fn start(&mut self, i: usize, n: usize) -> Result<(), InvestigationError> {
        let plan = self.ledger.bought[n].planned.clone();
        let expected = self.ledger.expected(n);
        let below = self.ledger.close_below(&plan.unit.root);
        self.done.mechanical_written += self.write_from_scan(below)?;
        self.started += 1;
        self.ledger.start(n, expected);
        let shared = self.shared.clone();
        let job = DirJob {
            dir: plan.unit.root.clone(),
            members: plan.unit.members.clone(),
            max_turns: plan.turns,
            changed: (plan.unit.dirs())
                .filter(|dir| shared.changed.contains(*dir))
                .cloned()
                .collect(),
        };
        let folded = if job.members.is_empty() {
            String::new()
        } else {
            format!(", with {} folded", job.members.len())
        };
        let total = (self.ledger.bought.iter())
            .filter(|b| b.stage != Stage::Dropped)
            .count();
        let shown = display_name(&self.target, &plan.unit.root);
        shared.run.progress.ai(&format!(
            "Investigating: {shown}/ ({}/{total}, {} turns{folded})",
            self.started, job.max_turns
        ));
        self.board.started(&shown);
        if let Some(lane) = shared.run.session.lane() {
            self.lanes.insert(i, lane);
        }
        self.running
            .spawn(async move { (i, investigate_dir(&shared, &job).await) });
        Ok(())
    }

    /// No loop runs.
    pub(super) fn is_idle(&self) -> bool {
        self.running.is_empty()
    }

    /// With nothing running: whether the work goes on, because a loop is
    /// ready, or money left over bought the next loops.
    pub(super) fn goes_on_when_idle(&mut self) -> bool {
        if self.done.cap_hit {
            return false;
        }
        if self.schedule.has_ready() {
            return true;
        }
        self.options.budget.is_some()
            && self.ledger.has_open_candidates()
            && self.replan("nothing left to run") > 0
    }

    /// The next loop to end, its place in the schedule and its result;
    /// meanwhile the live display's spend follows every turn. `None` when
    /// no loop was running.
    pub(super) async fn next_end(
        &mut self,
        refresh: &mut tokio::time::Interval,
    ) -> Result<Option<Joined>, InvestigationError> {
        let joined = loop {
            tokio::select! {
                joined = self.running.join_next() => break joined,
                _ = refresh.tick() => self.show_spent(),
            }
        };
        let Some(joined) = joined else {
            return Ok(None);
        };
        let (i, result) = joined.map_err(InvestigationError::LoopAborted)?;
        self.ended_lane = self.lanes.remove(&i);
        Ok(Some((i, result)))
    }

    fn show_spent(&self) {
        let totals = self.session().tracker().totals();
        let tokens = (totals.all_input_tokens()).saturating_add(totals.usage.output_tokens);
        self.board.spent(tokens, self.session().tracker().cost());
    }

    /// Take the handoff of the loop at place `i`; every few, a round
    /// decides again with the money actually left.
    pub(super) fn ended(&mut self, i: usize, outcome: DirOutcome) {
        self.schedule.finish(i);
        self.shared.spend.end(&outcome.dir);
        let n = self.loop_of[i];
        self.board.finished(&outcome.shown);
        self.show_spent();
        if outcome.end == LoopEnd::Unaffordable {
            // Nothing was sent: its directories wait for the scan, or for
            // more money than it had, which a round may find later.
            let by_running = self.shared.spend.snapshot();
            let money = MoneyThen {
                limit: self.options.budget,
                spent: self.session().plan_spent(),
                held: self.session().purse().held(),
                by_running: &by_running,
            };
            self.ledger.drop_loop(n, money);
            self.done.budget_spent += 1;
            return;
        }
        // Priced request by request as the loop went (a price tier is per
        // request).
        self.finished_costs.push(outcome.usage.cost);
        self.ledger.hand_off(n, &outcome);
        self.done.outcomes.push(outcome);
        if self.options.budget.is_some()
            && !self.done.cap_hit
            && self.ledger.handoffs_pending() >= MIN_HANDOFFS_FOR_REPLAN
            && self.ledger.has_open_candidates()
        {
            self.replan("3 handoffs");
        }
    }

    /// A replanning round: what it buys joins the schedule after the loops
    /// already bought, and the synthesis's share is held in the purse. How
    /// many loops it added.
    fn replan(&mut self, trigger: &str) -> usize {
        let shared = self.shared.clone();
        let session = &shared.run.session;
        let replanning = self.replanning;
        let (new, record, round) = self.ledger.round(
            session.plan_spent(),
            &shared.spend.snapshot(),
            trigger,
            |input| replanning.round(input),
        );
        session.purse().hold(round.reserve);
        let mut added = 0;
        for n in new {
            match self.schedule.add(&self.ledger.bought[n].planned.unit.root) {
                Some(i) if i == self.loop_of.len() => {
                    self.loop_of.push(n);
                    added += 1;
                }
                // A loop the budget could not start, bought back: it takes
                // its place in the schedule again.
                Some(i) => {
                    self.loop_of[i] = n;
                    added += 1;
                }
                None => self.ledger.unbuy(n),
            }
        }
        let (loops, mechanical) = self.ledger.shape();
        let open = self.ledger.open_candidates();
        for warning in replanning.keep(record, &loops, &mechanical, &open) {
            shared.run.progress.ai(&warning);
        }
        self.board.add_to_total(added);
        shared.run.progress.ai_detail(&format!(
            "Replanning (round {}, {trigger}): {} spent, {} kept for the synthesis; {added} more \
             {} bought{}.",
            self.ledger.rounds,
            session.show_plan(session.plan_spent()),
            session.show_plan(round.reserve),
            if added == 1 { "loop" } else { "loops" },
            if self.ledger.bought_for_leads > 0 {
                format!(" ({} so far for leads)", self.ledger.bought_for_leads)
            } else {
                String::new()
            },
        ));
        added
    }

    /// Write the entries from the scan of `dirs` (leaf-first, with why), a
    /// level of the tree at a time so each reads the entries below it.
    fn write_from_scan(
        &mut self,
        dirs: Vec<(PathBuf, MechanicalReason)>,
    ) -> Result<usize, InvestigationError> {
        let shared = &self.shared;
        let mut written = 0;
        let mut rest = dirs.as_slice();
        while let Some((first, _)) = rest.first() {
            let depth = first.components().count();
            let level = (rest.iter())
                .take_while(|(dir, _)| dir.components().count() == depth)
                .count();
            let mut batch = Vec::new();
            for (dir, reason) in &rest[..level] {
                let changed = shared.changed.contains(dir);
                batch.extend(mechanical_update(
                    shared, self.stats, dir, changed, *reason,
                )?);
                self.ledger.mark_written(dir);
            }
            written += write_mechanical(shared, &batch)?;
            rest = &rest[level..];
        }
        Ok(written)
    }

    /// What is left to the scan: every stale directory no loop covers whose
    /// loops below have all finished (the cap may have left some undone).
    pub(super) fn finish(mut self) -> Result<LoopsDone, InvestigationError> {
        let schedule = &self.schedule;
        let rest = self
            .ledger
            .unwritten(|dir| !schedule.unfinished_at_or_below(dir));
        self.done.mechanical_written += self.write_from_scan(rest)?;
        self.done.rounds = self.ledger.rounds;
        self.done.bought_by_rounds = self.ledger.bought_by_rounds;
        self.done.bought_for_leads = self.ledger.bought_for_leads;
        Ok(self.done)
    }
}
