//! The investigation: a multi-pass agent run over the Messages API.
//!
//! - [`api`]: our Messages API client (transport, SSE, accumulation, retry);
//! - [`tools`]: the toolbelt, one registry, sandboxed;
//! - the passes — survey, planning, one loop per directory, synthesis — and the
//!   orchestrator that runs them as a short, visible sequence of phases;
//! - [`batch_mode`]: what `--batch` and `--cancel-batch` add around them.
//!
//! Business rules (applying a plan, filtering tools by the survey, rendering
//! prompt blocks, building partial entries) are pure helpers with unit tests;
//! each LLM call only builds its prompt, calls the model and returns a
//! proposal that deterministic code then normalizes.

pub mod api;
pub(crate) mod batch_mode;
pub mod engine;
pub(crate) mod estimate;
pub(crate) mod facts;
pub(crate) mod orchestrator;
pub mod passes;
pub(crate) mod prompts;
pub mod rules;
pub mod tools;

use crate::cache::{CacheError, CacheRoot, RunLock};
use crate::config::Config;
use crate::progress::Progress;
use crate::report::{Flag, Investigation};

/// The investigation's entry point (the run calls it after the base scan).
pub use orchestrator::investigate;

/// What an investigation produced for the report.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub brief: String,
    pub detailed: String,
    pub flags: Vec<Flag>,
    /// How it went: complete, partial, failed (with its one-line error).
    pub status: Investigation,
    /// How many of the report's citations were found in the tree.
    pub grounding: Option<crate::report::grounding::Grounding>,
    /// The run was interrupted (Ctrl-C); the next run resumes.
    pub interrupted: bool,
}

/// A failure that ends the investigation. The report still prints, saying
/// the investigation failed and why; see `stop_for_api_error` for which
/// API errors end it.
#[derive(Debug, thiserror::Error)]
pub enum InvestigationError {
    /// The model does not exist or was retired (HTTP 404 `not_found_error`,
    /// or a gateway's words for it).
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
    /// The account cannot pay (HTTP 402 `billing_error`, a low credit
    /// balance, a gateway's budget).
    #[error(
        "the API refused the request for billing reasons ({0}); check the account's credit balance and spend limits"
    )]
    Billing(api::ApiError),
    /// No answer from the endpoint: refused, unresolvable, or silent.
    #[error("{}", unreachable_line(endpoint, *answered, detail))]
    Unreachable {
        endpoint: String,
        /// The endpoint had answered earlier in the run.
        answered: bool,
        /// The last attempt's error, one line.
        detail: String,
    },
    /// The first request was rejected as a whole, before any had
    /// succeeded: every later one would be rejected the same way.
    #[error("the API rejected the first request ({0}); no later request would fare better")]
    Rejected(api::ApiError),
    /// The cache cannot be used safely.
    #[error(transparent)]
    Cache(#[from] crate::cache::CacheError),
}

/// The one line that says the endpoint did not answer, naming it and what
/// to check.
fn unreachable_line(endpoint: &str, answered: bool, detail: &str) -> String {
    if answered {
        format!(
            "the API at {endpoint} stopped answering ({detail}); check the network and any proxy"
        )
    } else {
        format!(
            "the API at {endpoint} could not be reached ({detail}); check ANTHROPIC_BASE_URL, \
             the network and any proxy"
        )
    }
}

/// The one-line warning about `model` from the catalog, as of today (UTC):
/// unknown (its price is assumed), deprecated (with its retirement date
/// and replacement) or retired. `None` for a current model.
pub fn model_warning(model: &str) -> Option<String> {
    let today = chrono::Utc::now()
        .date_naive()
        .format("%Y-%m-%d")
        .to_string();
    api::catalog::ModelFacts::of(model).warning(model, &today)
}

/// Take the target's run lock before the scan, so that a second run on a
/// busy target stops at once rather than after scanning a large tree. A
/// cache that cannot be written is not an error yet (`None`): the
/// investigation reports it and the report still prints.
pub(crate) fn reserve_target(config: &Config) -> Result<Option<RunLock>, InvestigationError> {
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
pub(crate) enum PassError {
    /// Stop the investigation (unknown model, rejected credential, billing,
    /// an unreachable endpoint, an unsafe cache).
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

/// The API errors no pass should shrug off, because every later request
/// would fail the same way; each ends the investigation the first time it
/// is seen, whatever pass meets it:
/// - a final answer about the credential, the model or the account
///   ([`api::ApiError::final_cause`]), whatever status a gateway gave it;
/// - an endpoint that stayed unreachable or silent through its retries
///   (the client gives up early on an endpoint that never answered; see
///   [`api::retry`]). The original let each pass fail on its own; this is
///   deliberate;
/// - a 400 on a run whose requests have never succeeded, unless it is about
///   that request's size: the same model, key and parameters go into every
///   request, so none would fare better.
///
/// Other errors are the pass's to handle, as in the original.
pub(crate) fn stop_for_api_error(
    session: &engine::session::Session,
    err: &api::ApiError,
) -> Result<(), PassError> {
    use api::error::FinalCause;
    let fatal = |e| Err(PassError::Fatal(e));
    match err.final_cause() {
        Some(FinalCause::UnknownModel) => {
            return fatal(InvestigationError::UnknownModel {
                model: session.model().to_string(),
                detail: err.to_string(),
            });
        }
        Some(FinalCause::NotMessagesApi) => {
            return fatal(InvestigationError::NoMessagesApi(err.clone()));
        }
        Some(FinalCause::Credential) => return fatal(InvestigationError::Auth(err.clone())),
        Some(FinalCause::Billing) => return fatal(InvestigationError::Billing(err.clone())),
        None => {}
    }
    let client = session.client();
    match err.kind {
        api::ApiErrorKind::Connection | api::ApiErrorKind::Timeout => {
            fatal(InvestigationError::Unreachable {
                endpoint: client.base_url().to_string(),
                answered: client.has_answered(),
                detail: err.to_string(),
            })
        }
        api::ApiErrorKind::InvalidRequest | api::ApiErrorKind::RequestTooLarge
            if !client.has_succeeded() && err.prompt_too_long().is_none() =>
        {
            fatal(InvestigationError::Rejected(err.clone()))
        }
        api::ApiErrorKind::InvalidRequest
        | api::ApiErrorKind::RequestTooLarge
        | api::ApiErrorKind::Authentication
        | api::ApiErrorKind::Billing
        | api::ApiErrorKind::Permission
        | api::ApiErrorKind::NotFound
        | api::ApiErrorKind::RateLimited
        | api::ApiErrorKind::Overloaded
        | api::ApiErrorKind::Server
        | api::ApiErrorKind::BrokenStream
        | api::ApiErrorKind::MalformedToolInput => Ok(()),
    }
}

/// Record that the model declined `what` as an `info` flag on `path`, so
/// the report says why that part is missing. Failing to record it is only
/// a warning: the refusal is on stderr already.
pub(crate) fn record_refusal(
    cache: &crate::cache::Cache,
    progress: &Progress,
    path: &str,
    finding: String,
) {
    let flag = Flag::new(path, finding, "info");
    if let Err(err) = cache.append_flag(&flag) {
        progress.ai(&format!("Warning: could not record a flag: {err}"));
    }
}
