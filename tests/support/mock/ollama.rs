//! The mock as Ollama's Anthropic compatibility layer answers
//! ([`super::MockServer::ollama`]): how a local model behind
//! `ANTHROPIC_BASE_URL=http://localhost:11434` behaves where it differs
//! from the Messages API. Read from ollama/ollama's
//! `docs/api/anthropic-compatibility.mdx` and `anthropic/anthropic.go`
//! (fetched 2026-11-29):
//!
//! - **Usage** has `input_tokens` and `output_tokens` only, in
//!   `message_start` and again in `message_delta`: no prompt cache, so
//!   `cache_control` is accepted and ignored, and every prompt token is
//!   plain input.
//! - **Not served**: `/v1/messages/count_tokens` and the Message Batches
//!   API. Unknown routes get the router's `404 page not found` as
//!   `text/plain`.
//! - **Thinking** is the model's: a request that does not turn it off
//!   (`{"type": "disabled"}`) gets a `thinking` block with its text and no
//!   signature (no `signature_delta`); what comes back in a later request
//!   is read for its text only, so nothing is checked about it, and any
//!   `thinking` type is taken.
//! - **The stream** has no `ping` and no `error` event (errors come as an
//!   HTTP status before the stream); a tool call's input comes whole in one
//!   `input_json_delta` after a `content_block_start` with `input: {}`.
//! - **The window** is the server's context length
//!   (`OLLAMA_CONTEXT_LENGTH`): a longer prompt is not refused but cut to
//!   it, silently, and answered from what is left. The mock answers it as
//!   if cut (its usage says the window) and records it
//!   ([`super::MockServer::over_window`]), so a test fails on it.
//!
//! Tokens are counted as the rest of the mock counts them (a token per four
//! bytes, `prefix_cache.rs`).

use serde_json::{Value, json};

use super::prefix_cache::read_prompt;
use super::thinking::Accepted;

/// How the mock answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// As the Messages API does (the default).
    #[default]
    Anthropic,
    /// As Ollama's compatibility layer does, with a context window of this
    /// many tokens.
    Ollama { window: u64 },
}

/// What the body of an unknown route says (Go's router).
pub const NOT_FOUND: &str = "404 page not found";

/// The thinking text a thinking reply carries (the model's own words,
/// streamed; there is no signature to omit it behind).
pub const THINKING_TEXT: &str = "Looking at what the request asks for.";

/// A request past the window: it was answered from its first `window`
/// tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverWindow {
    /// The request's index among the recorded ones.
    pub index: usize,
    /// Its prompt's tokens.
    pub tokens: u64,
    pub window: u64,
}

/// Take `body` as Ollama does: every request is accepted (its prompt cut
/// to `window` when longer, which `over` records), and it thinks unless
/// thinking is turned off.
pub fn accept(body: &Value, window: u64, index: usize, over: &mut Vec<OverWindow>) -> Accepted {
    let (prompt, keys) = read_prompt(body);
    let tokens = prompt.tokens();
    if tokens > window {
        over.push(OverWindow {
            index,
            tokens,
            window,
        });
    }
    let messages = body["messages"].as_array().map_or(0, Vec::len);
    Accepted {
        thinks: body["thinking"]["type"] != "disabled",
        key: keys[messages],
        max_tokens: body["max_tokens"].as_u64().unwrap_or(0),
        prompt,
    }
}

/// The usage Ollama reports: the prompt's tokens (at most the window) and
/// the output's.
pub fn usage_json(input_tokens: u64, output_tokens: u64) -> Value {
    json!({"input_tokens": input_tokens, "output_tokens": output_tokens})
}
