//! The terminal report, for people: [`format_report`].
//!
//! The order is what a reader needs first: the verdict (the brief, what
//! became of the investigation, its coverage and cost), the flags grouped
//! by file with the most severe first, what each directory is (its summary,
//! indented in tree order down to `--depth`), the detailed analysis and the
//! domain sections the synthesis filled (`sections_text`), and then the
//! scan's sections. The tree section stays within
//! [`TREE_LINES`](super::text_tree::TREE_LINES) lines on any tree.
//!
//! It decides nothing and reads nothing but the report it is given. Every
//! file name, path and piece of model text goes through [`crate::text`]'s
//! escaping so none of it can drive the terminal. The scan sections keep
//! the original's labels; `text_scan` draws them.

use super::directory::flag_order;
use super::format::RenderOptions;
use super::sections_text::sections_text;
use super::shape::{Flagged, Sizes, fraction};
use super::text_tree::{TREE_LINES, TreeContext, bounded_tree};
use super::verdict::verdict_lines;
use super::{DirCoverage, DirectoryReport, Flag, Report};
use crate::text::{escape_control, escape_line};

/// Summaries are wrapped to this many columns.
const WIDTH: usize = 100;

/// Format the whole terminal report.
pub(crate) fn format_report(report: &Report, options: &RenderOptions) -> String {
    let target = options.target.as_str();
    let sep = "=".repeat(60);
    let mut lines: Vec<String> = vec![
        sep.clone(),
        "  LUMINOS — File System Intelligence Report".to_string(),
        format!("  Target: {}", escape_line(target)),
        sep.clone(),
    ];

    if !report.ai_brief.is_empty() {
        section(&mut lines, ">> SUMMARY (AI)");
        push_paragraphs(&mut lines, &report.ai_brief);
        lines.push(String::new());
    } else {
        lines.push(String::new());
    }
    for line in verdict_lines(report) {
        lines.push(format!("  {line}"));
    }

    let flags = format_flags(&report.flags);
    if !flags.is_empty() {
        lines.push(flags);
    }

    if !report.directories.is_empty() {
        section(&mut lines, ">> DIRECTORIES");
        push_directories(&mut lines, &report.directories, options.depth);
    }

    if !report.ai_detailed.is_empty() {
        section(&mut lines, ">> DETAILED AI ANALYSIS");
        push_paragraphs(&mut lines, &report.ai_detailed);
    }
    lines.extend(sections_text(&report.ai_sections));

    section(&mut lines, ">> DIRECTORY TREE");
    let sizes = Sizes::of(report, target);
    let flagged = Flagged::of(report);
    let context = TreeContext {
        target,
        sizes: &sizes,
        flagged: &flagged,
    };
    lines.push(bounded_tree(&report.scan.tree, &context, TREE_LINES));

    super::text_scan::push_scan_sections(&mut lines, report, target);

    if let Some(grounding) = &report.grounding {
        lines.push(String::new());
        lines.push(format!("  {}", grounding.summary_line()));
    }

    lines.push(String::new());
    lines.push(sep.clone());
    lines.push("  End of report.".to_string());
    lines.push(sep);
    lines.join("\n")
}

/// The `>> FLAGS` section: one group per path, the group with the most
/// severe flag first (then by path), each flag with its severity; empty
/// when there are no flags. A path grounding did not find says so, and a
/// flag it lowered to `info` carries its note.
pub(crate) fn format_flags(flags: &[Flag]) -> String {
    if flags.is_empty() {
        return String::new();
    }
    let mut sorted: Vec<&Flag> = flags.iter().collect();
    sorted.sort_by(|a, b| flag_order(a, b));
    let mut groups: Vec<(&str, Vec<&Flag>)> = Vec::new();
    for flag in sorted {
        match groups.iter_mut().find(|(path, _)| *path == flag.path) {
            Some((_, group)) => group.push(flag),
            None => groups.push((&flag.path, vec![flag])),
        }
    }
    let mut lines = vec![
        String::new(),
        format!(">> FLAGS ({})", flags.len()),
        "-".repeat(40),
    ];
    for (path, group) in groups {
        let unverified = if group.iter().any(|f| f.verified == Some(false)) {
            "  (not found in the tree)"
        } else {
            ""
        };
        lines.push(format!("  {}{unverified}", escape_line(path)));
        for flag in group {
            let severity = escape_line(&flag.severity).to_uppercase();
            let at = flag.line.map(|n| format!("line {n}: ")).unwrap_or_default();
            lines.push(format!(
                "    [{severity:<8}] {at}{}",
                escape_line(&flag.finding)
            ));
            if let (Some(_), Some(note)) = (&flag.original_severity, &flag.note) {
                lines.push(format!("               {}", escape_line(note)));
            }
        }
    }
    lines.join("\n")
}

/// Each directory down to `depth`, indented by its depth: its path, how it
/// got its summary, and the summary wrapped under it.
fn push_directories(lines: &mut Vec<String>, directories: &[DirectoryReport], depth: usize) {
    let mut deeper = 0;
    for dir in directories {
        if dir.depth() > depth {
            deeper += 1;
            continue;
        }
        let indent = "  ".repeat(dir.depth() + 1);
        let path = if dir.path == "." {
            "./".to_string()
        } else {
            format!("{}/", escape_line(&dir.path))
        };
        lines.push(format!("{indent}{path}  {}", directory_facts(dir)));
        let text_indent = format!("{indent}    ");
        match &dir.summary {
            Some(summary) if !summary.trim().is_empty() => {
                for paragraph in summary.split('\n').filter(|p| !p.trim().is_empty()) {
                    wrap_into(lines, &escape_control(paragraph), &text_indent);
                }
            }
            _ => lines.push(format!("{text_indent}(no summary)")),
        }
    }
    if deeper > 0 {
        lines.push(format!(
            "  {deeper} director{} below --depth {depth} {} in the JSON, Markdown and HTML reports.",
            if deeper == 1 { "y" } else { "ies" },
            if deeper == 1 { "is" } else { "are" },
        ));
    }
}

/// `investigated · completeness 0.8 · confidence 0.9 · 2 flags`.
fn directory_facts(dir: &DirectoryReport) -> String {
    let mut facts = vec![match dir.coverage {
        DirCoverage::None => "no summary".to_string(),
        coverage => coverage.as_str().to_string(),
    }];
    if let Some(reason) = &dir.partial_reason {
        facts.push(format!("partial: {}", escape_line(reason)));
    }
    if let Some(completeness) = dir.completeness {
        facts.push(format!("completeness {}", fraction(completeness)));
    }
    if let Some(confidence) = dir.confidence {
        facts.push(format!("confidence {}", fraction(confidence)));
    }
    if !dir.flags.is_empty() {
        facts.push(format!(
            "{} flag{}",
            dir.flags.len(),
            if dir.flags.len() == 1 { "" } else { "s" }
        ));
    }
    facts.join(" · ")
}

/// `text` in lines of at most [`WIDTH`] columns after `indent`, broken at
/// spaces (a word longer than the width gets a line of its own).
fn wrap_into(lines: &mut Vec<String>, text: &str, indent: &str) {
    let room = WIDTH.saturating_sub(indent.chars().count()).max(20);
    let mut line = String::new();
    let mut used = 0;
    for word in text.split_whitespace() {
        let width = word.chars().count();
        if used > 0 && used + 1 + width > room {
            lines.push(format!("{indent}{line}"));
            line.clear();
            used = 0;
        }
        if used > 0 {
            line.push(' ');
            used += 1;
        }
        line.push_str(word);
        used += width;
    }
    if used > 0 {
        lines.push(format!("{indent}{line}"));
    }
}

pub(super) fn section(lines: &mut Vec<String>, title: &str) {
    lines.push(String::new());
    lines.push(title.to_string());
    lines.push("-".repeat(40));
}

/// Model text, one report line per line of text, indented.
fn push_paragraphs(lines: &mut Vec<String>, text: &str) {
    for paragraph in text.split('\n') {
        lines.push(format!("  {}", escape_control(paragraph)));
    }
}
