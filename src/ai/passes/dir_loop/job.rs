//! What a dir loop is handed and what it hands back: a [`DirJob`] per
//! loop, a [`DirOutcome`] (with how it ended, [`LoopEnd`]) when the loop
//! ends. The scheduler ([`crate::ai::passes::scheduler`]) makes the one
//! and reads the other.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::ai::api::ApiError;
use crate::ai::api::cost::LoopUsage;
use crate::ai::engine::agent::ModelRefusal;
use crate::ai::rules::plan::TurnUse;

/// One assignment: a directory, with the directories folded into its unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirJob {
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
    /// Every directory of the assignment: `dir`, then the members.
    pub(crate) fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.dir).chain(&self.members)
    }
}

/// How a dir loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LoopEnd {
    /// The agent called `submit_report`.
    Submitted,
    /// Every turn (borrowed ones included) was used without a report; a
    /// partial entry was flushed.
    TurnLimit,
    /// The context filled up (the loop's context budget, or the model's
    /// window); a partial entry was flushed.
    ContextFull,
    /// The money left could not pay for the loop's next request; a partial
    /// entry was flushed.
    Spent,
    /// The model's tool calls kept being malformed; a partial entry was
    /// flushed.
    Malformed,
    /// The model declined; a partial entry was flushed.
    Refused(ModelRefusal),
    /// The API failed (after retries); the loop stopped.
    ApiError(ApiError),
    /// The budget could not pay for the loop's first request: nothing was
    /// sent, and its directories are left to the scan.
    Unaffordable,
}

/// What a dir loop produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DirOutcome {
    pub dir: PathBuf,
    /// Shown name (relative; the target's name for the root).
    pub shown: String,
    pub summary: Option<String>,
    pub completeness: Option<f64>,
    pub turns: TurnUse,
    pub usage: LoopUsage,
    pub end: LoopEnd,
    /// Paths its flags and report cited that exist, target-relative: where
    /// it points the run next.
    pub leads: Vec<String>,
}

/// What each running loop has spent so far, by its directory: each loop
/// says so after every turn, and the scheduler weighs what a running loop
/// is still expected to cost by it (its spend is in the run's already).
#[derive(Debug, Default)]
pub(crate) struct RunningSpend(Mutex<HashMap<PathBuf, f64>>);

impl RunningSpend {
    /// The loop on `dir` has spent `cost` so far.
    pub(crate) fn set(&self, dir: &Path, cost: f64) {
        self.lock().insert(dir.to_path_buf(), cost);
    }

    /// The loop on `dir` ended.
    pub(crate) fn end(&self, dir: &Path) {
        self.lock().remove(dir);
    }

    /// What every running loop has spent so far.
    pub(crate) fn snapshot(&self) -> HashMap<PathBuf, f64> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, f64>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How many turns a loop is assumed to take before any loop of the run
/// has finished: a handful, over a small directory (the scheduler prices
/// its first loop so, and a loop with no loop below it expects as much).
pub(crate) const PRIOR_LOOP_TURNS: u64 = 3;

/// How many requests each loop that ended took, by its directory: what a
/// loop above them expects of its own later turns (see
/// [`crate::ai::engine::conversation::expected_later`]). Every loop below a
/// directory ends before the directory's loop starts, so what it reads does
/// not depend on how loops overlap (`-j`, `--batch`).
#[derive(Debug, Default)]
pub(crate) struct LoopLengths(Mutex<HashMap<PathBuf, u32>>);

impl LoopLengths {
    /// The loop on `dir` ended after `requests` requests.
    pub(crate) fn ended(&self, dir: &Path, requests: u32) {
        self.lock().insert(dir.to_path_buf(), requests);
    }

    /// What a loop on `dir` expects of its length: the lengths of the
    /// loops that ended below it, in path order, or, below a leaf, the
    /// length the run assumes of a loop before any has finished
    /// ([`PRIOR_LOOP_TURNS`]).
    pub(crate) fn expected_below(&self, dir: &Path) -> Vec<u32> {
        let below = self.below(dir);
        if below.is_empty() {
            vec![u32::try_from(PRIOR_LOOP_TURNS).unwrap_or(u32::MAX)]
        } else {
            below
        }
    }

    /// The lengths of the loops that ended below `dir`, in path order.
    fn below(&self, dir: &Path) -> Vec<u32> {
        let lengths = self.lock();
        let mut below: Vec<(&PathBuf, &u32)> = lengths
            .iter()
            .filter(|(path, _)| path.as_path() != dir && path.starts_with(dir))
            .collect();
        below.sort();
        below.into_iter().map(|(_, n)| *n).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, u32>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
