//! The second copy of every flag, and the check that repairs `flags.jsonl`
//! from it.
//!
//! `flags.jsonl` is the original's file, appended to line by line. A file
//! like that can be damaged without anyone noticing: truncated, cut short
//! by a full disk, edited by hand. The directories whose findings it held
//! still have their summaries, so they are never investigated again, and
//! their flags would be gone for good. So each flag is also written as a
//! document of its own, atomically, under `flags/` (named by the digest of
//! its path, finding and severity, so writing it twice is harmless).
//!
//! At the end of a run [`Cache::read_flags_checked`] compares the two: a
//! flag with a record but no line, or a line that does not parse, means
//! the journal was damaged. It is then rewritten in place from what
//! survives, its readable lines first and the restored flags after them in
//! the order they were recorded, and the caller is told what was repaired
//! ([`FlagRepair`]), so the report can say so. Lines written before records
//! existed (an older cache, the original's) get their records then; that
//! is not damage.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::PathBuf;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::fsio::{ensure_private_dir, io_err, open_append, read_json, write_json_batch};
use super::journal::{flag_identity, flag_line};
use super::{Cache, CacheError, now_iso};
use crate::report::Flag;

/// `<id>/flags/`: one record per flag.
pub(crate) const FLAG_RECORDS_DIR: &str = "flags";

/// What [`Cache::read_flags_checked`] repaired in `flags.jsonl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagRepair {
    /// Flags missing from the file, put back from their records.
    pub restored: usize,
    /// Lines that did not parse (dropped from the file).
    pub unreadable_lines: usize,
}

impl FlagRepair {
    /// Unreadable lines that no record accounts for: findings that may be
    /// lost (each restored flag is taken to be one of the unreadable lines).
    pub fn unrecovered(&self) -> usize {
        self.unreadable_lines.saturating_sub(self.restored)
    }

    /// One line for stderr and the report.
    pub fn line(&self) -> String {
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            }
        };
        let mut line = format!(
            "flags.jsonl was damaged and has been repaired: {} restored from their records",
            plural(self.restored, "flag", "flags")
        );
        if self.unrecovered() > 0 {
            line.push_str(&format!(
                "; {} could not be recovered",
                plural(self.unrecovered(), "unreadable line", "unreadable lines")
            ));
        }
        line
    }
}

/// The flags, after the check, and what it repaired.
#[derive(Debug, Clone, Default)]
pub struct CheckedFlags {
    /// Every flag: the file's readable lines in order, then the restored ones.
    pub flags: Vec<Flag>,
    pub repair: Option<FlagRepair>,
}

/// One line of `flags.jsonl` that parsed.
struct Line {
    raw: Vec<u8>,
    flag: Flag,
}

impl Cache {
    fn flag_record_path(&self, flag: &Flag) -> PathBuf {
        let digest = Sha256::digest(
            [
                &flag.path,
                "\0",
                &flag.finding,
                "\0",
                flag.severity.as_str(),
            ]
            .concat()
            .as_bytes(),
        );
        let name = crate::text::hex(&digest);
        self.dir.join(FLAG_RECORDS_DIR).join(format!("{name}.json"))
    }

    /// Write the record of each of `flags` (atomically, together).
    pub(super) fn write_flag_records(&self, flags: &[Flag]) -> Result<(), CacheError> {
        if flags.is_empty() {
            return Ok(());
        }
        let dir = self.dir.join(FLAG_RECORDS_DIR);
        ensure_private_dir(&dir).map_err(|err| self.note_cache_error(err))?;
        let recorded_at = now_iso();
        let items: Vec<(PathBuf, Value)> = flags
            .iter()
            .map(|flag| {
                let record = json!({
                    "path": flag.path,
                    "finding": flag.finding,
                    "severity": flag.severity,
                    "recorded_at": recorded_at,
                });
                (self.flag_record_path(flag), record)
            })
            .collect();
        write_json_batch(&items).map_err(|err| {
            io_err("writing flag records in", &dir)(self.note_write_failure(
                "writing flag records in",
                &dir,
                err,
            ))
        })
    }

    /// Every readable record, oldest first (ties by identity).
    fn read_flag_records(&self) -> Vec<Flag> {
        let Ok(entries) = std::fs::read_dir(self.dir.join(FLAG_RECORDS_DIR)) else {
            return Vec::new();
        };
        let mut records: Vec<(String, Flag)> = entries
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|entry| {
                let record = read_json(&entry.path()).filter(Value::is_object)?;
                let at = record.get("recorded_at")?.as_str()?.to_string();
                let flag: Flag = serde_json::from_value(record).ok()?;
                Some((at, flag))
            })
            .collect();
        records.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| flag_identity(a.1.clone()).cmp(&flag_identity(b.1.clone())))
        });
        records.into_iter().map(|(_, flag)| flag).collect()
    }

    /// Every flag, the journal's and the records it lacks, read without
    /// repairing anything: for readers that promise not to write (the
    /// cache read back for the MCP server).
    pub(crate) fn read_flags_unrepaired(&self) -> Vec<Flag> {
        merge(self.read_flags().into_iter(), 0, self.read_flag_records())
            .0
            .flags
    }

    /// Every flag, with `flags.jsonl` checked against the records and
    /// repaired when it lost lines (see the module doc). A journal that
    /// cannot be opened or rewritten is not repaired, but no flag it lost
    /// is left out of the answer.
    pub fn read_flags_checked(&self) -> CheckedFlags {
        let records = self.read_flag_records();
        let path = self.flags_path();
        let Ok(mut file) = open_append(&path) else {
            return merge(self.read_flags().into_iter(), 0, records).0;
        };
        if file.lock().is_err() {
            return merge(self.read_flags().into_iter(), 0, records).0;
        }
        let mut bytes = Vec::new();
        if file.read_to_end(&mut bytes).is_err() {
            let _ = file.unlock();
            return merge(self.read_flags().into_iter(), 0, records).0;
        }
        let (lines, unreadable) = parse_lines(&bytes);
        // Lines from before records existed get theirs now.
        let recorded: HashSet<_> = records.iter().cloned().map(flag_identity).collect();
        let unrecorded: Vec<Flag> = lines
            .iter()
            .map(|line| line.flag.clone())
            .filter(|flag| !recorded.contains(&flag_identity(flag.clone())))
            .collect();
        let _ = self.write_flag_records(&unrecorded);
        let kept: Vec<Vec<u8>> = lines.iter().map(|line| line.raw.clone()).collect();
        let (checked, restored) =
            merge(lines.into_iter().map(|line| line.flag), unreadable, records);
        if checked.repair.is_some() {
            let mut rewritten: Vec<u8> = Vec::new();
            for raw in kept {
                rewritten.extend(raw);
                rewritten.push(b'\n');
            }
            rewritten.extend(restored.iter().flat_map(flag_line));
            // In place, under the lock every appender takes: should it be
            // cut short, the records still hold every flag, and the next
            // check repairs it again.
            let _ = file
                .set_len(0)
                .and_then(|()| (&file).write_all(&rewritten))
                .and_then(|()| file.sync_data())
                .map_err(|err| self.note_write_failure("rewriting", &path, err));
        }
        let _ = file.unlock();
        checked
    }
}

/// The journal's flags, then the records it lacks; and those.
fn merge(
    journal: impl Iterator<Item = Flag>,
    unreadable: usize,
    records: Vec<Flag>,
) -> (CheckedFlags, Vec<Flag>) {
    let flags: Vec<Flag> = journal.collect();
    let present: HashSet<_> = flags.iter().cloned().map(flag_identity).collect();
    let restored: Vec<Flag> = records
        .into_iter()
        .filter(|flag| !present.contains(&flag_identity(flag.clone())))
        .collect();
    let repair = (unreadable > 0 || !restored.is_empty()).then_some(FlagRepair {
        restored: restored.len(),
        unreadable_lines: unreadable,
    });
    let mut all = flags;
    all.extend(restored.iter().cloned());
    (CheckedFlags { flags: all, repair }, restored)
}

/// The lines of `flags.jsonl` that hold a flag, and how many non-blank
/// lines do not.
fn parse_lines(bytes: &[u8]) -> (Vec<Line>, usize) {
    let mut lines = Vec::new();
    let mut unreadable = 0;
    for raw in bytes.split(|b| *b == b'\n') {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let flag = serde_json::from_slice::<Value>(raw)
            .ok()
            .filter(Value::is_object)
            .and_then(|value| serde_json::from_value::<Flag>(value).ok());
        match flag {
            Some(flag) => lines.push(Line {
                raw: raw.to_vec(),
                flag,
            }),
            None => unreadable += 1,
        }
    }
    (lines, unreadable)
}
