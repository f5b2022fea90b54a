//! A scripted mock of the Anthropic Messages API, for tests and benchmarks.
//!
//! [`MockServer::start`] binds `127.0.0.1:0` and serves on its own thread
//! (with its own tokio runtime), so synchronous tests, async tests and the
//! real binary run as a child process (via `ANTHROPIC_BASE_URL` =
//! [`MockServer::url`]) can all talk to it.
//!
//! # What it does with each request
//!
//! 1. Records it ([`MockServer::requests`]): method, path, headers and the
//!    parsed JSON body.
//! 2. Checks the protocol rules (see `rules.rs`): credential and version
//!    headers, `stream: true`, every `tool_use` answered by a `tool_result`
//!    with the same id in the very next user message, `tool_result` blocks
//!    before any other content, no empty text blocks, at most 4
//!    `cache_control` breakpoints, and more. A violation is answered with a
//!    400 `invalid_request_error`, as the real API would, and recorded; the
//!    server panics on drop (failing the test) unless
//!    [`MockServer::take_violations`] consumed them. Call
//!    [`MockServer::assert_no_violations`] to fail earlier with a clearer
//!    message.
//! 3. Checks the rules of today's models (see `thinking.rs`): thinking
//!    parameters the model refuses, a continued assistant turn whose
//!    thinking was lost or altered or whose conversation changed before it
//!    (the documented 400), assistant prefill other than a paused turn, and
//!    a prompt past the model's context window ("prompt is too long", a
//!    400 a correct client must handle, so not a violation).
//! 4. Answers with the next queued [`Reply`] ([`MockServer::push`]), or, when
//!    the queue is empty, with the responder closure
//!    ([`MockServer::respond_with`]). With neither, the request is a
//!    violation ("no reply scripted") and gets a 500.
//!
//! A model that thinks (per the catalog and the request's `thinking`)
//! answers with a thinking block first, its signature bound to the
//! conversation, unless the reply already has one or is a refusal.
//!
//! Streamed replies split text and tool JSON into random 1–12 character
//! fragments from a seeded RNG (deterministic per request index), sprinkle
//! pings, and cut each SSE frame at a random byte across two HTTP chunks.
//!
//! Usage is simulated the way the API reports it under prompt caching (see
//! `prefix_cache.rs`): tokens ≈ bytes / 4, prefixes at `cache_control`
//! breakpoints are written once (`cache_creation_input_tokens`) and read on
//! later requests (`cache_read_input_tokens`); only prefixes of at least
//! [`MockServer::set_min_cacheable_tokens`] tokens (default 1024) are
//! cached. [`RecordedRequest::reported_usage`] holds what was reported.
//!
//! # Scripting an agent
//!
//! ```ignore
//! let server = MockServer::start();
//! server.respond_with(|req| match req.turn() {
//!     0 => Reply::tool_use("list_directory", json!({"path": "."})),
//!     1 => {
//!         assert!(req.tool_results()[0].content.contains("README"));
//!         Reply::tool_use("submit_report", json!({"brief": "ok"}))
//!     }
//!     _ => Reply::text("done"),
//! });
//! // ... run the client or the binary against server.url() ...
//! assert_eq!(server.request_count(), 3);
//! ```
//!
//! # Faults
//!
//! Per reply: HTTP errors ([`Reply::rate_limited`], [`Reply::overloaded`],
//! [`Reply::server_error`], [`Reply::error`], with
//! [`Reply::retry_after_ms`] / [`Reply::retry_after_secs`] /
//! [`Reply::should_retry`]), [`Reply::html`] pages and [`Reply::raw`]
//! bodies, and stream faults: [`Reply::drop_mid_stream`],
//! [`Reply::error_event`], [`Reply::truncate_tool_json`],
//! [`Reply::stall_mid_stream`], a slow first byte with [`Reply::delay`],
//! and harmless noise with [`Reply::with_noise`]. Today's answers:
//! [`Reply::cut_off_at_max_tokens`], [`Reply::refusal`],
//! [`Reply::pause_turn`], [`Reply::billing_error`], and an endpoint that
//! never answers ([`Reply::silent`]). Server-wide:
//! [`MockServer::set_latency`] delays every response, and
//! [`MockServer::set_context_window`] shrinks every model's window.
//!
//! # Batches
//!
//! The Message Batches API is served too (see `batch.rs`): create, retrieve,
//! results (JSONL, shuffled) and cancel, with a processing delay
//! ([`MockServer::set_batch_delay`]), requests processed at once
//! ([`MockServer::process_at_once`]), expiry
//! ([`MockServer::expire_batches`]) and smaller limits
//! ([`MockServer::set_batch_limits`]). Each batch request is answered by
//! the same queue and responder when it is processed, and recorded in
//! [`MockServer::requests`] with its [`BatchRef`].

mod batch;
mod prefix_cache;
mod reply;
mod rules;
mod thinking;
mod wire;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use luminos::ai::api::Usage;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub use batch::{BatchCall, BatchInfo, BatchRef};
pub use reply::{MockBlock, Reply};

use prefix_cache::PrefixCache;
use reply::ReplyBody;
use thinking::Conversations;
use wire::{Ending, HttpRequest};

/// Produces a reply for requests the queue does not cover.
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Reply + Send + Sync>;

/// The mock server. Dropping it stops it, and panics if protocol
/// violations were recorded and not taken.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<State>,
    shutdown: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One request as the mock received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// 0-based arrival order.
    pub index: usize,
    pub path: String,
    /// Lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The parsed body; `Value::Null` when it was not JSON.
    pub body: Value,
    /// The usage the mock reported for it (a streamed reply, or a batch
    /// request that succeeded).
    pub reported_usage: Option<Usage>,
    /// The batch request it was, when it came in a batch.
    pub batch: Option<BatchRef>,
}

/// A `tool_result` block seen in a request.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultSeen {
    pub tool_use_id: String,
    /// The text content (blocks joined with `\n`).
    pub content: String,
    pub is_error: bool,
}

struct State {
    inner: Mutex<Inner>,
    connections: AtomicUsize,
    addr: SocketAddr,
}

struct Inner {
    queue: VecDeque<Reply>,
    responder: Option<Responder>,
    requests: Vec<RecordedRequest>,
    violations: Vec<String>,
    latency: Duration,
    seed: u64,
    cache: PrefixCache,
    conversations: Conversations,
    batches: batch::Batches,
}

impl MockServer {
    /// Start a server on 127.0.0.1 with an ephemeral port.
    pub fn start() -> MockServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("mock: bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("mock: nonblocking listener");
        let addr = listener.local_addr().expect("mock: local address");
        let state = Arc::new(State {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                responder: None,
                requests: Vec::new(),
                violations: Vec::new(),
                latency: Duration::ZERO,
                seed: 0x5EED,
                cache: PrefixCache::default(),
                conversations: Conversations::default(),
                batches: batch::Batches::default(),
            }),
            connections: AtomicUsize::new(0),
            addr,
        });
        let (shutdown, stop) = watch::channel(false);
        let thread_state = state.clone();
        let thread = std::thread::Builder::new()
            .name(format!("mock-api-{}", addr.port()))
            .spawn(move || serve(listener, thread_state, stop))
            .expect("mock: spawn server thread");
        MockServer {
            addr,
            state,
            shutdown,
            thread: Some(thread),
        }
    }

    /// The base URL to give the client (`ANTHROPIC_BASE_URL`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queue a reply; queued replies are used in order, before the responder.
    pub fn push(&self, reply: Reply) -> &MockServer {
        self.state.lock().queue.push_back(reply);
        self
    }

    /// Queue several replies.
    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) -> &MockServer {
        self.state.lock().queue.extend(replies);
        self
    }

    /// Answer requests the queue does not cover with `responder`.
    pub fn respond_with(
        &self,
        responder: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    ) -> &MockServer {
        self.state.lock().responder = Some(Arc::new(responder));
        self
    }

    /// Delay every response by `latency` before its first byte.
    pub fn set_latency(&self, latency: Duration) -> &MockServer {
        self.state.lock().latency = latency;
        self
    }

    /// Seed the fragmenting RNG (each request derives its own from this).
    pub fn set_seed(&self, seed: u64) -> &MockServer {
        self.state.lock().seed = seed;
        self
    }

    /// The smallest prefix (in tokens) the simulated prompt cache stores.
    pub fn set_min_cacheable_tokens(&self, tokens: u64) -> &MockServer {
        self.state.lock().cache.min_tokens = tokens;
        self
    }

    /// Give every model a context window of `tokens` (prompts past it get
    /// the API's 400 "prompt is too long").
    pub fn set_context_window(&self, tokens: u64) -> &MockServer {
        self.state.lock().conversations.context_window = Some(tokens);
        self
    }

    /// Let every batch take `delay` from its creation to its end.
    pub fn set_batch_delay(&self, delay: Duration) -> &MockServer {
        self.state.lock().batches.delay = delay;
        self
    }

    /// Refuse batches of more than `max_requests` requests or `max_bytes`
    /// of body (the API's limits are 100,000 and 256 MB).
    pub fn set_batch_limits(&self, max_requests: usize, max_bytes: usize) -> &MockServer {
        let mut inner = self.state.lock();
        inner.batches.max_requests = max_requests;
        inner.batches.max_bytes = max_bytes;
        self
    }

    /// Process the first `n` requests of every batch as soon as it is seen
    /// (the rest at its delay), so a cancel or an expiry finds some done.
    pub fn process_at_once(&self, n: usize) -> &MockServer {
        self.state.lock().batches.at_once = n;
        self
    }

    /// The batches created `numbers`-th (0-based) expire at their delay:
    /// requests not processed by then come back `expired`.
    pub fn expire_batches(&self, numbers: &[usize]) -> &MockServer {
        self.state.lock().batches.expiring = numbers.iter().copied().collect();
        self
    }

    /// Every batch created so far.
    pub fn batches(&self) -> Vec<BatchInfo> {
        self.state.lock().batches.info()
    }

    /// Every call to a batch endpoint so far.
    pub fn batch_calls(&self) -> Vec<BatchCall> {
        self.state.lock().batches.calls()
    }

    /// Forget every cached prefix.
    pub fn clear_prompt_cache(&self) -> &MockServer {
        self.state.lock().cache.clear();
        self
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.lock().requests.clone()
    }

    pub fn request_count(&self) -> usize {
        self.state.lock().requests.len()
    }

    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.state.lock().requests.last().cloned()
    }

    /// TCP connections accepted so far (keep-alive reuse shows as fewer
    /// connections than requests).
    pub fn connection_count(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Queued replies not used yet.
    pub fn queued(&self) -> usize {
        self.state.lock().queue.len()
    }

    /// The protocol violations recorded so far.
    pub fn violations(&self) -> Vec<String> {
        self.state.lock().violations.clone()
    }

    /// Take the recorded violations, so that drop does not panic (for tests
    /// that send bad requests on purpose).
    pub fn take_violations(&self) -> Vec<String> {
        std::mem::take(&mut self.state.lock().violations)
    }

    /// Panic with every recorded violation, if any.
    pub fn assert_no_violations(&self) {
        let violations = self.violations();
        assert!(
            violations.is_empty(),
            "the mock Messages API saw protocol violations:\n  {}",
            violations.join("\n  ")
        );
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if !std::thread::panicking() {
            self.assert_no_violations();
        }
    }
}

impl State {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The `tool_result` blocks of the newest user message of a request body.
pub fn tool_results_of(body: &Value) -> Vec<ToolResultSeen> {
    let Some(message) = body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
    else {
        return Vec::new();
    };
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| ToolResultSeen {
            tool_use_id: b["tool_use_id"].as_str().unwrap_or("").to_string(),
            content: match &b["content"] {
                Value::String(s) => s.clone(),
                other => text_of(other),
            },
            is_error: b["is_error"].as_bool().unwrap_or(false),
        })
        .collect()
}

impl RecordedRequest {
    /// A header by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn messages(&self) -> &[Value] {
        self.body["messages"].as_array().map_or(&[], Vec::as_slice)
    }

    /// Assistant messages in the history: 0 on a conversation's first call,
    /// 1 after one reply, and so on. Handy for scripting an agent loop.
    pub fn turn(&self) -> usize {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .count()
    }

    /// The system prompt's text (blocks joined with `\n`).
    pub fn system_text(&self) -> String {
        text_of(&self.body["system"])
    }

    /// What the model is told before its first reply: the system prompt
    /// and the first user message (a dir loop's assignment), joined.
    pub fn prompt_text(&self) -> String {
        super::agent::prompt_text(&self.body)
    }

    /// Names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    }

    /// The text of the newest user message (text blocks only).
    pub fn last_user_text(&self) -> String {
        self.last_user_message()
            .map(|m| text_of(&m["content"]))
            .unwrap_or_default()
    }

    /// The `tool_result` blocks of the newest user message.
    pub fn tool_results(&self) -> Vec<ToolResultSeen> {
        tool_results_of(&self.body)
    }

    /// Whether the serialized body contains `needle` anywhere.
    pub fn body_contains(&self, needle: &str) -> bool {
        self.body.to_string().contains(needle)
    }

    fn last_user_message(&self) -> Option<&Value> {
        self.messages().iter().rev().find(|m| m["role"] == "user")
    }
}

/// The text of a string or of the text blocks of a block list.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The server thread: accept connections until shutdown.
fn serve(listener: std::net::TcpListener, state: Arc<State>, mut stop: watch::Receiver<bool>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("mock: runtime");
    runtime.block_on(async move {
        let listener = TcpListener::from_std(listener).expect("mock: tokio listener");
        loop {
            tokio::select! {
                _ = stop.changed() => break,
                accepted = listener.accept() => {
                    if let Ok((sock, _)) = accepted {
                        state.connections.fetch_add(1, Ordering::SeqCst);
                        let _ = sock.set_nodelay(true);
                        tokio::spawn(serve_connection(sock, state.clone()));
                    }
                }
            }
        }
    });
    // Dropping the runtime drops every connection task, closing stalled
    // sockets too.
}

/// What to send for one request.
enum Prepared {
    /// Nothing at all: hold the connection open until the client leaves.
    Silent,
    Http {
        status: u16,
        content_type: String,
        body: Vec<u8>,
        headers: Vec<(String, String)>,
    },
    Stream {
        rendered: wire::RenderedStream,
        headers: Vec<(String, String)>,
        rng: fastrand::Rng,
    },
}

async fn serve_connection(mut sock: TcpStream, state: Arc<State>) {
    let mut buf = Vec::new();
    while let Ok(Some(request)) = wire::read_request(&mut sock, &mut buf).await {
        let close = request.wants_close();
        let (prepared, wait) = prepare(&state, request);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let keep_going = match prepared {
            Prepared::Silent => {
                let mut sink = [0u8; 1024];
                use tokio::io::AsyncReadExt;
                while matches!(sock.read(&mut sink).await, Ok(n) if n > 0) {}
                false
            }
            Prepared::Http {
                status,
                content_type,
                body,
                headers,
            } => wire::write_plain(&mut sock, status, &content_type, &headers, &body)
                .await
                .is_ok(),
            Prepared::Stream {
                rendered,
                headers,
                mut rng,
            } => send_stream(&mut sock, rendered, &headers, &mut rng).await,
        };
        if !keep_going || close {
            return;
        }
    }
}

/// Send a stream; returns whether the connection can carry another request.
async fn send_stream(
    sock: &mut TcpStream,
    rendered: wire::RenderedStream,
    headers: &[(String, String)],
    rng: &mut fastrand::Rng,
) -> bool {
    if wire::write_stream_head(sock, headers).await.is_err() {
        return false;
    }
    let limit = match rendered.ending {
        Ending::Complete => rendered.frames.len(),
        Ending::DropAfter(n) | Ending::StallAfter(n) => n,
    };
    for frame in &rendered.frames[..limit] {
        if wire::write_frame(sock, frame, rng).await.is_err() {
            return false;
        }
    }
    match rendered.ending {
        Ending::Complete => wire::write_stream_end(sock).await.is_ok(),
        Ending::DropAfter(_) => false,
        Ending::StallAfter(_) => {
            // Silent but open until the client gives up and closes.
            let mut sink = [0u8; 1024];
            use tokio::io::AsyncReadExt;
            while matches!(sock.read(&mut sink).await, Ok(n) if n > 0) {}
            false
        }
    }
}

/// Record and check the request, pick its reply, and render it. Returns the
/// response and how long to wait before sending it.
fn prepare(state: &State, request: HttpRequest) -> (Prepared, Duration) {
    if request.path.starts_with(batch::BATCHES_PATH) {
        return batch::handle(state, request);
    }
    let body: Option<Value> = serde_json::from_slice(&request.body).ok();
    let problems = rules::check_request(
        &request.method,
        &request.path,
        |name| request.header(name).map(str::to_string),
        body.as_ref(),
    );
    let mut inner = state.lock();
    let index = inner.requests.len();
    let request_id = ("request-id".to_string(), format!("req_mock_{index:04}"));
    let recorded = RecordedRequest {
        index,
        path: request.path.clone(),
        headers: request.headers.clone(),
        body: body.clone().unwrap_or(Value::Null),
        reported_usage: None,
        batch: None,
    };
    inner.requests.push(recorded.clone());
    let latency = inner.latency;
    if !problems.is_empty() {
        for problem in &problems {
            inner
                .violations
                .push(format!("request #{index}: {problem}"));
        }
        let reply = Reply::error(
            400,
            "invalid_request_error",
            &format!("mock: {}", problems.join("; ")),
        );
        return (http(reply, request_id), latency);
    }
    let accepted = match body.as_ref().map(|b| inner.conversations.check(b)) {
        Some(Ok(accepted)) => accepted,
        Some(Err(rejection)) => {
            if rejection.violation {
                inner
                    .violations
                    .push(format!("request #{index}: {}", rejection.message));
            }
            let reply = Reply::error(400, "invalid_request_error", &rejection.message);
            return (http(reply, request_id), latency);
        }
        None => unreachable!("a body that is not JSON is a rule violation"),
    };
    let queued = inner.queue.pop_front();
    let responder = inner.responder.clone();
    drop(inner);

    // The responder runs without the lock: it may be slow or call back.
    let reply = queued.or_else(|| responder.map(|r| r(&recorded)));
    let Some(reply) = reply else {
        state
            .lock()
            .violations
            .push(format!("request #{index}: no reply scripted"));
        let reply = Reply::error(500, "api_error", "mock: no reply scripted for this request");
        return (http(reply, request_id), latency);
    };
    let wait = latency + reply.delay;
    let mut stream = match &reply.body {
        ReplyBody::Stream(stream) => stream.clone(),
        ReplyBody::Http { .. } => return (http(reply, request_id), wait),
        ReplyBody::Silent => return (Prepared::Silent, wait),
    };
    let body = body.unwrap_or(Value::Null);
    let (rendered, rng) = render_message(state, &mut stream, &body, accepted, index);
    let mut headers = vec![request_id];
    headers.extend(reply.headers);
    (
        Prepared::Stream {
            rendered,
            headers,
            rng,
        },
        wait,
    )
}

/// Render the scripted message `stream` answering request `index` (whose
/// body is `body`) as the API would: a thinking block first from a model
/// that thinks, usage from the simulated prompt cache, the reply
/// remembered for the thinking round-trip checks, and the usage recorded.
fn render_message(
    state: &State,
    stream: &mut reply::StreamReply,
    body: &Value,
    accepted: thinking::Accepted,
    index: usize,
) -> (wire::RenderedStream, fastrand::Rng) {
    let has_thinking = stream
        .blocks
        .iter()
        .any(|b| matches!(b, MockBlock::Thinking(_) | MockBlock::RedactedThinking));
    if accepted.thinks && !has_thinking && !stream.no_thinking {
        // The 5.x models omit the thinking text by default: only the
        // signature comes, and the tokens are billed all the same.
        stream.blocks.insert(0, MockBlock::Thinking(String::new()));
    }
    let mut inner = state.lock();
    let simulated = inner.cache.process(body);
    let mut rng = fastrand::Rng::with_seed(
        inner
            .seed
            .wrapping_add((index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
    );
    let input = stream.usage.unwrap_or(simulated);
    let model = body["model"].as_str().unwrap_or("claude-mock");
    let rendered = wire::render_stream(
        stream,
        index,
        model,
        input,
        &thinking::seal(accepted.key),
        accepted.max_tokens,
        &mut rng,
    );
    inner.conversations.produced(
        accepted.key,
        thinking::produced_message(rendered.content.clone()),
        &rendered.stop_reason,
    );
    inner.requests[index].reported_usage = Some(Usage {
        output_tokens: rendered.output_tokens,
        ..input
    });
    (rendered, rng)
}

fn http(reply: Reply, request_id: (String, String)) -> Prepared {
    let mut headers = vec![request_id];
    headers.extend(reply.headers);
    match reply.body {
        ReplyBody::Http {
            status,
            content_type,
            body,
        } => Prepared::Http {
            status,
            content_type,
            body,
            headers,
        },
        ReplyBody::Stream(_) | ReplyBody::Silent => {
            unreachable!("streams and silence are handled by prepare")
        }
    }
}
