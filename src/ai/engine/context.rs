//! What a run resolved once and every phase, pass, loop and tool call
//! reads: the [`Session`] every request goes through (it holds the model's
//! catalog facts, resolved with the configuration), the investigation's
//! cache, where progress goes, and the base scan's scope, built once.
//!
//! It is owned and shared in an `Arc`, so the directory loops the scheduler
//! spawns hold it too. What only a directory loop needs (its assignment,
//! the turn pool, the survey's toolbox) is the loop's
//! ([`crate::ai::passes::dir_loop::DirShared`]); what only the
//! orchestrator needs (the configuration, the scan) stays there.

use std::path::Path;

use crate::ai::engine::session::Session;
use crate::ai::tools::ToolContext;
use crate::cache::Cache;
use crate::progress::Progress;
use crate::scan::ScanFilter;

/// The run's handles, resolved once.
pub(crate) struct RunContext {
    /// The one door to the model.
    pub session: Session,
    /// This investigation's cache; its target is the canonical target.
    pub cache: Cache,
    /// Where progress lines go.
    pub progress: Progress,
    /// The base scan's scope (hidden names, `-x`, ignore files): the tools
    /// show the model only what the scan kept.
    pub scope: ScanFilter,
}

impl RunContext {
    /// The canonical target: the sandbox root of every tool.
    pub(crate) fn target(&self) -> &Path {
        self.cache.target()
    }

    /// What a tool call made for `directory` (its name in logs and on
    /// stderr) works with: the run's cache, redactor, scope and progress,
    /// at turn 0 and outside any directory's assignment. A loop sets the
    /// rest with struct update syntax.
    pub(crate) fn tools<'a>(&'a self, directory: &'a str) -> ToolContext<'a> {
        ToolContext {
            scope: Some(&self.scope),
            ..ToolContext::new(
                &self.cache,
                self.session.redactor(),
                &self.progress,
                directory,
            )
        }
    }
}
