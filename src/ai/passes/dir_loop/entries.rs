//! The dir entries a loop leaves behind, whoever writes them: the entry
//! built from the agent's `submit_report` ([`report_entry`]), the partial
//! entry salvaged from cached file summaries when a loop stops early or a
//! unit's agent skipped a directory ([`flush_partial_dir_entry`], with the
//! stubs and reasons of each [`PartialCause`]), the fingerprint and unit
//! stamped on each entry, and the stale entries forgotten before a loop
//! starts.
//!
//! Its edges: it reads and writes the cache and builds JSON; when to
//! salvage is the loop's decision (`mod.rs`), and what the agent is told
//! about a missing entry is `notes.rs`. The orchestrator and the
//! mechanical pass reuse [`direct_file_entries`] and the entry fields.

use std::path::{Path, PathBuf};

use super::{DirJob, DirShared};
use crate::ai::failure::InvestigationError;
use crate::ai::rules::discover::relative;
use crate::cache::now_iso;
use crate::cache::{Cache, DirEntry, DirStamp, EntryKind, FileEntry};

/// Whether `entry` was written because the model declined its directory:
/// what keeps an unchanged rerun, which reuses it, `partial` as the run that
/// wrote it was.
pub(crate) fn is_declined(entry: &DirEntry) -> bool {
    let declined = PartialCause::Refused.wording();
    entry
        .partial_reason
        .as_deref()
        .is_some_and(|reason| reason == declined.reason || reason == declined.stub_reason)
}

/// Why a loop had to salvage a partial entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartialCause {
    /// The context filled up.
    ContextFull,
    /// The money left could not pay for the loop's next request.
    Spent,
    TurnLimit,
    /// A unit's directory the agent left without a dir entry.
    UnitMember,
    /// The model's tool calls kept being malformed.
    Malformed,
    Refused,
}

/// What the entry a loop leaves says about why it is partial. The texts
/// are kept in the cache (a rerun reads `partial_reason` back), so they
/// stay as they are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wording {
    /// `partial_reason` of an entry built from cached file summaries.
    pub(crate) reason: &'static str,
    /// `partial_reason` of the stub written when no file was cached.
    pub(crate) stub_reason: &'static str,
    /// `summary` of that stub.
    pub(crate) stub_summary: &'static str,
}

impl PartialCause {
    /// The wording of the entries a loop that ended this way leaves.
    pub(crate) const fn wording(self) -> Wording {
        match self {
            PartialCause::ContextFull => Wording {
                reason: "context budget reached",
                stub_reason: "context budget reached before files processed",
                stub_summary: "Investigation incomplete — context budget reached before any \
                               files were processed.",
            },
            PartialCause::Spent => Wording {
                reason: "the budget was spent",
                stub_reason: "the budget was spent before files processed",
                stub_summary: "Investigation incomplete — the budget was spent before any files \
                               were processed.",
            },
            PartialCause::TurnLimit => Wording {
                reason: "turn limit reached",
                stub_reason: "turn limit reached before files processed",
                stub_summary: "Investigation incomplete — turn limit reached before any files \
                               were processed.",
            },
            PartialCause::UnitMember => Wording {
                reason: "the unit's agent wrote no summary of this directory",
                stub_reason: "the unit's agent wrote no summary of this directory",
                stub_summary: "Investigation incomplete — the unit's agent summarized neither \
                               this directory nor its files.",
            },
            PartialCause::Malformed => Wording {
                reason: "the model's tool calls were malformed",
                stub_reason: "the model's tool calls were malformed before files processed",
                stub_summary: "Investigation incomplete — the model's tool calls were malformed \
                               before any files were processed.",
            },
            PartialCause::Refused => Wording {
                reason: "model declined",
                stub_reason: "model declined before files processed",
                stub_summary: "Investigation incomplete — the model declined before any files \
                               were processed.",
            },
        }
    }
}

/// The stubs' texts the tests pin.
#[cfg(test)]
pub(crate) const INCOMPLETE_SUMMARY: &str = PartialCause::ContextFull.wording().stub_summary;
#[cfg(test)]
pub(crate) const INCOMPLETE_REASON: &str = PartialCause::ContextFull.wording().stub_reason;
#[cfg(test)]
pub(crate) const TURN_LIMIT_SUMMARY: &str = PartialCause::TurnLimit.wording().stub_summary;
#[cfg(test)]
pub(crate) const TURN_LIMIT_STUB_REASON: &str = PartialCause::TurnLimit.wording().stub_reason;

/// The directories of `job` that still have no dir entry, relative.
pub(super) fn missing_entries(cache: &Cache, target: &Path, members: &[PathBuf]) -> Vec<String> {
    members
        .iter()
        .filter(|dir| !cache.has_entry(EntryKind::Dir, &dir.to_string_lossy()))
        .map(|dir| relative(target, dir))
        .collect()
}

/// A directory investigated again starts from a clean slate: its old dir
/// entry goes (the loop, the salvage and the orchestrator all keep an entry
/// that exists), and when its own files changed, so do their summaries.
pub(super) fn forget_stale_entries(
    shared: &DirShared,
    job: &DirJob,
) -> Result<(), InvestigationError> {
    let cache = &shared.run.cache;
    for dir in job.dirs() {
        cache.remove_entry(EntryKind::Dir, &dir.to_string_lossy())?;
    }
    if !job.changed.is_empty() {
        let files = cache.located::<FileEntry>();
        for dir in &job.changed {
            for (path, _) in direct_file_entries(dir, &files) {
                cache.remove_entry(EntryKind::File, &path.to_string_lossy())?;
            }
        }
    }
    Ok(())
}

/// Record `stamp` in the dir entry at `path`, if the loop left one that
/// does not carry it yet.
pub(super) fn stamp_entry(
    cache: &Cache,
    path: &str,
    stamp: &DirStamp,
) -> Result<(), InvestigationError> {
    let Some(mut entry) = cache.entry::<DirEntry>(path) else {
        return Ok(());
    };
    if stamp.is_on(&entry) {
        return Ok(());
    }
    stamp.apply(&mut entry);
    cache
        .write_typed(path, &entry)
        .map_err(|source| InvestigationError::EntryWrite {
            what: "recording a fingerprint",
            source,
        })
}

/// Names in `dir` that are not hidden: the entry's `child_count`.
pub(crate) fn visible_child_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count()
        })
        .unwrap_or(0)
}

/// The dir entry the orchestrator writes from a `submit_report`.
pub(crate) fn report_entry(
    target: &Path,
    dir: &Path,
    summary: &str,
    completeness: Option<f64>,
    child_count: usize,
    now: &str,
) -> DirEntry {
    DirEntry {
        path: dir.to_string_lossy().into_owned(),
        relative_path: relative(target, dir),
        child_count: child_count as u64,
        summary: summary.to_string(),
        dominant_category: "unknown".to_string(),
        completeness,
        cached_at: now.to_string(),
        ..DirEntry::default()
    }
}

/// The file entries of files directly in `dir`, ordered by path, from
/// entries located by their keys ([`Cache::located`]): what an agent wrote
/// into an entry's fields never moves it to another directory.
pub(crate) fn direct_file_entries<'a>(
    dir: &Path,
    located: &'a [(PathBuf, FileEntry)],
) -> Vec<(&'a Path, &'a FileEntry)> {
    let mut direct: Vec<(&Path, &FileEntry)> = located
        .iter()
        .filter(|(path, _)| path.parent() == Some(dir))
        .map(|(path, entry)| (path.as_path(), entry))
        .collect();
    direct.sort_by(|a, b| a.0.cmp(b.0));
    direct
}

/// The partial dir entry for a loop stopped by the budget or its turn limit, and the summary it
/// carries. From the directory's cached file entries (each with the path it
/// is keyed by): their summaries joined, their notable files listed relative
/// to the target. With none: the "incomplete" stub and an empty summary.
pub(crate) fn build_partial_entry(
    target: &Path,
    dir: &Path,
    file_entries: &[(&Path, &FileEntry)],
    child_count: usize,
    now: &str,
    cause: PartialCause,
) -> (DirEntry, String) {
    let stub = DirEntry {
        path: dir.to_string_lossy().into_owned(),
        relative_path: relative(target, dir),
        dominant_category: "unknown".to_string(),
        partial: true,
        cached_at: now.to_string(),
        ..DirEntry::default()
    };
    if file_entries.is_empty() {
        let stub = DirEntry {
            summary: cause.wording().stub_summary.to_string(),
            partial_reason: Some(cause.wording().stub_reason.to_string()),
            ..stub
        };
        return (stub, String::new());
    }
    let summary = file_entries
        .iter()
        .map(|(_, e)| e.summary.as_str())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let notable_files = file_entries
        .iter()
        .filter(|(_, e)| e.notable)
        .map(|(path, _)| relative(target, path))
        .collect();
    let entry = DirEntry {
        child_count: child_count as u64,
        summary: summary.clone(),
        notable_files,
        partial_reason: Some(cause.wording().reason.to_string()),
        ..stub
    };
    (entry, summary)
}

/// Write the partial entry for `dir` unless a dir entry already exists.
/// Returns the partial summary ("" when nothing was written or there was
/// nothing to summarize).
pub(crate) fn flush_partial_dir_entry(
    cache: &Cache,
    target: &Path,
    dir: &Path,
    cause: PartialCause,
) -> Result<String, InvestigationError> {
    let path = dir.to_string_lossy();
    if cache.has_entry(EntryKind::Dir, &path) {
        return Ok(String::new());
    }
    let files = cache.located::<FileEntry>();
    let direct = direct_file_entries(dir, &files);
    let (entry, summary) = build_partial_entry(
        target,
        dir,
        &direct,
        visible_child_count(dir),
        &now_iso(),
        cause,
    );
    cache
        .write_typed(&path, &entry)
        .map_err(|source| InvestigationError::EntryWrite {
            what: "writing a partial entry",
            source,
        })?;
    Ok(summary)
}
