//! The one decision of a run: which passes run and what they reuse, which
//! directories are cached, skipped, investigated by a loop of their own,
//! folded into a unit or summarised mechanically, what the budget buys, and
//! how the synthesis will be laid out.
//!
//! [`decide`] is pure: the orchestrator gathers the [`Facts`] (the tree, the
//! scan's figures, the cache's state, the budget), calls it, and carries the
//! [`Decision`] out; `--estimate` gathers the same facts read-only and
//! prices the same decision. Before the planning pass the plan is the saved
//! one (or the default); a run that plans decides again with the planner's
//! proposal, and nothing else changes.
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
//! A directory the plan skips stays out, with no entry, as before. A run that
//! resumes (not `--fresh`, the same `--budget`) carries on with the work
//! the interrupted run decided ([`SavedWork`]) when it covers everything
//! left to do.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::ai::api::Usage;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::estimate::{
    DIR_OUTPUT_TOKENS_PER_TURN, ModelTerms, PLANNING_OUTPUT_TOKENS, SURVEY_OUTPUT_TOKENS,
    SYNTHESIS_OUTPUT_TOKENS, Tally, project_loop_with_prefix, tokens_of_bytes,
};
use crate::ai::passes::survey::should_skip_survey;

use super::dir_stats::TreeStats;
use super::discover::ChildIndex;
use super::fingerprint::{DirState, Freshness, classify};
use super::levels::{self, Capacity, Layout, Section};
use super::plan::{AppliedPlan, Plan, Tier, apply_plan, named_tiers};
use super::units::{Unit, fold_units, unit_turns};

mod saved;

pub(crate) use saved::{SavedLoop, SavedWork};

/// `--budget` when none is given, in US dollars.
pub(crate) const DEFAULT_BUDGET_USD: f64 = 5.0;
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
/// Share of a binding budget (after survey and planning) kept for the
/// synthesis.
pub(crate) const SYNTHESIS_SHARE: f64 = 0.2;
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
/// A group summary (about 300 words, asked for) as its call writes it and
/// the next synthesis level reads it.
pub(crate) const GROUP_OUTPUT_TOKENS: u64 = 800;

/// What a run knows before it decides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<'a> {
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
    /// `--budget` in dollars; `None` for no ceiling.
    pub budget: Option<f64>,
    pub model: &'a str,
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
    /// Its expected cost in dollars.
    pub cost: f64,
    /// Its place in the order of interest (0 first): when money runs short
    /// at run time, the loops ranked first keep theirs.
    pub rank: usize,
}

/// What the budget decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BudgetPlan {
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
    /// The loops, in the order they may start (children first).
    pub loops: Vec<PlannedLoop>,
    /// Directories summarised without the model, leaf-first.
    pub mechanical: Vec<PathBuf>,
    pub budget: BudgetPlan,
    pub synthesis: SynthesisPlan,
    /// The loops and mechanical entries are the saved work's, resumed.
    pub work_resumed: bool,
    /// Priced at the batch prices (`--batch`).
    pub batch: bool,
}

impl Decision {
    /// The work this run decided, to save for a run that resumes it.
    pub(crate) fn work(&self) -> SavedWork {
        SavedWork {
            budget: self.budget.limit,
            batch: self.batch,
            loops: self
                .loops
                .iter()
                .map(|l| SavedLoop {
                    unit: l.unit.clone(),
                    turns: l.turns,
                })
                .collect(),
            mechanical: self.mechanical.clone(),
        }
    }

    /// Directories folded into another directory's loop.
    pub(crate) fn folded(&self) -> usize {
        self.loops.iter().map(|l| l.unit.members.len()).sum()
    }
}

/// Decide what a run over `facts` does. `proposal` is the planner's plan
/// when this run just made one; otherwise the saved plan is used when it is
/// reused, and the default plan else.
pub(crate) fn decide(facts: &Facts<'_>, proposal: Option<&Plan>) -> Decision {
    let tiny = should_skip_survey(facts.total_files, facts.dirs.len());
    let first_look = classify(facts.dirs, facts.states);
    let stale = !first_look.stale.is_empty();
    let saved_plan = facts.saved_plan.filter(|_| !facts.fresh);
    let survey = choice(stale, tiny, facts.saved_survey && !facts.fresh);
    let planning = choice(stale, tiny, saved_plan.is_some());
    let plan = match (proposal, planning) {
        (Some(plan), _) => plan.clone(),
        (None, PassChoice::Reuse) => saved_plan.cloned().unwrap_or_default(),
        (None, _) => Plan::default_plan(),
    };
    let (applied, freshness) =
        settle_plan(facts.dirs, facts.states, &first_look, &plan, facts.target);

    let terms = ModelTerms::for_run(facts.model, facts.batch);
    let model = ModelFacts::of(facts.model).model;
    let capacity = Capacity::new(
        model.context_window,
        facts.budget,
        terms.pricing.prices.input,
    );
    let fixed = pass_cost(&terms, survey, SURVEY_PROMPT_TOKENS, SURVEY_OUTPUT_TOKENS)
        + pass_cost(
            &terms,
            planning,
            PLANNING_PROMPT_TOKENS,
            PLANNING_OUTPUT_TOKENS,
        );
    let costs = LoopCosts { facts, terms };

    // A resumed run carries on with the work it saved.
    let saved = facts
        .saved_work
        .filter(|work| {
            !facts.fresh
                && work.budget == facts.budget
                && work.batch == facts.batch
                && !applied.order.is_empty()
        })
        .and_then(|work| work.resume(&applied.order));
    if let Some((saved, mechanical)) = saved {
        let loops: Vec<PlannedLoop> = saved
            .into_iter()
            .map(|saved| PlannedLoop {
                cost: costs.expected(&saved.unit, saved.turns),
                rank: 0,
                tier: applied.tier_of(&saved.unit.root),
                unit: saved.unit,
                turns: saved.turns,
            })
            .collect();
        let mut loops = loops;
        assign_ranks(
            facts,
            &named_tiers(facts.dirs, &plan, facts.target),
            &mut loops,
        );
        let binding = !mechanical.is_empty() || loops.iter().any(|l| !l.unit.members.is_empty());
        let synthesis = project_synthesis(facts, &freshness, &loops, &mechanical, capacity, &terms);
        let spendable = (facts.budget.unwrap_or(f64::INFINITY) - fixed).max(0.0);
        let loops_cost = loops.iter().map(|l| l.cost).sum();
        return Decision {
            tiny,
            survey,
            planning,
            plan,
            freshness,
            applied,
            budget: BudgetPlan {
                limit: facts.budget,
                binding,
                fixed,
                synthesis_reserve: if binding {
                    spendable * SYNTHESIS_SHARE
                } else {
                    synthesis.cost
                },
                loops_cost,
                units: loops.len() + mechanical.len(),
                loops_affordable: loops.len(),
            },
            loops,
            mechanical,
            synthesis,
            work_resumed: true,
            batch: facts.batch,
        };
    }

    // Every directory its own loop, as before any budget.
    let singles: Vec<PlannedLoop> = applied
        .order
        .iter()
        .map(|dir| {
            let unit = Unit::single(dir.clone());
            let turns = applied.turns_for(dir);
            PlannedLoop {
                cost: costs.expected(&unit, turns),
                rank: 0,
                tier: applied.tier_of(dir),
                unit,
                turns,
            }
        })
        .collect();
    let mut singles = singles;
    assign_ranks(
        facts,
        &named_tiers(facts.dirs, &plan, facts.target),
        &mut singles,
    );
    let loops_cost: f64 = singles.iter().map(|l| l.cost).sum();
    let synthesis_all = project_synthesis(facts, &freshness, &singles, &[], capacity, &terms);
    let fits = |limit: f64| fixed + loops_cost + synthesis_all.cost <= limit;
    if facts.budget.is_none_or(fits) {
        let units = singles.len();
        return Decision {
            tiny,
            survey,
            planning,
            plan,
            freshness,
            applied,
            budget: BudgetPlan {
                limit: facts.budget,
                binding: false,
                fixed,
                synthesis_reserve: synthesis_all.cost,
                loops_cost,
                units,
                loops_affordable: units,
            },
            loops: singles,
            mechanical: Vec::new(),
            synthesis: synthesis_all,
            work_resumed: false,
            batch: facts.batch,
        };
    }

    // The budget binds: fold, rank, buy.
    let limit = facts.budget.unwrap_or_default();
    let spendable = (limit - fixed).max(0.0);
    let synthesis_reserve = spendable * SYNTHESIS_SHARE;
    let for_loops = spendable - synthesis_reserve;
    let tiers = named_tiers(facts.dirs, &plan, facts.target);
    let tier_of = |dir: &Path| applied.tiers.get(dir).copied().unwrap_or(Tier::Default);
    let units = fold_units(
        &applied.order,
        facts.target,
        facts.children,
        facts.stats,
        tier_of,
    );
    let candidates: Vec<PlannedLoop> = units
        .into_iter()
        .map(|unit| {
            let turns = unit_turns(applied.turns_for(&unit.root), unit.members.len());
            PlannedLoop {
                cost: costs.expected(&unit, turns),
                rank: 0,
                tier: applied.tier_of(&unit.root),
                unit,
                turns,
            }
        })
        .collect();
    let unit_count = candidates.len();
    let average = candidates.iter().map(|l| l.cost).sum::<f64>() / unit_count.max(1) as f64;
    let loops_affordable = if average > 0.0 {
        ((for_loops / average).floor() as usize).min(unit_count)
    } else {
        unit_count
    };
    let mut candidates = candidates;
    let ranked = assign_ranks(facts, &tiers, &mut candidates);
    let mut chosen = vec![false; candidates.len()];
    let mut left = for_loops;
    for i in ranked {
        if candidates[i].cost <= left {
            chosen[i] = true;
            left -= candidates[i].cost;
        }
    }
    let mut loops = Vec::new();
    let mut mechanical = Vec::new();
    for (planned, chosen) in candidates.into_iter().zip(chosen) {
        if chosen {
            loops.push(planned);
        } else {
            mechanical.extend(planned.unit.dirs().cloned());
        }
    }
    super::discover::sort_leaf_first(&mut mechanical);
    let loops_cost = loops.iter().map(|l| l.cost).sum();
    let synthesis = project_synthesis(facts, &freshness, &loops, &mechanical, capacity, &terms);
    Decision {
        tiny,
        survey,
        planning,
        plan,
        freshness,
        applied,
        loops,
        mechanical,
        budget: BudgetPlan {
            limit: facts.budget,
            binding: true,
            fixed,
            synthesis_reserve,
            loops_cost,
            units: unit_count,
            loops_affordable,
        },
        synthesis,
        work_resumed: false,
        batch: facts.batch,
    }
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

/// What one single-call pass is expected to cost. A pass reused from the
/// cache counts as if it ran: the run that saved it paid for it out of the
/// same kind of budget, and a resumed run must decide as it did.
/// `prompt` and `output` are reference tokens; the pass thinks as a
/// judgment call does.
fn pass_cost(terms: &ModelTerms, choice: PassChoice, prompt: u64, output: u64) -> f64 {
    match choice {
        PassChoice::Run | PassChoice::Reuse => {
            Tally::single(
                terms.scale(prompt),
                terms.scale(output) + terms.judgment_thinking,
                &terms.pricing,
            )
            .cost
        }
        PassChoice::Skip | PassChoice::NotNeeded => 0.0,
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

/// The expected cost of loops.
struct LoopCosts<'a, 'f> {
    facts: &'a Facts<'f>,
    terms: ModelTerms,
}

impl LoopCosts<'_, '_> {
    /// What the loop of `unit` with `turns` turns is expected to cost.
    fn expected(&self, unit: &Unit, turns: u32) -> f64 {
        let facts = self.facts;
        let inside: HashSet<&Path> = unit.dirs().map(PathBuf::as_path).collect();
        let mut listing = 0;
        let mut outside = 0u64;
        for dir in unit.dirs() {
            let stats = facts.stats.of(dir);
            listing += stats.listing_bytes;
            outside += facts
                .children
                .of(dir)
                .iter()
                .filter(|child| !inside.contains(child.as_path()))
                .count() as u64;
        }
        let read = expected_read_bytes(facts.stats, unit);
        let prefix = facts.loop_prefix_tokens;
        let task = tokens_of_bytes(TASK_BYTES + listing + outside * SECTION_BYTES);
        let expected_turns = (EXPECTED_TURNS + unit.members.len() as u32).min(turns.max(1));
        let tally = project_loop_with_prefix(
            prefix,
            prefix + task,
            tokens_of_bytes(read),
            expected_turns,
            true,
            &self.terms,
        );
        debug_assert!(tally.usage.output_tokens >= DIR_OUTPUT_TOKENS_PER_TURN);
        // The summaries written, on top of the turns' own output.
        let summaries = Usage {
            output_tokens: self.terms.scale(SUMMARY_OUTPUT_TOKENS * unit.len() as u64),
            ..Usage::default()
        };
        tally.cost + self.terms.pricing.cost(&summaries)
    }
}

/// What the loop of `unit` is expected to read: an agent reads the files
/// that explain the rest ([`EXPECTED_READS`] of its directory, and
/// [`EXPECTED_READS_PER_FOLDED`] of each folded one), not every file; each
/// as `read_file` returns it by default (up to 4 KiB).
pub(crate) fn expected_read_bytes(stats: &TreeStats, unit: &Unit) -> u64 {
    let (mut read, mut files) = (0u64, 0u64);
    for dir in unit.dirs() {
        let dir = stats.of(dir);
        read += dir.read_bytes;
        files += u64::from(dir.files);
    }
    let reads = files.min(EXPECTED_READS + EXPECTED_READS_PER_FOLDED * unit.members.len() as u64);
    (read * reads).checked_div(files).unwrap_or(0)
}

/// Rank `loops` by [`rank`] (their `rank` fields), and return their
/// indexes in that order.
fn assign_ranks(
    facts: &Facts<'_>,
    tiers: &HashMap<PathBuf, Tier>,
    loops: &mut [PlannedLoop],
) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..loops.len()).collect();
    ranked.sort_by_cached_key(|&i| rank(facts, tiers, &loops[i].unit));
    for (place, &i) in ranked.iter().enumerate() {
        loops[i].rank = place;
    }
    ranked
}

/// The order in which units get loops: the target first, then by the
/// plan's tier of the nearest named directory at or above the unit's root
/// (priority, unnamed, shallow), then the most source files, the most
/// files, and the path.
fn rank(
    facts: &Facts<'_>,
    tiers: &HashMap<PathBuf, Tier>,
    unit: &Unit,
) -> (
    u8,
    u8,
    std::cmp::Reverse<u64>,
    std::cmp::Reverse<u64>,
    PathBuf,
) {
    let tier = unit
        .root
        .ancestors()
        .take_while(|dir| dir.starts_with(facts.target))
        .find_map(|dir| tiers.get(dir).copied())
        .unwrap_or(Tier::Default);
    let tier_rank = match tier {
        Tier::Priority => 0,
        Tier::Default => 1,
        Tier::Shallow => 2,
    };
    let (source, files) = unit.dirs().fold((0u64, 0u64), |(s, f), dir| {
        let stats = facts.stats.of(dir);
        (
            s + u64::from(stats.source_files()),
            f + u64::from(stats.files),
        )
    });
    (
        u8::from(unit.root != facts.target),
        tier_rank,
        std::cmp::Reverse(source),
        std::cmp::Reverse(files),
        unit.root.clone(),
    )
}

/// Whether a directory's entry goes into the synthesis: every entry a
/// model wrote, and a mechanical one only where no mechanical parent
/// already describes its subtree (`parent_mechanical`: whether the parent's
/// entry is mechanical, `None` without a parent entry).
pub(crate) fn in_synthesis(mechanical: bool, parent_mechanical: Option<bool>) -> bool {
    !mechanical || parent_mechanical != Some(true)
}

/// The synthesis a run with these loops and mechanical entries is expected
/// to make, from allowances for the summaries not written yet.
fn project_synthesis(
    facts: &Facts<'_>,
    freshness: &Freshness,
    loops: &[PlannedLoop],
    mechanical: &[PathBuf],
    capacity: Capacity,
    terms: &ModelTerms,
) -> SynthesisPlan {
    let nothing_to_do = freshness.stale.is_empty();
    if nothing_to_do && facts.synthesis_current {
        return SynthesisPlan {
            reused: true,
            layout: Layout::default(),
            cost: 0.0,
        };
    }
    // Which directories will have an entry, and of which kind.
    let mut kind: HashMap<&Path, bool> = HashMap::new();
    for dir in &freshness.fresh {
        kind.insert(dir, facts.mechanical.contains(dir));
    }
    for planned in loops {
        for dir in planned.unit.dirs() {
            kind.insert(dir, false);
        }
    }
    for dir in mechanical {
        kind.insert(dir, true);
    }
    let mut sections: Vec<Section> = facts
        .dirs
        .iter()
        .filter_map(|dir| {
            let mechanical = *kind.get(dir.as_path())?;
            let parent = dir
                .parent()
                .filter(|_| dir != facts.target)
                .and_then(|p| kind.get(p).copied());
            in_synthesis(mechanical, parent).then(|| Section {
                rel: super::discover::relative(facts.target, dir),
                tokens: terms.scale(tokens_of_bytes(if mechanical {
                    MECHANICAL_SECTION_BYTES
                } else {
                    SECTION_BYTES
                })),
            })
        })
        .collect();
    levels::tree_order(&mut sections);
    let layout = levels::layout(&sections, capacity, GROUP_OUTPUT_TOKENS);
    let cost = synthesis_cost(&sections, &layout, terms);
    SynthesisPlan {
        reused: false,
        layout,
        cost,
    }
}

/// What the calls of `layout` over `sections` (in the model's tokens) cost:
/// each reads its inputs (plus the prompt's own text) once, as plain input,
/// thinks (a group as routine work, the verdict as a judgment call), and
/// writes its summary or the verdict.
pub(crate) fn synthesis_cost(sections: &[Section], layout: &Layout, terms: &ModelTerms) -> f64 {
    let calls = levels::call_inputs(sections, layout, GROUP_OUTPUT_TOKENS);
    let verdict = calls.len() - 1;
    calls
        .into_iter()
        .enumerate()
        .map(|(n, input)| {
            let (output, thinking) = if n == verdict {
                (SYNTHESIS_OUTPUT_TOKENS, terms.judgment_thinking)
            } else {
                (GROUP_OUTPUT_TOKENS, terms.routine_thinking)
            };
            Tally::single(
                input + levels::PROMPT_OVERHEAD_TOKENS,
                terms.scale(output) + thinking,
                &terms.pricing,
            )
            .cost
        })
        .sum()
}

#[cfg(test)]
mod tests;
