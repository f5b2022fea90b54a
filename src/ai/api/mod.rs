//! Our own Anthropic Messages API client, in layers:
//!
//! - [`types`]: the protocol vocabulary (serde types);
//! - [`sse`]: a pure server-sent-events parser, fed arbitrary byte chunks;
//! - [`stream`]: a pure accumulator that turns stream events into a
//!   [`types::Response`];
//! - [`error`]: typed errors, one line each;
//! - [`retry`]: the retry policy (which failures retry, and how long to wait);
//! - [`cost`]: token accounting and the price table;
//! - this module: the transport (reqwest) that ties them together.
//!
//! No Anthropic SDK is involved. Agent logic (prompts, tools, loops) lives in
//! [`crate::ai`], never here.

pub mod cost;
pub mod error;
pub mod retry;
pub mod sse;
pub mod stream;
pub mod types;

use std::sync::Arc;
use std::time::Duration;

use crate::config::Auth;

pub use error::{ApiError, ApiErrorKind};
pub use types::{ContentBlock, Message, MessagesRequest, Response, ToolDefinition, Usage};

/// `anthropic-version` header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// How long to wait for a TCP/TLS connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a stream may go without any bytes (pings count) before it is
/// treated as stalled. The API pings well inside this.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

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
    pub idle_timeout: Duration,
}

/// One retry about to happen, for the caller to report.
#[derive(Debug, Clone)]
pub struct RetryNotice {
    /// What failed.
    pub error: ApiError,
    /// 1-based number of the retry about to be made.
    pub attempt: u32,
    /// Retries allowed in total.
    pub max_retries: u32,
    /// How long the client waits before it.
    pub wait: Duration,
}

/// Called before each retry, so the caller can print one line.
pub type RetryObserver = Arc<dyn Fn(&RetryNotice) + Send + Sync>;

/// The Messages API client. Cheap to clone; share one per run.
#[derive(Clone)]
pub struct Client {
    config: Arc<ClientConfig>,
}

impl Client {
    /// Build a client.
    pub fn new(config: ClientConfig) -> Result<Client, ApiError> {
        let _ = config;
        todo!("issue 3")
    }

    /// Report each retry to `observer`.
    pub fn with_retry_observer(self, observer: RetryObserver) -> Client {
        let _ = observer;
        todo!("issue 3")
    }

    /// The model every request uses.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// A streaming request for this client's model and `max_tokens`, with the
    /// system prompt as one text block.
    pub fn request(
        &self,
        system: &str,
        messages: Vec<Message>,
        tools: Vec<ToolDefinition>,
    ) -> MessagesRequest {
        let _ = (system, messages, tools);
        todo!("issue 3")
    }

    /// Send `request` with prompt-caching breakpoints added (last tool, the
    /// system block, the last block of the newest user message), retrying per
    /// the retry policy. Returns the assembled response or the typed error of
    /// the last attempt.
    pub async fn send(&self, request: &MessagesRequest) -> Result<Response, ApiError> {
        let _ = request;
        todo!("issue 3")
    }
}
