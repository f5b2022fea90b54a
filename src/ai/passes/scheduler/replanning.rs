//! The run's replanning as the loops finish: the pure [`Replanner`]
//! decides each round; each is kept in `replans.json`, and the work as it
//! then stands in `work_plan.json`, both written atomically, so a resumed
//! run carries on with what the rounds bought instead of deciding it again.
//!
//! Its edges: it decides nothing itself and writes only those two files;
//! when a round is held is the scheduler's (`mod.rs`).

use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::records::{KeptRound, RoundRecord};
use crate::ai::rules::decide::{PlannedLoop, Replanner, Round, RoundInput, SavedLoop, SavedWork};
use crate::cache::{Cache, REPLANS_FILE, WORK_PLAN_FILE, now_iso};

/// How the run decides again as loops finish, and keeps what it decided.
pub(crate) struct Replanning<'a> {
    replanner: Replanner<'a>,
    cache: &'a Cache,
    budget: Option<f64>,
    batch: bool,
    /// The saved work this run's is merged over.
    older: Option<&'a SavedWork>,
    /// Every round kept so far, earlier runs' first.
    rounds: Mutex<Vec<Value>>,
    started_at: String,
}

impl<'a> Replanning<'a> {
    /// Rounds decided by `replanner` and kept in `cache`, for work decided
    /// under `budget` (with `--batch` when `batch`), merged over the work
    /// an earlier run saved (`older`).
    pub(crate) fn new(
        replanner: Replanner<'a>,
        cache: &'a Cache,
        budget: Option<f64>,
        batch: bool,
        older: Option<&'a SavedWork>,
    ) -> Replanning<'a> {
        Replanning {
            replanner,
            cache,
            budget,
            batch,
            older,
            rounds: Mutex::new(earlier_rounds(cache)),
            started_at: now_iso(),
        }
    }

    /// Decide a round.
    pub(crate) fn round(&self, input: &RoundInput<'_>) -> Round {
        self.replanner.round(input)
    }

    /// Keep a round's `record` and the work as it now stands (bought loops,
    /// stale directories left to the scan, open candidates), so a resumed
    /// run carries on with it. A file that cannot be written is said in
    /// the returned warnings; the run goes on.
    pub(crate) fn keep(
        &self,
        record: RoundRecord,
        loops: &[PlannedLoop],
        mechanical: &[PathBuf],
        candidates: &[PlannedLoop],
    ) -> Vec<String> {
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
        let mut warnings = Vec::new();
        let mut warn = |name: &str, err: &dyn std::fmt::Display| {
            warnings.push(format!("Warning: could not save {name}: {err}"));
        };
        if let Err(err) = self
            .cache
            .write_json(WORK_PLAN_FILE, &work.document(self.cache.target()))
        {
            warn(WORK_PLAN_FILE, &err);
        }
        let kept = KeptRound {
            round: record,
            run_started_at: self.started_at.clone(),
            budget_usd: self.budget,
        };
        let mut rounds = self.rounds.lock().unwrap_or_else(|e| e.into_inner());
        match serde_json::to_value(kept) {
            Ok(kept) => rounds.push(kept),
            Err(err) => warn(REPLANS_FILE, &err),
        }
        if let Err(err) = self
            .cache
            .write_json(REPLANS_FILE, &json!({ "rounds": *rounds }))
        {
            warn(REPLANS_FILE, &err);
        }
        warnings
    }
}

/// The rounds `replans.json` holds.
fn earlier_rounds(cache: &Cache) -> Vec<Value> {
    cache
        .read_json(REPLANS_FILE)
        .and_then(|saved| saved.get("rounds").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}
