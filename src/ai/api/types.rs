//! The Messages API vocabulary: requests, content blocks, responses and usage,
//! as serde types. Protocol only: no I/O, no retry, no agent logic.
//!
//! Thinking blocks (`thinking` with its `signature`, `redacted_thinking`)
//! are content like any other: a response keeps them in order, and an
//! assistant turn goes back into the history with them exactly as received,
//! because the API checks that a continued turn still carries them
//! unaltered (<https://platform.claude.com/docs/en/build-with-claude/thinking>
//! and the preserved-thinking prefix-check page, read 2026-11-23).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::catalog::Effort;

/// A `POST /v1/messages` body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MessagesRequest {
    pub model: String,
    pub max_tokens: u32,
    /// The system prompt as text blocks (we send one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<SystemBlock>,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDefinition>,
    /// How the model may think; absent leaves the model's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingParam>,
    /// `{"effort": ..}`; absent leaves the model's default effort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig>,
    /// Streamed replies for `/v1/messages`; absent from a batch's
    /// `params`, which are answered with whole messages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stream: bool,
}

/// The request's `thinking` parameter (adaptive thinking page and the
/// Sonnet 5.5 "what's new" page, read 2026-11-23).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingParam {
    /// The model decides whether and how much to think.
    Adaptive,
    /// Sonnet 5.5 only: no thinking up front, short notes between tool
    /// calls. Its lowest setting; it cannot turn thinking off.
    BetweenTools,
    /// No thinking (refused with a 400 by models that always think).
    Disabled,
    /// Legacy extended thinking with a token budget (the 4.5 generation).
    Enabled { budget_tokens: u32 },
}

/// The request's `output_config`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct OutputConfig {
    /// How much effort the model spends on its whole reply, thinking
    /// included (a behavioural signal, not a hard budget).
    pub effort: Effort,
}

/// A text block of the system prompt.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SystemBlock {
    #[serde(rename = "type")]
    pub kind: TextType,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl SystemBlock {
    pub fn text(text: impl Into<String>) -> Self {
        SystemBlock {
            kind: TextType::Text,
            text: text.into(),
            cache_control: None,
        }
    }
}

/// The literal `"text"`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum TextType {
    #[default]
    Text,
}

/// `{"type": "ephemeral"}`: a prompt-caching breakpoint.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CacheControl {
    #[serde(rename = "type")]
    pub kind: String,
    /// `"1h"` for the 1-hour lifetime; absent for the default 5 minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

impl CacheControl {
    /// A mark with the default lifetime (5 minutes).
    pub fn ephemeral() -> Self {
        CacheControl {
            kind: "ephemeral".to_string(),
            ttl: None,
        }
    }

    /// A mark whose prefix lives `ttl` (the default's spelling for 5
    /// minutes, so interactive requests stay as they were).
    pub fn lasting(ttl: super::catalog::CacheTtl) -> Self {
        CacheControl {
            ttl: match ttl {
                super::catalog::CacheTtl::FiveMinutes => None,
                super::catalog::CacheTtl::OneHour => Some("1h".to_string()),
            },
            ..CacheControl::ephemeral()
        }
    }
}

/// Who said a message.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One message of the conversation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Content,
}

impl Message {
    /// A user message with plain text content.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: Content::Text(text.into()),
        }
    }

    /// A user message made of blocks (tool results first).
    pub fn user_blocks(blocks: Vec<ContentBlock>) -> Self {
        Message {
            role: Role::User,
            content: Content::Blocks(blocks),
        }
    }

    /// The assistant's reply, as it goes back into the history.
    pub fn assistant(blocks: Vec<ContentBlock>) -> Self {
        Message {
            role: Role::Assistant,
            content: Content::Blocks(blocks),
        }
    }
}

/// Message content: a plain string or a list of blocks.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

/// A content block in a request or a response.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// The model's reasoning and the signature that binds it to this
    /// conversation. Sent back unaltered; its text is never output.
    Thinking { thinking: String, signature: String },
    /// Reasoning the API encrypted; sent back unaltered.
    RedactedThinking { data: String },
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            cache_control: None,
        }
    }

    pub fn tool_result(
        tool_use_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        ContentBlock::ToolResult {
            tool_use_id: tool_use_id.into(),
            content: content.into(),
            is_error,
            cache_control: None,
        }
    }

    /// Set or clear this block's caching breakpoint. Thinking blocks cannot
    /// carry one (they are cached as part of the prefix they sit in), so
    /// for them this does nothing.
    pub fn set_cache_control(&mut self, value: Option<CacheControl>) {
        match self {
            ContentBlock::Text { cache_control, .. }
            | ContentBlock::ToolUse { cache_control, .. }
            | ContentBlock::ToolResult { cache_control, .. } => *cache_control = value,
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {}
        }
    }

    /// This block's caching breakpoint, if it has one.
    pub fn cache_control(&self) -> Option<&CacheControl> {
        match self {
            ContentBlock::Text { cache_control, .. }
            | ContentBlock::ToolUse { cache_control, .. }
            | ContentBlock::ToolResult { cache_control, .. } => cache_control.as_ref(),
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => None,
        }
    }

    /// A `thinking` or `redacted_thinking` block.
    pub fn is_thinking(&self) -> bool {
        matches!(
            self,
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. }
        )
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    pub id: String,
    pub name: String,
    pub input: Value,
}

pub use crate::usage::Usage;

/// Why the model stopped (stop reasons page, read 2026-11-23).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    /// The reply reached `max_tokens`; a tool call may be cut off.
    MaxTokens,
    StopSequence,
    ToolUse,
    /// A server-side loop paused: send the turn back unchanged and call
    /// again to let it continue.
    PauseTurn,
    /// The model or a safety classifier declined.
    Refusal,
    /// The context window filled up while the model was answering.
    ModelContextWindowExceeded,
    #[serde(untagged)]
    Other(String),
}

/// Why a `refusal` happened, as `message_delta`'s `stop_details` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopDetails {
    /// `cyber`, `bio`, `general_harms`, ... when the API names one.
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub explanation: Option<String>,
}

/// A complete assistant response, assembled from the stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Response {
    pub id: String,
    pub model: String,
    /// Thinking, text and tool_use blocks, in the order received (other
    /// block kinds, such as server tool blocks, are dropped: luminos offers
    /// no server tools). A tool call cut off by `max_tokens` is not here;
    /// see [`Response::cut_off_tool`].
    pub content: Vec<ContentBlock>,
    pub stop_reason: Option<StopReason>,
    /// Details of a refusal, when the API sent them.
    pub stop_details: Option<StopDetails>,
    /// The name of the tool whose call the output limit cut off mid-JSON
    /// (`stop_reason` is `max_tokens`). The call cannot be run.
    pub cut_off_tool: Option<String>,
    pub usage: Usage,
}

impl Response {
    /// The tool calls, in order.
    pub fn tool_uses(&self) -> Vec<ToolUse> {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse {
                    id, name, input, ..
                } => Some(ToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// The text blocks, in order: what the model says. Thinking is not
    /// among them.
    pub fn texts(&self) -> Vec<&str> {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialize_in_wire_shape() {
        let msg = Message::user_blocks(vec![
            ContentBlock::tool_result("tu_1", "ok", false),
            ContentBlock::tool_result("tu_2", "boom", true),
            ContentBlock::text("go on"),
        ]);
        assert_eq!(
            serde_json::to_value(&msg).unwrap(),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "tu_1", "content": "ok"},
                {"type": "tool_result", "tool_use_id": "tu_2", "content": "boom", "is_error": true},
                {"type": "text", "text": "go on"}
            ]})
        );
        assert_eq!(
            serde_json::to_value(Message::user_text("hi")).unwrap(),
            json!({"role": "user", "content": "hi"})
        );
    }

    #[test]
    fn thinking_blocks_and_parameters_serialize_in_wire_shape() {
        let msg = Message::assistant(vec![
            ContentBlock::Thinking {
                thinking: "hm".into(),
                signature: "sig".into(),
            },
            ContentBlock::RedactedThinking { data: "enc".into() },
            ContentBlock::text("ok"),
        ]);
        assert_eq!(
            serde_json::to_value(&msg).unwrap(),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "redacted_thinking", "data": "enc"},
                {"type": "text", "text": "ok"}
            ]})
        );
        assert_eq!(
            serde_json::to_value(ThinkingParam::BetweenTools).unwrap(),
            json!({"type": "between_tools"})
        );
        assert_eq!(
            serde_json::to_value(ThinkingParam::Enabled {
                budget_tokens: 2048
            })
            .unwrap(),
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(
            serde_json::to_value(OutputConfig {
                effort: Effort::Medium
            })
            .unwrap(),
            json!({"effort": "medium"})
        );
        let mut block = ContentBlock::RedactedThinking { data: "x".into() };
        block.set_cache_control(Some(CacheControl::ephemeral()));
        assert_eq!(block.cache_control(), None);
    }

    #[test]
    fn unknown_stop_reasons_survive() {
        let r: StopReason = serde_json::from_value(json!("tool_use")).unwrap();
        assert_eq!(r, StopReason::ToolUse);
        let r: StopReason = serde_json::from_value(json!("model_context_window_exceeded")).unwrap();
        assert_eq!(r, StopReason::ModelContextWindowExceeded);
        let r: StopReason = serde_json::from_value(json!("brand_new")).unwrap();
        assert_eq!(r, StopReason::Other("brand_new".into()));
    }

    #[test]
    fn context_counts_cached_input() {
        let u = Usage {
            input_tokens: 10,
            output_tokens: 5,
            cache_creation_input_tokens: 100,
            cache_read_input_tokens: 1000,
            cache_creation_1h_input_tokens: None,
        };
        assert_eq!(u.context_tokens(), 1110);
    }
}
