//! The types of the one decision: what a run knows before it decides
//! ([`DecisionInputs`]) and what it will do ([`Decision`]: the passes' choices, the
//! loops, the mechanical entries, what the budget bought, the synthesis
//! expected).
//!
//! Its edges: data and two small views of it ([`Decision::work`],
//! [`Decision::folded`]); how a decision is reached is [`super::decide`],
//! how loops and passes are priced is `budget.rs`, how the synthesis is
//! projected is `synthesis.rs`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::{SavedLoop, SavedWork};
use crate::ai::api::catalog::ModelFacts;
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::discover::ChildIndex;
use crate::ai::rules::fingerprint::{DirState, Freshness};
use crate::ai::rules::levels::Layout;
use crate::ai::rules::plan::{AppliedPlan, Plan, Tier};
use crate::ai::rules::units::Unit;

/// What a run knows before it decides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecisionInputs<'a> {
    /// The canonical target.
    pub target: &'a Path,
    /// Every discovered directory, leaf-first.
    pub dirs: &'a [PathBuf],
    pub children: &'a ChildIndex,
    pub stats: &'a TreeStats,
    /// What the cache knows about each directory (empty without one).
    pub states: &'a HashMap<PathBuf, DirState>,
    /// Directories whose cached entry was built without the model.
    pub mechanical: &'a HashSet<PathBuf>,
    /// Files the scan found.
    pub total_files: u64,
    /// `--fresh`: nothing saved is reused.
    pub fresh: bool,
    /// A usable `survey.json` is saved.
    pub saved_survey: bool,
    /// The saved `plan.json`, if any.
    pub saved_plan: Option<&'a Plan>,
    /// The saved `work_plan.json`, if any.
    pub saved_work: Option<&'a SavedWork>,
    /// The saved synthesis was built from the entries as they are.
    pub synthesis_current: bool,
    /// The budget in the plan's meter (`--budget` in dollars, or the
    /// token budget in millions of tokens); `None` for no ceiling.
    pub budget: Option<f64>,
    pub model: ModelFacts,
    /// `--batch`: every request is priced at the catalog's batch prices,
    /// so the budget buys twice the work.
    pub batch: bool,
    /// Tokens every loop sends before its assignment: tools and system
    /// prompt.
    pub loop_prefix_tokens: u64,
}

/// What a pass does this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PassChoice {
    /// Call the model.
    Run,
    /// Read the saved result back.
    Reuse,
    /// The target is tiny: the synthetic survey, the default plan.
    Skip,
    /// Nothing is left to investigate.
    NotNeeded,
}

/// One loop of the run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedLoop {
    pub unit: Unit,
    pub turns: u32,
    pub tier: Tier,
    /// Its expected cost, in the plan's meter.
    pub cost: f64,
    /// What its first request may cost at its worst, in the plan's meter: the money
    /// left must pay for that before the loop is bought (see
    /// [`super::buy`]).
    pub first_request: f64,
    /// Its place in the order of interest (0 first): when money runs short
    /// at run time, the loops ranked first keep theirs.
    pub rank: usize,
}

/// What the budget decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BudgetPlan {
    /// The budget, in the plan's meter (as every amount here).
    pub limit: Option<f64>,
    /// The budget shaped the work: units were folded, or directories are
    /// summarised mechanically.
    pub binding: bool,
    /// Expected cost of the survey and planning calls.
    pub fixed: f64,
    /// Money set aside for the synthesis (its expected cost when the
    /// budget does not bind).
    pub synthesis_reserve: f64,
    /// Expected cost of the chosen loops.
    pub loops_cost: f64,
    /// Units the directories to investigate make.
    pub units: usize,
    /// Loops the budget buys at the units' average expected cost (all of
    /// them when it does not bind).
    pub loops_affordable: usize,
}

/// How the synthesis is expected to go.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SynthesisPlan {
    /// The saved synthesis holds (nothing changes this run).
    pub reused: bool,
    /// The projected layout (none below the verdict when all fits).
    pub layout: Layout,
    /// Expected cost of its calls.
    pub cost: f64,
}

/// What a run will do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    pub tiny: bool,
    pub survey: PassChoice,
    pub planning: PassChoice,
    /// The plan applied (saved, default, or the planner's).
    pub plan: Plan,
    /// Cached directories whose summaries hold, and those to work on.
    pub freshness: Freshness,
    /// The plan over the directories to work on.
    pub applied: AppliedPlan,
    /// The work chosen for the directories to work on.
    pub work: Work,
    /// Priced at the batch prices (`--batch`).
    pub batch: bool,
}

/// What one of the three ways of deciding the work chose: the work a
/// resumed run saved, every directory its own loop (the budget does not
/// bind), or the units the budget buys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Work {
    /// The loops, in the order they may start (children first).
    pub loops: Vec<PlannedLoop>,
    /// Stale directories no loop was bought for, leaf-first: summarised
    /// without the model once the loops are done, unless a replanning
    /// round buys one of the candidates they belong to.
    pub mechanical: Vec<PathBuf>,
    /// The units the budget did not buy a loop for (yet), in the order of
    /// interest: those of stale directories (their directories are in
    /// `mechanical`) and those of directories an earlier run left to the
    /// scan, which stay as they are unless bought.
    pub candidates: Vec<PlannedLoop>,
    pub budget: BudgetPlan,
    pub synthesis: SynthesisPlan,
    /// The loops and mechanical entries are the saved work's, resumed.
    pub resumed: bool,
}

impl Decision {
    /// The work this run decided, to save for a run that resumes it.
    pub(crate) fn saved_work(&self) -> SavedWork {
        SavedWork {
            budget: self.work.budget.limit,
            batch: self.batch,
            loops: self
                .work
                .loops
                .iter()
                .map(|l| SavedLoop {
                    unit: l.unit.clone(),
                    turns: l.turns,
                })
                .collect(),
            mechanical: self.work.mechanical.clone(),
            candidates: self
                .work
                .candidates
                .iter()
                .map(|l| SavedLoop {
                    unit: l.unit.clone(),
                    turns: l.turns,
                })
                .collect(),
        }
    }

    /// Directories folded into another directory's loop.
    pub(crate) fn folded(&self) -> usize {
        self.work.loops.iter().map(|l| l.unit.members.len()).sum()
    }

    /// The directories that get a new entry this run: those a loop reads
    /// and those summarised from the scan.
    pub(crate) fn renewed(&self) -> HashSet<&Path> {
        self.work
            .loops
            .iter()
            .flat_map(|l| l.unit.dirs())
            .chain(&self.work.mechanical)
            .map(PathBuf::as_path)
            .collect()
    }

    /// What becomes of each of the `total` directories found: the one
    /// count the run's line and `--estimate` both say.
    pub(crate) fn directory_counts(&self, total: usize) -> DirectoryCounts {
        let renewed = self.renewed();
        DirectoryCounts {
            total,
            to_investigate: self.work.loops.iter().map(|l| l.unit.dirs().count()).sum(),
            from_scan: self.work.mechanical.len(),
            cached: self
                .freshness
                .fresh
                .iter()
                .filter(|dir| !renewed.contains(dir.as_path()))
                .count(),
            skipped: self.applied.skipped.len(),
        }
    }
}

/// What a decision does with the directories found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirectoryCounts {
    /// Every directory found.
    pub total: usize,
    /// Directories a model reads this run: on a loop of their own or
    /// folded into one (a loop of a directory summarised from the scan
    /// before included).
    pub to_investigate: usize,
    /// Directories summarised from the scan this run, without the model.
    pub from_scan: usize,
    /// Directories whose cached summary is kept as it is.
    pub cached: usize,
    /// Directories a saved plan skips.
    pub skipped: usize,
}

impl DirectoryCounts {
    /// `Directories to investigate: 1 (1 summarised from the scan, 105
    /// cached)`: the run's line, with what is not zero.
    pub(crate) fn line(&self) -> String {
        let mut rest = Vec::new();
        if self.from_scan > 0 {
            rest.push(format!("{} summarised from the scan", self.from_scan));
        }
        if self.cached > 0 {
            rest.push(format!("{} cached", self.cached));
        }
        if self.skipped > 0 {
            rest.push(format!("{} skipped by the plan", self.skipped));
        }
        let rest = if rest.is_empty() {
            String::new()
        } else {
            format!(" ({})", rest.join(", "))
        };
        format!("Directories to investigate: {}{rest}", self.to_investigate)
    }
}
