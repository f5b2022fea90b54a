//! The investigation cache: what the agent learned, kept on disk so runs resume.
//!
//! Layout (names and shapes are the original's, so a cache written by either
//! implementation reads in the other):
//!
//! ```text
//! <root>/                      /tmp/luminos or LUMINOS_CACHE_DIR, mode 0700
//!   investigations.json        canonical target path -> investigation id
//!   locks/                     flock files: the index lock, one run lock per target
//!   <id>/
//!     meta.json                investigation_id, target, start_time, model, ...
//!     files/<sha256>.json      one summary per file
//!     dirs/<sha256>.json       one summary per directory
//!     investigation.log        JSONL, one line per tool call
//!     flags.jsonl              findings
//!     plan.json, survey.json, plan_evaluation.json, synthesis.json
//!     synthesis_groups.json    summaries of the parts of a synthesis in levels
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
//! - the root is private (0700) and refused when it is a symlink or belongs to
//!   another user, because `/tmp` is shared.
//!
//! Validation failures in [`Cache::write_entry`] are returned as messages for
//! the agent; I/O problems that make the cache unusable are [`CacheError`]s.

pub(crate) mod batch;
mod clear;
mod fsio;
mod index;
mod lock;
mod lookup;

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
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
/// `<id>/synthesis_groups.json`: the summary of each part of a synthesis in
/// levels, by the digest of its input.
pub(crate) const SYNTHESIS_GROUPS_FILE: &str = "synthesis_groups.json";

use crate::config::normalize_lexically;
use crate::report::Flag;

pub use clear::clear_cache;
pub(crate) use lock::RunLock;

use fsio::{
    append_locked, ensure_private_dir, io_err, jsonl_line, open_append, parse_jsonl, read_json,
    read_jsonl, remove_temp_files, write_json_atomic,
};

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

    /// The subdirectory holding this kind of entry.
    fn subdir(self) -> &'static str {
        match self {
            EntryKind::File => "files",
            EntryKind::Dir => "dirs",
        }
    }

    /// Fields an entry of this kind must have (the original's lists).
    fn required_fields(self) -> &'static [&'static str] {
        match self {
            EntryKind::File => &[
                "path",
                "relative_path",
                "size_bytes",
                "category",
                "summary",
                "cached_at",
            ],
            EntryKind::Dir => &[
                "path",
                "relative_path",
                "child_count",
                "dominant_category",
                "summary",
                "cached_at",
            ],
        }
    }
}

/// Fields that would mean raw file text is being cached.
const RAW_CONTENT_FIELDS: [&str; 3] = ["content", "contents", "raw"];

/// The `meta.json` field set once a run with `--no-redact` wrote to the
/// investigation (ours; the original has no redaction).
pub(crate) const UNREDACTED_FIELD: &str = "written_without_redaction";

/// One readable entry file, as [`Cache::stored_entries`] found it.
struct StoredEntry {
    file_name: String,
    entry: Value,
    /// The absolute path the entry is keyed by, when its fields name one.
    location: Option<PathBuf>,
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
        ensure_private_dir(path)?;
        ensure_private_dir(&path.join(lock::LOCK_DIR))?;
        Ok(CacheRoot {
            path: path.to_path_buf(),
        })
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
fn sha256_hex(path: &Path) -> String {
    let digest = Sha256::digest(path.as_os_str().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
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
        [".", "files", "dirs"]
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

    fn entry_file(&self, kind: EntryKind, path: &str) -> PathBuf {
        self.dir
            .join(kind.subdir())
            .join(format!("{}.json", self.entry_key(path)))
    }

    /// `path` (absolute, normalized) relative to the target: `.` for the
    /// target itself, the path itself when it lies outside.
    fn relative_to_target(&self, path: &Path) -> String {
        match path.strip_prefix(&self.target) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    /// `data` with its location fields set to `location`: `path` (absolute)
    /// and `relative_path` come first, the other fields follow in their
    /// order. Anything but an object is returned unchanged.
    fn with_location(&self, location: &Path, data: &Value) -> Value {
        let Some(fields) = data.as_object() else {
            return data.clone();
        };
        let mut located = Map::with_capacity(fields.len() + 2);
        located.insert("path".into(), json!(location.to_string_lossy()));
        located.insert(
            "relative_path".into(),
            json!(self.relative_to_target(location)),
        );
        for (key, value) in fields {
            if key != "path" && key != "relative_path" {
                located.insert(key.clone(), value.clone());
            }
        }
        Value::Object(located)
    }

    /// Validate and atomically write many entries of one kind at once, with
    /// two flushes in all rather than two per entry (see
    /// `fsio::write_json_batch`). Each gets its location fields as
    /// [`Cache::write_entry`] gives them. Nothing is written when one is
    /// invalid.
    pub(crate) fn write_entries(
        &self,
        kind: EntryKind,
        entries: &[(String, Value)],
    ) -> Result<(), String> {
        let mut items: Vec<(PathBuf, Value)> = Vec::with_capacity(entries.len());
        for (path, data) in entries {
            let data = self.with_location(&self.absolute_entry_path(path), data);
            validate_entry(kind, &data)?;
            items.push((self.entry_file(kind, path), data));
        }
        fsio::write_json_batch(&items).map_err(|err| format!("Error writing cache: {err}"))
    }

    /// Validate and atomically write an entry for `path`. Its `path` and
    /// `relative_path` fields are set from `path` (see
    /// [`Cache::absolute_entry_path`]) whatever `data` says, so an entry always
    /// names the file it is keyed by. `Err` carries the message the agent sees
    /// (`Error: missing required fields: ...`, ...).
    pub fn write_entry(&self, kind: EntryKind, path: &str, data: &Value) -> Result<(), String> {
        let data = self.with_location(&self.absolute_entry_path(path), data);
        validate_entry(kind, &data)?;
        let file = self.entry_file(kind, path);
        write_json_atomic(&file, &data).map_err(|err| format!("Error writing cache: {err}"))
    }

    /// The entry for `path`, or `None` when absent or unreadable. Its location
    /// fields name `path` (an entry written before they were set on write may
    /// have held anything there).
    pub fn read_entry(&self, kind: EntryKind, path: &str) -> Option<Value> {
        read_json(&self.entry_file(kind, path))
            .filter(Value::is_object)
            .map(|entry| self.with_location(&self.absolute_entry_path(path), &entry))
    }

    /// Remove the entry for `path`, if any (a directory about to be
    /// investigated again must not keep its old summary).
    pub fn remove_entry(&self, kind: EntryKind, path: &str) -> Result<(), CacheError> {
        let file = self.entry_file(kind, path);
        match std::fs::remove_file(&file) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(fsio::io_err("removing", &file)(err)),
        }
    }

    /// Whether a readable entry exists for `path`. An unreadable one counts
    /// as absent, so its directory is investigated again.
    pub fn has_entry(&self, kind: EntryKind, path: &str) -> bool {
        self.read_entry(kind, path).is_some()
    }

    /// The path relative to the target of every readable entry, sorted by
    /// key. An entry whose location cannot be confirmed (see
    /// [`Cache::located_entries`]) shows its `relative_path`, else its `path`,
    /// else its file name.
    pub fn list_entries(&self, kind: EntryKind) -> Vec<String> {
        self.stored_entries(kind)
            .into_iter()
            .map(|stored| match stored.location {
                Some(location) => self.relative_to_target(&location),
                None => ["relative_path", "path"]
                    .iter()
                    .find_map(|field| stored.entry.get(*field)?.as_str())
                    .map(str::to_string)
                    .unwrap_or(stored.file_name),
            })
            .collect()
    }

    /// Every readable entry, sorted by key (a stable order); those whose
    /// location is confirmed carry it in their location fields.
    pub fn read_all_entries(&self, kind: EntryKind) -> Vec<Value> {
        self.stored_entries(kind)
            .into_iter()
            .map(|stored| match &stored.location {
                Some(location) => self.with_location(location, &stored.entry),
                None => stored.entry,
            })
            .collect()
    }

    /// Every readable entry whose location is confirmed, with that location
    /// (absolute) and the entry's location fields set from it, sorted by key.
    ///
    /// The file name is the only thing about an entry that the agent did not
    /// write, so a location counts only when it hashes to that name: the
    /// stored `path` (absolute, or relative to the target) or the stored
    /// `relative_path`. Entries written by this version always confirm; an
    /// older entry whose fields name some other path is left out rather than
    /// attributed to the wrong directory.
    pub fn located_entries(&self, kind: EntryKind) -> Vec<(PathBuf, Value)> {
        self.stored_entries(kind)
            .into_iter()
            .filter_map(|stored| {
                let location = stored.location?;
                let entry = self.with_location(&location, &stored.entry);
                Some((location, entry))
            })
            .collect()
    }

    /// Every readable entry of `kind` with its file name and, when confirmed,
    /// its location.
    fn stored_entries(&self, kind: EntryKind) -> Vec<StoredEntry> {
        self.entry_files(kind)
            .into_iter()
            .filter_map(|(file_name, file)| {
                let entry = read_json(&file).filter(Value::is_object)?;
                let key = file_name.strip_suffix(".json").unwrap_or(&file_name);
                let location = ["path", "relative_path"]
                    .iter()
                    .filter_map(|field| entry.get(*field)?.as_str())
                    .map(|raw| self.absolute_entry_path(raw))
                    .find(|candidate| sha256_hex(candidate) == key);
                Some(StoredEntry {
                    file_name,
                    entry,
                    location,
                })
            })
            .collect()
    }

    /// `(file name, path)` of each `*.json` in the kind's directory, sorted.
    fn entry_files(&self, kind: EntryKind) -> Vec<(String, PathBuf)> {
        let dir = self.dir.join(kind.subdir());
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut files: Vec<(String, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                name.ends_with(".json").then(|| (name, entry.path()))
            })
            .collect();
        files.sort();
        files
    }

    /// File and dir entries with confidence below `threshold` (missing counts
    /// as 0.0), least confident first.
    #[cfg(test)]
    pub(crate) fn low_confidence_entries(&self, threshold: f64) -> Vec<Value> {
        let mut low: Vec<(f64, Value)> = self
            .read_all_entries(EntryKind::File)
            .into_iter()
            .chain(self.read_all_entries(EntryKind::Dir))
            .map(|entry| (confidence_of(&entry), entry))
            .filter(|(confidence, _)| *confidence < threshold)
            .collect();
        // Stable: equal confidences keep files-then-dirs, key order.
        low.sort_by(|a, b| a.0.total_cmp(&b.0));
        low.into_iter().map(|(_, entry)| entry).collect()
    }

    /// Write `meta.json` for a new investigation.
    pub fn write_meta(&self, model: &str, start_time: &str) -> Result<(), CacheError> {
        let meta = json!({
            "investigation_id": self.id,
            "target": self.target.to_string_lossy(),
            "start_time": start_time,
            "model": model,
            "directories_investigated": 0,
            "total_turns": 0,
        });
        self.write_json(META_FILE, &meta)
    }

    /// Merge `fields` into `meta.json` (atomically). Only the run holding the
    /// target's run lock writes it, so the read-modify-write needs no lock of
    /// its own.
    pub fn update_meta(&self, fields: Map<String, Value>) -> Result<(), CacheError> {
        let mut meta = match self.read_json(META_FILE) {
            Some(Value::Object(meta)) => meta,
            _ => Map::new(),
        };
        meta.extend(fields);
        self.write_json(META_FILE, &Value::Object(meta))
    }

    /// Record in `meta.json` that a run with redaction off (`--no-redact`)
    /// wrote to this investigation, so its summaries may quote secrets.
    pub(crate) fn mark_written_without_redaction(&self) -> Result<(), CacheError> {
        let mut fields = Map::new();
        fields.insert(UNREDACTED_FIELD.to_string(), Value::Bool(true));
        self.update_meta(fields)
    }

    /// Whether a run with redaction off ever wrote to this investigation.
    pub(crate) fn written_without_redaction(&self) -> bool {
        self.read_json(META_FILE)
            .and_then(|meta| meta.get(UNREDACTED_FIELD)?.as_bool())
            .unwrap_or(false)
    }

    /// Append one line to `investigation.log`: directory, turn, timestamp,
    /// tool, args (with `data` removed) and result_length. Best effort: a log
    /// that cannot be written never stops the investigation.
    pub fn log_tool_call(
        &self,
        directory: &str,
        turn: u32,
        tool: &str,
        args: &Value,
        result_length: usize,
    ) {
        let args = match args {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(key, _)| key.as_str() != "data")
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect(),
            ),
            other => other.clone(),
        };
        let line = json!({
            "directory": directory,
            "turn": turn,
            "timestamp": now_iso(),
            "tool": tool,
            "args": args,
            "result_length": result_length,
        });
        let path = self.dir.join(LOG_FILE);
        if let Ok(file) = open_append(&path) {
            let _ = append_locked(&file, &jsonl_line(&line));
        }
    }

    /// Append a flag to `flags.jsonl` (one write per line, safe under
    /// concurrent appenders).
    pub fn append_flag(&self, flag: &Flag) -> Result<(), CacheError> {
        let path = self.flags_path();
        let file = open_append(&path).map_err(io_err("opening", &path))?;
        append_locked(&file, &flag_line(flag)).map_err(io_err("appending to", &path))
    }

    /// Append those of `flags` that `flags.jsonl` does not already hold
    /// (same path, finding and severity), and return them. The check and the
    /// append happen under one lock, so concurrent loops and processes that
    /// find the same thing record it once.
    pub(crate) fn append_flags_unique(&self, flags: &[Flag]) -> Result<Vec<Flag>, CacheError> {
        if flags.is_empty() {
            return Ok(Vec::new());
        }
        let path = self.flags_path();
        let mut file = open_append(&path).map_err(io_err("opening", &path))?;
        file.lock().map_err(io_err("locking", &path))?;
        let result = (|| {
            let mut existing = Vec::new();
            file.read_to_end(&mut existing)
                .map_err(io_err("reading", &path))?;
            let mut seen: HashSet<(String, String, String)> = parse_jsonl(&existing)
                .into_iter()
                .filter_map(|value| serde_json::from_value::<Flag>(value).ok())
                .map(flag_identity)
                .collect();
            let fresh: Vec<Flag> = flags
                .iter()
                .filter(|flag| seen.insert(flag_identity((*flag).clone())))
                .cloned()
                .collect();
            let bytes: Vec<u8> = fresh.iter().flat_map(flag_line).collect();
            if !bytes.is_empty() {
                use std::io::Write;
                // One write for all new lines (O_APPEND puts it at the end).
                let written = (&file)
                    .write(&bytes)
                    .map_err(io_err("appending to", &path))?;
                if written != bytes.len() {
                    return Err(io_err("appending to", &path)(std::io::Error::new(
                        std::io::ErrorKind::WriteZero,
                        "short write",
                    )));
                }
            }
            Ok(fresh)
        })();
        let _ = file.unlock();
        result
    }

    /// Every readable flag in `flags.jsonl`, in file order.
    pub fn read_flags(&self) -> Vec<Flag> {
        read_jsonl(&self.flags_path())
            .into_iter()
            .filter(Value::is_object)
            .filter_map(|value| serde_json::from_value(value).ok())
            .collect()
    }

    fn flags_path(&self) -> PathBuf {
        self.dir.join(FLAGS_FILE)
    }

    /// Read a named JSON document of this investigation (`plan.json`, ...).
    pub fn read_json(&self, name: &str) -> Option<Value> {
        is_document_name(name).then(|| read_json(&self.dir.join(name)))?
    }

    /// Atomically write a named JSON document of this investigation.
    pub fn write_json(&self, name: &str, value: &Value) -> Result<(), CacheError> {
        let path = self.dir.join(name);
        if !is_document_name(name) {
            return Err(io_err("writing", &path)(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a cache document is a plain *.json name",
            )));
        }
        write_json_atomic(&path, value).map_err(io_err("writing", &path))
    }
}

/// The original's checks, in its order, with messages for the agent.
fn validate_entry(kind: EntryKind, data: &Value) -> Result<(), String> {
    let Some(fields) = data.as_object() else {
        return Err("Error: data must be a JSON object.".to_string());
    };
    let mut missing: Vec<&str> = kind
        .required_fields()
        .iter()
        .copied()
        .filter(|field| !fields.contains_key(*field))
        .collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        return Err(format!(
            "Error: missing required fields: {}",
            missing.join(", ")
        ));
    }
    if let Some(field) = RAW_CONTENT_FIELDS.iter().find(|f| fields.contains_key(**f)) {
        return Err(format!(
            "Error: cache entries hold summaries, never raw file contents; remove the '{field}' field."
        ));
    }
    if let Some(confidence) = fields.get("confidence")
        && !confidence
            .as_f64()
            .is_some_and(|value| (0.0..=1.0).contains(&value))
    {
        return Err("Error: confidence must be a number from 0.0 to 1.0.".to_string());
    }
    if fields
        .get("confidence_reason")
        .is_some_and(|reason| !reason.is_string())
    {
        return Err("Error: confidence_reason must be a string.".to_string());
    }
    Ok(())
}

/// An entry's confidence; missing or non-numeric counts as 0.0 (unrated).
#[cfg(test)]
fn confidence_of(entry: &Value) -> f64 {
    entry
        .get("confidence")
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

fn flag_identity(flag: Flag) -> (String, String, String) {
    (flag.path, flag.finding, flag.severity)
}

fn flag_line(flag: &Flag) -> Vec<u8> {
    jsonl_line(&json!({
        "path": flag.path,
        "finding": flag.finding,
        "severity": flag.severity,
    }))
}

/// A document name is a plain `*.json` file name: no separators, not hidden.
fn is_document_name(name: &str) -> bool {
    name.ends_with(".json")
        && name.len() > ".json".len()
        && !name.starts_with('.')
        && !name.contains(['/', '\0'])
}

#[cfg(test)]
mod tests;
