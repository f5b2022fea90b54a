//! A pure accumulator for the Messages API stream: typed stream events in,
//! one complete [`Response`] out, or a typed error. No I/O.
//!
//! - Text blocks collect their `text_delta`s.
//! - `thinking` blocks collect their `thinking_delta`s and take the
//!   signature of their `signature_delta`; `redacted_thinking` blocks keep
//!   their `data`. Both stay in the response, in order, so the turn can be
//!   sent back exactly as received.
//! - A `tool_use` block's input is the concatenation of its `partial_json`
//!   fragments, parsed when the block stops (`{}` when there were none).
//!   JSON that does not parse is an error, unless the message stopped at
//!   `max_tokens`: then the call was cut off by the output limit, as the
//!   official SDKs report it, and it is left out of the content and named
//!   in [`Response::cut_off_tool`] (it must not run, and sending the same
//!   request again would only cut it off again).
//! - Block kinds we do not use (server tool blocks, anything new) and
//!   unknown delta kinds are skipped, never fatal.
//! - `usage` starts from `message_start`; fields present in `message_delta`
//!   overwrite it, because the API reports cumulative counts there.
//! - `ping` and unknown event types are ignored; an `error` event becomes a
//!   typed error.
//! - A stream that ends before `message_stop` is a
//!   [`ApiErrorKind::BrokenStream`] error, never a half message.
//!
//! [`ResponseDecoder`] chains [`super::sse::SseParser`] and [`Accumulator`] so
//! the transport only feeds bytes.

use serde::Deserialize;
use serde_json::Value;

use super::error::{ApiError, ApiErrorKind};
use super::sse::{SseEvent, SseParser};
use super::types::{ContentBlock, Response, StopDetails, StopReason, Usage};

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
const KNOWN_EVENTS: &[&str] = &[
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

fn broken(message: impl AsRef<str>) -> ApiError {
    ApiError::new(ApiErrorKind::BrokenStream, message)
}

/// More content blocks than any reply can hold (each costs output tokens).
/// Slots are indexed by the stream's block index, so a garbled index must be
/// refused before it becomes an allocation.
const MAX_BLOCKS: usize = 1 << 14;

/// A content block being assembled.
#[derive(Debug)]
enum Slot {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
        /// Set when the block stops: the parsed input, or why it did not
        /// parse (decided at the end, once the stop reason is known).
        input: Option<Result<Value, ApiError>>,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    RedactedThinking(String),
    /// A block kind we do not use; its deltas are dropped.
    Skipped,
}

/// Folds [`StreamEvent`]s into a [`Response`]. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    started: bool,
    stopped: bool,
    id: String,
    model: String,
    /// Blocks by stream index.
    slots: Vec<Option<Slot>>,
    stop_reason: Option<StopReason>,
    stop_details: Option<StopDetails>,
    usage: Usage,
}

impl Accumulator {
    pub(crate) fn new() -> Accumulator {
        Accumulator::default()
    }

    /// True once `message_stop` has arrived.
    pub(crate) fn is_complete(&self) -> bool {
        self.stopped
    }

    /// Fold in one event.
    pub(crate) fn apply(&mut self, event: StreamEvent) -> Result<(), ApiError> {
        match event {
            StreamEvent::MessageStart { message } => {
                self.started = true;
                self.id = message.id;
                self.model = message.model;
                if let Some(usage) = message.usage {
                    usage.apply_to(&mut self.usage);
                }
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.start_block(index, content_block)?,
            StreamEvent::ContentBlockDelta { index, delta } => self.apply_delta(index, delta)?,
            StreamEvent::ContentBlockStop { index } => self.stop_block(index)?,
            StreamEvent::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if delta.stop_details.is_some() {
                    self.stop_details = delta.stop_details;
                }
                if let Some(usage) = usage {
                    usage.apply_to(&mut self.usage);
                }
            }
            StreamEvent::MessageStop => {
                self.require_started("message_stop")?;
                self.stopped = true;
            }
            StreamEvent::Error { error } => {
                let kind = ApiErrorKind::from_stream_error_type(&error.kind);
                let what = if error.message.is_empty() {
                    error.kind
                } else {
                    format!("{}: {}", error.kind, error.message)
                };
                return Err(ApiError::new(
                    kind,
                    format!("error event in stream: {what}"),
                ));
            }
            StreamEvent::Ping | StreamEvent::Unknown => {}
        }
        Ok(())
    }

    /// The assembled response. Fails unless `message_stop` arrived.
    pub(crate) fn finish(mut self) -> Result<Response, ApiError> {
        if !self.stopped {
            return Err(broken(if self.started {
                "the stream ended before message_stop"
            } else {
                "the stream ended before message_start"
            }));
        }
        let cut_off = self.stop_reason == Some(StopReason::MaxTokens);
        let mut content = Vec::new();
        let mut cut_off_tool = None;
        for index in 0..self.slots.len() {
            // Blocks the server never stopped are closed here.
            self.stop_block(index)?;
            match self.slots[index].take() {
                Some(Slot::Text(text)) => content.push(ContentBlock::text(text)),
                Some(Slot::Tool {
                    id, name, input, ..
                }) => match input.unwrap_or_else(|| Ok(empty_object())) {
                    Ok(input) => content.push(ContentBlock::ToolUse {
                        id,
                        name,
                        input,
                        cache_control: None,
                    }),
                    // The output limit stopped the model mid-call.
                    Err(_) if cut_off => cut_off_tool = Some(name),
                    Err(err) => return Err(err),
                },
                Some(Slot::Thinking {
                    thinking,
                    signature,
                }) => content.push(ContentBlock::Thinking {
                    thinking,
                    signature,
                }),
                Some(Slot::RedactedThinking(data)) => {
                    content.push(ContentBlock::RedactedThinking { data })
                }
                Some(Slot::Skipped) | None => {}
            }
        }
        Ok(Response {
            id: self.id,
            model: self.model,
            content,
            stop_reason: self.stop_reason,
            stop_details: self.stop_details,
            cut_off_tool,
            usage: self.usage,
        })
    }

    fn require_started(&self, what: &str) -> Result<(), ApiError> {
        if self.started {
            Ok(())
        } else {
            Err(broken(format!("'{what}' before message_start")))
        }
    }

    fn start_block(&mut self, index: usize, start: BlockStart) -> Result<(), ApiError> {
        self.require_started("content_block_start")?;
        if index >= MAX_BLOCKS {
            return Err(broken(format!(
                "content block index {index} is beyond any real reply"
            )));
        }
        if self.slots.len() <= index {
            self.slots.resize_with(index + 1, || None);
        }
        if self.slots[index].is_some() {
            return Err(broken(format!("content block {index} started twice")));
        }
        self.slots[index] = Some(match start {
            BlockStart::Text { text } => Slot::Text(text),
            // The start event carries `input: {}`; the real input comes
            // only through `input_json_delta`.
            BlockStart::ToolUse { id, name } => Slot::Tool {
                id,
                name,
                json: String::new(),
                input: None,
            },
            BlockStart::Thinking {
                thinking,
                signature,
            } => Slot::Thinking {
                thinking,
                signature,
            },
            BlockStart::RedactedThinking { data } => Slot::RedactedThinking(data),
            BlockStart::Other => Slot::Skipped,
        });
        Ok(())
    }

    fn slot(&mut self, index: usize, what: &str) -> Result<&mut Slot, ApiError> {
        self.slots
            .get_mut(index)
            .and_then(Option::as_mut)
            .ok_or_else(|| {
                broken(format!(
                    "'{what}' for content block {index} that never started"
                ))
            })
    }

    fn apply_delta(&mut self, index: usize, delta: Delta) -> Result<(), ApiError> {
        let slot = self.slot(index, "content_block_delta")?;
        match (slot, delta) {
            (Slot::Text(text), Delta::TextDelta { text: more }) => text.push_str(&more),
            (
                Slot::Tool {
                    json, input: None, ..
                },
                Delta::InputJsonDelta { partial_json },
            ) => json.push_str(&partial_json),
            (Slot::Thinking { thinking, .. }, Delta::ThinkingDelta { thinking: more }) => {
                thinking.push_str(&more)
            }
            // The signature comes whole, just before the block stops; the
            // official SDKs take it as it is.
            (Slot::Thinking { signature, .. }, Delta::SignatureDelta { signature: whole }) => {
                *signature = whole
            }
            (Slot::Skipped, _) | (_, Delta::Other) => {}
            (_, delta) => {
                return Err(broken(format!(
                    "content block {index} got a delta of the wrong kind: {delta:?}"
                )));
            }
        }
        Ok(())
    }

    fn stop_block(&mut self, index: usize) -> Result<(), ApiError> {
        if let Slot::Tool {
            name,
            json,
            input: input @ None,
            ..
        } = self.slot(index, "content_block_stop")?
        {
            *input = Some(parse_tool_input(name, json));
        }
        Ok(())
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A tool's input from its joined `partial_json`: `{}` when empty, an error
/// when it does not parse (usually a stream cut short) or is not an object.
fn parse_tool_input(name: &str, json: &str) -> Result<Value, ApiError> {
    if json.trim().is_empty() {
        return Ok(empty_object());
    }
    match serde_json::from_str::<Value>(json) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(ApiError::new(
            ApiErrorKind::MalformedToolInput,
            format!("input for tool '{name}' is not a JSON object"),
        )),
        Err(err) => Err(ApiError::new(
            ApiErrorKind::MalformedToolInput,
            format!(
                "input for tool '{name}' is not valid JSON ({err}) after {} bytes",
                json.len()
            ),
        )),
    }
}

/// Bytes in, [`Response`] out: an [`SseParser`] feeding an [`Accumulator`].
#[derive(Debug, Default)]
pub(crate) struct ResponseDecoder {
    parser: SseParser,
    accumulator: Accumulator,
}

impl ResponseDecoder {
    pub(crate) fn new() -> ResponseDecoder {
        ResponseDecoder {
            parser: SseParser::new(),
            accumulator: Accumulator::new(),
        }
    }

    /// Feed the next chunk of the body. Stops at the first error.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<(), ApiError> {
        for sse in self.parser.push(chunk) {
            self.apply(&sse)?;
        }
        Ok(())
    }

    /// True once `message_stop` has arrived; the rest of the body is noise.
    pub(crate) fn is_complete(&self) -> bool {
        self.accumulator.is_complete()
    }

    /// The body has ended.
    pub(crate) fn finish(mut self) -> Result<Response, ApiError> {
        if let Some(sse) = self.parser.finish() {
            self.apply(&sse)?;
        }
        self.accumulator.finish()
    }

    fn apply(&mut self, sse: &SseEvent) -> Result<(), ApiError> {
        if self.accumulator.is_complete() {
            return Ok(());
        }
        match parse_event(sse)? {
            Some(event) => self.accumulator.apply(event),
            None => Ok(()),
        }
    }
}

/// Decode a whole stream body at once.
pub fn decode_all(body: &[u8]) -> Result<Response, ApiError> {
    let mut decoder = ResponseDecoder::new();
    decoder.push(body)?;
    decoder.finish()
}

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
        let error: StreamErrorBody =
            serde_json::from_value(value["error"].clone()).unwrap_or_default();
        return Err(ApiError::new(
            ApiErrorKind::from_stream_error_type(&error.kind),
            format!("error response: {}: {}", error.kind, error.message),
        ));
    }
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_string();
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
            Some("tool_use") => {
                let name = text(block, "name");
                let input = match block.get("input") {
                    None | Some(Value::Null) => empty_object(),
                    Some(input @ Value::Object(_)) => input.clone(),
                    Some(_) => {
                        return Err(ApiError::new(
                            ApiErrorKind::MalformedToolInput,
                            format!("input for tool '{name}' is not a JSON object"),
                        ));
                    }
                };
                content.push(ContentBlock::ToolUse {
                    id: text(block, "id"),
                    name,
                    input,
                    cache_control: None,
                });
            }
            _ => {}
        }
    }
    // A whole message that stopped at `max_tokens` right after a tool call
    // was cut off in that call, as a stream's unparsable JSON shows: its
    // input may be incomplete, so it is left out and named, never run.
    let stop_reason: Option<StopReason> = value
        .get("stop_reason")
        .and_then(|r| serde_json::from_value(r.clone()).ok());
    let mut cut_off_tool = None;
    if stop_reason == Some(StopReason::MaxTokens)
        && let Some(ContentBlock::ToolUse { name, .. }) = content.last()
    {
        cut_off_tool = Some(name.clone());
        content.pop();
    }
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

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props;
