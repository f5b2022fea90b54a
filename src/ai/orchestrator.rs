//! The investigation as a short, visible sequence of phases, one function
//! each:
//!
//! 1. open the cache ([`open_investigation`]);
//! 2. gather the facts: discover directories among those the base scan's
//!    walk found, with the fingerprints it took ([`discover`]: the tree is
//!    not walked again), the scan's figures and the cache's state
//!    ([`RunFacts`]), and decide what the run does ([`decide`]), saying what
//!    is fresh and stale ([`partition`]);
//! 3. survey, reusing `survey.json`, as decided (`survey_phase`);
//! 4. plan, reusing `plan.json`, as decided, and decide again with a new
//!    plan (`plan_phase`);
//! 5. say what the plan and the budget decided ([`report_decision`]);
//! 6. run the work: the dir loops, `-j` at a time under the spending cap
//!    and the budget, and the mechanical entries
//!    ([`crate::ai::engine::scheduler`]);
//! 7. write the evaluation (`evaluate`);
//! 8. synthesize, in levels when the summaries do not fit one call,
//!    reusing `synthesis.json` (`synthesis_phase`);
//! 9. collect flags, report the cost and coverage and say whether the
//!    investigation is complete or partial (`finish`);
//! 10. ground the report: check every cited path and symbol against the
//!     tree (`ground_phase`, see [`crate::grounding`]).
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
//! Phases are deterministic glue: what the run does is decided once by the
//! pure [`decide`] (which `--estimate` prices too), the business rules live
//! in pure helpers (`plan.rs`, `fingerprint.rs`, `scheduler.rs`, ...) and
//! each model call in its pass module.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::ai::api::Client;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::cost::TokenTracker;
use crate::ai::batch_mode;
use crate::ai::engine::pool::TurnPool;
use crate::ai::engine::scheduler::{LoopOptions, LoopsDone, run_work};
use crate::ai::engine::session::Session;
use crate::ai::estimate::ModelTerms;
use crate::ai::facts::RunFacts;
use crate::ai::passes::dir_loop::{DirOutcome, DirShared, LoopEnd, UNIT_FIELD, dir_system_prompt};
use crate::ai::passes::planning::{PlanningInputs, Spending, run_planning};
use crate::ai::passes::survey::{
    Survey, SurveyInputs, filter_dir_tools, format_survey_block, format_survey_signals, run_survey,
    survey_report_lines,
};
use crate::ai::passes::synthesis::{
    SynthesisOutcome, SynthesisRun, entries_digest, reusable_synthesis, saved_synthesis,
    synthesis_entries, synthesize,
};
use crate::ai::rules::decide::{Decision, PassChoice, decide};
use crate::ai::rules::discover::{ChildIndex, Discovery, discover_directories, relative};
use crate::ai::rules::fingerprint::{DirState, Freshness, Reason, classify, fingerprint};
use crate::ai::rules::levels::Capacity;
use crate::ai::rules::map::{MAP_LINES, condensed_map};
use crate::ai::rules::mechanical::is_mechanical;
use crate::ai::rules::plan::{
    Plan, Utilization, plan_evaluation, plan_summary_line, unmatched_warning, utilization_line,
};
use crate::ai::rules::status;
use crate::ai::rules::tree_view::{MAX_NODES, prompt_tree};
use crate::ai::tools::{self, Toolbox};
use crate::ai::{InvestigationError, Outcome, PassError};
use crate::cache::now_iso;
use crate::cache::{
    Cache, CacheError, CacheRoot, EntryKind, PLAN_EVALUATION_FILE, PLAN_FILE, RunLock, SURVEY_FILE,
    SYNTHESIS_FILE, WORK_PLAN_FILE,
};
use crate::config::Config;
use crate::grounding::{self, Scope};
use crate::progress::Progress;
use crate::redact::Redactor;
use crate::report::{
    Coverage, Investigation, InvestigationStatus, InvestigationSummary, Spent, TokenTotals,
    coverage_line,
};
use crate::scan::{BaseScan, ScanFilter, ScannedDirs};

/// Depth of the tree the survey sees.
pub(crate) const SURVEY_TREE_DEPTH: usize = 2;
/// Depth of the tree the planner sees.
pub(crate) const PLANNING_TREE_DEPTH: usize = 6;

/// Run the whole investigation for `config.target` using the base scan's
/// results. Only a cache that is unsafe to use is an error; every other
/// failure is an outcome with status `failed` (its one-line error printed
/// once on stderr).
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
    // Outlives the pipeline, so a run that fails or is interrupted still
    // says what it spent.
    let tracker = batch_mode::tracker(config);
    let result = tokio::select! {
        result = pipeline(config, scan, dirs, progress, &cache, opened.is_new, &tracker) => result,
        // Dropping the pipeline aborts the running loops at their next await,
        // after a tool call in progress (and its cache write) has returned.
        _ = interrupted() => {
            return Ok(with_spent(interrupted_outcome(config, &cache, progress), &tracker));
        }
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
            Ok(failed_after(progress, &err.to_string(), Some(&tracker)))
        }
        Err(PassError::Fatal(err @ InvestigationError::Cache(_))) => Err(err),
        Err(PassError::Fatal(err)) => Ok(failed_after(progress, &err.to_string(), Some(&tracker))),
        Err(PassError::Failed(message)) => Ok(failed_after(progress, &message, Some(&tracker))),
    }
}

/// The outcome of an investigation that stopped on `error` after the
/// requests `tracker` counted, said once on stderr.
fn failed_after(progress: &Progress, error: &str, tracker: Option<&TokenTracker>) -> Outcome {
    let mut outcome = Outcome {
        status: Investigation::failed(&crate::ai::api::error::one_line_excerpt(error, 500)),
        ..Outcome::default()
    };
    if let Some(tracker) = tracker {
        outcome = with_spent(outcome, tracker);
    }
    progress.println(&outcome.status.line());
    outcome
}

/// `outcome`, saying what `tracker` counted when the run made any request.
fn with_spent(mut outcome: Outcome, tracker: &TokenTracker) -> Outcome {
    let totals = tracker.totals();
    if totals.requests > 0 {
        outcome.status.spent = Some(Spent {
            api_requests: totals.requests,
            tokens: token_totals(&totals),
            cost_usd: tracker.cost(),
        });
    }
    outcome
}

/// The outcome of an investigation that stopped on `error` before any
/// request, said once on stderr.
fn failed(progress: &Progress, error: &str) -> Outcome {
    failed_after(progress, error, None)
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
    /// The scan's file list, indexed for checking citations.
    grounding: Arc<Scope>,
}

/// Phases 2-10, once the cache is open (`new`: by this run, so empty).
async fn pipeline(
    config: &Config,
    scan: &BaseScan,
    dirs: &ScannedDirs,
    progress: &Progress,
    cache: &Cache,
    new: bool,
    tracker: &Arc<TokenTracker>,
) -> Result<Outcome, PassError> {
    let target = config.target_canonical.as_path();
    batch_mode::refuse_in_flight(config, cache)?;
    let session = new_session(config, progress, tracker)?;
    let session = batch_mode::with_transport(session, config, cache, progress, tracker)?;
    let run = RunContext {
        config,
        scan,
        progress,
        cache,
        session: Arc::new(session),
        target,
        scope: ScanFilter::new(target, &config.scan),
        grounding: Arc::new(Scope::from_scan(scan, &config.target, target)),
    };

    // A new investigation holds no entry: every directory is missing one,
    // which is what no cache to read says, without a lookup per directory.
    let facts = RunFacts::gather(config, scan, dirs, &run.scope, (!new).then_some(cache));
    let first = decide(&facts.facts(), None);
    let first_look = partition(&facts.dirs, &facts.states, target, progress);
    let survey = survey_phase(&run, &facts, first.survey).await?;
    let decision = plan_phase(&run, &facts, &first_look, survey.as_ref(), first).await?;
    report_decision(&decision, progress);
    if decision.work_resumed {
        progress.ai("Work plan loaded from cache.");
    } else if !decision.loops.is_empty() || !decision.mechanical.is_empty() {
        // Work decided under another budget is not carried on.
        let older = facts
            .saved_work
            .as_ref()
            .filter(|work| work.budget == decision.budget.limit && work.batch == decision.batch);
        let work = decision.work().merged_over(older);
        save_json(&run, WORK_PLAN_FILE, &work.to_value(target));
    }
    let allocations: Vec<u32> = decision.loops.iter().map(|l| l.turns).collect();
    let shared = Arc::new(DirShared {
        session: run.session.clone(),
        cache: cache.clone(),
        progress: progress.clone(),
        target: target.to_path_buf(),
        children: ChildIndex::new(&facts.dirs),
        system: dir_system_prompt(&format_survey_block(survey.as_ref()))?,
        dir_tools: filter_dir_tools(&tools::definitions(Toolbox::Dir), survey.as_ref()),
        pool: TurnPool::new(&allocations),
        grounding: run.grounding.clone(),
    });
    // A directory stale only because of a child keeps its file summaries.
    let changed: HashSet<PathBuf> = decision
        .freshness
        .stale
        .iter()
        .filter(|(_, reason)| *reason != Reason::ChildChanged)
        .map(|(dir, _)| dir.clone())
        .collect();
    let options = LoopOptions {
        jobs: config.investigation.jobs,
        max_cost: config.investigation.max_cost,
        budget_for_loops: decision
            .budget
            .limit
            .map(|limit| limit - decision.budget.synthesis_reserve),
    };
    let board = progress.dir_board(decision.loops.len());
    if !run.session.facts().known {
        board.assume_prices();
    }
    let work = run_work(
        shared,
        &facts.stats,
        &decision.loops,
        &decision.mechanical,
        &|dir| changed.contains(dir),
        options,
        &board,
    )
    .await?;
    drop(board);
    // Cached means a summary this run reused, as the original counts it: a
    // directory the plan skipped is settled (`settle_plan`) but has none.
    let cached = decision
        .freshness
        .fresh
        .iter()
        .filter(|dir| cache.has_entry(EntryKind::Dir, &dir.to_string_lossy()))
        .count();
    evaluate(cache, &decision, &work.outcomes, cached, progress)?;
    let synthesis = synthesis_phase(&run, &facts.dirs).await?;
    let mut outcome = finish(&run, &facts.dirs, &decision, cached, synthesis, &work);
    batch_mode::forget_when_complete(cache, &outcome, progress);
    ground_phase(&run, &facts.dirs, &mut outcome);
    Ok(outcome)
}

/// An investigation opened for this run.
pub(crate) struct Opened {
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
pub(crate) fn open_investigation(
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
pub(crate) fn discover(target: &Path, scanned: &ScannedDirs) -> Discovery {
    discover_directories(target, scanned)
}

/// Phase 3: the survey as decided: the saved one, the synthetic one of a
/// tiny target, a new one, or none when nothing is left to investigate.
async fn survey_phase(
    run: &RunContext<'_>,
    facts: &RunFacts,
    choice: PassChoice,
) -> Result<Option<Survey>, PassError> {
    let survey = match choice {
        PassChoice::NotNeeded => return Ok(None),
        PassChoice::Reuse => {
            run.progress.ai("Survey loaded from cache.");
            facts.saved_survey.clone()
        }
        PassChoice::Skip => {
            run.progress.ai(&format!(
                "Survey skipped — {} files, {} dirs (below threshold).",
                facts.total_files,
                facts.dirs.len()
            ));
            Some(Survey::skipped())
        }
        PassChoice::Run => {
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
        }
    };
    for line in survey_report_lines(survey.as_ref()) {
        run.progress.ai(&line);
    }
    Ok(survey)
}

/// What the cache knows about each discovered directory, compared with the
/// fingerprint the scan took (or, for a directory the scan could not
/// examine, with the disk read within `scope`).
pub(crate) fn current_states(
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
pub(crate) fn partition(
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

async fn plan_phase(
    run: &RunContext<'_>,
    facts: &RunFacts,
    first_look: &Freshness,
    survey: Option<&Survey>,
    first: Decision,
) -> Result<Decision, PassError> {
    let (cache, progress) = (run.cache, run.progress);
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
    let target_text = run.target.to_string_lossy();
    let survey_block = format_survey_block(survey);
    let tree_text = planning_tree(run.target, &run.scope, facts);
    let file_signals = format_survey_signals(&run.scan.survey_signals);
    let cached_rel: Vec<String> = first_look
        .fresh
        .iter()
        .map(|d| relative(run.target, d))
        .collect();
    let inputs = PlanningInputs {
        target: &target_text,
        survey_block: &survey_block,
        tree_text: &tree_text,
        file_signals: &file_signals,
        dir_count: facts.dirs.len(),
        cached_dirs: &cached_rel,
        spending: spending(&first),
    };
    match run_planning(&run.session, cache, progress, &inputs).await? {
        Some(proposal) => {
            save_json(run, PLAN_FILE, &proposal);
            Ok(decide(&facts.facts(), Some(&Plan::from_value(&proposal))))
        }
        None => {
            progress.ai("Planning failed, using defaults.");
            Ok(first)
        }
    }
}

/// The tree the planner sees: six levels of it, or, when that many
/// entries would not fit a tree view, the condensed map of its subtrees.
pub(crate) fn planning_tree(target: &Path, scope: &ScanFilter, facts: &RunFacts) -> String {
    let entries = facts.dirs.len() as u64 + facts.stats.of(target).subtree_files;
    if entries > MAX_NODES as u64 {
        condensed_map(target, &facts.children, &facts.stats, MAP_LINES)
    } else {
        prompt_tree(target, scope, PLANNING_TREE_DEPTH)
    }
}

/// What the planner is told the budget buys, when it binds.
pub(crate) fn spending(decision: &Decision) -> Option<Spending> {
    decision.budget.binding.then(|| Spending {
        budget: decision.budget.limit.unwrap_or_default(),
        loops: decision.budget.loops_affordable,
        units: decision.budget.units,
    })
}

/// Save a reusable pass result; failing to is only a warning.
fn save_json(run: &RunContext<'_>, name: &str, value: &Value) {
    if let Err(err) = run.cache.write_json(name, value) {
        run.progress
            .ai(&format!("Warning: could not save {name}: {err}"));
    }
}

/// Phase 5: say what the plan and the budget decided.
pub(crate) fn report_decision(decision: &Decision, progress: &Progress) {
    let applied = &decision.applied;
    if let Some(warning) = unmatched_warning(applied) {
        progress.ai(&warning);
    }
    if let Some(line) = plan_summary_line(applied) {
        progress.ai(&line);
    }
    if !decision.plan.notes.is_empty() {
        progress.ai(&format!("Plan notes: {}", decision.plan.notes));
    }
    if let Some(line) = budget_line(decision) {
        progress.ai(&line);
    }
}

/// What a binding budget decided, in one line.
pub(crate) fn budget_line(decision: &Decision) -> Option<String> {
    let budget = &decision.budget;
    if !budget.binding {
        return None;
    }
    Some(format!(
        "Budget ${:.2}: {} for {} units ({} folded into them), {} summarised from the scan, \
         ${:.2} kept for the synthesis",
        budget.limit.unwrap_or_default(),
        count(decision.loops.len(), "loop", "loops"),
        budget.units,
        count(decision.folded(), "directory", "directories"),
        count(decision.mechanical.len(), "directory", "directories"),
        budget.synthesis_reserve,
    ))
}

/// `1 loop`, `2 loops`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Phase 8: close `meta.json` and write `plan_evaluation.json`.
fn evaluate(
    cache: &Cache,
    decision: &Decision,
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
            tier: decision.applied.tier_of(&outcome.dir),
            turns_allocated: outcome.turns_allocated,
            turns_borrowed: outcome.turns_borrowed,
            turns_used: outcome.turns_used,
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

/// Phase 8: the synthesis pass over the entries of directories that still
/// exist (those [`synthesis_entries`] keeps), or the saved synthesis when
/// those entries have not changed since.
async fn synthesis_phase(
    run: &RunContext<'_>,
    all_dirs: &[PathBuf],
) -> Result<SynthesisOutcome, PassError> {
    let entries: HashMap<PathBuf, Value> = all_dirs
        .iter()
        .filter_map(|dir| {
            let entry = run
                .cache
                .read_entry(EntryKind::Dir, &dir.to_string_lossy())?;
            Some((dir.clone(), entry))
        })
        .collect();
    let entries = synthesis_entries(run.target, all_dirs, &entries);
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
    let model = ModelFacts::of(&run.config.investigation.model).model;
    let budget = run.config.investigation.budget;
    let terms = ModelTerms::for_run(run.session.model(), run.config.investigation.batch);
    let target = run.target.to_string_lossy();
    let synthesis = SynthesisRun {
        session: &run.session,
        cache: run.cache,
        progress: run.progress,
        target: &target,
        capacity: Capacity::new(model.context_window, budget, terms.pricing.prices.input),
        tokens_per_byte: model.tokens_per_byte,
        terms,
        money_left: budget.map(|limit| (limit - run.session.spent()).max(0.0)),
    };
    let outcome = synthesize(&synthesis, &entries).await?.outcome;
    if outcome.submitted {
        save_json(
            run,
            SYNTHESIS_FILE,
            &saved_synthesis(&outcome, &digest, &now_iso()),
        );
    }
    Ok(outcome)
}

/// Phase 9: read the flags, report the cost and coverage, and fill the
/// outcome.
fn finish(
    run: &RunContext<'_>,
    all_dirs: &[PathBuf],
    decision: &Decision,
    cached_count: usize,
    synthesis: SynthesisOutcome,
    work: &LoopsDone,
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
    run.progress
        .ai(&format!("Prompt {}", tracker.cache_summary()));
    if let Some(stats) = session.batch_stats() {
        run.progress.ai(&batch_mode::stats_line(&stats));
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
        .loops
        .iter()
        .flat_map(|l| l.unit.dirs())
        .chain(&decision.mechanical)
        .filter(|d| !has_entry(d))
        .count();
    if work.cap_hit {
        run.progress.ai(&format!(
            "The spending cap left {remaining} directories for a later run; run again to resume."
        ));
    }
    if coverage.folded + coverage.mechanical > 0 {
        run.progress.ai(&coverage_line(&coverage));
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
                budget_usd: decision.budget.limit,
                api_requests: totals.requests,
                tokens: token_totals(&totals),
                cost_usd: tracker.cost(),
                cache_savings_usd: tracker.cache_savings(),
                cost_cap_hit: work.cap_hit,
                batch: session.batch_stats().map(|stats| stats.summary()),
            }),
            spent: None,
        },
        grounding: None,
        interrupted: false,
    }
}

/// Phase 10: check what the report cites against the tree. Pure code over
/// the cache and the scan, so it also runs on a resumed run that made no
/// request; it caches nothing.
fn ground_phase(run: &RunContext<'_>, all_dirs: &[PathBuf], outcome: &mut Outcome) {
    let cache = run.cache;
    let dir_entries: Vec<Value> = all_dirs
        .iter()
        .filter_map(|dir| cache.read_entry(EntryKind::Dir, &dir.to_string_lossy()))
        .collect();
    let file_entries = cache.read_all_entries(EntryKind::File);
    let grounding = grounding::ground(
        &run.grounding,
        grounding::outlines::Source::Disk(run.target.to_path_buf()),
        grounding::Sources {
            dir_entries: &dir_entries,
            file_entries: &file_entries,
        },
        &mut outcome.brief,
        &mut outcome.detailed,
        &mut outcome.flags,
    );
    run.progress.ai(&grounding.summary_line());
    outcome.grounding = Some(grounding);
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

/// The report's token totals from the tracker's.
fn token_totals(totals: &crate::ai::api::cost::TokenTotals) -> TokenTotals {
    TokenTotals {
        input: totals.input_tokens,
        output: totals.output_tokens,
        cache_write: totals.cache_creation_input_tokens,
        cache_read: totals.cache_read_input_tokens,
    }
}
