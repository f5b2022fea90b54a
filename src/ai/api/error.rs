//! Typed API errors. Each says what happened in one line, with the
//! `request-id` when the server sent one.

use std::time::Duration;

/// What kind of failure an [`ApiError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiErrorKind {
    /// 401: bad or missing credential.
    Authentication,
    /// 403: the credential may not do this.
    Permission,
    /// 400: the request was malformed.
    InvalidRequest,
    /// 404: unknown endpoint or model.
    NotFound,
    /// 413: the request is too large.
    RequestTooLarge,
    /// 429.
    RateLimited,
    /// 529 or an `overloaded_error` event.
    Overloaded,
    /// Other 5xx, 408, 409, or an `api_error` event.
    Server,
    /// No response or no stream activity in time.
    Timeout,
    /// The connection could not be made or was lost before a response.
    Connection,
    /// The stream ended early, carried an `error` event, or was unparsable.
    BrokenStream,
    /// A tool_use block's JSON did not parse (usually a cut-off stream).
    MalformedToolInput,
}

/// An API failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub kind: ApiErrorKind,
    /// HTTP status, when there was one.
    pub status: Option<u16>,
    /// The server's or our explanation, one line.
    pub message: String,
    /// The `request-id` response header.
    pub request_id: Option<String>,
    /// The server's requested wait (`retry-after-ms` / `retry-after`).
    pub retry_after: Option<Duration>,
    /// The server's `x-should-retry` header, when present.
    pub should_retry: Option<bool>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let _ = f;
        todo!("issue 3: one line with kind, status, message and request-id")
    }
}

impl std::error::Error for ApiError {}
