//! The investigation as a short, visible sequence of phases, one function
//! each:
//!
//! 1. open the cache ([`open_investigation`]);
//! 2. discover directories ([`discover`]);
//! 3. survey ([`survey_phase`]);
//! 4. partition into cached and uncached ([`partition`]);
//! 5. plan ([`plan_phase`]);
//! 6. apply the plan ([`apply_plan_phase`]);
//! 7. run the dir loops ([`dir_loops`]);
//! 8. write the evaluation ([`evaluate`]);
//! 9. synthesize ([`synthesis_phase`]);
//! 10. collect flags and report the cost ([`finish`]).
//!
//! Phases are deterministic glue: the business rules live in pure helpers
//! (`plan.rs`, `survey.rs`, `dir_loop.rs`, ...) and each model call in its
//! pass module.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::ai::api::cost::TokenTracker;
use crate::ai::api::{Client, ClientConfig};
use crate::ai::dir_loop::{DirJob, DirOutcome, DirShared, investigate_dir};
use crate::ai::discover::{discover_directories, display_name, relative};
use crate::ai::plan::{
    AppliedPlan, Plan, Utilization, apply_plan, plan_evaluation, plan_summary_line,
    unmatched_warning, utilization_line,
};
use crate::ai::planning::{PlanningInputs, run_planning};
use crate::ai::session::Session;
use crate::ai::survey::{
    Survey, SurveyInputs, filter_dir_tools, format_survey_block, format_survey_signals, run_survey,
    should_skip_survey, survey_report_lines,
};
use crate::ai::synthesis::run_synthesis;
use crate::ai::tools::{self, Scope};
use crate::ai::tree_view::prompt_tree;
use crate::ai::{InvestigationError, Outcome, PassError};
use crate::cache::now_iso;
use crate::cache::{Cache, CacheError, CacheRoot, EntryKind, RunLock};
use crate::config::Config;
use crate::progress::Progress;
use crate::redact::Redactor;
use crate::report::{InvestigationSummary, TokenTotals};
use crate::scan::{BaseScan, ScanFilter};

/// Depth of the tree the survey sees.
pub const SURVEY_TREE_DEPTH: usize = 2;
/// Depth of the tree the planner sees.
pub const PLANNING_TREE_DEPTH: usize = 6;

/// Run the whole investigation. Fatal problems (unknown model, rejected key,
/// unsafe cache) are errors; anything else unexpected is a warning and an
/// outcome with empty AI fields.
pub async fn run(
    config: &Config,
    scan: &BaseScan,
    progress: &Progress,
) -> Result<Outcome, InvestigationError> {
    progress.ai("Starting multi-pass investigation...");
    // The run lock is held until the investigation ends.
    let (cache, _lock) = match open_investigation(config, progress) {
        Ok(opened) => opened,
        // A cache that cannot be written is a failed investigation, not an
        // unsafe one: the report still prints.
        Err(InvestigationError::Cache(err @ CacheError::Io { .. })) => {
            progress.println(&format!("Warning: AI analysis failed: {err}"));
            return Ok(Outcome::default());
        }
        Err(err) => return Err(err),
    };
    match pipeline(config, scan, progress, &cache).await {
        Ok(outcome) => {
            if outcome.brief.is_empty() && outcome.detailed.is_empty() {
                progress.ai("Warning: agent produced no output.");
            }
            progress.ai("Investigation complete.");
            Ok(outcome)
        }
        Err(PassError::Fatal(err)) => Err(err),
        Err(PassError::Failed(message)) => {
            progress.println(&format!("Warning: AI analysis failed: {message}"));
            Ok(Outcome::default())
        }
    }
}

/// What every phase of one run reads.
struct Run<'a> {
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

/// Phases 2-10, once the cache is open.
async fn pipeline(
    config: &Config,
    scan: &BaseScan,
    progress: &Progress,
    cache: &Cache,
) -> Result<Outcome, PassError> {
    let target = config.target_canonical.as_path();
    let tracker = Arc::new(TokenTracker::new(&config.investigation.model));
    let run = Run {
        config,
        scan,
        progress,
        cache,
        session: Arc::new(new_session(config, progress, &tracker)?),
        target,
        scope: ScanFilter::new(target, &config.scan),
    };

    let all_dirs = discover(&run.scope);
    let tiny = should_skip_survey(total_files(scan), all_dirs.len());
    let survey = survey_phase(&run, &all_dirs, tiny).await?;
    let (cached, to_investigate) = partition(cache, target, &all_dirs, progress);
    let plan = plan_phase(&run, &all_dirs, &cached, survey.as_ref(), tiny).await?;
    let applied = apply_plan_phase(&all_dirs, &to_investigate, &plan, target, progress);
    let shared = DirShared {
        session: run.session.clone(),
        cache: cache.clone(),
        progress: progress.clone(),
        target: target.to_path_buf(),
        all_dirs: all_dirs.clone(),
        survey_block: format_survey_block(survey.as_ref()),
        dir_tools: filter_dir_tools(&tools::definitions(Scope::Dir), survey.as_ref()),
    };
    let outcomes = dir_loops(&shared, &applied).await?;
    evaluate(cache, &plan, &applied, &outcomes, cached.len(), progress)?;
    let (brief, detailed) = synthesis_phase(&run).await?;
    Ok(finish(
        &run,
        &all_dirs,
        &applied,
        cached.len(),
        brief,
        detailed,
    ))
}

/// Phase 1: take the target's run lock (another run on the same target is
/// refused), find or start the investigation, open its cache, write
/// `meta.json` when it is new, and say which it is.
pub fn open_investigation(
    config: &Config,
    progress: &Progress,
) -> Result<(Cache, RunLock), InvestigationError> {
    let root = CacheRoot::open(&config.cache_root)?;
    let lock = root.lock_run(&config.target_canonical, false)?;
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
    Ok((cache, lock))
}

fn new_session(
    config: &Config,
    progress: &Progress,
    tracker: &Arc<TokenTracker>,
) -> Result<Session, PassError> {
    let client_config = ClientConfig::from_config(config)
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

/// Phase 2: every directory to consider, leaf-first.
pub fn discover(filter: &ScanFilter) -> Vec<PathBuf> {
    discover_directories(filter)
}

fn total_files(scan: &BaseScan) -> u64 {
    scan.file_categories.values().sum()
}

/// Phase 3: the survey, or the synthetic one for a tiny target.
async fn survey_phase(
    run: &Run<'_>,
    all_dirs: &[PathBuf],
    tiny: bool,
) -> Result<Option<Survey>, PassError> {
    let survey = if tiny {
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
        run_survey(&run.session, run.cache, run.progress, &inputs).await?
    };
    for line in survey_report_lines(survey.as_ref()) {
        run.progress.ai(&line);
    }
    Ok(survey)
}

/// Phase 4: split into cached and to-investigate (both leaf-first).
pub fn partition(
    cache: &Cache,
    target: &Path,
    all_dirs: &[PathBuf],
    progress: &Progress,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (cached, to_investigate): (Vec<PathBuf>, Vec<PathBuf>) = all_dirs
        .iter()
        .cloned()
        .partition(|dir| cache.has_entry(EntryKind::Dir, &dir.to_string_lossy()));
    for dir in &cached {
        progress.ai(&format!("Skipping (cached): {}/", relative(target, dir)));
    }
    if !cached.is_empty() {
        progress.ai(&format!("Directories cached: {}", cached.len()));
    }
    progress.ai(&format!(
        "Directories to investigate: {}",
        to_investigate.len()
    ));
    (cached, to_investigate)
}

/// Phase 5: the plan — default for tiny targets, `plan.json` on resume, else
/// the planning pass (saved on success, default on failure).
async fn plan_phase(
    run: &Run<'_>,
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
        && let Some(saved) = cache.read_json("plan.json")
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
        Some(plan) => {
            if let Err(err) = cache.write_json("plan.json", &plan.to_value()) {
                progress.ai(&format!("Warning: could not save plan.json: {err}"));
            }
            Ok(plan)
        }
        None => {
            progress.ai("Planning failed, using defaults.");
            Ok(Plan::default_plan())
        }
    }
}

/// Phase 6: apply the plan and say what it decided.
pub fn apply_plan_phase(
    all_dirs: &[PathBuf],
    to_investigate: &[PathBuf],
    plan: &Plan,
    target: &Path,
    progress: &Progress,
) -> AppliedPlan {
    let applied = apply_plan(all_dirs, to_investigate, plan, target);
    if let Some(warning) = unmatched_warning(&applied) {
        progress.ai(&warning);
    }
    if let Some(line) = plan_summary_line(&applied) {
        progress.ai(&line);
    }
    if !plan.notes.is_empty() {
        progress.ai(&format!("Plan notes: {}", plan.notes));
    }
    applied
}

/// Phase 7: one dir loop per directory, in plan order.
async fn dir_loops(
    shared: &DirShared,
    applied: &AppliedPlan,
) -> Result<Vec<DirOutcome>, PassError> {
    let total = applied.order.len();
    let mut outcomes = Vec::with_capacity(total);
    for (i, dir) in applied.order.iter().enumerate() {
        let job = DirJob {
            dir: dir.clone(),
            max_turns: applied.turns_for(dir),
        };
        shared.progress.ai(&format!(
            "Investigating: {}/ ({}/{total}, {} turns)",
            display_name(&shared.target, dir),
            i + 1,
            job.max_turns
        ));
        outcomes.push(investigate_dir(shared, &job).await?);
    }
    Ok(outcomes)
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

    let records: Vec<Utilization> = outcomes
        .iter()
        .map(|outcome| Utilization {
            dir: outcome.shown.clone(),
            tier: applied.tier_of(&outcome.dir),
            turns_allocated: outcome.turns_allocated,
            turns_used: outcome.turns_used,
            completeness: outcome.completeness,
            confidence: cache
                .read_entry(EntryKind::Dir, &outcome.dir.to_string_lossy())
                .map(|entry| entry.get("confidence").cloned().unwrap_or(Value::Null)),
        })
        .collect();
    let evaluation = plan_evaluation(plan.investigation_order, &records, &now_iso());
    match cache.write_json("plan_evaluation.json", &evaluation) {
        Ok(()) => progress.ai(&utilization_line(&evaluation)),
        Err(err) => progress.ai(&format!(
            "Warning: could not save plan_evaluation.json: {err}"
        )),
    }
    Ok(())
}

/// Phase 9: the synthesis pass.
async fn synthesis_phase(run: &Run<'_>) -> Result<(String, String), PassError> {
    run.progress.ai("Synthesis pass...");
    run_synthesis(
        &run.session,
        run.cache,
        run.progress,
        &run.target.to_string_lossy(),
    )
    .await
}

/// Phase 10: read the flags, report the cost, and fill the outcome.
fn finish(
    run: &Run<'_>,
    all_dirs: &[PathBuf],
    applied: &AppliedPlan,
    cached_count: usize,
    brief: String,
    detailed: String,
) -> Outcome {
    let (cache, session) = (run.cache, &run.session);
    let flags = cache.read_flags();
    let tracker = session.tracker();
    let totals = tracker.totals();
    run.progress
        .ai(&format!("Total tokens used: {}", tracker.summary()));
    let has_entry = |d: &&PathBuf| cache.has_entry(EntryKind::Dir, &d.to_string_lossy());
    let investigated = all_dirs.iter().filter(has_entry).count();
    // Planned directories still without a summary (turns ran out, the API
    // failed) are investigated again by the next run.
    let remaining = applied.order.len() - applied.order.iter().filter(has_entry).count();
    Outcome {
        brief,
        detailed,
        flags,
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
            cost_cap_hit: false,
        }),
        interrupted: false,
    }
}
