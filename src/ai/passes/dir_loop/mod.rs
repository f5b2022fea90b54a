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

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::ai::api::ToolDefinition;
use crate::ai::api::cost::LoopUsage;
use crate::ai::api::settings::context_budget;
use crate::ai::engine::agent::{Agent, AgentError, Printer, TurnOutcome};
use crate::ai::engine::pool::TurnPool;
use crate::ai::engine::session::Session;
use crate::ai::passes::survey::{string_field, unit_interval};
use crate::ai::prompts;
use crate::ai::rules::discover::{ChildIndex, display_name, relative};
use crate::ai::rules::fingerprint::{FINGERPRINT_FIELD, fingerprint};
use crate::ai::tools::{ToolContext, Toolbox, frame_untrusted, fs::scoped_listing};
use crate::ai::{PassError, record_refusal, stop_for_api_error};
use crate::cache::now_iso;
use crate::cache::{Cache, EntryKind};
use crate::grounding::{LoopCheck, Scope};
use crate::progress::Progress;
use crate::scan::ScanFilter;
use crate::text::escape_line;
use crate::text::format_thousands;

/// `summary` of the stub written when the budget ran out before any file was
/// cached.
pub const INCOMPLETE_SUMMARY: &str =
    "Investigation incomplete — context budget reached before any files were processed.";
/// `partial_reason` of a partial entry built from cached files.
pub const PARTIAL_REASON: &str = "context budget reached";
/// `partial_reason` of the stub.
pub const INCOMPLETE_REASON: &str = "context budget reached before files processed";
/// `summary` of the stub written when the turns ran out before any file was
/// cached.
pub const TURN_LIMIT_SUMMARY: &str =
    "Investigation incomplete — turn limit reached before any files were processed.";
/// `partial_reason` of a partial entry written when the turns ran out.
pub const TURN_LIMIT_REASON: &str = "turn limit reached";
/// `partial_reason` of the turn-limit stub.
pub const TURN_LIMIT_STUB_REASON: &str = "turn limit reached before files processed";
/// `summary` of the stub written when the model declined before any file
/// was cached.
pub const DECLINED_SUMMARY: &str =
    "Investigation incomplete — the model declined before any files were processed.";
/// `partial_reason` of a partial entry written when the model declined.
pub const DECLINED_REASON: &str = "model declined";
/// `partial_reason` of the declined stub.
pub const DECLINED_STUB_REASON: &str = "model declined before files processed";
/// Child-summary placeholder for a directory with no subdirectories.
pub const LEAF_PLACEHOLDER: &str = "(none: this is a leaf directory)";
/// Child-summary placeholder when subdirectories exist but none has a summary.
pub const UNINVESTIGATED_PLACEHOLDER: &str =
    "(child directories exist but have not been investigated yet)";
/// From this many turns before its limit, a loop is told how many remain.
pub const NEAR_END_TURNS: u32 = 2;
/// `partial_reason` of the entry salvaged for a unit's directory the agent
/// did not summarize.
pub const UNIT_MEMBER_REASON: &str = "the unit's agent wrote no summary of this directory";
/// `summary` of the stub for such a directory with no cached file either.
pub const UNIT_MEMBER_SUMMARY: &str =
    "Investigation incomplete — the unit's agent summarized neither this directory nor its files.";
/// The dir-entry field naming the unit (its top directory, relative) a
/// folded directory was investigated in.
pub const UNIT_FIELD: &str = "unit";

/// What every dir loop of a run shares. Read-only once built, apart from the
/// turn pool's counters.
pub struct DirShared {
    pub session: Arc<Session>,
    pub cache: Cache,
    pub progress: Progress,
    /// The canonical target.
    pub target: PathBuf,
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
}

/// One assignment: a directory, with the directories folded into its unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirJob {
    /// Absolute, canonical: the unit's top directory.
    pub dir: PathBuf,
    /// The directories below `dir` folded into its unit, leaf-first (none
    /// for a single directory).
    pub members: Vec<PathBuf>,
    pub max_turns: u32,
    /// The directories of the unit whose own contents changed since their
    /// cached summary, so their cached file summaries are stale too.
    pub changed: Vec<PathBuf>,
}

impl DirJob {
    /// A single directory.
    pub fn single(dir: PathBuf, max_turns: u32, contents_changed: bool) -> DirJob {
        DirJob {
            changed: if contents_changed {
                vec![dir.clone()]
            } else {
                Vec::new()
            },
            dir,
            members: Vec::new(),
            max_turns,
        }
    }

    /// Every directory of the assignment: `dir`, then the members.
    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.dir).chain(&self.members)
    }
}

/// How a dir loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopEnd {
    /// The agent called `submit_report`.
    Submitted,
    /// Every turn (borrowed ones included) was used without a report; a
    /// partial entry was flushed.
    TurnLimit,
    /// The context budget ran out; a partial entry was flushed.
    Budget,
    /// The model declined (this says how); a partial entry was flushed.
    Refused(String),
    /// The API failed (after retries); the loop stopped.
    ApiError(String),
}

/// Why a loop had to salvage a partial entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartialCause {
    Budget,
    TurnLimit,
    /// A unit's directory the agent left without a dir entry.
    UnitMember,
    Refused,
}

impl PartialCause {
    /// `partial_reason` of an entry built from cached file summaries.
    pub fn reason(self) -> &'static str {
        match self {
            PartialCause::Budget => PARTIAL_REASON,
            PartialCause::TurnLimit => TURN_LIMIT_REASON,
            PartialCause::UnitMember => UNIT_MEMBER_REASON,
            PartialCause::Refused => DECLINED_REASON,
        }
    }

    /// `partial_reason` of the stub written when no file was cached.
    pub fn stub_reason(self) -> &'static str {
        match self {
            PartialCause::Budget => INCOMPLETE_REASON,
            PartialCause::TurnLimit => TURN_LIMIT_STUB_REASON,
            PartialCause::UnitMember => UNIT_MEMBER_REASON,
            PartialCause::Refused => DECLINED_STUB_REASON,
        }
    }

    /// `summary` of that stub.
    pub fn stub_summary(self) -> &'static str {
        match self {
            PartialCause::Budget => INCOMPLETE_SUMMARY,
            PartialCause::TurnLimit => TURN_LIMIT_SUMMARY,
            PartialCause::UnitMember => UNIT_MEMBER_SUMMARY,
            PartialCause::Refused => DECLINED_SUMMARY,
        }
    }
}

/// What a dir loop produced.
#[derive(Debug, Clone, PartialEq)]
pub struct DirOutcome {
    pub dir: PathBuf,
    /// Shown name (relative; the target's name for the root).
    pub shown: String,
    pub summary: Option<String>,
    pub completeness: Option<f64>,
    pub turns_allocated: u32,
    /// Turns taken from the shared pool beyond the allocation.
    pub turns_borrowed: u32,
    /// Model calls made.
    pub turns_used: u32,
    pub usage: LoopUsage,
    pub end: LoopEnd,
}

/// Investigate `job`: forget its directories' stale summaries, run the
/// loop, write the top directory's entry from its report when the agent did
/// not write one itself, salvage an entry for every directory still without
/// one, and stamp each entry with the fingerprint its directory had when the
/// loop started (a file edited mid-loop then shows as a change next run).
/// Folded directories' entries also name their unit.
pub async fn investigate_dir(shared: &DirShared, job: &DirJob) -> Result<DirOutcome, PassError> {
    let path = job.dir.to_string_lossy().into_owned();
    let fingerprints: Vec<(PathBuf, String)> = job
        .dirs()
        .map(|dir| (dir.clone(), fingerprint(dir, shared.session.scope())))
        .collect();
    let unit = relative(&shared.target, &job.dir);
    let stamps = fingerprints
        .iter()
        .map(|(dir, print)| {
            let mut fields = Map::new();
            fields.insert(FINGERPRINT_FIELD.to_owned(), json!(print));
            if dir != &job.dir {
                fields.insert(UNIT_FIELD.to_owned(), json!(unit));
            }
            (dir.clone(), fields)
        })
        .collect();
    forget_stale_entries(shared, job)?;
    let outcome = run_dir_loop(shared, job, stamps).await?;
    shared.pool.give_back(
        (outcome.turns_allocated + outcome.turns_borrowed).saturating_sub(outcome.turns_used),
    );
    if let Some(summary) = outcome.summary.as_deref().filter(|s| !s.is_empty())
        && !shared.cache.has_entry(EntryKind::Dir, &path)
    {
        let mut entry = report_entry(
            &shared.target,
            &job.dir,
            summary,
            outcome.completeness,
            visible_child_count(&job.dir),
            &now_iso(),
        );
        // Stamped in the same atomic write: an entry a killed run left
        // without its fingerprint would be investigated again next time.
        entry[FINGERPRINT_FIELD] = json!(fingerprints[0].1);
        if let Err(message) = shared.cache.write_entry(EntryKind::Dir, &path, &entry) {
            shared.progress.ai_dir(
                &outcome.shown,
                &format!("Warning: could not cache the directory summary: {message}"),
            );
        }
    }
    // A loop that ended on the API error leaves its directories without a
    // summary, as before: the next run investigates them again.
    if !matches!(outcome.end, LoopEnd::ApiError(_)) {
        for member in &job.members {
            flush_partial_dir_entry(
                &shared.cache,
                &shared.target,
                member,
                PartialCause::UnitMember,
            )?;
        }
    }
    for (dir, print) in &fingerprints {
        let member = (dir != &job.dir).then_some(unit.as_str());
        stamp_entry(&shared.cache, &dir.to_string_lossy(), print, member)?;
    }
    Ok(outcome)
}

/// The directories of `job` that still have no dir entry, relative.
fn missing_entries(cache: &Cache, target: &Path, members: &[PathBuf]) -> Vec<String> {
    members
        .iter()
        .filter(|dir| !cache.has_entry(EntryKind::Dir, &dir.to_string_lossy()))
        .map(|dir| relative(target, dir))
        .collect()
}

/// The reply to a unit's `submit_report` while some of its directories
/// have no dir entry.
pub fn missing_entries_message(missing: &[String]) -> String {
    format!(
        "Not accepted yet: these directories of your unit have no dir entry: {}. Write one \
         for each with write_cache (cache_type \"dir\"), then call submit_report again.",
        missing
            .iter()
            .map(|rel| escape_line(rel).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A directory investigated again starts from a clean slate: its old dir
/// entry goes (the loop, the salvage and the orchestrator all keep an entry
/// that exists), and when its own files changed, so do their summaries.
fn forget_stale_entries(shared: &DirShared, job: &DirJob) -> Result<(), PassError> {
    let cache = &shared.cache;
    for dir in job.dirs() {
        cache.remove_entry(EntryKind::Dir, &dir.to_string_lossy())?;
    }
    if !job.changed.is_empty() {
        let files = cache.located_entries(EntryKind::File);
        for dir in &job.changed {
            for (path, _) in direct_file_entries(dir, &files) {
                cache.remove_entry(EntryKind::File, &path.to_string_lossy())?;
            }
        }
    }
    Ok(())
}

/// Record `fingerprint` in the dir entry at `path`, if the loop left one
/// that does not carry it yet, and for a folded directory the unit (its top
/// directory, relative).
fn stamp_entry(
    cache: &Cache,
    path: &str,
    fingerprint: &str,
    unit: Option<&str>,
) -> Result<(), PassError> {
    let Some(mut entry) = cache.read_entry(EntryKind::Dir, path) else {
        return Ok(());
    };
    if entry.get(FINGERPRINT_FIELD).and_then(Value::as_str) == Some(fingerprint)
        && (unit.is_none() || entry.get(UNIT_FIELD).and_then(Value::as_str) == unit)
    {
        return Ok(());
    }
    entry[FINGERPRINT_FIELD] = json!(fingerprint);
    if let Some(unit) = unit {
        entry[UNIT_FIELD] = json!(unit);
    }
    cache
        .write_entry(EntryKind::Dir, path, &entry)
        .map_err(|message| PassError::Failed(format!("recording a fingerprint: {message}")))
}

/// The note appended to the next request when few turns remain.
pub fn turns_left_note(remaining: u32) -> String {
    let turns = if remaining == 1 { "turn" } else { "turns" };
    format!(
        "[luminos] {remaining} {turns} left for this directory, this one included. \
         Cache what you have learned and call submit_report before they run out."
    )
}

/// The loop itself. `stamps` go into every dir entry its agent writes.
async fn run_dir_loop(
    shared: &DirShared,
    job: &DirJob,
    stamps: Vec<(PathBuf, Map<String, Value>)>,
) -> Result<DirOutcome, PassError> {
    let target = shared.target.as_path();
    let shown = display_name(target, &job.dir);
    let task = dir_task(shared, job)?;
    let printer = Printer::Dir {
        progress: shared.progress.clone(),
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
    .investigating(&job.dir)
    .covering(&job.members)
    .stamping(stamps)
    .with_review(check.clone());
    if !job.members.is_empty() {
        // Refused once while a directory of the unit has no entry; the
        // salvage covers what the agent still leaves out.
        let (cache, target, members) = (
            shared.cache.clone(),
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
    let pricing = shared.session.tracker().pricing();
    let budget = context_budget(shared.session.facts().model);
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
            printer.line(&format!(
                "Borrowed a turn from the shared pool ({borrowed} so far)"
            ));
        }
        let remaining = limit - turn + 1;
        if remaining <= NEAR_END_TURNS {
            agent.append_note(&turns_left_note(remaining));
        }
        match agent
            .turn(&shared.session, &shared.cache, &shown, turn)
            .await
        {
            Ok(step) => {
                usage.record(&step.usage, &pricing);
                match step.outcome {
                    TurnOutcome::Ended(input) => {
                        summary = Some(string_field(&input, "summary"));
                        completeness = report_completeness(&input);
                        end = LoopEnd::Submitted;
                        break;
                    }
                    TurnOutcome::Continue => {}
                    TurnOutcome::ContextFull => {
                        end = LoopEnd::Budget;
                        break;
                    }
                    TurnOutcome::Refused(refusal) => {
                        record_refusal(
                            &shared.cache,
                            &shared.progress,
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
                stop_for_api_error(&shared.session, &err)?;
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
            Err(other) => return Err(other.into()),
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
        LoopEnd::Refused(_) => Some(PartialCause::Refused),
        LoopEnd::Submitted | LoopEnd::TurnLimit | LoopEnd::ApiError(_) => None,
    };
    if let Some(cause) = salvage.filter(|_| held.is_none()) {
        let partial = flush_partial_dir_entry(&shared.cache, target, &job.dir, cause)?;
        if !partial.is_empty() && summary.is_none() {
            summary = Some(partial);
        }
    }
    if end == LoopEnd::TurnLimit {
        printer.line(&format!("Warning: max turns reached for {shown}"));
    }
    if end == LoopEnd::TurnLimit && held.is_none() {
        let partial =
            flush_partial_dir_entry(&shared.cache, target, &job.dir, PartialCause::TurnLimit)?;
        if !partial.is_empty() {
            summary = Some(partial);
        }
    }
    record_held_flags(shared, &check, &printer);
    Ok(DirOutcome {
        dir: job.dir.clone(),
        shown,
        summary,
        completeness,
        turns_allocated: job.max_turns,
        turns_borrowed: borrowed,
        turns_used: usage.turns,
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
    match shared.cache.append_flags_unique(&held) {
        Ok(recorded) => {
            for flag in recorded {
                printer.line(&format!(
                    "FLAG [{}] {} (not found in the tree)",
                    escape_line(&flag.severity.to_uppercase()),
                    escape_line(&flag.path)
                ));
                printer.line(&format!("  {}", escape_line(&flag.finding)));
            }
        }
        Err(err) => printer.line(&format!("Warning: could not record a flag: {err}")),
    }
}

/// `completeness` from `submit_report`: missing → 0.0 (as the original),
/// unreadable → none, otherwise clamped into [0, 1].
pub fn report_completeness(input: &Value) -> Option<f64> {
    match input.get("completeness") {
        None => Some(0.0),
        raw => unit_interval(raw),
    }
}

/// The first message of `job`'s loop: reads each directory's listing
/// (redacted like `list_directory`'s, so a secret in a name is flagged) and
/// the cached summaries of the subdirectories outside the assignment, then
/// [`compose_dir_task`].
pub fn dir_task(shared: &DirShared, job: &DirJob) -> Result<String, PassError> {
    let tools = ToolContext {
        target: &shared.target,
        cache: &shared.cache,
        redactor: shared.session.redactor(),
        scope: shared.session.scope(),
        progress: &shared.progress,
        directory: &display_name(&shared.target, &job.dir),
        home: Some(&job.dir),
        unit: &job.members,
        stamps: &[],
        turn: 0,
    };
    let listings: Vec<String> = job
        .dirs()
        .map(|dir| {
            tools.redact_listing(
                &relative(&shared.target, dir),
                &dir_context_in(&shared.target, dir, shared.session.scope()),
            )
        })
        .collect();
    let outside = outside_children(&shared.children, &job.dir, &job.members);
    let child_entries = named_child_entries(&outside, |child| {
        shared
            .cache
            .read_entry(EntryKind::Dir, &child.to_string_lossy())
    });
    compose_dir_task(
        &shared.target,
        &job.dir,
        &job.members,
        job.max_turns,
        &listings,
        &child_entries,
    )
}

/// Each child directory's name with its dir entry (from `entry_of`), as
/// [`compose_dir_task`] takes them.
pub fn named_child_entries(
    children: &[PathBuf],
    entry_of: impl Fn(&PathBuf) -> Option<Value>,
) -> Vec<(String, Option<Value>)> {
    children
        .iter()
        .map(|child| {
            let name = child
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, entry_of(child))
        })
        .collect()
}

/// The child-summaries block: `- <relative_path>/: <summary>` for each child
/// with a cached entry; otherwise one of the two placeholders, so a parent is
/// never told it is a leaf when its children simply have no summary yet.
/// `children` are (name, cached entry) pairs of the discovered subdirectories.
pub fn render_child_summaries(children: &[(String, Option<Value>)]) -> String {
    let lines: Vec<String> = children
        .iter()
        .filter_map(|(name, entry)| {
            let entry = entry.as_ref()?;
            let rel = entry
                .get("relative_path")
                .and_then(Value::as_str)
                .unwrap_or(name);
            let summary = entry
                .get("summary")
                .and_then(Value::as_str)
                .unwrap_or("(no summary)");
            Some(format!("- {}/: {summary}", escape_line(rel)))
        })
        .collect();
    if !lines.is_empty() {
        lines.join("\n")
    } else if children.is_empty() {
        LEAF_PLACEHOLDER.to_string()
    } else {
        UNINVESTIGATED_PLACEHOLDER.to_string()
    }
}

/// The directory's listing for its prompt (hidden names left out), as the
/// `list_directory` tool shows it, so the agent need not spend a turn on it.
pub fn dir_context(target: &Path, dir: &Path) -> String {
    dir_context_in(target, dir, None)
}

/// [`dir_context`] within the run's scope: what the scan left out (ignored
/// names, `-x` directories) is left out here too, and counted.
pub fn dir_context_in(target: &Path, dir: &Path, scope: Option<&ScanFilter>) -> String {
    match scoped_listing(target, dir, false, scope) {
        Ok(listing) if listing.lines.is_empty() && listing.left_out == 0 => "(empty)".to_string(),
        Ok(listing) => format!("Directory contents:\n{}", listing.text()),
        Err(_) => "  (could not list directory)".to_string(),
    }
}

/// Summaries are the agent's words about the target's files, so they go to
/// the next agent framed as untrusted data; the placeholders are ours.
pub(crate) fn frame_child_summaries(rendered: String) -> String {
    if rendered == LEAF_PLACEHOLDER || rendered == UNINVESTIGATED_PLACEHOLDER {
        rendered
    } else {
        frame_untrusted("summaries of child directories", &rendered)
    }
}

/// Names in `dir` that are not hidden: the entry's `child_count`.
pub fn visible_child_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count()
        })
        .unwrap_or(0)
}

/// The dir entry the orchestrator writes from a `submit_report`.
pub fn report_entry(
    target: &Path,
    dir: &Path,
    summary: &str,
    completeness: Option<f64>,
    child_count: usize,
    now: &str,
) -> Value {
    let mut entry = json!({
        "path": dir.to_string_lossy(),
        "relative_path": relative(target, dir),
        "child_count": child_count,
        "summary": summary,
        "dominant_category": "unknown",
        "notable_files": [],
        "cached_at": now,
    });
    if let Some(completeness) = completeness {
        entry["completeness"] = json!(completeness);
    }
    entry
}

/// The file entries of files directly in `dir`, ordered by path, from
/// entries located by their keys ([`Cache::located_entries`]): what an agent
/// wrote into an entry's fields never moves it to another directory.
pub fn direct_file_entries<'a>(
    dir: &Path,
    located: &'a [(PathBuf, Value)],
) -> Vec<(&'a Path, &'a Value)> {
    let mut direct: Vec<(&Path, &Value)> = located
        .iter()
        .filter(|(path, _)| path.parent() == Some(dir))
        .map(|(path, entry)| (path.as_path(), entry))
        .collect();
    direct.sort_by(|a, b| a.0.cmp(b.0));
    direct
}

/// The partial dir entry for a loop stopped by the budget or its turn limit, and the summary it
/// carries. From the directory's cached file entries (each with the path it
/// is keyed by): their summaries joined, their notable files listed relative
/// to the target. With none: the "incomplete" stub and an empty summary.
pub fn build_partial_entry(
    target: &Path,
    dir: &Path,
    file_entries: &[(&Path, &Value)],
    child_count: usize,
    now: &str,
    cause: PartialCause,
) -> (Value, String) {
    let relative_path = relative(target, dir);
    if file_entries.is_empty() {
        let stub = json!({
            "path": dir.to_string_lossy(),
            "relative_path": relative_path,
            "child_count": 0,
            "summary": cause.stub_summary(),
            "dominant_category": "unknown",
            "notable_files": [],
            "partial": true,
            "partial_reason": cause.stub_reason(),
            "cached_at": now,
        });
        return (stub, String::new());
    }
    let summary = file_entries
        .iter()
        .filter_map(|(_, e)| e.get("summary").and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let notable: Vec<String> = file_entries
        .iter()
        .filter(|(_, e)| e.get("notable").and_then(Value::as_bool).unwrap_or(false))
        .map(|(path, _)| relative(target, path))
        .collect();
    let entry = json!({
        "path": dir.to_string_lossy(),
        "relative_path": relative_path,
        "child_count": child_count,
        "summary": summary,
        "dominant_category": "unknown",
        "notable_files": notable,
        "partial": true,
        "partial_reason": cause.reason(),
        "cached_at": now,
    });
    (entry, summary)
}

/// Write the partial entry for `dir` unless a dir entry already exists.
/// Returns the partial summary ("" when nothing was written or there was
/// nothing to summarize).
pub fn flush_partial_dir_entry(
    cache: &Cache,
    target: &Path,
    dir: &Path,
    cause: PartialCause,
) -> Result<String, PassError> {
    let path = dir.to_string_lossy();
    if cache.has_entry(EntryKind::Dir, &path) {
        return Ok(String::new());
    }
    let files = cache.located_entries(EntryKind::File);
    let direct = direct_file_entries(dir, &files);
    let (entry, summary) = build_partial_entry(
        target,
        dir,
        &direct,
        visible_child_count(dir),
        &now_iso(),
        cause,
    );
    cache
        .write_entry(EntryKind::Dir, &path, &entry)
        .map_err(|message| PassError::Failed(format!("writing a partial entry: {message}")))?;
    Ok(summary)
}

mod task;

pub use task::{UNIT_FRAME, compose_dir_task, dir_system_prompt, outside_children};

#[cfg(test)]
mod tests;
