//! The investigation cache: what the agent learned, kept on disk so runs resume.
//!
//! Layout (names and shapes are the original's, so a cache written by either
//! implementation reads in the other):
//!
//! ```text
//! <root>/                      /tmp/luminos or LUMINOS_CACHE_DIR (see `root.rs`)
//!   investigations.json        canonical target path -> investigation id
//!   locks/                     flock files: the index lock, one run lock per target
//!   <id>/
//!     meta.json                investigation_id, target, start_time, model, ...
//!     files/<sha256>.json      one summary per file
//!     dirs/<sha256>.json       one summary per directory
//!     investigation.log        JSONL, one line per tool call
//!     flags.jsonl              findings
//!     flags/<sha256>.json      each finding again, to repair flags.jsonl from
//!     plan.json, survey.json, plan_evaluation.json, synthesis.json
//!     synthesis_groups.json    summaries of the parts of a synthesis in levels
//!     refinement.json          `--refine`: its rounds over the current synthesis
//!     work_plan.json           the loops, units and mechanical entries decided
//!     batch/                   `--batch` only: batches in flight, answers read (see [`batch`])
//! ```
//!
//! Deliberate differences from the original:
//! - keys are the sha256 of the entry's *absolute* path; a relative path from
//!   the agent is resolved against the target first and `.`/`..` are removed
//!   lexically, so every spelling of one path is one entry;
//! - an entry's location is the path it was written under, never what the
//!   agent put in its fields: [`Cache::write_entry`] stores that path as
//!   `path` and its form relative to the target as `relative_path`, whatever
//!   the data said, and readers that list entries trust a stored location
//!   only when it hashes to the entry's key ([`Cache::located_entries`]);
//! - every write is atomic (temp file in the same directory, fsync, rename) and
//!   readers skip anything unreadable;
//! - `investigations.json` is updated under an exclusive lock, and a run holds
//!   a per-target lock so two runs never investigate one target at once;
//! - the root is private (0700 when luminos creates it) and refused when it
//!   is a symlink or belongs to another user, because `/tmp` is shared; a
//!   directory the user names that already holds other things is not taken
//!   over, nor its mode changed: the cache goes in a `luminos` subdirectory
//!   of it (`root.rs`).
//!
//! Validation failures in [`Cache::write_entry`] are returned as messages for
//! the agent; I/O problems that make the cache unusable are [`CacheError`]s.
//!
//! This file holds the root, the [`Cache`] type and how an entry is keyed;
//! which directory is the root is `root.rs`, the entry API `entries.rs`,
//! `meta.json` and the named documents `documents.rs`, the log and flags
//! `journal.rs` (and the flags' second copies `flag_records.rs`), the
//! first write that failed `fault.rs`, and the file mechanics `fsio.rs`.

pub(crate) mod batch;
mod clear;
mod documents;
mod entries;
mod entry;
mod fault;
mod flag_records;
mod fsio;
mod index;
mod journal;
mod lock;
mod lookup;
mod root;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use thiserror::Error;

/// `<id>/meta.json`: the investigation's id, target, model, times, counts.
pub(crate) const META_FILE: &str = "meta.json";
/// `<id>/investigation.log`: one JSON line per tool call.
pub(crate) const LOG_FILE: &str = "investigation.log";
/// `<id>/flags.jsonl`: findings, one JSON line each.
pub(crate) const FLAGS_FILE: &str = "flags.jsonl";
/// `<id>/survey.json`: the survey, reused on resume.
pub(crate) const SURVEY_FILE: &str = "survey.json";
/// `<id>/plan.json`: the planner's proposal, reused on resume.
pub(crate) const PLAN_FILE: &str = "plan.json";
/// `<id>/plan_evaluation.json`: how the loops used their turns.
pub(crate) const PLAN_EVALUATION_FILE: &str = "plan_evaluation.json";
/// `<id>/synthesis.json`: the verdict and the digest of the summaries it read.
pub(crate) const SYNTHESIS_FILE: &str = "synthesis.json";
/// `<id>/work_plan.json`: the loops, units and mechanical entries a run
/// decided, and its budget, carried on by a run that resumes it.
pub(crate) const WORK_PLAN_FILE: &str = "work_plan.json";
/// `<id>/replans.json`: every replanning round of the runs that carried
/// out the work plan: the handoffs it read, the money it saw and the loops
/// it bought.
pub(crate) const REPLANS_FILE: &str = "replans.json";
/// `<id>/synthesis_groups.json`: the summary of each part of a synthesis in
/// levels, by the digest of its input.
pub(crate) const SYNTHESIS_GROUPS_FILE: &str = "synthesis_groups.json";
/// `<id>/refinement.json`: the rounds of `--refine` over the current
/// synthesis.
pub(crate) const REFINEMENT_FILE: &str = "refinement.json";

use crate::paths::normalize_lexically;

pub use clear::{Cleared, Removed, clear_cache, clear_investigation};
pub use entries::{CacheEntry, EntryError, EntryKind};
pub use entry::{DirEntry, DirStamp, FileEntry};
pub use fault::WriteFault;
pub use flag_records::{CheckedFlags, FlagRepair};
pub(crate) use lock::RunLock;
pub(crate) use root::choose_root;

use fault::FaultLatch;
use fsio::{ensure_private_dir, io_err, remove_temp_files};

/// A problem that makes the cache unusable.
#[derive(Debug, Error)]
pub enum CacheError {
    /// The root or an investigation directory is a symlink.
    #[error("refusing cache directory {0}: it is a symlink")]
    Symlink(PathBuf),
    /// The root or an investigation directory belongs to someone else.
    #[error("refusing cache directory {path}: it is owned by uid {owner}, not you")]
    ForeignOwner { path: PathBuf, owner: u32 },
    /// The cache path, or a directory on the way to it, is not a
    /// directory.
    #[error("refusing cache directory {0}: it is not a directory")]
    NotADirectory(PathBuf),
    /// Any other I/O failure, with what was being done. The error is part
    /// of the one line, not a source of its own: printed as a chain it
    /// would say the same thing twice.
    #[error("{action} {path}: {error}")]
    Io {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    /// Another luminos process is investigating the same target.
    #[error("another luminos run (pid {pid}) is investigating this target; wait for it or stop it")]
    Busy { pid: u32 },
    /// `--clear-cache` while a run uses the cache: names the cache, the run
    /// and, when its lock file says, the target it investigates.
    #[error(
        "refusing to remove {}: luminos run (pid {pid}) is using it{}; wait for it or stop it",
        root.display(),
        target.as_ref().map(|t| format!(" to investigate {}", t.display())).unwrap_or_default()
    )]
    CacheInUse {
        root: PathBuf,
        pid: u32,
        target: Option<PathBuf>,
    },
    /// `--clear-cache` was pointed at a directory luminos did not create.
    #[error(
        "refusing to remove {path}: it holds '{entry}', which luminos did not create; remove it by hand if you are sure"
    )]
    NotACache { path: PathBuf, entry: String },
}
/// The cache root directory holding every investigation.
#[derive(Debug, Clone)]
pub struct CacheRoot {
    path: PathBuf,
}

impl CacheRoot {
    /// Open (creating with mode 0700) the cache root for the path the user
    /// named: that path, or its `luminos` subdirectory when it already holds
    /// other things (see `root.rs`). A symlink, a file or a directory owned
    /// by another user is refused.
    pub fn open(named: &Path) -> Result<CacheRoot, CacheError> {
        let path = root::choose_root(named)?;
        ensure_private_dir(&path)?;
        ensure_private_dir(&path.join(lock::LOCK_DIR))?;
        Ok(CacheRoot { path })
    }

    /// The root's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Find the investigation for `target_canonical`, or start a new one.
    /// Returns `(id, is_new)`. With `fresh`, always a new id. An existing id
    /// only counts when its directory still exists. The read-modify-write of
    /// `investigations.json` happens under an exclusive lock; a corrupt file
    /// is a warning (returned in `warnings`), not a failure.
    pub fn investigation_id(
        &self,
        target_canonical: &Path,
        fresh: bool,
    ) -> Result<InvestigationId, CacheError> {
        index::investigation_id(&self.path, target_canonical, fresh)
    }

    /// Take the run lock for `target_canonical`. A second run on the same
    /// target gets [`CacheError::Busy`] naming the holder's pid, or with
    /// `wait` blocks until the holder finishes. Take it before
    /// [`CacheRoot::investigation_id`] so a `--fresh` run waits too. Released
    /// when the [`RunLock`] drops or the process dies.
    pub fn lock_run(&self, target_canonical: &Path, wait: bool) -> Result<RunLock, CacheError> {
        lock::lock_run_file(
            &self.run_lock_path(target_canonical),
            target_canonical,
            wait,
        )
    }

    fn run_lock_path(&self, target_canonical: &Path) -> PathBuf {
        self.path
            .join(lock::LOCK_DIR)
            .join(format!("{}.lock", sha256_hex(target_canonical)))
    }
}

/// The outcome of [`CacheRoot::investigation_id`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvestigationId {
    pub id: String,
    pub is_new: bool,
    /// Problems worth a warning line (for example a corrupt
    /// `investigations.json` that was replaced).
    pub warnings: Vec<String>,
}

/// sha256 hex of a path's bytes (UTF-8 for UTF-8 paths, like the original).
pub(crate) fn sha256_hex(path: &Path) -> String {
    let digest = Sha256::digest(path.as_os_str().as_bytes());
    crate::text::hex(&digest)
}

/// The current time as the original writes it (`2024-05-01T12:00:00.123456+00:00`).
pub(crate) fn now_iso() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, false)
}

/// One investigation's cache directory.
#[derive(Debug, Clone)]
pub struct Cache {
    id: String,
    target: PathBuf,
    dir: PathBuf,
    /// The first write that failed, shared by every clone (`fault.rs`).
    fault: FaultLatch,
}

impl Cache {
    /// Open (creating `files/` and `dirs/`) the cache of investigation `id`
    /// for `target_canonical`.
    pub fn open(root: &CacheRoot, id: &str, target_canonical: &Path) -> Result<Cache, CacheError> {
        let dir = root.path().join(id);
        if !index::is_canonical_uuid(id) {
            return Err(io_err("opening investigation", &dir)(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "an investigation id is a lowercase UUID",
            )));
        }
        ensure_private_dir(&dir)?;
        for kind in [EntryKind::File, EntryKind::Dir] {
            ensure_private_dir(&dir.join(kind.subdir()))?;
        }
        Ok(Cache {
            id: id.to_string(),
            target: target_canonical.to_path_buf(),
            dir,
            fault: FaultLatch::default(),
        })
    }

    /// The investigation id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The canonical target this cache describes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// This investigation's directory (`<root>/<id>`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Take this target's run lock (see [`CacheRoot::lock_run`]; prefer that
    /// one, before choosing the investigation id).
    pub fn lock_run(&self, wait: bool) -> Result<RunLock, CacheError> {
        let root = CacheRoot {
            path: self.dir.parent().unwrap_or(&self.dir).to_path_buf(),
        };
        root.lock_run(&self.target, wait)
    }

    /// Remove the temp files that runs killed mid-write left in this
    /// investigation; returns how many. Takes the target's run lock as proof
    /// that no other process is writing here.
    pub(crate) fn remove_stale_temp_files(&self, _held: &RunLock) -> usize {
        let batch = batch::BatchStore::at(self).remove_temp_files();
        [".", "files", "dirs", flag_records::FLAG_RECORDS_DIR]
            .iter()
            .map(|sub| remove_temp_files(&self.dir.join(sub)))
            .sum::<usize>()
            + batch
    }

    /// The absolute path an entry for `path` is keyed by: relative paths are
    /// joined to the target, then `.`/`..` are removed lexically.
    pub fn absolute_entry_path(&self, path: &str) -> PathBuf {
        let raw = Path::new(path);
        if raw.is_absolute() {
            normalize_lexically(raw)
        } else {
            normalize_lexically(&self.target.join(raw))
        }
    }

    /// The sha256 hex key of `path` (see [`Cache::absolute_entry_path`]).
    pub fn entry_key(&self, path: &str) -> String {
        sha256_hex(&self.absolute_entry_path(path))
    }
}

#[cfg(test)]
mod tests;
