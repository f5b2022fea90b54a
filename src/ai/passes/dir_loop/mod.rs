//! The dir loop: one isolated agent conversation per assignment (a
//! directory, or an investigation unit: a directory with the small
//! directories folded into it), and the pure helpers that prepare it and
//! salvage its work.
//!
//! A unit's agent writes one dir entry per directory it covers with
//! `write_cache`; `submit_report` is refused once while any is missing
//! (the reply names them), and a directory still without one when the loop
//! ends gets a partial entry from its cached file summaries, or the stub.
//! The cache thus holds one dir entry per directory, whoever wrote it.
//!
//! [`investigate_dir`] is a self-contained async unit: it takes the run's
//! shared, read-only context ([`DirShared`], meant to sit in an `Arc`) and one
//! [`DirJob`], and returns a [`DirOutcome`]. It keeps its own context-size
//! tracking, writes its own cache entries, and touches no global state, so a
//! scheduler can run several at once; children must simply finish before
//! their parents start, because a parent's prompt embeds their summaries.
//!
//! The loop runs on the engine's driver under its policy: its turns, more
//! borrowed from the run's pool, the countdown note of its last turns, and
//! its context budget, checked *first* each turn: once the latest call's
//! context (input + cache reads + cache writes) passes the model's budget
//! ([`context_budget`]), the loop stops and flushes a partial dir entry from
//! the files it already cached. A full context window reported by the API
//! (the `model_context_window_exceeded` stop reason, or its 400 "prompt is
//! too long") ends the loop the same way. A refusal ends it too, with a
//! partial entry and an `info` flag saying the model declined; the run goes
//! on with the next directory.
//!
//! This file holds the loop itself, its types and [`investigate_dir`]
//! around it; what it is shown before its first turn is `briefing.rs` and
//! `task.rs`, the notes it adds mid-conversation `notes.rs`, and the dir
//! entries it writes, stamps and salvages `entries.rs`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use crate::ai::api::ToolDefinition;
use crate::ai::api::cost::LoopUsage;
use crate::ai::api::settings::context_budget;
use crate::ai::engine::agent::{Agent, Printer, SubmitCheck};
use crate::ai::engine::context::RunContext;
use crate::ai::engine::conversation::{CallEnd, Closing, Policy, converse};
use crate::ai::engine::pool::TurnPool;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::record_refusal;
use crate::ai::prompts;
use crate::ai::rules::discover::{ChildIndex, display_name, relative};
use crate::ai::rules::fingerprint::fingerprint;
use crate::ai::rules::plan::TurnUse;
use crate::ai::tools::notes::flag_lines;
use crate::ai::tools::{ToolContext, Toolbox};
use crate::cache::now_iso;
use crate::cache::{DirStamp, EntryKind};
use crate::grounding::{LoopCheck, Scope};
use crate::lenient;

mod briefing;
mod entries;
mod job;
mod notes;
mod task;

pub use task::UNIT_FRAME;

pub(crate) use briefing::{
    dir_context_in, dir_task, frame_child_summaries, named_child_entries, render_child_summaries,
};
pub(crate) use entries::{
    PartialCause, direct_file_entries, flush_partial_dir_entry, is_declined, report_entry,
    visible_child_count,
};
use entries::{forget_stale_entries, missing_entries, stamp_entry};
pub(crate) use job::{DirJob, DirOutcome, LoopEnd, LoopLengths, PRIOR_LOOP_TURNS, RunningSpend};
pub(crate) use notes::{NEAR_END_TURNS, missing_entries_message, turns_left_note};
pub(crate) use task::{TaskRoom, compose_dir_task, dir_system_prompt, outside_children};

/// What every dir loop of a run shares. Read-only once built, apart from the
/// turn pool's counters.
pub(crate) struct DirShared {
    /// The run's session, cache, progress and scope.
    pub run: Arc<RunContext>,
    /// The discovered subdirectories of each directory.
    pub children: ChildIndex,
    /// The dir system prompt, the same for every loop of the run
    /// ([`dir_system_prompt`]).
    pub system: String,
    /// The dir toolbox after the survey's filtering.
    pub dir_tools: Vec<ToolDefinition>,
    /// Turns loops may borrow beyond their allocation.
    pub pool: TurnPool,
    /// The tree as the scan saw it, for checking the paths a loop cites.
    pub(crate) grounding: Arc<Scope>,
    /// The directories whose own files changed since their cached summary
    /// (a directory stale only because of a child keeps its file
    /// summaries).
    pub changed: HashSet<PathBuf>,
    /// What each running loop has spent so far.
    pub spend: RunningSpend,
    /// How many requests the loops that ended took: what a loop above them
    /// expects of its later turns.
    pub lengths: LoopLengths,
    /// The `--language` the summaries are written in, stamped on each dir
    /// entry so a run in another language knows to write it again.
    pub(crate) language: Option<String>,
}

/// Investigate `job`: forget its directories' stale summaries, run the
/// loop, write the top directory's entry from its report when the agent did
/// not write one itself, salvage an entry for every directory still without
/// one, and stamp each entry with the fingerprint its directory had when the
/// loop started (a file edited mid-loop then shows as a change next run).
/// Folded directories' entries also name their unit.
pub(crate) async fn investigate_dir(
    shared: &DirShared,
    job: &DirJob,
) -> Result<DirOutcome, InvestigationError> {
    let fingerprints: Vec<(PathBuf, String)> = job
        .dirs()
        .map(|dir| (dir.clone(), fingerprint(dir, Some(&shared.run.scope))))
        .collect();
    let unit = relative(shared.run.target(), &job.dir);
    let stamps = stamps(shared, job, &unit, fingerprints);
    forget_stale_entries(shared, job)?;
    let outcome = run_dir_loop(shared, job, &stamps).await?;
    shared.pool.give_back(outcome.turns.unused());
    write_report_entry(shared, job, &outcome, &stamps[0].1);
    // A loop that ended on the API error leaves its directories without a
    // summary, as before: the next run investigates them again. One the
    // budget could not start leaves them to the scan's summaries.
    if !matches!(outcome.end, LoopEnd::ApiError(_) | LoopEnd::Unaffordable) {
        for member in &job.members {
            flush_partial_dir_entry(
                &shared.run.cache,
                shared.run.target(),
                member,
                PartialCause::UnitMember,
            )?;
        }
    }
    for (dir, stamp) in &stamps {
        stamp_entry(&shared.run.cache, &dir.to_string_lossy(), stamp)?;
    }
    Ok(outcome)
}

/// The stamp every dir entry of the assignment carries: the fingerprint
/// its directory had when the loop started, the `--language`, and, for a
/// folded directory, its `unit` (the top directory, relative). The top
/// directory's comes first.
fn stamps(
    shared: &DirShared,
    job: &DirJob,
    unit: &str,
    fingerprints: Vec<(PathBuf, String)>,
) -> Vec<(PathBuf, DirStamp)> {
    fingerprints
        .into_iter()
        .map(|(dir, fingerprint)| {
            let stamp = DirStamp {
                fingerprint,
                language: shared.language.clone(),
                unit: (dir != job.dir).then(|| unit.to_string()),
            };
            (dir, stamp)
        })
        .collect()
}

/// The top directory's entry from the loop's report, when the agent did
/// not write one itself, stamped in the same atomic write: an entry a
/// killed run left without its fingerprint would be investigated again
/// next time. Failing to write it is only a warning.
fn write_report_entry(shared: &DirShared, job: &DirJob, outcome: &DirOutcome, stamp: &DirStamp) {
    let path = job.dir.to_string_lossy();
    let Some(summary) = outcome.summary.as_deref().filter(|s| !s.is_empty()) else {
        return;
    };
    if shared.run.cache.has_entry(EntryKind::Dir, &path) {
        return;
    }
    let mut entry = report_entry(
        shared.run.target(),
        &job.dir,
        summary,
        outcome.completeness,
        visible_child_count(&job.dir),
        &now_iso(),
    );
    stamp.apply(&mut entry);
    if let Err(err) = shared.run.cache.write_typed(&path, &entry) {
        shared.run.progress.ai_dir(
            &outcome.shown,
            &format!("Warning: could not cache the directory summary: {err}"),
        );
    }
}

/// The loop itself, on the engine's driver: the loop's policy, then what
/// its end leaves. `stamps` go into every dir entry its agent writes.
async fn run_dir_loop(
    shared: &DirShared,
    job: &DirJob,
    stamps: &[(PathBuf, DirStamp)],
) -> Result<DirOutcome, InvestigationError> {
    let target = shared.run.target();
    let shown = display_name(target, &job.dir);
    let printer = Printer::Dir {
        progress: shared.run.progress.clone(),
        dir: shown.clone(),
    };
    // Paths the agent cites in flags and its report are checked as it goes
    // (see `crate::grounding::feedback`), against every directory of the
    // assignment.
    let unit_dirs: Vec<String> = job.dirs().map(|dir| relative(target, dir)).collect();
    let check = Arc::new(LoopCheck::new(shared.grounding.clone(), &unit_dirs));
    let mut agent = Agent::new(
        Toolbox::Dir,
        shared.system.clone(),
        &dir_task(shared, job)?,
        shared.dir_tools.clone(),
        prompts::nudge::DIR,
        printer.clone(),
    )
    .sharing_prefix()
    .with_review(check.clone());
    // Its tools work in the assignment: relative paths resolve against its
    // directory, and the entries they write for the unit carry `stamps`.
    let tools = ToolContext {
        home: Some(&job.dir),
        unit: &job.members,
        stamps,
        ..shared.run.tools(&shown)
    };
    let record_spend = |usage: &LoopUsage| shared.spend.set(&job.dir, usage.cost);
    let ended = shared.lengths.expected_below(&job.dir);
    let policy = loop_policy(shared, job, &record_spend, &ended);
    let conversed = converse(&mut agent, &shared.run.session, &tools, policy).await?;
    shared.lengths.ended(&job.dir, conversed.usage.turns);
    let (end, submitted) = loop_end(shared, job, conversed.end, conversed.usage.turns);
    let (summary, completeness) = settle(shared, job, &check, &end, submitted)?;
    if end == LoopEnd::TurnLimit {
        printer.line(&format!("Warning: max turns reached for {shown}"));
    }
    record_held_flags(shared, &check, &printer);
    Ok(DirOutcome {
        leads: check.take_leads(),
        dir: job.dir.clone(),
        shown,
        summary,
        completeness,
        turns: TurnUse {
            allocated: job.max_turns,
            borrowed: conversed.borrowed,
            used: conversed.usage.turns,
        },
        usage: conversed.usage,
        end,
    })
}

/// A dir loop's policy: its turns, more borrowed from the run's pool, the
/// countdown of its last turns, the model's context budget, a unit's check
/// of its answer, its spend told after every turn, and the lengths of the
/// loops below it (`ended`), what its later turns are expected from.
fn loop_policy<'a>(
    shared: &'a DirShared,
    job: &DirJob,
    record_spend: &'a (dyn Fn(&LoopUsage) + Sync),
    ended: &'a [u32],
) -> Policy<'a> {
    Policy {
        pool: Some(&shared.pool),
        context_limit: Some(context_budget(shared.run.session.model_facts().model)),
        closing: Some(Closing {
            from: NEAR_END_TURNS,
            note: turns_left_note,
        }),
        answer: unit_check(shared, job),
        on_turn: Some(record_spend),
        ended,
        ..Policy::turns(job.max_turns)
    }
}

/// A unit's answer is refused once while one of its directories has no
/// entry (the reply names them); the salvage covers what the agent still
/// leaves out. A single directory's answer is always accepted.
fn unit_check(shared: &DirShared, job: &DirJob) -> Option<SubmitCheck> {
    if job.members.is_empty() {
        return None;
    }
    let (cache, target, members) = (
        shared.run.cache.clone(),
        shared.run.target().to_path_buf(),
        job.members.clone(),
    );
    let mut refused = false;
    Some(Box::new(move |_input: &Value| {
        let missing = missing_entries(&cache, &target, &members);
        if missing.is_empty() || refused {
            return None;
        }
        refused = true;
        Some(missing_entries_message(&missing))
    }))
}

/// How the loop ended, from how its conversation did (after `turns`
/// requests), with the report it submitted; a refusal is recorded as an
/// `info` flag on its directory.
fn loop_end(
    shared: &DirShared,
    job: &DirJob,
    end: CallEnd,
    turns: u32,
) -> (LoopEnd, Option<DirReport>) {
    match end {
        CallEnd::Submitted(input) => (LoopEnd::Submitted, Some(DirReport::read(input))),
        CallEnd::Refused(refusal) => {
            record_refusal(
                &shared.run.cache,
                &shared.run.progress,
                &relative(shared.run.target(), &job.dir),
                format!(
                    "This directory was not fully investigated: {}. Its summary is built from \
                     what was cached before.",
                    refusal.describe()
                ),
            );
            (LoopEnd::Refused(refusal), None)
        }
        CallEnd::ContextFull => (LoopEnd::ContextFull, None),
        CallEnd::OutOfTurns => (LoopEnd::TurnLimit, None),
        CallEnd::Malformed => (LoopEnd::Malformed, None),
        CallEnd::ApiError(err) => (LoopEnd::ApiError(err), None),
        // The money is spent: the loop ends with what it has, as on its
        // context budget; one that sent nothing leaves its directories to
        // the scan.
        CallEnd::OverBudget(_) if turns == 0 => (LoopEnd::Unaffordable, None),
        CallEnd::OverBudget(_) => (LoopEnd::Spent, None),
    }
}

/// The summary and completeness the loop leaves: from the report it
/// submitted, or the one its check held back for its paths when the loop
/// ended before it sent another (that report stands), or else a partial
/// entry salvaged from what it cached, as its end calls for.
fn settle(
    shared: &DirShared,
    job: &DirJob,
    check: &LoopCheck,
    end: &LoopEnd,
    submitted: Option<DirReport>,
) -> Result<(Option<String>, Option<f64>), InvestigationError> {
    let held = check
        .take_held_report()
        .filter(|_| submitted.is_none())
        .map(DirReport::read);
    if let Some(report) = submitted.or(held) {
        return Ok((Some(report.summary), report.completeness));
    }
    let cause = match end {
        LoopEnd::ContextFull => PartialCause::ContextFull,
        LoopEnd::Spent => PartialCause::Spent,
        LoopEnd::Refused(_) => PartialCause::Refused,
        LoopEnd::TurnLimit => PartialCause::TurnLimit,
        LoopEnd::Malformed => PartialCause::Malformed,
        LoopEnd::Submitted | LoopEnd::ApiError(_) | LoopEnd::Unaffordable => {
            return Ok((None, None));
        }
    };
    let partial = flush_partial_dir_entry(&shared.run.cache, shared.run.target(), &job.dir, cause)?;
    Ok(((!partial.is_empty()).then_some(partial), None))
}

/// Record the flags the loop's check held and the agent never replaced,
/// so no finding is lost; the report marks their paths as not found.
fn record_held_flags(shared: &DirShared, check: &LoopCheck, printer: &Printer) {
    let held = check.take_held_flags();
    if held.is_empty() {
        return;
    }
    match shared.run.cache.append_flags_unique(&held) {
        Ok(recorded) => {
            for flag in recorded {
                for line in flag_lines(
                    &flag.severity,
                    &flag.path,
                    " (not found in the tree)",
                    &flag.finding,
                    printer.progress().is_verbose(),
                ) {
                    printer.line(&line);
                }
            }
        }
        Err(err) => printer.line(&format!("Warning: could not record a flag: {err}")),
    }
}

/// What a dir loop hands in with `submit_report`, read leniently.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct DirReport {
    #[serde(default, deserialize_with = "lenient::text")]
    pub summary: String,
    /// Missing: 0 (as the original); unreadable: none; otherwise clamped
    /// into [0, 1] (`null` is 0).
    #[serde(default = "unrated", deserialize_with = "lenient::fraction_or_null")]
    pub completeness: Option<f64>,
}

fn unrated() -> Option<f64> {
    Some(0.0)
}

impl DirReport {
    /// The report a `submit_report` input gives (a report unlike one reads
    /// as empty and unrated).
    fn read(input: Value) -> DirReport {
        serde_json::from_value(input).unwrap_or_else(|_| DirReport {
            completeness: unrated(),
            ..DirReport::default()
        })
    }
}

/// `completeness` from `submit_report`, as [`DirReport`] reads it.
#[cfg(test)]
pub(crate) fn report_completeness(input: &Value) -> Option<f64> {
    DirReport::read(input.clone()).completeness
}

#[cfg(test)]
mod tests;
