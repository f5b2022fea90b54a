//! The terminal report: [`format_report`] and the `>> FLAGS` section.
//!
//! It turns a [`Report`] into the original's text, section by section; it
//! decides nothing and reads nothing but the report it is given. The data
//! (and the one-line texts the progress display shares, such as
//! [`super::coverage_line`]) lives in the parent module. Every file name,
//! path and piece of model text goes through [`crate::text`]'s escaping so
//! none of it can drive the terminal.

use indexmap::IndexMap;

use super::{Flag, InvestigationSummary, Report, coverage_line, severity_rank};
use crate::scan::IgnoreSummary;
use crate::text::{escape_control, escape_line};

/// The line that says `--max-cost` cut the investigation short, so nobody
/// mistakes a partial verdict for a whole one.
fn cap_note(summary: &InvestigationSummary) -> Option<String> {
    summary.cost_cap_hit.then(|| {
        format!(
            "  Note: the --max-cost cap was hit; {} director{} left uninvestigated. Run again to resume.",
            summary.directories_remaining,
            if summary.directories_remaining == 1 { "y was" } else { "ies were" }
        )
    })
}

/// The line that says the run went through the Message Batches API.
fn batch_note(summary: &InvestigationSummary) -> Option<String> {
    let batch = summary.batch.as_ref()?;
    let mut failed = Vec::new();
    for (n, what) in [
        (batch.errored, "errored"),
        (batch.canceled, "canceled"),
        (batch.expired, "expired"),
    ] {
        if n > 0 {
            failed.push(format!("{n} {what}"));
        }
    }
    let failed = if failed.is_empty() {
        String::new()
    } else {
        format!(", {}", failed.join(", "))
    };
    let replayed = if batch.replayed > 0 {
        format!(
            "; {} answers reused from an earlier run",
            crate::text::format_thousands(batch.replayed)
        )
    } else {
        String::new()
    };
    Some(format!(
        "  Batch: {} round{}, {} requests ({} answered{failed}), waited {}{replayed}; costs at batch prices.",
        batch.rounds,
        if batch.rounds == 1 { "" } else { "s" },
        crate::text::format_thousands(batch.requests),
        crate::text::format_thousands(batch.succeeded),
        crate::text::format_duration(std::time::Duration::from_secs_f64(
            batch.waited_secs.max(0.0)
        )),
    ))
}

/// Format the full terminal report for `target` (shown as given, absolute):
/// the original's sections, character for character, except that large
/// files are named by their path relative to the target (the original shows
/// bare names, so two `stream.rs` in different directories looked the
/// same). File names, paths and model text are escaped so that none of them
/// can drive the terminal.
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
    if let Some(note) = report.investigation.summary.as_ref().and_then(cap_note) {
        lines.push(String::new());
        lines.push(note);
    }
    // Under the AI summary: whether the investigation was whole.
    lines.push(String::new());
    lines.push(format!("  {}", report.investigation.line()));
    if let Some(summary) = &report.investigation.summary
        && summary.coverage.folded + summary.coverage.mechanical > 0
    {
        lines.push(format!("  {}", coverage_line(&summary.coverage)));
    }
    if let Some(note) = report.investigation.summary.as_ref().and_then(batch_note) {
        lines.push(note);
    }
    if let Some(refinement) = &report.investigation.refinement {
        lines.push(format!("  {}", refinement.line()));
    }

    section(&mut lines, ">> DIRECTORY TREE", &rule);
    lines.push(escape_control(&scan.tree_rendered).into_owned());

    section(&mut lines, ">> FILE TYPE INTELLIGENCE", &rule);
    push_categories(&mut lines, &scan.file_categories);
    if let Some(line) = ignore_line(&scan.ignore) {
        lines.push(line);
    }

    section(&mut lines, ">> CODE DETECTION", &rule);
    push_code(&mut lines, report, target);

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

/// The `>> FLAGS` section, most severe first (stable within a severity);
/// empty when there are no flags. A flag whose path grounding did not find
/// says so after its path, and one it lowered to `info` carries its note.
pub(crate) fn format_flags(flags: &[Flag]) -> String {
    if flags.is_empty() {
        return String::new();
    }
    let mut sorted: Vec<&Flag> = flags.iter().collect();
    sorted.sort_by_key(|f| severity_rank(&f.severity));
    let mut lines = vec![String::new(), ">> FLAGS".to_string(), "-".repeat(40)];
    for flag in sorted {
        let severity = escape_line(&flag.severity).to_uppercase();
        let line = flag.line.map(|n| format!(":{n}")).unwrap_or_default();
        let unverified = if flag.verified == Some(false) {
            " (not found in the tree)"
        } else {
            ""
        };
        lines.push(format!(
            "  [{severity:<8}] {}{line}{unverified}",
            escape_line(&flag.path)
        ));
        lines.push(format!("             {}", escape_line(&flag.finding)));
        if let (Some(_), Some(note)) = (&flag.original_severity, &flag.note) {
            lines.push(format!("             {}", escape_line(note)));
        }
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
            lines.push(format!(
                "    ! {}  ({})",
                escape_line(&shown_under(target, &file.path)),
                file.reasons.join(", ")
            ));
        }
    }
}

/// `path` relative to `target` when it lies below it, else as it is.
fn shown_under(target: &str, path: &str) -> String {
    match std::path::Path::new(path).strip_prefix(target) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => path.to_string(),
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
