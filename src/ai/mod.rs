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
pub mod engine;
pub mod estimate;
pub mod orchestrator;
pub mod passes;
pub mod prompts;
pub mod rules;
pub mod tools;

use crate::cache::{CacheError, CacheRoot, RunLock};
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
    /// How many of the report's citations were found in the tree.
    pub grounding: Option<crate::grounding::Grounding>,
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
    /// A 404 that is not the API's: the base URL is not a Messages API.
    #[error("the Messages API was not found at the base URL ({0}); check ANTHROPIC_BASE_URL")]
    NoMessagesApi(api::ApiError),
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
    reserved: Option<RunLock>,
) -> Result<Outcome, InvestigationError> {
    orchestrator::investigate(config, scan, progress, reserved).await
}

/// Take the target's run lock before the scan, so that a second run on a
/// busy target stops at once rather than after scanning a large tree. A
/// cache that cannot be written is not an error yet (`None`): the
/// investigation reports it and the report still prints.
pub fn reserve_target(config: &Config) -> Result<Option<RunLock>, InvestigationError> {
    let locked = CacheRoot::open(&config.cache_root)
        .and_then(|root| root.lock_run(&config.target_canonical, false));
    match locked {
        Ok(lock) => Ok(Some(lock)),
        Err(CacheError::Io { .. }) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// How a pass or phase failed: either the whole run must stop, or the
/// investigation gives up with a warning and empty AI fields.
#[derive(Debug)]
pub enum PassError {
    /// Stop the run (unknown model, rejected credential, unsafe cache).
    Fatal(InvestigationError),
    /// Give up on the investigation; the report still prints.
    Failed(String),
}

impl From<InvestigationError> for PassError {
    fn from(err: InvestigationError) -> Self {
        PassError::Fatal(err)
    }
}

impl From<prompts::PromptError> for PassError {
    fn from(err: prompts::PromptError) -> Self {
        PassError::Failed(err.to_string())
    }
}

impl From<engine::agent::AgentError> for PassError {
    fn from(err: engine::agent::AgentError) -> Self {
        PassError::Failed(err.to_string())
    }
}

impl From<crate::cache::CacheError> for PassError {
    fn from(err: crate::cache::CacheError) -> Self {
        PassError::Failed(err.to_string())
    }
}

/// The API errors no pass should shrug off, because every later request would
/// fail the same way:
/// - an unknown or retired model and a rejected credential stop the run;
/// - an API that stayed unreachable through every retry (no connection, or
///   no response in time) ends the investigation with a warning, instead of
///   making every remaining pass wait through the same retries. The original
///   let each pass fail on its own; this is deliberate.
///
/// Other errors are the pass's to handle, as in the original.
pub(crate) fn stop_for_api_error(
    session: &engine::session::Session,
    err: &api::ApiError,
) -> Result<(), PassError> {
    match err.kind {
        api::ApiErrorKind::NotFound if err.is_unknown_model() => {
            Err(PassError::Fatal(InvestigationError::UnknownModel {
                model: session.model().to_string(),
                detail: err.to_string(),
            }))
        }
        api::ApiErrorKind::NotFound => Err(PassError::Fatal(InvestigationError::NoMessagesApi(
            err.clone(),
        ))),
        api::ApiErrorKind::Authentication | api::ApiErrorKind::Permission => {
            Err(PassError::Fatal(InvestigationError::Auth(err.clone())))
        }
        api::ApiErrorKind::Connection | api::ApiErrorKind::Timeout => Err(PassError::Failed(
            format!("the API could not be reached: {err}"),
        )),
        api::ApiErrorKind::InvalidRequest
        | api::ApiErrorKind::RequestTooLarge
        | api::ApiErrorKind::RateLimited
        | api::ApiErrorKind::Overloaded
        | api::ApiErrorKind::Server
        | api::ApiErrorKind::BrokenStream
        | api::ApiErrorKind::MalformedToolInput => Ok(()),
    }
}
