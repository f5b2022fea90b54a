//! The Message Batches API: many Messages requests sent as one batch,
//! processed within a day at half the price.
//!
//! The facts relied on here are the batch pages' (creating, retrieving,
//! results, canceling, and the batch-processing guide, read 2026-11-23:
//! <https://docs.claude.com/en/api/creating-message-batches>,
//! <https://docs.anthropic.com/de/docs/build-with-claude/message-batches>):
//!
//! - `POST /v1/messages/batches` takes `{"requests": [{"custom_id", "params"}]}`
//!   where `params` is a Messages body without `stream`; a `custom_id` is 1
//!   to 64 characters of `[a-zA-Z0-9_-]` and unique within its batch; a
//!   batch holds 1 to 100,000 requests and at most 256 MB;
//! - `GET /v1/messages/batches/{id}` says how it is going:
//!   `processing_status` is `in_progress`, `canceling` or `ended`, and
//!   `request_counts` tallies `processing`, `succeeded`, `errored`,
//!   `canceled` and `expired`;
//! - once it has ended, `results_url` serves one JSON line per request, in
//!   any order (matched by `custom_id`), each `succeeded` (with the whole
//!   message), `errored` (with the API's error body), `canceled` or
//!   `expired` (a batch not done within 24 hours of its creation expires);
//! - `POST /v1/messages/batches/{id}/cancel` stops what has not started;
//!   requests already being processed may still complete.
//!
//! This module is the wire side only: it knows no pass, no cache and no
//! round. What to batch, when, and what a result means for a conversation
//! is the engine's ([`crate::ai::engine::batch`]).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::error::format_wait;
use super::{ApiError, ApiErrorKind, Client, Endpoint, read_body};

/// Wait before the first poll of a batch when `LUMINOS_BATCH_POLL_MS` is
/// unset: most batches take minutes, and a batch of one request seconds.
pub(crate) const FIRST_POLL: Duration = Duration::from_secs(5);
/// The longest wait between polls.
pub(crate) const MAX_POLL: Duration = Duration::from_secs(60);
/// Each wait between polls is this much longer than the one before.
pub(crate) const POLL_GROWTH: f64 = 1.5;

/// How often a batch is polled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchTiming {
    pub first_poll: Duration,
    pub max_poll: Duration,
}

impl Default for BatchTiming {
    fn default() -> Self {
        BatchTiming {
            first_poll: FIRST_POLL,
            max_poll: MAX_POLL,
        }
    }
}

impl BatchTiming {
    /// Polls starting after `first` (`LUMINOS_BATCH_POLL_MS`), growing to at
    /// most twelve times that, and never past [`MAX_POLL`] unless `first`
    /// already is.
    pub(crate) fn starting_at(first: Duration) -> BatchTiming {
        BatchTiming {
            first_poll: first,
            max_poll: (first * 12).min(MAX_POLL).max(first),
        }
    }

    /// The wait after a poll that waited `previous`.
    pub(crate) fn next_wait(&self, previous: Duration) -> Duration {
        previous
            .mul_f64(POLL_GROWTH)
            .min(self.max_poll)
            .max(self.first_poll)
    }
}

/// The most requests one batch may hold.
pub(crate) const MAX_REQUESTS: usize = 100_000;
/// The largest batch body, in bytes.
pub(crate) const MAX_BYTES: usize = 256 * 1024 * 1024;
/// The longest `custom_id`.
pub(crate) const MAX_CUSTOM_ID: usize = 64;

/// The largest batch object or cancel answer we read.
const MAX_BATCH_OBJECT_BYTES: usize = 1024 * 1024;
/// The longest result line we accept: a whole message, thinking included,
/// is far smaller.
const MAX_RESULT_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Whether `id` may be a `custom_id`: 1 to 64 of `[a-zA-Z0-9_-]`.
pub(crate) fn is_valid_custom_id(id: &str) -> bool {
    (1..=MAX_CUSTOM_ID).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// One request of a batch: its `custom_id` and its `params`, already
/// serialized (a Messages body without `stream`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchItem {
    pub custom_id: String,
    pub params: Arc<[u8]>,
}

impl BatchItem {
    /// The bytes this item adds to a batch body.
    fn encoded_len(&self) -> usize {
        // {"custom_id":"<id>","params":<params>}, and a comma.
        self.custom_id.len() + self.params.len() + 30
    }
}

/// The body of `POST /v1/messages/batches` for `items`.
pub(crate) fn create_body(items: &[BatchItem]) -> Vec<u8> {
    let size: usize = items.iter().map(BatchItem::encoded_len).sum();
    let mut body = Vec::with_capacity(size + 16);
    body.extend_from_slice(b"{\"requests\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(b"{\"custom_id\":");
        // Valid custom ids need no escaping; encoding keeps that a fact.
        body.extend_from_slice(Value::String(item.custom_id.clone()).to_string().as_bytes());
        body.extend_from_slice(b",\"params\":");
        body.extend_from_slice(&item.params);
        body.push(b'}');
    }
    body.extend_from_slice(b"]}");
    body
}

/// `items` cut into batches that each respect the API's limits: at most
/// `max_requests` requests and `max_bytes` of body. Order is kept. An item
/// larger than `max_bytes` on its own still goes, alone: the API says
/// whether it fits (a request over the Messages limit is `errored`).
pub(crate) fn split_for_limits(
    items: Vec<BatchItem>,
    max_requests: usize,
    max_bytes: usize,
) -> Vec<Vec<BatchItem>> {
    let mut batches: Vec<Vec<BatchItem>> = Vec::new();
    let mut current: Vec<BatchItem> = Vec::new();
    let mut bytes = 0;
    for item in items {
        let size = item.encoded_len();
        if !current.is_empty() && (current.len() >= max_requests || bytes + size > max_bytes) {
            batches.push(std::mem::take(&mut current));
            bytes = 0;
        }
        bytes += size;
        current.push(item);
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

/// Where a batch stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessingStatus {
    InProgress,
    Canceling,
    Ended,
    /// A status this client does not know yet: treated as still going.
    #[serde(other)]
    Unknown,
}

/// `request_counts` of a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct RequestCounts {
    #[serde(default)]
    pub processing: u64,
    #[serde(default)]
    pub succeeded: u64,
    #[serde(default)]
    pub errored: u64,
    #[serde(default)]
    pub canceled: u64,
    #[serde(default)]
    pub expired: u64,
}

/// A batch as the API describes it (the fields luminos reads).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct MessageBatch {
    pub id: String,
    pub processing_status: ProcessingStatus,
    #[serde(default)]
    pub request_counts: RequestCounts,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub expires_at: Option<String>,
    #[serde(default)]
    pub ended_at: Option<String>,
    #[serde(default)]
    pub results_url: Option<String>,
}

impl MessageBatch {
    /// Whether its results can be read.
    pub fn has_ended(&self) -> bool {
        self.processing_status == ProcessingStatus::Ended
    }

    /// How long it took, from its creation to its end, as the API dates
    /// them; `None` before it ended, or when a date does not read.
    pub(crate) fn processing_time(&self) -> Option<std::time::Duration> {
        let date = |at: &Option<String>| chrono::DateTime::parse_from_rfc3339(at.as_deref()?).ok();
        let (created, ended) = (date(&self.created_at)?, date(&self.ended_at)?);
        (ended - created).to_std().ok()
    }
}

/// What became of one request of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchOutcome {
    /// The whole message, as the Messages API would have answered it.
    Succeeded(Value),
    /// The API's error for this request.
    Errored(ApiError),
    /// The batch was canceled before this request was processed.
    Canceled,
    /// The batch expired (24 hours) before this request was processed.
    Expired,
}

/// One line of a batch's results.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultLine {
    pub custom_id: String,
    pub outcome: BatchOutcome,
}

/// The lines of a download of the results, each parsed and handed on
/// once whole, and how many there were.
struct ResultLines<'h, H> {
    handle: &'h mut H,
    lines: usize,
}

impl<H> ResultLines<'_, H> {
    /// Parse `line` and hand it on; a blank line is skipped.
    fn take<E>(&mut self, line: &[u8]) -> Result<(), ResultsError<E>>
    where
        H: FnMut(ResultLine) -> Result<(), E>,
    {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let parsed = parse_result_line(line).map_err(ResultsError::Api)?;
        self.lines += 1;
        (self.handle)(parsed).map_err(ResultsError::Handler)
    }

    /// Take every whole line of `pending`, leaving the partial last one;
    /// an error when that is already larger than any message could be.
    fn take_whole<E>(&mut self, pending: &mut Vec<u8>) -> Result<(), ResultsError<E>>
    where
        H: FnMut(ResultLine) -> Result<(), E>,
    {
        let mut start = 0;
        while let Some(end) = pending[start..].iter().position(|b| *b == b'\n') {
            self.take(&pending[start..start + end])?;
            start += end + 1;
        }
        pending.drain(..start);
        if pending.len() > MAX_RESULT_LINE_BYTES {
            return Err(ResultsError::Api(ApiError::new(
                ApiErrorKind::BrokenStream,
                "a batch result line is larger than any message could be",
            )));
        }
        Ok(())
    }
}

/// Read one results line.
pub(crate) fn parse_result_line(line: &[u8]) -> Result<ResultLine, ApiError> {
    let broken =
        |what: &str| ApiError::new(ApiErrorKind::BrokenStream, format!("batch results: {what}"));
    let value: Value = serde_json::from_slice(line).map_err(|_| broken("a line is not JSON"))?;
    let custom_id = value["custom_id"]
        .as_str()
        .filter(|id| is_valid_custom_id(id))
        .ok_or_else(|| broken("a line has no valid custom_id"))?
        .to_string();
    let result = &value["result"];
    let outcome = match result["type"].as_str() {
        Some("succeeded") if result["message"].is_object() => {
            BatchOutcome::Succeeded(result["message"].clone())
        }
        Some("errored") => BatchOutcome::Errored(ApiError::from_error_body(&result["error"])),
        Some("canceled") => BatchOutcome::Canceled,
        Some("expired") => BatchOutcome::Expired,
        _ => return Err(broken("a line has an unknown result")),
    };
    Ok(ResultLine { custom_id, outcome })
}

/// Why reading results stopped.
#[derive(Debug)]
pub enum ResultsError<E> {
    /// The API or the connection failed (after retries).
    Api(ApiError),
    /// The caller's handler failed on a line.
    Handler(E),
}

impl Client {
    /// `{base}/v1/messages/batches` followed by `tail`.
    fn batches_url(&self, tail: &str) -> Result<reqwest::Url, ApiError> {
        let url = format!(
            "{}/v1/messages/batches{tail}",
            self.config.base_url.trim_end_matches('/')
        );
        reqwest::Url::parse(&url).map_err(|err| {
            ApiError::new(
                ApiErrorKind::Connection,
                format!("invalid API base URL '{}': {err}", self.config.base_url),
            )
        })
    }

    /// Create a batch of `items` (within the limits; see
    /// [`split_for_limits`]), retrying per the retry policy.
    pub async fn create_batch(&self, items: &[BatchItem]) -> Result<MessageBatch, ApiError> {
        let url = self.batches_url("")?;
        let body = create_body(items);
        self.with_retries(|| self.batch_object(url.clone(), Some(body.clone()), Endpoint::Batches))
            .await
    }

    /// The batch `id` as it stands now.
    pub async fn retrieve_batch(&self, id: &str) -> Result<MessageBatch, ApiError> {
        let url = self.batches_url(&format!("/{}", path_segment(id)?))?;
        self.with_retries(|| self.batch_object(url.clone(), None, Endpoint::Batch))
            .await
    }

    /// Ask the API to cancel batch `id`; returns it as it stands after.
    pub async fn cancel_batch(&self, id: &str) -> Result<MessageBatch, ApiError> {
        let url = self.batches_url(&format!("/{}/cancel", path_segment(id)?))?;
        self.with_retries(|| self.batch_object(url.clone(), Some(Vec::new()), Endpoint::Batch))
            .await
    }

    /// Read the results of an ended `batch`, handing each line to
    /// `handle` as it arrives; returns how many lines there were. A
    /// download that breaks off is started again (under the retry
    /// policy), so `handle` may see a line twice and must not mind.
    ///
    /// The results come from the batch's `results_url` when it is on the
    /// same origin as the base URL (the credential goes nowhere else), and
    /// from the documented path otherwise.
    pub async fn batch_results<E>(
        &self,
        batch: &MessageBatch,
        mut handle: impl FnMut(ResultLine) -> Result<(), E>,
    ) -> Result<usize, ResultsError<E>> {
        let url = self.results_url(batch).map_err(ResultsError::Api)?;
        let mut rng = fastrand::Rng::new();
        let mut retry = 0;
        let mut waited = std::time::Duration::ZERO;
        loop {
            let error = match self.read_results(url.clone(), &mut handle).await {
                Ok(lines) => {
                    self.endpoint
                        .succeeded
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    return Ok(lines);
                }
                Err(ResultsError::Handler(err)) => return Err(ResultsError::Handler(err)),
                Err(ResultsError::Api(error)) => error,
            };
            retry += 1;
            let seen = self.seen();
            match self
                .policy
                .decide_after(&error, retry, seen, waited, &mut rng)
            {
                super::RetryDecision::GiveUp => return Err(ResultsError::Api(error)),
                super::RetryDecision::Retry { wait } => {
                    if let Some(observer) = &self.observer {
                        observer(&super::RetryNotice {
                            max_retries: self.policy.allowed_retries(&error, seen),
                            error,
                            attempt: retry,
                            wait,
                        });
                    }
                    tokio::time::sleep(wait).await;
                    waited += wait;
                }
            }
        }
    }

    fn results_url(&self, batch: &MessageBatch) -> Result<reqwest::Url, ApiError> {
        let documented = self.batches_url(&format!("/{}/results", path_segment(&batch.id)?))?;
        let given = batch
            .results_url
            .as_deref()
            .and_then(|url| reqwest::Url::parse(url).ok())
            .filter(|url| url.origin() == documented.origin());
        Ok(given.unwrap_or(documented))
    }

    /// One download of the results, line by line, within one attempt's
    /// deadline.
    async fn read_results<E>(
        &self,
        url: reqwest::Url,
        handle: &mut impl FnMut(ResultLine) -> Result<(), E>,
    ) -> Result<usize, ResultsError<E>> {
        let idle = self.config.idle_timeout;
        let deadline = self.deadline();
        let mut response = self
            .exchange(url, None, Endpoint::Batch, deadline)
            .await
            .map_err(ResultsError::Api)?;
        let mut pending: Vec<u8> = Vec::new();
        let mut lines = ResultLines { handle, lines: 0 };
        loop {
            let stalls_at = tokio::time::Instant::now() + idle;
            let until = stalls_at.min(deadline);
            let chunk = match tokio::time::timeout_at(until, response.chunk()).await {
                Err(_) => {
                    return Err(ResultsError::Api(
                        self.results_timed_out(stalls_at < deadline),
                    ));
                }
                Ok(Err(err)) => {
                    return Err(ResultsError::Api(ApiError::new(
                        ApiErrorKind::BrokenStream,
                        format!("the connection broke mid-results: {err}"),
                    )));
                }
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            pending.extend_from_slice(&chunk);
            lines.take_whole(&mut pending)?;
        }
        lines.take(&pending)?;
        Ok(lines.lines)
    }

    /// Why a download of the results ran out of time: it `stalled` for the
    /// idle timeout, or else passed the attempt's deadline.
    fn results_timed_out(&self, stalled: bool) -> ApiError {
        let why = if stalled {
            format!(
                "the batch results stalled for {}",
                format_wait(self.config.idle_timeout)
            )
        } else {
            format!(
                "the batch results were not all read within {}",
                format_wait(self.config.attempt_deadline)
            )
        };
        ApiError::new(ApiErrorKind::Timeout, why).at(Endpoint::Batch)
    }

    /// One exchange at `endpoint` that answers with a batch object.
    async fn batch_object(
        &self,
        url: reqwest::Url,
        body: Option<Vec<u8>>,
        endpoint: Endpoint,
    ) -> Result<MessageBatch, ApiError> {
        let deadline = self.deadline();
        let response = self.exchange(url, body, endpoint, deadline).await?;
        let body = read_body(
            response,
            self.config.idle_timeout,
            MAX_BATCH_OBJECT_BYTES,
            deadline,
        )
        .await
        .map_err(|err| err.at(endpoint))?;
        serde_json::from_slice(&body).map_err(|err| {
            ApiError::new(
                ApiErrorKind::BrokenStream,
                format!("unreadable batch object: {err}"),
            )
            .at(endpoint)
        })
    }
}

/// A batch id as it goes into a URL path: ids are `msgbatch_...`, so
/// anything else (a slash, a dot) is refused rather than sent.
fn path_segment(id: &str) -> Result<&str, ApiError> {
    let plain = id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if (1..=128).contains(&id.len()) && plain {
        Ok(id)
    } else {
        Err(ApiError::new(
            ApiErrorKind::InvalidRequest,
            format!("'{}' is not a batch id", crate::text::escape_line(id)),
        ))
    }
}

#[cfg(test)]
mod tests;
