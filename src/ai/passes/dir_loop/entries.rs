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

use serde_json::{Value, json};

use super::{DirJob, DirShared};
use crate::ai::failure::InvestigationError;
use crate::ai::rules::discover::relative;
use crate::ai::rules::fingerprint::{FINGERPRINT_FIELD, LANGUAGE_FIELD};
use crate::cache::now_iso;
use crate::cache::{Cache, EntryKind};

/// Whether `entry` was written because the model declined its directory:
/// what keeps an unchanged rerun, which reuses it, `partial` as the run that
/// wrote it was.
pub(crate) fn is_declined(entry: &Value) -> bool {
    let declined = PartialCause::Refused.wording();
    entry
        .get("partial_reason")
        .and_then(Value::as_str)
        .is_some_and(|reason| reason == declined.reason || reason == declined.stub_reason)
}

/// The dir-entry field naming the unit (its top directory, relative) a
/// folded directory was investigated in.
pub(crate) const UNIT_FIELD: &str = "unit";

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
        let files = cache.located_entries(EntryKind::File);
        for dir in &job.changed {
            for (path, _) in direct_file_entries(dir, &files) {
                cache.remove_entry(EntryKind::File, &path.to_string_lossy())?;
            }
        }
    }
    Ok(())
}

/// Record `fingerprint` in the dir entry at `path`, if the loop left one
/// that does not carry it yet, for a folded directory the unit (its top
/// directory, relative), and the `--language` it was written in.
pub(super) fn stamp_entry(
    cache: &Cache,
    path: &str,
    fingerprint: &str,
    unit: Option<&str>,
    language: Option<&str>,
) -> Result<(), InvestigationError> {
    let Some(mut entry) = cache.read_entry(EntryKind::Dir, path) else {
        return Ok(());
    };
    let field = |name: &str| entry.get(name).and_then(Value::as_str);
    if field(FINGERPRINT_FIELD) == Some(fingerprint)
        && (unit.is_none() || field(UNIT_FIELD) == unit)
        && field(LANGUAGE_FIELD) == language
    {
        return Ok(());
    }
    entry[FINGERPRINT_FIELD] = json!(fingerprint);
    if let Some(unit) = unit {
        entry[UNIT_FIELD] = json!(unit);
    }
    match (language, entry.as_object_mut()) {
        (Some(language), _) => entry[LANGUAGE_FIELD] = json!(language),
        (None, Some(fields)) => {
            fields.remove(LANGUAGE_FIELD);
        }
        (None, None) => {}
    }
    cache
        .write_entry(EntryKind::Dir, path, &entry)
        .map_err(|message| InvestigationError::EntryWrite {
            what: "recording a fingerprint",
            message,
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
) -> Value {
    let mut entry = json!({
        "path": dir.to_string_lossy(),
        "relative_path": relative(target, dir),
        "child_count": child_count,
        "summary": summary,
        "dominant_category": "unknown",
        "notable_files": [],
        "cached_at": now,
    });
    if let Some(completeness) = completeness {
        entry["completeness"] = json!(completeness);
    }
    entry
}

/// The file entries of files directly in `dir`, ordered by path, from
/// entries located by their keys ([`Cache::located_entries`]): what an agent
/// wrote into an entry's fields never moves it to another directory.
pub(crate) fn direct_file_entries<'a>(
    dir: &Path,
    located: &'a [(PathBuf, Value)],
) -> Vec<(&'a Path, &'a Value)> {
    let mut direct: Vec<(&Path, &Value)> = located
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
    file_entries: &[(&Path, &Value)],
    child_count: usize,
    now: &str,
    cause: PartialCause,
) -> (Value, String) {
    let relative_path = relative(target, dir);
    if file_entries.is_empty() {
        let stub = json!({
            "path": dir.to_string_lossy(),
            "relative_path": relative_path,
            "child_count": 0,
            "summary": cause.wording().stub_summary,
            "dominant_category": "unknown",
            "notable_files": [],
            "partial": true,
            "partial_reason": cause.wording().stub_reason,
            "cached_at": now,
        });
        return (stub, String::new());
    }
    let summary = file_entries
        .iter()
        .filter_map(|(_, e)| e.get("summary").and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let notable: Vec<String> = file_entries
        .iter()
        .filter(|(_, e)| e.get("notable").and_then(Value::as_bool).unwrap_or(false))
        .map(|(path, _)| relative(target, path))
        .collect();
    let entry = json!({
        "path": dir.to_string_lossy(),
        "relative_path": relative_path,
        "child_count": child_count,
        "summary": summary,
        "dominant_category": "unknown",
        "notable_files": notable,
        "partial": true,
        "partial_reason": cause.wording().reason,
        "cached_at": now,
    });
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
    let files = cache.located_entries(EntryKind::File);
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
        .write_entry(EntryKind::Dir, &path, &entry)
        .map_err(|message| InvestigationError::EntryWrite {
            what: "writing a partial entry",
            message,
        })?;
    Ok(summary)
}
