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
//!   [`ApiErrorKind::BrokenStream`](crate::ai::api::ApiErrorKind::BrokenStream) error, never a half message.
//!
//! [`ResponseDecoder`] chains [`super::sse::SseParser`] and [`Accumulator`] so
//! the transport only feeds bytes.
//!
//! The parts, each in its own file:
//!
//! - `event`: the typed stream events and [`parse_event`], which gives an
//!   SSE event its meaning (or none);
//! - `accumulator`: the [`Accumulator`] state machine that folds events
//!   into a response, by the rules above;
//! - `message`: [`response_from_message_json`], the same rules applied to
//!   a whole, non-streamed message;
//! - this module: the [`ResponseDecoder`] that chains the SSE parser and
//!   the accumulator and says, chunk by chunk, whether the reply made
//!   progress (see [`ResponseDecoder::push`]), and [`decode_all`].

mod accumulator;
mod event;
mod message;

use super::error::ApiError;
use super::sse::{SseEvent, SseParser};
use super::types::Response;

pub(crate) use accumulator::Accumulator;
use event::StreamEvent;
pub(crate) use event::parse_event;
pub use message::response_from_message_json;

/// Bytes in, [`Response`] out: an [`SseParser`] feeding an [`Accumulator`].
#[derive(Debug, Default)]
pub(crate) struct ResponseDecoder {
    parser: SseParser,
    accumulator: Accumulator,
    /// Some event of the Messages API was read (a ping counts).
    recognized: bool,
}

impl ResponseDecoder {
    pub(crate) fn new() -> ResponseDecoder {
        ResponseDecoder {
            parser: SseParser::new(),
            accumulator: Accumulator::new(),
            recognized: false,
        }
    }

    /// Feed the next chunk of the body. Stops at the first error. Returns
    /// whether the chunk moved the reply forward: `message_start`; after
    /// it, a block starting or stopping, a delta that carries something,
    /// `message_delta` or `message_stop`; and a ping while a thinking or
    /// tool-use block is open (see [`Accumulator::is_working_unseen`]).
    /// Keep-alives anywhere else, comments, events this client does not
    /// know and bytes that complete no event are no progress, so a stream
    /// of them alone stalls.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<bool, ApiError> {
        let mut progress = false;
        for sse in self.parser.push(chunk) {
            progress |= self.apply(&sse)?;
        }
        Ok(progress)
    }

    /// Whether any event of the Messages API has been read: a body without
    /// one is not the API's answer.
    pub(crate) fn is_recognized(&self) -> bool {
        self.recognized
    }

    /// True once `message_stop` has arrived; the rest of the body is noise.
    pub(crate) fn is_complete(&self) -> bool {
        self.accumulator.is_complete()
    }

    /// True once `message_start` has arrived.
    pub(crate) fn has_started(&self) -> bool {
        self.accumulator.has_started()
    }

    /// The body has ended: the response, or why there is none. The
    /// decoder is spent after it (it still says whether it recognized the
    /// body).
    pub(crate) fn finish(&mut self) -> Result<Response, ApiError> {
        if let Some(sse) = self.parser.finish() {
            self.apply(&sse)?;
        }
        std::mem::take(&mut self.accumulator).finish()
    }

    /// Fold in one event; returns whether it was progress (see
    /// [`ResponseDecoder::push`]).
    fn apply(&mut self, sse: &SseEvent) -> Result<bool, ApiError> {
        if self.accumulator.is_complete() {
            return Ok(false);
        }
        let Some(event) = parse_event(sse)? else {
            return Ok(false);
        };
        self.recognized = true;
        let progress = match &event {
            StreamEvent::MessageStart { .. }
            | StreamEvent::ContentBlockStart { .. }
            | StreamEvent::ContentBlockStop { .. }
            | StreamEvent::MessageDelta { .. }
            | StreamEvent::MessageStop => true,
            StreamEvent::ContentBlockDelta { delta, .. } => delta.carries_content(),
            // Whether a ping says the model is still at work depends on
            // where in the message it comes.
            StreamEvent::Ping => self.accumulator.is_working_unseen(),
            // An error event ends the attempt either way.
            StreamEvent::Error { .. } | StreamEvent::Unknown => false,
        };
        self.accumulator.apply(event)?;
        // Before `message_start` nothing but `message_start` counts.
        Ok(progress && self.accumulator.has_started())
    }
}

/// Decode a whole stream body at once.
pub fn decode_all(body: &[u8]) -> Result<Response, ApiError> {
    let mut decoder = ResponseDecoder::new();
    decoder.push(body)?;
    decoder.finish()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props;
