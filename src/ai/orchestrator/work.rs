//! Phase 6, the work: save the work plan unless it was resumed, then run
//! the dir loops and the mechanical entries
//! ([`crate::ai::passes::scheduler::run_work`]) with the synthesis's share
//! held back in the session's purse, and replan as the loops finish
//! ([`WorkReplanning`]: the pure [`Replanner`] decides, the cache keeps
//! every round and the work as it then stands).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{Phases, save_json};
use crate::ai::engine::pool::TurnPool;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{DirShared, RunningSpend, dir_system_prompt};
use crate::ai::passes::scheduler::{LoopOptions, LoopsDone, Replanning, run_work};
use crate::ai::passes::survey::{Survey, filter_dir_tools, format_survey_block};
use crate::ai::rules::decide::{
    Decision, PlannedLoop, Replanner, Round, RoundInput, SavedLoop, SavedWork,
};
use crate::ai::rules::discover::ChildIndex;
use crate::ai::rules::fingerprint::Reason;
use crate::ai::situation::Situation;
use crate::ai::tools::{self, Toolbox};
use crate::cache::{Cache, REPLANS_FILE, WORK_PLAN_FILE, now_iso};
use crate::progress::Progress;

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
    if decision.work.resumed {
        progress.ai("Work plan loaded from cache.");
    } else if !decision.work.loops.is_empty()
        || !decision.work.mechanical.is_empty()
        || !decision.work.candidates.is_empty()
    {
        let work = decision.saved_work().merged_over(older);
        save_json(run, WORK_PLAN_FILE, &work.to_value(run.ctx.target()));
    }
    let allocations: Vec<u32> = decision.work.loops.iter().map(|l| l.turns).collect();
    // A directory stale only because of a child keeps its file summaries.
    let changed: HashSet<PathBuf> = decision
        .freshness
        .stale
        .iter()
        .filter(|(_, reason)| *reason != Reason::ChildChanged)
        .map(|(dir, _)| dir.clone())
        .collect();
    let shared = Arc::new(DirShared {
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
    });
    let options = LoopOptions {
        jobs: config.investigation.jobs,
        max_cost: config.investigation.max_cost,
        budget: decision.work.budget.limit,
    };
    let board = progress.dir_board(decision.work.loops.len(), config.investigation.budget);
    if !run.ctx.session.model_facts().prices_known() {
        board.assume_prices();
    }
    let purse = run.ctx.session.purse();
    // The loops never spend the synthesis's money.
    purse.hold(decision.work.budget.synthesis_reserve);
    let replanning = WorkReplanning {
        replanner: Replanner::new(
            situation.inputs(),
            &decision.freshness,
            decision.work.budget.fixed,
        ),
        cache: &run.ctx.cache,
        target: run.ctx.target(),
        budget: decision.work.budget.limit,
        batch: decision.batch,
        older,
        rounds: Mutex::new(earlier_rounds(&run.ctx.cache)),
        started_at: now_iso(),
        progress,
    };
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

/// The rounds `replans.json` holds.
fn earlier_rounds(cache: &Cache) -> Vec<Value> {
    cache
        .read_json(REPLANS_FILE)
        .and_then(|saved| saved.get("rounds").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

/// The run's replanning: the pure [`Replanner`] decides each round; each is
/// kept in `replans.json`, and the work as it then stands in
/// `work_plan.json`, both written atomically, so a resumed run carries on
/// with what the rounds bought instead of deciding it again.
struct WorkReplanning<'a> {
    replanner: Replanner<'a>,
    cache: &'a Cache,
    target: &'a Path,
    budget: Option<f64>,
    batch: bool,
    /// The saved work this run's is merged over.
    older: Option<&'a SavedWork>,
    /// Every round kept so far, earlier runs' first.
    rounds: Mutex<Vec<Value>>,
    started_at: String,
    progress: &'a Progress,
}

impl Replanning for WorkReplanning<'_> {
    fn round(&self, input: &RoundInput<'_>) -> Round {
        self.replanner.round(input)
    }

    fn keep(
        &self,
        mut record: Value,
        loops: &[PlannedLoop],
        mechanical: &[PathBuf],
        candidates: &[PlannedLoop],
    ) {
        let saved = |list: &[PlannedLoop]| -> Vec<SavedLoop> {
            list.iter()
                .map(|l| SavedLoop {
                    unit: l.unit.clone(),
                    turns: l.turns,
                })
                .collect()
        };
        let work = SavedWork {
            budget: self.budget,
            batch: self.batch,
            loops: saved(loops),
            mechanical: mechanical.to_vec(),
            candidates: saved(candidates),
        }
        .merged_over(self.older);
        let warn = |name: &str, err: &dyn std::fmt::Display| {
            self.progress
                .ai(&format!("Warning: could not save {name}: {err}"));
        };
        if let Err(err) = self
            .cache
            .write_json(WORK_PLAN_FILE, &work.to_value(self.target))
        {
            warn(WORK_PLAN_FILE, &err);
        }
        record["run_started_at"] = json!(self.started_at);
        record["budget_usd"] = json!(self.budget);
        let mut rounds = self.rounds.lock().unwrap_or_else(|e| e.into_inner());
        rounds.push(record);
        if let Err(err) = self
            .cache
            .write_json(REPLANS_FILE, &json!({ "rounds": *rounds }))
        {
            warn(REPLANS_FILE, &err);
        }
    }
}
