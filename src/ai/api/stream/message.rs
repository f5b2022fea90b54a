//! A whole, non-streamed message body read into the same [`Response`] a
//! stream gives, by the same rules. Used for a batch's results and for a
//! server that answers `stream: true` with plain JSON; nothing here knows
//! about events or bytes arriving in pieces.

use serde_json::Value;

use super::accumulator::empty_object;
use super::event::{StreamErrorBody, UsageUpdate, broken};
use crate::ai::api::error::{ApiError, ApiErrorKind};
use crate::ai::api::types::{ContentBlock, Response, StopReason, Usage};

/// A complete, non-streamed message body (`{"type":"message",...}`): a
/// batch's succeeded result, or the answer of an Anthropic-compatible
/// server that ignores `stream: true`. Same rules as the stream: thinking
/// blocks are kept, unknown blocks are skipped, tool input must be an
/// object, and a tool call the output limit cut off is named in
/// [`Response::cut_off_tool`] rather than kept.
pub fn response_from_message_json(body: &[u8]) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|err| broken(format!("unreadable JSON response: {err}")))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_response(&value));
    }
    let mut content = content_blocks(&value)?;
    let stop_reason: Option<StopReason> = value
        .get("stop_reason")
        .and_then(|r| serde_json::from_value(r.clone()).ok());
    let cut_off_tool = take_cut_off_tool(&mut content, stop_reason.as_ref());
    let mut usage = Usage::default();
    if let Some(update) = value
        .get("usage")
        .and_then(|u| serde_json::from_value::<UsageUpdate>(u.clone()).ok())
    {
        update.apply_to(&mut usage);
    }
    Ok(Response {
        id: text(&value, "id"),
        model: text(&value, "model"),
        content,
        stop_reason,
        stop_details: value
            .get("stop_details")
            .and_then(|d| serde_json::from_value(d.clone()).ok()),
        cut_off_tool,
        usage,
    })
}

/// The string at `key` of `v`, or empty.
fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

/// The error an `{"type":"error",...}` body reports, of the kind its
/// error type names.
fn error_response(value: &Value) -> ApiError {
    let error: StreamErrorBody = serde_json::from_value(value["error"].clone()).unwrap_or_default();
    ApiError::new(
        ApiErrorKind::from_stream_error_type(&error.kind),
        format!("error response: {}: {}", error.kind, error.message),
    )
}

/// The message's content blocks we know, in order (unknown ones skipped);
/// an error when a tool call's input is not an object.
fn content_blocks(value: &Value) -> Result<Vec<ContentBlock>, ApiError> {
    let mut content = Vec::new();
    for block in value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => content.push(ContentBlock::text(text(block, "text"))),
            Some("thinking") => content.push(ContentBlock::Thinking {
                thinking: text(block, "thinking"),
                signature: text(block, "signature"),
            }),
            Some("redacted_thinking") => content.push(ContentBlock::RedactedThinking {
                data: text(block, "data"),
            }),
            Some("tool_use") => content.push(tool_use(block)?),
            _ => {}
        }
    }
    Ok(content)
}

/// A `tool_use` block; no input is an empty object, an input that is
/// neither an object nor a string (which the engine reads leniently) an
/// error.
fn tool_use(block: &Value) -> Result<ContentBlock, ApiError> {
    let name = text(block, "name");
    let input = match block.get("input") {
        None | Some(Value::Null) => empty_object(),
        Some(input @ (Value::Object(_) | Value::String(_))) => input.clone(),
        Some(_) => {
            return Err(ApiError::new(
                ApiErrorKind::MalformedToolInput,
                format!("input for tool '{name}' is neither a JSON object nor a string"),
            ));
        }
    };
    Ok(ContentBlock::ToolUse {
        id: text(block, "id"),
        name,
        input,
        cache_control: None,
    })
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
