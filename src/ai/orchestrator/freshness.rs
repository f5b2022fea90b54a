//! Phase 3 as the user sees it: which summaries still hold and which are
//! investigated again, and why (said on stderr). The directories and what
//! the cache knows of them are gathered by [`crate::ai::situation`] (phase 2,
//! shared with `--estimate`); the rule itself is pure and lives in
//! [`crate::ai::rules::fingerprint`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::ai::rules::discover::relative;
use crate::ai::rules::fingerprint::{DirState, Freshness, Reason, classify};
use crate::progress::Progress;

/// Phase 3: split into directories whose summaries still hold and those to
/// investigate (both leaf-first), and say which and why.
pub(crate) fn partition(
    all_dirs: &[PathBuf],
    states: &HashMap<PathBuf, DirState>,
    target: &Path,
    progress: &Progress,
) -> Freshness {
    let freshness = classify(all_dirs, states);
    for dir in &freshness.fresh {
        progress.ai(&format!("Skipping (cached): {}/", relative(target, dir)));
    }
    for (dir, reason) in &freshness.stale {
        let why = match reason {
            Reason::New => continue,
            Reason::Changed => "its contents changed",
            Reason::ChildChanged => "a directory below it is investigated again",
        };
        progress.ai(&format!(
            "Investigating again ({why}): {}/",
            relative(target, dir)
        ));
    }
    if !freshness.fresh.is_empty() {
        progress.ai(&format!("Directories cached: {}", freshness.fresh.len()));
    }
    progress.ai(&format!(
        "Directories to investigate: {}",
        freshness.stale.len()
    ));
    freshness
}
