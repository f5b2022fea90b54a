//! The Markdown report (`--format markdown`, `-o LUMINOS.md`): GitHub-
//! flavoured, written to be committed at the target's root and read on a
//! forge. The verdict with its coverage and cost comes first, then a
//! Mermaid picture of the structure, the flags in a table, the detailed
//! analysis, the domain sections the synthesis filled, one heading per
//! directory (its summary, notable files, flags
//! and file summaries), and the scan's figures in tables.
//!
//! Links to files are relative to the target's root, so they resolve when
//! the file is committed there. Paths are shown relative to the target:
//! the report names no home directory. Every file name and piece of model
//! text goes through [`super::markup`], so none of it can become a link,
//! markup or a table cell of its own.

use std::collections::HashSet;
use std::fmt::Write as _;

use super::format::RenderOptions;
use super::graph::{NodeKindShown, structure_graph};
use super::markup::{md_code, md_inline, md_paragraphs, mermaid_label, url_path};
use super::sections_view::{Body, filled};
use super::shape::{count, coverage_facts, relative_to};
use super::text_scan::by_count_descending;
use super::verdict::verdict_lines;
use super::{DirectoryReport, Report};
use crate::scan::{IgnoreSummary, LargeFile};

/// The whole Markdown report.
pub(crate) fn render(report: &Report, options: &RenderOptions) -> String {
    let target = options.target.as_str();
    let files: HashSet<String> = report
        .scan
        .classified_files
        .iter()
        .map(|f| relative_to(target, &f.path))
        .collect();
    let link = |path: &str, in_table: bool| file_link(path, &files, in_table);
    let mut out = String::new();
    let name = &report.scan.tree.name;
    let _ = writeln!(out, "# luminos: {}\n", md_code(&format!("{name}/"), false));

    if !report.ai_brief.is_empty() {
        let _ = writeln!(out, "{}\n", md_paragraphs(&report.ai_brief));
    }
    for line in verdict_lines(report) {
        let _ = writeln!(out, "- {}", md_inline(&line));
    }

    let _ = writeln!(out, "\n## Structure\n");
    out.push_str(&mermaid(report, target));

    push_flags(&mut out, report, &link);

    if !report.ai_detailed.is_empty() {
        let _ = writeln!(out, "\n## Detailed analysis\n");
        let _ = writeln!(out, "{}", md_paragraphs(&report.ai_detailed));
    }
    push_sections(&mut out, report, &link);

    if !report.directories.is_empty() {
        let _ = writeln!(out, "\n## Directories");
        for dir in &report.directories {
            push_directory(&mut out, dir, &link);
        }
    }

    push_scan(&mut out, report, target);
    // One blank line between blocks, however the blocks ended.
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    out.trim_end().to_string()
}

/// The flags in a table, most severe first, with whether each path was
/// found in the tree; nothing when there are none.
fn push_flags(out: &mut String, report: &Report, link: &dyn Fn(&str, bool) -> String) {
    if !report.flags.is_empty() {
        let _ = writeln!(out, "\n## Flags\n");
        let _ = writeln!(out, "| Severity | Path | Finding | Found in the tree |");
        let _ = writeln!(out, "|---|---|---|---|");
        for flag in &report.flags {
            let mut finding = md_inline(&flag.finding);
            if let (Some(_), Some(note)) = (&flag.original_severity, &flag.note) {
                let _ = write!(finding, " ({})", md_inline(note));
            }
            let _ = writeln!(
                out,
                "| {} | {}{} | {} | {} |",
                md_inline(&flag.severity),
                link(&flag.path, true),
                flag.line.map(|n| format!(":{n}")).unwrap_or_default(),
                finding,
                match flag.verified {
                    Some(true) => "yes",
                    Some(false) => "**no**",
                    None => "",
                }
            );
        }
    }
}

/// What a section's path not found in the tree says.
const NOT_FOUND: &str = "not found in the tree";

/// `path` as a code span, linked from the target's root when it names a
/// file the scan saw (or, with `/`, a directory); as plain code otherwise.
fn file_link(path: &str, files: &HashSet<String>, in_table: bool) -> String {
    let shown = md_code(path, in_table);
    if files.contains(path) {
        format!("[{shown}]({})", url_path(path))
    } else {
        shown
    }
}

/// One directory: its heading, facts, summary, notable files, flags and
/// file summaries (folded, for long lists).
fn push_directory(out: &mut String, dir: &DirectoryReport, link: &dyn Fn(&str, bool) -> String) {
    let shown = if dir.path == "." {
        "./".to_string()
    } else {
        format!("{}/", dir.path)
    };
    let _ = writeln!(out, "\n### {}\n", md_code(&shown, false));
    let facts = coverage_facts(dir, md_inline);
    let _ = writeln!(out, "*{}*\n", facts.join(" · "));
    if let Some(summary) = dir.summary.as_deref().filter(|s| !s.trim().is_empty()) {
        let _ = writeln!(out, "{}\n", md_paragraphs(summary));
    }
    if !dir.notable_files.is_empty() {
        let notable: Vec<String> = dir
            .notable_files
            .iter()
            .map(|name| {
                // Entries name notable files by name or by path.
                let in_dir = if dir.path == "." || name.contains('/') {
                    name.clone()
                } else {
                    format!("{}/{name}", dir.path)
                };
                link(&in_dir, false)
            })
            .collect();
        let _ = writeln!(out, "Notable files: {}\n", notable.join(", "));
    }
    if !dir.flags.is_empty() {
        let flags: Vec<String> = dir.flags.iter().map(|p| link(p, false)).collect();
        let _ = writeln!(out, "Flags: {}\n", flags.join(", "));
    }
    if !dir.files.is_empty() {
        let files = count(dir.files.len() as u64, "file summary", "file summaries");
        let _ = writeln!(out, "<details><summary>{files}</summary>\n");
        for file in &dir.files {
            let _ = writeln!(
                out,
                "- {}: {}",
                link(&file.path, false),
                md_inline(&file.summary.replace('\n', " "))
            );
        }
        let _ = writeln!(out, "\n</details>");
    }
}

/// Each domain section the synthesis filled, under its own heading: prose
/// as paragraphs, lists as bullets (a name in bold, its path linked when
/// grounding found it in the tree, what it uses).
fn push_sections(out: &mut String, report: &Report, link: &dyn Fn(&str, bool) -> String) {
    for (title, body) in filled(&report.ai_sections) {
        let _ = writeln!(out, "\n## {title}\n");
        match body {
            Body::Prose(text) => {
                let _ = writeln!(out, "{}", md_paragraphs(text));
            }
            Body::Items(items) => {
                for item in items {
                    let mut line = format!("- **{}**", md_inline(item.name));
                    match (item.path, item.verified) {
                        (Some(path), Some(true)) => {
                            let shown = md_code(path, false);
                            let _ = write!(line, " ([{shown}]({}))", url_path(path));
                        }
                        (Some(path), Some(false)) => {
                            let _ = write!(line, " ({}, {NOT_FOUND})", md_code(path, false));
                        }
                        (Some(path), None) => {
                            let _ = write!(line, " ({})", link(path, false));
                        }
                        (None, Some(false)) => line.push_str(&format!(" ({NOT_FOUND})")),
                        (None, _) => {}
                    }
                    if !item.text.is_empty() {
                        let _ = write!(line, ": {}", md_inline(item.text));
                    }
                    if !item.uses.is_empty() {
                        let uses: Vec<String> = item.uses.iter().map(|u| md_inline(u)).collect();
                        let _ = write!(line, " Uses: {}.", uses.join(", "));
                    }
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
}

/// The structure as a Mermaid graph, left to right, coloured by coverage.
fn mermaid(report: &Report, target: &str) -> String {
    let graph = structure_graph(report, target);
    let mut out = String::from("```mermaid\ngraph LR\n");
    for (i, node) in graph.nodes.iter().enumerate() {
        let label = match &node.note {
            Some(note) => format!("{}<br/>{}", mermaid_label(&node.label), mermaid_label(note)),
            None => mermaid_label(&node.label),
        };
        let class = match node.kind {
            NodeKindShown::Root => "root",
            NodeKindShown::Directory(Some(coverage)) => coverage.as_str(),
            NodeKindShown::Directory(None) | NodeKindShown::Component => "plain",
            NodeKindShown::More => "more",
        };
        let _ = writeln!(out, "  n{i}[\"{label}\"]:::{class}");
    }
    for (from, to) in &graph.edges {
        let _ = writeln!(out, "  n{from} --> n{to}");
    }
    for (class, style) in [
        ("root", "fill:#dde7f7,stroke:#3b5b92,font-weight:bold"),
        ("investigated", "fill:#d9f2dd,stroke:#2f7d3b"),
        ("folded", "fill:#e6f0d0,stroke:#6b8a2a"),
        ("mechanical", "fill:#f1ede2,stroke:#8a7a4d"),
        ("none", "fill:#f4f4f4,stroke:#999,stroke-dasharray:3 3"),
        ("plain", "fill:#f4f6fa,stroke:#556"),
        ("more", "fill:#fff,stroke:#bbb,stroke-dasharray:3 3"),
    ] {
        let _ = writeln!(out, "  classDef {class} {style}");
    }
    out.push_str("```\n");
    out
}

/// A `### title` table under `head` (its header and alignment rows), a
/// line per row of cells; nothing at all when there is no row.
fn push_table(
    out: &mut String,
    title: &str,
    head: &str,
    rows: impl IntoIterator<Item = Vec<String>>,
) {
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_none() {
        return;
    }
    let _ = writeln!(out, "\n### {title}\n\n{head}");
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
}

/// The scan's figures as tables, paths relative to the target.
fn push_scan(out: &mut String, report: &Report, target: &str) {
    let scan = &report.scan;
    let _ = writeln!(out, "\n## Scan");
    push_table(
        out,
        "File types",
        "| Category | Files |\n|---|---:|",
        by_count_descending(&scan.file_categories)
            .into_iter()
            .map(|(category, count)| vec![md_inline(category), count.to_string()]),
    );
    push_ignored(out, &scan.ignore);
    push_table(
        out,
        "Lines of code",
        "| Language | Lines |\n|---|---:|",
        by_count_descending(&scan.lines_of_code)
            .into_iter()
            .map(|(language, count)| vec![md_inline(language), count.to_string()]),
    );
    push_large_files(out, &scan.large_files, target);
    push_table(
        out,
        "Disk usage",
        "| Directory | Size | |\n|---|---:|---|",
        scan.top_directories.iter().map(|dir| {
            vec![
                md_code(&relative_to(target, &dir.path), true),
                dir.size_human.clone(),
                (if dir.ignored { "ignored" } else { "" }).to_string(),
            ]
        }),
    );
    push_table(
        out,
        "Recently modified",
        "| File | Modified |\n|---|---|",
        scan.recent_files.iter().map(|file| {
            vec![
                md_code(&relative_to(target, &file.path), true),
                md_inline(&file.modified_human),
            ]
        }),
    );
    if let Some(grounding) = &report.grounding {
        let _ = writeln!(out, "\n{}", md_inline(&grounding.summary_line()));
    }
}

/// What the ignore files left out, when they were read; disk usage still
/// counts it.
fn push_ignored(out: &mut String, ignore: &IgnoreSummary) {
    if ignore.enabled && !ignore.rule_files.is_empty() {
        let _ = writeln!(
            out,
            "\nIgnored by {}: {}, {} (disk usage still counts them).",
            ignore
                .rule_files
                .iter()
                .map(|f| md_code(f, false))
                .collect::<Vec<_>>()
                .join(", "),
            count(ignore.files_removed, "file", "files"),
            count(ignore.dirs_removed, "directory", "directories")
        );
    }
}

/// The unusually large files, each linked from the target's root with
/// why it is large; nothing when there are none.
fn push_large_files(out: &mut String, large_files: &[LargeFile], target: &str) {
    if !large_files.is_empty() {
        let _ = writeln!(out, "\n### Unusually large files\n");
        for file in large_files {
            let rel = relative_to(target, &file.path);
            let _ = writeln!(
                out,
                "- [{}]({}) ({})",
                md_code(&rel, false),
                url_path(&rel),
                md_inline(&file.reasons.join(", "))
            );
        }
    }
}
