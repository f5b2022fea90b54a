//! The investigation's named JSON documents: `meta.json` (written for a new
//! investigation, merged into by later runs, and marked when a run wrote
//! without redaction) and the documents passes save to resume
//! (`plan.json`, `survey.json`, ...), read and written by plain name.
//!
//! Its edges: only whole documents, each written atomically (`fsio.rs`);
//! what a document holds is its pass's business, and the summaries and
//! the append-only log and flags are `entries.rs` and `journal.rs`.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::fsio::{io_err, read_json, write_json_atomic};
use super::{Cache, CacheError, META_FILE};
use crate::lenient;
use crate::money::Usd;
use crate::report::AllRuns;

/// The `meta.json` field set once a run with `--no-redact` wrote to the
/// investigation (ours; the original has no redaction).
pub(crate) const UNREDACTED_FIELD: &str = "written_without_redaction";

/// The `meta.json` field holding what every run of the investigation spent
/// ([`AllRuns`]; ours).
pub(crate) const SPENDING_FIELD: &str = "spending";

/// The `meta.json` field listing the reports runs wrote inside the target
/// (`-o`), relative to it (ours): later runs leave them out of the tree,
/// with or without `-o`.
pub(crate) const OWN_OUTPUTS_FIELD: &str = "own_outputs";

/// What luminos reads of an investigation's `meta.json`, leniently (a field
/// of the wrong type reads as absent); [`Cache::update_meta`] keeps every
/// other field as it is.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Meta {
    /// The canonical target it investigates.
    #[serde(default, deserialize_with = "lenient::text")]
    pub target: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub start_time: String,
    /// What its runs spent ([`SPENDING_FIELD`]).
    #[serde(default, deserialize_with = "lenient::some")]
    pub spending: Option<AllRuns>,
    /// [`UNREDACTED_FIELD`].
    #[serde(default, deserialize_with = "lenient::flag")]
    pub written_without_redaction: bool,
    /// [`OWN_OUTPUTS_FIELD`].
    #[serde(default, deserialize_with = "lenient::texts")]
    pub own_outputs: Vec<String>,
}

impl Meta {
    /// The `meta.json` of the investigation in `dir`, if it reads.
    pub(crate) fn of(dir: &Path) -> Option<Meta> {
        read_json(&dir.join(META_FILE))
    }
}

impl Cache {
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
        Meta::of(&self.dir).is_some_and(|meta| meta.written_without_redaction)
    }

    /// What the runs of this investigation spent in all; `None` when none
    /// recorded any (an investigation older than the record, or one that
    /// never made a request).
    pub(crate) fn spending(&self) -> Option<AllRuns> {
        Meta::of(&self.dir)?.spending
    }

    /// Add a run's `cost_usd` and `api_requests` to the record (nothing
    /// when it made no request), stamped now and with this luminos's
    /// version.
    pub(crate) fn add_spending(&self, cost_usd: Usd, api_requests: u64) -> Result<(), CacheError> {
        if api_requests == 0 {
            return Ok(());
        }
        let before = self.spending().unwrap_or_default();
        let after = AllRuns {
            cost_usd: before.cost_usd + cost_usd,
            api_requests: before.api_requests + api_requests,
            last_paid_at: super::now_iso(),
            luminos_version: env!("CARGO_PKG_VERSION").to_string(),
        };
        let mut fields = Map::new();
        fields.insert(SPENDING_FIELD.to_string(), json!(after));
        self.update_meta(fields)
    }

    /// The reports runs wrote inside the target, relative to it.
    pub(crate) fn own_outputs(&self) -> Vec<PathBuf> {
        Meta::of(&self.dir)
            .map(|meta| meta.own_outputs)
            .unwrap_or_default()
            .into_iter()
            .map(PathBuf::from)
            .filter(|rel| rel.is_relative() && !rel.as_os_str().is_empty())
            .collect()
    }

    /// Remember that this run writes its report at `rel` inside the target
    /// (a no-op when it is already known).
    pub(crate) fn record_own_output(&self, rel: &Path) -> Result<(), CacheError> {
        let mut known = self.own_outputs();
        if known.iter().any(|path| path == rel) {
            return Ok(());
        }
        known.push(rel.to_path_buf());
        known.sort();
        let names: Vec<String> = known
            .iter()
            .map(|path| path.to_string_lossy().into_owned())
            .collect();
        let mut fields = Map::new();
        fields.insert(OWN_OUTPUTS_FIELD.to_string(), json!(names));
        self.update_meta(fields)
    }

    /// Read a named JSON document of this investigation (`plan.json`, ...).
    pub fn read_json(&self, name: &str) -> Option<Value> {
        self.read_document(name)
    }

    /// A named JSON document of this investigation read as a `T`; `None`
    /// as [`Cache::read_json`] says, or when it is not one.
    pub(crate) fn read_document<T: DeserializeOwned>(&self, name: &str) -> Option<T> {
        is_document_name(name).then(|| read_json(&self.dir.join(name)))?
    }

    /// Atomically write a named JSON document of this investigation.
    pub fn write_json<T: Serialize + ?Sized>(
        &self,
        name: &str,
        value: &T,
    ) -> Result<(), CacheError> {
        let path = self.dir.join(name);
        if !is_document_name(name) {
            return Err(io_err("writing", &path)(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a cache document is a plain *.json name",
            )));
        }
        write_json_atomic(&path, value)
            .map_err(|err| io_err("writing", &path)(self.note_write_failure("writing", &path, err)))
    }
}

/// A document name is a plain `*.json` file name: no separators, not hidden.
fn is_document_name(name: &str) -> bool {
    name.ends_with(".json")
        && name.len() > ".json".len()
        && !name.starts_with('.')
        && !name.contains(['/', '\0'])
}
