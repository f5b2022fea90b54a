//! Property tests of the SSE parser and the stream accumulator, on random
//! input rather than recorded streams:
//!
//! - a valid stream (random text, tool calls with randomly fragmented
//!   `partial_json`, skipped block kinds, pings, comments and unknown events
//!   anywhere, LF / CRLF / CR line ends, one- or many-line `data`) decodes to
//!   the message it was built from, however the bytes are cut into chunks;
//! - random bytes and garbage events (random names, random or truncated JSON,
//!   event-shaped JSON with absurd fields, invalid UTF-8, huge lines) never
//!   panic, and give the same result however they are cut.
//!
//! A failing case is saved next to this file and replayed first next time.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Map, Value, json};

use super::*;
use crate::ai::api::sse::{SseParser, parse_all};

fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Chunking
// ---------------------------------------------------------------------------

/// Cut `bytes` at the given points (empty chunks included: the transport
/// can deliver them).
fn chunks<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut out = Vec::with_capacity(points.len() + 1);
    let mut start = 0;
    for point in points {
        out.push(&bytes[start..point]);
        start = point;
    }
    out.push(&bytes[start..]);
    out
}

fn decode_chunks(chunks: &[&[u8]]) -> Result<Response, ApiError> {
    let mut decoder = ResponseDecoder::new();
    for chunk in chunks {
        decoder.push(chunk)?;
    }
    decoder.finish()
}

fn parse_chunks(chunks: &[&[u8]]) -> Vec<crate::ai::api::sse::SseEvent> {
    let mut parser = SseParser::new();
    let mut events: Vec<_> = chunks.iter().flat_map(|c| parser.push(c)).collect();
    events.extend(parser.finish());
    events
}

fn cuts() -> impl Strategy<Value = Vec<Index>> {
    prop_oneof![
        prop::collection::vec(any::<Index>(), 0..8),
        prop::collection::vec(any::<Index>(), 8..200),
    ]
}

// ---------------------------------------------------------------------------
// Valid streams
// ---------------------------------------------------------------------------

/// Text that stresses escaping: SSE syntax, line ends, quotes, backslashes,
/// multi-byte characters, plus anything at all.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "\n",
            "\r",
            "\r\n",
            "\n\ndata: x\n\n",
            "event: ping",
            ":",
            "\"",
            "\\",
            "\\u00e9",
            "{",
            "}",
            " ",
            "é",
            "🦀",
            "日本",
            "\u{FEFF}",
            "\0",
            "\u{1b}[2J",
        ])
        .prop_map(str::to_owned),
        "[a-z ]{1,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

/// A JSON value that survives a serialize/parse round trip exactly (floats
/// are eighths, which binary represents exactly).
fn json_value() -> impl Strategy<Value = Value> {
    json_value_of_size(3, 32)
}

/// [`json_value`] nested at most `depth` deep with about `size` nodes.
fn json_value_of_size(depth: u32, size: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<i32>().prop_map(|n| Value::from(f64::from(n) / 8.0)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, size, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            json_object(inner).prop_map(Value::Object),
        ]
    })
}

fn json_object(values: impl Strategy<Value = Value>) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((text(), values), 0..5).prop_map(|pairs| pairs.into_iter().collect())
}

/// Cut `s` at char boundaries near the given points.
fn fragments(s: &str, cuts: &[Index]) -> Vec<String> {
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| {
            let mut at = c.index(s.len() + 1);
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    points.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for point in points {
        out.push(s[start..point].to_string());
        start = point;
    }
    out.push(s[start..].to_string());
    out
}

#[derive(Debug, Clone)]
enum Block {
    Text {
        initial: String,
        deltas: Vec<String>,
    },
    Tool {
        id: String,
        name: String,
        input: Map<String, Value>,
        /// The serialized input, as the fragments the server sent.
        fragments: Vec<String>,
    },
    /// A block kind the client skips, with deltas it must drop.
    Skipped { kind: &'static str, deltas: usize },
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        (text(), text(), cuts()).prop_map(|(initial, body, cuts)| Block::Text {
            initial,
            deltas: fragments(&body, &cuts),
        }),
        (
            "toolu_[A-Za-z0-9]{1,24}",
            "[a-z_]{1,20}",
            json_object(json_value()),
            any::<bool>(),
            prop_oneof![Just(None), cuts().prop_map(Some)],
        )
            .prop_map(|(id, name, input, pretty, cuts)| {
                let json = if pretty {
                    serde_json::to_string_pretty(&input).unwrap()
                } else {
                    serde_json::to_string(&input).unwrap()
                };
                // No fragments at all means `{}`; only possible then.
                let fragments = match cuts {
                    None if input.is_empty() => Vec::new(),
                    None => vec![json],
                    Some(cuts) => fragments(&json, &cuts),
                };
                Block::Tool {
                    id,
                    name,
                    input,
                    fragments,
                }
            }),
        (
            prop::sample::select(vec!["thinking", "redacted_thinking", "server_tool_use"]),
            0..4usize
        )
            .prop_map(|(kind, deltas)| Block::Skipped { kind, deltas }),
    ]
}

/// The four usage counters, each present, absent or null.
type UsageFields = [Option<Option<u64>>; 4];

fn usage_fields() -> impl Strategy<Value = UsageFields> {
    let field = prop_oneof![
        Just(None),
        Just(Some(None)),
        (0..1_000_000u64).prop_map(|n| Some(Some(n)))
    ];
    [field.clone(), field.clone(), field.clone(), field]
}

const USAGE_NAMES: [&str; 4] = [
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
];

fn usage_json(fields: &UsageFields) -> Value {
    let mut map = Map::new();
    for (name, field) in USAGE_NAMES.iter().zip(fields) {
        match field {
            None => {}
            Some(value) => {
                map.insert(name.to_string(), json!(value));
            }
        }
    }
    Value::Object(map)
}

fn apply_usage(fields: &UsageFields, usage: &mut Usage) {
    let slots = [
        &mut usage.input_tokens,
        &mut usage.output_tokens,
        &mut usage.cache_creation_input_tokens,
        &mut usage.cache_read_input_tokens,
    ];
    for (slot, field) in slots.into_iter().zip(fields) {
        if let Some(Some(value)) = field {
            *slot = *value;
        }
    }
}

#[derive(Debug, Clone)]
struct Message {
    id: String,
    model: String,
    start_usage: UsageFields,
    end_usage: UsageFields,
    blocks: Vec<Block>,
    stop_reason: Option<&'static str>,
}

fn message() -> impl Strategy<Value = Message> {
    (
        "msg_[A-Za-z0-9]{0,24}",
        "[a-z0-9.-]{1,30}",
        usage_fields(),
        usage_fields(),
        prop::collection::vec(block(), 0..5),
        prop::option::of(prop::sample::select(vec![
            "end_turn",
            "max_tokens",
            "stop_sequence",
            "tool_use",
            "pause_turn",
            "refusal",
            "a_future_reason",
        ])),
    )
        .prop_map(
            |(id, model, start_usage, end_usage, blocks, stop_reason)| Message {
                id,
                model,
                start_usage,
                end_usage,
                blocks,
                stop_reason,
            },
        )
}

impl Message {
    /// The response the client must assemble.
    fn expected(&self) -> Response {
        let mut usage = Usage::default();
        apply_usage(&self.start_usage, &mut usage);
        apply_usage(&self.end_usage, &mut usage);
        let content = self
            .blocks
            .iter()
            .filter_map(|block| match block {
                Block::Text { initial, deltas } => {
                    Some(ContentBlock::text(format!("{initial}{}", deltas.concat())))
                }
                Block::Tool {
                    id, name, input, ..
                } => Some(ContentBlock::ToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: Value::Object(input.clone()),
                    cache_control: None,
                }),
                Block::Skipped { .. } => None,
            })
            .collect();
        Response {
            id: self.id.clone(),
            model: self.model.clone(),
            content,
            stop_reason: self
                .stop_reason
                .map(|r| serde_json::from_value(json!(r)).unwrap()),
            usage,
        }
    }

    /// The stream's events, as the data of each.
    fn events(&self) -> Vec<Value> {
        let mut events = vec![json!({"type": "message_start", "message": {
            "id": self.id, "type": "message", "role": "assistant", "content": [],
            "model": self.model, "stop_reason": null, "stop_sequence": null,
            "usage": usage_json(&self.start_usage)}})];
        for (index, block) in self.blocks.iter().enumerate() {
            let delta = |delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
            match block {
                Block::Text { initial, deltas } => {
                    events.push(json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "text", "text": initial}}));
                    events.extend(
                        deltas
                            .iter()
                            .map(|t| delta(json!({"type": "text_delta", "text": t}))),
                    );
                }
                Block::Tool {
                    id,
                    name,
                    fragments,
                    ..
                } => {
                    events.push(json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
                    events.extend(
                        fragments
                            .iter()
                            .map(|f| delta(json!({"type": "input_json_delta", "partial_json": f}))),
                    );
                }
                Block::Skipped { kind, deltas } => {
                    events.push(json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": kind, "thinking": ""}}));
                    events.extend((0..*deltas).map(|n| {
                        delta(json!({"type": "thinking_delta", "thinking": format!("step {n}")}))
                    }));
                    events.push(delta(
                        json!({"type": "signature_delta", "signature": "c2ln"}),
                    ));
                }
            }
            events.push(json!({"type": "content_block_stop", "index": index}));
        }
        events.push(json!({"type": "message_delta",
            "delta": {"stop_reason": self.stop_reason, "stop_sequence": null},
            "usage": usage_json(&self.end_usage)}));
        events.push(json!({"type": "message_stop"}));
        events
    }
}

/// Things a server or proxy may put between events; the client ignores them.
#[derive(Debug, Clone, Copy)]
enum Noise {
    Ping,
    UnnamedPing,
    Comment,
    UnknownEvent,
    NotJson,
    NoData,
}

fn noise() -> impl Strategy<Value = Vec<(Index, Noise)>> {
    let kind = prop::sample::select(vec![
        Noise::Ping,
        Noise::UnnamedPing,
        Noise::Comment,
        Noise::UnknownEvent,
        Noise::NotJson,
        Noise::NoData,
    ]);
    prop::collection::vec((any::<Index>(), kind), 0..6)
}

#[derive(Debug, Clone, Copy)]
enum LineEnd {
    Lf,
    CrLf,
    Cr,
    /// LF or CRLF, line by line (CR then LF would merge two line ends).
    Mixed,
}

/// How each event is written out.
#[derive(Debug, Clone, Copy)]
struct Style {
    /// With an `event:` line (the API always sends one; the data's `type`
    /// decides either way).
    named: bool,
    /// `data: ` (with the optional space) or `data:`.
    space: bool,
    /// Pretty-printed over several `data:` lines.
    multiline: bool,
}

#[derive(Debug, Clone)]
struct Wire {
    line_end: LineEnd,
    bom: bool,
    styles: Vec<Style>,
    /// Alternates between LF and CRLF for [`LineEnd::Mixed`].
    mixed: Vec<bool>,
    noise: Vec<(Index, Noise)>,
}

fn wire() -> impl Strategy<Value = Wire> {
    let style =
        (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(named, space, multiline)| Style {
            named,
            space,
            multiline,
        });
    (
        prop::sample::select(vec![
            LineEnd::Lf,
            LineEnd::CrLf,
            LineEnd::Cr,
            LineEnd::Mixed,
        ]),
        any::<bool>(),
        prop::collection::vec(style, 1..8),
        prop::collection::vec(any::<bool>(), 1..16),
        noise(),
    )
        .prop_map(|(line_end, bom, styles, mixed, noise)| Wire {
            line_end,
            bom,
            styles,
            mixed,
            noise,
        })
}

impl Wire {
    fn render(&self, events: &[Value]) -> Vec<u8> {
        let mut lines: Vec<String> = Vec::new();
        let mut noise_at: Vec<(usize, Noise)> = self
            .noise
            .iter()
            .map(|(at, kind)| (at.index(events.len() + 1), *kind))
            .collect();
        noise_at.sort_by_key(|(at, _)| *at);
        let mut noise = noise_at.into_iter().peekable();
        for (n, event) in events.iter().enumerate() {
            while let Some((_, kind)) = noise.next_if(|(at, _)| *at == n) {
                push_noise(&mut lines, kind);
            }
            let style = self.styles[n % self.styles.len()];
            push_event(&mut lines, event, style);
        }
        for (_, kind) in noise {
            push_noise(&mut lines, kind);
        }
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice(b"\xEF\xBB\xBF");
        }
        for (n, line) in lines.iter().enumerate() {
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(match self.line_end {
                LineEnd::Lf => b"\n",
                LineEnd::CrLf => b"\r\n",
                LineEnd::Cr => b"\r",
                LineEnd::Mixed if self.mixed[n % self.mixed.len()] => b"\r\n",
                LineEnd::Mixed => b"\n",
            });
        }
        out
    }
}

fn push_event(lines: &mut Vec<String>, event: &Value, style: Style) {
    if style.named {
        lines.push(format!("event: {}", event["type"].as_str().unwrap()));
    }
    let prefix = if style.space { "data: " } else { "data:" };
    if style.multiline {
        let pretty = serde_json::to_string_pretty(event).unwrap();
        lines.extend(pretty.lines().map(|l| format!("{prefix}{l}")));
    } else {
        lines.push(format!("{prefix}{event}"));
    }
    lines.push(String::new());
}

fn push_noise(lines: &mut Vec<String>, noise: Noise) {
    let event: &[&str] = match noise {
        Noise::Ping => &["event: ping", "data: {\"type\": \"ping\"}"],
        Noise::UnnamedPing => &["data: {\"type\":\"ping\"}"],
        Noise::Comment => &[": keep-alive"],
        Noise::UnknownEvent => &[
            "event: brand_new_event",
            "id: 42",
            "retry: 100",
            "data: {\"type\":\"brand_new_event\",\"index\":99}",
        ],
        Noise::NotJson => &["event: weird", "data: <html>"],
        Noise::NoData => &["event: lonely"],
    };
    lines.extend(event.iter().map(|l| l.to_string()));
    lines.push(String::new());
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_valid_stream_decodes_to_its_message_however_it_is_cut(
        message in message(),
        wire in wire(),
        cuts in cuts(),
    ) {
        let bytes = wire.render(&message.events());
        let whole = decode_all(&bytes);
        prop_assert_eq!(&whole, &Ok(message.expected()));
        let pieces = chunks(&bytes, &cuts);
        prop_assert_eq!(decode_chunks(&pieces), whole);
        prop_assert_eq!(parse_chunks(&pieces), parse_all(&bytes));
    }

    #[test]
    fn a_valid_stream_cut_short_is_an_error_never_a_half_message(
        message in message(),
        wire in wire(),
        end in any::<Index>(),
    ) {
        let bytes = wire.render(&message.events());
        let cut = end.index(bytes.len() + 1);
        // Until the data of message_stop has been seen, nothing is whole.
        let stop = bytes
            .windows(b"message_stop".len())
            .rposition(|w| w == b"message_stop")
            .unwrap();
        match decode_all(&bytes[..cut]) {
            Ok(response) => {
                prop_assert!(cut > stop, "a message before message_stop");
                prop_assert_eq!(response, message.expected());
            }
            Err(err) => prop_assert!(
                matches!(err.kind, ApiErrorKind::BrokenStream | ApiErrorKind::MalformedToolInput),
                "{}", err
            ),
        }
    }
}

// ---------------------------------------------------------------------------
// Garbage
// ---------------------------------------------------------------------------

const EVENT_NAMES: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "error",
    "ping",
];

/// An index as a server might garble it.
fn index() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (0..4u64).prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => Just(json!(u64::MAX)),
        1 => Just(json!(usize::MAX as u64 - 1)),
        1 => Just(json!(-1)),
        1 => Just(json!("0")),
        1 => Just(json!(1.5)),
    ]
}

/// Random JSON small enough to nest inside an event cheaply.
fn small_json() -> impl Strategy<Value = Value> {
    json_value_of_size(2, 6)
}

/// JSON shaped like a stream event, with random or absurd fields.
fn event_json() -> impl Strategy<Value = Value> {
    let usage = prop::collection::vec(
        (
            prop::sample::select(USAGE_NAMES.to_vec()),
            prop_oneof![any::<u64>().prop_map(Value::from), small_json()],
        ),
        0..4,
    )
    .prop_map(|pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    let block = prop_oneof![
        text().prop_map(|t| json!({"type": "text", "text": t})),
        ("[a-z_]{0,8}", "[a-z_]{0,8}")
            .prop_map(|(id, name)| json!({"type": "tool_use", "id": id, "name": name})),
        Just(json!({"type": "tool_use"})),
        Just(json!({"type": "thinking", "thinking": ""})),
        small_json(),
    ];
    let delta = prop_oneof![
        text().prop_map(|t| json!({"type": "text_delta", "text": t})),
        prop_oneof![text(), Just("{\"a\":".to_string()), Just("}".to_string())]
            .prop_map(|j| json!({"type": "input_json_delta", "partial_json": j})),
        Just(json!({"type": "thinking_delta", "thinking": "x"})),
        small_json(),
    ];
    (
        prop::sample::select(EVENT_NAMES.to_vec()),
        index(),
        block,
        delta,
        usage,
        text(),
        prop::option::of(prop::sample::select(vec!["end_turn", "tool_use", "??"])),
        prop::sample::select(vec![
            "overloaded_error",
            "api_error",
            "invalid_request_error",
            "",
        ]),
    )
        .prop_map(|(kind, index, block, mut delta, usage, id, stop, error)| {
            // message_delta reads the same key.
            if let (Some(delta), Some(stop)) = (delta.as_object_mut(), stop) {
                delta.insert("stop_reason".to_string(), json!(stop));
            }
            json!({
                "type": kind,
                "index": index,
                "content_block": block,
                "delta": delta,
                "message": {"id": id, "model": "m", "usage": usage},
                "usage": usage,
                "error": {"type": error, "message": id},
            })
        })
}

/// Event JSON with some fields dropped, so every shape is reached.
fn sparse_event_json() -> impl Strategy<Value = Value> {
    (event_json(), prop::collection::vec(any::<bool>(), 8)).prop_map(|(mut event, keep)| {
        let map = event.as_object_mut().unwrap();
        let keys: Vec<String> = map.keys().skip(1).cloned().collect();
        for (key, keep) in keys.iter().zip(keep) {
            if !keep {
                map.remove(key);
            }
        }
        event
    })
}

/// The data of a garbage event, as raw bytes.
fn garbage_data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => sparse_event_json().prop_map(|v| v.to_string().into_bytes()),
        2 => json_value().prop_map(|v| v.to_string().into_bytes()),
        2 => (sparse_event_json(), any::<Index>()).prop_map(|(v, cut)| {
            let mut bytes = v.to_string().into_bytes();
            bytes.truncate(cut.index(bytes.len() + 1));
            bytes
        }),
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => (prop::collection::vec(0x80..=0xffu8, 1..8), sparse_event_json()).prop_map(|(bad, v)| {
            let mut bytes = v.to_string().into_bytes();
            let at = bytes.len() / 2;
            bytes.splice(at..at, bad);
            bytes
        }),
        1 => (1usize << 14..1 << 18, prop::sample::select(vec![b'a', b'{', b'"', 0xff])).prop_map(|(n, b)| vec![b; n]),
    ]
}

fn garbage_event() -> impl Strategy<Value = Vec<u8>> {
    let name = prop_oneof![
        Just(None),
        prop::sample::select(EVENT_NAMES.to_vec()).prop_map(|n| Some(n.to_string())),
        "[^\r\n]{0,16}".prop_map(Some),
    ];
    (
        name,
        garbage_data(),
        prop::sample::select(vec!["\n", "\r\n", "\r"]),
    )
        .prop_map(|(name, data, end)| {
            let mut out = Vec::new();
            if let Some(name) = name {
                out.extend_from_slice(format!("event: {name}{end}").as_bytes());
            }
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(&data);
            out.extend_from_slice(end.as_bytes());
            out.extend_from_slice(end.as_bytes());
            out
        })
}

/// Bytes made of SSE syntax, JSON fragments and random bytes.
fn sse_soup() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            &b"data:"[..],
            b"data: ",
            b"event:",
            b"event: message_start",
            b"event: message_stop",
            b"id: 1",
            b"\n",
            b"\r",
            b"\r\n",
            b"\n\n",
            b":",
            b" ",
            b"\xEF\xBB\xBF",
            b"{\"type\":\"message_start\",\"message\":{}}",
            b"{\"type\":\"message_stop\"}",
            b"{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\"}}",
            b"{",
            b"\"",
            b"\xC3",
            b"\xA9",
        ])
        .prop_map(<[u8]>::to_vec),
        prop::collection::vec(any::<u8>(), 0..8),
    ];
    prop::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic_and_do_not_depend_on_chunking(
        bytes in prop_oneof![prop::collection::vec(any::<u8>(), 0..4096), sse_soup()],
        cuts in cuts(),
    ) {
        let pieces = chunks(&bytes, &cuts);
        prop_assert_eq!(parse_chunks(&pieces), parse_all(&bytes));
        prop_assert_eq!(decode_chunks(&pieces), decode_all(&bytes));
    }

    #[test]
    fn garbage_events_never_panic_and_do_not_depend_on_chunking(
        start in prop::bool::ANY,
        events in prop::collection::vec(garbage_event(), 0..12),
        cuts in cuts(),
    ) {
        let mut bytes = Vec::new();
        if start {
            // Past message_start, so the garbage reaches the block logic.
            bytes.extend_from_slice(b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n");
        }
        bytes.extend(events.concat());
        let pieces = chunks(&bytes, &cuts);
        prop_assert_eq!(decode_chunks(&pieces), decode_all(&bytes));
    }

    #[test]
    fn the_accumulator_survives_any_event_sequence(
        events in prop::collection::vec(sparse_event_json(), 0..16),
    ) {
        // Unlike the decoder, keep going after errors to reach odd states.
        let mut acc = Accumulator::new();
        acc.apply(StreamEvent::MessageStart { message: MessageStart::default() }).unwrap();
        for event in events {
            if let Ok(event) = serde_json::from_value::<StreamEvent>(event) {
                let _ = acc.apply(event);
            }
        }
        let _ = acc.finish();
    }
}
