//! The work for the stale directories: the saved work a resumed run
//! carries on with; every directory its own loop when the budget allows
//! it; otherwise units folded, ranked and bought with the money left after
//! the fixed passes and the synthesis's share.
//!
//! Pure, like the rest of `decide`: the run and `--estimate` both come
//! here through [`super::decide`].

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::budget::{LoopCosts, buy};
use super::saved::Resumed;
use super::synthesis::project_synthesis;
use super::{BudgetPlan, PlannedLoop, SYNTHESIS_SHARE, Shape, Work, ranked_loops, reserve_for};
use crate::ai::rules::units::{Unit, fold_units, unit_turns};

/// The work for the stale directories of `shape` (and those it may
/// deepen), after the fixed passes' cost.
pub(super) fn choose_work(shape: &Shape<'_, '_>, costs: LoopCosts<'_, '_>) -> Work {
    if let Some(resumed) = resumable(shape) {
        return resumed_work(shape, &costs, resumed);
    }
    if let Some(work) = unbound_work(shape, &costs) {
        return work;
    }
    bought_work(shape, &costs)
}

/// The saved work a resumed run carries on with: saved under the same
/// budget and prices, and covering every directory this run has to do.
fn resumable(shape: &Shape<'_, '_>) -> Option<Resumed> {
    let inputs = shape.inputs;
    let (applied, deepen) = (shape.applied, shape.deepen);
    inputs
        .saved_work
        .filter(|work| {
            !inputs.fresh
                && work.budget == inputs.budget
                && work.batch == inputs.batch
                && (!applied.order.is_empty() || !deepen.order.is_empty())
        })
        .and_then(|work| work.resume(&applied.order, &deepen.order))
}

/// The saved work, priced again with this run's costs.
fn resumed_work(shape: &Shape<'_, '_>, costs: &LoopCosts<'_, '_>, resumed: Resumed) -> Work {
    let units = (resumed.loops.into_iter()).map(|saved| (saved.unit, saved.turns));
    let (loops, _) = ranked_loops(shape, costs, units);
    let units = (resumed.candidates.into_iter()).map(|saved| (saved.unit, saved.turns));
    let (mut candidates, _) = ranked_loops(shape, costs, units);
    candidates.sort_by_key(|c| c.rank);
    let mechanical = resumed.mechanical;
    let binding = !mechanical.is_empty()
        || !candidates.is_empty()
        || loops.iter().any(|l| !l.unit.members.is_empty());
    let (synthesis, reserve) = reserve_for(shape, &costs.terms, &loops, &mechanical);
    let loops_cost = loops.iter().map(|l| l.cost).sum();
    Work {
        budget: BudgetPlan {
            limit: shape.inputs.budget,
            binding,
            fixed: shape.fixed,
            synthesis_reserve: if binding { reserve } else { synthesis.cost },
            loops_cost,
            units: loops.len() + candidates.len(),
            loops_affordable: loops.len(),
        },
        loops,
        mechanical,
        candidates,
        synthesis,
        resumed: true,
    }
}

/// Every directory its own loop, as before any budget: the work when the
/// budget (if any) pays for all of it.
fn unbound_work(shape: &Shape<'_, '_>, costs: &LoopCosts<'_, '_>) -> Option<Work> {
    let every = (shape.applied.order.iter()).chain(&shape.deepen.order);
    let units = every.map(|dir| (Unit::single(dir.clone()), shape.turns_for(dir)));
    let (singles, _) = ranked_loops(shape, costs, units);
    let loops_cost: f64 = singles.iter().map(|l| l.cost).sum();
    let synthesis = project_synthesis(
        shape.inputs,
        shape.freshness,
        &singles,
        &[],
        shape.capacity,
        &costs.terms,
    );
    let fits = |limit: f64| shape.fixed + loops_cost + synthesis.cost <= limit;
    if !shape.inputs.budget.is_none_or(fits) {
        return None;
    }
    let units = singles.len();
    Some(Work {
        budget: BudgetPlan {
            limit: shape.inputs.budget,
            binding: false,
            fixed: shape.fixed,
            synthesis_reserve: synthesis.cost,
            loops_cost,
            units,
            loops_affordable: units,
        },
        loops: children_first_loops(singles),
        mechanical: Vec::new(),
        candidates: Vec::new(),
        synthesis,
        resumed: false,
    })
}

/// The budget binds: fold, rank, buy. First a fifth of the money for the
/// synthesis; then what the loops bought with the rest project it to cost
/// (with its margin), and the loops again with what that frees.
fn bought_work(shape: &Shape<'_, '_>, costs: &LoopCosts<'_, '_>) -> Work {
    let inputs = shape.inputs;
    let limit = inputs.budget.unwrap_or_default();
    let spendable = (limit - shape.fixed).max(0.0);
    let (candidates, ranked) = ranked_loops(shape, costs, folded_units(shape));
    let unit_count = candidates.len();
    let average = candidates.iter().map(|l| l.cost).sum::<f64>() / unit_count.max(1) as f64;
    let stale: HashSet<&Path> = (shape.applied.order.iter()).map(PathBuf::as_path).collect();
    let mut reserve = spendable * SYNTHESIS_SHARE;
    let mut bought = buy(&candidates, &ranked, spendable - reserve, 1.0);
    let (loops, _, mechanical) = split_bought(&candidates, &bought, &stale);
    let (_, projected) = reserve_for(shape, &costs.terms, &loops, &mechanical);
    if projected < reserve {
        reserve = projected;
        bought = buy(&candidates, &ranked, spendable - reserve, 1.0);
    }
    let (loops, left, mechanical) = split_bought(&candidates, &bought, &stale);
    let (synthesis, _) = reserve_for(shape, &costs.terms, &loops, &mechanical);
    let for_loops = spendable - reserve;
    let loops_affordable = if average > 0.0 {
        ((for_loops / average).floor() as usize).min(unit_count)
    } else {
        unit_count
    };
    let loops_cost = loops.iter().map(|l| l.cost).sum();
    Work {
        loops,
        mechanical,
        candidates: left,
        budget: BudgetPlan {
            limit: inputs.budget,
            binding: true,
            fixed: shape.fixed,
            synthesis_reserve: reserve,
            loops_cost,
            units: unit_count,
            loops_affordable,
        },
        synthesis,
        resumed: false,
    }
}

/// The stale directories folded into units, then those this run may
/// deepen folded among themselves (their parents already have entries of
/// their own), each with its turns.
fn folded_units(shape: &Shape<'_, '_>) -> impl Iterator<Item = (Unit, u32)> {
    let inputs = shape.inputs;
    let tier_of = |dir: &Path| shape.tier_of(dir);
    let fold = |order: &[PathBuf]| {
        fold_units(order, inputs.target, inputs.children, inputs.stats, tier_of)
    };
    let mut units = fold(&shape.applied.order);
    units.extend(fold(&shape.deepen.order));
    units.into_iter().map(|unit| {
        let turns = unit_turns(shape.turns_for(&unit.root), unit.members.len());
        (unit, turns)
    })
}

/// The bought candidates as loops, the rest as candidates (by rank), and
/// the stale directories the rest leaves to the scan (leaf first).
fn split_bought(
    candidates: &[PlannedLoop],
    bought: &[usize],
    stale: &HashSet<&Path>,
) -> (Vec<PlannedLoop>, Vec<PlannedLoop>, Vec<PathBuf>) {
    let chosen: HashSet<usize> = bought.iter().copied().collect();
    let (mut loops, mut left) = (Vec::new(), Vec::new());
    for (i, planned) in candidates.iter().enumerate() {
        if chosen.contains(&i) {
            loops.push(planned.clone());
        } else {
            left.push(planned.clone());
        }
    }
    let mut mechanical: Vec<PathBuf> = (left.iter())
        .flat_map(|l| l.unit.dirs())
        .filter(|dir| stale.contains(dir.as_path()))
        .cloned()
        .collect();
    crate::ai::rules::discover::sort_leaf_first(&mut mechanical);
    left.sort_by_key(|l| l.rank);
    (loops, left, mechanical)
}

/// `loops` in an order where no loop comes before one below it.
fn children_first_loops(loops: Vec<PlannedLoop>) -> Vec<PlannedLoop> {
    let roots: Vec<PathBuf> = loops.iter().map(|l| l.unit.root.clone()).collect();
    let order = crate::ai::rules::plan::children_first(&roots);
    let mut by_root: HashMap<PathBuf, PlannedLoop> = loops
        .into_iter()
        .map(|l| (l.unit.root.clone(), l))
        .collect();
    order
        .iter()
        .filter_map(|root| by_root.remove(root))
        .collect()
}
