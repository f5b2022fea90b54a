//! The investigation as a short, visible sequence of phases, one function
//! each:
//!
//! 1. open the cache ([`open_investigation`]);
//! 2. discover directories among those the base scan's walk found, with the
//!    fingerprints it took ([`discover`]: the tree is not walked again);
//! 3. compare them with the cache: fresh or stale ([`partition`]);
//! 4. survey, reusing `survey.json` (`survey_phase`);
//! 5. plan, reusing `plan.json` (`plan_phase`);
//! 6. apply the plan ([`apply_plan_phase`]);
//! 7. run the dir loops, `-j` at a time under the spending cap
//!    ([`crate::ai::engine::scheduler`]);
//! 8. write the evaluation (`evaluate`);
//! 9. synthesize, reusing `synthesis.json` (`synthesis_phase`);
//! 10. collect flags, report the cost and say whether the investigation
//!     is complete or partial (`finish`).
//!
//! With `--batch` the same phases run; the session sends their requests in
//! rounds through the Message Batches API ([`crate::ai::engine::batch`]),
//! and a run picks up the batch an earlier one left in flight. A run
//! without `--batch` refuses to start while a batch is in flight (it would
//! pay again for what the batch is already doing), and a complete
//! investigation's batch files are removed.
//!
//! Whatever happens, the outcome says what became of the investigation
//! ([`Investigation`]): a failure anywhere (an unreachable endpoint, a
//! rejected key, an unknown model, an account that cannot pay, a cache
//! that cannot be written) ends it with status `failed` and one line saying
//! why, printed once on stderr and carried by the report.
//!
//! A run over a tree that has not changed since the last one makes no API
//! request at all: every summary is fresh, the survey, plan and synthesis are
//! read back. Ctrl-C at any point stops new work, lets a tool call in progress
//! finish its cache write, and leaves a cache the next run resumes from.
//!
//! Phases are deterministic glue: the business rules live in pure helpers
//! (`plan.rs`, `fingerprint.rs`, `scheduler.rs`, ...) and each model call in
//! its pass module.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::ai::api::Client;
use crate::ai::api::cost::TokenTracker;
use crate::ai::batch_mode;
use crate::ai::engine::pool::TurnPool;
use crate::ai::engine::scheduler::{LoopOptions, run_dir_loops};
use crate::ai::engine::session::Session;
use crate::ai::passes::dir_loop::{DirOutcome, DirShared, LoopEnd};
use crate::ai::passes::planning::{PlanningInputs, run_planning};
use crate::ai::passes::survey::{
    Survey, SurveyInputs, filter_dir_tools, format_survey_block, format_survey_signals, run_survey,
    should_skip_survey, survey_report_lines,
};
use crate::ai::passes::synthesis::{
    SynthesisOutcome, entries_digest, report_order, reusable_synthesis, run_synthesis,
    saved_synthesis,
};
use crate::ai::rules::discover::{ChildIndex, Discovery, discover_directories, relative};
use crate::ai::rules::fingerprint::{DirState, Freshness, Reason, classify, fingerprint};
use crate::ai::rules::plan::{
    AppliedPlan, Plan, Utilization, apply_plan, plan_evaluation, plan_summary_line,
    unmatched_warning, utilization_line,
};
use crate::ai::rules::status;
use crate::ai::rules::tree_view::prompt_tree;
use crate::ai::tools::{self, Toolbox};
use crate::ai::{InvestigationError, Outcome, PassError};
use crate::cache::now_iso;
use crate::cache::{
    Cache, CacheError, CacheRoot, EntryKind, PLAN_EVALUATION_FILE, PLAN_FILE, RunLock, SURVEY_FILE,
    SYNTHESIS_FILE,
};
use crate::config::Config;
use crate::progress::Progress;
use crate::redact::Redactor;
use crate::report::{Investigation, InvestigationStatus, InvestigationSummary, TokenTotals};
use crate::scan::{BaseScan, ScanFilter, ScannedDirs};

/// Depth of the tree the survey sees.
pub const SURVEY_TREE_DEPTH: usize = 2;
/// Depth of the tree the planner sees.
pub const PLANNING_TREE_DEPTH: usize = 6;

/// Run the whole investigation. Only a cache that is unsafe to use is an
/// error; every other failure is an outcome with status `failed`.
pub async fn investigate(
    config: &Config,
    scan: &BaseScan,
    dirs: &ScannedDirs,
    progress: &Progress,
    reserved: Option<RunLock>,
) -> Result<Outcome, InvestigationError> {
    progress.ai("Starting multi-pass investigation...");
    let opened = match open_investigation(config, progress, reserved) {
        Ok(opened) => opened,
        // A cache that cannot be written is a failed investigation, not an
        // unsafe one: the report still prints.
        Err(InvestigationError::Cache(err @ CacheError::Io { .. })) => {
            return Ok(failed(progress, &err.to_string()));
        }
        Err(err) => return Err(err),
    };
    // The run lock is held until the investigation ends.
    let (cache, _lock) = (opened.cache, opened.lock);
    let result = tokio::select! {
        result = pipeline(config, scan, dirs, progress, &cache, opened.is_new) => result,
        // Dropping the pipeline aborts the running loops at their next await,
        // after a tool call in progress (and its cache write) has returned.
        _ = interrupted() => return Ok(interrupted_outcome(config, &cache, progress)),
    };
    match result {
        Ok(outcome) => {
            if outcome.brief.is_empty() && outcome.detailed.is_empty() {
                progress.ai("Warning: agent produced no output.");
            }
            progress.ai(&outcome.status.line());
            Ok(outcome)
        }
        Err(PassError::Fatal(err @ InvestigationError::Cache(CacheError::Io { .. }))) => {
            Ok(failed(progress, &err.to_string()))
        }
        Err(PassError::Fatal(err @ InvestigationError::Cache(_))) => Err(err),
        Err(PassError::Fatal(err)) => Ok(failed(progress, &err.to_string())),
        Err(PassError::Failed(message)) => Ok(failed(progress, &message)),
    }
}

/// The outcome of an investigation that stopped on `error`, said once on
/// stderr.
fn failed(progress: &Progress, error: &str) -> Outcome {
    let status = Investigation::failed(&crate::ai::api::error::one_line_excerpt(error, 500));
    progress.println(&status.line());
    Outcome {
        status,
        ..Outcome::default()
    }
}

/// Resolves on Ctrl-C. Should the handler fail to install, it never resolves,
/// leaving the default behaviour (the process ends; the cache resumes).
async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// What an interrupted run says and returns.
fn interrupted_outcome(config: &Config, cache: &Cache, progress: &Progress) -> Outcome {
    let done = cache.list_entries(EntryKind::Dir).len();
    progress.println(&format!(
        "Interrupted. {done} directory summaries are saved in {}/; run the same command again \
         (without --fresh) to resume where this run stopped.",
        cache.dir().display()
    ));
    if let Some(line) = batch_mode::in_flight_line(config, cache) {
        progress.println(&line);
    }
    Outcome {
        interrupted: true,
        status: Investigation {
            status: InvestigationStatus::Partial,
            note: Some("interrupted".to_string()),
            ..Investigation::default()
        },
        ..Outcome::default()
    }
}

/// What every phase of one run reads.
struct RunContext<'a> {
    config: &'a Config,
    scan: &'a BaseScan,
    progress: &'a Progress,
    cache: &'a Cache,
    session: Arc<Session>,
    /// The canonical target.
    target: &'a Path,
    /// The base scan's scope (hidden, `-x`, ignore files).
    scope: ScanFilter,
}

/// Phases 2-10, once the cache is open (`new`: by this run, so empty).
async fn pipeline(
    config: &Config,
    scan: &BaseScan,
    dirs: &ScannedDirs,
    progress: &Progress,
    cache: &Cache,
    new: bool,
) -> Result<Outcome, PassError> {
    let target = config.target_canonical.as_path();
    batch_mode::refuse_in_flight(config, cache)?;
    let tracker = batch_mode::tracker(config);
    let session = new_session(config, progress, &tracker)?;
    let session = batch_mode::with_transport(session, config, cache, progress, &tracker)?;
    let run = RunContext {
        config,
        scan,
        progress,
        cache,
        session: Arc::new(session),
        target,
        scope: ScanFilter::new(target, &config.scan),
    };

    let discovery = discover(target, dirs);
    // A new investigation holds no entry: every directory is missing one,
    // which is what an empty map says, without a lookup per directory.
    let states = if new {
        HashMap::new()
    } else {
        current_states(cache, &discovery, Some(&run.scope))
    };
    let all_dirs = discovery.dirs;
    let tiny = should_skip_survey(total_files(scan), all_dirs.len());
    let first_look = partition(&all_dirs, &states, target, progress);
    let mut plan = Plan::default_plan();
    let mut survey = None;
    if !first_look.stale.is_empty() {
        survey = survey_phase(&run, &all_dirs, tiny).await?;
        plan = plan_phase(&run, &all_dirs, &first_look.fresh, survey.as_ref(), tiny).await?;
    }
    let (applied, freshness) =
        apply_plan_phase(&all_dirs, &states, &first_look, &plan, target, progress);
    let allocations: Vec<u32> = applied.order.iter().map(|d| applied.turns_for(d)).collect();
    let shared = Arc::new(DirShared {
        session: run.session.clone(),
        cache: cache.clone(),
        progress: progress.clone(),
        target: target.to_path_buf(),
        children: ChildIndex::new(&all_dirs),
        survey_block: format_survey_block(survey.as_ref()),
        dir_tools: filter_dir_tools(&tools::definitions(Toolbox::Dir), survey.as_ref()),
        pool: TurnPool::new(&allocations),
    });
    // A directory stale only because of a child keeps its file summaries.
    let changed: HashSet<PathBuf> = freshness
        .stale
        .iter()
        .filter(|(_, reason)| *reason != Reason::ChildChanged)
        .map(|(dir, _)| dir.clone())
        .collect();
    let options = LoopOptions {
        jobs: config.investigation.jobs,
        max_cost: config.investigation.max_cost,
    };
    let board = progress.dir_board(applied.order.len());
    if !run.session.facts().known {
        board.assume_prices();
    }
    let loops = run_dir_loops(
        shared,
        &applied,
        &|dir| changed.contains(dir),
        options,
        &board,
    )
    .await?;
    drop(board);
    // Cached means a summary this run reused, as the original counts it: a
    // directory the plan skipped is settled (`settle_plan`) but has none.
    let cached = freshness
        .fresh
        .iter()
        .filter(|dir| cache.has_entry(EntryKind::Dir, &dir.to_string_lossy()))
        .count();
    evaluate(cache, &plan, &applied, &loops.outcomes, cached, progress)?;
    let synthesis = synthesis_phase(&run, &all_dirs).await?;
    let outcome = finish(
        &run,
        &all_dirs,
        &applied,
        cached,
        &loops.outcomes,
        synthesis,
        loops.cap_hit,
    );
    batch_mode::forget_when_complete(cache, &outcome, progress);
    Ok(outcome)
}

/// An investigation opened for this run.
pub struct Opened {
    pub cache: Cache,
    /// The target's run lock, held until the run ends.
    pub lock: RunLock,
    /// Started by this run (new, `--fresh`, or replacing a `--no-redact`
    /// one): it holds no entry yet.
    pub is_new: bool,
}

/// Phase 1: take the target's run lock unless the run `reserved` it before
/// the scan (another run on the same target is refused), find or start the investigation, open its cache, write
/// `meta.json` when it is new, and say which it is.
pub fn open_investigation(
    config: &Config,
    progress: &Progress,
    reserved: Option<RunLock>,
) -> Result<Opened, InvestigationError> {
    let root = CacheRoot::open(&config.cache_root)?;
    let lock = match reserved {
        Some(lock) => lock,
        None => root.lock_run(&config.target_canonical, false)?,
    };
    let mut id = root.investigation_id(&config.target_canonical, config.investigation.fresh)?;
    for warning in &id.warnings {
        progress.ai(&format!("Warning: {warning}"));
    }
    let mut cache = Cache::open(&root, &id.id, &config.target_canonical)?;
    // Summaries written while redaction was off may quote secrets in shapes
    // no rule recognises (a key quoted by grep), so a redacting run does not
    // build on them.
    if !id.is_new && config.investigation.redact && cache.written_without_redaction() {
        progress.ai(
            "Warning: the cached investigation was made with --no-redact and its summaries \
             may quote secrets; starting a fresh one (--no-redact resumes it).",
        );
        id = root.investigation_id(&config.target_canonical, true)?;
        cache = Cache::open(&root, &id.id, &config.target_canonical)?;
    }
    // A run killed mid-write leaves temp files; we hold the lock, so none
    // is in use.
    cache.remove_stale_temp_files(&lock);
    if id.is_new {
        cache.write_meta(&config.investigation.model, &now_iso())?;
    }
    if !config.investigation.redact {
        cache.mark_written_without_redaction()?;
    }
    let resumed = if id.is_new { "" } else { " (resumed)" };
    progress.ai(&format!("Investigation ID: {}{resumed}", id.id));
    progress.ai(&format!("Cache: {}/", cache.dir().display()));
    Ok(Opened {
        cache,
        lock,
        is_new: id.is_new,
    })
}

fn new_session(
    config: &Config,
    progress: &Progress,
    tracker: &Arc<TokenTracker>,
) -> Result<Session, PassError> {
    let client_config = config
        .client_config()
        .ok_or_else(|| PassError::Failed("no API credential is set".to_string()))?;
    let client = Client::new(client_config).map_err(|err| PassError::Failed(err.to_string()))?;
    let redactor = Arc::new(if config.investigation.redact {
        Redactor::new()
    } else {
        Redactor::disabled()
    });
    let scope = ScanFilter::new(&config.target_canonical, &config.scan);
    Ok(Session::new(client, redactor, tracker.clone(), progress).with_scope(scope))
}

/// Phase 2: every directory to consider under the canonical `target`,
/// leaf-first, from the base scan's directories (see
/// [`discover_directories`]).
pub fn discover(target: &Path, scanned: &ScannedDirs) -> Discovery {
    discover_directories(target, scanned)
}

fn total_files(scan: &BaseScan) -> u64 {
    scan.file_categories.values().sum()
}

/// Phase 3: the survey, or the synthetic one for a tiny target.
async fn survey_phase(
    run: &RunContext<'_>,
    all_dirs: &[PathBuf],
    tiny: bool,
) -> Result<Option<Survey>, PassError> {
    let saved = (!tiny && !run.config.investigation.fresh)
        .then(|| run.cache.read_json(SURVEY_FILE))
        .flatten()
        .and_then(|value| serde_json::from_value::<Survey>(value).ok());
    let survey = if let Some(saved) = saved {
        run.progress.ai("Survey loaded from cache.");
        Some(saved)
    } else if tiny {
        run.progress.ai(&format!(
            "Survey skipped — {} files, {} dirs (below threshold).",
            total_files(run.scan),
            all_dirs.len()
        ));
        Some(Survey::skipped())
    } else {
        run.progress.ai("Survey pass...");
        let tree_preview = prompt_tree(run.target, &run.scope, SURVEY_TREE_DEPTH);
        let target = run.target.to_string_lossy();
        let inputs = SurveyInputs {
            target: &target,
            signals: &run.scan.survey_signals,
            tree_preview: &tree_preview,
        };
        let survey = run_survey(&run.session, run.cache, run.progress, &inputs).await?;
        if let Some(survey) = &survey {
            save_json(
                run,
                SURVEY_FILE,
                &serde_json::to_value(survey).unwrap_or(Value::Null),
            );
        }
        survey
    };
    for line in survey_report_lines(survey.as_ref()) {
        run.progress.ai(&line);
    }
    Ok(survey)
}

/// What the cache knows about each discovered directory, compared with the
/// fingerprint the scan took (or, for a directory the scan could not
/// examine, with the disk read within `scope`).
pub fn current_states(
    cache: &Cache,
    discovery: &Discovery,
    scope: Option<&ScanFilter>,
) -> HashMap<PathBuf, DirState> {
    discovery
        .iter()
        .map(|(dir, scanned)| {
            let entry = cache.read_entry(EntryKind::Dir, &dir.to_string_lossy());
            let current = match scanned {
                Some(fingerprint) => fingerprint.to_string(),
                None => fingerprint(dir, scope),
            };
            (dir.clone(), DirState::of(entry.as_ref(), &current))
        })
        .collect()
}

/// Phase 3: split into directories whose summaries still hold and those to
/// investigate (both leaf-first), and say which and why.
pub fn partition(
    all_dirs: &[PathBuf],
    states: &HashMap<PathBuf, DirState>,
    target: &Path,
    progress: &Progress,
) -> Freshness {
    let freshness = classify(all_dirs, states);
    for dir in &freshness.fresh {
        progress.ai(&format!("Skipping (cached): {}/", relative(target, dir)));
    }
    for (dir, reason) in &freshness.stale {
        let why = match reason {
            Reason::New => continue,
            Reason::Changed => "its contents changed",
            Reason::ChildChanged => "a directory below it is investigated again",
        };
        progress.ai(&format!(
            "Investigating again ({why}): {}/",
            relative(target, dir)
        ));
    }
    if !freshness.fresh.is_empty() {
        progress.ai(&format!("Directories cached: {}", freshness.fresh.len()));
    }
    progress.ai(&format!(
        "Directories to investigate: {}",
        freshness.stale.len()
    ));
    freshness
}

/// Phase 5: the plan — default for tiny targets, `plan.json` on resume, else
/// the planning pass (saved on success, default on failure).
async fn plan_phase(
    run: &RunContext<'_>,
    all_dirs: &[PathBuf],
    cached: &[PathBuf],
    survey: Option<&Survey>,
    tiny: bool,
) -> Result<Plan, PassError> {
    let (cache, progress) = (run.cache, run.progress);
    if tiny {
        progress.ai("Planning skipped (small target).");
        return Ok(Plan::default_plan());
    }
    if !run.config.investigation.fresh
        && let Some(saved) = cache.read_json(PLAN_FILE)
    {
        progress.ai("Plan loaded from cache.");
        return Ok(Plan::from_value(&saved));
    }
    progress.ai("Planning pass...");
    let target_text = run.target.to_string_lossy();
    let survey_block = format_survey_block(survey);
    let tree_text = prompt_tree(run.target, &run.scope, PLANNING_TREE_DEPTH);
    let file_signals = format_survey_signals(&run.scan.survey_signals);
    let cached_rel: Vec<String> = cached.iter().map(|d| relative(run.target, d)).collect();
    let inputs = PlanningInputs {
        target: &target_text,
        survey_block: &survey_block,
        tree_text: &tree_text,
        file_signals: &file_signals,
        dir_count: all_dirs.len(),
        cached_dirs: &cached_rel,
    };
    match run_planning(&run.session, cache, progress, &inputs).await? {
        Some(proposal) => {
            save_json(run, PLAN_FILE, &proposal);
            Ok(Plan::from_value(&proposal))
        }
        None => {
            progress.ai("Planning failed, using defaults.");
            Ok(Plan::default_plan())
        }
    }
}

/// Save a reusable pass result; failing to is only a warning.
fn save_json(run: &RunContext<'_>, name: &str, value: &Value) {
    if let Err(err) = run.cache.write_json(name, value) {
        run.progress
            .ai(&format!("Warning: could not save {name}: {err}"));
    }
}

/// Phase 6: apply the plan and say what it decided. Returns the applied
/// plan and the final freshness (see [`settle_plan`]).
pub fn apply_plan_phase(
    all_dirs: &[PathBuf],
    states: &HashMap<PathBuf, DirState>,
    first_look: &Freshness,
    plan: &Plan,
    target: &Path,
    progress: &Progress,
) -> (AppliedPlan, Freshness) {
    let (applied, freshness) = settle_plan(all_dirs, states, first_look, plan, target);
    if let Some(warning) = unmatched_warning(&applied) {
        progress.ai(&warning);
    }
    if let Some(line) = plan_summary_line(&applied) {
        progress.ai(&line);
    }
    if !plan.notes.is_empty() {
        progress.ai(&format!("Plan notes: {}", plan.notes));
    }
    (applied, freshness)
}

/// Apply `plan` to the stale directories. A directory the plan skips is
/// settled: it does not make its parents stale, so a rerun over an unchanged
/// tree has nothing to do even when the plan skipped something.
pub fn settle_plan(
    all_dirs: &[PathBuf],
    states: &HashMap<PathBuf, DirState>,
    first_look: &Freshness,
    plan: &Plan,
    target: &Path,
) -> (AppliedPlan, Freshness) {
    let proposed = apply_plan(all_dirs, &first_look.stale_dirs(), plan, target);
    let mut settled = states.clone();
    for dir in &proposed.skipped {
        settled.insert(dir.clone(), DirState::Unchanged);
    }
    let freshness = classify(all_dirs, &settled);
    let mut applied = apply_plan(all_dirs, &freshness.stale_dirs(), plan, target);
    applied.skipped = proposed.skipped;
    applied.unmatched = proposed.unmatched;
    (applied, freshness)
}

/// Phase 8: close `meta.json` and write `plan_evaluation.json`.
fn evaluate(
    cache: &Cache,
    plan: &Plan,
    applied: &AppliedPlan,
    outcomes: &[DirOutcome],
    cached_count: usize,
    progress: &Progress,
) -> Result<(), PassError> {
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
            tier: applied.tier_of(&outcome.dir),
            turns_allocated: outcome.turns_allocated,
            turns_borrowed: outcome.turns_borrowed,
            turns_used: outcome.turns_used,
            completeness: outcome.completeness,
            confidence: cache
                .read_entry(EntryKind::Dir, &outcome.dir.to_string_lossy())
                .map(|entry| entry.get("confidence").cloned().unwrap_or(Value::Null)),
        })
        .collect();
    let evaluation = plan_evaluation(plan.investigation_order, &records, &now_iso());
    match cache.write_json(PLAN_EVALUATION_FILE, &evaluation) {
        Ok(()) => progress.ai(&utilization_line(&evaluation)),
        Err(err) => progress.ai(&format!(
            "Warning: could not save {PLAN_EVALUATION_FILE}: {err}"
        )),
    }
    Ok(())
}

/// Phase 9: the synthesis pass over the entries of directories that still
/// exist, or the saved synthesis when those entries have not changed since.
async fn synthesis_phase(
    run: &RunContext<'_>,
    all_dirs: &[PathBuf],
) -> Result<SynthesisOutcome, PassError> {
    let entries = report_order(
        all_dirs
            .iter()
            .filter_map(|dir| run.cache.read_entry(EntryKind::Dir, &dir.to_string_lossy()))
            .collect(),
    );
    let digest = entries_digest(&entries);
    if !run.config.investigation.fresh
        && let Some(saved) =
            reusable_synthesis(run.cache.read_json(SYNTHESIS_FILE).as_ref(), &digest)
    {
        run.progress
            .ai("Synthesis loaded from cache (no summary changed).");
        return Ok(saved);
    }
    run.progress.ai("Synthesis pass...");
    let outcome = run_synthesis(
        &run.session,
        run.cache,
        run.progress,
        &run.target.to_string_lossy(),
        &entries,
    )
    .await?;
    if outcome.submitted {
        save_json(
            run,
            SYNTHESIS_FILE,
            &saved_synthesis(&outcome, &digest, &now_iso()),
        );
    }
    Ok(outcome)
}

/// Phase 10: read the flags, report the cost, and fill the outcome.
fn finish(
    run: &RunContext<'_>,
    all_dirs: &[PathBuf],
    applied: &AppliedPlan,
    cached_count: usize,
    loops: &[DirOutcome],
    synthesis: SynthesisOutcome,
    cost_cap_hit: bool,
) -> Outcome {
    let (cache, session) = (run.cache, &run.session);
    let flags = cache.read_flags();
    let tracker = session.tracker();
    let totals = tracker.totals();
    let assumed = match (session.facts().known, session.is_batching()) {
        (true, false) => "",
        (true, true) => " (at batch prices)",
        (false, false) => " (at assumed prices)",
        (false, true) => " (at assumed batch prices)",
    };
    run.progress.ai(&format!(
        "Total tokens used: {}{assumed}",
        tracker.summary()
    ));
    if let Some(stats) = session.batch_stats() {
        run.progress.ai(&batch_mode::stats_line(&stats));
    }
    let has_entry = |d: &&PathBuf| cache.has_entry(EntryKind::Dir, &d.to_string_lossy());
    let investigated = all_dirs.iter().filter(has_entry).count();
    // Planned directories still without a summary (the API failed, the cap
    // stopped them) are investigated by the next run.
    let remaining = applied.order.len() - applied.order.iter().filter(has_entry).count();
    if cost_cap_hit {
        run.progress.ai(&format!(
            "The spending cap left {remaining} directories for a later run; run again to resume."
        ));
    }
    let declined = loops
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
                directories_investigated: investigated,
                directories_cached: cached_count,
                directories_remaining: remaining,
                api_requests: totals.requests,
                tokens: TokenTotals {
                    input: totals.input_tokens,
                    output: totals.output_tokens,
                    cache_write: totals.cache_creation_input_tokens,
                    cache_read: totals.cache_read_input_tokens,
                },
                cost_usd: tracker.cost(),
                cache_savings_usd: tracker.cache_savings(),
                cost_cap_hit,
                batch: session.batch_stats().map(|stats| stats.summary()),
            }),
        },
        interrupted: false,
    }
}
