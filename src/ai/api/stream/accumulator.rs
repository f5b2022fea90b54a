//! The state machine that folds typed stream events into one complete
//! [`Response`], by the rules in the [`stream`](super) module docs: blocks
//! are assembled in slots by their stream index, tool input is parsed when
//! its block stops, and nothing is returned before `message_stop`. It sees
//! events, never bytes ([`super::ResponseDecoder`] feeds it).

use serde_json::Value;

use super::event::{BlockStart, Delta, StreamEvent, broken};
use crate::ai::api::error::{ApiError, ApiErrorKind};
use crate::ai::api::types::{ContentBlock, Response, StopDetails, StopReason, Usage};

/// More content blocks than any reply can hold (each costs output tokens).
/// Slots are indexed by the stream's block index, so a garbled index must be
/// refused before it becomes an allocation.
pub(super) const MAX_BLOCKS: usize = 1 << 14;

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
    /// The block started last and not stopped yet.
    open: Option<usize>,
}

impl Accumulator {
    pub(crate) fn new() -> Accumulator {
        Accumulator::default()
    }

    /// True once `message_stop` has arrived.
    pub(crate) fn is_complete(&self) -> bool {
        self.stopped
    }

    /// True once `message_start` has arrived.
    pub(crate) fn has_started(&self) -> bool {
        self.started
    }

    /// True while a thinking or tool-use block is open: the model may work
    /// a long while there with nothing to show (thinking whose text is
    /// omitted comes as a lone signature, a tool's input a whole value at
    /// a time), and the API's pings are what says it still is.
    pub(crate) fn is_working_unseen(&self) -> bool {
        self.open
            .and_then(|index| self.slots.get(index))
            .and_then(Option::as_ref)
            .is_some_and(|slot| matches!(slot, Slot::Thinking { .. } | Slot::Tool { .. }))
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
        self.open = Some(index);
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
        if self.open == Some(index) {
            self.open = None;
        }
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

pub(super) fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A tool's input from its joined `partial_json`: `{}` when empty, an error
/// when it does not parse (usually a stream cut short) or is neither an
/// object nor a string (small models behind a compatible server send the
/// object as a JSON string; the engine reads it, see
/// [`crate::ai::engine::agent`]).
pub(super) fn parse_tool_input(name: &str, json: &str) -> Result<Value, ApiError> {
    if json.trim().is_empty() {
        return Ok(empty_object());
    }
    match serde_json::from_str::<Value>(json) {
        Ok(value @ (Value::Object(_) | Value::String(_))) => Ok(value),
        Ok(_) => Err(ApiError::new(
            ApiErrorKind::MalformedToolInput,
            format!("input for tool '{name}' is neither a JSON object nor a string"),
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
