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
//! 2. Checks the protocol rules (see `protocol.rs`): credential and version
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
//! breakpoints are written once (`cache_creation_input_tokens`, split by
//! lifetime in `cache_creation`) and read on later requests
//! (`cache_read_input_tokens`) while they live: 5 minutes, or an hour with
//! `"ttl": "1h"`, from their last write or read, on a clock a test can
//! speed up ([`MockServer::set_cache_clock_speed`]) or move on
//! ([`MockServer::advance_cache_clock`]); only prefixes of at least
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
//! and harmless noise with [`Reply::with_noise`]. Endpoints that are dead
//! or are not the API: [`Reply::headers_then_silence`],
//! [`Reply::pings_only`], a reply sent a byte at a time
//! ([`Reply::trickle`]), one that never ends ([`Reply::endless`]),
//! [`Reply::web_page`], [`Reply::garbage_stream`], [`Reply::wrong_json`];
//! and real replies that are slow: [`Reply::paced`] and
//! [`Reply::working_quietly`] (only pings while a thinking or tool block
//! is open). Today's answers:
//! [`Reply::cut_off_at_max_tokens`], [`Reply::refusal`],
//! [`Reply::pause_turn`], [`Reply::billing_error`], and an endpoint that
//! never answers ([`Reply::silent`]). Server-wide:
//! [`MockServer::set_latency`] delays every response,
//! [`MockServer::set_context_window`] shrinks every model's window, and
//! [`MockServer::without_batches`] takes the Batches API away.
//!
//! # Ollama's dialect
//!
//! [`MockServer::ollama`] answers as Ollama's Anthropic compatibility layer
//! does (see `ollama.rs`): usage of two counts and no prompt cache, no
//! token counting or batches (404 `text/plain`), thinking without a
//! signature and no thinking checks, no `ping` or `error` events, a tool's
//! input in one piece, and a prompt past its window answered as if cut and
//! recorded in [`MockServer::over_window`].
//!
//! # Holding a run where a test wants it
//!
//! Tests that stop a run mid-way wait on events, not on timing:
//! [`MockServer::hold_from`] records requests from the n-th on but answers
//! none of them until [`MockServer::release`], and
//! [`MockServer::hold_batches_from`] keeps batches from the n-th on in
//! progress, so a signal sent once [`MockServer::wait_for_requests`] (or the
//! cache) says the run got there always lands while it waits.
//!
//! # Token counting
//!
//! `POST /v1/messages/count_tokens` answers `{"input_tokens": N}` for a
//! request's prompt (see `count_tokens.rs`), recorded apart in
//! [`MockServer::token_counts`]; [`MockServer::fail_token_counts`] makes
//! it fail.
//!
//! # Batches
//!
//! The Message Batches API is served too (see `batch.rs`): create, retrieve,
//! results (JSONL, shuffled) and cancel, with a processing delay
//! ([`MockServer::set_batch_delay`]), requests processed at once
//! ([`MockServer::process_at_once`], [`MockServer::process_at_once_if`]),
//! expiry ([`MockServer::expire_batches`]) and smaller limits
//! ([`MockServer::set_batch_limits`]). Each batch request is answered by
//! the same queue and responder when it is processed, and recorded in
//! [`MockServer::requests`] with its [`BatchRef`].

mod batch;
mod count_tokens;
mod ollama;
mod prefix_cache;
mod protocol;
mod recorded;
mod reply;
mod serve;
mod thinking;
mod wire;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use luminos::ai::api::Usage;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub use batch::{BatchCall, BatchInfo, BatchRef};
pub use ollama::{Dialect, OverWindow};
pub use recorded::{RecordedRequest, ToolResultSeen, tool_results_of};
pub use reply::{MockBlock, Reply};

use prefix_cache::PrefixCache;
use reply::ReplyBody;
use serve::serve;
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

struct State {
    inner: Mutex<Inner>,
    /// Notified whenever a request is recorded.
    arrived: Condvar,
    /// Requests to `/v1/messages` from this index on are held unanswered.
    hold: watch::Sender<Option<usize>>,
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
    /// Output tokens each thinking block bills besides its text.
    thinking_tokens: u64,
    conversations: Conversations,
    batches: batch::Batches,
    /// The bodies of the calls to the token-counting endpoint.
    token_counts: Vec<Value>,
    /// What every token count is answered with instead of a count.
    token_count_failure: Option<Reply>,
    /// Whose API it answers as.
    dialect: Dialect,
    /// Requests longer than an Ollama window, answered as if cut.
    over_window: Vec<OverWindow>,
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
                thinking_tokens: thinking::THINKING_TOKENS,
                conversations: Conversations::default(),
                batches: batch::Batches::default(),
                token_counts: Vec::new(),
                token_count_failure: None,
                dialect: Dialect::Anthropic,
                over_window: Vec::new(),
            }),
            arrived: Condvar::new(),
            hold: watch::channel(None).0,
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

    /// A server that answers as Ollama's Anthropic compatibility layer
    /// does, for a model with a context window of `window` tokens (see
    /// `ollama.rs`): a longer prompt is answered as if cut, and recorded
    /// ([`Self::over_window`]).
    pub fn ollama(window: u64) -> MockServer {
        let server = MockServer::start();
        server.state.lock().dialect = Dialect::Ollama { window };
        server
    }

    /// The requests whose prompt was longer than an Ollama window, in
    /// arrival order (always empty in the Messages API's dialect, which
    /// refuses them).
    pub fn over_window(&self) -> Vec<OverWindow> {
        self.state.lock().over_window.clone()
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

    /// Record requests to `/v1/messages` from the `n`-th (0-based, in
    /// arrival order) on, but answer none of them until [`Self::release`]:
    /// a run stopped meanwhile is stopped while it waits on the API.
    pub fn hold_from(&self, n: usize) -> &MockServer {
        self.state.hold.send_replace(Some(n));
        self
    }

    /// Answer the requests [`Self::hold_from`] held, and hold no more.
    pub fn release(&self) -> &MockServer {
        self.state.hold.send_replace(None);
        self
    }

    /// Wait until `n` requests have been recorded; false if `within`
    /// passed first.
    pub fn wait_for_requests(&self, n: usize, within: Duration) -> bool {
        self.wait_until(within, |requests| requests.len() >= n)
    }

    /// Wait until `done` holds of the requests recorded so far (checked
    /// as each one is recorded); false if `within` passed first.
    pub fn wait_until(&self, within: Duration, done: impl Fn(&[RecordedRequest]) -> bool) -> bool {
        let inner = self.state.lock();
        let (inner, _) = self
            .state
            .arrived
            .wait_timeout_while(inner, within, |inner| !done(&inner.requests))
            .unwrap_or_else(|e| e.into_inner());
        done(&inner.requests)
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

    /// Keep the batches created `n`-th (0-based) and later in progress,
    /// whatever their delay: none of their requests is processed (but for
    /// [`Self::process_at_once`]) until a later call moves the mark past
    /// them, or `None` lifts it.
    pub fn hold_batches_from(&self, n: Option<usize>) -> &MockServer {
        self.state.lock().batches.held_from = n;
        self
    }

    /// Let every batch take `round_time` on the prompt cache's clock: the
    /// requests it processes at its delay are processed `round_time` after
    /// its creation on that clock (moved on to then), so that a round of a
    /// few milliseconds stands for ten minutes while the client's own work
    /// between rounds keeps the wall clock's pace.
    pub fn set_batch_round_time(&self, round_time: Duration) -> &MockServer {
        self.state.lock().batches.round_time = Some(round_time);
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
    /// Which requests those are follows the client's order; a test whose
    /// outcome depends on which ones uses [`Self::process_at_once_if`].
    pub fn process_at_once(&self, n: usize) -> &MockServer {
        self.state.lock().batches.at_once = batch::AtOnce::First(n);
        self
    }

    /// Process the requests of every batch whose `params` `wanted` says yes
    /// to as soon as the batch is seen (the rest at its delay), wherever
    /// they are in it. `wanted` runs with the mock's state locked: it must
    /// only look at the params.
    pub fn process_at_once_if(
        &self,
        wanted: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> &MockServer {
        self.state.lock().batches.at_once = batch::AtOnce::Matching(Arc::new(wanted));
        self
    }

    /// The batches created `numbers`-th (0-based) expire at their delay:
    /// requests not processed by then come back `expired`.
    pub fn expire_batches(&self, numbers: &[usize]) -> &MockServer {
        self.state.lock().batches.expiring = numbers.iter().copied().collect();
        self
    }

    /// Serve `/v1/messages` but no Message Batches API (every batch path
    /// answers 404), like a gateway with a unified messages route.
    pub fn without_batches(&self) -> &MockServer {
        self.state.lock().batches.missing = true;
        self
    }

    /// Every batch created so far.
    pub fn batches(&self) -> Vec<BatchInfo> {
        self.state.lock().batches.info()
    }

    /// The bodies of the calls to the token-counting endpoint so far.
    pub fn token_counts(&self) -> Vec<Value> {
        self.state.lock().token_counts.clone()
    }

    /// Answer every token count with `reply` (an error) instead.
    pub fn fail_token_counts(&self, reply: Reply) -> &MockServer {
        self.state.lock().token_count_failure = Some(reply);
        self
    }

    /// Every call to a batch endpoint so far.
    pub fn batch_calls(&self) -> Vec<BatchCall> {
        self.state.lock().batches.calls()
    }

    /// Let each thinking block bill `tokens` of output besides its text
    /// (default [`thinking::THINKING_TOKENS`]); the 5.x models leave the
    /// text out and bill what they thought all the same.
    pub fn set_thinking_tokens(&self, tokens: u64) -> &MockServer {
        self.state.lock().thinking_tokens = tokens;
        self
    }

    /// Let the prompt cache's clock run `speed` times faster than the wall
    /// clock from now on: at 6,000, a batch that takes 100 ms stands for
    /// ten minutes, past a 5-minute lifetime and within an hour.
    pub fn set_cache_clock_speed(&self, speed: f64) -> &MockServer {
        self.state.lock().cache.clock.set_speed(speed);
        self
    }

    /// Move the prompt cache's clock on by `by` (entries past their
    /// lifetime are gone).
    pub fn advance_cache_clock(&self, by: Duration) -> &MockServer {
        self.state.lock().cache.clock.advance(by);
        self
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

    /// The usage the mock reported, request by request in arrival order,
    /// for the requests that got a reply carrying usage.
    pub fn reported_usages(&self) -> Vec<Usage> {
        let state = self.state.lock();
        state
            .requests
            .iter()
            .filter_map(|r| r.reported_usage)
            .collect()
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
