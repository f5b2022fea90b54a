//! Which format the report is written in, and the one call that writes it
//! in that format: [`render`]. Each format has its module (`text`, `json`,
//! `markdown`, `html`); this file only chooses among them and holds what
//! every one of them is told beyond the report ([`RenderOptions`]).

use std::io::{self, Write};
use std::path::Path;

use super::Report;

/// The report's formats (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The terminal report, for people.
    Text,
    /// Every key, for scripts (`--json`).
    Json,
    /// GitHub-flavoured Markdown, to commit as `LUMINOS.md`.
    Markdown,
    /// One self-contained HTML page.
    Html,
    /// `AGENTS.md`: what a coding agent should know before working on the
    /// target.
    Agents,
}

impl Format {
    /// The format a report file's name asks for: `AGENTS.md` (or
    /// `CLAUDE.md`, which Claude Code reads instead) the agents' file,
    /// else by extension: `.md`/`.markdown`, `.html`/`.htm` or `.json`
    /// (any case); `None` for anything else.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?;
        if name.eq_ignore_ascii_case("AGENTS.md") || name.eq_ignore_ascii_case("CLAUDE.md") {
            return Some(Format::Agents);
        }
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "md" | "markdown" => Some(Format::Markdown),
            "html" | "htm" => Some(Format::Html),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    /// The name `--format` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Agents => "agents",
        }
    }
}

/// What a format needs to know beyond the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// The target as the report names it (absolute, as given).
    pub target: String,
    /// How deep the directory summaries go (`--depth`).
    pub depth: usize,
    /// The columns the terminal report fits (the terminal's, else 100).
    pub width: usize,
}

/// Write `report` in `format` to `out` (without a trailing newline).
pub fn render(
    report: &Report,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => super::json::write(report, out),
        Format::Text => out.write_all(super::text::format_report(report, options).as_bytes()),
        Format::Markdown => out.write_all(super::markdown::render(report, options).as_bytes()),
        Format::Html => out.write_all(super::html::render(report, options).as_bytes()),
        Format::Agents => out.write_all(super::agents::render(report, options).as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_choose_the_format() {
        for (name, format) in [
            ("LUMINOS.md", Some(Format::Markdown)),
            ("r.MARKDOWN", Some(Format::Markdown)),
            ("r.html", Some(Format::Html)),
            ("r.HTM", Some(Format::Html)),
            ("out.json", Some(Format::Json)),
            ("AGENTS.md", Some(Format::Agents)),
            ("repo/agents.md", Some(Format::Agents)),
            ("CLAUDE.md", Some(Format::Agents)),
            ("MY-AGENTS.md", Some(Format::Markdown)),
            ("report.txt", None),
            ("report", None),
            (".md", None),
        ] {
            assert_eq!(Format::from_extension(Path::new(name)), format, "{name}");
        }
    }
}
