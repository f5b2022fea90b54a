//! How the mock answers as today's models do, and what it refuses, per the
//! documented rules (facts in /work/notes/api-facts.md, read 2026-11-23):
//!
//! - **Who thinks.** A model that thinks by default (the 5.x family) answers
//!   with a `thinking` block first unless the request turns thinking off
//!   with `{"type": "disabled"}`, which the models that always think refuse
//!   with a 400; a model whose thinking is opt-in (up to Opus 4.8) thinks
//!   only when asked. `between_tools` exists on Sonnet 5.5 only; manual
//!   `enabled` thinking is refused from Opus 4.7 on. The thinking text is
//!   empty (the default `display` on these models omits it) but it is
//!   billed: each block adds [`THINKING_TOKENS`] of output (or what
//!   `MockServer::set_thinking_tokens` says).
//! - **Thinking comes back as it went out.** Each block's signature names
//!   the conversation it was produced in (a hash of the system prompt, the
//!   tools and the messages before it). A continued assistant turn the mock
//!   produced must come back exactly as produced, thinking included; on
//!   models that bind thinking (the preserved-thinking prefix check) every
//!   thinking block must also sit after exactly the prefix it was produced
//!   after, so a changed system prompt, tool list or earlier message is a
//!   400 with the documented message. On other thinking models only the
//!   latest assistant turn is checked, as the tool-use docs require.
//! - **No prefill.** A request that ends with an assistant turn is refused
//!   on the 5.x models, unless that turn was a `pause_turn` answer being
//!   continued, as the stop-reasons page says to do.
//! - **The window.** A prompt larger than the model's context window (or
//!   the one set with `MockServer::set_context_window`) gets the API's 400
//!   "prompt is too long: N tokens > M maximum", counted as the prompt
//!   cache simulation counts tokens.
//!
//! Models the catalog does not know never think and have a 200K window.

use std::collections::HashMap;

use luminos::ai::api::catalog::{Model, Thinking, lookup};
use serde_json::{Value, json};

use super::prefix_cache::{Prompt, read_prompt};

/// Output tokens one thinking block adds, though its text is omitted.
pub const THINKING_TOKENS: u64 = 40;

/// The window of a model the catalog does not know.
const UNKNOWN_WINDOW: u64 = 200_000;

/// What the mock knows about one accepted request.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// Answers carry a thinking block.
    pub thinks: bool,
    /// The conversation key of the reply (the prefix it follows).
    pub key: u64,
    /// The request's `max_tokens`.
    pub max_tokens: u64,
    /// Its prompt, for the cache.
    pub prompt: Prompt,
}

/// Why a request is refused.
#[derive(Debug, Clone)]
pub struct Rejection {
    pub message: String,
    /// A client bug (recorded as a protocol violation), rather than an
    /// answer a correct client must handle (a prompt past the window).
    pub violation: bool,
}

/// A reply the mock produced, to recognise it when it comes back.
#[derive(Debug, Clone)]
struct Produced {
    content: Value,
    stop_reason: String,
}

/// The assistant turns the mock produced, by the prefix they followed.
#[derive(Debug, Default)]
pub struct Conversations {
    produced: HashMap<u64, Produced>,
    /// Overrides the model's context window.
    pub context_window: Option<u64>,
}

impl Conversations {
    /// Check `body` against the rules above.
    pub fn check(&self, body: &Value) -> Result<Accepted, Rejection> {
        let model = body["model"].as_str().and_then(lookup);
        let thinks = match model {
            Some(model) => thinks(model, &body["thinking"]).map_err(violation)?,
            None => false,
        };
        let binds = model.is_some_and(|m| m.binds_thinking);
        let messages = body["messages"].as_array().map_or(&[][..], Vec::as_slice);
        let last_assistant = messages.iter().rposition(|m| m["role"] == "assistant");
        let (prompt, keys) = read_prompt(body);
        for (k, message) in messages.iter().enumerate() {
            if message["role"] != "assistant" {
                continue;
            }
            let key = keys[k];
            for (j, block) in blocks(message).enumerate() {
                let seal = match block["type"].as_str() {
                    Some("thinking") => block["signature"].as_str(),
                    Some("redacted_thinking") => block["data"].as_str(),
                    _ => continue,
                };
                match seal.and_then(key_of_seal) {
                    None => {
                        return Err(violation(format!(
                            "messages.{k}.content.{j}: Invalid `signature` in `thinking` block."
                        )));
                    }
                    Some(bound) if binds && bound != key => {
                        return Err(violation(format!(
                            "messages.{k}.content.{j}: Invalid `signature` in `thinking` block. The \
                             block is bound to a different conversation. Remove the block, or set \
                             `thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\"."
                        )));
                    }
                    Some(_) => {}
                }
            }
            let Some(produced) = self.produced.get(&key) else {
                continue;
            };
            let checked = binds || Some(k) == last_assistant;
            if checked && has_thinking(&produced.content) && normalized(message) != produced.content
            {
                return Err(violation(format!(
                    "messages.{k}: an assistant turn must be sent back exactly as it was \
                     received, its thinking blocks unaltered and in order"
                )));
            }
        }
        if let Some(last) = messages.last().filter(|m| m["role"] == "assistant") {
            let continues_pause = self
                .produced
                .get(&keys[messages.len() - 1])
                .is_some_and(|p| p.stop_reason == "pause_turn" && normalized(last) == p.content);
            let refuses_prefill = model.is_some_and(|m| m.thinking != Thinking::OptIn);
            if refuses_prefill && !continues_pause {
                return Err(violation(
                    "assistant message prefill is not supported for this model: the last \
                     message must be from the user"
                        .to_string(),
                ));
            }
        }
        let window = self
            .context_window
            .or(model.map(|m| m.context_window))
            .unwrap_or(UNKNOWN_WINDOW);
        let tokens = prompt.tokens();
        if tokens > window {
            return Err(Rejection {
                message: format!("prompt is too long: {tokens} tokens > {window} maximum"),
                violation: false,
            });
        }
        Ok(Accepted {
            thinks,
            key: keys[messages.len()],
            max_tokens: body["max_tokens"].as_u64().unwrap_or(0),
            prompt,
        })
    }

    /// Remember the reply produced for a request with `key`.
    pub fn produced(&mut self, key: u64, content: Value, stop_reason: &str) {
        self.produced.insert(
            key,
            Produced {
                content,
                stop_reason: stop_reason.to_string(),
            },
        );
    }
}

fn violation(message: String) -> Rejection {
    Rejection {
        message,
        violation: true,
    }
}

/// Whether `model` answers with thinking given the request's `thinking`
/// (`Value::Null` when absent), or why the request is refused.
fn thinks(model: &Model, thinking: &Value) -> Result<bool, String> {
    let kind = match thinking {
        Value::Null => None,
        _ => Some(thinking["type"].as_str().unwrap_or("")),
    };
    match kind {
        None => Ok(model.thinking != Thinking::OptIn),
        Some("disabled") if model.thinking == Thinking::Always => Err(
            "\"thinking.type.disabled\" is not supported for this model. Use \
             \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking \
             behavior."
                .to_string(),
        ),
        Some("disabled") => Ok(false),
        Some("adaptive") => Ok(true),
        Some("between_tools") if model.between_tools => Ok(true),
        Some("between_tools") => Err(format!(
            "thinking.type: \"between_tools\" is not supported by {}",
            model.id
        )),
        // Manual thinking with a budget: refused from Opus 4.7 on.
        Some("enabled")
            if model.thinking == Thinking::OptIn
                && !matches!(model.id, "claude-opus-4-7" | "claude-opus-4-8") =>
        {
            match thinking["budget_tokens"].as_u64() {
                Some(n) if n >= 1024 => Ok(true),
                _ => Err("thinking.budget_tokens: must be at least 1024".to_string()),
            }
        }
        Some("enabled") => Err(format!(
            "thinking.type: \"enabled\" is not supported by {}; use \"adaptive\"",
            model.id
        )),
        Some(other) => Err(format!("thinking.type: unknown type {other:?}")),
    }
}

/// The seal (signature or data) of a thinking block produced after the
/// prefix `key`.
pub fn seal(key: u64) -> String {
    format!("mockSig{key:016x}")
}

fn key_of_seal(seal: &str) -> Option<u64> {
    u64::from_str_radix(seal.strip_prefix("mockSig")?, 16).ok()
}

/// A message's content without caching marks.
fn normalized(message: &Value) -> Value {
    json!({"role": message["role"], "content": strip(&message["content"])})
}

/// The produced content of a reply, as a message to compare with.
pub fn produced_message(blocks: Vec<Value>) -> Value {
    json!({"role": "assistant", "content": blocks})
}

fn has_thinking(message: &Value) -> bool {
    blocks(message).any(|b| b["type"] == "thinking" || b["type"] == "redacted_thinking")
}

fn blocks(message: &Value) -> impl Iterator<Item = &Value> {
    message["content"].as_array().into_iter().flatten()
}

/// `value` with the `cache_control` key of every object removed, the
/// objects standing alone or in arrays at any depth. The other keys keep
/// their order: the result is hashed as text.
fn strip(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
        Value::Object(map) => {
            let mut map = map.clone();
            map.shift_remove("cache_control");
            Value::Object(map)
        }
        other => other.clone(),
    }
}
