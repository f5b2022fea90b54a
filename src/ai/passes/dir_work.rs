//! The dir-loop pass as the scheduler's work: [`DirShared`] runs one loop
//! per job ([`investigate_dir`]) and writes the entries made without the
//! model ([`super::mechanical`]). The scheduler
//! ([`crate::ai::engine::scheduler`]) decides when; this says what.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::dir_loop::{DirShared, investigate_dir};
use super::mechanical::{mechanical_update, write_mechanical};
use crate::ai::engine::scheduler::{DirJob, DirOutcome, DirWork};
use crate::ai::engine::session::Session;
use crate::ai::failure::PassError;
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::mechanical::MechanicalReason;
use crate::progress::Progress;

impl DirWork for DirShared {
    fn session(&self) -> &Session {
        &self.session
    }

    fn progress(&self) -> &Progress {
        &self.progress
    }

    fn target(&self) -> &Path {
        &self.target
    }

    async fn investigate(self: Arc<Self>, job: DirJob) -> Result<DirOutcome, PassError> {
        investigate_dir(&self, &job).await
    }

    fn mechanical_update(
        &self,
        stats: &TreeStats,
        dir: &Path,
        changed: bool,
        reason: MechanicalReason,
    ) -> Result<Option<(String, Value)>, PassError> {
        mechanical_update(self, stats, dir, changed, reason)
    }

    fn write_mechanical(&self, batch: &[(String, Value)]) -> Result<usize, PassError> {
        write_mechanical(self, batch)
    }
}
