//! Phases 2 and 3's look at the tree: which directories the investigation
//! considers (from the base scan's, not a new walk), what the cache knows
//! about each, and which summaries still hold and which are investigated
//! again (said on stderr). The rules themselves are pure and live in
//! [`crate::ai::rules::discover`] and [`crate::ai::rules::fingerprint`];
//! `--estimate` gathers the same facts through [`crate::ai::facts`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::ai::rules::discover::{Discovery, discover_directories, relative};
use crate::ai::rules::fingerprint::{DirState, Freshness, Reason, classify, fingerprint};
use crate::cache::{Cache, EntryKind};
use crate::progress::Progress;
use crate::scan::{ScanFilter, ScannedDirs};

/// Phase 2: every directory to consider under the canonical `target`,
/// leaf-first, from the base scan's directories (see
/// [`discover_directories`]).
pub(crate) fn discover(target: &Path, scanned: &ScannedDirs) -> Discovery {
    discover_directories(target, scanned)
}

/// What the cache knows about each discovered directory, compared with the
/// fingerprint the scan took (or, for a directory the scan could not
/// examine, with the disk read within `scope`).
pub(crate) fn current_states(
    cache: &Cache,
    discovery: &Discovery,
    scope: Option<&ScanFilter>,
) -> HashMap<PathBuf, DirState> {
    discovery
        .iter()
        .map(|(dir, scanned)| {
            let entry = cache.read_entry(EntryKind::Dir, &dir.to_string_lossy());
            let current = match scanned {
                Some(fingerprint) => fingerprint.to_string(),
                None => fingerprint(dir, scope),
            };
            (dir.clone(), DirState::of(entry.as_ref(), &current))
        })
        .collect()
}

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
