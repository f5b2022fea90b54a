//! The report: what a run found, as JSON (`--json`) and as the terminal report.
//!
//! The JSON keys and their order are the reference's, so scripts written
//! against it keep working. [`Report`] is the base scan plus the AI fields; the
//! terminal formatter is [`format_report`]. Every file name and every piece of
//! model text printed here goes through [`crate::output::escape_control`].

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::output::{escape_control, escape_line};
use crate::scan::{BaseScan, IgnoreSummary};

/// The whole report.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// The base scan's keys, in the reference's order.
    #[serde(flatten)]
    pub scan: BaseScan,
    /// The 2-4 sentence verdict from synthesis; empty without an investigation.
    pub ai_brief: String,
    /// The detailed analysis from synthesis; empty without an investigation.
    pub ai_detailed: String,
    /// Findings, from the agent's `flag` calls and from secret redaction.
    pub flags: Vec<Flag>,
    /// How the investigation went (cost, cache, cap); absent when none ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub investigation: Option<InvestigationSummary>,
}

/// One finding. The field names are the reference's `flags.jsonl` shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Flag {
    /// Relative path, or `general`.
    #[serde(default = "general")]
    pub path: String,
    /// What was found.
    #[serde(default)]
    pub finding: String,
    /// `info`, `concern` or `critical`. Kept as text so a flag written by
    /// another implementation with an unknown severity still reads.
    #[serde(default = "info")]
    pub severity: String,
}

fn general() -> String {
    "general".to_string()
}

fn info() -> String {
    "info".to_string()
}

/// Flag severities, most severe first. The report sorts flags in this order.
pub const SEVERITY_ORDER: [&str; 3] = ["critical", "concern", "info"];

/// Sort rank of a severity; unknown severities sort last, as the reference.
pub fn severity_rank(severity: &str) -> usize {
    SEVERITY_ORDER
        .iter()
        .position(|s| *s == severity)
        .unwrap_or(99)
}

/// Facts about the investigation that produced the AI fields.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct InvestigationSummary {
    /// The investigation id (the cache directory's name).
    pub id: String,
    /// Model used.
    pub model: String,
    /// Directories with a summary after this run.
    pub directories_investigated: usize,
    /// Directories whose summary came from the cache.
    pub directories_cached: usize,
    /// Directories left for a later run (cost cap or interruption).
    pub directories_remaining: usize,
    /// API requests made by this run.
    pub api_requests: u64,
    /// Tokens billed by this run.
    pub tokens: TokenTotals,
    /// Approximate cost of this run in dollars.
    pub cost_usd: f64,
    /// Money prompt caching saved this run, in dollars.
    pub cache_savings_usd: f64,
    /// `--max-cost` stopped new directories.
    pub cost_cap_hit: bool,
}

/// Token totals for billing.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct TokenTotals {
    pub input: u64,
    pub output: u64,
    pub cache_write: u64,
    pub cache_read: u64,
}

/// Format the full terminal report for `target` (shown as given, absolute):
/// the reference's sections, character for character. File names, paths and
/// model text are escaped so that none of them can drive the terminal.
pub fn format_report(report: &Report, target: &str) -> String {
    let scan = &report.scan;
    let sep = "=".repeat(60);
    let rule = "-".repeat(40);
    let mut lines: Vec<String> = vec![
        sep.clone(),
        "  LUMINOS — File System Intelligence Report".to_string(),
        format!("  Target: {}", escape_line(target)),
        sep.clone(),
    ];

    if !report.ai_brief.is_empty() {
        section(&mut lines, ">> SUMMARY (AI)", &rule);
        push_paragraphs(&mut lines, &report.ai_brief);
    }

    section(&mut lines, ">> DIRECTORY TREE", &rule);
    lines.push(escape_control(&scan.tree_rendered).into_owned());

    section(&mut lines, ">> FILE TYPE INTELLIGENCE", &rule);
    push_categories(&mut lines, &scan.file_categories);
    if let Some(line) = ignore_line(&scan.ignore) {
        lines.push(line);
    }

    section(&mut lines, ">> CODE DETECTION", &rule);
    push_code(&mut lines, report);

    section(&mut lines, ">> RECENTLY MODIFIED FILES", &rule);
    if scan.recent_files.is_empty() {
        lines.push("  No recent files found.".to_string());
    }
    for (i, file) in scan.recent_files.iter().enumerate() {
        lines.push(format!(
            "  {:>2}. {}  {}",
            i + 1,
            file.modified_human,
            escape_line(&file.name)
        ));
        lines.push(format!("      {}", escape_line(&file.path)));
    }

    section(&mut lines, ">> DISK USAGE — TOP DIRECTORIES", &rule);
    if scan.top_directories.is_empty() {
        lines.push("  No usage data available.".to_string());
    }
    for dir in &scan.top_directories {
        lines.push(format!(
            "  {:>10}  {}",
            dir.size_human,
            escape_line(&dir.path)
        ));
    }

    if !report.ai_detailed.is_empty() {
        section(&mut lines, ">> DETAILED AI ANALYSIS", &rule);
        push_paragraphs(&mut lines, &report.ai_detailed);
    }

    let flags = format_flags(&report.flags);
    if !flags.is_empty() {
        lines.push(flags);
    }

    lines.push(String::new());
    lines.push(sep.clone());
    lines.push("  End of report.".to_string());
    lines.push(sep);
    lines.join("\n")
}

/// The `>> FLAGS` section, most severe first (stable within a severity);
/// empty when there are no flags.
pub fn format_flags(flags: &[Flag]) -> String {
    if flags.is_empty() {
        return String::new();
    }
    let mut sorted: Vec<&Flag> = flags.iter().collect();
    sorted.sort_by_key(|f| severity_rank(&f.severity));
    let mut lines = vec![String::new(), ">> FLAGS".to_string(), "-".repeat(40)];
    for flag in sorted {
        let severity = escape_line(&flag.severity).to_uppercase();
        lines.push(format!("  [{severity:<8}] {}", escape_line(&flag.path)));
        lines.push(format!("             {}", escape_line(&flag.finding)));
    }
    lines.join("\n")
}

fn section(lines: &mut Vec<String>, title: &str, rule: &str) {
    lines.push(String::new());
    lines.push(title.to_string());
    lines.push(rule.to_string());
}

/// Model text, one report line per line of text, indented.
fn push_paragraphs(lines: &mut Vec<String>, text: &str) {
    for paragraph in text.split('\n') {
        lines.push(format!("  {}", escape_control(paragraph)));
    }
}

/// Categories by count, largest first (ties keep first-seen order), with
/// `#` bars capped at 40.
fn push_categories(lines: &mut Vec<String>, categories: &IndexMap<String, u64>) {
    if categories.is_empty() {
        lines.push("  No files found.".to_string());
        return;
    }
    for (category, count) in by_count_descending(categories) {
        let bar = "#".repeat(count.min(40) as usize);
        lines.push(format!("  {:<12} {count:>4}  {bar}", escape_line(category)));
    }
    let total: u64 = categories.values().sum();
    lines.push(format!("  {:<12} {total:>4}", "TOTAL"));
}

fn push_code(lines: &mut Vec<String>, report: &Report) {
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
            lines.push(format!(
                "    ! {}  ({})",
                escape_line(&file.name),
                file.reasons.join(", ")
            ));
        }
    }
}

/// Python's `sorted(d, key=d.get, reverse=True)`: by value, largest first,
/// keeping insertion order among equals.
fn by_count_descending(counts: &IndexMap<String, u64>) -> Vec<(&String, u64)> {
    let mut items: Vec<(&String, u64)> = counts.iter().map(|(k, v)| (k, *v)).collect();
    items.sort_by_key(|item| std::cmp::Reverse(item.1));
    items
}

/// One line saying which ignore rules shaped the scan, or nothing when no
/// ignore file was found (so the report reads exactly as the reference's).
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
