//! What a [`Client`](super::Client) is built from: the credential, the
//! endpoint, the model and the timeouts, with the defaults a run starts
//! from. Plain data: nothing here opens a connection; the environment is
//! read in [`crate::config`], not here.

use std::time::Duration;

use super::{retry, settings};

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

/// How long an answer may go without progress before the attempt counts
/// as dead. For a stream, progress is the Messages API's events: before
/// `message_start`, only `message_start` itself (an endpoint that sends
/// headers and then silence, keep-alive pings or stray bytes is dead);
/// after it, content (a block starting or stopping, a delta that carries
/// something, the message's own delta and stop), and pings while a
/// thinking or tool-use block is open, where the model works without
/// showing it (thinking whose text is omitted comes as a lone signature;
/// a tool's input comes a whole value at a time). For a plain body,
/// progress is bytes. With one retry before the endpoint has given a
/// whole reply, a dead endpoint costs two of these.
/// `LUMINOS_IDLE_TIMEOUT_SECS` overrides it (see [`crate::config`]).
///
/// The streaming page (<https://platform.claude.com/docs/en/build-with-claude/streaming>,
/// read 2026-11-27): every stream runs `message_start`, then each block's
/// `content_block_start`, deltas and `content_block_stop`, then
/// `message_delta` and `message_stop`; "any number of ping events" may be
/// mixed in; an `error` event (`overloaded_error` when busy) may come after
/// the 200; unknown event types must be tolerated.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest one attempt may take, from sending the request to the last
/// byte of the reply, however steadily it progresses. A real reply of
/// luminos's largest `max_tokens` (32,768) fits with room to spare; the
/// errors page (read 2026-11-27) advises streaming for requests that may
/// run past 10 minutes, which every request here does.
/// `LUMINOS_ATTEMPT_DEADLINE_SECS` overrides it.
pub(crate) const ATTEMPT_DEADLINE: Duration = Duration::from_secs(20 * 60);

/// The `user-agent` of every request.
pub(crate) const USER_AGENT: &str = concat!("luminos/", env!("CARGO_PKG_VERSION"));

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
    /// The longest an answer may go without progress ([`IDLE_TIMEOUT`]).
    pub idle_timeout: Duration,
    /// The longest one attempt may take ([`ATTEMPT_DEADLINE`]).
    pub attempt_deadline: Duration,
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
            attempt_deadline: ATTEMPT_DEADLINE,
            retry_backoff: retry::INITIAL_BACKOFF,
        }
    }
}
