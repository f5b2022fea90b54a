//! The two kinds of summary the cache keeps, typed: a directory's
//! ([`DirEntry`]) and a file's ([`FileEntry`]), with the original's field
//! names (an interface: tools built on luminos read these files).
//!
//! The fields luminos reads are typed; every other field an entry holds
//! (those an agent added, an older or newer luminos wrote, or the scan's
//! figures of an entry built without the model) is kept as it was in
//! `extra`, and written back in place. Reading is lenient, as the readers
//! before these types were: a field of the wrong type (an agent wrote
//! `"child_count": "7"`) reads as its default rather than failing the
//! entry, so every cache an earlier luminos wrote still reads
//! ([`crate::lenient`]). What an agent may write is checked where its input
//! is read (`write_cache`, [`super::entries::validate_entry`]).
//!
//! Its edges: the shapes and their lenient reading; where an entry lives
//! and how it is written is `entries.rs`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::lenient;
use crate::report::sections::DevCommand;

/// A directory's summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirEntry {
    /// Absolute: where the entry is keyed (set by the cache on write).
    #[serde(default, deserialize_with = "lenient::text")]
    pub path: String,
    /// Relative to the target, `.` for the target itself.
    #[serde(default, deserialize_with = "lenient::text")]
    pub relative_path: String,
    #[serde(default, deserialize_with = "lenient::count")]
    pub child_count: u64,
    #[serde(default, deserialize_with = "lenient::text")]
    pub summary: String,
    #[serde(default = "unknown", deserialize_with = "lenient::text")]
    pub dominant_category: String,
    /// Names or paths the summary points at.
    #[serde(default, deserialize_with = "lenient::texts")]
    pub notable_files: Vec<String>,
    /// How sure its author was, 0 to 1; `None`: unrated.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::fraction"
    )]
    pub confidence: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub confidence_reason: Option<String>,
    /// How much of the directory its loop covered, from `submit_report`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::fraction"
    )]
    pub completeness: Option<f64>,
    /// Salvaged from what a loop that stopped early had cached.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub partial: bool,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub partial_reason: Option<String>,
    /// The directory's fingerprint when its loop started.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub fingerprint: Option<String>,
    /// The `--language` it was written in.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub language: Option<String>,
    /// The unit (its top directory, relative) a folded directory was read in.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub unit: Option<String>,
    /// Built from the scan, without the model.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub mechanical: bool,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub mechanical_reason: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub cached_at: String,
    /// The build, test and run commands its loop found (those that do not
    /// read are left out).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient::items"
    )]
    pub commands: Vec<DevCommand>,
    /// Every other field, as it was.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A file's summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Absolute: where the entry is keyed (set by the cache on write).
    #[serde(default, deserialize_with = "lenient::text")]
    pub path: String,
    /// Relative to the target.
    #[serde(default, deserialize_with = "lenient::text")]
    pub relative_path: String,
    #[serde(default, deserialize_with = "lenient::count")]
    pub size_bytes: u64,
    #[serde(default, deserialize_with = "lenient::text")]
    pub category: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub summary: String,
    /// Its author found it worth a reader's attention.
    #[serde(
        default,
        skip_serializing_if = "is_false",
        deserialize_with = "lenient::flag"
    )]
    pub notable: bool,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub notable_reason: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::fraction"
    )]
    pub confidence: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::some_text"
    )]
    pub confidence_reason: Option<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub cached_at: String,
    /// Every other field, as it was.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What every dir entry of a loop's assignment carries besides what its
/// author wrote: the fingerprint its directory had when the loop started,
/// the `--language` it is written in, and, for a directory folded into a
/// unit, the unit. Stamped on entries luminos writes, and added to those an
/// agent writes with `write_cache`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DirStamp {
    pub fingerprint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl DirStamp {
    /// Whether `entry` carries this stamp already.
    pub fn is_on(&self, entry: &DirEntry) -> bool {
        entry.fingerprint.as_deref() == Some(self.fingerprint.as_str())
            && (self.unit.is_none() || entry.unit == self.unit)
            && entry.language == self.language
    }

    /// Stamp `entry` (a unit's stamp names its unit; the language is the
    /// stamp's, none when the run has none).
    pub fn apply(&self, entry: &mut DirEntry) {
        entry.fingerprint = Some(self.fingerprint.clone());
        if self.unit.is_some() {
            entry.unit = self.unit.clone();
        }
        entry.language = self.language.clone();
    }
}

#[cfg(test)]
impl DirEntry {
    /// Read from an entry's JSON, leniently (see the module docs); `None`
    /// for anything but an object.
    pub fn from_value(value: Value) -> Option<DirEntry> {
        value
            .is_object()
            .then(|| serde_json::from_value(value).ok())
            .flatten()
    }
}

#[cfg(test)]
impl FileEntry {
    /// Read from an entry's JSON, leniently (see the module docs); `None`
    /// for anything but an object.
    pub fn from_value(value: Value) -> Option<FileEntry> {
        value
            .is_object()
            .then(|| serde_json::from_value(value).ok())
            .flatten()
    }
}

fn unknown() -> String {
    "unknown".to_string()
}

// serde hands `skip_serializing_if` a reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(value: &bool) -> bool {
    !value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entry_reads_leniently_and_keeps_what_it_does_not_know() {
        let raw = json!({
            "path": "/t/src", "relative_path": "src", "child_count": "7",
            "summary": 42, "notable_files": ["a.rs", 3, "b.rs"],
            "confidence": 1.5, "partial": "yes", "cached_at": "now",
            "file_count": 12, "subtree": {"files": 30},
        });
        let entry = DirEntry::from_value(raw).unwrap();
        assert_eq!(entry.child_count, 7);
        assert_eq!(entry.summary, "");
        assert_eq!(entry.dominant_category, "unknown");
        assert_eq!(entry.notable_files, ["a.rs", "b.rs"]);
        assert_eq!(entry.confidence, Some(1.0));
        assert!(!entry.partial);
        assert_eq!(entry.extra["file_count"], 12);
        let back = serde_json::to_value(&entry).unwrap();
        assert_eq!(back["subtree"], json!({"files": 30}));
        assert!(back.get("partial").is_none() && back.get("unit").is_none());
        assert!(DirEntry::from_value(json!([1])).is_none());
    }

    #[test]
    fn a_written_entry_reads_back_the_same() {
        let entry = FileEntry {
            path: "/t/a.rs".into(),
            relative_path: "a.rs".into(),
            size_bytes: 12,
            category: "source".into(),
            summary: "A file.".into(),
            notable: true,
            confidence: Some(0.5),
            cached_at: "then".into(),
            ..FileEntry::default()
        };
        let value = serde_json::to_value(&entry).unwrap();
        assert_eq!(FileEntry::from_value(value), Some(entry));
    }
}
