//! The investigation plan and everything deterministic about it: normalizing
//! the planner's proposal, applying it to the discovered directories, and the
//! report card (`plan_evaluation.json`) written after the dir loops.
//!
//! All pure: no I/O, no model. The planning pass (`planning.rs`) only proposes
//! a plan; [`proposal_document`] is what `plan.json` keeps of it (the
//! proposal as it came, like the original's), [`Plan::from_value`] reads it
//! and [`apply_plan`] decides what it means, capping turns on the way.
//!
//! One deliberate strengthening of the original: the final order always puts
//! a directory after every directory below it that is also being investigated
//! (see [`children_first`]). Under `priority-first` the original could run a
//! priority parent before its default-tier children, leaving the parent
//! without their summaries.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::ai::rules::listed::ListedDirs;
use crate::lenient;

/// Turns for a directory the plan does not mention.
pub(crate) const DEFAULT_TURNS: u32 = 10;
/// Turns for a shallow directory.
pub(crate) const SHALLOW_TURNS: u32 = 5;
/// No directory gets more turns than this.
pub(crate) const MAX_TURNS_CEILING: u32 = 25;
/// A priority entry without `suggested_turns` gets this many.
pub(crate) const PRIORITY_FALLBACK_TURNS: u32 = 15;
/// The planner's global budget is this many turns per directory.
pub(crate) const BASE_TURNS_PER_DIR: u32 = 10;

/// `leaf-first` or `priority-first`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum InvestigationOrder {
    #[default]
    LeafFirst,
    PriorityFirst,
}

impl InvestigationOrder {
    /// Anything but `priority-first` is the default, `leaf-first`.
    fn read<'de, D: serde::Deserializer<'de>>(d: D) -> Result<InvestigationOrder, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(order) if order == "priority-first" => InvestigationOrder::PriorityFirst,
            _ => InvestigationOrder::LeafFirst,
        })
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            InvestigationOrder::LeafFirst => "leaf-first",
            InvestigationOrder::PriorityFirst => "priority-first",
        }
    }
}

/// A directory the planner wants investigated deeply (one without a string
/// `path` is no entry at all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PriorityDir {
    pub path: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub reason: String,
    /// As [`normalize_turns`] reads it.
    #[serde(default = "fallback_turns", deserialize_with = "suggested_turns")]
    pub suggested_turns: u32,
}

fn fallback_turns() -> u32 {
    PRIORITY_FALLBACK_TURNS
}

fn suggested_turns<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(normalize_turns(Some(&Value::deserialize(d)?)))
}

/// A shallow or skipped directory (one without a string `path` is no
/// entry at all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TierDir {
    pub path: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub reason: String,
}

/// A plan, as `submit_plan` proposes it and `plan.json` stores it. Its
/// default is the plan used when planning is skipped or fails: nothing
/// overridden, leaf-first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct Plan {
    #[serde(default, deserialize_with = "lenient::items")]
    pub priority_dirs: Vec<PriorityDir>,
    #[serde(default, deserialize_with = "lenient::items")]
    pub shallow_dirs: Vec<TierDir>,
    #[serde(default, deserialize_with = "lenient::items")]
    pub skip_dirs: Vec<TierDir>,
    #[serde(default, deserialize_with = "InvestigationOrder::read")]
    pub investigation_order: InvestigationOrder,
    #[serde(default, deserialize_with = "lenient::text")]
    pub notes: String,
}

impl Plan {
    /// Normalize a `submit_plan` input or a loaded `plan.json`: entries
    /// without a string path are dropped, `suggested_turns` is read as
    /// [`normalize_turns`] says (not capped: [`apply_plan`] caps it), and any
    /// other missing field takes its default.
    pub(crate) fn from_value(value: &Value) -> Plan {
        Plan::deserialize(value).unwrap_or_default()
    }

    #[cfg(test)]
    pub(crate) fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// What `plan.json` keeps of a `submit_plan` input: the original's five
/// keys with the planner's values as they came (so a `suggested_turns` of 40
/// stays 40; the cap of 25 is applied by [`apply_plan`] and shows in
/// `plan_evaluation.json`), and the original's defaults for missing ones.
pub(crate) fn proposal_document(input: &Value) -> Value {
    let given = |key: &str| input.get(key).filter(|value| !value.is_null()).cloned();
    json!({
        "priority_dirs": given("priority_dirs").unwrap_or_else(|| json!([])),
        "shallow_dirs": given("shallow_dirs").unwrap_or_else(|| json!([])),
        "skip_dirs": given("skip_dirs").unwrap_or_else(|| json!([])),
        "investigation_order": given("investigation_order")
            .unwrap_or_else(|| json!(InvestigationOrder::LeafFirst.as_str())),
        "notes": given("notes").unwrap_or_else(|| json!("")),
    })
}

/// A planner's `suggested_turns`, made usable: missing → 15; numbers and
/// numeric strings are rounded, and at least 1; anything else → 15. The
/// ceiling of 25 is not applied here but when the plan is applied.
pub(crate) fn normalize_turns(raw: Option<&Value>) -> u32 {
    let number = match raw {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match number {
        // `as` saturates at u32::MAX.
        Some(n) if n.is_finite() => n.round().max(1.0) as u32,
        _ => PRIORITY_FALLBACK_TURNS,
    }
}

/// Which tier a directory ended up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Tier {
    Priority,
    Default,
    Shallow,
}

impl Tier {
    /// The `planned_tier` value in `plan_evaluation.json`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Tier::Priority => "priority",
            Tier::Default => "default",
            Tier::Shallow => "shallow",
        }
    }
}

/// A plan applied to the directories of this run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct AppliedPlan {
    /// The directories to investigate, in order.
    pub order: Vec<PathBuf>,
    /// Turns per directory in `order`.
    pub turns: HashMap<PathBuf, u32>,
    /// The tier of each directory in `order`.
    pub tiers: HashMap<PathBuf, Tier>,
    /// Directories the plan skipped (among those to investigate).
    pub skipped: Vec<PathBuf>,
    /// Paths the plan named that match no discovered directory, in plan order.
    pub unmatched: Vec<String>,
}

impl AppliedPlan {
    /// Turns for `dir` (the default when the plan said nothing).
    pub(crate) fn turns_for(&self, dir: &Path) -> u32 {
        self.turns.get(dir).copied().unwrap_or(DEFAULT_TURNS)
    }

    /// Tier of `dir`.
    pub(crate) fn tier_of(&self, dir: &Path) -> Tier {
        self.tiers.get(dir).copied().unwrap_or(Tier::Default)
    }

    /// Count of directories in `order` in `tier`.
    pub(crate) fn count(&self, tier: Tier) -> usize {
        self.order
            .iter()
            .filter(|d| self.tier_of(d) == tier)
            .count()
    }
}

/// Apply `plan` to `to_investigate` (a leaf-first subset of `all_dirs`, both
/// absolute under `target`).
///
/// - skip dirs are removed;
/// - priority dirs get min(suggested_turns, 25), shallow dirs 5, others 10;
/// - a directory named in both priority and shallow is shallow; skip wins
///   over both;
/// - the target root matches both `.` and its own name;
/// - paths matching no discovered directory are returned in `unmatched`;
/// - `priority-first` orders the priority band, then the default band, then
///   the shallow band, each keeping leaf-first order; both orders then put
///   every directory after the directories below it ([`children_first`]).
pub(crate) fn apply_plan(
    all_dirs: &[PathBuf],
    to_investigate: &[PathBuf],
    plan: &Plan,
    target: &Path,
) -> AppliedPlan {
    let named = PlanNames::resolve(all_dirs, plan, target);
    let (remaining, skipped): (Vec<PathBuf>, Vec<PathBuf>) = to_investigate
        .iter()
        .cloned()
        .partition(|dir| !named.skip.contains(dir));
    let tier = |dir: &PathBuf| named.tier(dir);
    let banded = match plan.investigation_order {
        InvestigationOrder::LeafFirst => remaining,
        InvestigationOrder::PriorityFirst => [Tier::Priority, Tier::Default, Tier::Shallow]
            .into_iter()
            .flat_map(|band| remaining.iter().filter(move |d| tier(d) == band).cloned())
            .collect(),
    };
    let order = children_first(&banded);
    let turns = order
        .iter()
        .map(|dir| {
            (
                dir.clone(),
                named.turns.get(dir).copied().unwrap_or(DEFAULT_TURNS),
            )
        })
        .collect();
    let tiers = order.iter().map(|dir| (dir.clone(), tier(dir))).collect();
    AppliedPlan {
        order,
        turns,
        tiers,
        skipped,
        unmatched: named.unmatched,
    }
}

/// The tier the plan names each directory with (priority or shallow;
/// shallow wins when a directory is named in both, as in [`apply_plan`]).
/// Directories the plan does not name are absent.
pub(crate) fn named_tiers(
    all_dirs: &[PathBuf],
    plan: &Plan,
    target: &Path,
) -> HashMap<PathBuf, Tier> {
    PlanNames::resolve(all_dirs, plan, target).tiers
}

/// The directories a plan names, resolved to discovered directories.
struct PlanNames {
    /// The directories to skip.
    skip: HashSet<PathBuf>,
    /// The tier of each priority or shallow directory (shallow when named
    /// in both).
    tiers: HashMap<PathBuf, Tier>,
    /// The turns of each priority (its suggestion, clamped) or shallow
    /// directory.
    turns: HashMap<PathBuf, u32>,
    /// The paths that match no discovered directory, in the plan's order:
    /// skip, priority, shallow.
    unmatched: Vec<String>,
}

impl PlanNames {
    fn resolve(all_dirs: &[PathBuf], plan: &Plan, target: &Path) -> PlanNames {
        let lookup = relative_lookup(all_dirs, target);
        let mut unmatched = Vec::new();
        let mut resolve = |rel: &str| -> Option<PathBuf> {
            let found = lookup.get(rel.trim_end_matches('/')).cloned();
            if found.is_none() {
                unmatched.push(rel.to_string());
            }
            found
        };

        let mut tiers: HashMap<PathBuf, Tier> = HashMap::new();
        let mut turns: HashMap<PathBuf, u32> = HashMap::new();
        let skip: HashSet<PathBuf> = plan
            .skip_dirs
            .iter()
            .filter_map(|entry| resolve(&entry.path))
            .collect();
        for entry in &plan.priority_dirs {
            if let Some(dir) = resolve(&entry.path) {
                turns.insert(
                    dir.clone(),
                    entry.suggested_turns.clamp(1, MAX_TURNS_CEILING),
                );
                tiers.insert(dir, Tier::Priority);
            }
        }
        for entry in &plan.shallow_dirs {
            if let Some(dir) = resolve(&entry.path) {
                turns.insert(dir.clone(), SHALLOW_TURNS);
                tiers.insert(dir, Tier::Shallow);
            }
        }
        PlanNames {
            skip,
            tiers,
            turns,
            unmatched,
        }
    }

    /// The tier of `dir`: the one the plan names, or the default.
    fn tier(&self, dir: &Path) -> Tier {
        self.tiers.get(dir).copied().unwrap_or(Tier::Default)
    }
}

/// Relative path → absolute directory, with the root under both `.` and its
/// own name (the planner sees the name in the rendered tree).
fn relative_lookup(all_dirs: &[PathBuf], target: &Path) -> HashMap<String, PathBuf> {
    let mut lookup = HashMap::new();
    for dir in all_dirs {
        match dir.strip_prefix(target) {
            Ok(rel) if rel.as_os_str().is_empty() => {
                lookup.insert(".".to_string(), dir.clone());
                if let Some(name) = dir.file_name() {
                    lookup
                        .entry(name.to_string_lossy().into_owned())
                        .or_insert_with(|| dir.clone());
                }
            }
            Ok(rel) => {
                lookup.insert(rel.to_string_lossy().into_owned(), dir.clone());
            }
            Err(_) => {}
        }
    }
    lookup
}

/// Reorder `preferred` so that no directory comes before one of its
/// descendants in the list, otherwise keeping `preferred`'s order: at each
/// step, take the earliest directory whose listed descendants are all done.
/// This is the order a dependency-graph scheduler produces with one worker.
///
/// A directory waits only for the listed directories whose nearest listed
/// ancestor it is: each of those is done only after everything listed
/// below it, so the order is the same as waiting for every descendant, and
/// the work grows with the list rather than with the list times its depth
/// (a tree 200 levels deep made the plan the slowest part of a run).
pub(crate) fn children_first(preferred: &[PathBuf]) -> Vec<PathBuf> {
    let listed = ListedDirs::new(preferred);
    let parent: Vec<Option<usize>> = preferred
        .iter()
        .map(|dir| listed.ancestors(dir).next())
        .collect();
    // How many listed children (nearest listed descendants) each directory
    // still waits for.
    let mut waiting = vec![0usize; preferred.len()];
    for &p in parent.iter().flatten() {
        waiting[p] += 1;
    }
    let mut ready: BTreeSet<usize> = (0..preferred.len()).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(preferred.len());
    while let Some(i) = ready.pop_first() {
        order.push(preferred[i].clone());
        if let Some(p) = parent[i] {
            waiting[p] -= 1;
            if waiting[p] == 0 {
                ready.insert(p);
            }
        }
    }
    order
}

/// The plan summary line, when there is something to say.
pub(crate) fn plan_summary_line(applied: &AppliedPlan) -> Option<String> {
    let priority = applied.count(Tier::Priority);
    let skipped = applied.skipped.len();
    if priority == 0 && skipped == 0 {
        return None;
    }
    Some(format!(
        "Plan: {priority} priority, {skipped} skipped, {} default/shallow",
        applied.order.len() - priority
    ))
}

/// The warning for plan paths that matched nothing (one line), if any.
pub(crate) fn unmatched_warning(applied: &AppliedPlan) -> Option<String> {
    (!applied.unmatched.is_empty()).then(|| {
        format!(
            "Warning: plan referenced unknown dirs: {}",
            applied.unmatched.join(", ")
        )
    })
}

/// The turns of one dir loop: what it was given and what it took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TurnUse {
    pub allocated: u32,
    /// Turns borrowed from the shared pool beyond the allocation.
    pub borrowed: u32,
    /// Model calls made.
    pub used: u32,
}

impl TurnUse {
    /// Turns given and not taken, which go back to the shared pool.
    pub(crate) fn unused(self) -> u32 {
        (self.allocated + self.borrowed).saturating_sub(self.used)
    }
}

/// How one dir loop used its turns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Utilization {
    /// Relative path as shown (the target's name for the root).
    pub dir: String,
    pub tier: Tier,
    pub turns: TurnUse,
    /// The agent's self-rating, when it gave one.
    pub completeness: Option<f64>,
    /// The dir entry's `confidence`: `None` when there is no entry,
    /// `Some(None)` when the entry has none.
    pub confidence: Option<Option<f64>>,
}

/// Round to 2 decimal places as Python's `round(x, 2)` does (exact value,
/// ties to even).
pub(crate) fn round2(x: f64) -> f64 {
    format!("{x:.2}").parse().unwrap_or(x)
}

/// `used / allocated` rounded to 2 places, written as the integer 0 when
/// nothing was allocated (the original writes `0`, not `0.0`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ratio(Option<f64>);

impl Ratio {
    fn of(used: u32, allocated: u32) -> Ratio {
        Ratio((allocated > 0).then(|| round2(f64::from(used) / f64::from(allocated))))
    }
}

impl Serialize for Ratio {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(ratio) => s.serialize_f64(ratio),
            None => s.serialize_u8(0),
        }
    }
}

/// The `plan_evaluation.json` document: the original's schema and rounding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct PlanEvaluation {
    pub plan_order: &'static str,
    pub total_dirs_investigated: usize,
    pub total_turns_allocated: u32,
    pub total_turns_used: u32,
    pub overall_utilization: Ratio,
    pub per_directory: Vec<DirUtilization>,
    pub evaluated_at: String,
}

/// One directory's line of [`PlanEvaluation`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct DirUtilization {
    pub dir: String,
    pub planned_tier: &'static str,
    pub turns_allocated: u32,
    pub turns_borrowed: u32,
    pub turns_used: u32,
    pub utilization: Ratio,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completeness: Option<f64>,
    /// Absent without an entry, `null` for an entry without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Option<f64>>,
}

/// The plan's evaluation over the loops' `records`.
pub(crate) fn plan_evaluation(
    order: InvestigationOrder,
    records: &[Utilization],
    evaluated_at: &str,
) -> PlanEvaluation {
    let total_allocated: u32 = records.iter().map(|r| r.turns.allocated).sum();
    let total_used: u32 = records.iter().map(|r| r.turns.used).sum();
    PlanEvaluation {
        plan_order: order.as_str(),
        total_dirs_investigated: records.len(),
        total_turns_allocated: total_allocated,
        total_turns_used: total_used,
        overall_utilization: Ratio::of(total_used, total_allocated),
        per_directory: records
            .iter()
            .map(|record| DirUtilization {
                dir: record.dir.clone(),
                planned_tier: record.tier.as_str(),
                turns_allocated: record.turns.allocated,
                turns_borrowed: record.turns.borrowed,
                turns_used: record.turns.used,
                utilization: Ratio::of(record.turns.used, record.turns.allocated),
                completeness: record.completeness,
                confidence: record.confidence,
            })
            .collect(),
        evaluated_at: evaluated_at.to_string(),
    }
}

/// `Plan evaluation: 87/120 turns used (72% utilization)`.
pub(crate) fn utilization_line(evaluation: &PlanEvaluation) -> String {
    let overall = evaluation.overall_utilization.0.unwrap_or(0.0);
    format!(
        "Plan evaluation: {}/{} turns used ({:.0}% utilization)",
        evaluation.total_turns_used,
        evaluation.total_turns_allocated,
        overall * 100.0
    )
}

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
