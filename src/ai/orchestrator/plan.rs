//! The planning phase and what it decided: run the planning pass when the
//! decision asks for it (reusing `plan.json` otherwise) and decide again
//! with the new plan; the tree and the spending the planner is told about
//! (shared with `--estimate`); and phase 5, saying what the plan and the
//! budget decided. The pass itself is [`crate::ai::passes::planning`]'s,
//! the decision the pure [`decide`].

use std::path::Path;

use super::{Phases, save_json};
use crate::ai::api::settings::Workload;
use crate::ai::engine::purse::Meter;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::one_call::converse;
use crate::ai::passes::planning::{
    PLANNING_CALL, PlanningInputs, Spending, planning_prompt, read_plan,
};
use crate::ai::passes::survey::{Survey, format_survey_block, format_survey_signals};
use crate::ai::rules::decide::{Decision, PassChoice, decide};
use crate::ai::rules::discover::relative;
use crate::ai::rules::fingerprint::Freshness;
use crate::ai::rules::map::{MAP_LINES, condensed_map};
use crate::ai::rules::plan::{Plan, plan_summary_line, unmatched_warning};
use crate::ai::rules::room::{Part, Room};
use crate::ai::rules::tree_view::{MAX_NODES, cut_lines, prompt_tree};
use crate::ai::situation::Situation;
use crate::cache::PLAN_FILE;
use crate::progress::Progress;
use crate::scan::ScanFilter;

/// Depth of the tree the planner sees.
pub(crate) const PLANNING_TREE_DEPTH: usize = 6;

pub(super) async fn plan_phase(
    run: &Phases<'_>,
    situation: &Situation,
    first_look: &Freshness,
    survey: Option<&Survey>,
    first: Decision,
) -> Result<Decision, InvestigationError> {
    let progress = &run.ctx.progress;
    match first.planning {
        PassChoice::NotNeeded => return Ok(first),
        PassChoice::Skip => {
            progress.ai("Planning skipped (small target).");
            return Ok(first);
        }
        PassChoice::Reuse => {
            progress.ai("Plan loaded from cache.");
            return Ok(first);
        }
        PassChoice::Run => {}
    }
    progress.ai("Planning pass...");
    let target_text = run.ctx.target().to_string_lossy();
    let survey_block = format_survey_block(survey);
    let room = Room::of(run.ctx.session.model_facts().model, Workload::Judgment);
    let tree_text = planning_tree(run.ctx.target(), &run.ctx.scope, situation, &room);
    let file_signals = format_survey_signals(&run.scan.survey_signals, room.bytes(Part::Signals));
    let cached_rel: Vec<String> = first_look
        .fresh
        .iter()
        .map(|d| relative(run.ctx.target(), d))
        .collect();
    let inputs = PlanningInputs {
        target: &target_text,
        survey_block: &survey_block,
        tree_text: &tree_text,
        file_signals: &file_signals,
        dir_count: situation.dirs.len(),
        cached_dirs: &cached_rel,
        spending: spending(&first),
    };
    let ctx = &run.ctx;
    let end = converse(ctx, PLANNING_CALL, planning_prompt(&inputs)?, false).await?;
    match read_plan(ctx, end) {
        Some(proposal) => {
            save_json(run, PLAN_FILE, &proposal);
            Ok(decide(
                &situation.inputs(),
                Some(&Plan::from_value(&proposal)),
            ))
        }
        None => {
            progress.ai("Planning failed, using defaults.");
            Ok(first)
        }
    }
}

/// The tree the planner sees: six levels of it, or, when that many
/// entries would not fit a tree view, the condensed map of its subtrees;
/// either within `room`'s share for a tree.
pub(crate) fn planning_tree(
    target: &Path,
    scope: &ScanFilter,
    situation: &Situation,
    room: &Room,
) -> String {
    let max_bytes = room.bytes(Part::Tree);
    let entries = situation.dirs.len() as u64 + situation.stats.of(target).subtree_files;
    if entries > MAX_NODES as u64 {
        let map = condensed_map(target, &situation.children, &situation.stats, MAP_LINES);
        cut_lines(map, max_bytes)
    } else {
        prompt_tree(target, scope, PLANNING_TREE_DEPTH, max_bytes)
    }
}

/// What the planner is told the budget buys, when it binds.
pub(crate) fn spending(decision: &Decision) -> Option<Spending> {
    decision.work.budget.binding.then(|| Spending {
        budget: decision.work.budget.limit.unwrap_or_default(),
        loops: decision.work.budget.loops_affordable,
        units: decision.work.budget.units,
    })
}

/// Phase 5: say what the plan and the budget (counted in `meter`)
/// decided: first what becomes of the `total` directories found (the count
/// `--estimate` gives).
pub(crate) fn report_decision(
    decision: &Decision,
    total: usize,
    meter: Meter,
    progress: &Progress,
) {
    progress.ai(&decision.directory_counts(total).line());
    let applied = &decision.applied;
    if let Some(warning) = unmatched_warning(applied) {
        progress.ai(&warning);
    }
    if let Some(line) = plan_summary_line(applied) {
        progress.ai(&line);
    }
    if !decision.plan.notes.is_empty() {
        progress.ai_detail(&format!("Plan notes: {}", decision.plan.notes));
    }
    if let Some(line) = budget_line(decision, meter) {
        progress.ai(&line);
    }
}

/// What a binding budget (counted in `meter`) decided, in one line.
pub(crate) fn budget_line(decision: &Decision, meter: Meter) -> Option<String> {
    let budget = &decision.work.budget;
    if !budget.binding {
        return None;
    }
    let name = match meter {
        Meter::Dollars => "Budget",
        Meter::Tokens => "Token budget",
    };
    Some(format!(
        "{name} {}: {} for {} units ({} folded into them), {} summarised from the scan, \
         {} kept for the synthesis",
        meter.show(budget.limit.unwrap_or_default()),
        count(decision.work.loops.len(), "loop", "loops"),
        budget.units,
        count(decision.folded(), "directory", "directories"),
        count(decision.work.mechanical.len(), "directory", "directories"),
        meter.show(budget.synthesis_reserve),
    ))
}

/// `1 loop`, `2 loops`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
