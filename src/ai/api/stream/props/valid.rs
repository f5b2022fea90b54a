//! Valid streams: built from a random message, written out with random
//! framing and noise, and decoded however they are cut.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

use super::*;
use crate::ai::api::error::ApiErrorKind;
use crate::ai::api::types::{ContentBlock, Usage};

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
    /// Thinking, streamed as `thinking_delta`s and one `signature_delta`.
    Thinking {
        deltas: Vec<String>,
        signature: String,
    },
    /// Encrypted thinking: all of it in the start event.
    RedactedThinking { data: String },
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
        (text(), cuts(), "[A-Za-z0-9+/=]{0,40}").prop_map(|(body, cuts, signature)| {
            Block::Thinking {
                deltas: fragments(&body, &cuts),
                signature,
            }
        }),
        "[A-Za-z0-9+/=]{0,60}".prop_map(|data| Block::RedactedThinking { data }),
        (
            prop::sample::select(vec!["server_tool_use", "web_search_tool_result"]),
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
            "model_context_window_exceeded",
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
                Block::Thinking { deltas, signature } => Some(ContentBlock::Thinking {
                    thinking: deltas.concat(),
                    signature: signature.clone(),
                }),
                Block::RedactedThinking { data } => {
                    Some(ContentBlock::RedactedThinking { data: data.clone() })
                }
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
            ..Response::default()
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
                Block::Thinking { deltas, signature } => {
                    events.push(json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "thinking", "thinking": ""}}));
                    events.extend(
                        deltas
                            .iter()
                            .map(|t| delta(json!({"type": "thinking_delta", "thinking": t}))),
                    );
                    events.push(delta(
                        json!({"type": "signature_delta", "signature": signature}),
                    ));
                }
                Block::RedactedThinking { data } => {
                    events.push(json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "redacted_thinking", "data": data}}));
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
