//! Every value in the tree known before the first tool result.
//!
//! The redactor masks any piece of a value it has removed, but a rule
//! removes a value only where it sees it in context: `grep -o` prints a
//! password with no name beside it, a base64 grep prints a key's lines
//! bare. An agent that digs values out before it reads their files (or
//! while another loop is still reading them) would send them. So before
//! any tool result leaves, every text file of the tree has been through the
//! rules, and its values are remembered:
//!
//! - which files: every regular file of every directory the base scan's
//!   walk listed ([`crate::scan::ScannedDirs::files`]): hidden ones and
//!   those the ignore rules leave out of the scan included (a `.env` in
//!   `.gitignore`), since the tools can still read them. What lies in a
//!   directory the walk did not enter (an ignored `node_modules`) is
//!   learned when a tool first reaches it, before its output goes out, as
//!   before ([`super::ToolContext::learn_file`]). Binary files are left to
//!   the tools too (`read_file` shows them only as a masked hex dump).
//! - when: [`start_learning`] runs on threads of its own beside the survey
//!   and planning calls, which send no tool result, from the moment the
//!   run's first request has gone out (before, it would compete with that
//!   request's making for the CPU); the tools wait for it
//!   ([`crate::redact::Redactor::wait_learned`], in the registry's
//!   dispatch), so it never delays the first request, only (when the
//!   model answers faster than the tree is read) the first tool result.
//! - how: each file's first [`super::LEARN_BYTES`] are read and passed
//!   through the cheap prefilter ([`may_hold_secret`]); only those it lets
//!   through meet the full redactor. Each file is learned under the key the
//!   tools use ([`super::source_key`]), so a tool never reads it again, and
//!   its redaction notice is recorded when a tool first shows it, as
//!   before.
//! - reruns: what holds nothing is kept in the cache
//!   ([`CLEAN_FILE`], keyed by path, size and modification time, and the
//!   rules' version), so a rerun reads only new and changed files and
//!   those that hold values (the values themselves are never written).
//!
//! The files are read again rather than during the scan: the scan reads
//! only the files it classifies by content or counts lines of, and
//! learning there would put the prefilter on the path to the first
//! request; here the re-read comes from the page cache while the model
//! answers the survey.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::sniff::SNIFF_BYTES;

use super::{LEARN_BYTES, source_key};
use crate::cache::Cache;
use crate::progress::Progress;
use crate::redact::{RULES, Redactor, may_hold_secret};
use crate::scan::{FilesByDir, file_paths};

/// `<id>/redaction_clean.json`: the files the last learning found nothing
/// in, by a digest of their path, size and modification time, and the
/// version of the rules that looked.
pub(crate) const CLEAN_FILE: &str = "redaction_clean.json";

/// Files handed to a worker at a time.
const BATCH: usize = 32;

/// What a learning did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LearningTally {
    /// Files considered.
    pub files: usize,
    /// Read (not known clean from an earlier run).
    pub read: usize,
    /// Passed the prefilter: through the full redactor.
    pub redacted: usize,
    /// Holding at least one value.
    pub with_values: usize,
    /// Clean, by their digests: for the next run.
    pub clean: Vec<String>,
}

/// The digest a file is remembered as clean under: its path (relative to
/// the target), size and modification time.
fn clean_key(rel: &Path, meta: &std::fs::Metadata) -> String {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let mut hasher = Sha256::new();
    hasher.update(rel.as_os_str().as_bytes());
    hasher.update(format!(
        "\0{}\0{}.{}",
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec()
    ));
    crate::text::hex(&hasher.finalize()[..12])
}

/// The rules' version: a clean verdict holds only for the rules and the
/// prefilter that gave it.
fn rules_version() -> String {
    let mut hasher = Sha256::new();
    for rule in RULES {
        hasher.update(rule.name);
        hasher.update(rule.pattern);
    }
    hasher.update(env!("CARGO_PKG_VERSION"));
    crate::text::hex(&hasher.finalize()[..12])
}

/// Learn the values of `files` (relative to `target`, the canonical
/// target) with `redactor`, on `threads` workers, skipping those `clean`
/// names (digests from an earlier run). Each file is learned as a tool
/// would learn it, without recording its notice.
pub fn learn_tree(
    target: &Path,
    files: &[PathBuf],
    redactor: &Redactor,
    clean: &HashSet<String>,
    threads: usize,
) -> LearningTally {
    let next = AtomicUsize::new(0);
    let workers = threads.clamp(1, files.len().div_ceil(BATCH).max(1));
    let parts: Vec<LearningTally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut learned = LearningTally::default();
                    let mut buffer = Vec::new();
                    loop {
                        let start = next.fetch_add(BATCH, Ordering::Relaxed);
                        if start >= files.len() {
                            break;
                        }
                        for rel in &files[start..(start + BATCH).min(files.len())] {
                            let file = File { target, rel, clean };
                            file.learn(redactor, &mut buffer, &mut learned);
                        }
                    }
                    learned
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut total = LearningTally {
        files: files.len(),
        ..LearningTally::default()
    };
    for part in parts {
        total.read += part.read;
        total.redacted += part.redacted;
        total.with_values += part.with_values;
        total.clean.extend(part.clean);
    }
    total.clean.sort_unstable();
    total
}

/// One file of a learning.
struct File<'a> {
    target: &'a Path,
    rel: &'a Path,
    clean: &'a HashSet<String>,
}

impl File<'_> {
    /// Learn the file (see [`learn_tree`]), reading it into `buffer`.
    /// The file is opened once (never following a link, never blocking on
    /// a FIFO swapped in) and stated once on the open descriptor; only a
    /// rerun, which may skip it, stats it by name first.
    fn learn(&self, redactor: &Redactor, buffer: &mut Vec<u8>, learned: &mut LearningTally) {
        let path = self.target.join(self.rel);
        if !self.clean.is_empty() {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                return;
            };
            let key = clean_key(self.rel, &meta);
            if self.clean.contains(&key) {
                learned.clean.push(key);
                return;
            }
        }
        let Some(meta) = read_regular(&path, buffer) else {
            return;
        };
        learned.read += 1;
        let key = clean_key(self.rel, &meta);
        let head = &buffer[..buffer.len().min(SNIFF_BYTES)];
        let name = path.file_name().and_then(|n| n.to_str());
        // Binary files are left to the tools, which show them masked or
        // not at all; text the prefilter passes over holds nothing.
        if head.contains(&0) || !may_hold_secret(name, buffer) {
            learned.clean.push(key);
            return;
        }
        learned.redacted += 1;
        let source = source_key(&path, &meta);
        let mut text = Some(String::from_utf8_lossy(buffer).into_owned());
        // The hits stay with the redactor, for the file's notice; whether
        // it held anything is what the next run needs.
        redactor.learn_source(&source, name, false, || text.take());
        if redactor.holds_values_of(&source) {
            learned.with_values += 1;
        } else {
            learned.clean.push(key);
        }
    }
}

/// Read the first [`LEARN_BYTES`] of the regular file at `path` into
/// `buffer`; its metadata, or `None` when it is not a regular file or
/// cannot be read.
fn read_regular(path: &Path, buffer: &mut Vec<u8>) -> Option<std::fs::Metadata> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    // The size the descriptor reports: one read fills it (a file that grew
    // since is read as far as it was; one that shrank ends early).
    let want = usize::try_from(meta.len().min(LEARN_BYTES)).ok()?;
    buffer.clear();
    buffer.resize(want, 0);
    let mut filled = 0;
    while filled < want {
        match (&file).read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    buffer.truncate(filled);
    Some(meta)
}

/// The clean digests an earlier run kept in `cache`, if its rules were
/// these.
fn read_clean(cache: &Cache) -> HashSet<String> {
    let Some(saved) = cache.read_json(CLEAN_FILE) else {
        return HashSet::new();
    };
    if saved["rules"] != rules_version() {
        return HashSet::new();
    }
    saved["clean"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Whether a session's first request has gone out: work that must not
/// slow that request down (learning the tree's values) waits for it.
#[derive(Debug, Default)]
pub(crate) struct FirstRequest {
    state: std::sync::Mutex<Option<bool>>,
    changed: std::sync::Condvar,
}

impl FirstRequest {
    /// Say that the first request went (true) or that the session ended
    /// without one (false); only the first word counts.
    pub(crate) fn set(&self, sent: bool) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.is_none() {
            *state = Some(sent);
            self.changed.notify_all();
        }
    }

    /// Block until the first request has gone out (true) or the session
    /// ended without one (false).
    pub(crate) fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(sent) = *state {
                return sent;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Start learning the values of `files` (relative to `target`, the
/// canonical target) on threads of their own; the tools wait until it is
/// done. The clean files an earlier run found are read from `cache`, and
/// this run's are written back when `save` says (not by `luminos ask`,
/// which leaves the cache as it was). Nothing happens with redaction off.
pub(crate) fn start_learning(
    (redactor, first_request): (&Arc<Redactor>, Arc<FirstRequest>),
    target: &Path,
    files: &Arc<FilesByDir>,
    (cache, save): (&Cache, bool),
    progress: &Progress,
) {
    if !redactor.is_enabled() {
        return;
    }
    let gate = Redactor::begin_learning(redactor);
    let (target, files) = (target.to_path_buf(), files.clone());
    let (cache, said) = (cache.clone(), progress.clone());
    let spawned = std::thread::Builder::new()
        .name("learn-values".into())
        .spawn(move || {
            // On two cores, reading the tree beside the building of the
            // first request would delay it: the learning starts once it
            // has gone (a session that ends with none needs none).
            if !first_request.wait() {
                return;
            }
            let started = Instant::now();
            let clean = read_clean(&cache);
            let threads = std::thread::available_parallelism().map_or(2, usize::from);
            let files = file_paths(&files);
            let learned = learn_tree(&target, &files, gate.redactor(), &clean, threads);
            // The tools may go on: every value is known.
            drop(gate);
            if said.is_verbose() {
                said.ai(&learned_line(&learned, started.elapsed()));
            }
            if save {
                let saved = json!({"rules": rules_version(), "clean": learned.clean});
                if let Err(err) = cache.write_json(CLEAN_FILE, &saved) {
                    said.ai(&format!("Warning: could not save {CLEAN_FILE}: {err}"));
                }
            }
        });
    // Without a thread the gate drops with the closure: nothing waits on
    // a learning that never runs, and the tools learn each file they
    // reach, as they always do.
    if let Err(err) = spawned {
        progress.ai(&format!(
            "Warning: could not start learning the tree's values: {err}"
        ));
    }
}

/// The `-v` line a learning prints.
fn learned_line(learned: &LearningTally, took: Duration) -> String {
    format!(
        "Redaction: learned {} files ({} read, {} through the redactor, {} holding values) in {} ms",
        learned.files,
        learned.read,
        learned.redacted,
        learned.with_values,
        took.as_millis()
    )
}
