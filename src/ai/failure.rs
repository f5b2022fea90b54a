//! How an investigation fails: one typed [`InvestigationError`] that every
//! phase, pass and loop hands up, and one rule ([`InvestigationError::ends_run`])
//! for what it ends: the investigation (the report still prints, with status
//! `failed` and the one-line reason) or the whole run.
//!
//! It sits below the engine and the passes, which both return it; which
//! API errors end an investigation is the engine's to say (it holds the
//! session that knows whether any request has succeeded).

use crate::ai::api;
use crate::ai::prompts::PromptError;
use crate::ai::tools::FatalToolError;
use crate::cache::{CacheError, EntryError, WriteFault};

/// A failure that ends the investigation. Unless it ends the run too
/// ([`InvestigationError::ends_run`]), the report still prints, saying the
/// investigation failed and why; see
/// [`crate::ai::engine::session::stop_for_api_error`] for which API errors
/// end it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InvestigationError {
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
    /// No credential is set, so no client could be built.
    #[error("no API credential is set")]
    NoCredential,
    /// The client could not be built (a base URL that is not a URL, a
    /// credential that cannot go in a header).
    #[error("{0}")]
    Client(api::ApiError),
    /// A run without `--batch` while batches (these ids) are in flight:
    /// it would pay again for what they already do.
    #[error(
        "batch {ids} is in flight for this investigation; run with --batch to pick up its \
         results, or cancel it with --cancel-batch"
    )]
    BatchInFlight { ids: String },
    /// The cache failed (see [`InvestigationError::ends_run`] for what that
    /// ends).
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// A cache write failed mid-run (a full disk, a read-only file
    /// system): no new request is sent once one has.
    #[error(transparent)]
    CacheWrite(WriteFault),
    /// A directory entry luminos writes itself could not be written
    /// (`what` it was doing, and why).
    #[error("{what}: {source}")]
    EntryWrite {
        what: &'static str,
        source: EntryError,
    },
    /// A prompt did not render (a template and its caller disagree).
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// A tool hit a failure that makes the run unsafe to continue.
    #[error(transparent)]
    Tool(#[from] FatalToolError),
    /// A directory loop's task ended without an outcome (it panicked).
    #[error("a directory loop failed: {0}")]
    LoopAborted(#[source] tokio::task::JoinError),
}

impl InvestigationError {
    /// Whether this failure ends the run itself rather than only the
    /// investigation: a cache luminos cannot use safely (a symlink, a
    /// directory someone else owns, another run's lock) stops the run with
    /// an error and no report. Everything else, a cache that cannot be
    /// written included, ends the investigation: the report still prints,
    /// with status `failed` and this error's line. The same rule on every
    /// path: opening the investigation, any phase, any loop.
    pub(crate) fn ends_run(&self) -> bool {
        match self {
            InvestigationError::Cache(err) => match err {
                CacheError::Io { .. } => false,
                CacheError::Symlink(_)
                | CacheError::ForeignOwner { .. }
                | CacheError::NotADirectory(_)
                | CacheError::Busy { .. }
                | CacheError::CacheInUse { .. }
                | CacheError::NotACache { .. } => true,
            },
            InvestigationError::UnknownModel { .. }
            | InvestigationError::NotMessagesApi { .. }
            | InvestigationError::NoBatchesApi { .. }
            | InvestigationError::Overloaded(_)
            | InvestigationError::Unavailable(_)
            | InvestigationError::Auth(_)
            | InvestigationError::Billing(_)
            | InvestigationError::Unreachable { .. }
            | InvestigationError::Rejected(_)
            | InvestigationError::NoCredential
            | InvestigationError::Client(_)
            | InvestigationError::BatchInFlight { .. }
            | InvestigationError::CacheWrite(_)
            | InvestigationError::EntryWrite { .. }
            | InvestigationError::Prompt(_)
            | InvestigationError::Tool(_)
            | InvestigationError::LoopAborted(_) => false,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_unsafe_cache_ends_the_run() {
        let io = CacheError::Io {
            action: "writing",
            path: "/c/x".into(),
            error: std::io::Error::other("disk full"),
        };
        assert!(!InvestigationError::Cache(io).ends_run());
        assert!(InvestigationError::Cache(CacheError::Symlink("/c".into())).ends_run());
        assert!(InvestigationError::Cache(CacheError::Busy { pid: 7 }).ends_run());
        assert!(!InvestigationError::NoCredential.ends_run());
        let written = InvestigationError::EntryWrite {
            what: "writing a partial entry",
            source: crate::cache::EntryError::Write(std::io::Error::other("disk full")),
        };
        assert!(!written.ends_run());
        assert_eq!(
            written.to_string(),
            "writing a partial entry: Error writing cache: disk full"
        );
    }
}
