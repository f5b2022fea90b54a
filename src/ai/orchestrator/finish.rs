//! Closing a run that reached its end: the evaluation of the plan
//! (`plan_evaluation.json`, `meta.json`'s end), then the outcome the report
//! carries: flags, cost and coverage, what is left for a later run and the
//! investigation's status. It calls no model; the grounding that follows
//! is `ground.rs`'s.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::Phases;
use crate::ai::Outcome;
use crate::ai::batch_mode;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirOutcome, LoopEnd, UNIT_FIELD};
use crate::ai::passes::scheduler::LoopsDone;
use crate::ai::passes::synthesis::SynthesisOutcome;
use crate::ai::rules::decide::Decision;
use crate::ai::rules::mechanical::is_mechanical;
use crate::ai::rules::plan::{Utilization, plan_evaluation, utilization_line};
use crate::ai::rules::status;
use crate::cache::{Cache, EntryKind, PLAN_EVALUATION_FILE, now_iso};
use crate::progress::Progress;
use crate::report::{Coverage, Investigation, InvestigationSummary, coverage_line};

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
                .read_entry(EntryKind::Dir, &outcome.dir.to_string_lossy())
                .map(|entry| entry.get("confidence").cloned().unwrap_or(Value::Null)),
        })
        .collect();
    let evaluation = plan_evaluation(decision.plan.investigation_order, &records, &now_iso());
    match cache.write_json(PLAN_EVALUATION_FILE, &evaluation) {
        Ok(()) => progress.ai(&utilization_line(&evaluation)),
        Err(err) => progress.ai(&format!(
            "Warning: could not save {PLAN_EVALUATION_FILE}: {err}"
        )),
    }
    Ok(())
}

/// Phase 9: read the flags, report the cost and coverage, and fill the
/// outcome.
pub(super) fn finish(
    run: &Phases<'_>,
    all_dirs: &[PathBuf],
    decision: &Decision,
    cached_count: usize,
    synthesis: SynthesisOutcome,
    work: &LoopsDone,
) -> Outcome {
    let (cache, session) = (&run.ctx.cache, &run.ctx.session);
    let flags = cache.read_flags();
    let tracker = session.tracker();
    let totals = tracker.totals();
    let assumed = match (session.facts().known, session.is_batching()) {
        (true, false) => "",
        (true, true) => " (at batch prices)",
        (false, false) => " (at assumed prices)",
        (false, true) => " (at assumed batch prices)",
    };
    run.ctx.progress.ai(&format!(
        "Total tokens used: {}{assumed}",
        tracker.summary()
    ));
    run.ctx
        .progress
        .ai(&format!("Prompt {}", tracker.cache_summary()));
    if let Some(stats) = session.batch_stats() {
        run.ctx.progress.ai(&batch_mode::stats_line(&stats));
    }
    let entries: Vec<Value> = all_dirs
        .iter()
        .filter_map(|d| cache.read_entry(EntryKind::Dir, &d.to_string_lossy()))
        .collect();
    let coverage = coverage_of(&entries);
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
    let declined = work
        .outcomes
        .iter()
        .filter(|l| matches!(l.end, LoopEnd::Refused(_)))
        .count();
    let (status, note) = status::investigation_status(remaining, declined, synthesis.submitted);
    Outcome {
        brief: synthesis.brief,
        detailed: synthesis.detailed,
        flags,
        status: Investigation {
            status,
            note,
            error: None,
            summary: Some(InvestigationSummary {
                id: cache.id().to_string(),
                model: session.model().to_string(),
                directories_investigated: entries.len(),
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
            }),
            spent: None,
            refinement: None,
        },
        grounding: None,
        interrupted: false,
    }
}

/// How the directories with an entry got it.
pub(crate) fn coverage_of(entries: &[Value]) -> Coverage {
    let mut coverage = Coverage::default();
    for entry in entries {
        if is_mechanical(entry) {
            coverage.mechanical += 1;
        } else if entry.get(UNIT_FIELD).is_some_and(Value::is_string) {
            coverage.folded += 1;
        } else {
            coverage.investigated += 1;
        }
    }
    coverage
}
