//! How an investigation fails: [`InvestigationError`] ends it (the report
//! still prints and says why), [`PassError`] is what a pass or phase hands
//! up (stop the run, or give up on the investigation with a warning).
//!
//! It sits below the engine and the passes, which both return these; which
//! API errors end a run is the engine's to say (it holds the session that
//! knows whether any request has succeeded).

use crate::ai::api;

/// A failure that ends the investigation. The report still prints, saying
/// the investigation failed and why; see
/// [`crate::ai::engine::session::stop_for_api_error`] for which API errors
/// end it.
#[derive(Debug, thiserror::Error)]
pub enum InvestigationError {
    /// The model does not exist or was retired (HTTP 404 `not_found_error`,
    /// or a gateway's words for it).
    #[error(
        "model '{model}' was not found by the API ({detail}); choose another with --model or LUMINOS_MODEL"
    )]
    UnknownModel { model: String, detail: String },
    /// The base URL does not lead to the Messages API: a 404 that is not
    /// the API's, a success status whose body is not the API's (an HTML
    /// page, garbage, JSON of the wrong shape), or an error status with
    /// such a body through every retry.
    #[error("{}", not_messages_api_line(base_url, err))]
    NotMessagesApi {
        /// `ANTHROPIC_BASE_URL` as the run used it.
        base_url: String,
        err: Box<api::ApiError>,
    },
    /// `--batch` through an endpoint that serves messages but has no
    /// Message Batches API (its 404).
    #[error(
        "ANTHROPIC_BASE_URL={base_url} has no Message Batches API: POST {} got {} ({}); \
         run without --batch",
        api::Endpoint::Batches.path(),
        err.answer(),
        err.message
    )]
    NoBatchesApi {
        base_url: String,
        err: Box<api::ApiError>,
    },
    /// The API refused every attempt as overloaded (529,
    /// `overloaded_error`).
    #[error("the API is overloaded and refused every attempt ({0}); try again later")]
    Overloaded(api::ApiError),
    /// The API kept answering with a rate limit or a server error, or its
    /// streams kept breaking, until the call gave up: the next call would
    /// meet the same.
    #[error("the API is failing for now ({0}); try again later")]
    Unavailable(api::ApiError),
    /// The credential was rejected.
    #[error("the API rejected the credential: {0}")]
    Auth(api::ApiError),
    /// The account cannot pay (HTTP 402 `billing_error`, a low credit
    /// balance, a gateway's budget).
    #[error(
        "the API refused the request for billing reasons ({0}); check the account's credit balance and spend limits"
    )]
    Billing(api::ApiError),
    /// No reply from the endpoint: refused, unresolvable, silent, or a
    /// stream that makes no progress.
    #[error("{}", unreachable_line(endpoint, *answered, *replied, detail))]
    Unreachable {
        endpoint: String,
        /// The endpoint had answered (with any status) earlier in the run.
        answered: bool,
        /// The endpoint had given a whole reply earlier in the run.
        replied: bool,
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
    /// A cache write failed mid-run (a full disk, a read-only file
    /// system): no new request is sent once one has.
    #[error(transparent)]
    CacheWrite(crate::cache::WriteFault),
}

/// The one line that says the endpoint did not answer, naming it and what
/// to check.
fn unreachable_line(endpoint: &str, answered: bool, replied: bool, detail: &str) -> String {
    if replied {
        format!(
            "the API at {endpoint} stopped answering ({detail}); check the network and any proxy"
        )
    } else if answered {
        format!(
            "the API at {endpoint} answered but never finished a reply ({detail}); check \
             ANTHROPIC_BASE_URL and any proxy"
        )
    } else {
        format!(
            "the API at {endpoint} could not be reached ({detail}); check ANTHROPIC_BASE_URL, \
             the network and any proxy"
        )
    }
}

/// The one line that says the base URL does not lead to the Messages API:
/// the variable, its value, and what came back.
fn not_messages_api_line(base_url: &str, err: &api::ApiError) -> String {
    let path = err.endpoint.unwrap_or(api::Endpoint::Messages).path();
    let mut line = format!(
        "ANTHROPIC_BASE_URL={base_url} does not answer as the Messages API: POST {path} got {}",
        err.answer()
    );
    if !err.message.is_empty() {
        line.push_str(&format!(" ({})", err.message));
    }
    if let Some(id) = &err.request_id {
        line.push_str(&format!(" [request-id: {id}]"));
    }
    line.push_str("; check ANTHROPIC_BASE_URL");
    line
}

/// How a pass or phase failed: either the whole run must stop, or the
/// investigation gives up with a warning and empty AI fields.
#[derive(Debug)]
pub(crate) enum PassError {
    /// Stop the investigation (unknown model, rejected credential, billing,
    /// an unreachable, wrong or overloaded endpoint, an unsafe cache).
    Fatal(InvestigationError),
    /// Give up on the investigation; the report still prints.
    Failed(String),
}

impl From<InvestigationError> for PassError {
    fn from(err: InvestigationError) -> Self {
        PassError::Fatal(err)
    }
}

impl From<crate::ai::prompts::PromptError> for PassError {
    fn from(err: crate::ai::prompts::PromptError) -> Self {
        PassError::Failed(err.to_string())
    }
}

impl From<crate::cache::CacheError> for PassError {
    fn from(err: crate::cache::CacheError) -> Self {
        PassError::Failed(err.to_string())
    }
}
