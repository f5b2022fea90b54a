//! `think`, `checkpoint` and `flag`: the agent's notes.
//!
//! `think` and `checkpoint` only show the agent's reasoning on stderr, with
//! `-v` (every field; the lines carry the loop's directory, so concurrent
//! loops stay readable), and answer `ok`; without `-v` they print nothing.
//! `flag` also records a finding in `flags.jsonl`, where the report
//! collects it; a finding already recorded is not added again.

use std::collections::HashMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::input::Text;
use super::schema::{JsonType, Schema, bare, object, one_of, text};
use super::{FatalToolError, Tool, ToolContext, ToolOutput, ToolSpec, Toolbox, respond};
use crate::report::{Flag, Severity};
use crate::text::escape_line;

/// A note field as text: strings as they are, other JSON as JSON, null as
/// empty (the original prints whatever it got).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NoteText(String);

impl<'de> Deserialize<'de> for NoteText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(NoteText(match Value::deserialize(d)? {
            Value::Null => String::new(),
            Value::String(text) => text,
            other => other.to_string(),
        }))
    }
}

/// A note's input: its fields by name (a missing one is empty).
#[derive(Debug, Default, Deserialize)]
#[serde(transparent)]
pub(crate) struct NoteInput(HashMap<String, NoteText>);

impl NoteInput {
    fn field(&self, name: &str) -> &str {
        self.0.get(name).map_or("", |text| text.0.as_str())
    }
}

/// Print a labelled note block: the title, then one `label: value` line per
/// field with the values aligned.
fn print_note(ctx: &ToolContext<'_>, title: &str, input: &NoteInput, fields: &[&str]) {
    ctx.progress.ai_dir(ctx.directory, title);
    let width = fields.iter().map(|name| name.len()).max().unwrap_or(0) + 1;
    for name in fields {
        let label = format!("{name}:");
        ctx.progress.ai_dir(
            ctx.directory,
            &format!("  {label:<width$} {}", escape_line(input.field(name))),
        );
    }
}

/// `think(observation, hypothesis, next_action)` and `checkpoint(learned,
/// still_unknown, next_phase)`: the same tool but for its words. Every
/// field is a required string, and the note prints them in schema order
/// under the name in capitals.
pub(crate) struct Note {
    /// Its schema is [`Note::schema`] of the note itself.
    spec: ToolSpec,
    /// Its fields, each named for what the model writes in it (so the
    /// schema spends no description on them).
    fields: [&'static str; 3],
}

pub(crate) static THINK: Note = Note {
    spec: ToolSpec {
        name: "think",
        description: "Your reasoning at a decision point (not before every call).",
        toolboxes: &[Toolbox::Dir],
        schema: || THINK.schema(),
    },
    fields: ["observation", "hypothesis", "next_action"],
};

pub(crate) static CHECKPOINT: Note = Note {
    spec: ToolSpec {
        name: "checkpoint",
        description: "Where this directory stands, after a meaningful group of files (not \
                      after each).",
        toolboxes: &[Toolbox::Dir],
        schema: || CHECKPOINT.schema(),
    },
    fields: ["learned", "still_unknown", "next_phase"],
};

impl Note {
    fn field_names(&self) -> [&'static str; 3] {
        self.fields
    }

    /// Every field, a required string.
    fn schema(&self) -> Schema {
        let properties = self.fields.map(|name| (name, bare(JsonType::String)));
        object(properties, &self.field_names())
    }
}

impl Tool for Note {
    type Input = NoteInput;

    fn spec(&self) -> ToolSpec {
        self.spec
    }

    fn run(&self, ctx: &ToolContext<'_>, input: NoteInput) -> Result<ToolOutput, FatalToolError> {
        if ctx.progress.is_verbose() {
            print_note(
                ctx,
                &self.spec.name.to_uppercase(),
                &input,
                &self.field_names(),
            );
        }
        Ok(ToolOutput::ok("ok"))
    }
}

/// A flag's path written from the target root: in a dir loop, a relative
/// path that names nothing from the root but names something in exactly
/// one of the loop's directories is that one (as `write_cache` reads it),
/// so that the report can check it. A bare `serde.rs` flagged in `a/`'s
/// loop is `a/serde.rs`; written as it came, it would name each of the
/// tree's `serde.rs` alike. A `:12` or `#L12` line suffix is kept; anything
/// else (prose, `general`, a path from the root) stays as written.
fn path_from_root(ctx: &ToolContext<'_>, raw: &str) -> String {
    let Some(home) = ctx.home.filter(|home| *home != ctx.target) else {
        return raw.to_string();
    };
    let trimmed = raw.trim();
    let (path, suffix) = split_line_suffix(trimmed);
    let plain = !path.is_empty()
        && !std::path::Path::new(path).is_absolute()
        && !path.split('/').any(|part| part == ".." || part.is_empty());
    if !plain || ctx.target.join(path).symlink_metadata().is_ok() {
        return raw.to_string();
    }
    let mut found = std::iter::once(home)
        .chain(ctx.unit.iter().map(std::path::PathBuf::as_path))
        .filter(|dir| dir.join(path).symlink_metadata().is_ok());
    match (found.next(), found.next()) {
        (Some(dir), None) => format!(
            "{}/{path}{suffix}",
            super::sandbox::relative_display(ctx.target, dir)
        ),
        _ => raw.to_string(),
    }
}

/// `engine.rs:12` → (`engine.rs`, `:12`); `engine.rs#L3-L9` → (`engine.rs`,
/// `#L3-L9`); anything else has no suffix.
fn split_line_suffix(path: &str) -> (&str, &str) {
    let numeric = |tail: &str| {
        !tail.is_empty()
            && tail
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'-' || b == b'L')
    };
    for mark in ["#L", ":"] {
        if let Some(at) = path.rfind(mark)
            && at > 0
            && numeric(&path[at + mark.len()..])
        {
            return path.split_at(at);
        }
    }
    (path, "")
}

/// How a flag is said on stderr: `FLAG [SEVERITY] path<note>: finding` on
/// one line, or (`verbose`) the finding on a line of its own below. All of
/// it escaped to single lines.
pub(crate) fn flag_lines(
    severity: &Severity,
    path: &str,
    note: &str,
    finding: &str,
    verbose: bool,
) -> Vec<String> {
    let head = format!(
        "FLAG [{}] {}{note}",
        escape_line(&severity.as_str().to_uppercase()),
        escape_line(path)
    );
    if verbose {
        vec![head, format!("  {}", escape_line(finding))]
    } else {
        vec![format!("{head}: {}", escape_line(finding))]
    }
}

/// `flag`'s input: where, what, and how much it matters.
fn flag_schema() -> Schema {
    let severity = one_of(
        &["info", "concern", "critical"],
        Some(
            "info: worth knowing; concern: needs dealing with; critical: likely broken or \
             dangerous.",
        ),
    );
    object(
        [
            ("path", text("Relative to the target, or 'general'.")),
            ("finding", text("What you found.")),
            ("severity", severity),
        ],
        &["path", "finding", "severity"],
    )
}

/// `flag(path, finding, severity)`, offered in the dir loop and synthesis.
pub(crate) struct FlagTool;

/// `flag`'s input.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct FlagInput {
    pub(crate) path: Text,
    pub(crate) finding: Text,
    pub(crate) severity: Text,
}

impl Tool for FlagTool {
    type Input = FlagInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "flag",
            description: "Record something notable, surprising or worrying, as soon as you \
                          notice it.",
            toolboxes: &[Toolbox::Dir, Toolbox::Synthesis],
            schema: flag_schema,
        }
    }

    fn run(&self, ctx: &ToolContext<'_>, input: FlagInput) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            let path = input
                .path
                .optional("path")?
                .filter(|path| !path.is_empty())
                .unwrap_or("general");
            let finding = input.finding.optional("finding")?.unwrap_or("");
            let word = input.severity.optional("severity")?.unwrap_or("info");
            let Some(severity) = Severity::named(word) else {
                return Err(ToolOutput::error(format!(
                    "Error: severity must be info, concern or critical, not '{}'.",
                    escape_line(word)
                )));
            };
            let path = &path_from_root(ctx, path);
            ctx.print_flag(&severity, path, finding);
            let flag = Flag::new(path, finding, severity);
            // Unique: a directory investigated again after an interrupted
            // run finds the same things, and the report should list them once.
            ctx.cache
                .append_flags_unique(std::slice::from_ref(&flag))
                .map_err(|err| {
                    ToolOutput::error(format!("Error: the flag could not be recorded: {err}"))
                })?;
            Ok(ToolOutput::ok("ok"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_is_one_line_unless_verbose() {
        assert_eq!(
            flag_lines(
                &Severity::Concern,
                "src/a.rs",
                "",
                "No tests.\x1b[2J",
                false
            ),
            ["FLAG [CONCERN] src/a.rs: No tests.\\x1b[2J"]
        );
        assert_eq!(
            flag_lines(
                &Severity::Info,
                "x",
                " (not found in the tree)",
                "Odd.",
                true
            ),
            ["FLAG [INFO] x (not found in the tree)", "  Odd."]
        );
    }
}
