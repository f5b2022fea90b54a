//! What the scheduler runs, and what it gets back: a [`DirJob`] per loop,
//! a [`DirOutcome`] when the loop ends, and the [`DirWork`] that runs them
//! and writes the entries made without the model.
//!
//! The dir-loop pass implements [`DirWork`] and hands it to
//! [`super::run_work`]: the engine schedules the work and knows no pass.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::ai::api::cost::LoopUsage;
use crate::ai::engine::session::Session;
use crate::ai::failure::PassError;
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::mechanical::MechanicalReason;
use crate::ai::rules::plan::TurnUse;
use crate::progress::Progress;

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
    /// The context budget ran out; a partial entry was flushed.
    Budget,
    /// The model declined (this says how); a partial entry was flushed.
    Refused(String),
    /// The API failed (after retries); the loop stopped.
    ApiError(String),
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
}

/// The pass behind the scheduler: it runs one loop per job and writes the
/// mechanical entries of the directories no loop investigates.
pub(crate) trait DirWork: Send + Sync + 'static {
    /// The session every loop of the run sends through.
    fn session(&self) -> &Session;
    /// Where progress lines go.
    fn progress(&self) -> &Progress;
    /// The canonical target.
    fn target(&self) -> &Path;
    /// Run the loop of `job` to its end.
    fn investigate(
        self: Arc<Self>,
        job: DirJob,
    ) -> impl Future<Output = Result<DirOutcome, PassError>> + Send + 'static;
    /// The mechanical entry `dir` should have now (its path and the entry),
    /// or `None` when its cached one still holds; `changed` says its own
    /// files changed since then.
    fn mechanical_update(
        &self,
        stats: &TreeStats,
        dir: &Path,
        changed: bool,
        reason: MechanicalReason,
    ) -> Result<Option<(String, Value)>, PassError>;
    /// Write a batch of mechanical entries at once; how many were written.
    fn write_mechanical(&self, batch: &[(String, Value)]) -> Result<usize, PassError>;
}
