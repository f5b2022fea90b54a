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
//! - this module: the transport (reqwest) that ties them together, and
//!   what the run has learnt about the endpoint (has it ever answered?).
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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderValue};

pub use error::ApiErrorKind;

pub(crate) use error::ApiError;
pub(crate) use retry::RetryDecision;
pub use retry::RetryPolicy;
pub use types::{ContentBlock, Message, MessagesRequest, Response, ToolDefinition, Usage};

use error::format_wait;
use stream::ResponseDecoder;
use types::SystemBlock;

pub use catalog::DEFAULT_MODEL;

/// The API endpoint used when `ANTHROPIC_BASE_URL` is unset.
pub(crate) const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// `max_tokens` of a request built without [`settings::CallSettings`]: the
/// original's figure.
pub(crate) const MAX_TOKENS: u32 = settings::REPLY_TOKENS;

/// A credential for the Messages API.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    /// `ANTHROPIC_API_KEY`, sent as `x-api-key`.
    ApiKey(String),
    /// `ANTHROPIC_AUTH_TOKEN`, sent as `Authorization: Bearer`.
    BearerToken(String),
}

impl std::fmt::Debug for Auth {
    // Never print a credential, not even in debug output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::ApiKey(_) => f.write_str("ApiKey(<redacted>)"),
            Auth::BearerToken(_) => f.write_str("BearerToken(<redacted>)"),
        }
    }
}

/// `anthropic-version` header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// How long to wait for a TCP/TLS connection: the Python SDK's connect
/// timeout. A host that drops connection attempts costs this per attempt.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long to wait for the response headers once the request is sent. The
/// API answers a streamed request with its headers as soon as it accepts
/// it, before the model writes anything, so this can be far shorter than a
/// reply takes; an endpoint that accepts connections and never answers is
/// given up on after it (twice, before the endpoint has ever answered: see
/// [`retry`]). `LUMINOS_HEADERS_TIMEOUT_SECS` overrides it.
pub(crate) const HEADERS_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a stream may go without any bytes (pings count) before it is
/// treated as stalled. The API pings well inside this.
/// `LUMINOS_IDLE_TIMEOUT_SECS` overrides it (see [`crate::config`]).
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The `user-agent` of every request.
pub(crate) const USER_AGENT: &str = concat!("luminos/", env!("CARGO_PKG_VERSION"));

/// A streamed reply larger than this is refused: at `max_tokens` 4096 a real
/// one is a few hundred kilobytes at most.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How long to wait for the end of a body after `message_stop`.
const DRAIN_LIMIT: Duration = Duration::from_millis(250);

/// How much of an error body is read for its message.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Everything the client needs to know.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Base URL without a trailing slash; requests go to `{base_url}/v1/messages`.
    pub base_url: String,
    pub auth: Auth,
    pub model: String,
    pub max_tokens: u32,
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub connect_timeout: Duration,
    /// The wait for the response headers ([`HEADERS_TIMEOUT`]).
    pub headers_timeout: Duration,
    /// The longest silence within a response body ([`IDLE_TIMEOUT`]).
    pub idle_timeout: Duration,
    /// Wait before the first retry when the server names none; later
    /// retries double it up to [`retry::MAX_BACKOFF`].
    pub retry_backoff: Duration,
}

impl ClientConfig {
    /// A configuration with the default `max_tokens`, retries and timeouts.
    pub fn new(base_url: impl Into<String>, auth: Auth, model: impl Into<String>) -> ClientConfig {
        ClientConfig {
            base_url: base_url.into(),
            auth,
            model: model.into(),
            max_tokens: MAX_TOKENS,
            max_retries: retry::DEFAULT_MAX_RETRIES,
            connect_timeout: CONNECT_TIMEOUT,
            headers_timeout: HEADERS_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            retry_backoff: retry::INITIAL_BACKOFF,
        }
    }
}

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
struct Endpoint {
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
    endpoint: Arc<Endpoint>,
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
        let mut prepared = request.clone();
        prepared.stream = true;
        caching::mark_breakpoints_for(&mut prepared, reuse);
        prepared
    }

    /// The `params` of `request` as a batch carries them: the
    /// prompt-caching breakpoints `reuse` calls for (the same as
    /// [`Client::prepare_for`] places) and no `stream`, since a batch
    /// answers with whole messages.
    pub fn batch_params(
        &self,
        request: &MessagesRequest,
        reuse: caching::Reuse,
    ) -> MessagesRequest {
        let mut prepared = self.prepare_for(request, reuse);
        prepared.stream = false;
        prepared
    }

    /// Send `request` with prompt-caching breakpoints added (last tool, the
    /// system block, the last block of the newest user message), retrying per
    /// the retry policy. Returns the assembled response or the typed error of
    /// the last attempt.
    pub async fn send(&self, request: &MessagesRequest) -> Result<Response, ApiError> {
        self.send_with(request, caching::Reuse::Expected).await
    }

    /// [`Client::send`] with the breakpoints `reuse` calls for.
    pub(crate) async fn send_with(
        &self,
        request: &MessagesRequest,
        reuse: caching::Reuse,
    ) -> Result<Response, ApiError> {
        let body = encode(&self.prepare_for(request, reuse))?;
        self.with_retries(|| self.attempt(body.clone())).await
    }

    /// Run `attempt` until it succeeds or the retry policy gives up,
    /// reporting each retry to the observer.
    async fn with_retries<T, F, Fut>(&self, mut attempt: F) -> Result<T, ApiError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, ApiError>>,
    {
        let mut rng = fastrand::Rng::new();
        let mut retry = 0;
        loop {
            let error = match attempt().await {
                Ok(response) => {
                    self.endpoint.succeeded.store(true, Ordering::Relaxed);
                    return Ok(response);
                }
                Err(error) => error,
            };
            retry += 1;
            let answered = self.has_answered();
            match self.policy.decide(&error, retry, answered, &mut rng) {
                RetryDecision::GiveUp => return Err(error),
                RetryDecision::Retry { wait } => {
                    if let Some(observer) = &self.observer {
                        observer(&RetryNotice {
                            max_retries: self.policy.allowed_retries(&error, answered),
                            error,
                            attempt: retry,
                            wait,
                        });
                    }
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    /// One HTTP exchange whose answer is read whole: `body` is posted as
    /// JSON, or the URL is fetched with `GET` when there is none. A status
    /// other than success becomes its typed error.
    async fn exchange(
        &self,
        url: reqwest::Url,
        body: Option<Vec<u8>>,
    ) -> Result<reqwest::Response, ApiError> {
        let builder = match body {
            Some(body) => self.http.post(url).body(body),
            None => self.http.get(url),
        };
        let pending = builder.headers(self.headers.clone()).send();
        let timeout = self.config.headers_timeout;
        let response = match tokio::time::timeout(timeout, pending).await {
            Err(_) => {
                return Err(ApiError::new(
                    ApiErrorKind::Timeout,
                    format!("no response headers within {}", format_wait(timeout)),
                ));
            }
            Ok(Err(err)) => return Err(transport_error(&err)),
            Ok(Ok(response)) => response,
        };
        self.endpoint.answered.store(true, Ordering::Relaxed);
        if !response.status().is_success() {
            return Err(self.error_from_response(response).await);
        }
        Ok(response)
    }

    /// One HTTP exchange, start to finish.
    async fn attempt(&self, body: Vec<u8>) -> Result<Response, ApiError> {
        let idle = self.config.idle_timeout;
        let response = self.exchange(self.url.clone(), Some(body)).await?;
        let request_id = header_str(response.headers(), "request-id")
            .or_else(|| header_str(response.headers(), "x-request-id"))
            .map(str::to_string);
        let content_type = header_str(response.headers(), "content-type")
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let result = if content_type.starts_with("application/json") {
            read_body(response, idle, MAX_BODY_BYTES)
                .await
                .and_then(|body| stream::response_from_message_json(&body))
        } else {
            self.read_stream(response)
                .await
                .map_err(|err| note_content_type(err, &content_type))
        };
        result.map_err(|err| err.with_request_id(request_id))
    }

    /// Feed the body to the decoder until `message_stop`, the end of the
    /// body, or more than `idle_timeout` of silence.
    async fn read_stream(&self, mut response: reqwest::Response) -> Result<Response, ApiError> {
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

    async fn error_from_response(&self, response: reqwest::Response) -> ApiError {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        // A body that breaks off or stalls still tells us the status.
        let body = read_body(response, self.config.idle_timeout, MAX_ERROR_BODY_BYTES)
            .await
            .unwrap_or_default();
        ApiError::from_http_response(status, |name| header_str(&headers, name), &body)
    }
}

/// A request body as JSON bytes.
fn encode(request: &MessagesRequest) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(request).map_err(|err| {
        ApiError::new(
            ApiErrorKind::InvalidRequest,
            format!("could not encode the request: {err}"),
        )
    })
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
fn note_content_type(mut err: ApiError, content_type: &str) -> ApiError {
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

/// The fixed headers of every request.
fn request_headers(auth: &Auth) -> Result<HeaderMap, ApiError> {
    let invalid = |what: &str| {
        ApiError::new(
            ApiErrorKind::Authentication,
            format!("the {what} contains characters that cannot be sent in an HTTP header"),
        )
    };
    let mut headers = HeaderMap::new();
    match auth {
        Auth::ApiKey(key) => {
            let mut value = HeaderValue::from_str(key.trim()).map_err(|_| invalid("API key"))?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        Auth::BearerToken(token) => {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", token.trim()))
                .map_err(|_| invalid("auth token"))?;
            value.set_sensitive(true);
            headers.insert(header::AUTHORIZATION, value);
        }
    }
    headers.insert(
        "anthropic-version",
        HeaderValue::from_static(ANTHROPIC_VERSION),
    );
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(headers)
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
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
async fn read_body(
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

/// Classify a failure to get a response at all. A connection that could
/// not be made, even for lack of time, is a connection failure: the
/// endpoint never heard the request.
fn transport_error(err: &reqwest::Error) -> ApiError {
    let kind = if err.is_timeout() && !err.is_connect() {
        ApiErrorKind::Timeout
    } else {
        ApiErrorKind::Connection
    };
    ApiError::new(kind, error_chain(err))
}

/// An error and its causes on one line, without repeating a cause that the
/// previous message already quotes.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
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
