//! The report: what a run found, as JSON (`--json`) and as the terminal report.
//!
//! The JSON keys and their order are the reference's, so scripts written
//! against it keep working. [`Report`] is the base scan plus the AI fields; the
//! terminal formatter is [`format_report`]. Every file name and every piece of
//! model text printed here goes through [`crate::output::escape_control`].

use serde::{Deserialize, Serialize};

use crate::scan::BaseScan;

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

/// Format the full terminal report for `target` (shown as given, absolute).
pub fn format_report(report: &Report, target: &str) -> String {
    let _ = (report, target);
    todo!("issue 2: the reference's sections, character for character")
}
