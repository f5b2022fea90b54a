//! One investigation of a target, whoever asks for it: `luminos DIR` and
//! the MCP server's `investigate` tool both take the same four steps here.
//!
//! 1. [`reserve_target`]: the target's run lock, taken before the scan, so
//!    a second run on a busy target stops at once rather than after
//!    scanning a large tree.
//! 2. [`scan_target`]: the base scan, with the directories (and their
//!    fingerprints) that spare the investigation a second walk. It blocks;
//!    the caller decides where it runs (the binary on its own thread with
//!    Ctrl-C watched, the server off its async threads).
//! 3. [`Reserved::investigate`]: the multi-pass investigation
//!    ([`orchestrator::investigate`]), resumed from the cache.
//! 4. The report of the scan and what the investigation produced.
//!
//! Its edges: nothing here prints a report or knows a protocol; what is
//! said before the scan, and what a caller does with the report, is the
//! caller's.

use crate::ai::InvestigationError;
use crate::ai::orchestrator;
use crate::cache::{CacheRoot, RunLock};
use crate::config::Config;
use crate::progress::Progress;
use crate::report::Report;
use crate::scan::{self, BaseScan, ScannedDirs};

/// A target held for one investigation.
pub(crate) struct Reserved {
    /// The run lock; `None` when the cache cannot be written yet (the
    /// investigation reports it, and the report still prints).
    lock: Option<RunLock>,
}

/// What the base scan of a target gives its investigation.
pub(crate) struct Scanned {
    pub base: BaseScan,
    pub dirs: ScannedDirs,
}

/// What an investigation of a target ended with.
pub(crate) struct Investigated {
    /// The scan and what the investigation produced; its `investigation`
    /// says how it went.
    pub report: Report,
    /// Ctrl-C (or a cancelled call) stopped it; the next run resumes.
    pub interrupted: bool,
}

/// Take the target's run lock (step 1). A busy target, or a cache root
/// that can never be used, ends here; a cache that cannot be written is
/// not an error yet.
pub(crate) fn reserve_target(config: &Config) -> Result<Reserved, InvestigationError> {
    let locked = CacheRoot::open(&config.cache_root)
        .and_then(|root| root.lock_run(&config.target_canonical, false));
    match locked.map_err(InvestigationError::from) {
        Ok(lock) => Ok(Reserved { lock: Some(lock) }),
        Err(err) if err.ends_run() => Err(err),
        Err(_) => Ok(Reserved { lock: None }),
    }
}

/// The base scan of `config.target` (step 2); it blocks.
pub(crate) fn scan_target(config: &Config, progress: &Progress) -> Scanned {
    let (base, dirs) = scan::scan_with_dirs(&config.target, &config.scan, progress);
    Scanned { base, dirs }
}

impl Reserved {
    /// Investigate the tree `scanned` found and build its report (steps 3
    /// and 4).
    pub(crate) async fn investigate(
        self,
        config: &Config,
        scanned: Scanned,
        progress: &Progress,
    ) -> Result<Investigated, InvestigationError> {
        let Scanned { base, dirs } = scanned;
        let outcome = orchestrator::investigate(config, &base, &dirs, progress, self.lock).await?;
        drop(dirs);
        Ok(Investigated {
            interrupted: outcome.interrupted,
            report: outcome.into_report(base),
        })
    }
}
