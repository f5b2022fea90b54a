//! What the scheduler keeps while the work runs: the loops bought (by the
//! first decision and by each replanning round) and where each stands, the
//! candidates still open, the directories still to summarise from the scan,
//! and the handoffs since the last round. Pure bookkeeping over paths and
//! figures: the driver ([`super::run_work`]) starts the loops and writes the
//! entries; what a round buys is [`crate::ai::rules::decide::Replanner`]'s.
//!
//! Summaries from the scan are written late: a stale directory no loop was
//! bought for stays open, so a later round may still buy it, until a loop
//! above it is about to start (its prompt reads the entries below it) or
//! the work ends. That keeps children before parents: a candidate below a
//! loop that started is closed, never bought.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::records::{BoughtLoop, Handoff, RoundRecord};

use crate::ai::rules::decide::{Calibration, PlannedLoop, Round, RoundInput, money_for_loops};
use crate::ai::rules::discover::{relative, sort_leaf_first};
use crate::ai::rules::mechanical::MechanicalReason;

use crate::ai::passes::dir_loop::{DirOutcome, LoopEnd};

/// Handoff summaries are kept to this many characters in a round's record
/// (seed 003 keeps 2,000 of each worker's summary).
pub(crate) const HANDOFF_SUMMARY_CHARS: usize = 2_000;
/// Leads a handoff record names (seed 003 keeps 10 files per handoff).
pub(crate) const HANDOFF_LEADS: usize = 10;

/// Where a bought loop stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Waiting,
    Running,
    Done,
    /// The budget could not start it: it is a candidate again.
    Dropped,
}

/// A loop bought for this run.
#[derive(Debug, Clone)]
pub(crate) struct Bought {
    pub planned: PlannedLoop,
    pub stage: Stage,
    /// What it was expected to cost when it started.
    pub expected_at_start: f64,
}

/// A unit no loop is bought for (yet).
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub planned: PlannedLoop,
    /// Still open to a round.
    pub open: bool,
    /// A loop of it was bought and could not start (or sent nothing) with
    /// this much money for new loops ([`money_for_loops`]): a round buys
    /// it again only with more. Without this a round with nothing running
    /// would buy it back with the same money, and the run would go round
    /// forever.
    pub failed_with: Option<f64>,
}

impl Candidate {
    fn open(planned: PlannedLoop) -> Candidate {
        Candidate {
            planned,
            open: true,
            failed_with: None,
        }
    }

    /// The candidate as a round sees it: its first request is taken to
    /// cost more than the money a loop of it failed to start with.
    fn offered(&self) -> PlannedLoop {
        let mut planned = self.planned.clone();
        if let Some(money) = self.failed_with {
            planned.first_request = planned.first_request.max(money.next_up());
        }
        planned
    }
}

/// The money as it stood when a loop could not start: the budget, the
/// spend, what was held for the synthesis, and what each running loop had
/// spent (by directory).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MoneyThen<'a> {
    pub limit: Option<f64>,
    pub spent: f64,
    pub held: f64,
    pub by_running: &'a HashMap<PathBuf, f64>,
}

/// The work as it stands.
#[derive(Debug)]
pub(crate) struct Ledger {
    target: PathBuf,
    pub bought: Vec<Bought>,
    /// In the order of interest.
    pub candidates: Vec<Candidate>,
    /// Stale directories: each needs an entry, from its loop or the scan.
    stale: HashSet<PathBuf>,
    /// Why a directory is summarised from the scan, when not the default.
    reasons: HashMap<PathBuf, MechanicalReason>,
    /// How many live (not dropped) loops cover each directory.
    covered: HashMap<PathBuf, u32>,
    /// Stale directories no live loop covers whose entry from the scan is
    /// not written yet: what [`Ledger::unwritten`] chooses from. Kept as
    /// loops are bought and dropped and entries written, because it is
    /// asked before every loop starts: going over every stale directory
    /// each time made a deep tree's run quadratic in its directories.
    pending: HashSet<PathBuf>,
    /// Entries from the scan written this run.
    written: HashSet<PathBuf>,
    /// Roots of candidates a finished loop named.
    led: HashSet<PathBuf>,
    pub calibration: Calibration,
    /// Handoffs since the last round.
    handoffs: Vec<Handoff>,
    pub rounds: usize,
    /// Loops the rounds bought.
    pub bought_by_rounds: usize,
    /// ...of which for a lead.
    pub bought_for_leads: usize,
}

impl Ledger {
    /// The ledger of `loops` bought, `mechanical` stale directories left to
    /// the scan and `candidates` open.
    pub(crate) fn new(
        target: &Path,
        loops: &[PlannedLoop],
        mechanical: &[PathBuf],
        candidates: &[PlannedLoop],
    ) -> Ledger {
        let mut stale: HashSet<PathBuf> = mechanical.iter().cloned().collect();
        stale.extend(loops.iter().flat_map(|l| l.unit.dirs().cloned()));
        let mut candidates: Vec<Candidate> =
            candidates.iter().cloned().map(Candidate::open).collect();
        candidates.sort_by_key(|c| c.planned.rank);
        let mut ledger = Ledger {
            target: target.to_path_buf(),
            bought: loops
                .iter()
                .map(|planned| Bought {
                    planned: planned.clone(),
                    stage: Stage::Waiting,
                    expected_at_start: planned.cost,
                })
                .collect(),
            candidates,
            stale,
            reasons: HashMap::new(),
            covered: HashMap::new(),
            pending: mechanical.iter().cloned().collect(),
            written: HashSet::new(),
            led: HashSet::new(),
            calibration: Calibration::default(),
            handoffs: Vec::new(),
            rounds: 0,
            bought_by_rounds: 0,
            bought_for_leads: 0,
        };
        for n in 0..ledger.bought.len() {
            ledger.cover(n);
        }
        ledger
    }

    /// Loop `n` is live: its directories need no entry from the scan.
    fn cover(&mut self, n: usize) {
        let Ledger {
            bought,
            covered,
            pending,
            ..
        } = self;
        for dir in bought[n].planned.unit.dirs() {
            *covered.entry(dir.clone()).or_default() += 1;
            pending.remove(dir);
        }
    }

    /// Loop `n` is dropped: its stale directories no other live loop
    /// covers wait for an entry from the scan again.
    fn drop_cover(&mut self, n: usize) {
        if self.bought[n].stage == Stage::Dropped {
            return;
        }
        self.bought[n].stage = Stage::Dropped;
        let Ledger {
            bought,
            covered,
            pending,
            stale,
            written,
            ..
        } = self;
        for dir in bought[n].planned.unit.dirs() {
            let Some(count) = covered.get_mut(dir) else {
                continue;
            };
            *count -= 1;
            if *count == 0 {
                covered.remove(dir);
                if stale.contains(dir) && !written.contains(dir) {
                    pending.insert(dir.clone());
                }
            }
        }
    }

    /// The entry from the scan of `dir` is written.
    pub(crate) fn mark_written(&mut self, dir: &Path) {
        self.pending.remove(dir);
        self.written.insert(dir.to_path_buf());
    }

    /// What loop `n` is expected to cost now.
    pub(crate) fn expected(&self, n: usize) -> f64 {
        self.bought[n].planned.cost * self.calibration.scale()
    }

    /// What the loops bought and not finished are still expected to cost:
    /// the running ones what they were expected to cost when they started
    /// less what they spent so far (`spent`, by directory: that is in the
    /// run's spend already), the waiting ones their expectation now.
    pub(crate) fn committed(&self, spent: &HashMap<PathBuf, f64>) -> f64 {
        let scale = self.calibration.scale();
        self.bought
            .iter()
            .map(|b| match b.stage {
                Stage::Running => remaining(b, spent),
                // A loop waiting is kept at no less than it was planned
                // to cost: cheap loops below make the calibration fall,
                // but a parent's loop (its prompt holds every summary
                // below it) is not cheaper for it.
                Stage::Waiting => b.planned.cost * scale.max(1.0),
                Stage::Done | Stage::Dropped => 0.0,
            })
            .sum()
    }

    /// What the waiting loops ranked before loop `n` are expected to cost.
    pub(crate) fn reserved_before(&self, n: usize) -> f64 {
        let scale = self.calibration.scale();
        let rank = self.bought[n].planned.rank;
        (self.bought.iter().enumerate())
            .filter(|(m, b)| *m != n && b.stage == Stage::Waiting && b.planned.rank < rank)
            .map(|(_, b)| b.planned.cost * scale)
            .sum()
    }

    /// What the running loops are still expected to cost, after what they
    /// spent so far (`spent`, by directory).
    pub(crate) fn running(&self, spent: &HashMap<PathBuf, f64>) -> f64 {
        (self.bought.iter())
            .filter(|b| b.stage == Stage::Running)
            .map(|b| remaining(b, spent))
            .sum()
    }

    /// Loop `n` starts, expected to cost `expected`.
    pub(crate) fn start(&mut self, n: usize, expected: f64) {
        self.bought[n].stage = Stage::Running;
        self.bought[n].expected_at_start = expected;
    }

    /// Loop `n` could not be started or sent nothing, when the money for
    /// new loops was `money` ([`money_for_loops`] without it): its unit is
    /// a candidate again, bought back only with more money than that, and
    /// its stale directories are the scan's unless a round does.
    pub(crate) fn drop_loop(&mut self, n: usize, money: MoneyThen<'_>) {
        self.drop_cover(n);
        let planned = self.bought[n].planned.clone();
        for dir in planned.unit.dirs() {
            self.reasons
                .insert(dir.clone(), MechanicalReason::BudgetSpent);
        }
        let failed_with = money_for_loops(
            money.limit,
            money.spent,
            self.committed(money.by_running),
            money.held,
        );
        self.candidates.push(Candidate {
            failed_with: Some(failed_with),
            ..Candidate::open(planned)
        });
        self.candidates.sort_by_key(|c| c.planned.rank);
    }

    /// Loop `n` ended with `outcome`: a handoff.
    pub(crate) fn hand_off(&mut self, n: usize, outcome: &DirOutcome) {
        let expected = self.bought[n].expected_at_start;
        self.bought[n].stage = Stage::Done;
        self.calibration
            .add(self.bought[n].planned.cost, outcome.usage.cost);
        let led = self.follow_leads(&outcome.leads);
        let summary: String = (outcome.summary.as_deref().unwrap_or(""))
            .chars()
            .take(HANDOFF_SUMMARY_CHARS)
            .collect();
        self.handoffs.push(Handoff {
            dir: outcome.shown.clone(),
            status: end_word(&outcome.end),
            summary,
            completeness: outcome.completeness,
            turns: outcome.turns.used,
            cost_usd: outcome.usage.cost,
            expected_usd: expected,
            leads: outcome.leads.iter().take(HANDOFF_LEADS).cloned().collect(),
            led_to: led,
        });
    }

    /// Mark the open candidates the `leads` (target-relative paths) point
    /// into: the candidate holding the deepest directory of each path.
    /// Their roots, relative.
    fn follow_leads(&mut self, leads: &[String]) -> Vec<String> {
        let mut of_dir: HashMap<&Path, usize> = HashMap::new();
        for (i, candidate) in self.candidates.iter().enumerate() {
            if candidate.open {
                for dir in candidate.planned.unit.dirs() {
                    of_dir.insert(dir, i);
                }
            }
        }
        let mut named = Vec::new();
        for lead in leads {
            let path = if lead == "." {
                self.target.clone()
            } else {
                self.target.join(lead)
            };
            // The directory itself, or a file's directory.
            let found = of_dir
                .get(path.as_path())
                .or_else(|| of_dir.get(path.parent()?));
            if let Some(&i) = found {
                let root = self.candidates[i].planned.unit.root.clone();
                if self.led.insert(root.clone()) {
                    named.push(relative(&self.target, &root));
                }
            }
        }
        named
    }

    /// Handoffs waiting for a round.
    pub(crate) fn handoffs_pending(&self) -> usize {
        self.handoffs.len()
    }

    /// Whether a round could buy anything.
    pub(crate) fn has_open_candidates(&self) -> bool {
        self.candidates.iter().any(|c| c.open)
    }

    /// Whether an open candidate lies at or below `root`.
    pub(crate) fn open_below(&self, root: &Path) -> bool {
        (self.candidates.iter()).any(|c| c.open && c.planned.unit.root.starts_with(root))
    }

    /// What the cheapest open candidate is expected to cost now.
    pub(crate) fn cheapest_open(&self) -> Option<f64> {
        let scale = self.calibration.scale();
        (self.candidates.iter())
            .filter(|c| c.open)
            .map(|c| c.planned.cost * scale)
            .min_by(f64::total_cmp)
    }

    /// Close the open candidates at or below `root` (a loop there is about
    /// to start); return the stale directories there still without an
    /// entry, leaf-first, with why the scan summarises them.
    pub(crate) fn close_below(&mut self, root: &Path) -> Vec<(PathBuf, MechanicalReason)> {
        for candidate in &mut self.candidates {
            if candidate.open && candidate.planned.unit.root.starts_with(root) {
                candidate.open = false;
            }
        }
        self.unwritten(|dir| dir.starts_with(root) && dir != root)
    }

    /// Stale directories no live loop covers, not written yet, for which
    /// `wanted` holds: leaf-first, with their reasons.
    pub(crate) fn unwritten(
        &self,
        wanted: impl Fn(&Path) -> bool,
    ) -> Vec<(PathBuf, MechanicalReason)> {
        let mut dirs: Vec<PathBuf> = (self.pending.iter())
            .filter(|d| wanted(d))
            .cloned()
            .collect();
        sort_leaf_first(&mut dirs);
        dirs.into_iter()
            .map(|dir| {
                let reason =
                    (self.reasons.get(&dir).copied()).unwrap_or(MechanicalReason::NotChosen);
                (dir, reason)
            })
            .collect()
    }

    /// The open candidates, in the order of interest, with whether a lead
    /// named each: a round's input.
    fn open(&self) -> (Vec<usize>, Vec<PlannedLoop>, Vec<bool>) {
        let open: Vec<usize> = (0..self.candidates.len())
            .filter(|&i| self.candidates[i].open)
            .collect();
        let planned = open.iter().map(|&i| self.candidates[i].offered()).collect();
        let led = open
            .iter()
            .map(|&i| self.led.contains(&self.candidates[i].planned.unit.root))
            .collect();
        (open, planned, led)
    }

    /// Every live loop bought, and the stale directories no live loop
    /// covers.
    pub(crate) fn shape(&self) -> (Vec<PlannedLoop>, Vec<PathBuf>) {
        let loops: Vec<PlannedLoop> = (self.bought.iter())
            .filter(|b| b.stage != Stage::Dropped)
            .map(|b| b.planned.clone())
            .collect();
        let mut mechanical: Vec<PathBuf> = (self.stale.iter())
            .filter(|d| !self.covered.contains_key(*d))
            .cloned()
            .collect();
        sort_leaf_first(&mut mechanical);
        (loops, mechanical)
    }

    /// The open candidates, in the order of interest.
    pub(crate) fn open_candidates(&self) -> Vec<PlannedLoop> {
        self.open().1
    }

    /// Decide a round with `decide` after `spent`, and buy what it bought:
    /// the new loops (appended to `bought`), the round's record (for the
    /// cache) and the round itself.
    pub(crate) fn round(
        &mut self,
        spent: f64,
        by_running: &HashMap<PathBuf, f64>,
        trigger: &str,
        decide: impl FnOnce(&RoundInput<'_>) -> Round,
    ) -> (Vec<usize>, RoundRecord, Round) {
        let (open, planned, led) = self.open();
        let (loops, mechanical) = self.shape();
        let input = RoundInput {
            spent,
            committed: self.committed(by_running),
            loops: &loops,
            mechanical: &mechanical,
            candidates: &planned,
            led: &led,
            calibration: self.calibration,
        };
        let round = decide(&input);
        self.rounds += 1;
        let mut new = Vec::new();
        let mut bought = Vec::new();
        for &k in &round.bought {
            let i = open[k];
            self.candidates[i].open = false;
            let planned = self.candidates[i].planned.clone();
            let lead = led[k];
            if lead {
                self.bought_for_leads += 1;
            }
            bought.push(BoughtLoop {
                root: relative(&self.target, &planned.unit.root),
                members: (planned.unit.members.iter())
                    .map(|m| relative(&self.target, m))
                    .collect(),
                turns: planned.turns,
                expected_usd: planned.cost * round.scale,
                lead,
            });
            new.push(self.bought.len());
            self.bought.push(Bought {
                expected_at_start: planned.cost,
                planned,
                stage: Stage::Waiting,
            });
            self.cover(self.bought.len() - 1);
        }
        self.bought_by_rounds += new.len();
        let record = RoundRecord {
            round: self.rounds,
            trigger: trigger.to_string(),
            handoffs: std::mem::take(&mut self.handoffs),
            spent_usd: spent,
            committed_usd: input.committed,
            synthesis_reserve_usd: round.reserve,
            money_for_new_loops_usd: round.money,
            calibration: round.scale,
            open_candidates: planned.len(),
            bought,
        };
        (new, record, round)
    }

    /// A loop a round bought could not join the schedule (a loop above it
    /// had started): it is closed instead.
    pub(crate) fn unbuy(&mut self, n: usize) {
        self.drop_cover(n);
        self.bought_by_rounds = self.bought_by_rounds.saturating_sub(1);
    }
}

/// What the running loop `bought` is still expected to cost, after what
/// it spent so far (`spent`, by directory).
fn remaining(bought: &Bought, spent: &HashMap<PathBuf, f64>) -> f64 {
    let so_far = spent.get(&bought.planned.unit.root).copied().unwrap_or(0.0);
    (bought.expected_at_start - so_far).max(0.0)
}

/// A loop's end in one word, for a handoff.
fn end_word(end: &LoopEnd) -> &'static str {
    match end {
        LoopEnd::Submitted => "complete",
        LoopEnd::TurnLimit => "out of turns",
        LoopEnd::Malformed => "malformed calls",
        LoopEnd::ContextFull => "out of context",
        LoopEnd::Spent => "out of money",
        LoopEnd::Refused(_) => "declined",
        LoopEnd::ApiError(_) => "failed",
        LoopEnd::Unaffordable => "not started",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::rules::plan::Tier;
    use crate::ai::rules::units::Unit;

    fn planned(rel: &str, rank: usize) -> PlannedLoop {
        PlannedLoop {
            unit: Unit::single(PathBuf::from("/t").join(rel)),
            turns: 10,
            tier: Tier::Default,
            cost: 0.1,
            first_request: 0.02,
            rank,
        }
    }

    fn p(rel: &str) -> PathBuf {
        PathBuf::from("/t").join(rel)
    }

    fn no_budget(by_running: &HashMap<PathBuf, f64>) -> MoneyThen<'_> {
        MoneyThen {
            limit: None,
            spent: 0.0,
            held: 0.0,
            by_running,
        }
    }

    #[test]
    fn entries_from_the_scan_wait_until_a_loop_above_needs_them() {
        let loops = [planned("a", 0)];
        let candidates = [planned("a/x", 1), planned("b", 2)];
        let mut ledger = Ledger::new(Path::new("/t"), &loops, &[p("a/x"), p("b")], &candidates);
        // Nothing is written before it must be.
        assert!(ledger.has_open_candidates());
        // The loop on `a` is about to start: a/x is closed and written.
        let below = ledger.close_below(&p("a"));
        assert_eq!(below, [(p("a/x"), MechanicalReason::NotChosen)]);
        assert!(!ledger.candidates[0].open && ledger.candidates[1].open);
        // A round buys b; it needs no entry from the scan any more.
        let (new, record, _) = ledger.round(0.0, &HashMap::new(), "idle", |input| {
            assert_eq!(input.candidates.len(), 1);
            Round {
                reserve: 0.1,
                money: 1.0,
                scale: 1.0,
                bought: vec![0],
            }
        });
        assert_eq!(new, [1]);
        assert_eq!(record.bought[0].root, "b");
        assert!(ledger.unwritten(|_| true).iter().all(|(d, _)| d != &p("b")));
        // A loop the budget cannot start goes back among the candidates.
        ledger.drop_loop(1, no_budget(&HashMap::new()));
        assert!(ledger.has_open_candidates());
        assert_eq!(
            ledger.unwritten(|d| d == p("b")),
            [(p("b"), MechanicalReason::BudgetSpent)]
        );
    }

    #[test]
    fn a_loop_that_could_not_start_is_bought_back_only_with_more_money() {
        let mut ledger = Ledger::new(Path::new("/t"), &[planned("a", 0)], &[], &[]);
        let buy_all =
            |input: &RoundInput<'_>| crate::ai::rules::decide::round(input, 0.1, Some(1.0));
        // a could not start with $0.5 for new loops ($1 less $0.4 spent and
        // $0.1 held): nothing was running, nothing is committed.
        let none = HashMap::new();
        let then = MoneyThen {
            limit: Some(1.0),
            spent: 0.4,
            held: 0.1,
            by_running: &none,
        };
        ledger.drop_loop(0, then);
        // The same money again: a round does not buy it back.
        let (new, _, _) = ledger.round(0.4, &none, "idle", buy_all);
        assert!(new.is_empty());
        assert!(ledger.has_open_candidates());
        // A cent more (a running loop spent less than it held): it does.
        let (new, _, _) = ledger.round(0.39, &none, "idle", buy_all);
        assert_eq!(new, [1]);
    }

    /// What `unwritten` must return, worked out from its definition: the
    /// stale directories no live loop covers, not written yet.
    fn unwritten_by_definition(ledger: &Ledger) -> Vec<PathBuf> {
        let covered: HashSet<&PathBuf> = (ledger.bought.iter())
            .filter(|b| b.stage != Stage::Dropped)
            .flat_map(|b| b.planned.unit.dirs())
            .collect();
        let mut dirs: Vec<PathBuf> = (ledger.stale.iter())
            .filter(|d| !covered.contains(d) && !ledger.written.contains(*d))
            .cloned()
            .collect();
        sort_leaf_first(&mut dirs);
        dirs
    }

    proptest::proptest! {
        /// Whatever is bought, dropped, unbought, written or closed, in any
        /// order, the kept set of directories waiting for the scan is the
        /// one the definition gives.
        #[test]
        fn unwritten_follows_its_definition(ops in proptest::collection::vec((0u8..5, 0usize..6), 0..24)) {
            let names = ["a", "a/x", "a/x/y", "b", "b/z", "c"];
            let loops = [planned("a", 0), planned("a/x/y", 1)];
            let mechanical = [p("a/x"), p("b"), p("b/z"), p("c")];
            let candidates = [planned("a/x", 2), planned("b", 3), planned("c", 4), planned("b/z", 5)];
            let mut ledger = Ledger::new(Path::new("/t"), &loops, &mechanical, &candidates);
            for (op, k) in ops {
                match op {
                    0 => ledger.drop_loop(k % ledger.bought.len(), no_budget(&HashMap::new())),
                    1 => {
                        let _ = ledger.round(0.0, &HashMap::new(), "idle", |input| Round {
                            reserve: 0.0,
                            money: 1.0,
                            scale: 1.0,
                            bought: (0..input.candidates.len()).filter(|i| i % 2 == k % 2).collect(),
                        });
                    }
                    2 => ledger.unbuy(k % ledger.bought.len()),
                    3 => ledger.mark_written(&p(names[k])),
                    _ => {
                        let _ = ledger.close_below(&p(names[k]));
                    }
                }
                let kept: Vec<PathBuf> = ledger.unwritten(|_| true).into_iter().map(|(d, _)| d).collect();
                proptest::prop_assert_eq!(kept, unwritten_by_definition(&ledger));
            }
        }
    }
}
