//! The investigation: a multi-pass agent run over the Messages API.
//!
//! - [`api`]: our Messages API client (transport, SSE, accumulation, retry);
//! - [`tools`]: the toolbelt, one registry, sandboxed;
//! - the passes — survey, planning, one loop per directory, synthesis — and the
//!   orchestrator that runs them as a short, visible sequence of phases;
//! - [`batch_mode`]: what `--batch` and `--cancel-batch` add around them;
//! - [`ask`]: one question about a tree, after its investigation.
//!
//! Business rules (applying a plan, filtering tools by the survey, rendering
//! prompt blocks, building partial entries) are pure helpers with unit tests;
//! each LLM call only builds its prompt, calls the model and returns a
//! proposal that deterministic code then normalizes.

pub mod api;
pub(crate) mod ask;
pub(crate) mod batch_mode;
pub mod engine;
pub(crate) mod estimate;
pub(crate) mod failure;
pub(crate) mod orchestrator;
pub mod passes;
pub(crate) mod prompts;
pub mod rules;
pub(crate) mod situation;
pub(crate) mod smallest_window;
pub(crate) mod target;
pub mod tools;

use crate::config::InvestigationOptions;
use crate::report::{Flag, Investigation};

/// How an investigation fails (the run's entry point,
/// [`orchestrator::investigate`], returns it).
pub(crate) use failure::InvestigationError;

/// What an investigation produced for the report.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub brief: String,
    pub detailed: String,
    /// The domain sections the synthesis filled.
    pub sections: crate::report::Sections,
    pub flags: Vec<Flag>,
    /// How it went: complete, partial, failed (with its one-line error).
    pub status: Investigation,
    /// How many of the report's citations were found in the tree.
    pub grounding: Option<crate::report::grounding::Grounding>,
    /// Every directory in scope with what the run learned of it, in tree
    /// order (a run that reached its end, or failed after it knew its
    /// directories: what the cache holds of them).
    pub directories: Vec<crate::report::DirectoryReport>,
    /// The run was interrupted (Ctrl-C); the next run resumes.
    pub interrupted: bool,
}

impl Outcome {
    /// The report of `scan` with what the investigation produced, its
    /// flags in report order.
    pub(crate) fn into_report(self, scan: crate::scan::BaseScan) -> crate::report::Report {
        let mut report = crate::report::Report {
            scan,
            ai_brief: self.brief,
            ai_detailed: self.detailed,
            flags: self.flags,
            ai_sections: self.sections,
            directories: self.directories,
            investigation: self.status,
            grounding: self.grounding,
        };
        report.order_flags();
        report
    }
}

/// The one-line warning about `model` from the catalog, as of today (UTC):
/// unknown (its price is assumed), deprecated (with its retirement date
/// and replacement) or retired. `None` for a current model.
pub(crate) fn model_warning(options: &InvestigationOptions) -> Option<String> {
    let today = chrono::Utc::now()
        .date_naive()
        .format("%Y-%m-%d")
        .to_string();
    options.model_facts.warning(&options.model, &today)
}
