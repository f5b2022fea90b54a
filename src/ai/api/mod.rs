//! Our own Anthropic Messages API client, in layers:
//!
//! - [`types`]: the protocol vocabulary (serde types);
//! - [`sse`]: a pure server-sent-events parser, fed arbitrary byte chunks;
//! - [`stream`]: a pure accumulator that turns stream events into a
//!   [`types::Response`];
//! - [`error`]: typed errors, one line each;
//! - [`retry`]: the retry policy (which failures retry, and how long to wait);
//! - [`caching`]: where the prompt-caching breakpoints go;
//! - [`catalog`]: every fact about the models luminos knows (prices,
//!   windows, thinking, lifecycle);
//! - [`cost`]: token accounting, priced from the catalog;
//! - [`settings`]: how each model is asked to work (`max_tokens`, thinking,
//!   effort) and how large a loop's context may grow;
//! - [`batch`]: the Message Batches API (create, retrieve, results,
//!   cancel), the same requests at half price, answered within a day;
//! - `config`: what a client is built from (credential, endpoint,
//!   model, timeouts) and the defaults for it;
//! - this module: the [`Client`], its send-and-retry loop, and what the
//!   run has learnt about the endpoint (has it ever answered?);
//! - `body`: a request serialized straight from a conversation's borrowed
//!   parts, so sending one copies nothing of its history;
//! - `transport` and `reading`: one HTTP exchange (reqwest) and the
//!   reading of its answer, as a stream or a whole body.
//!
//! No Anthropic SDK is involved. Agent logic (prompts, tools, loops) lives in
//! [`crate::ai`], never here.

pub mod batch;
pub mod caching;
pub mod catalog;
pub mod cost;
pub mod error;
pub(crate) mod retry;
pub mod settings;
pub(crate) mod sse;
pub mod stream;
pub mod types;

pub(crate) mod body;
mod config;
mod count_tokens;
mod reading;
pub(crate) mod tokens;
mod transport;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::header::HeaderMap;

pub use error::{ApiErrorKind, Endpoint};

pub(crate) use error::ApiError;
pub use retry::RetryPolicy;
pub(crate) use retry::{EndpointSeen, RetryDecision};
pub use types::{ContentBlock, Message, MessagesRequest, Response, ToolDefinition, Usage};

pub use config::{ANTHROPIC_VERSION, Auth, ClientConfig};
// `MAX_TOKENS` and `CONNECT_TIMEOUT` are only used inside `config`.
pub(crate) use config::{
    ATTEMPT_DEADLINE, DEFAULT_BASE_URL, HEADERS_TIMEOUT, IDLE_TIMEOUT, USER_AGENT,
};
// For `batch`, which reads its answers the same way.
use reading::read_body;

use error::format_wait;
use reading::error_chain;
use transport::{encode, request_headers};
use types::SystemBlock;

pub use catalog::DEFAULT_MODEL;

/// One retry about to happen, for the caller to report.
#[derive(Debug, Clone)]
pub struct RetryNotice {
    /// What failed.
    pub error: ApiError,
    /// 1-based number of the retry about to be made.
    pub attempt: u32,
    /// Retries allowed in total for this kind of failure.
    pub max_retries: u32,
    /// How long the client waits before it.
    pub wait: Duration,
}

impl std::fmt::Display for RetryNotice {
    /// `API call failed: overloaded (HTTP 529): Overloaded; retry 1/6 in 480ms`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "API call failed: {}; retry {}/{} in {}",
            self.error,
            self.attempt,
            self.max_retries,
            format_wait(self.wait)
        )
    }
}

/// Called before each retry, so the caller can print one line.
pub(crate) type RetryObserver = Arc<dyn Fn(&RetryNotice) + Send + Sync>;

/// What a run has learnt about its endpoint, shared by every clone of a
/// client.
#[derive(Debug, Default)]
struct Learnt {
    /// Some request got an HTTP response (any status): the endpoint is
    /// there and speaks HTTP.
    answered: AtomicBool,
    /// Some request got a whole reply: requests like ours can succeed.
    succeeded: AtomicBool,
}

/// The Messages API client. Cheap to clone; share one per run.
#[derive(Clone)]
pub struct Client {
    config: Arc<ClientConfig>,
    http: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    policy: RetryPolicy,
    observer: Option<RetryObserver>,
    endpoint: Arc<Learnt>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.config)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Build a client. Fails on a base URL that is not a URL or a credential
    /// that cannot go in a header.
    pub fn new(config: ClientConfig) -> Result<Client, ApiError> {
        let endpoint = format!("{}/v1/messages", config.base_url.trim_end_matches('/'));
        let url = reqwest::Url::parse(&endpoint).map_err(|err| {
            ApiError::new(
                ApiErrorKind::Connection,
                format!("invalid API base URL '{}': {err}", config.base_url),
            )
        })?;
        let headers = request_headers(&config.auth)?;
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .user_agent(USER_AGENT)
            // A redirect would turn the POST into a GET; better to say so.
            .redirect(reqwest::redirect::Policy::none())
            // Trust roots only where TLS can happen: without redirects the
            // scheme never changes, and loading the system's certificates
            // costs every run over plain HTTP (a local gateway, a mock) a
            // parse of the whole bundle for nothing.
            .tls_built_in_root_certs(url.scheme() == "https")
            .build()
            .map_err(|err| {
                ApiError::new(
                    ApiErrorKind::Connection,
                    format!("could not set up the HTTP client: {}", error_chain(&err)),
                )
            })?;
        Ok(Client {
            policy: RetryPolicy::new(config.max_retries).with_backoff(
                config.retry_backoff,
                retry::MAX_BACKOFF.max(config.retry_backoff),
            ),
            config: Arc::new(config),
            http,
            url,
            headers,
            observer: None,
            endpoint: Arc::default(),
        })
    }

    /// Report each retry to `observer`.
    pub fn with_retry_observer(mut self, observer: RetryObserver) -> Client {
        self.observer = Some(observer);
        self
    }

    /// Replace the retry policy (built from `max_retries` by default).
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Client {
        self.policy = policy;
        self
    }

    /// The retry policy in use.
    pub(crate) fn retry_policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// The model every request uses.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// The base URL requests go to, as configured.
    pub fn base_url(&self) -> &str {
        &self.config.base_url
    }

    /// Whether any request of this client (or its clones) got an HTTP
    /// response, whatever its status.
    pub fn has_answered(&self) -> bool {
        self.endpoint.answered.load(Ordering::Relaxed)
    }

    /// Whether any request of this client (or its clones) got a whole reply.
    pub fn has_succeeded(&self) -> bool {
        self.endpoint.succeeded.load(Ordering::Relaxed)
    }

    /// What the endpoint has done so far, for the retry policy.
    pub(crate) fn seen(&self) -> EndpointSeen {
        EndpointSeen {
            answered: self.has_answered(),
            succeeded: self.has_succeeded(),
        }
    }

    /// A streaming request for this client's model and `max_tokens`, with the
    /// system prompt as one text block.
    pub fn request(
        &self,
        system: &str,
        messages: Vec<Message>,
        tools: Vec<ToolDefinition>,
    ) -> MessagesRequest {
        MessagesRequest {
            model: self.config.model.clone(),
            max_tokens: self.config.max_tokens,
            system: if system.is_empty() {
                Vec::new()
            } else {
                vec![SystemBlock::text(system)]
            },
            messages,
            tools,
            thinking: None,
            output_config: None,
            stream: true,
        }
    }

    /// The body [`Client::send`] posts for `request`: streaming, with our
    /// prompt-caching breakpoints in place of any the caller set.
    pub fn prepare(&self, request: &MessagesRequest) -> MessagesRequest {
        self.prepare_for(request, caching::Reuse::Expected)
    }

    /// [`Client::prepare`] with the breakpoints `reuse` calls for.
    pub(crate) fn prepare_for(
        &self,
        request: &MessagesRequest,
        reuse: caching::Reuse,
    ) -> MessagesRequest {
        prepared(request, reuse, true, catalog::CacheTtl::FiveMinutes)
    }

    /// The `params` of `request` as a batch carries them: the
    /// prompt-caching breakpoints `reuse` calls for (where
    /// [`Client::prepare_for`] places them, each asking for the 1-hour
    /// lifetime, since the next round may come after five minutes: see
    /// [`caching`]) and no `stream`, since a batch answers with whole
    /// messages.
    pub fn batch_params(
        &self,
        request: &MessagesRequest,
        reuse: caching::Reuse,
    ) -> MessagesRequest {
        prepared(request, reuse, false, catalog::CacheTtl::OneHour)
    }

    /// Send `request` with prompt-caching breakpoints added (last tool, the
    /// system block, the last block of the newest user message), retrying per
    /// the retry policy. Returns the assembled response or the typed error of
    /// the last attempt.
    pub async fn send(&self, request: &MessagesRequest) -> Result<Response, ApiError> {
        self.post(encode(&self.prepare(request))?).await
    }

    /// Post `body` (a streaming request, encoded: see [`body::RequestBody`]) to
    /// the Messages API, retrying per the retry policy, and read the reply.
    /// Returns the assembled response or the typed error of the last
    /// attempt.
    pub(crate) async fn post(&self, body: Vec<u8>) -> Result<Response, ApiError> {
        let mut retries = Retries::default();
        loop {
            // Each attempt, its reply read to the end, has its deadline.
            let deadline = self.deadline();
            let url = self.url.clone();
            let exchange = self.exchange(url, Some(body.clone()), Endpoint::Messages, deadline);
            let attempt = match exchange.await {
                Ok(response) => self.read_reply(response, deadline).await,
                Err(error) => Err(error),
            };
            match attempt {
                Ok(reply) => return Ok(self.succeeded(reply)),
                Err(error) => self.pause_to_retry(&mut retries, error).await?,
            }
        }
    }

    /// Run `attempt` until it succeeds or the retry policy gives up,
    /// reporting each retry to the observer.
    async fn with_retries<T, F, Fut>(&self, mut attempt: F) -> Result<T, ApiError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, ApiError>>,
    {
        let mut retries = Retries::default();
        loop {
            match attempt().await {
                Ok(reply) => return Ok(self.succeeded(reply)),
                Err(error) => self.pause_to_retry(&mut retries, error).await?,
            }
        }
    }

    /// `reply`, noting that requests like it can succeed.
    fn succeeded<T>(&self, reply: T) -> T {
        self.endpoint.succeeded.store(true, Ordering::Relaxed);
        reply
    }

    /// After a failed attempt: wait as the retry policy says (reporting the
    /// retry to the observer) and return `Ok` to try again, or give up with
    /// `error`.
    async fn pause_to_retry(&self, retries: &mut Retries, error: ApiError) -> Result<(), ApiError> {
        retries.made += 1;
        let seen = self.seen();
        match self
            .policy
            .decide_after(&error, retries.made, seen, retries.waited, &mut retries.rng)
        {
            RetryDecision::GiveUp => Err(error),
            RetryDecision::Retry { wait } => {
                if let Some(observer) = &self.observer {
                    observer(&RetryNotice {
                        max_retries: self.policy.allowed_retries(&error, seen),
                        error,
                        attempt: retries.made,
                        wait,
                    });
                }
                tokio::time::sleep(wait).await;
                retries.waited += wait;
                Ok(())
            }
        }
    }
}

/// A copy of `request` as it is posted: streamed or not, with the
/// prompt-caching breakpoints `reuse` calls for, each asking for `ttl`.
fn prepared(
    request: &MessagesRequest,
    reuse: caching::Reuse,
    stream: bool,
    ttl: catalog::CacheTtl,
) -> MessagesRequest {
    let mut prepared = request.clone();
    prepared.stream = stream;
    caching::mark_breakpoints_for(&mut prepared, reuse, ttl);
    prepared
}

/// Where one request stands with the retry policy.
struct Retries {
    /// Retries made so far.
    made: u32,
    /// Time spent waiting between its attempts so far.
    waited: Duration,
    /// The source of the waits' jitter.
    rng: fastrand::Rng,
}

impl Default for Retries {
    fn default() -> Self {
        Retries {
            made: 0,
            waited: Duration::ZERO,
            rng: fastrand::Rng::new(),
        }
    }
}
