//! A model session: the one door every request of a run goes through.
//!
//! It wraps the shared [`Client`] with what the passes must not forget:
//! - a final redaction sweep over every string of every outgoing request
//!   (system prompt, message text, tool results, echoed tool inputs), so no
//!   secret reaches the API even if a source forgot to redact;
//! - token accounting into the run's shared [`TokenTracker`];
//! - the run's scope (the base scan's [`ScanFilter`]), so the tools show the
//!   model only what the scan kept;
//! - one stderr line per retry.
//!
//! It is `Send + Sync` and shared by reference (or `Arc`) between concurrent
//! dir loops; it holds no per-loop state.

use std::sync::Arc;

use serde_json::Value;

use crate::ai::api::caching::Reuse;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::cost::TokenTracker;
use crate::ai::api::types::{Content, MessagesRequest};
use crate::ai::api::{
    ApiError, Client, ContentBlock, Message, Response, RetryNotice, ToolDefinition,
};
use crate::progress::Progress;
use crate::redact::Redactor;
use crate::scan::ScanFilter;

/// The shared door to the model.
pub struct Session {
    client: Client,
    redactor: Arc<Redactor>,
    tracker: Arc<TokenTracker>,
    scope: Option<ScanFilter>,
}

impl Session {
    /// A session over `client` that reports retries on `progress`.
    pub fn new(
        client: Client,
        redactor: Arc<Redactor>,
        tracker: Arc<TokenTracker>,
        progress: &Progress,
    ) -> Session {
        let progress = progress.clone();
        let client = client.with_retry_observer(Arc::new(move |notice: &RetryNotice| {
            progress.ai(&notice.to_string());
        }));
        Session {
            client,
            redactor,
            tracker,
            scope: None,
        }
    }

    /// This session with the run's scope: listings leave out what `scope`
    /// does (ignored and excluded names).
    pub fn with_scope(mut self, scope: ScanFilter) -> Session {
        self.scope = Some(scope);
        self
    }

    /// The run's scope, if it has one.
    pub fn scope(&self) -> Option<&ScanFilter> {
        self.scope.as_ref()
    }

    /// The model every request uses.
    pub fn model(&self) -> &str {
        self.client.model()
    }

    /// The most tokens a request may carry: the model's context window
    /// (catalog) less the reply's `max_tokens`.
    pub fn window_limit(&self) -> u64 {
        ModelFacts::of(self.model())
            .model
            .context_window
            .saturating_sub(u64::from(self.client.max_tokens()))
    }

    /// Tokens per byte of text for the model (catalog).
    pub fn tokens_per_byte(&self) -> f64 {
        ModelFacts::of(self.model()).model.tokens_per_byte
    }

    /// The run's redactor.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The run's token totals.
    pub fn tracker(&self) -> &TokenTracker {
        &self.tracker
    }

    /// Send one request (after the redaction sweep) and account its usage.
    /// `reuse` says whether its prompt is worth writing to the cache.
    pub async fn send(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolDefinition],
        reuse: Reuse,
    ) -> Result<Response, ApiError> {
        let mut request = self
            .client
            .request(system, messages.to_vec(), tools.to_vec());
        sweep_request(&self.redactor, &mut request);
        let response = self.client.send_with(&request, reuse).await?;
        self.tracker.record(&response.usage);
        Ok(response)
    }
}

/// Redact every user-derived string of `request` in place. Tool definitions
/// are ours and the model name is configuration, so they are left alone.
pub fn sweep_request(redactor: &Redactor, request: &mut MessagesRequest) {
    if !redactor.is_enabled() {
        return;
    }
    for block in &mut request.system {
        redact_string(redactor, &mut block.text);
    }
    for message in &mut request.messages {
        match &mut message.content {
            Content::Text(text) => redact_string(redactor, text),
            Content::Blocks(blocks) => {
                for block in blocks {
                    match block {
                        ContentBlock::Text { text, .. } => redact_string(redactor, text),
                        ContentBlock::ToolResult { content, .. } => {
                            redact_string(redactor, content)
                        }
                        ContentBlock::ToolUse { input, .. } => redact_value(redactor, input),
                    }
                }
            }
        }
    }
}

fn redact_string(redactor: &Redactor, text: &mut String) {
    let redacted = redactor.redact(text);
    if !redacted.hits.is_empty() {
        *text = redacted.text;
    }
}

fn redact_value(redactor: &Redactor, value: &mut Value) {
    match value {
        Value::String(text) => redact_string(redactor, text),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(redactor, v)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(redactor, v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}
