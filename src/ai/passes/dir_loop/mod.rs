//! The dir loop: one isolated agent conversation per directory, and the
//! pure helpers that prepare it and salvage its work.
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

use serde_json::{Value, json};

use crate::ai::api::ToolDefinition;
use crate::ai::api::cost::LoopUsage;
use crate::ai::api::settings::context_budget;
use crate::ai::engine::agent::{Agent, AgentError, Printer, TurnOutcome};
use crate::ai::engine::pool::TurnPool;
use crate::ai::engine::session::Session;
use crate::ai::passes::survey::{frame_survey_block, string_field, unit_interval};
use crate::ai::prompts::{self, DirPrompt};
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
    /// The survey block for the prompt.
    pub survey_block: String,
    /// The dir toolbox after the survey's filtering.
    pub dir_tools: Vec<ToolDefinition>,
    /// Turns loops may borrow beyond their allocation.
    pub pool: TurnPool,
    /// The tree as the scan saw it, for checking the paths a loop cites.
    pub(crate) grounding: Arc<Scope>,
}

/// One directory to investigate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirJob {
    /// Absolute, canonical.
    pub dir: PathBuf,
    pub max_turns: u32,
    /// The directory's own contents changed since its cached summary, so its
    /// cached file summaries are stale too.
    pub contents_changed: bool,
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
    Refused,
}

impl PartialCause {
    /// `partial_reason` of an entry built from cached file summaries.
    pub fn reason(self) -> &'static str {
        match self {
            PartialCause::Budget => PARTIAL_REASON,
            PartialCause::TurnLimit => TURN_LIMIT_REASON,
            PartialCause::Refused => DECLINED_REASON,
        }
    }

    /// `partial_reason` of the stub written when no file was cached.
    pub fn stub_reason(self) -> &'static str {
        match self {
            PartialCause::Budget => INCOMPLETE_REASON,
            PartialCause::TurnLimit => TURN_LIMIT_STUB_REASON,
            PartialCause::Refused => DECLINED_STUB_REASON,
        }
    }

    /// `summary` of that stub.
    pub fn stub_summary(self) -> &'static str {
        match self {
            PartialCause::Budget => INCOMPLETE_SUMMARY,
            PartialCause::TurnLimit => TURN_LIMIT_SUMMARY,
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

/// Investigate `job.dir`: forget its stale summaries, run the loop, write the
/// dir entry from its report when the agent did not write one itself, and
/// stamp the entry with the fingerprint the directory had when the loop
/// started (a file edited mid-loop then shows as a change next run).
pub async fn investigate_dir(shared: &DirShared, job: &DirJob) -> Result<DirOutcome, PassError> {
    let path = job.dir.to_string_lossy().into_owned();
    let fingerprint = fingerprint(&job.dir, shared.session.scope());
    forget_stale_entries(shared, job)?;
    let outcome = run_dir_loop(shared, job).await?;
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
        entry[FINGERPRINT_FIELD] = json!(fingerprint);
        if let Err(message) = shared.cache.write_entry(EntryKind::Dir, &path, &entry) {
            shared.progress.ai_dir(
                &outcome.shown,
                &format!("Warning: could not cache the directory summary: {message}"),
            );
        }
    }
    stamp_fingerprint(&shared.cache, &path, &fingerprint)?;
    Ok(outcome)
}

/// A directory investigated again starts from a clean slate: its old dir
/// entry goes (the loop, the salvage and the orchestrator all keep an entry
/// that exists), and when its own files changed, so do their summaries.
fn forget_stale_entries(shared: &DirShared, job: &DirJob) -> Result<(), PassError> {
    let cache = &shared.cache;
    cache.remove_entry(EntryKind::Dir, &job.dir.to_string_lossy())?;
    if job.contents_changed {
        let files = cache.located_entries(EntryKind::File);
        for (path, _) in direct_file_entries(&job.dir, &files) {
            cache.remove_entry(EntryKind::File, &path.to_string_lossy())?;
        }
    }
    Ok(())
}

/// Record `fingerprint` in the dir entry at `path`, if the loop left one
/// that does not carry it yet.
fn stamp_fingerprint(cache: &Cache, path: &str, fingerprint: &str) -> Result<(), PassError> {
    let Some(mut entry) = cache.read_entry(EntryKind::Dir, path) else {
        return Ok(());
    };
    if entry.get(FINGERPRINT_FIELD).and_then(Value::as_str) == Some(fingerprint) {
        return Ok(());
    }
    entry[FINGERPRINT_FIELD] = json!(fingerprint);
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

/// The loop itself.
async fn run_dir_loop(shared: &DirShared, job: &DirJob) -> Result<DirOutcome, PassError> {
    let target = shared.target.as_path();
    let shown = display_name(target, &job.dir);
    let system = dir_system_prompt(shared, &job.dir, job.max_turns)?;
    let printer = Printer::Dir {
        progress: shared.progress.clone(),
        dir: shown.clone(),
    };
    // Paths the agent cites in flags and its report are checked as it goes
    // (see `crate::grounding::feedback`).
    let check = Arc::new(LoopCheck::new(
        shared.grounding.clone(),
        &relative(target, &job.dir),
    ));
    let mut agent = Agent::new(
        Toolbox::Dir,
        system,
        prompts::kickoff::DIR,
        shared.dir_tools.clone(),
        prompts::nudge::DIR,
        printer.clone(),
    )
    .investigating(&job.dir)
    .with_review(check.clone());
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

/// The dir loop's system prompt for `dir`: reads the listing (redacted like
/// `list_directory`'s, so a secret in a name is flagged) and the children's
/// cached summaries, then [`compose_dir_prompt`].
pub fn dir_system_prompt(
    shared: &DirShared,
    dir: &Path,
    max_turns: u32,
) -> Result<String, PassError> {
    let tools = ToolContext {
        target: &shared.target,
        cache: &shared.cache,
        redactor: shared.session.redactor(),
        scope: shared.session.scope(),
        progress: &shared.progress,
        directory: &display_name(&shared.target, dir),
        home: Some(dir),
        turn: 0,
    };
    let listing = tools.redact_listing(
        &relative(&shared.target, dir),
        &dir_context_in(&shared.target, dir, shared.session.scope()),
    );
    let child_entries = named_child_entries(shared.children.of(dir), |child| {
        shared
            .cache
            .read_entry(EntryKind::Dir, &child.to_string_lossy())
    });
    compose_dir_prompt(
        &shared.target,
        dir,
        max_turns,
        &listing,
        &child_entries,
        &shared.survey_block,
    )
}

/// Each child directory's name with its dir entry (from `entry_of`), as
/// [`compose_dir_prompt`] takes them.
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

/// The dir prompt from its parts. The listing, the child summaries and the
/// survey (a model's reading of the target's names) come from the target, so
/// they are framed as untrusted data, and the directory's names are escaped
/// to one line; its absolute path is the only absolute path in the result.
pub fn compose_dir_prompt(
    target: &Path,
    dir: &Path,
    max_turns: u32,
    listing: &str,
    child_entries: &[(String, Option<Value>)],
    survey_block: &str,
) -> Result<String, PassError> {
    let dir_rel = escape_line(&display_name(target, dir)).into_owned();
    let context = frame_untrusted(&format!("listing of {dir_rel}"), listing);
    let child_summaries = frame_child_summaries(render_child_summaries(child_entries));
    let survey_context = frame_survey_block(survey_block);
    let dir_path = escape_line(&dir.to_string_lossy()).into_owned();
    Ok(DirPrompt {
        dir_path: &dir_path,
        dir_rel: &dir_rel,
        max_turns,
        context: &context,
        child_summaries: &child_summaries,
        survey_context: &survey_context,
    }
    .render()?)
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
fn frame_child_summaries(rendered: String) -> String {
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

#[cfg(test)]
mod tests;
