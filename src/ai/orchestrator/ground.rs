//! Phase 10, grounding the report: check every path and symbol it cites
//! against the tree and the cached entries, on every run (a resumed one
//! too). The checking is [`crate::grounding`]'s; this only feeds it the
//! run's entries and keeps its result in the outcome, with the report's
//! `directories` built from the same entries (`directories.rs`). A run
//! that failed after it knew its directories is grounded the same way
//! ([`ground_learned`]): its report carries what the cache holds. So is a
//! report read back from the cache (`cached.rs`).

use std::collections::HashMap;
use std::path::PathBuf;

use super::Phases;
use super::directories::directories;
use crate::ai::Outcome;
use crate::cache::{Cache, DirEntry, FileEntry};
use crate::grounding::{self, Scope};
use crate::progress::Progress;

/// Phase 10: check what the report cites against the tree. Pure code over
/// the cache and the scan, so it also runs on a resumed run that made no
/// request; it caches nothing.
pub(super) fn ground_phase(
    run: &Phases<'_>,
    all_dirs: &[PathBuf],
    entries: HashMap<PathBuf, DirEntry>,
    outcome: &mut Outcome,
) {
    let ctx = &run.ctx;
    let scope = run.grounding();
    ground_outcome(
        &ctx.cache,
        &scope,
        &ctx.progress,
        all_dirs,
        entries,
        outcome,
    );
}

/// What a run that failed after it knew its directories learned: the
/// flags the cache holds for this investigation, grounded, and its
/// `directories` (with `none` for those no summary reached), from the
/// entries already paid for.
pub(super) fn ground_learned(
    cache: &Cache,
    scope: &Scope,
    progress: &Progress,
    all_dirs: &[PathBuf],
    outcome: &mut Outcome,
) {
    outcome.flags = cache.read_flags_checked().flags;
    let entries = cache.dir_entries(all_dirs);
    ground_outcome(cache, scope, progress, all_dirs, entries, outcome);
}

/// Ground `outcome` against `scope` and the directories of `all_dirs`
/// with their `entries`, and fill its `directories` from the same entries.
pub(super) fn ground_outcome(
    cache: &Cache,
    scope: &Scope,
    progress: &Progress,
    all_dirs: &[PathBuf],
    mut entries: HashMap<PathBuf, DirEntry>,
    outcome: &mut Outcome,
) {
    // In the directories' order; moved, not copied. The grounding checks
    // what a model wrote: a summary built from the scan quotes the scan's
    // own names, and counting it would only flatter the figures.
    let (mut dir_entries, from_scan): (Vec<DirEntry>, Vec<DirEntry>) = all_dirs
        .iter()
        .filter_map(|dir| entries.remove(dir))
        .partition(|entry| !entry.mechanical);
    let file_entries = cache.all::<FileEntry>();
    let grounding = grounding::ground(
        scope,
        grounding::outlines::Source::Disk(cache.target().to_path_buf()),
        grounding::Sources {
            dir_entries: &dir_entries,
            file_entries: &file_entries,
        },
        &mut outcome.brief,
        &mut outcome.detailed,
        &mut outcome.flags,
        &mut outcome.sections,
    );
    progress.ai(&grounding.summary_line());
    outcome.grounding = Some(grounding);
    // The report's `directories` come from the same entries, every one.
    dir_entries.extend(from_scan);
    outcome.directories = directories(cache.target(), all_dirs, &dir_entries, &file_entries);
}
