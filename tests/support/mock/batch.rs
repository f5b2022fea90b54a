//! The mock's Message Batches API, following the documented shapes (the
//! batch pages listed as [BATCH] in /work/notes/api-facts.md §11, read
//! 2026-11-23):
//!
//! - `POST /v1/messages/batches` takes `{"requests": [{"custom_id",
//!   "params"}]}`: 1 to 100,000 requests (or [`Batches::max_requests`]),
//!   at most 256 MB of body (or [`Batches::max_bytes`]), each `custom_id`
//!   1 to 64 of `[a-zA-Z0-9_-]` and unique in the batch, each `params` an
//!   object. A batch that breaks these is refused with a 400 and recorded
//!   as a violation (the client's bug). The `params` themselves are
//!   checked when each request is processed, as the guide says the API
//!   does (asynchronously): by the same rules as `/v1/messages`, thinking
//!   round-trips included, except that `stream` must not be set; a request
//!   that breaks them comes back `errored` with an `invalid_request_error`
//!   (and a violation is recorded, as for `/v1/messages`).
//! - `GET /v1/messages/batches/{id}` answers the batch object:
//!   `processing_status` (`in_progress`, `canceling`, `ended`),
//!   `request_counts`, times, and `results_url` once it has ended.
//! - `GET .../{id}/results` answers one JSON line per request, in a
//!   shuffled order (the API promises no order), once the batch has ended.
//! - `POST .../{id}/cancel` stops what was not processed yet: those
//!   requests come back `canceled`.
//!
//! **Processing.** A batch ends [`Batches::delay`] after its creation
//! (unless [`Batches::held_from`] holds it):
//! each request is then processed like a `/v1/messages` request (recorded
//! in [`super::MockServer::requests`] with its [`BatchRef`], answered by
//! the queue or the responder, its usage from the prompt-cache
//! simulation). The requests [`Batches::at_once`] picks (its first few,
//! or the ones a test names) are processed as soon as the batch is seen
//! after creation, so a cancel or an expiry can find some requests done
//! and the rest not. The API promises no order of processing, so which
//! ones those are is the test's to choose. A batch made to expire
//! ([`super::MockServer::expire_batches`]) ends at its delay with every
//! request not processed yet `expired`. Scripted replies map onto results:
//! a message is `succeeded`, an HTTP error (or an `error` event) is
//! `errored` with that error, and [`super::Reply::silent`] is a request the
//! API never got to: `expired`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Reply;
use super::reply::{ReplyBody, StreamFault};
use super::serve::{Prepared, http, render_message};
use super::wire::HttpRequest;
use super::{RecordedRequest, State, protocol};

/// Where the batch endpoints live.
pub const BATCHES_PATH: &str = "/v1/messages/batches";

/// Which batch request a processed request was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchRef {
    pub batch_id: String,
    pub custom_id: String,
}

/// One call to a batch endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchCall {
    pub method: String,
    pub path: String,
}

/// A batch as the mock holds it, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchInfo {
    pub id: String,
    /// Its requests' `custom_id`s, in request order.
    pub custom_ids: Vec<String>,
    pub canceled: bool,
    pub expires: bool,
    pub ended: bool,
}

/// Which requests of a batch are processed as soon as it is seen.
#[derive(Clone, Default)]
pub enum AtOnce {
    /// None: every request waits for the delay.
    #[default]
    None,
    /// The first this many, in request order (which is the order the
    /// client happened to put them in).
    First(usize),
    /// The ones whose `params` this says yes to, wherever they are: a test
    /// that must not depend on the client's order names them. Called with
    /// the mock's state locked, so it must only look at the params.
    Matching(Arc<dyn Fn(&Value) -> bool + Send + Sync>),
}

impl AtOnce {
    /// Whether request `k` (with `params`) of a batch is processed at once.
    fn takes(&self, k: usize, params: &Value) -> bool {
        match self {
            AtOnce::None => false,
            AtOnce::First(n) => k < *n,
            AtOnce::Matching(wanted) => wanted(params),
        }
    }
}

/// The batch side of the mock's state.
pub struct Batches {
    /// From creation to the end of processing.
    pub delay: Duration,
    /// How long a batch takes on the prompt cache's clock: its requests
    /// that wait for the delay are processed this long after its creation
    /// on that clock (the clock is moved on to then), whatever the wall
    /// clock says. `None`: the clock runs as it does.
    pub round_time: Option<Duration>,
    pub max_requests: usize,
    pub max_bytes: usize,
    /// Requests of each batch processed as soon as it is seen.
    pub at_once: AtOnce,
    /// The batches (by creation order, 0-based) that expire at their
    /// delay.
    pub expiring: std::collections::HashSet<usize>,
    /// Batches created this many-th (0-based) and later stay in progress
    /// (but for [`Batches::at_once`]), whatever [`Batches::delay`] says.
    pub held_from: Option<usize>,
    /// Serve no Message Batches API: every batch path is a 404, as a
    /// gateway that routes only `/v1/messages` answers.
    pub missing: bool,
    batches: Vec<MockBatch>,
    calls: Vec<BatchCall>,
}

impl Default for Batches {
    fn default() -> Self {
        Batches {
            delay: Duration::ZERO,
            round_time: None,
            max_requests: 100_000,
            max_bytes: 256 * 1024 * 1024,
            at_once: AtOnce::None,
            expiring: std::collections::HashSet::new(),
            held_from: None,
            missing: false,
            batches: Vec::new(),
            calls: Vec::new(),
        }
    }
}

impl Batches {
    pub fn info(&self) -> Vec<BatchInfo> {
        self.batches
            .iter()
            .map(|b| BatchInfo {
                id: b.id.clone(),
                custom_ids: b.requests.iter().map(|(id, _)| id.clone()).collect(),
                canceled: b.cancel_at.is_some(),
                expires: b.expires,
                ended: b.ended(),
            })
            .collect()
    }

    pub fn calls(&self) -> Vec<BatchCall> {
        self.calls.clone()
    }
}

struct MockBatch {
    id: String,
    created: Instant,
    /// The prompt cache's clock when it was created.
    created_on_cache_clock: Duration,
    created_at: chrono::DateTime<chrono::Utc>,
    requests: Vec<(String, Value)>,
    /// Each request's result object, once it has one.
    results: Vec<Option<Value>>,
    /// Requests handed to processing (so no two callers process one).
    taken: Vec<bool>,
    cancel_at: Option<chrono::DateTime<chrono::Utc>>,
    expires: bool,
    ended_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl MockBatch {
    fn ended(&self) -> bool {
        self.ended_at.is_some()
    }
}

/// Answer a request to a batch endpoint.
pub(super) fn handle(state: &State, request: HttpRequest) -> (Prepared, Duration) {
    let path = request.path.split('?').next().unwrap_or("").to_string();
    let mut problems = Vec::new();
    protocol::check_headers(
        &|name: &str| request.header(name).map(str::to_string),
        &mut problems,
    );
    let (latency, missing) = {
        let mut inner = state.lock();
        inner.batches.calls.push(BatchCall {
            method: request.method.clone(),
            path: path.clone(),
        });
        (inner.latency, inner.batches.missing)
    };
    if missing {
        // A FastAPI-style gateway's own 404 for a route it does not have.
        let not_found = Prepared::Http {
            status: 404,
            content_type: "application/json".into(),
            body: br#"{"detail":"Not Found"}"#.to_vec(),
            headers: Vec::new(),
        };
        return (not_found, latency);
    }
    let request_id = ("request-id".to_string(), "req_mock_batch".to_string());
    if !problems.is_empty() {
        return (*refuse(state, &problems.join("; "), request_id), latency);
    }
    let rest = path.strip_prefix(BATCHES_PATH).unwrap_or("");
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    let answer = match (request.method.as_str(), parts.as_slice()) {
        ("POST", []) => create(state, &request.body),
        ("GET", [id]) => with_batch(state, id, |state, i| Ok(Answer::Json(object(state, i)))),
        ("GET", [id, "results"]) => with_batch(state, id, results),
        ("POST", [id, "cancel"]) => with_batch(state, id, cancel),
        _ => Err(refuse(
            state,
            &format!("unexpected {} {path}", request.method),
            request_id.clone(),
        )),
    };
    let prepared = match answer {
        Ok(Answer::Json(value)) => Prepared::Http {
            status: 200,
            content_type: "application/json".into(),
            body: value.to_string().into_bytes(),
            headers: vec![request_id],
        },
        Ok(Answer::Lines(body)) => Prepared::Http {
            status: 200,
            content_type: "application/binary".into(),
            body,
            headers: vec![request_id],
        },
        Err(prepared) => *prepared,
    };
    (prepared, latency)
}

enum Answer {
    Json(Value),
    Lines(Vec<u8>),
}

/// A 400 for a client bug, recorded as a violation.
fn refuse(state: &State, problem: &str, request_id: (String, String)) -> Box<Prepared> {
    state
        .lock()
        .violations
        .push(format!("batch endpoint: {problem}"));
    Box::new(http(
        Reply::error(400, "invalid_request_error", &format!("mock: {problem}")),
        request_id,
    ))
}

fn create(state: &State, body: &[u8]) -> Result<Answer, Box<Prepared>> {
    let request_id = ("request-id".to_string(), "req_mock_batch".to_string());
    let (max_requests, max_bytes) = {
        let inner = state.lock();
        (inner.batches.max_requests, inner.batches.max_bytes)
    };
    if body.len() > max_bytes {
        // Too large is a 413, as for the Messages API; a client that splits
        // at the documented limit never sees it.
        state.lock().violations.push(format!(
            "batch endpoint: a batch of {} bytes is over the {max_bytes}-byte limit",
            body.len()
        ));
        return Err(Box::new(http(
            Reply::error(413, "request_too_large", "Request exceeds the maximum size"),
            request_id,
        )));
    }
    let parsed: Value = serde_json::from_slice(body)
        .map_err(|_| refuse(state, "the batch body is not JSON", request_id.clone()))?;
    let Some(requests) = parsed["requests"].as_array() else {
        return Err(refuse(state, "requests must be an array", request_id));
    };
    if requests.is_empty() || requests.len() > max_requests {
        return Err(refuse(
            state,
            &format!(
                "a batch holds 1 to {max_requests} requests, not {}",
                requests.len()
            ),
            request_id,
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut items = Vec::with_capacity(requests.len());
    for (i, item) in requests.iter().enumerate() {
        let id = item["custom_id"].as_str().unwrap_or("");
        let valid = (1..=64).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Err(refuse(
                state,
                &format!("requests.{i}.custom_id {id:?} does not match ^[a-zA-Z0-9_-]{{1,64}}$"),
                request_id,
            ));
        }
        if !seen.insert(id.to_string()) {
            return Err(refuse(
                state,
                &format!("requests.{i}.custom_id {id:?} is used twice in the batch"),
                request_id,
            ));
        }
        if !item["params"].is_object() {
            return Err(refuse(
                state,
                &format!("requests.{i}.params must be an object"),
                request_id,
            ));
        }
        items.push((id.to_string(), item["params"].clone()));
    }
    let mut inner = state.lock();
    let n = inner.batches.batches.len();
    let expires = inner.batches.expiring.contains(&n);
    let count = items.len();
    let created_on_cache_clock = inner.cache.clock.now();
    inner.batches.batches.push(MockBatch {
        id: format!("msgbatch_mock{n:04}"),
        created: Instant::now(),
        created_on_cache_clock,
        created_at: chrono::Utc::now(),
        requests: items,
        results: vec![None; count],
        taken: vec![false; count],
        cancel_at: None,
        expires,
        ended_at: None,
    });
    drop(inner);
    Ok(Answer::Json(object(state, n)))
}

/// Run `then` on the batch named `id`, after processing what is due; an
/// unknown id is the API's 404.
fn with_batch(
    state: &State,
    id: &str,
    then: impl FnOnce(&State, usize) -> Result<Answer, Box<Prepared>>,
) -> Result<Answer, Box<Prepared>> {
    let found = state.lock().batches.batches.iter().position(|b| b.id == id);
    let Some(i) = found else {
        return Err(Box::new(http(
            Reply::error(404, "not_found_error", &format!("batch {id} not found")),
            ("request-id".to_string(), "req_mock_batch".to_string()),
        )));
    };
    advance(state, i);
    then(state, i)
}

/// Process what is due in batch `i`, and end it when it is done.
fn advance(state: &State, i: usize) {
    let due: Vec<(usize, String, String, Value)> = {
        let mut inner = state.lock();
        let at_once = inner.batches.at_once.clone();
        let delay = inner.batches.delay;
        let held = inner.batches.held_from.is_some_and(|from| i >= from);
        let round_time = inner.batches.round_time;
        let batch = &mut inner.batches.batches[i];
        let deadline = !held && batch.created.elapsed() >= delay;
        let stopped = batch.cancel_at.is_some() || batch.expires;
        let processed_at = batch.created_on_cache_clock + round_time.unwrap_or_default();
        let soon: Vec<bool> = (batch.requests.iter().enumerate())
            .map(|(k, (_, params))| at_once.takes(k, params))
            .collect();
        let waiting = (deadline && !stopped)
            && (batch.taken.iter().zip(&soon)).any(|(taken, soon)| !taken && !soon);
        let mut due = Vec::new();
        for (k, soon) in soon.into_iter().enumerate() {
            let now = soon || (deadline && !stopped);
            if now && !batch.taken[k] {
                batch.taken[k] = true;
                let (custom_id, params) = &batch.requests[k];
                due.push((k, batch.id.clone(), custom_id.clone(), params.clone()));
            }
        }
        // The requests that waited for the delay are processed when the
        // batch's round time is up on the cache's clock.
        if waiting && round_time.is_some() {
            inner.cache.clock.advance_to(processed_at);
        }
        due
    };
    for (k, batch_id, custom_id, params) in due {
        let result = process(state, &batch_id, &custom_id, &params);
        state.lock().batches.batches[i].results[k] = Some(result);
    }
    let mut inner = state.lock();
    let delay = inner.batches.delay;
    let round_time = inner.batches.round_time;
    let held = inner.batches.held_from.is_some_and(|from| i >= from);
    let batch = &mut inner.batches.batches[i];
    if batch.ended()
        || batch
            .taken
            .iter()
            .zip(&batch.results)
            .any(|(t, r)| *t && r.is_none())
    {
        return;
    }
    let rest = if batch.cancel_at.is_some() {
        Some("canceled")
    } else if batch.expires && !held && batch.created.elapsed() >= delay {
        Some("expired")
    } else {
        None
    };
    if let Some(kind) = rest {
        for result in batch.results.iter_mut().filter(|r| r.is_none()) {
            *result = Some(json!({"type": kind}));
        }
    }
    if batch.results.iter().all(Option::is_some) {
        // A batch that takes its round time on the prompt cache's clock
        // is dated as the API would date one that took that long.
        let took = batch.created.elapsed().max(round_time.unwrap_or_default());
        batch.ended_at =
            Some(batch.created_at + chrono::Duration::from_std(took).unwrap_or_default());
    }
}

/// Process one request of a batch like a `/v1/messages` request, and say
/// how it came out (the `result` object of its results line).
fn process(state: &State, batch_id: &str, custom_id: &str, params: &Value) -> Value {
    let problems = protocol::check_batch_params(params);
    let mut inner = state.lock();
    let index = inner.requests.len();
    let recorded = RecordedRequest {
        index,
        path: BATCHES_PATH.to_string(),
        headers: Vec::new(),
        body: params.clone(),
        reported_usage: None,
        reported_cache_1h: 0,
        batch: Some(BatchRef {
            batch_id: batch_id.to_string(),
            custom_id: custom_id.to_string(),
        }),
    };
    inner.requests.push(recorded.clone());
    state.arrived.notify_all();
    if !problems.is_empty() {
        for problem in &problems {
            inner
                .violations
                .push(format!("request #{index} ({custom_id}): {problem}"));
        }
        return errored(
            "invalid_request_error",
            &format!("mock: {}", problems.join("; ")),
        );
    }
    let accepted = match inner.conversations.check(params) {
        Ok(accepted) => accepted,
        Err(rejection) => {
            if rejection.violation {
                inner.violations.push(format!(
                    "request #{index} ({custom_id}): {}",
                    rejection.message
                ));
            }
            return errored("invalid_request_error", &rejection.message);
        }
    };
    let queued = inner.queue.pop_front();
    let responder = inner.responder.clone();
    drop(inner);
    // The responder runs without the lock, as for `/v1/messages`.
    let Some(reply) = queued.or_else(|| responder.map(|r| r(&recorded))) else {
        state
            .lock()
            .violations
            .push(format!("request #{index} ({custom_id}): no reply scripted"));
        return errored("api_error", "mock: no reply scripted for this request");
    };
    let mut stream = match reply.body {
        ReplyBody::Http { body, .. } => {
            let error: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let kind = error["error"]["type"].as_str().unwrap_or("api_error");
            let message = error["error"]["message"].as_str().unwrap_or("mock error");
            return errored(kind, message);
        }
        ReplyBody::Silent => return json!({"type": "expired"}),
        ReplyBody::Stream(stream) => stream,
    };
    if let Some(StreamFault::ErrorEvent {
        error_type,
        message,
    }) = &stream.fault
    {
        return errored(error_type, message);
    }
    let (rendered, _) = render_message(state, &mut stream, params, accepted, index);
    let (usage, written_1h) = {
        let inner = state.lock();
        let recorded = &inner.requests[index];
        (
            recorded.reported_usage.unwrap_or_default(),
            recorded.reported_cache_1h,
        )
    };
    let mut message = json!({
        "id": format!("msg_mock_{index:04}"),
        "type": "message",
        "role": "assistant",
        "model": params["model"].as_str().unwrap_or("claude-mock"),
        "content": rendered.content,
        "stop_reason": rendered.stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cache_creation": super::wire::cache_creation(&usage, written_1h),
            "output_tokens": usage.output_tokens,
            "service_tier": "batch",
        },
    });
    if let Some(details) = &stream.stop_details {
        message["stop_details"] = details.clone();
    }
    json!({"type": "succeeded", "message": message})
}

fn errored(kind: &str, message: &str) -> Value {
    json!({"type": "errored", "error": {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_mock_batch_item",
    }})
}

/// The batch object the API answers for batch `i`.
fn object(state: &State, i: usize) -> Value {
    let inner = state.lock();
    let batch = &inner.batches.batches[i];
    let count = |kind: &str| {
        batch
            .results
            .iter()
            .filter(|r| r.as_ref().is_some_and(|r| r["type"] == kind))
            .count()
    };
    let status = if batch.ended() {
        "ended"
    } else if batch.cancel_at.is_some() {
        "canceling"
    } else {
        "in_progress"
    };
    let time = |t: Option<chrono::DateTime<chrono::Utc>>| match t {
        Some(t) => json!(t.to_rfc3339()),
        None => Value::Null,
    };
    let results_url = batch
        .ended()
        .then(|| format!("http://{}{BATCHES_PATH}/{}/results", state.addr, batch.id));
    json!({
        "id": batch.id,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": {
            "processing": batch.results.iter().filter(|r| r.is_none()).count(),
            "succeeded": count("succeeded"),
            "errored": count("errored"),
            "canceled": count("canceled"),
            "expired": count("expired"),
        },
        "created_at": batch.created_at.to_rfc3339(),
        "expires_at": (batch.created_at + chrono::Duration::hours(24)).to_rfc3339(),
        "ended_at": time(batch.ended_at),
        "cancel_initiated_at": time(batch.cancel_at),
        "archived_at": null,
        "results_url": results_url,
    })
}

/// The results of batch `i`, shuffled, once it has ended.
fn results(state: &State, i: usize) -> Result<Answer, Box<Prepared>> {
    let inner = state.lock();
    let batch = &inner.batches.batches[i];
    if !batch.ended() {
        let id = batch.id.clone();
        drop(inner);
        return Err(refuse(
            state,
            &format!("results of {id} were asked for before it ended"),
            ("request-id".to_string(), "req_mock_batch".to_string()),
        ));
    }
    let mut lines: Vec<String> = batch
        .requests
        .iter()
        .zip(&batch.results)
        .map(|((custom_id, _), result)| {
            json!({"custom_id": custom_id, "result": result}).to_string()
        })
        .collect();
    fastrand::Rng::with_seed(inner.seed.wrapping_add(i as u64)).shuffle(&mut lines);
    let mut body = lines.join("\n").into_bytes();
    body.push(b'\n');
    Ok(Answer::Lines(body))
}

fn cancel(state: &State, i: usize) -> Result<Answer, Box<Prepared>> {
    {
        let mut inner = state.lock();
        let batch = &mut inner.batches.batches[i];
        if batch.cancel_at.is_none() && !batch.ended() {
            batch.cancel_at = Some(chrono::Utc::now());
        }
    }
    // Answered as `canceling`; the next look finds it ended.
    let answer = object(state, i);
    Ok(Answer::Json(answer))
}
