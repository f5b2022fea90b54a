//! Closing a run that reached its end: the evaluation of the plan
//! (`plan_evaluation.json`, `meta.json`'s end), then the outcome the report
//! carries: flags (`flags.jsonl` checked, and repaired from the flags'
//! records when damaged), cost and coverage, what is left for a later run
//! and the investigation's status. It calls no model; the grounding that follows
//! is `ground.rs`'s.

use crate::ai::engine::purse::Meter;
use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::{Map, json};

use super::Phases;
use crate::ai::Outcome;
use crate::ai::batch_mode;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirOutcome, is_declined};
use crate::ai::passes::scheduler::LoopsDone;
use crate::ai::passes::synthesis::SynthesisOutcome;
use crate::ai::rules::decide::{Decision, DecisionInputs, budget_to_read_everything};
use crate::ai::rules::plan::{Utilization, plan_evaluation, utilization_line};
use crate::ai::rules::status;
use crate::cache::{Cache, DirEntry, EntryKind, PLAN_EVALUATION_FILE, now_iso};
use crate::progress::Progress;
use crate::report::{
    Coverage, DirCoverage, Investigation, InvestigationStatus, InvestigationSummary, coverage_line,
};

/// Phase 8: close `meta.json` and write `plan_evaluation.json`.
pub(super) fn evaluate(
    cache: &Cache,
    decision: &Decision,
    outcomes: &[DirOutcome],
    cached_count: usize,
    progress: &Progress,
) -> Result<(), InvestigationError> {
    let mut fields = Map::new();
    fields.insert(
        "directories_investigated".into(),
        json!(outcomes.len() + cached_count),
    );
    fields.insert("end_time".into(), json!(now_iso()));
    cache.update_meta(fields)?;
    if outcomes.is_empty() {
        // Nothing ran: the last run's evaluation still describes the cache.
        return Ok(());
    }

    let records: Vec<Utilization> = outcomes
        .iter()
        .map(|outcome| Utilization {
            dir: outcome.shown.clone(),
            tier: decision.applied.tier_of(&outcome.dir),
            turns: outcome.turns,
            completeness: outcome.completeness,
            confidence: cache
                .entry::<DirEntry>(&outcome.dir.to_string_lossy())
                .map(|entry| entry.confidence),
        })
        .collect();
    let evaluation = plan_evaluation(decision.plan.investigation_order, &records, &now_iso());
    match cache.write_json(PLAN_EVALUATION_FILE, &evaluation) {
        Ok(()) => progress.ai_detail(&utilization_line(&evaluation)),
        Err(err) => progress.ai(&format!(
            "Warning: could not save {PLAN_EVALUATION_FILE}: {err}"
        )),
    }
    Ok(())
}

/// Phase 9: read the flags, report the cost and coverage (of `entries`,
/// the directories' entries in scope), and fill the outcome.
pub(super) fn finish(
    run: &Phases<'_>,
    facts: &DecisionInputs<'_>,
    entries: &HashMap<PathBuf, DirEntry>,
    decision: &Decision,
    cached_count: usize,
    synthesis: SynthesisOutcome,
    work: &LoopsDone,
) -> Outcome {
    let (cache, session) = (&run.ctx.cache, &run.ctx.session);
    // A damaged flags.jsonl is repaired from the flags' records; the
    // report says so, and says so as partial if findings may be lost.
    let checked = cache.read_flags_checked();
    if let Some(repair) = &checked.repair {
        run.ctx.progress.ai(&format!("Warning: {}.", repair.line()));
    }
    let flags = checked.flags;
    let tracker = session.tracker();
    let totals = tracker.totals();
    let assumed = match (session.model_facts().prices_known(), session.is_batching()) {
        (true, false) => "",
        (true, true) => " (at batch prices)",
        (false, false) => " (at assumed prices)",
        (false, true) => " (at assumed batch prices)",
    };
    // The money is the run's last line; the tokens behind it are the
    // full trace's.
    run.ctx.progress.ai_detail(&format!(
        "Total tokens used: {}{assumed}",
        tracker.summary()
    ));
    run.ctx
        .progress
        .ai_detail(&format!("Prompt {}", tracker.cache_summary()));
    if let Some(stats) = session.batch_stats() {
        run.ctx.progress.ai(&batch_mode::stats_line(&stats));
    }
    let coverage = coverage_of(entries.values());
    let has_entry = |d: &PathBuf| cache.has_entry(EntryKind::Dir, &d.to_string_lossy());
    // Work still without a summary (the API failed, the cap stopped it) is
    // done by the next run.
    let remaining = decision
        .work
        .loops
        .iter()
        .flat_map(|l| l.unit.dirs())
        .chain(&decision.work.mechanical)
        .filter(|d| !has_entry(d))
        .count();
    if work.cap_hit {
        run.ctx.progress.ai(&format!(
            "The spending cap left {remaining} directories for a later run; run again to resume."
        ));
    }
    if coverage.folded + coverage.mechanical > 0 {
        run.ctx.progress.ai(&coverage_line(&coverage));
    }
    // What the cache holds decides, not what this run did: an unchanged
    // rerun reuses the entries and says the same.
    let gaps = status::Gaps {
        read_by_model: coverage.investigated + coverage.folded,
        not_fully_read: not_fully_read(run.ctx.target(), entries),
        remaining,
        declined: entries.values().filter(|e| is_declined(e)).count(),
        from_scan: coverage.mechanical,
        deepen: (coverage.mechanical > 0).then(|| status::Deepen {
            budget: budget_to_read_everything(facts, &decision.plan),
            batch: decision.batch,
            tokens: run.ctx.session.plan_meter() == Meter::Tokens,
        }),
        synthesis_by_model: synthesis.submitted,
    };
    let (mut status, mut note) = status::investigation_status(&gaps);
    if let Some(repair) = &checked.repair {
        if repair.unrecovered() > 0 {
            status = InvestigationStatus::Partial;
        }
        note = Some(match note {
            Some(note) => format!("{note}; {}", repair.line()),
            None => repair.line(),
        });
    }
    Outcome {
        brief: synthesis.brief,
        detailed: synthesis.detailed,
        sections: synthesis.sections,
        flags,
        status: Investigation {
            status,
            note,
            error: None,
            notes: session.notes().lines(),
            summary: Some(InvestigationSummary {
                id: cache.id().to_string(),
                model: session.model().to_string(),
                // Read by a model: on a loop of their own or in a unit.
                directories_investigated: coverage.investigated + coverage.folded,
                directories_cached: cached_count,
                directories_remaining: remaining,
                coverage,
                budget_usd: decision.work.budget.limit,
                api_requests: totals.requests,
                tokens: totals.usage,
                cost_usd: tracker.cost(),
                cache_savings_usd: tracker.cache_savings(),
                cost_cap_hit: work.cap_hit,
                batch: session.batch_stats().map(|stats| stats.summary()),
                language: run.config.investigation.language.clone(),
                // Read back once this run's spending is recorded.
                all_runs: None,
            }),
            spent: None,
            refinement: None,
        },
        grounding: None,
        directories: Vec::new(),
        interrupted: false,
    }
}

/// The directories a model read whose loop stopped before it was done,
/// relative to `target` in tree order, each with why: the entries with a
/// `partial_reason` that are neither declined (counted apart) nor built
/// from the scan.
fn not_fully_read(
    target: &std::path::Path,
    entries: &HashMap<PathBuf, DirEntry>,
) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = entries
        .iter()
        .filter(|(_, entry)| !is_declined(entry) && !entry.mechanical)
        .filter_map(|(dir, entry)| {
            let why = entry.partial_reason.as_deref()?;
            Some((
                crate::ai::rules::discover::relative(target, dir),
                crate::text::escape_line(why).into_owned(),
            ))
        })
        .collect();
    found.sort_by(|a, b| crate::report::tree_order(&a.0, &b.0));
    found
}

/// How the directories with an entry got it.
pub(crate) fn coverage_of<'a>(entries: impl IntoIterator<Item = &'a DirEntry>) -> Coverage {
    let mut coverage = Coverage::default();
    for entry in entries {
        match coverage_of_entry(entry) {
            DirCoverage::Mechanical => coverage.mechanical += 1,
            DirCoverage::Folded => coverage.folded += 1,
            DirCoverage::Investigated | DirCoverage::None => coverage.investigated += 1,
        }
    }
    coverage
}

/// How the directory of `entry` got it: built from the scan, in the loop
/// of a unit above it, or by a loop of its own.
pub(crate) fn coverage_of_entry(entry: &DirEntry) -> DirCoverage {
    if entry.mechanical {
        DirCoverage::Mechanical
    } else if entry.unit.is_some() {
        DirCoverage::Folded
    } else {
        DirCoverage::Investigated
    }
}
