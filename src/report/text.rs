//! The terminal report, for people: [`format_report`], sized for a
//! terminal whatever the tree.
//!
//! The order is what a reader needs first: the verdict (the brief, what
//! became of the investigation, its coverage and cost), the flags grouped
//! by file with the most severe first, the detailed analysis and the domain
//! sections the synthesis filled (`sections_text`), then the directories a
//! model read or that hold a flag (`text_dirs`: the ones summarised from
//! the scan are counted in one line, with where to read them), and then
//! the scan's sections. Each part has a line budget (the flags
//! [`FLAG_LINES`], the directories
//! [`DIRECTORY_LINES`](super::text_dirs::DIRECTORY_LINES), the tree
//! [`TREE_LINES`](super::text_tree::TREE_LINES)), paths are relative to the
//! target, and every line fits the width it is given (`text_fit`).
//!
//! It decides nothing and reads nothing but the report it is given. Every
//! file name, path and piece of model text goes through [`crate::text`]'s
//! escaping so none of it can drive the terminal. The scan sections keep
//! the original's labels; `text_scan` draws them.

use super::directory::flag_order;
use super::format::RenderOptions;
use super::sections_text::sections_text;
use super::shape::{Flagged, Sizes};
use super::text_dirs::directory_lines;
use super::text_fit::fit_lines;
use super::text_tree::{TREE_LINES, TreeContext, bounded_tree};
use super::verdict::verdict_lines;
use super::{Flag, Report};
use crate::text::{escape_control, escape_line};

/// The most lines the flags take; the least severe give way first.
pub(crate) const FLAG_LINES: usize = 40;

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
    }
    lines.push(String::new());
    for line in verdict_lines(report) {
        lines.push(format!("  {line}"));
    }

    if !report.flags.is_empty() {
        lines.push(String::new());
        lines.extend(flag_lines(&report.flags, FLAG_LINES, options.width));
    }

    if !report.ai_detailed.is_empty() {
        section(&mut lines, ">> DETAILED AI ANALYSIS");
        push_paragraphs(&mut lines, &report.ai_detailed);
    }
    lines.extend(sections_text(&report.ai_sections));

    if !report.directories.is_empty() {
        section(&mut lines, ">> DIRECTORIES");
        lines.extend(directory_lines(
            &report.directories,
            options.depth,
            options.width,
        ));
    }

    section(&mut lines, ">> DIRECTORY TREE");
    lines.push(tree(report, target));

    super::text_scan::push_scan_sections(&mut lines, report, target);

    if let Some(grounding) = &report.grounding {
        lines.push(String::new());
        lines.push(format!("  {}", grounding.summary_line()));
    }

    lines.push(String::new());
    lines.push(sep.clone());
    lines.push("  End of report.".to_string());
    lines.push(sep);
    fit_lines(&lines, options.width).join("\n")
}

/// The scan's tree, with sizes and flags marked, in its line budget.
fn tree(report: &Report, target: &str) -> String {
    let sizes = Sizes::of(report, target);
    let flagged = Flagged::of(report);
    let context = TreeContext {
        target,
        sizes: &sizes,
        flagged: &flagged,
    };
    bounded_tree(&report.scan.tree, &context, TREE_LINES)
}

/// The `>> FLAGS` section: one group per path, the group with the most
/// severe flag first (then by path), each flag with its severity; empty
/// when there are no flags. A path grounding did not find says so, and a
/// flag it lowered to `info` carries its note. (The report draws them in
/// a line budget, [`flag_lines`].)
#[cfg(test)]
pub(crate) fn format_flags(flags: &[Flag]) -> String {
    if flags.is_empty() {
        return String::new();
    }
    let mut lines = vec![String::new()];
    lines.extend(flag_lines(flags, usize::MAX, usize::MAX));
    lines.join("\n")
}

/// The flags' lines fitted to `width`, in at most `budget` lines (title
/// and rule included): whole groups, most severe first, then one line
/// counting the flags left out and where every one is.
fn flag_lines(flags: &[Flag], budget: usize, width: usize) -> Vec<String> {
    let mut sorted: Vec<&Flag> = flags.iter().collect();
    sorted.sort_by(|a, b| flag_order(a, b));
    let mut groups: Vec<(&str, Vec<&Flag>)> = Vec::new();
    for flag in sorted {
        match groups.iter_mut().find(|(path, _)| *path == flag.path) {
            Some((_, group)) => group.push(flag),
            None => groups.push((&flag.path, vec![flag])),
        }
    }
    let mut lines = vec![format!(">> FLAGS ({})", flags.len()), "-".repeat(40)];
    let mut left_out = 0;
    for (path, group) in groups {
        let block = fit_lines(&group_lines(path, &group), width);
        // One line is kept for the count of what is left out.
        if left_out > 0 || lines.len() + block.len() + 1 > budget {
            left_out += group.len();
            continue;
        }
        lines.extend(block);
    }
    if left_out > 0 {
        lines.push(format!(
            "  {left_out} more flag{}, the least severe: -o report.html, --format markdown or \
             --json lists every one.",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    lines
}

/// One path's flags: the path, then each flag with its severity.
fn group_lines(path: &str, group: &[&Flag]) -> Vec<String> {
    let unverified = if group.iter().any(|f| f.verified == Some(false)) {
        "  (not found in the tree)"
    } else {
        ""
    };
    let mut lines = vec![format!("  {}{unverified}", escape_line(path))];
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
    lines
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
