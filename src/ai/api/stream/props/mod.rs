//! Property tests of the SSE parser and the stream accumulator, on random
//! input rather than recorded streams:
//!
//! - a valid stream (random text, tool calls with randomly fragmented
//!   `partial_json`, skipped block kinds, pings, comments and unknown events
//!   anywhere, LF / CRLF / CR line ends, one- or many-line `data`) decodes to
//!   the message it was built from, however the bytes are cut into chunks
//!   (`valid`);
//! - random bytes and garbage events (random names, random or truncated JSON,
//!   event-shaped JSON with absurd fields, invalid UTF-8, huge lines) never
//!   panic, and give the same result however they are cut (`garbage`).
//!
//! A failing case is saved next to the test's file, as
//! `*.proptest-regressions`, and replayed first next time.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Map, Value};

use super::tests::decode_chunks;
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
// Shared generators
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

const USAGE_NAMES: [&str; 4] = [
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
];

mod garbage;
mod valid;
