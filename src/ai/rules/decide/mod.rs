//! The one decision of a run: which passes run and what they reuse, which
//! directories are cached, skipped, investigated by a loop of their own,
//! folded into a unit or summarised mechanically, what the budget buys, and
//! how the synthesis will be laid out.
//!
//! [`decide`] is pure: the orchestrator gathers the [`DecisionInputs`] (the tree, the
//! scan's figures, the cache's state, the budget), calls it, and carries the
//! [`Decision`] out; `--estimate` gathers the same inputs read-only and
//! prices the same decision. Before the planning pass the plan is the saved
//! one (or the default); a run that plans decides again with the planner's
//! proposal, and nothing else changes.
//!
//! This file holds the allowances ([`EXPECTED_TURNS`] and the rest) and
//! [`decide`] itself; the types of a decision are in `decision.rs`, the
//! pricing of passes and loops and the order of interest in `budget.rs`,
//! the projected synthesis in `synthesis.rs`, and the work saved for a
//! resumed run in `saved.rs`.
//!
//! The budget, and why:
//! - a loop is priced from the catalog at its *expected* use: its shared
//!   prefix read from the cache, its assignment and reading written (about
//!   [`EXPECTED_READS`] files, three more per folded directory), and
//!   [`EXPECTED_TURNS`] turns (one more per folded directory) of output,
//!   plus a dir summary per directory it covers;
//! - when every directory's own loop fits the budget with the survey,
//!   planning and synthesis, nothing changes: one loop per directory, as
//!   before the budget existed;
//! - otherwise [`SYNTHESIS_SHARE`] of what is left after survey and
//!   planning is set aside for the synthesis, small directories are folded
//!   into units ([`super::units`]), and the units get loops in the plan's
//!   order of interest while the loop money lasts: the target itself
//!   first, then the planner's priority subtrees, the unnamed, and the
//!   shallow ones, each by its source files and size. Every other directory
//!   is summarised from the scan ([`super::mechanical`]).
//!
//! Units: every amount of money here (the budget, a loop's cost, the
//! synthesis's reserve) is in the plan's meter
//! ([`crate::ai::engine::plan_money`]): dollars, or millions of tokens
//! under a token budget that binds first, priced by the facts the inputs
//! carry. So they are bare `f64`, never [`crate::money::Usd`]: the run's
//! dollars become them only in `PlanMoney::of`.
//!
//! As loops finish, the run decides again with the money actually left
//! (`replan.rs`), buying loops for the candidates this decision could not
//! pay for; and a run with more money than the one that saved the work
//! gives loops to the directories it left to the scan ([`deepenable`]).
//!
//! A directory the plan skips stays out, with no entry, as before. A run that
//! resumes (not `--fresh`, the same `--budget`) carries on with the work
//! the interrupted run decided ([`SavedWork`]) when it covers everything
//! left to do.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::ai::rules::projection::{ModelTerms, PLANNING_OUTPUT_TOKENS, SURVEY_OUTPUT_TOKENS};

use super::fingerprint::{DirState, Freshness, classify};
use super::levels::Capacity;
use super::plan::{AppliedPlan, Plan, Tier, apply_plan, named_tiers};
use super::units::Unit;

mod budget;
mod choose;
mod decision;
mod floor;
mod replan;
mod saved;
mod synthesis;

pub(crate) use budget::buy;
pub(crate) use budget::expected_read_bytes;
use budget::{LoopCosts, assign_ranks, pass_cost};
use choose::choose_work;
pub(crate) use decision::{
    BudgetPlan, Decision, DecisionInputs, PassChoice, PlannedLoop, SynthesisPlan, Work,
};
pub(crate) use floor::{requests_floor, smallest_budget};
#[cfg(test)]
pub(crate) use replan::round;
pub(crate) use replan::{
    Calibration, MIN_HANDOFFS_FOR_REPLAN, Replanner, Round, RoundInput, money_for_loops,
};
pub(crate) use saved::{SavedLoop, SavedWork, WorkPlan};
use synthesis::project_synthesis;
pub(crate) use synthesis::{in_synthesis, synthesis_cost};

/// Turns a single-directory loop is expected to take (one more per folded
/// directory), capped by its allotment.
pub(crate) const EXPECTED_TURNS: u32 = 5;
/// Files a loop is expected to read in its own directory (the prompt sends
/// it to the files that explain the rest first), at most all of them.
pub(crate) const EXPECTED_READS: u64 = 8;
/// ...and in each directory folded into its unit.
pub(crate) const EXPECTED_READS_PER_FOLDED: u64 = 3;
/// Output of one directory summary written by a loop (about 1,200
/// characters).
pub(crate) const SUMMARY_OUTPUT_TOKENS: u64 = 400;
/// Share of a binding budget (after survey and planning) first kept for the
/// synthesis, before the loops bought with the rest say what it will cost.
pub(crate) const SYNTHESIS_SHARE: f64 = 0.2;
/// The synthesis is kept this much more than it is projected to cost: its
/// summaries are longer or shorter than their allowances, and it cuts them
/// to fit the money left rather than fail.
pub(crate) const SYNTHESIS_MARGIN: f64 = 1.5;
/// The survey call's prompt, before it is rendered.
pub(crate) const SURVEY_PROMPT_TOKENS: u64 = 4_000;
/// The planning call's prompt (its tree or condensed map), before it is
/// rendered.
pub(crate) const PLANNING_PROMPT_TOKENS: u64 = 12_000;
/// An assignment's fixed text besides its listings and summaries.
pub(crate) const TASK_BYTES: u64 = 1_200;
/// A child summary in an assignment, and a directory's section in the
/// synthesis, for a summary not written yet.
pub(crate) const SECTION_BYTES: u64 = 800;
/// A mechanical summary's section in the synthesis.
pub(crate) const MECHANICAL_SECTION_BYTES: u64 = 700;

/// The survey is skipped only when the target has fewer files than this...
pub(crate) const SURVEY_MIN_FILES: u64 = 5;
/// ...and fewer directories than this.
pub(crate) const SURVEY_MIN_DIRS: usize = 2;

/// Whether the target is too small for a survey (and a plan): fewer than 5
/// files AND fewer than 2 directories.
pub(crate) fn should_skip_survey(total_files: u64, total_dirs: usize) -> bool {
    total_files < SURVEY_MIN_FILES && total_dirs < SURVEY_MIN_DIRS
}

/// What [`decide`] says of the survey, alone: the run sends the survey's
/// request before it prices the rest of the decision, which the survey
/// does not depend on.
pub(crate) fn survey_choice(inputs: &DecisionInputs<'_>) -> PassChoice {
    let (tiny, stale) = tiny_and_stale(inputs);
    choice(stale, tiny, inputs.saved_survey && !inputs.fresh)
}

/// What the run does about the plan: what [`decide`] chooses for it, without
/// the rest of the decision.
pub(crate) fn planning_choice(inputs: &DecisionInputs<'_>) -> PassChoice {
    let (tiny, stale) = tiny_and_stale(inputs);
    let saved_plan = inputs.saved_plan.filter(|_| !inputs.fresh);
    choice(stale, tiny, saved_plan.is_some())
}

/// Whether the target is too small for the survey and the plan, and
/// whether there is work: a directory that is not unchanged (a parent is
/// stale only because of such a child), or one left to the scan that this
/// run has the money to deepen ([`deepenable`]).
fn tiny_and_stale(inputs: &DecisionInputs<'_>) -> (bool, bool) {
    let tiny = should_skip_survey(inputs.total_files, inputs.dirs.len());
    let stale = (inputs.dirs.iter())
        .any(|dir| inputs.states.get(dir) != Some(&DirState::Unchanged))
        || !deepenable(inputs).is_empty();
    (tiny, stale)
}

/// Whether a run with `budget` has more money than one with `before`
/// (`None`: no ceiling).
fn more_money(budget: Option<f64>, before: Option<f64>) -> bool {
    match (budget, before) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(now), Some(before)) => now > before + 1e-9,
    }
}

/// The directories an earlier run left to the scan (an unchanged entry
/// built without the model) that this run may give loops to, leaf-first:
/// all of them when this run has more money than the one that decided the
/// saved work, else those the saved work had bought a loop for (an
/// interrupted run that was deepening them). Never with `--fresh`, which
/// starts over anyway.
pub(crate) fn deepenable(inputs: &DecisionInputs<'_>) -> Vec<PathBuf> {
    let Some(saved) = inputs.saved_work.filter(|_| !inputs.fresh) else {
        return Vec::new();
    };
    let all = more_money(inputs.budget, saved.budget);
    let bought: HashSet<&Path> = if all {
        HashSet::new()
    } else {
        saved
            .loops
            .iter()
            .flat_map(|l| l.unit.dirs())
            .map(PathBuf::as_path)
            .collect()
    };
    inputs
        .dirs
        .iter()
        .filter(|dir| {
            inputs.states.get(*dir) == Some(&DirState::Unchanged)
                && inputs.mechanical.contains(*dir)
                && (all || bought.contains(dir.as_path()))
        })
        .cloned()
        .collect()
}

/// Decide what a run over `inputs` does. `proposal` is the planner's plan
/// when this run just made one; otherwise the saved plan is used when it is
/// reused, and the default plan else.
pub(crate) fn decide(inputs: &DecisionInputs<'_>, proposal: Option<&Plan>) -> Decision {
    let (tiny, _) = tiny_and_stale(inputs);
    let first_look = classify(inputs.dirs, inputs.states);
    let saved_plan = inputs.saved_plan.filter(|_| !inputs.fresh);
    let survey = survey_choice(inputs);
    let planning = planning_choice(inputs);
    let plan = match (proposal, planning) {
        (Some(plan), _) => plan.clone(),
        (None, PassChoice::Reuse) => saved_plan.cloned().unwrap_or_default(),
        (None, _) => Plan::default(),
    };
    let (applied, freshness) = settle_plan(
        inputs.dirs,
        inputs.states,
        &first_look,
        &plan,
        inputs.target,
    );
    // What the scan summarised before and this run may deepen, as the plan
    // sees it (a skipped directory stays as it is).
    let deepen = apply_plan(inputs.dirs, &deepenable(inputs), &plan, inputs.target);

    let terms = ModelTerms::for_run(inputs.model, inputs.batch);
    let model = inputs.model.model;
    let capacity = Capacity::new(
        model.context_window,
        inputs.budget,
        terms.pricing.prices.input,
    );
    let fixed = pass_cost(&terms, survey, SURVEY_PROMPT_TOKENS, SURVEY_OUTPUT_TOKENS)
        + pass_cost(
            &terms,
            planning,
            PLANNING_PROMPT_TOKENS,
            PLANNING_OUTPUT_TOKENS,
        );
    let costs = LoopCosts { inputs, terms };
    let shape = Shape {
        inputs,
        plan: &plan,
        applied: &applied,
        deepen: &deepen,
        freshness: &freshness,
        capacity,
        fixed,
    };
    let work = choose_work(&shape, costs);
    Decision {
        tiny,
        survey,
        planning,
        plan,
        freshness,
        applied,
        work,
        batch: inputs.batch,
    }
}

/// What the work is chosen from.
struct Shape<'a, 'f> {
    inputs: &'a DecisionInputs<'f>,
    plan: &'a Plan,
    /// The plan over the stale directories.
    applied: &'a AppliedPlan,
    /// The plan over the directories this run may deepen.
    deepen: &'a AppliedPlan,
    freshness: &'a Freshness,
    capacity: Capacity,
    /// The survey's and planning's cost this run.
    fixed: f64,
}

impl Shape<'_, '_> {
    /// The turns the plan gives `dir` (stale or deepened).
    fn turns_for(&self, dir: &Path) -> u32 {
        if self.deepen.turns.contains_key(dir) {
            self.deepen.turns_for(dir)
        } else {
            self.applied.turns_for(dir)
        }
    }

    /// The tier the plan gives `dir`.
    fn tier_of(&self, dir: &Path) -> Tier {
        match self.deepen.tiers.get(dir) {
            Some(tier) => *tier,
            None => self.applied.tier_of(dir),
        }
    }
}

/// The loops over `units` (each with its turns), priced at their expected
/// use and ranked; with their indexes in rank order.
fn ranked_loops(
    shape: &Shape<'_, '_>,
    costs: &LoopCosts<'_, '_>,
    units: impl Iterator<Item = (Unit, u32)>,
) -> (Vec<PlannedLoop>, Vec<usize>) {
    let inputs = shape.inputs;
    let mut loops: Vec<PlannedLoop> = units
        .map(|(unit, turns)| PlannedLoop {
            cost: costs.expected(&unit, turns),
            first_request: costs.first_request(&unit),
            rank: 0,
            tier: shape.tier_of(&unit.root),
            unit,
            turns,
        })
        .collect();
    let tiers = named_tiers(inputs.dirs, shape.plan, inputs.target);
    let ranked = assign_ranks(inputs, &tiers, &mut loops);
    (loops, ranked)
}

/// The synthesis reserve for loops `loops` and mechanical entries
/// `mechanical`: the synthesis they project, with [`SYNTHESIS_MARGIN`].
fn reserve_for(
    shape: &Shape<'_, '_>,
    terms: &ModelTerms,
    loops: &[PlannedLoop],
    mechanical: &[PathBuf],
) -> (SynthesisPlan, f64) {
    let synthesis = project_synthesis(
        shape.inputs,
        shape.freshness,
        loops,
        mechanical,
        shape.capacity,
        terms,
    );
    let reserve = synthesis.cost * SYNTHESIS_MARGIN;
    (synthesis, reserve)
}

/// The budget at which a run over `inputs` would have a model read every
/// directory: the smallest, in whole cents, with which [`decide`] (the rule
/// every run buys by, with the run's model, prices and `--batch`) gives a
/// fresh run's every directory its own loop under `plan`, leaving nothing
/// to the scan. What a partial run's note tells the user to rerun with.
///
/// Priced without a budget and summed, the same work came out dearer than
/// the budget that buys it: with a budget the decision lays the synthesis
/// out for the money it has, so a run at less than the note named already
/// had every directory read.
pub(crate) fn budget_to_read_everything(inputs: &DecisionInputs<'_>, plan: &Plan) -> f64 {
    let nothing_cached = HashMap::new();
    let none_mechanical = std::collections::HashSet::new();
    let fresh = DecisionInputs {
        states: &nothing_cached,
        mechanical: &none_mechanical,
        fresh: true,
        saved_survey: false,
        saved_plan: None,
        saved_work: None,
        synthesis_current: false,
        budget: None,
        ..*inputs
    };
    let reads_everything = |dollars: f64| {
        let with = DecisionInputs {
            budget: Some(dollars),
            ..fresh
        };
        let work = decide(&with, Some(plan)).work;
        work.mechanical.is_empty() && work.candidates.is_empty()
    };
    smallest_cents(reads_everything, 0)
}

/// The smallest amount in whole cents (as dollars) at which `buys` holds,
/// at least `floor` cents: doubling, then halving the interval (the
/// decision is pure and buys more with more money). Nothing above
/// [`floor::MOST`] dollars is looked for.
pub(crate) fn smallest_cents(buys: impl Fn(f64) -> bool, floor: u64) -> f64 {
    let (mut low, mut high) = (floor, floor.max(1));
    while !buys(high as f64 / 100.0) {
        if high as f64 / 100.0 >= floor::MOST {
            break;
        }
        low = high;
        high *= 2;
    }
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if buys(mid as f64 / 100.0) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high as f64 / 100.0
}

/// Survey and planning follow the same rule: nothing to do without a stale
/// directory; nothing to ask for a tiny target; a saved result is reused.
fn choice(stale: bool, tiny: bool, saved: bool) -> PassChoice {
    if !stale {
        PassChoice::NotNeeded
    } else if tiny {
        PassChoice::Skip
    } else if saved {
        PassChoice::Reuse
    } else {
        PassChoice::Run
    }
}

/// Apply `plan` to the stale directories. A directory the plan skips is
/// settled: it does not make its parents stale, so a rerun over an
/// unchanged tree has nothing to do even when the plan skipped something.
pub(crate) fn settle_plan(
    all_dirs: &[PathBuf],
    states: &HashMap<PathBuf, DirState>,
    first_look: &Freshness,
    plan: &Plan,
    target: &Path,
) -> (AppliedPlan, Freshness) {
    let proposed = apply_plan(all_dirs, &first_look.stale_dirs(), plan, target);
    let mut settled = states.clone();
    for dir in &proposed.skipped {
        settled.insert(dir.clone(), DirState::Unchanged);
    }
    let freshness = classify(all_dirs, &settled);
    let mut applied = apply_plan(all_dirs, &freshness.stale_dirs(), plan, target);
    applied.skipped = proposed.skipped;
    applied.unmatched = proposed.unmatched;
    (applied, freshness)
}

#[cfg(test)]
mod tests;
