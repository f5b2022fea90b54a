//! The summaries themselves: which kinds there are ([`EntryKind`]) and the
//! [`Cache`] methods that validate, write, read, list and remove the entries
//! under `files/` and `dirs/`: as JSON, at the edges (an agent's
//! `write_cache` and `read_cache`), and typed ([`DirEntry`], [`FileEntry`]:
//! [`Cache::entry`], [`Cache::located`], [`Cache::write_typed`], ...) for
//! everything else.
//!
//! An entry's location is the path it was written under: writes set its
//! `path` and `relative_path` fields from that path, and listings trust a
//! stored location only when it hashes to the entry's key (see the module
//! doc of [`super`]). Validation failures come back as the message the
//! agent sees. Its edges: the keying itself ([`Cache::entry_key`]) lives
//! with the [`Cache`] type in `mod.rs`, the atomic file writes in
//! `fsio.rs`; the investigation's other files (meta and documents, log and
//! flags) are `documents.rs` and `journal.rs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::entry::{DirEntry, FileEntry};
use super::fsio::{self, read_json, write_json_atomic};
use super::{Cache, CacheError, sha256_hex};

/// A kind of summary the cache keeps, typed: [`DirEntry`] or
/// [`FileEntry`].
pub trait CacheEntry: Serialize + DeserializeOwned {
    /// Where entries of this type live.
    const KIND: EntryKind;
    /// Relative to the target (`.` or empty for the target itself).
    fn relative_path(&self) -> &str;
    fn summary(&self) -> &str;
    /// The files the summary points at (a directory's).
    fn notable_files(&self) -> &[String];
}

impl CacheEntry for DirEntry {
    const KIND: EntryKind = EntryKind::Dir;
    fn relative_path(&self) -> &str {
        &self.relative_path
    }
    fn summary(&self) -> &str {
        &self.summary
    }
    fn notable_files(&self) -> &[String] {
        &self.notable_files
    }
}

impl CacheEntry for FileEntry {
    const KIND: EntryKind = EntryKind::File;
    fn relative_path(&self) -> &str {
        &self.relative_path
    }
    fn summary(&self) -> &str {
        &self.summary
    }
    fn notable_files(&self) -> &[String] {
        &[]
    }
}

/// Why an entry was not written: what the agent is told of an entry it
/// wrote (the original's checks, in its words), or the write that failed.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("Error: data must be a JSON object.")]
    NotAnObject,
    #[error("Error: missing required fields: {}", .0.join(", "))]
    MissingFields(Vec<&'static str>),
    #[error(
        "Error: cache entries hold summaries, never raw file contents; remove the '{0}' field."
    )]
    RawContent(&'static str),
    #[error("Error: confidence must be a number from 0.0 to 1.0.")]
    Confidence,
    #[error("Error: confidence_reason must be a string.")]
    ConfidenceReason,
    #[error("Error writing cache: {0}")]
    Write(#[source] std::io::Error),
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
    pub(super) fn subdir(self) -> &'static str {
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

/// One readable entry file, as [`Cache::stored_entries`] found it.
struct StoredEntry {
    file_name: String,
    entry: Value,
    /// The absolute path the entry is keyed by, when its fields name one.
    location: Option<PathBuf>,
}

impl Cache {
    /// The dir entries the cache holds now of `dirs`, by directory (those
    /// without one are left out).
    pub(crate) fn dir_entries(&self, dirs: &[PathBuf]) -> HashMap<PathBuf, DirEntry> {
        dirs.iter()
            .filter_map(|dir| Some((dir.clone(), self.entry(&dir.to_string_lossy())?)))
            .collect()
    }

    /// The entry of type `E` for `path`, read leniently (see
    /// [`super::entry`]); `None` when absent or unreadable.
    pub fn entry<E: CacheEntry>(&self, path: &str) -> Option<E> {
        serde_json::from_value(self.read_entry(E::KIND, path)?).ok()
    }

    /// Every readable entry of type `E` whose location is confirmed, with
    /// that location (see [`Cache::located_entries`]), sorted by key.
    pub fn located<E: CacheEntry>(&self) -> Vec<(PathBuf, E)> {
        self.located_entries(E::KIND)
            .into_iter()
            .filter_map(|(path, entry)| Some((path, serde_json::from_value(entry).ok()?)))
            .collect()
    }

    /// Every readable entry of type `E`, sorted by key (see
    /// [`Cache::read_all_entries`]).
    pub fn all<E: CacheEntry>(&self) -> Vec<E> {
        self.read_all_entries(E::KIND)
            .into_iter()
            .filter_map(|entry| serde_json::from_value(entry).ok())
            .collect()
    }

    /// Atomically write `entry` for `path`, its location fields set from
    /// `path` (see [`Cache::write_entry`]).
    pub fn write_typed<E: CacheEntry>(&self, path: &str, entry: &E) -> Result<(), EntryError> {
        self.write_entry(E::KIND, path, &entry_json(entry))
    }

    /// [`Cache::write_entries`] for typed entries.
    pub(crate) fn write_all_typed<E: CacheEntry>(
        &self,
        entries: &[(String, E)],
    ) -> Result<(), EntryError> {
        let raw: Vec<(String, Value)> = entries
            .iter()
            .map(|(path, entry)| (path.clone(), entry_json(entry)))
            .collect();
        self.write_entries(E::KIND, &raw)
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
    ) -> Result<(), EntryError> {
        let mut items: Vec<(PathBuf, Value)> = Vec::with_capacity(entries.len());
        for (path, data) in entries {
            let data = self.with_location(&self.absolute_entry_path(path), data);
            validate_entry(kind, &data)?;
            items.push((self.entry_file(kind, path), data));
        }
        fsio::write_json_batch(&items).map_err(|err| {
            let dir = self.dir.join(kind.subdir());
            EntryError::Write(self.note_write_failure("writing entries in", &dir, err))
        })
    }

    /// Validate and atomically write an entry for `path`. Its `path` and
    /// `relative_path` fields are set from `path` (see
    /// [`Cache::absolute_entry_path`]) whatever `data` says, so an entry always
    /// names the file it is keyed by. `Err` carries the message the agent sees
    /// (`Error: missing required fields: ...`, ...).
    pub fn write_entry(&self, kind: EntryKind, path: &str, data: &Value) -> Result<(), EntryError> {
        let data = self.with_location(&self.absolute_entry_path(path), data);
        validate_entry(kind, &data)?;
        let file = self.entry_file(kind, path);
        write_json_atomic(&file, &data)
            .map_err(|err| EntryError::Write(self.note_write_failure("writing", &file, err)))
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
            Err(err) => Err(fsio::io_err("removing", &file)(
                self.note_write_failure("removing", &file, err),
            )),
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
}

/// The original's checks, in its order, with messages for the agent.
fn validate_entry(kind: EntryKind, data: &Value) -> Result<(), EntryError> {
    let Some(fields) = data.as_object() else {
        return Err(EntryError::NotAnObject);
    };
    let mut missing: Vec<&'static str> = kind
        .required_fields()
        .iter()
        .copied()
        .filter(|field| !fields.contains_key(*field))
        .collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        return Err(EntryError::MissingFields(missing));
    }
    if let Some(field) = RAW_CONTENT_FIELDS.iter().find(|f| fields.contains_key(**f)) {
        return Err(EntryError::RawContent(field));
    }
    if let Some(confidence) = fields.get("confidence")
        && !confidence
            .as_f64()
            .is_some_and(|value| (0.0..=1.0).contains(&value))
    {
        return Err(EntryError::Confidence);
    }
    if fields
        .get("confidence_reason")
        .is_some_and(|reason| !reason.is_string())
    {
        return Err(EntryError::ConfidenceReason);
    }
    Ok(())
}

/// A typed entry as the JSON it is written as.
fn entry_json<E: Serialize>(entry: &E) -> Value {
    serde_json::to_value(entry).unwrap_or_else(|_| Value::Object(Map::new()))
}

/// An entry's confidence; missing or non-numeric counts as 0.0 (unrated).
#[cfg(test)]
fn confidence_of(entry: &Value) -> f64 {
    entry
        .get("confidence")
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}
