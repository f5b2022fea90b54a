//! Phase 6, the work: save the work plan unless it was resumed, then run
//! the dir loops and the mechanical entries
//! ([`crate::ai::passes::scheduler::run_work`]) with the synthesis's share
//! held back in the session's purse, and replan as the loops finish
//! ([`Replanning`]: the pure [`Replanner`] decides, the cache keeps every
//! round and the work as it then stands).

use crate::ai::engine::plan_money::PlanMoney;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::{Phases, save_json};
use crate::ai::engine::pool::TurnPool;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirShared, LoopLengths, RunningSpend, dir_system_prompt};
use crate::ai::passes::scheduler::{LoopOptions, LoopsDone, Replanning, run_work};
use crate::ai::passes::survey::{Survey, filter_dir_tools, format_survey_block};
use crate::ai::rules::decide::{Decision, Replanner, SavedWork};
use crate::ai::rules::discover::ChildIndex;
use crate::ai::rules::fingerprint::Reason;
use crate::ai::situation::Situation;
use crate::ai::tools::{self, Toolbox};
use crate::cache::WORK_PLAN_FILE;

/// Phase 6: save the work plan unless it was resumed, then run the work:
/// the dir loops, `-j` at a time under the spending cap and the budget,
/// replanning as they finish, and the mechanical entries.
pub(super) async fn work_phase(
    run: &Phases<'_>,
    situation: &Situation,
    decision: &Decision,
    survey: Option<&Survey>,
) -> Result<LoopsDone, InvestigationError> {
    let (config, progress) = (run.config, &run.ctx.progress);
    // Work decided under another budget is not carried on.
    let older = situation
        .saved_work
        .as_ref()
        .filter(|work| work.budget == decision.work.budget.limit && work.batch == decision.batch);
    save_work_plan(run, decision, older);
    let shared = dir_shared(run, situation, decision, survey)?;
    let options = LoopOptions {
        jobs: config.investigation.jobs,
        max_cost: PlanMoney::of(&config.investigation).max_cost,
        budget: decision.work.budget.limit,
    };
    let board = progress.dir_board(decision.work.loops.len(), config.investigation.budget);
    if !run.ctx.session.model_facts().prices_known() {
        board.assume_prices();
    }
    let purse = run.ctx.session.purse();
    // The loops never spend the synthesis's money.
    purse.hold(decision.work.budget.synthesis_reserve);
    let replanning = Replanning::new(
        Replanner::new(
            situation.inputs(),
            &decision.freshness,
            decision.work.budget.fixed,
        ),
        &run.ctx.cache,
        decision.work.budget.limit,
        decision.batch,
        older,
    );
    let done = run_work(
        shared,
        &decision.work,
        &situation.stats,
        options,
        &board,
        &replanning,
    )
    .await;
    purse.hold(0.0);
    if let Ok(done) = &done
        && done.rounds > 0
    {
        // One line says what the money left bought beyond the decision
        // announced (each round is the full trace's).
        progress.ai(&format!(
            "Replanning: {} rounds bought {} more loops ({} for leads).",
            done.rounds, done.bought_by_rounds, done.bought_for_leads
        ));
    }
    done
}

/// Save the decided work over the `older` work it carries on, unless it
/// was resumed (then say so) or there is no work.
fn save_work_plan(run: &Phases<'_>, decision: &Decision, older: Option<&SavedWork>) {
    if decision.work.resumed {
        run.ctx.progress.ai("Work plan loaded from cache.");
    } else if !decision.work.loops.is_empty()
        || !decision.work.mechanical.is_empty()
        || !decision.work.candidates.is_empty()
    {
        let work = decision.saved_work().merged_over(older);
        save_json(run, WORK_PLAN_FILE, &work.document(run.ctx.target()));
    }
}

/// What every dir loop of the run shares: the run, the system prompt and
/// tools after the survey, the pool of turns the loops were allotted, and
/// the directories whose own files changed.
fn dir_shared(
    run: &Phases<'_>,
    situation: &Situation,
    decision: &Decision,
    survey: Option<&Survey>,
) -> Result<Arc<DirShared>, InvestigationError> {
    let config = run.config;
    let allocations: Vec<u32> = decision.work.loops.iter().map(|l| l.turns).collect();
    // A directory stale only because of a child keeps its file summaries.
    let changed: HashSet<PathBuf> = decision
        .freshness
        .stale
        .iter()
        .filter(|(_, reason)| *reason != Reason::ChildChanged)
        .map(|(dir, _)| dir.clone())
        .collect();
    Ok(Arc::new(DirShared {
        run: run.ctx.clone(),
        children: ChildIndex::new(&situation.dirs),
        system: dir_system_prompt(
            &format_survey_block(survey),
            config.investigation.language.as_deref(),
        )?,
        language: config.investigation.language.clone(),
        dir_tools: filter_dir_tools(&tools::definitions(Toolbox::Dir), survey),
        pool: TurnPool::new(&allocations),
        grounding: run.grounding(),
        changed,
        spend: RunningSpend::default(),
        lengths: LoopLengths::default(),
    }))
}
