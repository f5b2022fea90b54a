//! `AGENTS.md` (`--format agents`, `-o AGENTS.md`): what a coding agent
//! (Codex, Claude Code, Cursor, Copilot) should know before it works on the
//! target, written from the investigation: what the project is, its layout
//! (a line per top directory), how to build, test and run it (the commands
//! the tree's own files give, each with the file it came from), the
//! conventions worth following and the hazards the flags raised.
//!
//! Nothing is invented and everything is checked:
//! - a path is shown as code (in backticks) only when it is known to be in
//!   the tree: a top directory of the scan, or a path the report's
//!   grounding found (a command's source, an entry point, a flag's path);
//!   a command whose source was not found is left out;
//! - the commands are the synthesis's `commands` section, in code blocks,
//!   each line ending with the file it came from;
//! - every piece of model text is escaped ([`super::markup::md_inline`]),
//!   so none of it can open a code span, a link or a heading;
//! - a tree that is not code (no command, stack, entry point or
//!   architecture was found) gets a short file saying what it is;
//! - the file is at most [`MAX_LINES`] lines, each part capped.

use std::fmt::Write as _;

use super::format::RenderOptions;
use super::markup::{md_code, md_inline};
use super::sections::{DevCommand, Sections};
use super::{DirectoryReport, Flag, Report, severity_rank};
use crate::scan::NodeKind;

/// The most lines the file has: an agent reads it on every task, so it
/// says what matters and points at the rest.
pub(crate) const MAX_LINES: usize = 150;
/// Top directories listed.
const MAX_DIRS: usize = 30;
/// Commands listed.
const MAX_COMMANDS: usize = 25;
/// Hazards listed.
const MAX_HAZARDS: usize = 15;
/// Characters of a directory's summary on its line, or of a hazard.
const LINE_CHARS: usize = 160;
/// Characters of the architecture's gist.
const GIST_CHARS: usize = 400;

/// The whole file.
pub(crate) fn render(report: &Report, _options: &RenderOptions) -> String {
    let sections = &report.ai_sections;
    let mut out = String::new();
    let _ = writeln!(out, "# AGENTS.md\n");
    let _ = writeln!(
        out,
        "What a coding agent should know before working in this tree, written by luminos \
         from its investigation; edit it freely.\n"
    );
    out.push_str(&what_it_is(report));
    out.push_str(&layout(report));
    if is_code(sections) {
        out.push_str(&commands(&sections.commands));
        out.push_str(&conventions(sections));
    } else {
        let _ = writeln!(
            out,
            "## Build, test and run\n\nThis tree is not a code project as far as luminos could \
             tell: its files give no command to build, test or run it.\n"
        );
    }
    out.push_str(&hazards(&report.flags));
    capped(out.trim_end())
}

/// What the project is: the synthesis's brief (and its purpose, when the
/// tree mixes kinds), or what the run says when there is none.
fn what_it_is(report: &Report) -> String {
    let mut out = String::from("## What this is\n\n");
    let brief = report.ai_brief.trim();
    if brief.is_empty() {
        let _ = writeln!(
            out,
            "{}\n",
            md_inline(&format!(
                "No investigation wrote a verdict ({}); run luminos with a model to fill this in.",
                report.investigation.line()
            ))
        );
        return out;
    }
    let _ = writeln!(out, "{}\n", md_inline(&first_sentences(brief, GIST_CHARS)));
    if let Some(purpose) = &report.ai_sections.overall_purpose {
        let _ = writeln!(
            out,
            "{}\n",
            md_inline(&first_sentences(purpose, GIST_CHARS))
        );
    }
    out
}

/// A line per top directory of the scan (those in scope), with the first
/// sentence of its summary when the investigation wrote one.
fn layout(report: &Report) -> String {
    let dirs: Vec<&str> = report
        .scan
        .tree
        .children
        .iter()
        .flatten()
        .filter(|node| node.kind == NodeKind::Directory)
        .map(|node| node.name.as_str())
        .collect();
    if dirs.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Layout\n\n");
    for name in dirs.iter().take(MAX_DIRS) {
        let summary = summary_of(&report.directories, name)
            .map(|text| format!(": {}", md_inline(&first_sentences(text, LINE_CHARS))))
            .unwrap_or_default();
        let _ = writeln!(out, "- {}{summary}", md_code(&format!("{name}/"), false));
    }
    if dirs.len() > MAX_DIRS {
        let _ = writeln!(out, "- and {} more directories", dirs.len() - MAX_DIRS);
    }
    out.push('\n');
    out
}

/// The summary of the top directory `name`, if the investigation wrote one.
fn summary_of<'a>(dirs: &'a [DirectoryReport], name: &str) -> Option<&'a str> {
    dirs.iter()
        .find(|dir| dir.path == name)
        .and_then(|dir| dir.summary.as_deref())
        .filter(|summary| !summary.trim().is_empty())
}

/// Whether the investigation found a code project: a command, a stack, an
/// entry point, a component or an architecture.
fn is_code(sections: &Sections) -> bool {
    !sections.commands.is_empty()
        || !sections.tech_stack.is_empty()
        || !sections.entry_points.is_empty()
        || !sections.components.is_empty()
        || sections.architecture.is_some()
}

/// The commands whose source was found in the tree, in a shell block, each
/// ending with what it does and the file it came from.
fn commands(all: &[DevCommand]) -> String {
    let found: Vec<&DevCommand> = all
        .iter()
        .filter(|c| c.verified == Some(true) && !c.command.trim().is_empty())
        .take(MAX_COMMANDS)
        .collect();
    let mut out = String::from("## Build, test and run\n\n");
    if found.is_empty() {
        let _ = writeln!(
            out,
            "luminos found no command to build, test or run this project in its files; look \
             for one before guessing.\n"
        );
        return out;
    }
    let _ = writeln!(
        out,
        "The commands the project's own files give, each with the file it comes from:\n"
    );
    let lines: Vec<String> = found.iter().map(|c| command_line(c)).collect();
    let fence = fence_for(&lines);
    let _ = writeln!(out, "{fence}sh");
    for line in &lines {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "{fence}\n");
    out
}

/// `make test  # test; from Makefile`: one line, whatever the model wrote.
fn command_line(command: &DevCommand) -> String {
    let one = |text: &str| {
        crate::text::escape_line(text)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let purpose = one(&command.purpose);
    let source = one(&command.source);
    if purpose.is_empty() {
        format!("{}  # from {source}", one(&command.command))
    } else {
        format!("{}  # {purpose}; from {source}", one(&command.command))
    }
}

/// A code fence longer than any run of backticks in `lines`.
fn fence_for(lines: &[String]) -> String {
    let longest = lines
        .iter()
        .flat_map(|line| line.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    "`".repeat((longest + 1).max(3))
}

/// The stack, where execution starts (found entry points only) and how
/// the parts fit, as the synthesis said them.
fn conventions(sections: &Sections) -> String {
    let mut lines = Vec::new();
    if !sections.tech_stack.is_empty() {
        lines.push(format!(
            "- Work in the stack the project uses: {}.",
            md_inline(&sections.tech_stack.join(", "))
        ));
    }
    for entry in sections
        .entry_points
        .iter()
        .filter(|e| e.verified == Some(true))
        .take(8)
    {
        let role = if entry.role.is_empty() {
            String::new()
        } else {
            format!(": {}", md_inline(&first_sentences(&entry.role, LINE_CHARS)))
        };
        lines.push(format!(
            "- Execution starts at {}{role}",
            md_code(&entry.path, false)
        ));
    }
    if let Some(architecture) = &sections.architecture {
        lines.push(format!(
            "- Keep to the structure: {}",
            md_inline(&first_sentences(architecture, GIST_CHARS))
        ));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("## Conventions\n\n{}\n\n", lines.join("\n"))
}

/// The flags that call for care (concerns and critical findings, most
/// severe first), their paths shown as code only when found in the tree.
fn hazards(flags: &[Flag]) -> String {
    let mut serious: Vec<&Flag> = flags
        .iter()
        .filter(|f| matches!(f.severity.as_str(), "critical" | "concern"))
        .collect();
    serious.sort_by_key(|f| severity_rank(&f.severity));
    if serious.is_empty() {
        return String::new();
    }
    let mut out = String::from("## Hazards\n\n");
    for flag in serious.iter().take(MAX_HAZARDS) {
        // The severity is one of the two words above: no escaping needed.
        let place = match flag.path.as_str() {
            "general" | "" => String::new(),
            path if flag.verified == Some(true) => format!(" {}", md_code(path, false)),
            path => format!(" {} (not found in the tree)", md_inline(path)),
        };
        let _ = writeln!(
            out,
            "- {}{place}: {}",
            flag.severity,
            md_inline(&first_sentences(&flag.finding, LINE_CHARS))
        );
    }
    if serious.len() > MAX_HAZARDS {
        let _ = writeln!(
            out,
            "- and {} more in luminos's report",
            serious.len() - MAX_HAZARDS
        );
    }
    out
}

/// The first sentences of `text` within `max` characters (at least the
/// first, cut with `…`), on one line.
fn first_sentences(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut end = 0;
    for (i, c) in flat.char_indices() {
        if i > max {
            break;
        }
        if matches!(c, '.' | '!' | '?')
            && flat[i + c.len_utf8()..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace)
        {
            end = i + c.len_utf8();
        }
    }
    if end > 0 {
        return flat[..end].to_string();
    }
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", flat[..cut].trim_end()),
        None => flat,
    }
}

/// `text` with at most [`MAX_LINES`] lines (the parts are capped first, so
/// this only guards the sum).
fn capped(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.len() > MAX_LINES {
        lines.truncate(MAX_LINES);
        // An open code block is closed.
        let fences = lines.iter().filter(|l| l.starts_with("```")).count();
        if fences % 2 == 1 {
            lines.truncate(MAX_LINES - 1);
            lines.push("```");
        }
    }
    lines.join("\n")
}
