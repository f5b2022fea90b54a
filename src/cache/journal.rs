//! The investigation's append-only files: `investigation.log` (one JSON
//! line per tool call, best effort) and `flags.jsonl` (findings, appended
//! under a lock so concurrent loops and processes record each once, each
//! also kept as a record of its own: `flag_records.rs`). A write that
//! fails is latched as the run's cache fault (`fault.rs`).
//!
//! Its edges: lines are appended, never rewritten; the line format and the
//! locked append are `fsio.rs`'s, and what a [`Flag`] is belongs to the
//! report.

use std::collections::HashSet;
use std::io::Read;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::fsio::{append_locked, io_err, jsonl_line, open_append, parse_jsonl, read_jsonl};
use super::{Cache, CacheError, FLAGS_FILE, LOG_FILE, now_iso};
use crate::report::Flag;
use crate::report::Severity;

impl Cache {
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
        // A line that cannot be written does not stop the tool call, but
        // it is a cache write that failed: no new request follows it.
        let path = self.dir.join(LOG_FILE);
        let _ = open_append(&path)
            .and_then(|file| append_locked(&file, &jsonl_line(&line)))
            .map_err(|err| self.note_write_failure("appending to", &path, err));
    }

    /// Append a flag to `flags.jsonl` (one write per line, safe under
    /// concurrent appenders) and keep its second copy (see
    /// `flag_records.rs`).
    pub fn append_flag(&self, flag: &Flag) -> Result<(), CacheError> {
        let path = self.flags_path();
        open_append(&path)
            .and_then(|file| append_locked(&file, &flag_line(flag)))
            .map_err(|err| {
                io_err("appending to", &path)(self.note_write_failure("appending to", &path, err))
            })?;
        self.write_flag_records(std::slice::from_ref(flag))
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
        let mut file = open_append(&path).map_err(|err| {
            io_err("opening", &path)(self.note_write_failure("opening", &path, err))
        })?;
        file.lock().map_err(io_err("locking", &path))?;
        let result = (|| {
            let mut existing = Vec::new();
            file.read_to_end(&mut existing)
                .map_err(io_err("reading", &path))?;
            let mut seen: HashSet<(String, String, Severity)> = parse_jsonl(&existing)
                .into_iter()
                .filter_map(|value| serde_json::from_value::<Flag>(value).ok())
                .map(flag_identity)
                .collect();
            let fresh: Vec<Flag> = flags
                .iter()
                .filter(|flag| seen.insert(flag_identity((*flag).clone())))
                .cloned()
                .collect();
            let mut bytes: Vec<u8> = fresh.iter().flat_map(flag_line).collect();
            if !bytes.is_empty() {
                use std::io::Write;
                // A line cut short by a full disk must not swallow the
                // next one.
                if existing.last().is_some_and(|b| *b != b'\n') {
                    bytes.insert(0, b'\n');
                }
                // One write for all new lines (O_APPEND puts it at the end).
                let written = (&file).write(&bytes).and_then(|written| {
                    if written == bytes.len() {
                        Ok(written)
                    } else {
                        Err(std::io::Error::new(
                            std::io::ErrorKind::WriteZero,
                            format!("short write: {written} of {} bytes", bytes.len()),
                        ))
                    }
                });
                written.map_err(|err| {
                    io_err("appending to", &path)(self.note_write_failure(
                        "appending to",
                        &path,
                        err,
                    ))
                })?;
            }
            Ok(fresh)
        })();
        let _ = file.unlock();
        let fresh = result?;
        self.write_flag_records(&fresh)?;
        Ok(fresh)
    }

    /// Every readable flag in `flags.jsonl`, in file order. What a
    /// damaged file lost is found by [`Cache::read_flags_checked`].
    pub fn read_flags(&self) -> Vec<Flag> {
        read_jsonl(&self.flags_path())
            .into_iter()
            .filter(Value::is_object)
            .filter_map(|value| serde_json::from_value(value).ok())
            .collect()
    }

    pub(super) fn flags_path(&self) -> PathBuf {
        self.dir.join(FLAGS_FILE)
    }
}

pub(super) fn flag_identity(flag: Flag) -> (String, String, Severity) {
    (flag.path, flag.finding, flag.severity)
}

pub(super) fn flag_line(flag: &Flag) -> Vec<u8> {
    jsonl_line(&json!({
        "path": flag.path,
        "finding": flag.finding,
        "severity": flag.severity,
    }))
}
