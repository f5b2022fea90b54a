//! The agent's toolbelt: one registry of tools, each implementing [`Tool`]:
//! one [`ToolSpec`] (name, description, schema, toolboxes) and a handler.
//!
//! The registry ([`REGISTRY`], in `registry.rs`) is the single list of
//! tools. It yields both the schemas sent to the model ([`definitions`])
//! and the handlers that run ([`dispatch`]), so adding a tool happens in
//! one place. Names, fields, required lists and enums are the original's;
//! descriptions are ours.
//!
//! JSON stays at the edges: a schema is a typed [`schema::Schema`] until
//! its definition goes on the wire, and a call's input is read once, by
//! the registry, into the tool's own [`Tool::Input`]; handlers never see
//! JSON. The fields of those inputs ([`input`]) read any JSON, so each
//! handler checks its arguments in its own order and the model hears the
//! same error lines whatever it sent.
//!
//! Tools that end a loop (`submit_report`, `submit_survey`, `submit_plan`,
//! `submit_answer`) have a schema but no handler: the loop that offered them
//! reads their input.
//!
//! Every path the model names goes through [`sandbox`]. Errors the model should
//! see are returned as results (`is_error: true`); only failures that make the
//! run itself unsafe to continue are [`FatalToolError`]s.
//!
//! Text read from the target (file contents, command output, outlines,
//! listings, cached summaries) reaches the model through two helpers: first
//! the redactor ([`ToolContext::redact`] and its variants: secrets out, each
//! one recorded as a flag), then [`frame_untrusted`] (delimiters that mark it
//! as data, not instructions). A tool that shows only pieces of a file
//! (`run_command`, `parse_structure`) first has the redactor learn the whole
//! file ([`ToolContext::learn_file`]), since a piece of a secret may no longer
//! look like one; and [`dispatch`] runs no tool before the run has learned
//! every text file of the tree (`learning.rs`), so a value is masked
//! whatever the agent does first. Listings keep to the base scan's scope
//! ([`ToolContext::scope`]).
//!
//! Handlers are synchronous and may block (a command runs for up to 15 s):
//! async callers run [`dispatch`] on a blocking thread.

use std::path::{Path, PathBuf};

use crate::cache::Cache;
use crate::cache::DirStamp;
use crate::progress::Progress;
use crate::redact::{Hit, Redactor};
use crate::report::{Flag, Severity};
use crate::scan::ScanFilter;

mod binary;
pub(crate) mod cache_tools;
pub mod command;
pub mod fs;
pub(crate) mod input;
pub mod learning;
pub(crate) mod notes;
mod recall;
mod registry;
pub(crate) mod sandbox;
pub(crate) mod schema;
pub(crate) mod sniff;
pub mod structure;
pub(crate) mod submit;
mod untrusted;

use notes::flag_lines;
pub(crate) use recall::recall_earlier_redactions;
#[cfg(test)]
pub(crate) use registry::REGISTRY;
pub use registry::{Dispatch, Registered, Tool, ToolSpec, dispatch, find, names};
pub(crate) use registry::{definitions, unknown_tool_message};
pub(crate) use untrusted::{frame_untrusted, name_redaction_flag, redaction_flag};

/// Which loop offers a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Toolbox {
    /// The per-directory investigation loop.
    Dir,
    /// The survey pass.
    Survey,
    /// The planning pass.
    Planning,
    /// The synthesis pass.
    Synthesis,
    /// `luminos ask`: one question about an investigated tree.
    Ask,
    /// `--refine`: the pass after the synthesis that goes back to what the
    /// investigation was unsure of.
    Refine,
}

/// Where the tools that only read the target are offered: the dir loop,
/// and the two conversations after an investigation that check what it
/// says against the files (`ask`, `--refine`).
pub(crate) const READERS: &[Toolbox] = &[Toolbox::Dir, Toolbox::Ask, Toolbox::Refine];

/// What a tool handler gets to work with.
#[derive(Clone, Copy)]
pub struct ToolContext<'a> {
    /// The canonical target: the sandbox root.
    pub target: &'a Path,
    /// This investigation's cache.
    pub cache: &'a Cache,
    /// The outgoing-text filter.
    pub redactor: &'a Redactor,
    /// The base scan's scope: listings leave out what it excludes (ignored
    /// and `-x` names). `None` lists everything.
    pub scope: Option<&'a ScanFilter>,
    /// stderr reporting.
    pub progress: &'a Progress,
    /// The directory being investigated, relative (`(synthesis)` in synthesis),
    /// for logs and stderr lines.
    pub directory: &'a str,
    /// The directory a dir loop investigates (absolute, canonical); `None`
    /// in the other passes. `write_cache` also resolves a relative path
    /// against it.
    pub home: Option<&'a Path>,
    /// The directories folded into `home`'s investigation unit (absolute,
    /// canonical; empty outside a unit): `write_cache` writes their dir
    /// entries too.
    pub unit: &'a [PathBuf],
    /// Fields the pass adds to the dir entries it owns, in the same atomic
    /// write as the agent's data: a dir loop stamps each of its directories
    /// with the fingerprint it had when the loop started (and a folded one
    /// with its unit). Stamped later, an entry a killed run left would have
    /// no fingerprint, and the next run would pay for its loop again.
    pub stamps: &'a [(PathBuf, DirStamp)],
    /// 1-based turn number, for the log.
    pub turn: u32,
    /// Whether calls are recorded in the cache (`investigation.log`, and
    /// redaction flags in `flags.jsonl`). `luminos ask` records nothing:
    /// a question asked after an investigation never changes it.
    pub records: bool,
}

impl<'a> ToolContext<'a> {
    /// A context on `cache`'s target that lists everything (no scope), with
    /// no home, unit or stamps, at turn 0: what a call outside a dir loop's
    /// bookkeeping needs. Set the other fields with struct update syntax.
    pub fn new(
        cache: &'a Cache,
        redactor: &'a Redactor,
        progress: &'a Progress,
        directory: &'a str,
    ) -> Self {
        ToolContext {
            target: cache.target(),
            cache,
            redactor,
            scope: None,
            progress,
            directory,
            home: None,
            unit: &[],
            stamps: &[],
            turn: 0,
            records: true,
        }
    }
}

impl ToolContext<'_> {
    /// Pass text read from `source` (a path relative to the target) through
    /// the redactor before it goes to the model. The secrets removed become
    /// one `info` flag in `flags.jsonl` (how many, rules and lines, never a
    /// value), recorded once per investigation however often the text is
    /// read. `line` is the line within `text`, so pass text that starts at
    /// the top of the file.
    pub fn redact(&self, source: &str, text: &str) -> String {
        if !self.redactor.is_enabled() {
            return text.to_string();
        }
        let redacted = self.redactor.redact_named(file_name(source), text);
        self.record_redactions(source, &redacted.hits);
        redacted.text
    }

    /// Like [`ToolContext::redact`], but only secrets this run had not seen
    /// before are flagged: for output that quotes files whose secrets were
    /// already learned and flagged where they live.
    pub(crate) fn redact_new(&self, source: &str, text: &str) -> String {
        if !self.redactor.is_enabled() {
            return text.to_string();
        }
        let redacted = self.redactor.redact(text);
        let new: Vec<Hit> = redacted.hits.into_iter().filter(|h| !h.known).collect();
        self.record_redactions(source, &new);
        redacted.text
    }

    /// [`Redactor::redact_prefix`] of the start of the file `source`: the
    /// redacted start of `text` and how many bytes of `text` it covers. The
    /// whole file is learned first ([`ToolContext::learn_file`]), so its
    /// notice counts every secret in it, not only those in the part shown;
    /// a secret it did not see (past [`LEARN_BYTES`]) is flagged on its own.
    pub(crate) fn redact_prefix(&self, source: &str, text: &str, keep: usize) -> (String, usize) {
        self.learn_file(&self.target.join(source));
        let (redacted, covered) = self.redactor.redact_prefix(file_name(source), text, keep);
        let new: Vec<Hit> = redacted.hits.into_iter().filter(|h| !h.known).collect();
        self.record_redactions(source, &new);
        (redacted.text, covered)
    }

    /// Redact a command's output. The files it quotes were learned (and
    /// flagged) before; a secret it holds that none of them did is flagged
    /// under the entry it names when its line is a path in the target (a
    /// file named after a secret, printed by `find`), else under the target
    /// root `.`.
    pub(crate) fn redact_command_output(&self, text: &str) -> String {
        if !self.redactor.is_enabled() {
            return text.to_string();
        }
        let redacted = self.redactor.redact(text);
        let lines: Vec<&str> = text.split('\n').collect();
        let out_lines: Vec<&str> = redacted.text.split('\n').collect();
        let mut elsewhere = Vec::new();
        let mut names: Vec<(String, Vec<Hit>)> = Vec::new();
        for hit in redacted.hits.into_iter().filter(|h| !h.known) {
            let named = lines
                .get(hit.line - 1)
                .map(|line| line.trim().trim_start_matches("./"))
                .filter(|rel| {
                    is_inner_path(rel) && self.target.join(rel).symlink_metadata().is_ok()
                });
            // Unless a secret spans lines, the line keeps its number.
            let shown = out_lines.get(hit.line - 1).filter(|_| named.is_some());
            match shown {
                Some(shown) => {
                    let path = shown.trim().trim_start_matches("./").to_string();
                    match names.iter_mut().find(|(p, _)| *p == path) {
                        Some((_, hits)) => hits.push(hit),
                        None => names.push((path, vec![hit])),
                    }
                }
                None => elsewhere.push(hit),
            }
        }
        for (path, hits) in names {
            self.record_flags(name_redaction_flag(&path, &hits).as_slice());
        }
        self.record_redactions(".", &elsewhere);
        redacted.text
    }

    /// Redact text that came back from the cache (summaries the agent wrote
    /// earlier) without recording flags: the file it was derived from was
    /// flagged when it was read.
    pub(crate) fn redact_unflagged(&self, text: &str) -> String {
        if !self.redactor.is_enabled() {
            return text.to_string();
        }
        self.redactor.redact(text).text
    }

    /// Learn the secrets of the file at `path` (inside the target) before
    /// showing the model any of it: they are remembered by the redactor, so
    /// any piece of them is masked wherever it turns up, and recorded as the
    /// file's one notice (how many, rules and lines). A file is read (its
    /// first [`LEARN_BYTES`]) once per run while its size and modification
    /// time stay the same.
    pub(crate) fn learn_file(&self, path: &Path) {
        if !self.redactor.is_enabled() {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if !meta.is_file() {
            return;
        }
        let name = path.file_name().and_then(|n| n.to_str());
        let hits = self
            .redactor
            .learn_source(&source_key(path, &meta), name, true, || {
                read_for_learning(path)
            });
        self.record_redactions(&sandbox::relative_display(self.target, path), &hits);
    }

    /// Redact a directory listing (lines as [`fs::listing_lines`] writes
    /// them) of `dir`, relative to the target. Names come from the target
    /// too: a secret in one is redacted and flagged under the entry's path
    /// (with the secret redacted from that path as well).
    pub(crate) fn redact_listing(&self, dir: &str, listing: &str) -> String {
        if !self.redactor.is_enabled() {
            return listing.to_string();
        }
        let lines: Vec<String> = listing
            .split('\n')
            .map(|line| {
                let redacted = self.redactor.redact(line);
                if !redacted.hits.is_empty() {
                    let name = fs::entry_name(&redacted.text).unwrap_or(redacted.text.trim());
                    let path = match dir {
                        "" | "." => name.to_string(),
                        _ => format!("{dir}/{name}"),
                    };
                    self.record_flags(name_redaction_flag(&path, &redacted.hits).as_slice());
                }
                redacted.text
            })
            .collect();
        lines.join("\n")
    }

    /// Record the redaction `hits` in `source` as its one notice, unless the
    /// investigation already holds it, and print it when new.
    pub(crate) fn record_redactions(&self, source: &str, hits: &[Hit]) {
        self.record_flags(redaction_flag(source, hits).as_slice());
    }

    /// Record `flags` (made by luminos, not the model), skipping any the
    /// investigation already holds, and print the new ones.
    fn record_flags(&self, flags: &[Flag]) {
        if flags.is_empty() {
            return;
        }
        if !self.records {
            // Said, not recorded: the cache is not this conversation's.
            for flag in flags {
                self.print_flag(&flag.severity, &flag.path, &flag.finding);
            }
            return;
        }
        match self.cache.append_flags_unique(flags) {
            Ok(new) => {
                for flag in new {
                    self.print_flag(&flag.severity, &flag.path, &flag.finding);
                }
            }
            Err(err) => self.progress.ai_dir(
                self.directory,
                &format!("could not record a redaction flag: {err}"),
            ),
        }
    }

    /// `FLAG [SEVERITY] path: finding`, attributed to this loop's
    /// directory (with `-v`, the finding on a line of its own).
    pub(crate) fn print_flag(&self, severity: &Severity, path: &str, finding: &str) {
        for line in flag_lines(severity, path, "", finding, self.progress.is_verbose()) {
            self.progress.ai_dir(self.directory, &line);
        }
    }
}

/// Whether `rel` is a relative path that stays in the target when joined
/// to it (not empty, not absolute, no `..`): only such a path is looked up.
pub(crate) fn is_inner_path(rel: &str) -> bool {
    let path = Path::new(rel);
    !rel.is_empty()
        && path.is_relative()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}

/// Bytes of a file [`ToolContext::learn_file`] reads.
pub(crate) const LEARN_BYTES: u64 = 4 * 1024 * 1024;

/// What a file is learned under: its path, size and modification time, so
/// a file that changes is learned again. The learning before the first
/// tool result and the tools' own learning use the same key, so a file is
/// read once either way.
pub(crate) fn source_key(path: &Path, meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!(
        "{}\0{}\0{}.{}",
        path.display(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec()
    )
}

/// The text the redactor learns of the file at `path`: its first
/// [`LEARN_BYTES`], invalid UTF-8 replaced. `None` when it cannot be read.
pub(crate) fn read_for_learning(path: &Path) -> Option<String> {
    let prefix = fs::read_prefix(path, LEARN_BYTES).ok()?;
    Some(String::from_utf8_lossy(&prefix.bytes).into_owned())
}

/// The last component of a `/`-separated path, for the redactor's rules
/// that depend on a file's name.
fn file_name(source: &str) -> Option<&str> {
    source.rsplit('/').next().filter(|name| !name.is_empty())
}

/// A tool's result as the model will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
        }
    }
}

/// A failure that must stop the run rather than be shown to the model.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FatalToolError(pub String);

/// Turn a handler body that uses `?` on [`ToolOutput`] errors (the messages
/// the model sees) into a handler result.
pub(crate) fn respond(
    body: impl FnOnce() -> Result<ToolOutput, ToolOutput>,
) -> Result<ToolOutput, FatalToolError> {
    Ok(body().unwrap_or_else(|error| error))
}

#[cfg(test)]
mod tests;
