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
use crate::ai::engine::session::Session;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirOutcome, is_declined};
use crate::ai::passes::scheduler::LoopsDone;
use crate::ai::passes::synthesis::SynthesisOutcome;
use crate::ai::rules::decide::{Decision, DecisionInputs, budget_to_read_everything};
use crate::ai::rules::plan::{Utilization, plan_evaluation, utilization_line};
use crate::ai::rules::status;
use crate::cache::{Cache, DirEntry, EntryKind, FlagRepair, PLAN_EVALUATION_FILE, now_iso};
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
    inputs: &DecisionInputs<'_>,
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
    say_spending(session, &run.ctx.progress);
    let coverage = coverage_of(entries.values());
    let remaining = remaining_work(cache, decision);
    say_coverage(&run.ctx.progress, coverage, remaining, work.cap_hit);
    let gaps = gaps(
        run,
        inputs,
        entries,
        decision,
        coverage,
        remaining,
        synthesis.submitted,
    );
    let (status, note) = with_repair(status::investigation_status(&gaps), checked.repair.as_ref());
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
            summary: Some(summary(run, coverage, cached_count, remaining, work)),
            spent: None,
            refinement: None,
        },
        grounding: None,
        directories: Vec::new(),
        interrupted: false,
    }
}

/// Say what the run's tokens were, at which prices, how the prompt cache
/// did and how the batches went. The money is the run's last line; the
/// tokens behind it are the full trace's.
fn say_spending(session: &Session, progress: &Progress) {
    let tracker = session.tracker();
    let assumed = match (session.model_facts().prices_known(), session.is_batching()) {
        (true, false) => "",
        (true, true) => " (at batch prices)",
        (false, false) => " (at assumed prices)",
        (false, true) => " (at assumed batch prices)",
    };
    progress.ai_detail(&format!(
        "Total tokens used: {}{assumed}",
        tracker.summary()
    ));
    progress.ai_detail(&format!("Prompt {}", tracker.cache_summary()));
    if let Some(stats) = session.batch_stats() {
        progress.ai(&batch_mode::stats_line(&stats));
    }
}

/// Say what the run left undone (the directories the spending cap left
/// for a later run) and how the directories were covered, when some were
/// folded into a unit or summarised from the scan.
fn say_coverage(progress: &Progress, coverage: Coverage, remaining: usize, cap_hit: bool) {
    if cap_hit {
        progress.ai(&format!(
            "The spending cap left {remaining} directories for a later run; run again to resume."
        ));
    }
    if coverage.folded + coverage.mechanical > 0 {
        progress.ai(&coverage_line(&coverage));
    }
}

/// Directories the decision gave a loop or the scan that still have no
/// summary (the API failed, the cap stopped it): the next run does them.
fn remaining_work(cache: &Cache, decision: &Decision) -> usize {
    let has_entry = |d: &PathBuf| cache.has_entry(EntryKind::Dir, &d.to_string_lossy());
    decision
        .work
        .loops
        .iter()
        .flat_map(|l| l.unit.dirs())
        .chain(&decision.work.mechanical)
        .filter(|d| !has_entry(d))
        .count()
}

/// What the investigation still lacks, which its status is judged by.
/// What the cache holds decides, not what this run did: an unchanged
/// rerun reuses the entries and says the same.
fn gaps(
    run: &Phases<'_>,
    inputs: &DecisionInputs<'_>,
    entries: &HashMap<PathBuf, DirEntry>,
    decision: &Decision,
    coverage: Coverage,
    remaining: usize,
    synthesis_by_model: bool,
) -> status::Gaps {
    status::Gaps {
        read_by_model: coverage.investigated + coverage.folded,
        not_fully_read: not_fully_read(run.ctx.target(), entries),
        remaining,
        declined: entries.values().filter(|e| is_declined(e)).count(),
        from_scan: coverage.mechanical,
        deepen: (coverage.mechanical > 0).then(|| status::Deepen {
            budget: budget_to_read_everything(inputs, &decision.plan),
            batch: decision.batch,
            tokens: run.ctx.session.plan_meter() == Meter::Tokens,
        }),
        synthesis_by_model,
    }
}

/// The status and its note after a repair of `flags.jsonl`: partial when
/// findings may be lost, and the note saying what was repaired.
fn with_repair(
    (mut status, mut note): (InvestigationStatus, Option<String>),
    repair: Option<&FlagRepair>,
) -> (InvestigationStatus, Option<String>) {
    if let Some(repair) = repair {
        if repair.unrecovered() > 0 {
            status = InvestigationStatus::Partial;
        }
        note = Some(match note {
            Some(note) => format!("{note}; {}", repair.line()),
            None => repair.line(),
        });
    }
    (status, note)
}

/// The run's summary in the report: what was read, cached and left, and
/// what it cost.
fn summary(
    run: &Phases<'_>,
    coverage: Coverage,
    cached_count: usize,
    remaining: usize,
    work: &LoopsDone,
) -> InvestigationSummary {
    let (cache, session) = (&run.ctx.cache, &run.ctx.session);
    let tracker = session.tracker();
    let totals = tracker.totals();
    InvestigationSummary {
        id: cache.id().to_string(),
        model: session.model().to_string(),
        // Read by a model: on a loop of their own or in a unit.
        directories_investigated: coverage.investigated + coverage.folded,
        directories_cached: cached_count,
        directories_remaining: remaining,
        coverage,
        // The run's dollar budget: the decision's limit is in the plan's
        // meter, which under a token budget counts tokens.
        budget_usd: run.config.investigation.budget,
        api_requests: totals.requests,
        tokens: totals.usage,
        cost_usd: tracker.cost(),
        cache_savings_usd: tracker.cache_savings(),
        cost_cap_hit: work.cap_hit,
        batch: session.batch_stats().map(|stats| stats.summary()),
        language: run.config.investigation.language.clone(),
        // Read back once this run's spending is recorded.
        all_runs: None,
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
