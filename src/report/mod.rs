//! The report: what a run found, in five formats ([`Format`]): the terminal
//! report for people, JSON for scripts, Markdown to commit beside the code,
//! a self-contained HTML page, and an `AGENTS.md` for coding agents.
//!
//! The JSON keys and their order are the original's, so scripts written
//! against it keep working; luminos's own keys come after. [`Report`] is the
//! base scan plus what the investigation learned. Every file name and every
//! piece of model text is escaped for the format it is written in.
//!
//! This module holds the report's data (the types `--json` serialises, their
//! constructors and the one-line texts the run and the report share), with
//! `directory` (the `directories` rows and the flag order) and `sections`
//! (the domain sections). [`render`] (`format`) writes a report in one
//! format; one module per format (`text` with `text_tree`, `text_scan` and
//! `sections_text`, `json`, `markdown`, `html` with `html_svg` and
//! `html_graph`, `agents`) and the pieces they share: `verdict` (the lines under the
//! brief), `shape` (sizes, flagged paths, bars), `graph` (the picture of
//! the structure) and `markup` (escaping). The unit tests are in `tests`.

use serde::{Deserialize, Serialize};

use crate::money::Usd;
use crate::scan::BaseScan;
use crate::text::escape_line;
use crate::usage::Usage;
use grounding::Grounding;

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
    /// Findings, from the agent's `flag` calls and from secret redaction,
    /// most severe first (see [`Report::order_flags`]).
    pub flags: Vec<Flag>,
    /// The domain sections the synthesis filled (architecture,
    /// components, datasets, ...; see [`sections`]); `{}` when none.
    #[serde(default)]
    pub ai_sections: Sections,
    /// Every directory in scope, in tree order, with what the investigation
    /// said about it; empty when none ran.
    #[serde(default)]
    pub directories: Vec<DirectoryReport>,
    /// Whether the investigation ran and how far it got; always present.
    #[serde(default)]
    pub investigation: Investigation,
    /// How many of the paths and symbols the report cites were found in the
    /// tree; absent when no investigation ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounding: Option<Grounding>,
}

impl Report {
    /// Put the flags in report order (most severe first, then by path,
    /// line and finding: a stable order, whatever order the loops raised
    /// them in) and give each directory the paths of the flags raised in
    /// it. Called once the flags are final (after grounding).
    pub fn order_flags(&mut self) {
        self.flags.sort_by(directory::flag_order);
        directory::attach_flags(&mut self.directories, &self.flags);
    }
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What is missing (`partial`), why none ran (`skipped`), or what was
    /// repaired (a damaged `flags.jsonl`), one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Cost, cache and coverage, when it ran to the end.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<InvestigationSummary>,
    /// What a run that stopped early (failed or interrupted) had already
    /// spent, so nobody mistakes a failed run for a free one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spent: Option<Spent>,
    /// What `--refine` changed (only with `--refine`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refinement: Option<Refinement>,
    /// What the run did that a reader should know and that is no failure
    /// (a tool input read leniently, the window the run was sized to, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `investigation.refinement`: what the refinement after the synthesis did
/// to the report.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Refinement {
    /// Rounds whose report this one shows (read back from the cache
    /// included).
    pub rounds: u32,
    /// Of those, rounds an earlier run paid for.
    pub rounds_reused: u32,
    /// Why it stopped.
    pub stopped: RefineStop,
    pub brief_changed: bool,
    pub detailed_changed: bool,
    /// The domain sections changed.
    #[serde(default)]
    pub sections_changed: bool,
    /// Flags the refinement added (in the report's `flags`).
    pub flags_added: Vec<Flag>,
    /// Recorded flags it withdrew (no longer in the report's `flags`).
    pub flags_withdrawn: Vec<Flag>,
    /// What this run spent on it.
    pub cost_usd: Usd,
}

/// Why a refinement stopped.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RefineStop {
    /// It ran the rounds asked for (`--refine-depth`).
    #[default]
    Depth,
    /// A round read nothing new.
    NoNewReads,
    /// Nothing was uncertain: no summary rated low, no flag whose path was
    /// not found, no summary at odds with a finding.
    NothingToSettle,
    /// The budget could not pay for its next request.
    Budget,
    /// No synthesis was written, so there was nothing to refine.
    NoSynthesis,
    /// A round ended without a report (its turns or the context ran out).
    NoReport,
    /// The model declined.
    Declined,
    /// An API call failed.
    ApiError,
}

impl RefineStop {
    /// Why, in words.
    pub fn describe(self) -> &'static str {
        match self {
            RefineStop::Depth => "the rounds asked for were done",
            RefineStop::NoNewReads => "a round read nothing new",
            RefineStop::NothingToSettle => "nothing was uncertain",
            RefineStop::Budget => "the budget could not pay for more",
            RefineStop::NoSynthesis => "no synthesis was written",
            RefineStop::NoReport => "a round handed in no report",
            RefineStop::Declined => "the model declined",
            RefineStop::ApiError => "an API call failed",
        }
    }
}

impl Refinement {
    /// The report's line: `Refinement: 2 rounds (a round read nothing
    /// new); the brief and the detailed analysis changed; 1 flag added, 1
    /// withdrawn; $0.0312.`
    pub fn line(&self) -> String {
        if self.rounds == 0 {
            return format!("Refinement: none ({}).", self.stopped.describe());
        }
        let parts: Vec<&str> = [
            (self.brief_changed, "the brief"),
            (self.detailed_changed, "the detailed analysis"),
            (self.sections_changed, "the sections"),
        ]
        .iter()
        .filter(|(changed, _)| *changed)
        .map(|(_, what)| *what)
        .collect();
        let changed = match parts.as_slice() {
            [] => "the report's text did not change".to_string(),
            [one] => format!("{one} changed"),
            [first, second] => format!("{first} and {second} changed"),
            [first, second, third, ..] => format!("{first}, {second} and {third} changed"),
        };
        let reused = match self.rounds_reused {
            0 => String::new(),
            n if n == self.rounds => ", from the cache".to_string(),
            n => format!(", {n} from the cache"),
        };
        format!(
            "Refinement: {} round{}{reused} ({}); {changed}; {} flag{} added, {} withdrawn; {}.",
            self.rounds,
            if self.rounds == 1 { "" } else { "s" },
            self.stopped.describe(),
            self.flags_added.len(),
            if self.flags_added.len() == 1 { "" } else { "s" },
            self.flags_withdrawn.len(),
            self.cost_usd.precise()
        )
    }
}

/// `investigation.spent`: the requests, tokens and dollars of a run that
/// stopped before its summary.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Spent {
    pub api_requests: u64,
    #[serde(with = "ReportTokens")]
    pub tokens: Usage,
    pub cost_usd: Usd,
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
            // A complete investigation's note says what was repaired.
            InvestigationStatus::Complete => match &self.note {
                Some(_) => format!("Investigation complete{}", said(&self.note)),
                None => "Investigation complete.".to_string(),
            },
            InvestigationStatus::Partial => format!("Investigation partial{}", said(&self.note)),
            InvestigationStatus::Failed => format!(
                "Investigation failed{}{}",
                said(&self.error),
                self.spent
                    .as_ref()
                    .filter(|spent| spent.api_requests > 0)
                    .map(|spent| format!(
                        " (after {} API request{}, about {})",
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
    /// How severe; a word luminos does not know reads as `info`.
    #[serde(default)]
    pub severity: Severity,
    /// Whether `path` names something in the tree (`general` always does).
    /// Set by the report's grounding; never part of `flags.jsonl`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// The line `path` was cited at (`src/app.py:12`), split off it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The severity the agent gave, when grounding lowered it to `info`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_severity: Option<Severity>,
    /// Why grounding marked the flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Flag {
    /// A flag as an agent or the redactor raises it, not yet grounded.
    pub fn new(
        path: impl Into<String>,
        finding: impl Into<String>,
        severity: impl Into<Severity>,
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
    pub budget_usd: Option<Usd>,
    /// API requests made by this run.
    pub api_requests: u64,
    /// Tokens billed by this run.
    #[serde(with = "ReportTokens")]
    pub tokens: Usage,
    /// Approximate cost of this run in dollars.
    pub cost_usd: Usd,
    /// Money prompt caching saved this run, in dollars.
    pub cache_savings_usd: Usd,
    /// `--max-cost` stopped new directories.
    pub cost_cap_hit: bool,
    /// What the Message Batches API did (`--batch` runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchSummary>,
    /// The `--language` the model wrote in (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// What every run of this investigation spent, this one's included,
    /// as the cache records it: `cost_usd`, `api_requests`,
    /// `last_paid_at` and `luminos_version`. Absent when no run recorded
    /// any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_runs: Option<AllRuns>,
}

/// What the runs of one investigation have spent in all, as `meta.json`
/// keeps it, so a report read from the cache can say what the
/// investigation cost, when it was last paid for and by which luminos.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllRuns {
    /// Dollars, every run that made a request (failed and interrupted ones
    /// too) added up.
    pub cost_usd: Usd,
    /// API requests, added up the same way.
    pub api_requests: u64,
    /// When the last run that made a request ended (RFC 3339).
    pub last_paid_at: String,
    /// The luminos version of that run.
    pub luminos_version: String,
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
    pub replayed_cost_usd: Usd,
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

/// How the report spells a run's [`Usage`] (`tokens`): shorter names than
/// the API's, as the report has always had them. Only the spelling; the
/// counts are the one `Usage`.
#[derive(Serialize, Deserialize)]
#[serde(remote = "Usage")]
pub(crate) struct ReportTokens {
    #[serde(rename = "input")]
    input_tokens: u64,
    #[serde(rename = "output")]
    output_tokens: u64,
    #[serde(rename = "cache_write")]
    cache_creation_input_tokens: u64,
    #[serde(rename = "cache_read")]
    cache_read_input_tokens: u64,
    #[serde(skip)]
    cache_creation_1h_input_tokens: Option<u64>,
}

mod agents;
mod directory;
mod format;
mod graph;
pub(crate) mod grounding;
mod html;
mod html_graph;
mod html_svg;
pub(crate) mod json;
mod markdown;
mod markup;
pub mod sections;
mod sections_text;
mod sections_view;
mod severity;
mod shape;
mod spent;
mod text;
mod text_dirs;
pub(crate) mod text_fit;
mod text_scan;
mod text_tree;
mod verdict;

pub(crate) use directory::tree_order;
pub use directory::{DirCoverage, DirectoryReport, FileSummary};
pub use format::{Format, RenderOptions, render};
pub use sections::Sections;
pub use severity::Severity;
pub(crate) use spent::{PriceBasis, spent_line};

#[cfg(test)]
mod tests;
