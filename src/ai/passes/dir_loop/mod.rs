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
//! Each turn checks the context budget *first*: once the latest call's
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

use serde_json::{Map, Value, json};

use crate::ai::api::ToolDefinition;
use crate::ai::api::cost::LoopUsage;
use crate::ai::api::settings::context_budget;
use crate::ai::engine::agent::{Agent, AgentError, CallEnd, Printer};
use crate::ai::engine::context::RunContext;
use crate::ai::engine::pool::TurnPool;
use crate::ai::engine::session::stop_for_api_error;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::record_refusal;
use crate::ai::prompts;
use crate::ai::rules::discover::{ChildIndex, display_name, relative};
use crate::ai::rules::fingerprint::{FINGERPRINT_FIELD, LANGUAGE_FIELD, fingerprint};
use crate::ai::rules::plan::TurnUse;
use crate::ai::tools::input::{string_field, unit_interval};
use crate::ai::tools::notes::flag_lines;
use crate::ai::tools::{ToolContext, Toolbox};
use crate::cache::EntryKind;
use crate::cache::now_iso;
use crate::grounding::{LoopCheck, Scope};
use crate::text::format_thousands;

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
    PartialCause, UNIT_FIELD, direct_file_entries, flush_partial_dir_entry, is_declined,
    report_entry, visible_child_count,
};
use entries::{forget_stale_entries, missing_entries, stamp_entry};
pub(crate) use job::{DirJob, DirOutcome, LoopEnd, RunningSpend};
pub(crate) use notes::{NEAR_END_TURNS, missing_entries_message, turns_left_note};
pub(crate) use task::{compose_dir_task, dir_system_prompt, outside_children};

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
    let path = job.dir.to_string_lossy().into_owned();
    let fingerprints: Vec<(PathBuf, String)> = job
        .dirs()
        .map(|dir| (dir.clone(), fingerprint(dir, Some(&shared.run.scope))))
        .collect();
    let unit = relative(shared.run.target(), &job.dir);
    let stamps = fingerprints
        .iter()
        .map(|(dir, print)| {
            let mut fields = Map::new();
            fields.insert(FINGERPRINT_FIELD.to_owned(), json!(print));
            if let Some(language) = &shared.language {
                fields.insert(LANGUAGE_FIELD.to_owned(), json!(language));
            }
            if dir != &job.dir {
                fields.insert(UNIT_FIELD.to_owned(), json!(unit));
            }
            (dir.clone(), fields)
        })
        .collect();
    forget_stale_entries(shared, job)?;
    let outcome = run_dir_loop(shared, job, stamps).await?;
    shared.pool.give_back(outcome.turns.unused());
    if let Some(summary) = outcome.summary.as_deref().filter(|s| !s.is_empty())
        && !shared.run.cache.has_entry(EntryKind::Dir, &path)
    {
        let mut entry = report_entry(
            shared.run.target(),
            &job.dir,
            summary,
            outcome.completeness,
            visible_child_count(&job.dir),
            &now_iso(),
        );
        // Stamped in the same atomic write: an entry a killed run left
        // without its fingerprint would be investigated again next time.
        entry[FINGERPRINT_FIELD] = json!(fingerprints[0].1);
        if let Some(language) = &shared.language {
            entry[LANGUAGE_FIELD] = json!(language);
        }
        if let Err(message) = shared.run.cache.write_entry(EntryKind::Dir, &path, &entry) {
            shared.run.progress.ai_dir(
                &outcome.shown,
                &format!("Warning: could not cache the directory summary: {message}"),
            );
        }
    }
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
    for (dir, print) in &fingerprints {
        let member = (dir != &job.dir).then_some(unit.as_str());
        let language = shared.language.as_deref();
        stamp_entry(
            &shared.run.cache,
            &dir.to_string_lossy(),
            print,
            member,
            language,
        )?;
    }
    Ok(outcome)
}

/// The loop itself. `stamps` go into every dir entry its agent writes.
async fn run_dir_loop(
    shared: &DirShared,
    job: &DirJob,
    stamps: Vec<(PathBuf, Map<String, Value>)>,
) -> Result<DirOutcome, InvestigationError> {
    let target = shared.run.target();
    let shown = display_name(target, &job.dir);
    let task = dir_task(shared, job)?;
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
        &task,
        shared.dir_tools.clone(),
        prompts::nudge::DIR,
        printer.clone(),
    )
    .with_review(check.clone());
    // Its tools work in the assignment: relative paths resolve against its
    // directory, and the entries they write for the unit carry `stamps`.
    let tools = ToolContext {
        home: Some(&job.dir),
        unit: &job.members,
        stamps: &stamps,
        ..shared.run.tools(&shown)
    };
    if !job.members.is_empty() {
        // Refused once while a directory of the unit has no entry; the
        // salvage covers what the agent still leaves out.
        let (cache, target, members) = (
            shared.run.cache.clone(),
            target.to_path_buf(),
            job.members.clone(),
        );
        let mut refused = false;
        agent = agent.with_submit_check(Box::new(move |_input: &Value| {
            let missing = missing_entries(&cache, &target, &members);
            if missing.is_empty() || refused {
                return None;
            }
            refused = true;
            Some(missing_entries_message(&missing))
        }));
    }
    let mut usage = LoopUsage::default();
    let pricing = shared.run.session.tracker().pricing();
    let budget = context_budget(shared.run.session.model_facts().model);
    let mut summary = None;
    let mut completeness = None;
    let mut end = LoopEnd::TurnLimit;
    let mut limit = job.max_turns;
    let mut borrowed = 0;
    let mut turn = 0;
    loop {
        turn += 1;
        // The budget comes first: a loop over it must not borrow a turn it
        // cannot use.
        if usage.budget_exceeded(budget) {
            printer.line(&format!(
                "Context budget reached — exiting early (context size {} > {} budget; loop spend {} tokens)",
                format_thousands(usage.last_context),
                format_thousands(budget),
                format_thousands(usage.total()),
            ));
            end = LoopEnd::Budget;
            break;
        }
        if turn > limit {
            if !shared.pool.borrow_one(limit) {
                break;
            }
            limit += 1;
            borrowed += 1;
            printer.detail(&format!(
                "Borrowed a turn from the shared pool ({borrowed} so far)"
            ));
        }
        let remaining = limit - turn + 1;
        if remaining <= NEAR_END_TURNS {
            agent.append_note(&turns_left_note(remaining));
        }
        match agent
            .turn(&shared.run.session, &ToolContext { turn, ..tools })
            .await
        {
            Ok(step) => {
                usage.record(&step.usage, &pricing);
                shared.spend.set(&job.dir, usage.cost);
                match step.end {
                    Some(CallEnd::Submitted(input)) => {
                        summary = Some(string_field(&input, "summary"));
                        completeness = report_completeness(&input);
                        end = LoopEnd::Submitted;
                        break;
                    }
                    None => {}
                    // A turn never ends on the last two: the loop counts
                    // its turns and meets API errors itself.
                    Some(
                        CallEnd::ContextFull
                        | CallEnd::OutOfTurns
                        | CallEnd::ApiError
                        | CallEnd::OverBudget,
                    ) => {
                        end = LoopEnd::Budget;
                        break;
                    }
                    Some(CallEnd::Refused(refusal)) => {
                        record_refusal(
                            &shared.run.cache,
                            &shared.run.progress,
                            &relative(target, &job.dir),
                            format!(
                                "This directory was not fully investigated: {}. Its summary \
                                 is built from what was cached before.",
                                refusal.describe()
                            ),
                        );
                        end = LoopEnd::Refused(refusal.describe());
                        break;
                    }
                }
            }
            Err(AgentError::Api(err)) => {
                stop_for_api_error(&shared.run.session, &err)?;
                printer.line(&format!("API error: {err}"));
                // The window is full: the same as running out of budget.
                end = if err.prompt_too_long().is_some() {
                    LoopEnd::Budget
                } else {
                    LoopEnd::ApiError(err.to_string())
                };
                break;
            }
            Err(AgentError::TooLarge(err)) => {
                // The context is full: the loop ends as on its budget.
                printer.line(&format!("Context window reached — {err}; exiting early"));
                end = LoopEnd::Budget;
                break;
            }
            // The money is spent: the loop ends with what it has, as on its
            // context budget; one that sent nothing leaves its directories
            // to the scan.
            Err(AgentError::OverBudget(err)) => {
                printer.line(&format!("Budget reached — {err}; exiting early"));
                end = if usage.turns == 0 {
                    LoopEnd::Unaffordable
                } else {
                    LoopEnd::Spent
                };
                break;
            }
            Err(AgentError::Tool(err)) => return Err(err.into()),
            Err(AgentError::Prompt(err)) => return Err(err.into()),
            Err(AgentError::CacheWrite(fault)) => {
                return Err(InvestigationError::CacheWrite(fault));
            }
        }
    }
    // The agent submitted a report, held back for its paths, and the loop
    // ended before it sent another: that report stands, not a partial one.
    let held = check.take_held_report().filter(|_| summary.is_none());
    if let Some(held) = &held {
        summary = Some(string_field(held, "summary"));
        completeness = report_completeness(held);
    }
    let salvage = match &end {
        LoopEnd::Budget => Some(PartialCause::Budget),
        LoopEnd::Spent => Some(PartialCause::Spent),
        LoopEnd::Refused(_) => Some(PartialCause::Refused),
        LoopEnd::Submitted | LoopEnd::TurnLimit | LoopEnd::ApiError(_) | LoopEnd::Unaffordable => {
            None
        }
    };
    if let Some(cause) = salvage.filter(|_| held.is_none()) {
        let partial = flush_partial_dir_entry(&shared.run.cache, target, &job.dir, cause)?;
        if !partial.is_empty() && summary.is_none() {
            summary = Some(partial);
        }
    }
    if end == LoopEnd::TurnLimit {
        printer.line(&format!("Warning: max turns reached for {shown}"));
    }
    if end == LoopEnd::TurnLimit && held.is_none() {
        let partial =
            flush_partial_dir_entry(&shared.run.cache, target, &job.dir, PartialCause::TurnLimit)?;
        if !partial.is_empty() {
            summary = Some(partial);
        }
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
            borrowed,
            used: usage.turns,
        },
        usage,
        end,
    })
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

/// `completeness` from `submit_report`: missing → 0.0 (as the original),
/// unreadable → none, otherwise clamped into [0, 1].
pub(crate) fn report_completeness(input: &Value) -> Option<f64> {
    match input.get("completeness") {
        None => Some(0.0),
        raw => unit_interval(raw),
    }
}

#[cfg(test)]
mod tests;
