//! The report: what a run found, as JSON (`--json`) and as the terminal report.
//!
//! The JSON keys and their order are the original's, so scripts written
//! against it keep working. [`Report`] is the base scan plus the AI fields; the
//! terminal formatter is [`format_report`]. Every file name and every piece of
//! model text printed here goes through [`crate::text::escape_control`].

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::grounding::Grounding;
use crate::scan::{BaseScan, IgnoreSummary};
use crate::text::{escape_control, escape_line};

/// The whole report.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// The base scan's keys, in the original's order.
    #[serde(flatten)]
    pub scan: BaseScan,
    /// The 2-4 sentence verdict from synthesis; empty without an investigation.
    pub ai_brief: String,
    /// The detailed analysis from synthesis; empty without an investigation.
    pub ai_detailed: String,
    /// Findings, from the agent's `flag` calls and from secret redaction.
    pub flags: Vec<Flag>,
    /// Whether the investigation ran and how far it got; always present.
    #[serde(default)]
    pub investigation: Investigation,
    /// How many of the paths and symbols the report cites were found in the
    /// tree; absent when no investigation ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounding: Option<Grounding>,
}

/// How far the investigation got.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InvestigationStatus {
    /// Every planned directory has a summary and the model wrote the
    /// synthesis.
    Complete,
    /// It ran to the end, but something is missing (see the note).
    Partial,
    /// It stopped early (see the error); the exit status says so too.
    Failed,
    /// None ran: no credential, or `--scan-only`.
    #[default]
    Skipped,
}

impl InvestigationStatus {
    /// The word the report uses.
    pub fn as_str(self) -> &'static str {
        match self {
            InvestigationStatus::Complete => "complete",
            InvestigationStatus::Partial => "partial",
            InvestigationStatus::Failed => "failed",
            InvestigationStatus::Skipped => "skipped",
        }
    }
}

/// The report's `investigation`: its status, why it failed or what is
/// missing, and (once it got under way) the facts of the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Investigation {
    pub status: InvestigationStatus,
    /// Why it failed, one line (`failed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What is missing (`partial`) or why none ran (`skipped`), one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Cost, cache and coverage, when it ran to the end.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<InvestigationSummary>,
    /// What a run that stopped early (failed or interrupted) had already
    /// spent, so nobody mistakes a failed run for a free one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<Spent>,
}

/// `investigation.spent`: the requests, tokens and dollars of a run that
/// stopped before its summary.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Spent {
    pub api_requests: u64,
    pub tokens: TokenTotals,
    pub cost_usd: f64,
}

impl Investigation {
    /// No investigation ran, for `reason`.
    pub fn skipped(reason: &str) -> Investigation {
        Investigation {
            status: InvestigationStatus::Skipped,
            note: Some(reason.to_string()),
            ..Investigation::default()
        }
    }

    /// The investigation stopped on `error`.
    pub fn failed(error: &str) -> Investigation {
        Investigation {
            status: InvestigationStatus::Failed,
            error: Some(error.to_string()),
            ..Investigation::default()
        }
    }

    /// The one line the terminal report (and stderr) says about it.
    pub fn line(&self) -> String {
        let said = |text: &Option<String>| {
            text.as_deref()
                .map(|t| format!(": {}", escape_line(t)))
                .unwrap_or_default()
        };
        match self.status {
            InvestigationStatus::Complete => "Investigation complete.".to_string(),
            InvestigationStatus::Partial => format!("Investigation partial{}", said(&self.note)),
            InvestigationStatus::Failed => format!(
                "Investigation failed{}{}",
                said(&self.error),
                self.spent
                    .as_ref()
                    .filter(|spent| spent.api_requests > 0)
                    .map(|spent| format!(
                        " (after {} API request{}, about ${:.2})",
                        spent.api_requests,
                        if spent.api_requests == 1 { "" } else { "s" },
                        spent.cost_usd
                    ))
                    .unwrap_or_default()
            ),
            InvestigationStatus::Skipped => format!("Investigation skipped{}", said(&self.note)),
        }
    }
}

/// One finding. The field names are the original's `flags.jsonl` shape.
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
    /// Whether `path` names something in the tree (`general` always does).
    /// Set by the report's grounding; never part of `flags.jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// The line `path` was cited at (`src/app.py:12`), split off it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The severity the agent gave, when grounding lowered it to `info`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_severity: Option<String>,
    /// Why grounding marked the flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Flag {
    /// A flag as an agent or the redactor raises it, not yet grounded.
    pub fn new(
        path: impl Into<String>,
        finding: impl Into<String>,
        severity: impl Into<String>,
    ) -> Flag {
        Flag {
            path: path.into(),
            finding: finding.into(),
            severity: severity.into(),
            verified: None,
            line: None,
            original_severity: None,
            note: None,
        }
    }
}

fn general() -> String {
    "general".to_string()
}

fn info() -> String {
    "info".to_string()
}

/// Flag severities, most severe first. The report sorts flags in this order.
pub(crate) const SEVERITY_ORDER: [&str; 3] = ["critical", "concern", "info"];

/// Sort rank of a severity; unknown severities sort last, as the original.
pub(crate) fn severity_rank(severity: &str) -> usize {
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
    /// How the directories with a summary got it.
    #[serde(default)]
    pub coverage: Coverage,
    /// `--budget` in dollars; `null` for no ceiling.
    #[serde(default)]
    pub budget_usd: Option<f64>,
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
    /// What the Message Batches API did (`--batch` runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchSummary>,
}

/// `investigation.batch`: a `--batch` run's rounds and requests. Costs
/// elsewhere in the summary are at batch prices.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BatchSummary {
    /// Rounds this run waited on (its own, and one an earlier run left in
    /// flight).
    pub rounds: u32,
    /// Batches this run created.
    pub batches: u32,
    /// Batches an earlier run created and this run read.
    pub batches_resumed: u32,
    /// Requests this run sent in batches (a request sent again counts
    /// again).
    pub requests: u64,
    /// Answers this run read.
    pub succeeded: u64,
    /// Requests that failed in a batch.
    pub errored: u64,
    /// Requests a canceled batch left unprocessed.
    pub canceled: u64,
    /// Requests an expired batch left unprocessed.
    pub expired: u64,
    /// Requests sent again in a later round.
    pub retried: u64,
    /// Answers an earlier run had read, reused without the API.
    pub replayed: u64,
    /// What the reused answers cost when they were paid (not in
    /// `cost_usd`).
    pub replayed_cost_usd: f64,
    /// Seconds spent waiting on batches.
    pub waited_secs: f64,
}

/// How the directories with a summary got it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Coverage {
    /// Investigated by a loop of their own.
    pub investigated: usize,
    /// Folded into the loop of a directory above them (an investigation
    /// unit).
    pub folded: usize,
    /// Summarised from the scan, without the model.
    pub mechanical: usize,
}

/// `Coverage: 12 directories investigated by a loop of their own, 30 folded
/// into a unit, 58 summarised from the scan (no model read them).`
pub(crate) fn coverage_line(coverage: &Coverage) -> String {
    let dirs = |n: usize| format!("{n} director{}", if n == 1 { "y" } else { "ies" });
    format!(
        "Coverage: {} investigated by a loop of their own, {} folded into a unit, {} \
         summarised from the scan (no model read them).",
        dirs(coverage.investigated),
        coverage.folded,
        coverage.mechanical
    )
}

/// Token totals for billing.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct TokenTotals {
    pub input: u64,
    pub output: u64,
    pub cache_write: u64,
    pub cache_read: u64,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{DiskEntry, LargeFile, RecentFile};

    fn flag(severity: &str, path: &str, finding: &str) -> Flag {
        Flag::new(path, finding, severity)
    }

    /// The original's minimal report, as its own tests build it.
    fn minimal() -> Report {
        let mut report = Report::default();
        let scan = &mut report.scan;
        scan.tree_rendered = "mydir/\n  file.py".into();
        scan.file_categories = [("source".to_string(), 2), ("config".to_string(), 1)]
            .into_iter()
            .collect();
        scan.languages = vec!["Python".into()];
        scan.lines_of_code = [("Python".to_string(), 150)].into_iter().collect();
        scan.recent_files = vec![RecentFile {
            path: "/tmp/main.py".into(),
            name: "main.py".into(),
            modified: 1.0,
            modified_human: "2026-04-06 10:00:00".into(),
        }];
        scan.top_directories = vec![DiskEntry {
            path: "/tmp/mydir".into(),
            size_bytes: 10240,
            size_human: "10.0 KB".into(),
        }];
        report
    }

    #[test]
    fn no_flags_no_section() {
        assert_eq!(format_flags(&[]), "");
        assert!(!format_report(&minimal(), "/tmp").contains(">> FLAGS"));
    }

    #[test]
    fn flags_sort_by_severity_and_keep_order_within_one() {
        let flags = [
            flag("info", "a.py", "note"),
            flag("critical", "b.py", "bad"),
            flag("weird", "w.py", "odd"),
            flag("concern", "c.py", "watch"),
            flag("critical", "d.py", "worse"),
        ];
        let expected = "
>> FLAGS
----------------------------------------
  [CRITICAL] b.py
             bad
  [CRITICAL] d.py
             worse
  [CONCERN ] c.py
             watch
  [INFO    ] a.py
             note
  [WEIRD   ] w.py
             odd";
        similar_asserts::assert_eq!(format_flags(&flags), expected);
    }

    #[test]
    fn a_flag_without_a_path_reads_general() {
        let parsed: Flag = serde_json::from_str(r#"{"finding": "general note"}"#).unwrap();
        assert_eq!(parsed.path, "general");
        assert_eq!(parsed.severity, "info");
        assert!(format_flags(&[parsed]).contains("[INFO    ] general"));
    }

    #[test]
    fn sections_of_the_minimal_report() {
        let text = format_report(&minimal(), "/tmp/mydir");
        assert!(text.starts_with(&format!(
            "{}\n  LUMINOS — File System Intelligence Report\n  Target: /tmp/mydir\n",
            "=".repeat(60)
        )));
        assert!(
            text.contains("  source          2  ##\n  config          1  #\n  TOTAL           3")
        );
        assert!(text.contains(
            "    Python                    150 lines\n    TOTAL                     150 lines"
        ));
        assert!(text.contains("   1. 2026-04-06 10:00:00  main.py\n      /tmp/main.py"));
        assert!(text.contains("     10.0 KB  /tmp/mydir"));
        assert!(text.ends_with(&format!("\n\n{0}\n  End of report.\n{0}", "=".repeat(60))));
        assert!(!text.contains("SUMMARY (AI)"));
        assert!(!text.contains("DETAILED AI ANALYSIS"));
    }

    #[test]
    fn empty_sections_say_so() {
        let text = format_report(&Report::default(), "/tmp");
        for line in [
            "  No files found.",
            "  No source code files detected.",
            "  No recent files found.",
            "  No usage data available.",
        ] {
            assert!(text.contains(line), "{line:?} in {text}");
        }
    }

    #[test]
    fn bars_are_capped_at_forty() {
        let mut report = minimal();
        report.scan.file_categories = [("source".to_string(), 95)].into_iter().collect();
        let text = format_report(&report, "/tmp");
        assert!(text.contains(&format!("  source         95  {}\n", "#".repeat(40))));
    }

    #[test]
    fn equal_counts_keep_first_seen_order() {
        let mut report = minimal();
        report.scan.file_categories = [
            ("b".to_string(), 1),
            ("a".to_string(), 1),
            ("c".to_string(), 2),
        ]
        .into_iter()
        .collect();
        let text = format_report(&report, "/tmp");
        let c = text.find("  c ").unwrap();
        let b = text.find("  b ").unwrap();
        let a = text.find("  a ").unwrap();
        assert!(c < b && b < a);
    }

    #[test]
    fn ai_text_and_large_files_are_shown() {
        let mut report = minimal();
        report.ai_brief = "This is a Python project.\nSecond line.".into();
        report.ai_detailed = "Detailed breakdown here.".into();
        report.scan.large_files = vec![
            LargeFile {
                path: "/tmp/big.py".into(),
                name: "big.py".into(),
                reasons: vec!["size: 12.3 MB".into(), "lines: 5000".into()],
            },
            // Two files of one name are told apart by where they are.
            LargeFile {
                path: "/tmp/net/stream.rs".into(),
                name: "stream.rs".into(),
                reasons: vec!["lines: 1200".into()],
            },
            LargeFile {
                path: "/tmp/net/http/stream.rs".into(),
                name: "stream.rs".into(),
                reasons: vec!["lines: 1300".into()],
            },
        ];
        let text = format_report(&report, "/tmp");
        assert!(text.contains(">> SUMMARY (AI)\n----------------------------------------\n  This is a Python project.\n  Second line.\n"));
        assert!(
            text.contains(
                "  Unusually large files:\n    ! big.py  (size: 12.3 MB, lines: 5000)\n    \
                 ! net/stream.rs  (lines: 1200)\n    ! net/http/stream.rs  (lines: 1300)"
            ),
            "{text}"
        );
        assert!(text.contains(">> DETAILED AI ANALYSIS\n----------------------------------------\n  Detailed breakdown here.\n"));
    }

    #[test]
    fn hostile_names_and_model_text_are_escaped() {
        let mut report = minimal();
        report.scan.recent_files[0].name = "evil\n   2. fake\x1b[2J".into();
        report.ai_brief = "line\x1b]0;title\x07".into();
        report.flags = vec![flag("critical", "x\ny", "bad\rthing")];
        let text = format_report(&report, "/tmp/\x1bdir");
        for control in ['\x1b', '\x07', '\r'] {
            assert!(!text.contains(control), "{control:?} in {text}");
        }
        for escaped in [
            "evil\\n   2. fake\\x1b[2J",
            "  Target: /tmp/\\x1bdir",
            "  [CRITICAL] x\\ny",
        ] {
            assert!(text.contains(escaped), "{escaped:?} in {text}");
        }
    }

    #[test]
    fn the_ignore_line_appears_only_when_rules_were_read() {
        let mut report = minimal();
        report.scan.ignore = IgnoreSummary {
            enabled: true,
            ..IgnoreSummary::default()
        };
        assert!(!format_report(&report, "/tmp").contains("Ignored"));
        report.scan.ignore.rule_files = vec![".gitignore".into()];
        report.scan.ignore.files_removed = 1;
        report.scan.ignore.dirs_removed = 2;
        assert!(format_report(&report, "/tmp").contains(
            "  TOTAL           3\n  Ignored by .gitignore: 1 file, 2 directories (--no-ignore to include)\n"
        ));
        report.scan.ignore.enabled = false;
        assert!(!format_report(&report, "/tmp").contains("Ignored"));
    }

    #[test]
    fn full_report_snapshot() {
        let mut report = minimal();
        report.scan.tree_rendered =
            "mydir/\n├── file.py  (1.0 KB)\n└── src/\n    └── lib.rs  (2.0 KB)".into();
        report.scan.file_categories = [
            ("source".to_string(), 12),
            ("config".to_string(), 3),
            ("unknown".to_string(), 3),
            ("document".to_string(), 55),
        ]
        .into_iter()
        .collect();
        report.scan.languages = vec!["Python".into(), "Rust".into()];
        report.scan.lines_of_code = [("Python".to_string(), 150), ("Rust".to_string(), 2300)]
            .into_iter()
            .collect();
        report.scan.large_files = vec![LargeFile {
            path: "/tmp/mydir/src/lib.rs".into(),
            name: "lib.rs".into(),
            reasons: vec!["lines: 2300".into()],
        }];
        report.scan.ignore = IgnoreSummary {
            enabled: true,
            rule_files: vec![
                ".gitignore".into(),
                "a/.ignore".into(),
                "b/.gitignore".into(),
                "c/.gitignore".into(),
            ],
            files_removed: 1234,
            dirs_removed: 1,
        };
        report.scan.top_directories.push(DiskEntry {
            path: "/tmp/mydir/src".into(),
            size_bytes: 2048,
            size_human: "2.0 KB".into(),
        });
        report.ai_brief = "A small Python and Rust project.".into();
        report.ai_detailed = "It has two parts.\n\nNothing alarming.".into();
        let mut invented = flag("info", "src/backdoor.py", "Opens a reverse shell.");
        invented.verified = Some(false);
        invented.original_severity = Some("critical".into());
        invented.note = Some(
            "Its path was not found in the tree, so it is shown as info; the agent rated it critical."
                .into(),
        );
        let mut at_line = flag("concern", "src/lib.rs", "Unsafe block without a comment.");
        at_line.verified = Some(true);
        at_line.line = Some(12);
        report.flags = vec![
            flag("info", "src/lib.rs", "Large generated file."),
            flag("critical", ".env", "Live API key in plain text."),
            invented,
            at_line,
        ];
        report.grounding = Some(Grounding {
            citations: 59,
            resolved: 57,
            ..Grounding::default()
        });
        report.investigation.status = InvestigationStatus::Complete;
        insta::assert_snapshot!(format_report(&report, "/tmp/mydir"));
    }

    #[test]
    fn the_grounding_line_closes_the_report_and_counts_unchecked_symbols() {
        let mut report = minimal();
        assert!(!format_report(&report, "/tmp").contains("Grounding"));
        report.grounding = Some(Grounding {
            citations: 1,
            resolved: 1,
            unchecked: 2,
            ..Grounding::default()
        });
        let text = format_report(&report, "/tmp");
        assert!(
            text.ends_with(&format!(
                "  Grounding: 1 of 1 citation found in the tree (2 symbols not checked: outline limit)\n\n{0}\n  End of report.\n{0}",
                "=".repeat(60)
            )),
            "{text}"
        );
    }

    #[test]
    fn unverified_flags_say_so_and_keep_their_json_fields() {
        let mut flag = flag("info", "src/gone.py", "Bad.");
        flag.verified = Some(false);
        flag.original_severity = Some("critical".into());
        flag.note = Some("Lowered.".into());
        let shown = format_flags(std::slice::from_ref(&flag));
        assert!(shown.contains("  [INFO    ] src/gone.py (not found in the tree)\n             Bad.\n             Lowered."), "{shown}");
        let json = serde_json::to_value(&flag).unwrap();
        assert_eq!(json["severity"], "info");
        assert_eq!(json["original_severity"], "critical");
        assert_eq!(json["verified"], false);
        let plain = serde_json::to_value(Flag::new("a", "b", "info")).unwrap();
        assert_eq!(
            plain.as_object().unwrap().len(),
            3,
            "ungrounded flags keep the original shape"
        );
    }

    #[test]
    fn a_hit_cost_cap_is_said_under_the_summary() {
        let mut report = Report {
            ai_brief: "Half a verdict.".into(),
            investigation: Investigation {
                status: InvestigationStatus::Partial,
                note: Some("3 directories left for a later run".into()),
                summary: Some(InvestigationSummary {
                    directories_remaining: 3,
                    cost_cap_hit: true,
                    ..InvestigationSummary::default()
                }),
                error: None,
                spent: None,
            },
            ..Report::default()
        };
        let text = format_report(&report, "/tmp/mydir");
        let summary_at = text.find("Half a verdict.").unwrap();
        let note_at = text
            .find("  Note: the --max-cost cap was hit; 3 directories were left uninvestigated. Run again to resume.")
            .expect(&text);
        assert!(summary_at < note_at && note_at < text.find(">> DIRECTORY TREE").unwrap());
        report.investigation.summary.as_mut().unwrap().cost_cap_hit = false;
        assert!(!format_report(&report, "/tmp/mydir").contains("--max-cost"));
    }

    #[test]
    fn the_report_says_in_one_line_what_happened_to_the_investigation() {
        let line_of = |investigation: Investigation| {
            let report = Report {
                ai_brief: "Verdict.".into(),
                investigation,
                ..Report::default()
            };
            let text = format_report(&report, "/t");
            let lines: Vec<&str> = text
                .lines()
                .filter(|l| l.trim_start().starts_with("Investigation"))
                .collect();
            assert_eq!(lines.len(), 1, "{text}");
            let at = text.find(lines[0]).unwrap();
            assert!(text.find("Verdict.").unwrap() < at);
            assert!(at < text.find(">> DIRECTORY TREE").unwrap());
            lines[0].to_string()
        };
        let complete = Investigation {
            status: InvestigationStatus::Complete,
            ..Investigation::default()
        };
        assert_eq!(line_of(complete), "  Investigation complete.");
        assert_eq!(
            line_of(Investigation::failed(
                "the API at http://x could not be\nreached"
            )),
            "  Investigation failed: the API at http://x could not be\\nreached"
        );
        assert_eq!(
            line_of(Investigation::skipped("no API key")),
            "  Investigation skipped: no API key"
        );
    }

    #[test]
    fn the_json_always_carries_the_investigation_status() {
        let value = |investigation| {
            serde_json::to_value(Report {
                investigation,
                ..Report::default()
            })
            .unwrap()["investigation"]
                .clone()
        };
        assert_eq!(
            value(Investigation::skipped("--scan-only")),
            serde_json::json!({"status": "skipped", "note": "--scan-only"})
        );
        assert_eq!(
            value(Investigation::failed("boom")),
            serde_json::json!({"status": "failed", "error": "boom"})
        );
        let ran = value(Investigation {
            status: InvestigationStatus::Complete,
            summary: Some(InvestigationSummary {
                id: "abc".into(),
                ..InvestigationSummary::default()
            }),
            ..Investigation::default()
        });
        assert_eq!(ran["status"], "complete");
        assert_eq!(ran["id"], "abc");
        assert_eq!(ran["tokens"]["input"], 0);
        // And it reads back.
        let parsed: Investigation = serde_json::from_value(ran).unwrap();
        assert_eq!(parsed.summary.unwrap().id, "abc");
    }
}
