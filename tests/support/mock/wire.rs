//! The mock's wire format: a small HTTP/1.1 reader and writer over tokio TCP
//! (keep-alive, chunked responses), and the rendering of a scripted message
//! into Messages API stream events.
//!
//! Hand-rolled on purpose: faults such as a connection dropped mid-chunk or
//! a stream that stalls with the socket open need full control of the bytes.

use std::io;

use luminos::ai::api::Usage;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::prefix_cache::tokens_of;
use super::reply::{MockBlock, StreamFault, StreamReply};

/// Largest request head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// One parsed request.
pub struct HttpRequest {
    pub method: String,
    pub path: String,
    /// Lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The client asked to close the connection after this exchange.
    pub fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// Read the next request from a keep-alive connection. `Ok(None)` when the
/// client closed it between requests.
pub async fn read_request(
    sock: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> io::Result<Option<HttpRequest>> {
    let head_end = loop {
        if let Some(pos) = find(buf, b"\r\n\r\n") {
            break pos;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Err(io::Error::other("request head too large"));
        }
        if read_more(sock, buf).await? == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            };
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or("").split(' ');
    let method = request_line.next().unwrap_or("").to_string();
    let path = request_line.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    buf.drain(..head_end + 4);
    let mut request = HttpRequest {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        request.body = read_chunked_body(sock, buf).await?;
    } else {
        let length: usize = request
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < length {
            if read_more(sock, buf).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        request.body = buf.drain(..length).collect();
    }
    Ok(Some(request))
}

async fn read_chunked_body(sock: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(pos) = find(buf, b"\r\n") {
                break pos;
            }
            if read_more(sock, buf).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        };
        let size_text = String::from_utf8_lossy(&buf[..line_end]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(io::Error::other)?;
        buf.drain(..line_end + 2);
        while buf.len() < size + 2 {
            if read_more(sock, buf).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        body.extend(buf.drain(..size));
        buf.drain(..2);
        if size == 0 {
            return Ok(body);
        }
    }
}

async fn read_more(sock: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0u8; 16 * 1024];
    let n = sock.read(&mut chunk).await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn head(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// A complete response with a `content-length`.
pub async fn write_plain(
    sock: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra: &[(String, String)],
    body: &[u8],
) -> io::Result<()> {
    let mut headers = vec![
        ("content-type".to_string(), content_type.to_string()),
        ("content-length".to_string(), body.len().to_string()),
    ];
    headers.extend_from_slice(extra);
    let mut out = head(status, &headers);
    out.extend_from_slice(body);
    sock.write_all(&out).await?;
    sock.flush().await
}

/// The head of a 200 event stream sent with chunked encoding.
pub async fn write_stream_head(sock: &mut TcpStream, extra: &[(String, String)]) -> io::Result<()> {
    let mut headers = vec![
        (
            "content-type".to_string(),
            "text/event-stream; charset=utf-8".to_string(),
        ),
        ("cache-control".to_string(), "no-cache".to_string()),
        ("transfer-encoding".to_string(), "chunked".to_string()),
    ];
    headers.extend_from_slice(extra);
    sock.write_all(&head(200, &headers)).await?;
    sock.flush().await
}

/// Send one frame as one or two chunks (cut at a random byte), flushing
/// each, so the client sees events split at arbitrary places.
pub async fn write_frame(
    sock: &mut TcpStream,
    frame: &str,
    rng: &mut fastrand::Rng,
) -> io::Result<()> {
    let bytes = frame.as_bytes();
    let cut = if bytes.len() > 1 && rng.bool() {
        rng.usize(1..bytes.len())
    } else {
        bytes.len()
    };
    for part in [&bytes[..cut], &bytes[cut..]] {
        if part.is_empty() {
            continue;
        }
        let mut chunk = format!("{:x}\r\n", part.len()).into_bytes();
        chunk.extend_from_slice(part);
        chunk.extend_from_slice(b"\r\n");
        sock.write_all(&chunk).await?;
        sock.flush().await?;
    }
    Ok(())
}

/// The terminating chunk of a chunked body.
pub async fn write_stream_end(sock: &mut TcpStream) -> io::Result<()> {
    sock.write_all(b"0\r\n\r\n").await?;
    sock.flush().await
}

/// What to do with the rendered frames.
pub enum Ending {
    /// Send them all and end the body.
    Complete,
    /// Send this many, then close the socket without ending the body.
    DropAfter(usize),
    /// Send this many, then go silent with the socket open.
    StallAfter(usize),
    /// Send this many, then a ping every `.1` until the client leaves.
    PingsAfter(usize, std::time::Duration),
    /// Send this many, then a one-character text delta for block 0 every
    /// `.1` until the client leaves.
    DeltasAfter(usize, std::time::Duration),
}

/// How the frames go out, when not as fast as possible.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timing {
    /// Wait this long before each frame.
    pub pace: Option<std::time::Duration>,
    /// Send every byte on its own, this long apart.
    pub trickle: Option<std::time::Duration>,
    /// After frame `.0`, only pings for `.1`, one every `.2`.
    pub quiet: Option<(usize, std::time::Duration, std::time::Duration)>,
}

/// The frames of a scripted message and how the stream ends.
pub struct RenderedStream {
    pub frames: Vec<String>,
    pub ending: Ending,
    pub timing: Timing,
    /// Output tokens reported.
    pub output_tokens: u64,
    /// The content as a client assembles it, in wire shape.
    pub content: Vec<Value>,
    /// The stop reason sent.
    pub stop_reason: String,
}

fn frame(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// One delta of a content block, its text already a JSON string: a reply
/// is mostly deltas, and building each as a `Value` and printing it again
/// was most of what rendering a reply cost.
struct Delta {
    kind: &'static str,
    field: &'static str,
    json_text: String,
}

impl Delta {
    fn new(kind: &'static str, field: &'static str, text: &str) -> Delta {
        Delta {
            kind,
            field,
            json_text: Value::from(text).to_string(),
        }
    }

    /// The `content_block_delta` event for block `index`, byte for byte
    /// what [`frame`] makes of the same object.
    fn frame(&self, index: usize) -> String {
        let Delta {
            kind,
            field,
            json_text,
        } = self;
        format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\
             \"delta\":{{\"type\":\"{kind}\",\"{field}\":{json_text}}}}}\n\n"
        )
    }
}

/// The API's keep-alive event.
pub fn ping_frame() -> String {
    frame("ping", &json!({"type": "ping"}))
}

/// A one-character text delta for block `index`.
pub fn dot_frame(index: usize) -> String {
    frame(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "text_delta", "text": "."}}),
    )
}

/// Send `frame` one byte per chunk, `every` apart.
pub async fn write_trickle(
    sock: &mut TcpStream,
    frame: &str,
    every: std::time::Duration,
) -> io::Result<()> {
    for byte in frame.as_bytes() {
        tokio::time::sleep(every).await;
        let mut chunk = b"1\r\n".to_vec();
        chunk.push(*byte);
        chunk.extend_from_slice(b"\r\n");
        sock.write_all(&chunk).await?;
        sock.flush().await?;
    }
    Ok(())
}

/// Split `text` into fragments of 1 to 12 characters, or to a sixteenth of
/// a longer text: splits fall anywhere (inside an escape, a multi-byte
/// character, a key), while a long reply stays a few dozen events, as the
/// API sends it, rather than hundreds.
fn fragments(text: &str, rng: &mut fastrand::Rng) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let longest = (chars.len() / 16).max(12);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let n = rng.usize(1..=longest).min(chars.len() - i);
        out.push(chars[i..i + n].iter().collect());
        i += n;
    }
    out
}

/// The `cache_creation` object of a usage: its cache writes by lifetime.
pub fn cache_creation(usage: &Usage, written_1h: u64) -> Value {
    json!({
        "ephemeral_5m_input_tokens": usage.cache_creation_input_tokens.saturating_sub(written_1h),
        "ephemeral_1h_input_tokens": written_1h,
    })
}

/// What a rendered reply bills besides its blocks.
#[derive(Debug, Clone, Copy)]
pub struct Billing {
    /// The input counts.
    pub usage: Usage,
    /// Of the cache writes, those at the 1-hour lifetime.
    pub written_1h: u64,
    /// Output each thinking block bills besides its text.
    pub thinking_tokens: u64,
}

/// Whose stream it is: the Messages API's, whose thinking `seal` signs, or
/// Ollama's compatibility layer's (see `ollama.rs`: usage of two counts, no
/// signature, no ping, a tool's input in one piece).
#[derive(Debug, Clone, Copy)]
pub struct Speaker<'a> {
    pub seal: &'a str,
    pub ollama: bool,
}

/// Render `reply` as stream events, billing what `billing` says;
/// `request_index` names made-up tool ids; `speaker` says whose stream it
/// is (and signs its thinking); `max_tokens` is the request's (the output
/// of a reply cut off there).
pub fn render_stream(
    reply: &StreamReply,
    request_index: usize,
    model: &str,
    billing: Billing,
    speaker: Speaker<'_>,
    max_tokens: u64,
    rng: &mut fastrand::Rng,
) -> RenderedStream {
    let Speaker { seal, ollama } = speaker;
    let Billing {
        usage,
        written_1h,
        thinking_tokens,
    } = billing;
    let mut frames = Vec::new();
    let mut content = Vec::new();
    let stop_reason = reply.stop_reason.clone().unwrap_or_else(|| {
        let has_tools = reply
            .blocks
            .iter()
            .any(|b| matches!(b, MockBlock::ToolUse { .. }));
        if has_tools { "tool_use" } else { "end_turn" }.to_string()
    });
    let cut_off = stop_reason == "max_tokens" && reply.fault == Some(StreamFault::TruncateToolJson);
    let output_tokens = reply.usage.map(|u| u.output_tokens).unwrap_or_else(|| {
        if cut_off {
            return max_tokens;
        }
        reply
            .blocks
            .iter()
            .map(|b| match b {
                MockBlock::Text(t) => tokens_of(t),
                MockBlock::Thinking(t) => tokens_of(t) + thinking_tokens,
                MockBlock::RedactedThinking => thinking_tokens,
                MockBlock::ToolUse { input, .. } => tokens_of(&input.to_string()) + 10,
            })
            .sum::<u64>()
            .max(1)
    });
    let usage_json = |output: u64| {
        if ollama {
            return super::ollama::usage_json(usage.input_tokens, output);
        }
        json!({
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cache_creation": cache_creation(&usage, written_1h),
            "output_tokens": output,
        })
    };
    let start = if ollama {
        json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{request_index:04}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "usage": usage_json(0),
        }})
    } else {
        json!({"type": "message_start", "message": {
            "id": format!("msg_mock_{request_index:04}"), "type": "message", "role": "assistant",
            "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": usage_json(1),
        }})
    };
    frames.push(frame("message_start", &start));
    if !ollama {
        frames.push(frame("ping", &json!({"type": "ping"})));
    }
    let last_tool = reply
        .blocks
        .iter()
        .rposition(|b| matches!(b, MockBlock::ToolUse { .. }));
    let mut tool_count = 0;
    let mut quiet = None;
    for (index, block) in reply.blocks.iter().enumerate() {
        let (start, deltas) = match block {
            MockBlock::Text(text) => {
                content.push(json!({"type": "text", "text": text}));
                (
                    json!({"type": "text", "text": ""}),
                    fragments(text, rng)
                        .into_iter()
                        .map(|t| Delta::new("text_delta", "text", &t))
                        .collect::<Vec<_>>(),
                )
            }
            MockBlock::Thinking(text) => {
                let mut deltas: Vec<Delta> = fragments(text, rng)
                    .into_iter()
                    .map(|t| Delta::new("thinking_delta", "thinking", &t))
                    .collect();
                if ollama {
                    content.push(json!({"type": "thinking", "thinking": text}));
                } else {
                    content.push(json!({"type": "thinking", "thinking": text, "signature": seal}));
                    deltas.push(Delta::new("signature_delta", "signature", seal));
                }
                (json!({"type": "thinking", "thinking": ""}), deltas)
            }
            MockBlock::RedactedThinking => {
                content.push(json!({"type": "redacted_thinking", "data": seal}));
                (
                    json!({"type": "redacted_thinking", "data": seal}),
                    Vec::new(),
                )
            }
            MockBlock::ToolUse { id, name, input } => {
                tool_count += 1;
                let id = id
                    .clone()
                    .unwrap_or_else(|| format!("toolu_mock_{request_index:04}_{tool_count}"));
                content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
                let mut json_text = input.to_string();
                if reply.fault == Some(StreamFault::TruncateToolJson) && Some(index) == last_tool {
                    // Objects are at least `{}`: half is always strictly shorter.
                    let keep = (json_text.chars().count() / 2).max(1);
                    json_text = json_text.chars().take(keep).collect();
                }
                let pieces = if ollama {
                    vec![json_text]
                } else {
                    fragments(&json_text, rng)
                };
                (
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    pieces
                        .into_iter()
                        .map(|p| Delta::new("input_json_delta", "partial_json", &p))
                        .collect(),
                )
            }
        };
        frames.push(frame(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        let works_unseen = matches!(block, MockBlock::Thinking(_) | MockBlock::ToolUse { .. });
        if let Some((total, every)) = reply.quiet_work.filter(|_| works_unseen && quiet.is_none()) {
            quiet = Some((frames.len(), total, every));
        }
        for delta in deltas {
            frames.push(delta.frame(index));
            if !ollama && rng.u8(..10) == 0 {
                frames.push(frame("ping", &json!({"type": "ping"})));
            }
            if !ollama && reply.noise && rng.u8(..4) == 0 {
                frames.push(noise_frame(index, rng));
            }
        }
        frames.push(frame(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let mut delta = if ollama {
        json!({"stop_reason": stop_reason})
    } else {
        json!({"stop_reason": stop_reason, "stop_sequence": null})
    };
    if let Some(details) = &reply.stop_details {
        delta["stop_details"] = details.clone();
    }
    frames.push(frame(
        "message_delta",
        &json!({"type": "message_delta", "delta": delta, "usage": usage_json(output_tokens)}),
    ));
    frames.push(frame("message_stop", &json!({"type": "message_stop"})));

    let middle = (frames.len() / 2).max(1);
    let mut timing = Timing {
        pace: reply.pace,
        trickle: None,
        quiet,
    };
    let ending = match &reply.fault {
        None | Some(StreamFault::TruncateToolJson) => Ending::Complete,
        Some(StreamFault::DropMidStream) => Ending::DropAfter(middle),
        Some(StreamFault::StallMidStream) => Ending::StallAfter(middle),
        Some(StreamFault::HeadersThenSilence) => Ending::StallAfter(0),
        Some(StreamFault::PingsOnly { every }) => Ending::PingsAfter(0, *every),
        Some(StreamFault::Trickle { every }) => {
            timing.trickle = Some(*every);
            Ending::Complete
        }
        Some(StreamFault::Endless { every }) => {
            // message_start, a ping, the text block's start.
            let start = frames
                .iter()
                .position(|f| f.starts_with("event: content_block_start"))
                .map_or(1, |i| i + 1);
            Ending::DeltasAfter(start, *every)
        }
        Some(StreamFault::ErrorEvent {
            error_type,
            message,
        }) => {
            frames.truncate(middle);
            frames.push(frame(
                "error",
                &json!({"type": "error", "error": {"type": error_type, "message": message}}),
            ));
            Ending::Complete
        }
    };
    if reply.crlf {
        for f in &mut frames {
            *f = f.replace('\n', "\r\n");
        }
    }
    RenderedStream {
        frames,
        ending,
        timing,
        output_tokens,
        content,
        stop_reason,
    }
}

fn noise_frame(index: usize, rng: &mut fastrand::Rng) -> String {
    match rng.u8(..4) {
        0 => ": proxy keep-alive\n\n".to_string(),
        1 => frame(
            "brand_new_event",
            &json!({"type": "brand_new_event", "detail": [1, 2, 3]}),
        ),
        2 => "event: mystery\ndata: this is not json\n\n".to_string(),
        _ => frame(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "brand_new_delta", "payload": "ignored"}}),
        ),
    }
}

#[test]
fn a_delta_frame_is_what_frame_makes_of_the_same_object() {
    let texts = [
        "",
        "plain",
        "quote \" back\\slash",
        "new\nline\ttab",
        "é✓ 😀",
        "\u{1}</",
    ];
    for text in texts {
        for (kind, field) in [("text_delta", "text"), ("input_json_delta", "partial_json")] {
            let mut delta = serde_json::Map::new();
            delta.insert("type".into(), kind.into());
            delta.insert(field.into(), text.into());
            let expected = frame(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 3, "delta": delta}),
            );
            assert_eq!(Delta::new(kind, field, text).frame(3), expected);
        }
    }
}
