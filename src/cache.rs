//! The investigation cache: what the agent learned, kept on disk so runs resume.
//!
//! Layout (names and shapes are the reference's, so a cache written by either
//! implementation reads in the other):
//!
//! ```text
//! <root>/                      /tmp/luminos or LUMINOS_CACHE_DIR, mode 0700
//!   investigations.json        canonical target path -> investigation id
//!   <id>/
//!     meta.json                investigation_id, target, start_time, model, ...
//!     files/<sha256>.json      one summary per file
//!     dirs/<sha256>.json       one summary per directory
//!     investigation.log        JSONL, one line per tool call
//!     flags.jsonl              findings
//!     plan.json, survey.json, plan_evaluation.json, synthesis.json
//! ```
//!
//! Deliberate differences from the reference:
//! - keys are the sha256 of the entry's *absolute* path; a relative path from
//!   the agent is resolved against the target first;
//! - every write is atomic (temp file in the same directory, fsync, rename) and
//!   readers skip anything unreadable;
//! - `investigations.json` is updated under an exclusive lock;
//! - the root is private (0700) and refused when it is a symlink or belongs to
//!   another user, because `/tmp` is shared.
//!
//! Validation failures in [`Cache::write_entry`] are returned as messages for
//! the agent; I/O problems that make the cache unusable are [`CacheError`]s.

use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use crate::report::Flag;

/// A problem that makes the cache unusable.
#[derive(Debug, Error)]
pub enum CacheError {
    /// The root or an investigation directory is a symlink.
    #[error("refusing cache directory {0}: it is a symlink")]
    Symlink(PathBuf),
    /// The root or an investigation directory belongs to someone else.
    #[error("refusing cache directory {path}: it is owned by uid {owner}, not you")]
    ForeignOwner { path: PathBuf, owner: u32 },
    /// Any other I/O failure, with what was being done.
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Another luminos process is investigating the same target.
    #[error("another luminos run (pid {pid}) is investigating this target; wait for it or stop it")]
    Busy { pid: u32 },
}

/// Which kind of summary an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    File,
    Dir,
}

impl EntryKind {
    /// `file` / `dir`, as in the `cache_type` tool argument.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
        }
    }

    /// Parse a `cache_type` argument.
    pub fn parse(raw: &str) -> Option<EntryKind> {
        match raw {
            "file" => Some(EntryKind::File),
            "dir" => Some(EntryKind::Dir),
            _ => None,
        }
    }
}

/// The cache root directory holding every investigation.
#[derive(Debug, Clone)]
pub struct CacheRoot {
    path: PathBuf,
}

impl CacheRoot {
    /// Open (creating with mode 0700) the cache root, refusing a symlink or a
    /// directory owned by another user.
    pub fn open(path: &Path) -> Result<CacheRoot, CacheError> {
        let _ = path;
        todo!("issue 4")
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
        let _ = (target_canonical, fresh);
        todo!("issue 4")
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

/// Remove the cache root and nothing else. Returns `false` when there was
/// nothing to remove.
pub fn clear_cache(root: &Path) -> Result<bool, CacheError> {
    let _ = root;
    todo!("issue 4")
}

/// One investigation's cache directory.
#[derive(Debug, Clone)]
pub struct Cache {
    id: String,
    target: PathBuf,
    dir: PathBuf,
}

impl Cache {
    /// Open (creating `files/` and `dirs/`) the cache of investigation `id`
    /// for `target_canonical`.
    pub fn open(root: &CacheRoot, id: &str, target_canonical: &Path) -> Result<Cache, CacheError> {
        let _ = (root, id, target_canonical);
        todo!("issue 4")
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

    /// The absolute path an entry for `path` is keyed by: relative paths are
    /// joined to the target, then `.`/`..` are removed lexically.
    pub fn absolute_entry_path(&self, path: &str) -> PathBuf {
        let _ = path;
        todo!("issue 4")
    }

    /// The sha256 hex key of `path` (see [`Cache::absolute_entry_path`]).
    pub fn entry_key(&self, path: &str) -> String {
        let _ = path;
        todo!("issue 4")
    }

    /// Validate and atomically write an entry. `Err` carries the message the
    /// agent sees (`Error: missing required fields: ...`, ...).
    pub fn write_entry(&self, kind: EntryKind, path: &str, data: &Value) -> Result<(), String> {
        let _ = (kind, path, data);
        todo!("issue 4")
    }

    /// The entry for `path`, or `None` when absent or unreadable.
    pub fn read_entry(&self, kind: EntryKind, path: &str) -> Option<Value> {
        let _ = (kind, path);
        todo!("issue 4")
    }

    /// Whether an entry exists for `path`.
    pub fn has_entry(&self, kind: EntryKind, path: &str) -> bool {
        let _ = (kind, path);
        todo!("issue 4")
    }

    /// The `relative_path` (else `path`) of every readable entry, sorted by key.
    pub fn list_entries(&self, kind: EntryKind) -> Vec<String> {
        let _ = kind;
        todo!("issue 4")
    }

    /// Every readable entry, sorted by key (a stable order).
    pub fn read_all_entries(&self, kind: EntryKind) -> Vec<Value> {
        let _ = kind;
        todo!("issue 4")
    }

    /// File and dir entries with confidence below `threshold` (missing counts
    /// as 0.0), least confident first.
    pub fn low_confidence_entries(&self, threshold: f64) -> Vec<Value> {
        let _ = threshold;
        todo!("issue 4")
    }

    /// Write `meta.json` for a new investigation.
    pub fn write_meta(&self, model: &str, start_time: &str) -> Result<(), CacheError> {
        let _ = (model, start_time);
        todo!("issue 4")
    }

    /// Merge `fields` into `meta.json` (atomically).
    pub fn update_meta(&self, fields: serde_json::Map<String, Value>) -> Result<(), CacheError> {
        let _ = fields;
        todo!("issue 4")
    }

    /// Append one line to `investigation.log`: directory, turn, timestamp,
    /// tool, args (with `data` removed) and result_length.
    pub fn log_tool_call(
        &self,
        directory: &str,
        turn: u32,
        tool: &str,
        args: &Value,
        result_length: usize,
    ) {
        let _ = (directory, turn, tool, args, result_length);
        todo!("issue 4")
    }

    /// Append a flag to `flags.jsonl` (one write per line, safe under
    /// concurrent appenders).
    pub fn append_flag(&self, flag: &Flag) -> Result<(), CacheError> {
        let _ = flag;
        todo!("issue 4")
    }

    /// Every readable flag in `flags.jsonl`, in file order.
    pub fn read_flags(&self) -> Vec<Flag> {
        todo!("issue 4")
    }

    /// Read a named JSON document of this investigation (`plan.json`, ...).
    pub fn read_json(&self, name: &str) -> Option<Value> {
        let _ = name;
        todo!("issue 4")
    }

    /// Atomically write a named JSON document of this investigation.
    pub fn write_json(&self, name: &str, value: &Value) -> Result<(), CacheError> {
        let _ = (name, value);
        todo!("issue 4")
    }
}
