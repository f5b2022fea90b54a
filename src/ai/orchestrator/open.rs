//! Phase 1, opening the investigation: the run lock, the cache (found,
//! started, or started again over a `--no-redact` one), `meta.json`.
//! Nothing here reads the tree or calls the API.

use crate::ai::failure::InvestigationError;
use crate::cache::now_iso;
use crate::cache::{Cache, CacheRoot, RunLock};
use crate::config::Config;
use crate::progress::Progress;

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
    progress.ai_detail(&format!("Investigation ID: {}{resumed}", id.id));
    progress.ai(&format!("Cache: {}/{resumed}", cache.dir().display()));
    Ok(Opened {
        cache,
        lock,
        is_new: id.is_new,
    })
}
