//! Reading an answer once its headers are in: a streamed reply fed to the
//! [`ResponseDecoder`] until it is complete, under the idle timeout (on
//! progress, not bytes), the attempt's deadline and a size cap; a plain
//! body (a whole message, or an error's) read up to a limit under the same
//! clocks; what is left of a body after `message_stop` drained so the
//! connection can be reused; and the verdict on a success status whose
//! body is not the Messages API's. Sending the request is
//! [`super::transport`]'s job.

use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio::time::Instant;

use super::error::{self, format_wait};
use super::stream::ResponseDecoder;
use super::{ApiError, ApiErrorKind, Client, Response};

/// A streamed reply larger than this is refused: at `max_tokens` 4096 a real
/// one is a few hundred kilobytes at most.
pub(super) const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How long to wait for the end of a body after `message_stop`.
const DRAIN_LIMIT: Duration = Duration::from_millis(250);

/// How much of an error body is read for its message.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// How much of a body that is not the API's is kept to quote in the error.
const QUOTED_BYTES: usize = 2048;

/// What came back with a success status, as an error about it names it.
#[derive(Debug, Clone)]
pub(super) struct Answered {
    pub status: u16,
    /// Lower case, trimmed; empty when there was none.
    pub content_type: String,
}

impl Answered {
    /// Whether the body was announced as an event stream.
    fn is_event_stream(&self) -> bool {
        self.content_type.starts_with("text/event-stream")
    }

    /// The error for a body that is not the Messages API's: `what` says
    /// how it failed, `body` holds its first bytes.
    pub(super) fn not_the_api(&self, what: &str, body: &[u8]) -> ApiError {
        let quoted = if body.is_empty() {
            "the body was empty".to_string()
        } else {
            format!("{what}: {}", error::body_excerpt_of(body))
        };
        let mut err = ApiError::new(ApiErrorKind::UnexpectedAnswer, quoted);
        err.status = Some(self.status);
        err.content_type = Some(self.content_type.as_str().into());
        err
    }
}

/// What the attempt was waiting for when its time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// Progress, within the idle timeout.
    Progress,
    /// The end, before the attempt's deadline.
    Deadline,
}

impl Client {
    /// Feed the body to the decoder until `message_stop` or the end of the
    /// body. The attempt is dead after the idle timeout without progress
    /// (see [`ResponseDecoder::push`]: keep-alives alone are not progress)
    /// or at `deadline`, whatever it was doing. A body that holds no event
    /// of the Messages API is [`ApiErrorKind::UnexpectedAnswer`].
    pub(super) async fn read_stream(
        &self,
        mut response: reqwest::Response,
        answered: &Answered,
        deadline: Instant,
    ) -> Result<Response, ApiError> {
        let idle = self.config.idle_timeout;
        let mut read = StreamRead::new();
        let outcome: Result<(), ApiError> = loop {
            let (until, waiting) = read.next_wait(idle, deadline);
            let chunk = match tokio::time::timeout_at(until, response.chunk()).await {
                Err(_) => {
                    let why = match waiting {
                        Waiting::Deadline => self.past_deadline(),
                        Waiting::Progress => read.stalled(idle),
                    };
                    break Err(ApiError::new(ApiErrorKind::Timeout, why));
                }
                Ok(Err(err)) => {
                    break Err(ApiError::new(
                        ApiErrorKind::BrokenStream,
                        format!("the connection broke mid-stream: {}", error_chain(&err)),
                    ));
                }
                Ok(Ok(None)) => break Ok(()),
                Ok(Ok(Some(chunk))) => chunk,
            };
            if let Err(err) = read.take(&chunk) {
                break Err(err);
            }
            if read.decoder.is_complete() {
                drain_briefly(response).await;
                break Ok(());
            }
        };
        read.verdict(outcome, answered)
    }

    /// A whole message sent as JSON (by a server that ignores `stream`):
    /// read under the same clocks as a stream's bytes, then decoded. JSON
    /// that is not a message (nor the API's error) is not the API's answer.
    pub(super) async fn read_message_json(
        &self,
        response: reqwest::Response,
        answered: &Answered,
        deadline: Instant,
    ) -> Result<Response, ApiError> {
        let body = read_body(response, self.config.idle_timeout, MAX_BODY_BYTES, deadline).await?;
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(&body) else {
            return Err(answered.not_the_api("a body that is not JSON", &body));
        };
        match value.get("type").and_then(serde_json::Value::as_str) {
            Some("message" | "error") => super::stream::response_from_message_json(&body),
            _ => Err(answered.not_the_api("JSON that is not a message", &body)),
        }
    }

    pub(super) async fn error_from_response(
        &self,
        response: reqwest::Response,
        deadline: Instant,
    ) -> ApiError {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        // A body that breaks off or stalls still tells us the status; one
        // that trickles gets the idle timeout in all, not byte by byte.
        let idle = self.config.idle_timeout;
        let body = read_body(
            response,
            idle,
            MAX_ERROR_BODY_BYTES,
            deadline.min(Instant::now() + idle),
        )
        .await
        .unwrap_or_default();
        ApiError::from_http_response(status, |name| header_str(&headers, name), &body)
    }

    /// Why an attempt that ran out of time failed.
    fn past_deadline(&self) -> String {
        format!(
            "the attempt passed its deadline of {} before the reply was complete",
            format_wait(self.config.attempt_deadline)
        )
    }
}

/// A streamed reply as it is read: the decoder, and what the idle timeout,
/// the size cap and an error about a body that is not the API's need.
struct StreamRead {
    decoder: ResponseDecoder,
    /// Bytes received in all.
    received: usize,
    /// Bytes received since the decoder last made progress.
    since_progress: usize,
    /// The body's first [`QUOTED_BYTES`], to quote.
    first_bytes: Vec<u8>,
    last_progress: Instant,
}

impl StreamRead {
    fn new() -> Self {
        StreamRead {
            decoder: ResponseDecoder::new(),
            received: 0,
            since_progress: 0,
            first_bytes: Vec::new(),
            last_progress: Instant::now(),
        }
    }

    /// When the wait for the next bytes ends, and what it is then waiting
    /// for: progress within `idle`, or the end before `deadline`.
    fn next_wait(&self, idle: Duration, deadline: Instant) -> (Instant, Waiting) {
        let stalls_at = self.last_progress + idle;
        if stalls_at < deadline {
            (stalls_at, Waiting::Progress)
        } else {
            (deadline, Waiting::Deadline)
        }
    }

    /// Why the stream is dead after `idle` without progress.
    fn stalled(&self, idle: Duration) -> String {
        stalled(&self.decoder, self.received, self.since_progress, idle)
    }

    /// Counts and decodes `chunk`; an error when the body passes
    /// [`MAX_BODY_BYTES`] or does not decode.
    fn take(&mut self, chunk: &[u8]) -> Result<(), ApiError> {
        self.received += chunk.len();
        self.since_progress += chunk.len();
        if self.first_bytes.len() < QUOTED_BYTES {
            let room = QUOTED_BYTES - self.first_bytes.len();
            self.first_bytes
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        if self.received > MAX_BODY_BYTES {
            return Err(ApiError::new(
                ApiErrorKind::BrokenStream,
                "the stream is larger than any reply could be",
            ));
        }
        if self.decoder.push(chunk)? {
            self.last_progress = Instant::now();
            self.since_progress = 0;
        }
        Ok(())
    }

    /// The reply, once reading ended with `outcome`; an error that came
    /// with nothing of the API's is about a body from something else.
    fn verdict(
        self,
        outcome: Result<(), ApiError>,
        answered: &Answered,
    ) -> Result<Response, ApiError> {
        let StreamRead {
            mut decoder,
            first_bytes,
            ..
        } = self;
        let result = outcome.and_then(|()| decoder.finish());
        match result {
            Err(err) if !decoder.is_recognized() => {
                // Nothing of the API's came: an answer from something else,
                // unless an event stream simply went quiet (that is a dead
                // endpoint, said by the timeout).
                let went_quiet = err.kind == ApiErrorKind::Timeout && answered.is_event_stream();
                if went_quiet {
                    Err(err)
                } else {
                    Err(answered.not_the_api("no event stream in the body", &first_bytes))
                }
            }
            other => other,
        }
    }
}

/// Why a stream that made no progress for `idle` is dead, in words that
/// tell a dead endpoint from a stuck reply.
fn stalled(decoder: &ResponseDecoder, received: usize, since: usize, idle: Duration) -> String {
    let idle = format_wait(idle);
    if decoder.has_started() {
        if since == 0 {
            format!("the stream stalled: no data for {idle}")
        } else {
            format!("the stream stalled: no progress for {idle}, only keep-alives")
        }
    } else if received == 0 {
        format!("the stream stalled: nothing came in the {idle} after the response headers")
    } else if decoder.is_recognized() {
        format!(
            "the stream stalled: keep-alives only, no message_start in the {idle} after the \
             response headers"
        )
    } else {
        format!(
            "the stream stalled: {received} bytes but no event of the Messages API in the {idle} \
             after the response headers"
        )
    }
}

/// After `message_stop` only the end of the body should remain. Reading it
/// lets the connection go back to the pool for the next request; a server
/// that keeps the body open is not waited for beyond [`DRAIN_LIMIT`].
async fn drain_briefly(mut response: reqwest::Response) {
    let drain = async {
        let mut extra = 0usize;
        while let Ok(Some(chunk)) = response.chunk().await {
            extra += chunk.len();
            if extra > MAX_ERROR_BODY_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_LIMIT, drain).await;
}

/// Read a body, up to `limit` bytes (the rest is left unread), with `idle`
/// as the longest silence and nothing read past `deadline`.
pub(super) async fn read_body(
    mut response: reqwest::Response,
    idle: Duration,
    limit: usize,
    deadline: Instant,
) -> Result<Vec<u8>, ApiError> {
    let mut body = Vec::new();
    loop {
        let stalls_at = Instant::now() + idle;
        let chunk = match tokio::time::timeout_at(stalls_at.min(deadline), response.chunk()).await {
            Err(_) if stalls_at < deadline => {
                return Err(ApiError::new(
                    ApiErrorKind::Timeout,
                    format!("the response body stalled for {}", format_wait(idle)),
                ));
            }
            Err(_) => {
                return Err(ApiError::new(
                    ApiErrorKind::Timeout,
                    "the response body did not end before the attempt's deadline",
                ));
            }
            Ok(Err(err)) => {
                return Err(ApiError::new(
                    ApiErrorKind::BrokenStream,
                    format!("the connection broke mid-body: {}", error_chain(&err)),
                ));
            }
            Ok(Ok(None)) => return Ok(body),
            Ok(Ok(Some(chunk))) => chunk,
        };
        let room = limit - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            return Ok(body);
        }
        body.extend_from_slice(&chunk);
    }
}

/// A header's value, when it is present and text.
pub(super) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// An error and its causes on one line, without repeating a cause that the
/// previous message already quotes.
pub(super) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = vec![err.to_string()];
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}
