//! Phase 10, grounding the report: check every path and symbol it cites
//! against the tree and the cached entries, on every run (a resumed one
//! too). The checking is [`crate::grounding`]'s; this only feeds it the
//! run's entries and keeps its result in the outcome, with the report's
//! `directories` built from the same entries (`directories.rs`).

use std::path::PathBuf;

use serde_json::Value;

use super::Phases;
use super::directories::directories;
use crate::ai::Outcome;
use crate::ai::rules::mechanical::is_mechanical;
use crate::cache::EntryKind;
use crate::grounding;

/// Phase 10: check what the report cites against the tree. Pure code over
/// the cache and the scan, so it also runs on a resumed run that made no
/// request; it caches nothing.
pub(super) fn ground_phase(run: &Phases<'_>, all_dirs: &[PathBuf], outcome: &mut Outcome) {
    let cache = &run.ctx.cache;
    let dir_entries: Vec<Value> = all_dirs
        .iter()
        .filter_map(|dir| cache.read_entry(EntryKind::Dir, &dir.to_string_lossy()))
        // What a model wrote: a summary built from the scan quotes the
        // scan's own names, and counting it would only flatter the figures.
        .filter(|entry| !is_mechanical(entry))
        .collect();
    let file_entries = cache.read_all_entries(EntryKind::File);
    let grounding = grounding::ground(
        &run.grounding(),
        grounding::outlines::Source::Disk(run.ctx.target().to_path_buf()),
        grounding::Sources {
            dir_entries: &dir_entries,
            file_entries: &file_entries,
        },
        &mut outcome.brief,
        &mut outcome.detailed,
        &mut outcome.flags,
    );
    run.ctx.progress.ai(&grounding.summary_line());
    outcome.grounding = Some(grounding);
    // The report's `directories` come from the same entries.
    outcome.directories = directories(run.ctx.target(), all_dirs, &dir_entries, &file_entries);
}
