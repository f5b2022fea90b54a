//! Reading an answer once its headers are in: a streamed reply fed to the
//! [`ResponseDecoder`] under the idle timeout and a size cap, a plain body
//! (a whole message, or an error's) read up to a limit, and what is left
//! of a body after `message_stop` drained so the connection can be reused.
//! Sending the request is [`super::transport`]'s job.

use std::time::Duration;

use reqwest::header::HeaderMap;

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

impl Client {
    /// Feed the body to the decoder until `message_stop`, the end of the
    /// body, or more than `idle_timeout` of silence.
    pub(super) async fn read_stream(
        &self,
        mut response: reqwest::Response,
    ) -> Result<Response, ApiError> {
        let idle = self.config.idle_timeout;
        let mut decoder = ResponseDecoder::new();
        let mut received = 0usize;
        loop {
            match next_chunk(&mut response, idle, Reading::Stream).await? {
                None => break,
                Some(chunk) => {
                    received += chunk.len();
                    if received > MAX_BODY_BYTES {
                        return Err(ApiError::new(
                            ApiErrorKind::BrokenStream,
                            "the stream is larger than any reply could be",
                        ));
                    }
                    decoder.push(&chunk)?;
                    if decoder.is_complete() {
                        drain_briefly(response).await;
                        break;
                    }
                }
            }
        }
        decoder.finish()
    }

    pub(super) async fn error_from_response(&self, response: reqwest::Response) -> ApiError {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        // A body that breaks off or stalls still tells us the status.
        let body = read_body(response, self.config.idle_timeout, MAX_ERROR_BODY_BYTES)
            .await
            .unwrap_or_default();
        ApiError::from_http_response(status, |name| header_str(&headers, name), &body)
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

/// A stream that made no sense is easier to diagnose when the error says the
/// body was not an event stream at all (say, a proxy's HTML page sent with
/// status 200).
pub(super) fn note_content_type(mut err: ApiError, content_type: &str) -> ApiError {
    if err.kind == ApiErrorKind::BrokenStream && !content_type.starts_with("text/event-stream") {
        let shown = if content_type.is_empty() {
            "no content-type"
        } else {
            content_type
        };
        err.message = error::one_line_excerpt(
            &format!(
                "{} (the response was {shown}, not an event stream)",
                err.message
            ),
            300,
        );
    }
    err
}

/// What is being read, as the errors say where it stopped.
#[derive(Debug, Clone, Copy)]
enum Reading {
    /// A streamed reply.
    Stream,
    /// A plain body (an error's).
    Body,
}

/// The next chunk of `response`, `None` at its end; an error after more
/// than `idle` of silence or when the connection breaks.
async fn next_chunk(
    response: &mut reqwest::Response,
    idle: Duration,
    reading: Reading,
) -> Result<Option<impl std::ops::Deref<Target = [u8]> + use<>>, ApiError> {
    match tokio::time::timeout(idle, response.chunk()).await {
        Err(_) => {
            let waited = format_wait(idle);
            Err(ApiError::new(
                ApiErrorKind::Timeout,
                match reading {
                    Reading::Stream => format!("the stream stalled: no data for {waited}"),
                    Reading::Body => format!("the response body stalled for {waited}"),
                },
            ))
        }
        Ok(Err(err)) => {
            let part = match reading {
                Reading::Stream => "stream",
                Reading::Body => "body",
            };
            Err(ApiError::new(
                ApiErrorKind::BrokenStream,
                format!("the connection broke mid-{part}: {}", error_chain(&err)),
            ))
        }
        Ok(Ok(chunk)) => Ok(chunk),
    }
}

/// Read a body, up to `limit` bytes (the rest is left unread), with `idle`
/// as the longest silence.
pub(super) async fn read_body(
    mut response: reqwest::Response,
    idle: Duration,
    limit: usize,
) -> Result<Vec<u8>, ApiError> {
    let mut body = Vec::new();
    loop {
        match next_chunk(&mut response, idle, Reading::Body).await? {
            None => return Ok(body),
            Some(chunk) => {
                let room = limit - body.len();
                if chunk.len() >= room {
                    body.extend_from_slice(&chunk[..room]);
                    return Ok(body);
                }
                body.extend_from_slice(&chunk);
            }
        }
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
