//! A whole, non-streamed message body read into the same [`Response`] a
//! stream gives, by the same rules. Used for a batch's results and for a
//! server that answers `stream: true` with plain JSON; nothing here knows
//! about events or bytes arriving in pieces.

use serde::Deserialize;
use serde_json::Value;

use super::accumulator::empty_object;
use super::event::{StreamErrorBody, UsageUpdate, broken};
use crate::ai::api::error::{ApiError, ApiErrorKind};
use crate::ai::api::types::{ContentBlock, Response, StopDetails, StopReason, Usage};
use crate::lenient;

/// A whole message body as the API documents it, read leniently: a field
/// of the wrong type reads as empty, a block of a type this client does
/// not know is skipped.
#[derive(Debug, Default, Deserialize)]
struct WholeMessage {
    #[serde(rename = "type", default, deserialize_with = "lenient::text")]
    kind: String,
    #[serde(default, deserialize_with = "lenient::text")]
    id: String,
    #[serde(default, deserialize_with = "lenient::text")]
    model: String,
    #[serde(default, deserialize_with = "lenient::items")]
    content: Vec<WireBlock>,
    #[serde(default, deserialize_with = "lenient::some")]
    stop_reason: Option<StopReason>,
    #[serde(default, deserialize_with = "lenient::some")]
    stop_details: Option<StopDetails>,
    #[serde(default, deserialize_with = "lenient::some")]
    usage: Option<UsageUpdate>,
    /// An `{"type":"error",...}` body's error.
    #[serde(default, deserialize_with = "lenient::or_default")]
    error: StreamErrorBody,
}

/// One content block as the body carries it.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default, deserialize_with = "lenient::text")]
        text: String,
    },
    Thinking {
        #[serde(default, deserialize_with = "lenient::text")]
        thinking: String,
        #[serde(default, deserialize_with = "lenient::text")]
        signature: String,
    },
    RedactedThinking {
        #[serde(default, deserialize_with = "lenient::text")]
        data: String,
    },
    ToolUse {
        #[serde(default, deserialize_with = "lenient::text")]
        id: String,
        #[serde(default, deserialize_with = "lenient::text")]
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Unknown,
}

/// A complete, non-streamed message body (`{"type":"message",...}`): a
/// batch's succeeded result, or the answer of an Anthropic-compatible
/// server that ignores `stream: true`. Same rules as the stream: thinking
/// blocks are kept, unknown blocks are skipped, tool input must be an
/// object, and a tool call the output limit cut off is named in
/// [`Response::cut_off_tool`] rather than kept.
pub fn response_from_message_json(body: &[u8]) -> Result<Response, ApiError> {
    let message: WholeMessage = serde_json::from_slice(body)
        .map_err(|err| broken(format!("unreadable JSON response: {err}")))?;
    if message.kind == "error" {
        let error = message.error;
        return Err(ApiError::new(
            ApiErrorKind::from_stream_error_type(&error.kind),
            format!("error response: {}: {}", error.kind, error.message),
        ));
    }
    let mut content = message
        .content
        .into_iter()
        .filter_map(|block| block.into_content().transpose())
        .collect::<Result<Vec<_>, _>>()?;
    let cut_off_tool = take_cut_off_tool(&mut content, message.stop_reason.as_ref());
    let mut usage = Usage::default();
    if let Some(update) = message.usage {
        update.apply_to(&mut usage);
    }
    Ok(Response {
        id: message.id,
        model: message.model,
        content,
        stop_reason: message.stop_reason,
        stop_details: message.stop_details,
        cut_off_tool,
        usage,
    })
}

impl WireBlock {
    /// The block as a response holds it (none for one this client does not
    /// know); a tool call's missing input is an empty object, an input that
    /// is neither an object nor a string (which the engine reads
    /// leniently) an error.
    fn into_content(self) -> Result<Option<ContentBlock>, ApiError> {
        Ok(Some(match self {
            WireBlock::Text { text } => ContentBlock::text(text),
            WireBlock::Thinking {
                thinking,
                signature,
            } => ContentBlock::Thinking {
                thinking,
                signature,
            },
            WireBlock::RedactedThinking { data } => ContentBlock::RedactedThinking { data },
            WireBlock::ToolUse { id, name, input } => {
                let input = match input {
                    Value::Null => empty_object(),
                    input @ (Value::Object(_) | Value::String(_)) => input,
                    _ => {
                        return Err(ApiError::new(
                            ApiErrorKind::MalformedToolInput,
                            format!(
                                "input for tool '{name}' is neither a JSON object nor a string"
                            ),
                        ));
                    }
                };
                ContentBlock::ToolUse {
                    id,
                    name,
                    input,
                    cache_control: None,
                }
            }
            WireBlock::Unknown => return Ok(None),
        }))
    }
}

/// A whole message that stopped at `max_tokens` right after a tool call
/// was cut off in that call, as a stream's unparsable JSON shows: its
/// input may be incomplete, so it is taken out of `content` and named,
/// never run.
fn take_cut_off_tool(
    content: &mut Vec<ContentBlock>,
    stop_reason: Option<&StopReason>,
) -> Option<String> {
    if stop_reason == Some(&StopReason::MaxTokens)
        && let Some(ContentBlock::ToolUse { name, .. }) = content.last()
    {
        let name = name.clone();
        content.pop();
        return Some(name);
    }
    None
}
