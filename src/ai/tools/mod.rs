//! The agent's toolbelt: one registry of tools, each implementing [`Tool`].
//!
//! The registry ([`REGISTRY`]) is the single list of tools. It yields both the
//! schemas sent to the model ([`definitions`]) and the handlers that run
//! ([`dispatch`]), so adding a tool happens in one place. Names, fields,
//! required lists and enums are the original's; descriptions are ours.
//!
//! Tools that end a loop (`submit_report`, `submit_survey`, `submit_plan`) have
//! a schema but no handler: the loop that offered them reads their input.
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
//! look like one. Listings keep to the base scan's scope
//! ([`ToolContext::scope`]).
//!
//! Handlers are synchronous and may block (a command runs for up to 15 s):
//! async callers run [`dispatch`] on a blocking thread.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::ai::api::ToolDefinition;
use crate::cache::Cache;
use crate::progress::Progress;
use crate::redact::{Hit, Redactor};
use crate::report::Flag;
use crate::scan::ScanFilter;
use crate::text::escape_line;

pub(crate) mod cache_tools;
pub mod command;
pub mod fs;
pub(crate) mod input;
pub(crate) mod notes;
pub(crate) mod sandbox;
pub(crate) mod schema;
pub(crate) mod sniff;
pub mod structure;
pub(crate) mod submit;
mod untrusted;

use notes::flag_lines;
pub(crate) use untrusted::{frame_untrusted, name_redaction_flags, redaction_flags};

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
}

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
    pub stamps: &'a [(PathBuf, Map<String, Value>)],
    /// 1-based turn number, for the log.
    pub turn: u32,
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
        }
    }
}

impl ToolContext<'_> {
    /// Pass text read from `source` (a path relative to the target) through
    /// the redactor before it goes to the model. Each secret removed becomes
    /// a flag in `flags.jsonl` (rule and line, never the value), recorded once
    /// per investigation however often the text is read. `line` is the line
    /// within `text`, so pass text that starts at the top of the file, or say
    /// what it is in `source` (for example `src/app.py (grep output)`).
    pub fn redact(&self, source: &str, text: &str) -> String {
        if !self.redactor.is_enabled() {
            return text.to_string();
        }
        let redacted = self.redactor.redact(text);
        self.record_redactions(source, &redacted.hits);
        redacted.text
    }

    /// Like [`ToolContext::redact`], but only secrets this run had not seen
    /// before become flags: for output that quotes files whose secrets were
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

    /// [`Redactor::redact_prefix`] with the hits recorded as flags: the
    /// redacted start of `text` and how many bytes of `text` it covers.
    pub(crate) fn redact_prefix(&self, source: &str, text: &str, keep: usize) -> (String, usize) {
        let (redacted, covered) = self.redactor.redact_prefix(text, keep);
        self.record_redactions(source, &redacted.hits);
        (redacted.text, covered)
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

    /// Learn the secrets of the file at `path` (canonical, inside the
    /// target) before showing the model pieces of it: they are remembered
    /// by the redactor, so any piece of them is masked wherever it turns up,
    /// and flagged under the file's path and line. A file is read (its
    /// first [`LEARN_BYTES`]) once per run while its size and modification
    /// time stay the same.
    pub(crate) fn learn_file(&self, path: &Path) {
        use std::os::unix::fs::MetadataExt;
        if !self.redactor.is_enabled() {
            return;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let key = format!(
            "{}\0{}\0{}.{}",
            path.display(),
            meta.len(),
            meta.mtime(),
            meta.mtime_nsec()
        );
        let hits = self.redactor.learn_source(&key, || {
            let prefix = fs::read_prefix(path, LEARN_BYTES).ok()?;
            Some(String::from_utf8_lossy(&prefix.bytes).into_owned())
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
                    self.record_flags(&name_redaction_flags(&path, &redacted.hits));
                }
                redacted.text
            })
            .collect();
        lines.join("\n")
    }

    /// Record redaction `hits` in `source` as flags, skipping any the
    /// investigation already holds, and print the new ones.
    pub(crate) fn record_redactions(&self, source: &str, hits: &[Hit]) {
        self.record_flags(&redaction_flags(source, hits));
    }

    /// Record `flags` (made by luminos, not the model), skipping any the
    /// investigation already holds, and print the new ones.
    fn record_flags(&self, flags: &[Flag]) {
        if flags.is_empty() {
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
    pub(crate) fn print_flag(&self, severity: &str, path: &str, finding: &str) {
        for line in flag_lines(severity, path, "", finding, self.progress.is_verbose()) {
            self.progress.ai_dir(self.directory, &line);
        }
    }
}

/// Bytes of a file [`ToolContext::learn_file`] reads.
pub(crate) const LEARN_BYTES: u64 = 4 * 1024 * 1024;

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

/// One tool.
pub trait Tool: Send + Sync {
    /// The name the model calls.
    fn name(&self) -> &'static str;
    /// What the model is told the tool does.
    fn description(&self) -> &'static str;
    /// The JSON schema of the input.
    fn input_schema(&self) -> Value;
    /// The loops that offer it.
    fn toolboxes(&self) -> &'static [Toolbox];
    /// Whether calling it ends the loop (no handler runs).
    fn ends_loop(&self) -> bool {
        false
    }
    /// Run the tool. Not called for tools that end a loop.
    fn run(&self, ctx: &ToolContext<'_>, input: &Value) -> Result<ToolOutput, FatalToolError>;
}

/// What [`dispatch`] did with a call.
#[derive(Debug)]
pub enum Dispatch {
    /// A handler ran; send this back.
    Ran(ToolOutput),
    /// The tool ends the loop; the caller reads its input.
    EndsLoop,
    /// No such tool in this toolbox.
    Unknown,
}

/// Every tool, in the order the model sees them within a toolbox. Per toolbox this
/// is the original's order:
/// - dir: read_file, list_directory, run_command, parse_structure,
///   write_cache, think, checkpoint, flag, submit_report;
/// - synthesis: read_cache, list_cache, flag, submit_report;
/// - survey: submit_survey;
/// - planning: submit_plan.
pub(crate) static REGISTRY: &[&dyn Tool] = &[
    &fs::ReadFile,
    &fs::ListDirectory,
    &command::RunCommand::new(),
    &structure::ParseStructure,
    &cache_tools::WriteCache,
    &notes::THINK,
    &notes::CHECKPOINT,
    &cache_tools::ReadCache,
    &cache_tools::ListCache,
    &notes::FlagTool,
    &submit::DIR_REPORT,
    &submit::SYNTHESIS_REPORT,
    &submit::SURVEY,
    &submit::PLAN,
];

/// The tool `name` as offered in `toolbox` (`submit_report` has one schema per
/// toolbox).
pub fn find(toolbox: Toolbox, name: &str) -> Option<&'static dyn Tool> {
    REGISTRY
        .iter()
        .copied()
        .find(|tool| tool.name() == name && tool.toolboxes().contains(&toolbox))
}

/// The tool definitions offered in `toolbox`, in registry order.
pub(crate) fn definitions(toolbox: Toolbox) -> Vec<ToolDefinition> {
    REGISTRY
        .iter()
        .filter(|tool| tool.toolboxes().contains(&toolbox))
        .map(|tool| ToolDefinition {
            name: tool.name().to_string(),
            description: tool.description().to_string(),
            input_schema: tool.input_schema(),
            cache_control: None,
        })
        .collect()
}

/// The tool names offered in `toolbox`, in registry order.
pub fn names(toolbox: Toolbox) -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|tool| tool.toolboxes().contains(&toolbox))
        .map(|tool| tool.name())
        .collect()
}

/// Run the tool `name` offered in `toolbox`, logging the call to the cache's
/// `investigation.log` (args without `data`, and the result's length in
/// characters, as the original counts it). Loop-ending and unknown tools
/// run nothing and are not logged.
pub fn dispatch(
    toolbox: Toolbox,
    name: &str,
    input: &Value,
    ctx: &ToolContext<'_>,
) -> Result<Dispatch, FatalToolError> {
    let Some(tool) = find(toolbox, name) else {
        return Ok(Dispatch::Unknown);
    };
    if tool.ends_loop() {
        return Ok(Dispatch::EndsLoop);
    }
    // The API sends an object; anything else is treated as "no arguments" so
    // handlers see the usual missing-argument errors.
    let no_args = Value::Object(serde_json::Map::new());
    let args = if input.is_object() { input } else { &no_args };
    let output = tool.run(ctx, args)?;
    ctx.cache.log_tool_call(
        ctx.directory,
        ctx.turn,
        name,
        input,
        output.content.chars().count(),
    );
    Ok(Dispatch::Ran(output))
}

/// The result to send back for a tool that is not offered in this loop.
pub(crate) fn unknown_tool_message(name: &str) -> String {
    format!(
        "Error: there is no tool named '{}' in this step.",
        escape_line(name)
    )
}

/// The string argument `name`: `Ok(None)` when absent or null, an error
/// result when it is not a string.
pub(crate) fn optional_str<'v>(
    input: &'v Value,
    name: &str,
) -> Result<Option<&'v str>, ToolOutput> {
    match input.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(ToolOutput::error(format!(
            "Error: '{name}' must be a string."
        ))),
    }
}

/// The string argument `name`, which must be present and non-empty.
pub(crate) fn required_str<'v>(input: &'v Value, name: &str) -> Result<&'v str, ToolOutput> {
    match optional_str(input, name)? {
        Some(text) if !text.is_empty() => Ok(text),
        _ => Err(ToolOutput::error(format!(
            "Error: the '{name}' argument is required."
        ))),
    }
}

/// Turn a handler body that uses `?` on [`ToolOutput`] errors (the messages
/// the model sees) into a handler result.
pub(crate) fn respond(
    body: impl FnOnce() -> Result<ToolOutput, ToolOutput>,
) -> Result<ToolOutput, FatalToolError> {
    Ok(body().unwrap_or_else(|error| error))
}

#[cfg(test)]
mod tests;
