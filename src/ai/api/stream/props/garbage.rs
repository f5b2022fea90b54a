//! Garbage: random bytes and events that are wrong in every way a server,
//! proxy or network can make them wrong. Errors are fine; panics are not.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};

use super::*;
use crate::ai::api::stream::event::{KNOWN_EVENTS, MessageStart, StreamEvent};

/// Every event the client understands, and one it must ignore.
fn event_names() -> Vec<&'static str> {
    KNOWN_EVENTS.iter().copied().chain(["ping"]).collect()
}

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
        prop::sample::select(event_names()),
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
        prop::sample::select(event_names()).prop_map(|n| Some(n.to_string())),
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
