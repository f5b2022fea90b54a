//! The report's `grounding` object: what checking the citations found, as
//! the JSON report carries it and the terminal report ends with it. The
//! checking itself is `crate::grounding`'s; this file only holds its result,
//! so the report depends on no checker.

use serde::{Deserialize, Serialize};

/// The report's `grounding` object: how many of the citations in the
/// summaries, flags and synthesis were found in the tree.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Grounding {
    /// Citations checked: distinct paths and symbols per text, not counting
    /// paths outside the target, library symbols, or unchecked ones.
    pub citations: usize,
    /// Of those, the ones found in the tree.
    pub resolved: usize,
    /// Symbols that could not be checked (the outline budget ran out or a
    /// file that may define them could not be parsed).
    pub unchecked: usize,
    /// The same counts for paths alone.
    pub paths: CitationCount,
    /// The same counts for symbols alone.
    pub symbols: CitationCount,
    /// Every citation not found, in report order.
    pub unresolved: Vec<Unresolved>,
}

/// Citations checked and found, for one kind.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CitationCount {
    pub citations: usize,
    pub resolved: usize,
}

/// A citation that names nothing in the tree, and where it was made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Unresolved {
    /// As written (a path without its line suffix).
    pub citation: String,
    /// `path` or `symbol`.
    pub kind: CitationKind,
    /// `dir_summary`, `file_summary`, `flag`, `ai_brief` or `ai_detailed`.
    pub cited_in: CitedIn,
    /// The directory or file the summary is about, or the flag's path;
    /// absent for the brief and the detailed analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

/// What a citation names.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CitationKind {
    Path,
    Symbol,
}

/// Where a citation was made.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CitedIn {
    DirSummary,
    FileSummary,
    Flag,
    AiBrief,
    AiDetailed,
    /// A path of the domain sections (a component's, an entry point's, a
    /// data set's).
    AiSections,
}

impl Grounding {
    /// The report's closing line: `Grounding: 57 of 59 citations found in
    /// the tree`, and how many symbols went unchecked, if any.
    pub(crate) fn summary_line(&self) -> String {
        let mut line = format!(
            "Grounding: {} of {} citation{} found in the tree",
            self.resolved,
            self.citations,
            if self.citations == 1 { "" } else { "s" }
        );
        if self.unchecked > 0 {
            line.push_str(&format!(
                " ({} symbol{} not checked: outline limit)",
                self.unchecked,
                if self.unchecked == 1 { "" } else { "s" }
            ));
        }
        line
    }
}
