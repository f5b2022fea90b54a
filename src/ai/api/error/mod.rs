//! Typed API errors. Each says what happened in one line, with the HTTP status
//! and the `request-id` when the server sent them.
//!
//! This module also turns a failed HTTP response (status, headers, body) into
//! an [`ApiError`]: the status decides the kind, the JSON error body
//! `{"type":"error","error":{"type":..,"message":..}}` supplies the message,
//! and anything else (an HTML page from a proxy, plain text, binary noise)
//! becomes a short, escaped excerpt. Which kinds are transient is said here
//! once ([`ApiErrorKind::is_transient`]); whether and when a failure is
//! retried is decided in [`super::retry`].
//!
//! What an error means for later calls beyond its status (a gateway's 400
//! that says the key is wrong) is read by [`ApiError::final_cause`].

use std::time::{Duration, SystemTime};

use serde_json::Value;

mod cause;

pub use cause::FinalCause;

/// What kind of failure an [`ApiError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiErrorKind {
    /// 401: bad or missing credential.
    Authentication,
    /// 402 `billing_error`: the account cannot pay for the request.
    Billing,
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
    /// A success status whose body is not the Messages API's: an HTML
    /// page, bytes that are no event stream, JSON that is not a message.
    /// The endpoint behind the base URL is something else.
    UnexpectedAnswer,
}

impl ApiErrorKind {
    /// A short label that starts the one-line description.
    pub fn label(self) -> &'static str {
        match self {
            ApiErrorKind::Authentication => "authentication failed",
            ApiErrorKind::Billing => "billing problem",
            ApiErrorKind::Permission => "permission denied",
            ApiErrorKind::InvalidRequest => "invalid request",
            ApiErrorKind::NotFound => "not found",
            ApiErrorKind::RequestTooLarge => "request too large",
            ApiErrorKind::RateLimited => "rate limited",
            ApiErrorKind::Overloaded => "overloaded",
            ApiErrorKind::Server => "server error",
            ApiErrorKind::Timeout => "timed out",
            ApiErrorKind::Connection => "connection failed",
            ApiErrorKind::BrokenStream => "broken stream",
            ApiErrorKind::MalformedToolInput => "malformed tool input",
            ApiErrorKind::UnexpectedAnswer => "not a Messages API answer",
        }
    }

    /// Whether sending the same request again may succeed: a failure of the
    /// moment (429, 5xx, a lost connection, a broken stream) rather than an
    /// answer about the request, the credential, the model or the account.
    /// An answer that is not the Messages API's counts as one of the moment
    /// (a proxy's hiccup), but the retry policy gives it no retry before
    /// the endpoint has ever given a whole reply.
    /// The one place kinds are sorted this way: the retry policy retries
    /// exactly these ([`super::retry`]), and [`ApiError::final_cause`] never
    /// reads them for words.
    pub(crate) fn is_transient(self) -> bool {
        match self {
            ApiErrorKind::RateLimited
            | ApiErrorKind::Overloaded
            | ApiErrorKind::Server
            | ApiErrorKind::Timeout
            | ApiErrorKind::Connection
            | ApiErrorKind::BrokenStream
            | ApiErrorKind::MalformedToolInput
            | ApiErrorKind::UnexpectedAnswer => true,
            ApiErrorKind::Authentication
            | ApiErrorKind::Billing
            | ApiErrorKind::Permission
            | ApiErrorKind::InvalidRequest
            | ApiErrorKind::NotFound
            | ApiErrorKind::RequestTooLarge => false,
        }
    }

    /// The kind for an HTTP error status. `error_type` (the JSON body's
    /// `error.type`) only decides for statuses the API does not document.
    pub(crate) fn from_status(status: u16, error_type: Option<&str>) -> ApiErrorKind {
        match status {
            400 => ApiErrorKind::InvalidRequest,
            401 => ApiErrorKind::Authentication,
            402 => ApiErrorKind::Billing,
            403 => ApiErrorKind::Permission,
            404 => ApiErrorKind::NotFound,
            413 => ApiErrorKind::RequestTooLarge,
            429 => ApiErrorKind::RateLimited,
            529 => ApiErrorKind::Overloaded,
            408 | 409 | 500..=599 => ApiErrorKind::Server,
            _ => error_type
                .and_then(ApiErrorKind::from_error_type)
                .unwrap_or(ApiErrorKind::InvalidRequest),
        }
    }

    /// The kind named by an API error type such as `overloaded_error`.
    pub(crate) fn from_error_type(error_type: &str) -> Option<ApiErrorKind> {
        Some(match error_type {
            "invalid_request_error" => ApiErrorKind::InvalidRequest,
            "authentication_error" => ApiErrorKind::Authentication,
            "billing_error" => ApiErrorKind::Billing,
            "permission_error" => ApiErrorKind::Permission,
            "not_found_error" => ApiErrorKind::NotFound,
            "request_too_large" => ApiErrorKind::RequestTooLarge,
            "rate_limit_error" => ApiErrorKind::RateLimited,
            "overloaded_error" => ApiErrorKind::Overloaded,
            "api_error" | "timeout_error" => ApiErrorKind::Server,
            _ => return None,
        })
    }

    /// The kind for an `error` event that arrived inside a 200 stream.
    ///
    /// The request itself was accepted, so whatever the event says, sending it
    /// again may well succeed: types that would otherwise be final (say an
    /// `invalid_request_error` mid-stream) become [`ApiErrorKind::BrokenStream`].
    pub(crate) fn from_stream_error_type(error_type: &str) -> ApiErrorKind {
        match ApiErrorKind::from_error_type(error_type) {
            Some(
                kind
                @ (ApiErrorKind::Overloaded | ApiErrorKind::Server | ApiErrorKind::RateLimited),
            ) => kind,
            _ => ApiErrorKind::BrokenStream,
        }
    }
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
    /// The JSON body's `error.type`, when the body had one.
    pub error_type: Option<String>,
    /// The response's `content-type`, when there was a response (boxed:
    /// errors travel in `Result`s and should stay small).
    pub content_type: Option<Box<str>>,
    /// Which of the API's endpoints answered, when one did.
    pub endpoint: Option<Endpoint>,
}

/// The endpoints of the API this client calls, as an error names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `POST /v1/messages`.
    Messages,
    /// `POST /v1/messages/batches`: creating a batch.
    Batches,
    /// `/v1/messages/batches/{id}` and below: one batch (retrieve,
    /// cancel, results).
    Batch,
    /// `POST /v1/messages/count_tokens`: a token count (`--estimate`).
    CountTokens,
}

impl Endpoint {
    /// The path as people read it in a message.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Messages => "/v1/messages",
            Endpoint::Batches => "/v1/messages/batches",
            Endpoint::Batch => "/v1/messages/batches/{id}",
            Endpoint::CountTokens => "/v1/messages/count_tokens",
        }
    }
}

/// Longest message kept from a server body, in characters.
const MAX_MESSAGE_CHARS: usize = 300;

impl ApiError {
    /// An error with no HTTP details. The message is flattened to one line.
    pub fn new(kind: ApiErrorKind, message: impl AsRef<str>) -> ApiError {
        ApiError {
            kind,
            status: None,
            message: one_line_excerpt(message.as_ref(), MAX_MESSAGE_CHARS),
            request_id: None,
            retry_after: None,
            should_retry: None,
            error_type: None,
            content_type: None,
            endpoint: None,
        }
    }

    /// Say which endpoint answered (or was asked).
    pub(crate) fn at(mut self, endpoint: Endpoint) -> ApiError {
        self.endpoint = Some(endpoint);
        self
    }

    /// What came back, as a one-line message says it: `HTTP 200, text/html`
    /// (the status and the content type, as far as they are known).
    pub fn answer(&self) -> String {
        let status = self.status.map(|status| format!("HTTP {status}"));
        let content_type = self.content_type.as_deref().map(|t| {
            if t.is_empty() {
                "no content type".to_string()
            } else {
                one_line_excerpt(t, 80)
            }
        });
        match (status, content_type) {
            (Some(status), Some(content_type)) => format!("{status}, {content_type}"),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => "no HTTP answer".to_string(),
        }
    }

    /// Whether the body was the API's own JSON error
    /// (`{"type":"error","error":{"type":..}}` or a gateway's like it):
    /// an error status with anything else (an HTML page) came from
    /// something in front of, or instead of, the API.
    pub fn has_api_error_body(&self) -> bool {
        self.error_type.is_some()
    }

    /// Attach the `request-id` unless one is already known.
    pub(crate) fn with_request_id(mut self, request_id: Option<String>) -> ApiError {
        if self.request_id.is_none() {
            self.request_id = request_id;
        }
        self
    }

    /// True for a 404 `not_found_error`: with a well-formed endpoint this
    /// means the model is unknown or retired, and no later call can succeed.
    pub fn is_not_found(&self) -> bool {
        self.kind == ApiErrorKind::NotFound
    }

    /// True for a 404 whose body is the API's own `not_found_error`, which on
    /// `/v1/messages` names the model. Any other 404 (an HTML page, say) means
    /// the base URL points somewhere that is not the Messages API.
    pub(crate) fn is_unknown_model(&self) -> bool {
        self.is_not_found() && self.error_type.as_deref() == Some("not_found_error")
    }

    /// Build the error for a non-success HTTP response. `header` looks a
    /// response header up by lower-case name; `body` is what was read of the
    /// body (possibly nothing).
    pub(crate) fn from_http_response<'a>(
        status: u16,
        header: impl Fn(&str) -> Option<&'a str>,
        body: &[u8],
    ) -> ApiError {
        let parsed = parse_error_body(body);
        let kind = ApiErrorKind::from_status(status, parsed.error_type.as_deref());
        let message = match (&parsed.message, &parsed.error_type) {
            (Some(message), _) if !message.trim().is_empty() => message.clone(),
            (_, Some(error_type)) => error_type.clone(),
            _ => body_excerpt(body),
        };
        let request_id = header("request-id")
            .or_else(|| header("x-request-id"))
            .map(str::to_string)
            .or(parsed.request_id);
        ApiError {
            kind,
            status: Some(status),
            message: one_line_excerpt(&message, MAX_MESSAGE_CHARS),
            request_id: request_id.map(|id| one_line_excerpt(&id, 100)),
            retry_after: retry_after_from_headers(&header, SystemTime::now()),
            should_retry: should_retry_from_header(header("x-should-retry")),
            error_type: parsed.error_type.map(|t| one_line_excerpt(&t, 100)),
            content_type: header("content-type").map(|t| one_line_excerpt(t.trim(), 100).into()),
            endpoint: None,
        }
    }
}

impl ApiError {
    /// The error of a request that failed inside a batch (an `errored`
    /// result): the API's error body `{"type":"error","error":{..}}` with
    /// no HTTP status, its kind named by `error.type`. A type this client
    /// does not know counts as a server error (worth another try).
    pub(crate) fn from_error_body(body: &Value) -> ApiError {
        let parsed = parse_error_body(body.to_string().as_bytes());
        let kind = parsed
            .error_type
            .as_deref()
            .and_then(ApiErrorKind::from_error_type)
            .unwrap_or(ApiErrorKind::Server);
        let message = parsed
            .message
            .filter(|m| !m.trim().is_empty())
            .or_else(|| parsed.error_type.clone())
            .unwrap_or_else(|| "the request failed in the batch".to_string());
        ApiError {
            kind,
            status: None,
            message: one_line_excerpt(&message, MAX_MESSAGE_CHARS),
            request_id: parsed.request_id.map(|id| one_line_excerpt(&id, 100)),
            retry_after: None,
            should_retry: None,
            error_type: parsed.error_type.map(|t| one_line_excerpt(&t, 100)),
            content_type: None,
            endpoint: None,
        }
    }
}

impl std::fmt::Display for ApiError {
    /// `rate limited (HTTP 429): <message> (retry after 2s) [request-id: req_..]`;
    /// an answer that is not the API's names its content type too:
    /// `not a Messages API answer (HTTP 200, text/html): ...`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind.label())?;
        if self.kind == ApiErrorKind::UnexpectedAnswer {
            write!(f, " ({})", self.answer())?;
        } else if let Some(status) = self.status {
            write!(f, " (HTTP {status})")?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        if let Some(wait) = self.retry_after {
            write!(f, " (retry after {})", format_wait(wait))?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " [request-id: {id}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

/// A duration as people read it: `750ms`, `2s`, `1.5s`.
pub(crate) fn format_wait(wait: Duration) -> String {
    let ms = wait.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", wait.as_secs_f64())
    }
}

/// What could be read out of an error body.
#[derive(Debug, Default, PartialEq)]
struct ErrorBody {
    error_type: Option<String>,
    message: Option<String>,
    request_id: Option<String>,
}

/// Read `{"type":"error","error":{"type":..,"message":..},"request_id":..}`.
/// Bodies that are not that shape yield an empty [`ErrorBody`].
fn parse_error_body(body: &[u8]) -> ErrorBody {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return ErrorBody::default();
    };
    let error = value.get("error");
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    // A gateway may nest an object where the message belongs (LiteLLM:
    // `"message": {"error": "..."}`): its text is the message.
    let nested = |v: Option<&Value>| match v {
        Some(Value::Object(map)) => text(map.get("error"))
            .or_else(|| text(map.get("message")))
            .or_else(|| Some(Value::Object(map.clone()).to_string())),
        _ => None,
    };
    ErrorBody {
        // LiteLLM writes the absent type as the string "None".
        error_type: text(error.and_then(|e| e.get("type"))).filter(|t| t != "None"),
        // Some proxies put a plain string in `error`; FastAPI-based
        // gateways answer a route they lack with `{"detail": "Not Found"}`.
        message: text(error.and_then(|e| e.get("message")))
            .or_else(|| nested(error.and_then(|e| e.get("message"))))
            .or_else(|| text(error))
            .or_else(|| text(value.get("detail"))),
        request_id: text(value.get("request_id")),
    }
}

/// A short, printable excerpt of a body that is not the API's JSON: markup
/// tags are dropped so an HTML error page reads as its text.
fn body_excerpt(body: &[u8]) -> String {
    if body.is_empty() {
        return "empty response body".to_string();
    }
    format!("unexpected response body: {}", body_excerpt_of(body))
}

/// The text of `body` on one short line, as an error quotes it: markup
/// tags dropped (an HTML page reads as its title and text), control
/// characters made visible, cut to 120 characters.
pub(crate) fn body_excerpt_of(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let looks_like_markup = text.trim_start().starts_with('<');
    let text = if looks_like_markup {
        strip_tags(&text)
    } else {
        text.into_owned()
    };
    let excerpt = one_line_excerpt(&text, 120);
    if excerpt.is_empty() {
        "unreadable".to_string()
    } else {
        excerpt
    }
}

/// Remove `<...>` tags and the contents of `<style>`/`<script>` elements,
/// roughly: good enough to surface an error page's title and text.
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        out.push(' ');
        let after = &rest[open..];
        let lower_head: String = after
            .chars()
            .take(8)
            .collect::<String>()
            .to_ascii_lowercase();
        let skip_to = if lower_head.starts_with("<style") {
            find_ci(after, "</style>")
        } else if lower_head.starts_with("<script") {
            find_ci(after, "</script>")
        } else {
            None
        };
        let from = skip_to.unwrap_or(0);
        match after[from..].find('>') {
            Some(close) => rest = &after[from + close + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn find_ci(haystack: &str, needle: &str) -> Option<usize> {
    haystack.to_ascii_lowercase().find(needle)
}

/// Collapse whitespace to single spaces, make control characters visible and
/// cut to `max_chars` (with an ellipsis), so the text fits on one line.
pub(crate) fn one_line_excerpt(text: &str, max_chars: usize) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let escaped = crate::text::escape_control(&collapsed);
    let mut out: String = escaped.chars().take(max_chars).collect();
    if escaped.chars().nth(max_chars).is_some() {
        out.push('…');
    }
    out
}

/// The server's requested wait: `retry-after-ms` first, then `retry-after`
/// as seconds or as an HTTP-date (relative to `now`).
fn retry_after_from_headers<'a>(
    header: &impl Fn(&str) -> Option<&'a str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header("retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(at.timestamp()).ok()?);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

fn should_retry_from_header(value: Option<&str>) -> Option<bool> {
    match value?.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
