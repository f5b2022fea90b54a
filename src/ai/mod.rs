//! The investigation: a multi-pass agent run over the Messages API.
//!
//! - [`api`]: our Messages API client (transport, SSE, accumulation, retry);
//! - [`tools`]: the toolbelt, one registry, sandboxed;
//! - the passes — survey, planning, one loop per directory, synthesis — and the
//!   orchestrator that runs them as a short, visible sequence of phases.
//!
//! Business rules (applying a plan, filtering tools by the survey, rendering
//! prompt blocks, building partial entries) are pure helpers with unit tests;
//! each LLM call only builds its prompt, calls the model and returns a
//! proposal that deterministic code then normalizes.

pub mod api;
pub mod tools;

use crate::config::Config;
use crate::progress::Progress;
use crate::report::{Flag, InvestigationSummary};
use crate::scan::BaseScan;

/// What an investigation produced for the report.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub brief: String,
    pub detailed: String,
    pub flags: Vec<Flag>,
    pub summary: Option<InvestigationSummary>,
    /// The run was interrupted (Ctrl-C); the next run resumes.
    pub interrupted: bool,
}

/// A failure that stops the whole run (everything else degrades to a warning
/// and a report with empty AI fields).
#[derive(Debug, thiserror::Error)]
pub enum InvestigationError {
    /// The model does not exist or was retired (HTTP 404 `not_found_error`).
    #[error(
        "model '{model}' was not found by the API ({detail}); choose another with --model or LUMINOS_MODEL"
    )]
    UnknownModel { model: String, detail: String },
    /// The credential was rejected.
    #[error("the API rejected the credential: {0}")]
    Auth(api::ApiError),
    /// The cache cannot be used safely.
    #[error(transparent)]
    Cache(#[from] crate::cache::CacheError),
}

/// Run the investigation for `config.target` using the base scan's results.
/// Failures inside the investigation are reported on stderr and yield an
/// outcome with empty AI fields; only a fatal problem (an unknown model, a
/// rejected key, an unsafe cache) is an error.
pub async fn investigate(
    config: &Config,
    scan: &BaseScan,
    progress: &Progress,
) -> Result<Outcome, InvestigationError> {
    // The pipeline lands with the investigation issue; until then the report
    // carries the base scan only.
    let _ = (config, scan, progress);
    Ok(Outcome::default())
}
