//! [`Reply`]: what the mock answers to one request — a streamed message
//! (text, tool calls, thinking) with optional faults, or a plain HTTP
//! response (API errors, HTML pages, garbage).

use std::time::Duration;

use luminos::ai::api::Usage;
use serde_json::{Value, json};

/// One content block of a scripted message.
#[derive(Debug, Clone, PartialEq)]
pub enum MockBlock {
    /// Streamed as `text_delta` fragments.
    Text(String),
    /// Streamed as `input_json_delta` fragments of `input`'s JSON. Without
    /// an `id` the mock makes one up: `toolu_mock_<request>_<n>`.
    ToolUse {
        id: Option<String>,
        name: String,
        input: Value,
    },
    /// Thinking, streamed as `thinking_delta`s and a `signature_delta` whose
    /// signature binds it to the conversation (see `thinking.rs`). Clients
    /// must send it back unaltered with its turn.
    Thinking(String),
    /// Encrypted thinking: its `data` is the mock's seal.
    RedactedThinking,
}

/// Something that goes wrong in the middle of a 200 stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamFault {
    /// Close the connection halfway through the events.
    DropMidStream,
    /// Send an `error` event halfway through, then end the stream.
    ErrorEvent { error_type: String, message: String },
    /// Cut the last tool call's JSON in half; the stream still ends with
    /// `content_block_stop`, `message_delta` and `message_stop`.
    TruncateToolJson,
    /// Send half the events, then nothing more, keeping the socket open.
    StallMidStream,
    /// Send the headers of a 200 event stream, then nothing, keeping the
    /// socket open.
    HeadersThenSilence,
    /// Send the headers, then only `ping` events, one every `every`,
    /// until the client leaves: no `message_start`, ever.
    PingsOnly { every: Duration },
    /// Send the whole stream one byte at a time, `every` apart.
    Trickle { every: Duration },
    /// Start the message and a text block, then send a one-character
    /// text delta every `every`, never ending: a reply that progresses
    /// forever.
    Endless { every: Duration },
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum ReplyBody {
    Stream(Box<StreamReply>),
    Http {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
    /// Accept the request and never answer, not even the headers.
    Silent,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct StreamReply {
    pub blocks: Vec<MockBlock>,
    pub stop_reason: Option<String>,
    pub usage: Option<Usage>,
    pub fault: Option<StreamFault>,
    pub noise: bool,
    pub crlf: bool,
    /// `stop_details` of the message_delta (refusals).
    pub stop_details: Option<Value>,
    /// Never add the thinking block a thinking model would.
    pub no_thinking: bool,
    /// Wait this long before each frame: a slow but steady reply.
    pub pace: Option<Duration>,
    /// After the first thinking or tool-use block starts, send only pings
    /// for `.0`, one every `.1`: the model at work without showing it.
    pub quiet_work: Option<(Duration, Duration)>,
}

/// The mock's answer to one request. Build one with the constructors, then
/// adjust it with the `with_*`/fault methods:
///
/// ```ignore
/// server.push(Reply::tool_use("read_file", json!({"path": "a.txt"})));
/// server.push(Reply::overloaded().retry_after_ms(200));
/// server.push(Reply::text("done").drop_mid_stream());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub(super) body: ReplyBody,
    pub(super) headers: Vec<(String, String)>,
    pub(super) delay: Duration,
}

impl Reply {
    fn stream(blocks: Vec<MockBlock>) -> Reply {
        Reply {
            body: ReplyBody::Stream(Box::new(StreamReply {
                blocks,
                ..StreamReply::default()
            })),
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// This reply with each tool call passed through `change` (its name and
    /// input), in order; a reply that is no stream comes back as it was.
    pub fn map_tool_uses(mut self, mut change: impl FnMut(&mut String, &mut Value)) -> Reply {
        if let ReplyBody::Stream(stream) = &mut self.body {
            for block in &mut stream.blocks {
                if let MockBlock::ToolUse { name, input, .. } = block {
                    change(name, input);
                }
            }
        }
        self
    }

    /// A streamed message with one text block; stop reason `end_turn`.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::stream(vec![MockBlock::Text(text.into())])
    }

    /// A streamed message with one tool call; stop reason `tool_use`.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Reply {
        Reply::tool_uses([(name.into(), input)])
    }

    /// Several tool calls in one message.
    pub fn tool_uses<N: Into<String>>(calls: impl IntoIterator<Item = (N, Value)>) -> Reply {
        Reply::stream(calls.into_iter().map(|(n, i)| tool_block(n, i)).collect())
    }

    /// A text block followed by tool calls.
    pub fn text_and_tool_uses<N: Into<String>>(
        text: impl Into<String>,
        calls: impl IntoIterator<Item = (N, Value)>,
    ) -> Reply {
        let mut blocks = vec![MockBlock::Text(text.into())];
        blocks.extend(calls.into_iter().map(|(n, i)| tool_block(n, i)));
        Reply::stream(blocks)
    }

    /// Any sequence of blocks.
    pub fn blocks(blocks: Vec<MockBlock>) -> Reply {
        Reply::stream(blocks)
    }

    /// An API error: `{"type":"error","error":{"type":..,"message":..}}`.
    pub fn error(status: u16, error_type: &str, message: &str) -> Reply {
        let body = json!({"type": "error", "error": {"type": error_type, "message": message}});
        Reply::raw(status, "application/json", body.to_string())
    }

    /// 429 `rate_limit_error`.
    pub fn rate_limited() -> Reply {
        Reply::error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        )
    }

    /// 529 `overloaded_error`.
    pub fn overloaded() -> Reply {
        Reply::error(529, "overloaded_error", "Overloaded")
    }

    /// 500 `api_error`.
    pub fn server_error() -> Reply {
        Reply::error(500, "api_error", "Internal server error")
    }

    /// 402 `billing_error`, as the API answers an account that cannot pay.
    pub fn billing_error() -> Reply {
        Reply::error(
            402,
            "billing_error",
            "Your credit balance is too low to access the API.",
        )
    }

    /// A refusal: HTTP 200, no content, stop reason `refusal` with
    /// `stop_details` naming `category` (refusals page, 2026-10).
    pub fn refusal(category: &str) -> Reply {
        let mut reply = Reply::stream(Vec::new()).with_stop_reason("refusal");
        let stream = reply.stream_mut();
        stream.stop_details = Some(json!({"type": "refusal", "category": category,
            "explanation": "The request was declined."}));
        stream.no_thinking = true;
        reply
    }

    /// An endpoint that accepts the request and never sends anything back.
    pub fn silent() -> Reply {
        Reply {
            body: ReplyBody::Silent,
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// 404 `not_found_error` for a model, as the API answers an unknown or
    /// retired model id.
    pub fn unknown_model(model: &str) -> Reply {
        Reply::error(404, "not_found_error", &format!("model: {model}"))
    }

    /// An HTML error page, as a proxy or load balancer sends one.
    pub fn html(status: u16) -> Reply {
        let page = format!(
            "<!DOCTYPE html>\n<html><head><title>{status} Bad Gateway</title>\
             <style>body {{ font-family: sans-serif }}</style></head>\n\
             <body><center><h1>{status} Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n"
        );
        Reply::raw(status, "text/html", page)
    }

    /// A web page answered with 200, as a base URL that points at a web
    /// site (or a captive portal) answers.
    pub fn web_page() -> Reply {
        Reply::raw(
            200,
            "text/html; charset=utf-8",
            "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head>\n\
             <body><h1>Welcome to nginx!</h1><p>If you see this page, the web server is \
             working.</p></body></html>\n",
        )
    }

    /// A 200 "event stream" of noise: bytes that hold no event at all.
    pub fn garbage_stream() -> Reply {
        let mut noise = b"\x00\xff\xfe garbage \x1b[2J".to_vec();
        noise.extend((0u8..=255).cycle().skip(7).step_by(13).take(600));
        noise.extend_from_slice(b"\ndata: {not json\n\n");
        Reply::raw(200, "text/event-stream", noise)
    }

    /// JSON with a 200 that is no message: a different API behind the URL.
    pub fn wrong_json() -> Reply {
        Reply::raw(
            200,
            "application/json",
            r#"{"status":"ok","version":"2.4.1"}"#,
        )
    }

    /// Any status, content type and body.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            body: ReplyBody::Http {
                status,
                content_type: content_type.to_string(),
                body: body.into(),
            },
            headers: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    /// Put a thinking block first.
    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Reply {
        self.stream_mut()
            .blocks
            .insert(0, MockBlock::Thinking(thinking.into()));
        self
    }

    /// No thinking block, even from a model that would think.
    pub fn without_thinking(mut self) -> Reply {
        self.stream_mut().no_thinking = true;
        self
    }

    /// The output limit stops the model in the middle of the last tool
    /// call: its JSON is cut, the stop reason is `max_tokens`, and the
    /// output is the request's whole `max_tokens`.
    pub fn cut_off_at_max_tokens(self) -> Reply {
        self.truncate_tool_json().with_stop_reason("max_tokens")
    }

    /// Stop with `pause_turn`: the client must send this turn back as it is
    /// and call again.
    pub fn pause_turn(self) -> Reply {
        self.with_stop_reason("pause_turn")
    }

    /// Report this stop reason instead of `end_turn`/`tool_use`.
    pub fn with_stop_reason(mut self, reason: &str) -> Reply {
        self.stream_mut().stop_reason = Some(reason.to_string());
        self
    }

    /// Report this usage instead of the simulated one.
    pub fn with_usage(mut self, usage: Usage) -> Reply {
        self.stream_mut().usage = Some(usage);
        self
    }

    /// Sprinkle comments, unknown events and unknown deltas into the stream.
    pub fn with_noise(mut self) -> Reply {
        self.stream_mut().noise = true;
        self
    }

    /// End SSE lines with CRLF.
    pub fn with_crlf(mut self) -> Reply {
        self.stream_mut().crlf = true;
        self
    }

    /// Close the connection halfway through the stream.
    pub fn drop_mid_stream(self) -> Reply {
        self.with_fault(StreamFault::DropMidStream)
    }

    /// Send an `error` event halfway through the stream.
    pub fn error_event(self, error_type: &str, message: &str) -> Reply {
        self.with_fault(StreamFault::ErrorEvent {
            error_type: error_type.to_string(),
            message: message.to_string(),
        })
    }

    /// Cut the last tool call's JSON; the stream otherwise ends normally.
    pub fn truncate_tool_json(self) -> Reply {
        self.with_fault(StreamFault::TruncateToolJson)
    }

    /// Stop sending halfway through the stream; keep the socket open.
    pub fn stall_mid_stream(self) -> Reply {
        self.with_fault(StreamFault::StallMidStream)
    }

    /// A 200 event stream whose headers come, then nothing.
    pub fn headers_then_silence() -> Reply {
        Reply::text("never sent").with_fault(StreamFault::HeadersThenSilence)
    }

    /// A 200 event stream of pings alone, one every `every`.
    pub fn pings_only(every: Duration) -> Reply {
        Reply::text("never sent").with_fault(StreamFault::PingsOnly { every })
    }

    /// Send this reply one byte at a time, `every` apart.
    pub fn trickle(self, every: Duration) -> Reply {
        self.with_fault(StreamFault::Trickle { every })
    }

    /// A reply that sends a character every `every` and never ends.
    pub fn endless(every: Duration) -> Reply {
        Reply::text("never sent").with_fault(StreamFault::Endless { every })
    }

    /// Wait `pace` before each frame: slow, steady progress.
    pub fn paced(mut self, pace: Duration) -> Reply {
        self.stream_mut().pace = Some(pace);
        self
    }

    /// After the first thinking or tool-use block starts, send only pings
    /// for `total`, one every `every` (thinking whose text is omitted, a
    /// long tool input being written).
    pub fn working_quietly(mut self, total: Duration, every: Duration) -> Reply {
        self.stream_mut().quiet_work = Some((total, every));
        self
    }

    pub fn with_fault(mut self, fault: StreamFault) -> Reply {
        self.stream_mut().fault = Some(fault);
        self
    }

    /// Wait this long before sending anything (a slow first byte). Adds to
    /// the server-wide latency.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Add a response header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// `retry-after-ms: <ms>`.
    pub fn retry_after_ms(self, ms: u64) -> Reply {
        self.header("retry-after-ms", &ms.to_string())
    }

    /// `retry-after: <secs>`.
    pub fn retry_after_secs(self, secs: u64) -> Reply {
        self.header("retry-after", &secs.to_string())
    }

    /// `x-should-retry: true|false`.
    pub fn should_retry(self, retry: bool) -> Reply {
        self.header("x-should-retry", if retry { "true" } else { "false" })
    }

    fn stream_mut(&mut self) -> &mut StreamReply {
        match &mut self.body {
            ReplyBody::Stream(stream) => stream,
            ReplyBody::Http { .. } | ReplyBody::Silent => {
                panic!("mock: this setting only applies to streamed replies")
            }
        }
    }
}

fn tool_block(name: impl Into<String>, input: Value) -> MockBlock {
    MockBlock::ToolUse {
        id: None,
        name: name.into(),
        input,
    }
}
