//! The terminal report's scan sections, after the investigation's: file
//! types (bars in proportion to the largest count), code, recent files and
//! disk usage (ignored directories marked), with the original's labels and
//! paths relative to the target (the JSON keeps them absolute).

use indexmap::IndexMap;

use super::Report;
use super::shape::{bar_length, relative_to};
use super::text::section;
use crate::scan::IgnoreSummary;
use crate::text::escape_line;

/// The longest bar, for the largest count.
const BAR_WIDTH: usize = 40;

/// The scan sections, in the original's order, after the tree.
pub(super) fn push_scan_sections(lines: &mut Vec<String>, report: &Report, target: &str) {
    let scan = &report.scan;
    section(lines, ">> FILE TYPE INTELLIGENCE");
    push_categories(lines, &scan.file_categories);
    if let Some(line) = ignore_line(&scan.ignore) {
        lines.push(line);
    }

    section(lines, ">> CODE DETECTION");
    push_code(lines, report, target);

    section(lines, ">> RECENTLY MODIFIED FILES");
    if scan.recent_files.is_empty() {
        lines.push("  No recent files found.".to_string());
    }
    // One line each, by the path below the target.
    for (i, file) in scan.recent_files.iter().enumerate() {
        lines.push(format!(
            "  {:>2}. {}  {}",
            i + 1,
            file.modified_human,
            escape_line(&relative_to(target, &file.path))
        ));
    }

    section(lines, ">> DISK USAGE — TOP DIRECTORIES");
    if scan.top_directories.is_empty() {
        lines.push("  No usage data available.".to_string());
    }
    for dir in &scan.top_directories {
        let rel = relative_to(target, &dir.path);
        lines.push(format!(
            "  {:>10}  {}/{}",
            dir.size_human,
            escape_line(&rel),
            if dir.ignored { "  (ignored)" } else { "" }
        ));
    }
}

/// Categories by count, largest first (ties keep first-seen order), with
/// `#` bars in proportion to the largest.
fn push_categories(lines: &mut Vec<String>, categories: &IndexMap<String, u64>) {
    if categories.is_empty() {
        lines.push("  No files found.".to_string());
        return;
    }
    let sorted = by_count_descending(categories);
    let max = sorted.first().map_or(0, |(_, count)| *count);
    for (category, count) in sorted {
        let bar = "#".repeat(bar_length(count, max, BAR_WIDTH));
        lines.push(format!("  {:<12} {count:>4}  {bar}", escape_line(category)));
    }
    let total: u64 = categories.values().sum();
    lines.push(format!("  {:<12} {total:>4}", "TOTAL"));
}

fn push_code(lines: &mut Vec<String>, report: &Report, target: &str) {
    let scan = &report.scan;
    if scan.languages.is_empty() {
        lines.push("  No source code files detected.".to_string());
    } else {
        lines.push(format!(
            "  Languages detected: {}",
            escape_line(&scan.languages.join(", "))
        ));
        lines.push(String::new());
        lines.push("  Lines of code:".to_string());
        for (language, count) in by_count_descending(&scan.lines_of_code) {
            lines.push(format!(
                "    {:<20} {count:>8} lines",
                escape_line(language)
            ));
        }
        let total: u64 = scan.lines_of_code.values().sum();
        lines.push(format!("    {:<20} {total:>8} lines", "TOTAL"));
    }
    if !scan.large_files.is_empty() {
        lines.push(String::new());
        lines.push("  Unusually large files:".to_string());
        for file in &scan.large_files {
            // Named by the path below the target (the original shows bare
            // names, so two `stream.rs` looked alike).
            lines.push(format!(
                "    ! {}  ({})",
                escape_line(&relative_to(target, &file.path)),
                escape_line(&file.reasons.join(", "))
            ));
        }
    }
}

/// Python's `sorted(d, key=d.get, reverse=True)`: by value, largest first,
/// keeping insertion order among equals.
pub(super) fn by_count_descending(counts: &IndexMap<String, u64>) -> Vec<(&String, u64)> {
    let mut items: Vec<(&String, u64)> = counts.iter().map(|(k, v)| (k, *v)).collect();
    items.sort_by_key(|item| std::cmp::Reverse(item.1));
    items
}

/// One line saying which ignore rules shaped the scan, or nothing when no
/// ignore file was found (so the report reads exactly as the original's).
fn ignore_line(ignore: &IgnoreSummary) -> Option<String> {
    if !ignore.enabled || ignore.rule_files.is_empty() {
        return None;
    }
    const SHOWN: usize = 3;
    let mut files: Vec<String> = ignore
        .rule_files
        .iter()
        .take(SHOWN)
        .map(|f| escape_line(f).into_owned())
        .collect();
    if ignore.rule_files.len() > SHOWN {
        files.push(format!("{} more", ignore.rule_files.len() - SHOWN));
    }
    Some(format!(
        "  Ignored by {}: {} {}, {} {} (--no-ignore to include)",
        files.join(", "),
        ignore.files_removed,
        plural(ignore.files_removed, "file", "files"),
        ignore.dirs_removed,
        plural(ignore.dirs_removed, "directory", "directories"),
    ))
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}
