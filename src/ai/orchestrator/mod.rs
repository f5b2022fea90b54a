//! The investigation as a short, visible sequence of phases, one function
//! each:
//!
//! 1. open the cache ([`open_investigation`]);
//! 2. gather the situation: discover directories among those the base scan's
//!    walk found, with the fingerprints it took
//!    ([`crate::ai::rules::discover::discover_directories`]: the tree is not
//!    walked again), the scan's figures and the cache's state
//!    ([`Situation`]), and decide what the run does ([`decide`]), saying what
//!    is fresh and stale ([`partition`]);
//! 3. survey, reusing `survey.json`, as decided (`survey_phase`; its request
//!    goes out on the decision's survey choice, [`survey_choice`], before the
//!    rest of the decision is priced, which the survey does not need);
//! 4. plan, reusing `plan.json`, as decided, and decide again with a new
//!    plan (`plan_phase`);
//! 5. say what the plan and the budget decided ([`report_decision`]);
//! 6. run the work: the dir loops, `-j` at a time under the spending cap
//!    and the budget, and the mechanical entries (`work_phase`, which
//!    hands them to [`crate::ai::passes::scheduler`]);
//! 7. write the evaluation (`evaluate`);
//! 8. synthesize, in levels when the summaries do not fit one call,
//!    reusing `synthesis.json` (`synthesis_phase`), then, with `--refine`,
//!    refine its report within the budget, reusing `refinement.json`
//!    (`refine_phase`);
//! 9. collect flags, report the cost and coverage and say whether the
//!    investigation is complete or partial (`finish`);
//! 10. ground the report: check every cited path and symbol against the
//!     tree (`ground_phase`, see [`crate::grounding`]), and gather from the
//!     same entries what the report says of each directory
//!     (`directories.rs`); record how the run ended in `meta.json`, so the
//!     investigation can be read back from the cache later (`cached.rs`).
//!
//! With `--batch` the same phases run; the session sends their requests in
//! rounds through the Message Batches API ([`crate::ai::engine::batch`]),
//! and a run picks up the batch an earlier one left in flight. A run
//! without `--batch` refuses to start while a batch is in flight (it would
//! pay again for what the batch is already doing), and a complete
//! investigation's batch files are removed.
//!
//! Whatever happens, the outcome says what became of the investigation
//! ([`Investigation`](crate::report::Investigation)): a failure anywhere
//! (an unreachable endpoint, a rejected key, an unknown model, an account
//! that cannot pay, a cache that cannot be written) ends it with status
//! `failed` and one line saying why, printed once on stderr and carried by
//! the report. A cache write that fails mid-run stops every new request at
//! once (the engine checks before each one), and the run ends on it. A run
//! that fails once it knows its directories still reports what the cache
//! holds of them (summaries, file summaries, flags), grounded as a
//! finished run's are (`ground.rs`).
//!
//! A run over a tree that has not changed since the last one makes no API
//! request at all: every summary is fresh, the survey, plan and synthesis are
//! read back. Ctrl-C at any point stops new work, lets a tool call in progress
//! finish its cache write, and leaves a cache the next run resumes from.
//!
//! Phases are deterministic glue: what the run does is decided once by the
//! pure [`decide`] (which `--estimate` prices too), the business rules live
//! in pure helpers (`rules::plan`, `rules::fingerprint`, the scheduler's
//! rules, ...) and each model call in its pass module.
//!
//! Where each part lives: [`investigate`], which opens the investigation
//! and its session and concludes the run, and the phases in order
//! (`Phases::open`, `Phases::run`, `Phases::decide`: what every phase reads
//! is `Phases`, with the run's [`RunContext`], resolved once and shared
//! with the passes and loops, and the configuration and scan) are here;
//! each phase group has a file of its own: `open.rs` (phase 1),
//! `freshness.rs` (which directories there are and which summaries still
//! hold), `survey.rs`, `plan.rs` (planning and what the plan and budget
//! decided), `work.rs`, `synthesis.rs`, `refine.rs`, `finish.rs` (the
//! evaluation and the outcome's figures), `ground.rs`, and `outcome.rs`
//! (what a run that fails or is interrupted returns).

mod cached;
mod directories;
mod finish;
mod freshness;
mod ground;
mod open;
mod outcome;
mod plan;
mod refine;
mod survey;
mod synthesis;
mod work;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crate::ai::Outcome;
use crate::ai::api::cost::TokenTracker;
use crate::ai::batch_mode;
use crate::ai::engine::context::RunContext;
use crate::ai::engine::session::Session;
use crate::ai::engine::window::request_tokens;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::survey::Survey;
use crate::ai::rules::decide::{
    Decision, PassChoice, decide, requests_floor, smallest_budget, survey_choice,
};
use crate::ai::situation::Situation;
use crate::ai::tools::{self, Toolbox};
use crate::cache::{Cache, EntryKind, RunLock};
use crate::config::Config;
use crate::grounding::Scope;
use crate::progress::Progress;
use crate::scan::{BaseScan, ScanFilter, ScannedDirs};

use finish::{evaluate, finish};
use ground::{ground_learned, ground_phase};
use open::open_investigation;
use outcome::{failed, failure, interrupted, interrupted_outcome, too_small};
use plan::plan_phase;
use refine::refine_phase;
use survey::{SurveyTree, survey_phase, survey_system};
use synthesis::synthesis_phase;
use work::work_phase;

pub(crate) use cached::{CachedInvestigation, NotCached, TreeChanges, read_cached};
pub(crate) use freshness::partition;
pub(crate) use plan::{planning_tree, report_decision, spending};
pub(crate) use survey::SURVEY_TREE_DEPTH;

/// Run the whole investigation for `config.target` using the base scan's
/// results: open it and its session, then run phases 2-10 in order
/// ([`Phases::run`]), unless Ctrl-C comes first. Only a failure that ends
/// the run is an error ([`InvestigationError::ends_run`]); every other
/// failure is an outcome with status `failed` (its one-line error printed
/// once on stderr).
pub(crate) async fn investigate(
    config: &Config,
    scan: &BaseScan,
    dirs: &ScannedDirs,
    progress: &Progress,
    reserved: Option<RunLock>,
) -> Result<Outcome, InvestigationError> {
    progress.ai("Starting multi-pass investigation...");
    let opened = open_investigation(config, progress, reserved).and_then(|opened| {
        let tree = SurveyTree::start(config, &opened.cache);
        Ok((opened, tree, Session::for_run(config, progress)?))
    });
    let (opened, survey_tree, session) = match opened {
        Ok(opened) => opened,
        Err(err) if err.ends_run() => return Err(err),
        Err(err) => return Ok(failed(progress, &err.to_string())),
    };
    // The run lock is held until the investigation ends.
    let (cache, _lock) = (opened.cache, opened.lock);
    // Outlives the phases, so a run that fails or is interrupted still
    // says what it spent.
    let tracker = session.tracker_handle();
    // The directories in scope, once the run knows them: a run that fails
    // after that still reports what the cache holds of them.
    let mut reached: Option<Vec<PathBuf>> = None;
    let phases = async {
        let opened_run = (opened.is_new, session, survey_tree);
        let run = Phases::open(config, (scan, dirs), &cache, opened_run, progress).await?;
        run.run(dirs, &mut reached).await
    };
    let result = tokio::select! {
        result = phases => result,
        // Dropping the phases aborts the running loops at their next
        // await, after a tool call in progress (and its cache write) has
        // returned.
        _ = interrupted() => {
            progress.clear_live();
            record_spending(&cache, &tracker);
            return Ok(interrupted_outcome(config, &cache, progress, &tracker));
        }
    };
    conclude(
        result,
        &cache,
        &tracker,
        reached.as_deref(),
        (config, scan, progress),
    )
}

/// What the run returns once its phases ended on `result`: the outcome,
/// said on stderr, or, for a run that failed, what the cache holds of the
/// directories it `reached` (grounded as a finished run's), with what
/// `tracker` says it spent; an error only for what ends the run.
fn conclude(
    result: Result<Outcome, InvestigationError>,
    cache: &Cache,
    tracker: &TokenTracker,
    reached: Option<&[PathBuf]>,
    (config, scan, progress): (&Config, &BaseScan, &Progress),
) -> Result<Outcome, InvestigationError> {
    // What this run paid for joins what the investigation cost in all,
    // whatever became of the run.
    record_spending(cache, tracker);
    let failed_learning = |error: &str| {
        let mut outcome = failure(error, Some(tracker));
        if let Some(all_dirs) = reached {
            let scope = Scope::from_scan(scan, &config.target, cache.target());
            ground_learned(cache, &scope, progress, all_dirs, &mut outcome);
        }
        progress.println(&outcome.status.line());
        outcome
    };
    // A cache write that failed is why the run ended, whatever the phase
    // that met it made of it, and a run that ended anyway did not keep
    // all it paid for.
    if let Some(fault) = cache.write_fault() {
        return Ok(failed_learning(&fault.to_string()));
    }
    match result {
        Ok(mut outcome) => {
            if let Some(summary) = &mut outcome.status.summary {
                summary.all_runs = cache.spending();
            }
            // Only an agent that was asked can have produced nothing.
            let asked = tracker.totals().requests > 0;
            if asked && outcome.brief.is_empty() && outcome.detailed.is_empty() {
                progress.ai("Warning: agent produced no output.");
            }
            progress.ai(&outcome.status.line());
            Ok(outcome)
        }
        Err(err) if err.ends_run() => Err(err),
        Err(err) => Ok(failed_learning(&err.to_string())),
    }
}

/// What every phase of one run reads: the run's context, which the passes
/// and loops share, and what only the orchestrator reads.
struct Phases<'a> {
    ctx: Arc<RunContext>,
    config: &'a Config,
    scan: &'a BaseScan,
    /// The scan's file list, indexed for checking citations: built when
    /// first needed (the dir loops, or the report), so indexing 20,000
    /// files does not delay the survey's request.
    grounding: OnceLock<Arc<Scope>>,
    /// The investigation was started by this run: it holds no entry yet.
    is_new: bool,
    /// The survey's tree, being walked.
    survey_tree: SurveyTree,
}

/// What phases 2-5 decided.
enum Decided {
    /// The work to run, with the survey it was decided on.
    Work(Box<SurveyedDecision>),
    /// The budget cannot buy an investigation of this tree (the note says
    /// which can): nothing is sent.
    TooSmall(String),
}

/// The run's decision and the survey it rests on.
struct SurveyedDecision {
    decision: Decision,
    survey: Option<Survey>,
}

impl<'a> Phases<'a> {
    /// What the phases read, once the run may send: no batch in flight
    /// that this run would pay for again, the session's transport (see
    /// [`batch_mode`]), the redactions a resumed investigation learnt, the
    /// learning of every value in the tree begun (it runs beside the survey
    /// and the plan; the tools wait for it before their first result), and
    /// the batches `--cancel-batch` canceled read back.
    async fn open(
        config: &'a Config,
        (scan, dirs): (&'a BaseScan, &ScannedDirs),
        cache: &Cache,
        (is_new, session, survey_tree): (bool, Session, SurveyTree),
        progress: &Progress,
    ) -> Result<Phases<'a>, InvestigationError> {
        batch_mode::refuse_in_flight(config, cache)?;
        let session = batch_mode::with_transport(session, config, cache, progress)?;
        if !is_new {
            crate::ai::tools::recall_earlier_redactions(cache, session.redactor(), progress);
        }
        let learner = (session.shared_redactor(), session.first_request());
        let (target, files) = (&config.target_canonical, dirs.files_by_dir());
        tools::learning::start_learning(learner, target, files, (cache, true), progress);
        batch_mode::settle_canceled(&session).await?;
        // A new investigation holds no entry: every directory is missing
        // one, which is what no cache to read says, without a lookup per
        // directory.
        Ok(Phases {
            ctx: Arc::new(RunContext {
                session,
                cache: cache.clone(),
                progress: progress.clone(),
                scope: ScanFilter::new(&config.target_canonical, &config.scan),
            }),
            config,
            scan,
            grounding: OnceLock::new(),
            is_new,
            survey_tree,
        })
    }

    /// Phases 2-10, in order, over the scan's directories `dirs`; `reached`
    /// holds the directories in scope as soon as the run knows them.
    async fn run(
        &self,
        dirs: &ScannedDirs,
        reached: &mut Option<Vec<PathBuf>>,
    ) -> Result<Outcome, InvestigationError> {
        let known = (!self.is_new).then_some(&self.ctx.cache);
        let situation = Situation::gather(self.config, self.scan, dirs, &self.ctx.scope, known);
        *reached = Some(situation.dirs.clone());
        let decision = match self.decide(&situation).await? {
            Decided::Work(decision) => decision,
            Decided::TooSmall(note) => return Ok(too_small(note)),
        };
        let work = work_phase(
            self,
            &situation,
            &decision.decision,
            decision.survey.as_ref(),
        )
        .await?;
        let cache = &self.ctx.cache;
        // Cached means a summary this run reused, as the original counts
        // it: a directory the plan skipped is settled (`settle_plan`) but
        // has none.
        let cached = decision
            .decision
            .freshness
            .fresh
            .iter()
            .filter(|dir| cache.has_entry(EntryKind::Dir, &dir.to_string_lossy()))
            .count();
        evaluate(
            cache,
            &decision.decision,
            &work.outcomes,
            cached,
            &self.ctx.progress,
        )?;
        // No phase from here writes a dir entry: the synthesis, the
        // refinement, the figures and the report read them once, here.
        let entries = cache.dir_entries(&situation.dirs);
        let synthesis = synthesis_phase(self, &situation.dirs, &entries).await?;
        let refined = refine_phase(self, &situation.dirs, synthesis).await?;
        let mut outcome = finish(
            self,
            &situation.inputs(),
            &entries,
            &decision.decision,
            cached,
            refined.synthesis.clone(),
            &work,
        );
        refined.apply(&mut outcome);
        batch_mode::forget_when_complete(cache, &outcome, &self.ctx.progress);
        ground_phase(self, &situation.dirs, entries, &mut outcome);
        cached::record_last_run(cache, &outcome.status)?;
        if let Some(report) = &self.config.output.inside_target {
            cache.record_own_output(report)?;
        }
        Ok(outcome)
    }

    /// Phases 2-5: say what is fresh and stale, survey (its request goes
    /// out on the decision's survey choice, before the rest of the first
    /// decision is priced, which the survey does not need), plan, and say
    /// what the plan and the budget decided; or the note of a budget too
    /// small to buy an investigation.
    async fn decide(&self, situation: &Situation) -> Result<Decided, InvestigationError> {
        let progress = &self.ctx.progress;
        let first_look = partition(
            &situation.dirs,
            &situation.states,
            self.ctx.target(),
            progress,
        );
        let choice = survey_choice(&situation.inputs());
        let system = (choice == PassChoice::Run)
            .then(|| survey_system(self))
            .transpose()?;
        // A budget is weighed before the survey goes; without one the
        // first decision waits until the survey's request is out.
        let first = situation.budget.map(|_| decide(&situation.inputs(), None));
        if let Some(first) = &first
            && let Some(note) = too_small_for(self, situation, system.as_deref(), first)
        {
            return Ok(Decided::TooSmall(note));
        }
        let survey = survey_phase(self, situation, choice, system).await?;
        let first = first.unwrap_or_else(|| decide(&situation.inputs(), None));
        let decision = plan_phase(self, situation, &first_look, survey.as_ref(), first).await?;
        report_decision(
            &decision,
            situation.dirs.len(),
            self.ctx.session.plan_meter(),
            progress,
        );
        Ok(Decided::Work(Box::new(SurveyedDecision {
            decision,
            survey,
        })))
    }

    /// The tree as the scan saw it, for checking citations.
    fn grounding(&self) -> Arc<Scope> {
        self.grounding
            .get_or_init(|| {
                Arc::new(Scope::from_scan(
                    self.scan,
                    &self.config.target,
                    self.ctx.target(),
                ))
            })
            .clone()
    }
}

/// Whether the budget is too small to buy an investigation of this tree
/// (the survey's prompt is `survey`, when one would be sent; `first` the
/// run's first decision): the note that says so and names the smallest
/// budget that buys one. Nothing is sent then: the scan report stands.
fn too_small_for(
    run: &Phases<'_>,
    situation: &Situation,
    survey: Option<&str>,
    first: &Decision,
) -> Option<String> {
    let budget = situation.budget?;
    if first.freshness.stale.is_empty() && first.work.loops.is_empty() {
        return None;
    }
    let survey_tokens = survey.map(|system| {
        let kickoff = vec![crate::ai::api::Message::user_blocks(vec![
            crate::ai::api::ContentBlock::text(crate::ai::prompts::kickoff::SURVEY),
        ])];
        request_tokens(
            system,
            &kickoff,
            &tools::definitions(Toolbox::Survey),
            run.ctx.session.token_estimate(),
        )
    });
    // Most runs can: they buy a loop, and their budget pays for the
    // requests such a run sends. Only one that cannot looks for the
    // smallest that can.
    if !first.work.loops.is_empty() && budget >= requests_floor(&situation.inputs(), survey_tokens)
    {
        return None;
    }
    let smallest = smallest_budget(&situation.inputs(), survey_tokens);
    let session = &run.ctx.session;
    let meter = session.plan_meter();
    (budget < smallest).then(|| {
        format!(
            "the {} ({}) cannot buy an investigation of this tree, so no request was sent; the \
             smallest {} that buys one is {} ({})",
            meter.ceiling_name(),
            session.show_plan(budget),
            meter.ceiling_name(),
            session.show_plan(smallest),
            meter.flag_for(smallest)
        )
    })
}

/// Add what `tracker` counted to the investigation's record of what its
/// runs spent. A write that fails is the cache's write fault, which ends
/// the run as any other.
fn record_spending(cache: &Cache, tracker: &TokenTracker) {
    let totals = tracker.totals();
    let _ = cache.add_spending(tracker.cost(), totals.requests);
}

/// Save a reusable pass result; failing to is only a warning.
fn save_json<T: serde::Serialize + ?Sized>(run: &Phases<'_>, name: &str, value: &T) {
    if let Err(err) = run.ctx.cache.write_json(name, value) {
        run.ctx
            .progress
            .ai(&format!("Warning: could not save {name}: {err}"));
    }
}
