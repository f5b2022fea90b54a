//! The stream's vocabulary: the events of the Messages API stream as far
//! as this client cares about them, and [`parse_event`], which turns one
//! SSE event into one of them (or into nothing, for pings and kinds we do
//! not know). What the events mean for the response is
//! [`super::accumulator`]'s business.

use serde::Deserialize;
use serde_json::Value;

use crate::ai::api::error::{ApiError, ApiErrorKind};
use crate::ai::api::sse::SseEvent;
use crate::ai::api::types::{StopDetails, StopReason, Usage};

/// One event of the stream, as far as we care about it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StreamEvent {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: usize,
        content_block: BlockStart,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<UsageUpdate>,
    },
    MessageStop,
    Ping,
    Error {
        error: StreamErrorBody,
    },
    /// Any event type this client does not know.
    #[serde(other)]
    Unknown,
}

/// The `message` of `message_start`.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub(crate) struct MessageStart {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub usage: Option<UsageUpdate>,
}

/// A usage object whose fields may be missing or null.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub(crate) struct UsageUpdate {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_creation_input_tokens: Option<u64>,
    pub cache_read_input_tokens: Option<u64>,
    /// The cache writes by lifetime.
    #[serde(default)]
    pub cache_creation: Option<CacheCreation>,
}

/// `usage.cache_creation`: the cache writes by lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub(crate) struct CacheCreation {
    pub ephemeral_1h_input_tokens: Option<u64>,
}

impl UsageUpdate {
    /// Overwrite the fields of `usage` that this update carries.
    pub(crate) fn apply_to(&self, usage: &mut Usage) {
        let set = |field: &mut u64, value: Option<u64>| {
            if let Some(value) = value {
                *field = value;
            }
        };
        set(&mut usage.input_tokens, self.input_tokens);
        set(&mut usage.output_tokens, self.output_tokens);
        set(
            &mut usage.cache_creation_input_tokens,
            self.cache_creation_input_tokens,
        );
        set(
            &mut usage.cache_read_input_tokens,
            self.cache_read_input_tokens,
        );
        if let Some(hour) = self
            .cache_creation
            .and_then(|c| c.ephemeral_1h_input_tokens)
        {
            usage.cache_creation_1h_input_tokens = Some(hour);
        }
    }
}

/// The `content_block` of `content_block_start`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum BlockStart {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    /// Server tool blocks, anything new.
    #[serde(other)]
    Other,
}

/// The `delta` of `content_block_delta`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(
    clippy::enum_variant_names,
    reason = "each variant is named after the API's delta type"
)]
pub(crate) enum Delta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    /// `citations_delta`, anything new.
    #[serde(other)]
    Other,
}

impl Delta {
    /// Whether this delta adds anything to its block: an empty fragment or
    /// a kind this client skips is no sign that the reply is progressing.
    pub(crate) fn carries_content(&self) -> bool {
        match self {
            Delta::TextDelta { text } => !text.is_empty(),
            Delta::InputJsonDelta { partial_json } => !partial_json.is_empty(),
            Delta::ThinkingDelta { thinking } => !thinking.is_empty(),
            Delta::SignatureDelta { signature } => !signature.is_empty(),
            Delta::Other => false,
        }
    }
}

/// The `delta` of `message_delta`.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub(crate) struct MessageDeltaBody {
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// Why a refusal happened (`type`, `category`, `explanation`).
    #[serde(default)]
    pub stop_details: Option<StopDetails>,
}

/// The `error` of an `error` event.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub(crate) struct StreamErrorBody {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

/// Event names whose data this client must understand; anything else with
/// unparsable data is ignored.
pub(super) const KNOWN_EVENTS: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "error",
];

/// Give an SSE event its meaning. Unknown or empty events yield `None`; a
/// known event with unreadable data is a broken stream.
pub(crate) fn parse_event(sse: &SseEvent) -> Result<Option<StreamEvent>, ApiError> {
    let name = sse.event.as_deref().unwrap_or("");
    let known = KNOWN_EVENTS.contains(&name);
    if sse.data.trim().is_empty() {
        return if known {
            Err(broken(format!("'{name}' event without data")))
        } else {
            Ok(None)
        };
    }
    match serde_json::from_str::<StreamEvent>(&sse.data) {
        Ok(StreamEvent::Unknown) => Ok(None),
        Ok(event) => Ok(Some(event)),
        Err(err) if known => Err(broken(format!("unreadable '{name}' event: {err}"))),
        Err(err) => match serde_json::from_str::<Value>(&sse.data) {
            // Valid JSON that names a known type but has the wrong shape.
            Ok(value)
                if value
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| KNOWN_EVENTS.contains(&t)) =>
            {
                Err(broken(format!("unreadable event: {err}")))
            }
            _ => Ok(None),
        },
    }
}

pub(super) fn broken(message: impl AsRef<str>) -> ApiError {
    ApiError::new(ApiErrorKind::BrokenStream, message)
}
