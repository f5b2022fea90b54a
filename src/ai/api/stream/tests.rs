//! Recorded streams (kept as data in `recorded/*.sse`), decoded whole,
//! split at every byte and in random chunkings: the result must never
//! depend on where the network cut them.

use serde_json::json;

use super::accumulator::{MAX_BLOCKS, parse_tool_input};
use super::event::StreamEvent;
use super::*;
use crate::ai::api::error::ApiErrorKind;
use crate::ai::api::types::{ContentBlock, StopReason, Usage};

/// A plain text answer, with a ping between the block start and its deltas.
const TEXT_ONLY: &str = include_str!("recorded/text_only.sse");

/// A text block then a tool call whose input arrives in many fragments,
/// some of them empty, one split inside an escape sequence.
const TOOL_USE: &str = include_str!("recorded/tool_use.sse");

/// Thinking first (kept, with its signature), then text, then two tool calls, the
/// second with no input fragments at all. Newer servers repeat the full
/// usage in message_delta.
const THINKING_AND_TOOLS: &str = include_str!("recorded/thinking_and_tools.sse");

/// HTTP 200, a few events, then the server gives up.
const ERROR_EVENT: &str = include_str!("recorded/error_event.sse");

/// Noise a proxy or a newer server might add: comments, CRLF line ends,
/// unknown events with and without JSON, an unnamed event.
const NOISY: &str = ": proxy keep-alive\r\n\r\nevent: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_n\",\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\r\n\r\nevent: brand_new_event\r\ndata: {\"type\":\"brand_new_event\",\"x\":[1,2]}\r\n\r\nevent: weird\r\ndata: not json at all\r\n\r\ndata: {\"type\":\"future_thing\"}\r\n\r\nevent: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"pre\"}}\r\n\r\nevent: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"fix\"}}\r\n\r\nevent: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\nevent: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":4096}}\r\n\r\nevent: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";

/// Decode `stream` cut in two at every byte, byte by byte, and in random
/// chunkings; all must agree with the whole decode, which is returned.
fn decode_every_way(stream: &str) -> Result<Response, ApiError> {
    let bytes = stream.as_bytes();
    let whole = decode_all(bytes);
    for cut in 0..=bytes.len() {
        let got = decode_chunks(&[&bytes[..cut], &bytes[cut..]]);
        assert_eq!(got, whole, "split at byte {cut}");
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode_chunks(&singles), whole, "byte by byte");
    let mut rng = fastrand::Rng::with_seed(42);
    for _ in 0..200 {
        let mut chunks = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let n = rng.usize(1..=rest.len().min(40));
            chunks.push(&rest[..n]);
            rest = &rest[n..];
        }
        assert_eq!(decode_chunks(&chunks), whole, "random chunking");
    }
    whole
}

/// The response `chunks` decode to, fed one at a time (shared with the
/// property tests).
pub(super) fn decode_chunks(chunks: &[&[u8]]) -> Result<Response, ApiError> {
    let mut decoder = ResponseDecoder::new();
    for chunk in chunks {
        decoder.push(chunk)?;
    }
    decoder.finish()
}

#[test]
fn text_only() {
    let response = decode_every_way(TEXT_ONLY).unwrap();
    assert_eq!(response.id, "msg_01XFDUDYJgAACzvnptvVoYEL");
    assert_eq!(response.model, "claude-sonnet-4-5-20250929");
    assert_eq!(response.texts(), vec!["Hello, wörld! 🦀"]);
    assert_eq!(response.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 25,
            output_tokens: 15,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            cache_creation_1h_input_tokens: None,
        }
    );
}

#[test]
fn crlf_version_decodes_the_same() {
    let crlf = TEXT_ONLY.replace('\n', "\r\n");
    assert_eq!(decode_every_way(&crlf), decode_all(TEXT_ONLY.as_bytes()));
    let cr = TEXT_ONLY.replace('\n', "\r");
    assert_eq!(decode_every_way(&cr), decode_all(TEXT_ONLY.as_bytes()));
}

#[test]
fn tool_use_input_is_the_joined_fragments() {
    let response = decode_every_way(TOOL_USE).unwrap();
    assert_eq!(response.texts(), vec!["Let me look at the file."]);
    let calls = response.tool_uses();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    assert_eq!(calls[0].name, "read_file");
    assert_eq!(
        calls[0].input,
        json!({"path": "src/main.rs", "max_bytes": 4096, "note": "a \"quoted\" é"})
    );
    assert_eq!(response.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(response.usage.output_tokens, 89);
    assert_eq!(response.usage.cache_creation_input_tokens, 1800);
    assert_eq!(response.usage.context_tokens(), 472 + 1800);
}

#[test]
fn thinking_is_kept_in_order_and_empty_tool_input_is_an_object() {
    let response = decode_every_way(THINKING_AND_TOOLS).unwrap();
    assert_eq!(
        response.content,
        vec![
            ContentBlock::Thinking {
                thinking: "The user wants a listing.".into(),
                signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into(),
            },
            ContentBlock::text("Two calls."),
            ContentBlock::ToolUse {
                id: "toolu_a".into(),
                name: "list_directory".into(),
                input: json!({"path": "."}),
                cache_control: None,
            },
            ContentBlock::ToolUse {
                id: "toolu_b".into(),
                name: "think".into(),
                input: json!({}),
                cache_control: None,
            },
        ]
    );
    // Thinking is never what the model says.
    assert_eq!(response.texts(), vec!["Two calls."]);
    // message_delta values overwrite; a null leaves the earlier value alone.
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 12,
            output_tokens: 140,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 5000,
            cache_creation_1h_input_tokens: None,
        }
    );
}

#[test]
fn error_event_is_a_typed_error_wherever_the_stream_is_cut() {
    let err = decode_every_way(ERROR_EVENT).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Overloaded);
    assert_eq!(
        err.to_string(),
        "overloaded: error event in stream: overloaded_error: Overloaded"
    );
}

#[test]
fn noise_is_ignored() {
    let response = decode_every_way(NOISY).unwrap();
    assert_eq!(response.texts(), vec!["prefix"]);
    assert_eq!(response.stop_reason, Some(StopReason::MaxTokens));
}

#[test]
fn every_truncation_before_message_stop_is_an_error() {
    for stream in [TEXT_ONLY, TOOL_USE, THINKING_AND_TOOLS] {
        // The end of message_stop's data line: past it the message is whole.
        let complete_at = stream.rfind("\"}").unwrap() + 2;
        for cut in 0..complete_at {
            let err = decode_all(&stream.as_bytes()[..cut]).unwrap_err();
            assert!(
                matches!(
                    err.kind,
                    ApiErrorKind::BrokenStream | ApiErrorKind::MalformedToolInput
                ),
                "cut at {cut}: {err}"
            );
        }
        assert!(decode_all(&stream.as_bytes()[..complete_at]).is_ok());
    }
}

#[test]
fn cut_tool_json_is_malformed_tool_input() {
    let cut = TOOL_USE.replace(
        r#"{"type":"input_json_delta","partial_json":"\"quoted\\\" é\"}"}"#,
        r#"{"type":"input_json_delta","partial_json":"\"quo"}"#,
    );
    assert_ne!(cut, TOOL_USE);
    let err = decode_every_way(&cut).unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::MalformedToolInput);
    assert!(err.message.contains("read_file"), "{err}");
}

/// The output limit stops the model in the middle of a call: the reply is
/// whole, the call is named and left out, never run and never an error
/// (which the client would retry, paying for the same cut-off again).
#[test]
fn a_call_cut_off_by_max_tokens_is_a_reply_not_a_fault() {
    let cut = TOOL_USE
        .replace(
            r#"{"type":"input_json_delta","partial_json":"\"quoted\\\" é\"}"}"#,
            r#"{"type":"input_json_delta","partial_json":"\"quo"}"#,
        )
        .replace(
            r#""stop_reason":"tool_use""#,
            r#""stop_reason":"max_tokens""#,
        );
    assert!(cut.contains("max_tokens") && !cut.contains("quoted"));
    let response = decode_every_way(&cut).unwrap();
    assert_eq!(response.stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(
        response.cut_off_tool.as_deref(),
        Some("read_file"),
        "{response:?}"
    );
    assert!(response.tool_uses().is_empty(), "{response:?}");
}

#[test]
fn refusal_details_and_redacted_thinking_are_read() {
    let body = json!({
        "id": "msg_r", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "redacted_thinking", "data": "EnCrYpTeD"}],
        "stop_reason": "refusal",
        "stop_details": {"type": "refusal", "category": "cyber", "explanation": "no"},
        "usage": {"input_tokens": 5, "output_tokens": 1}
    });
    let response = response_from_message_json(body.to_string().as_bytes()).unwrap();
    assert_refusal_with_redacted_thinking(response, "cyber", "EnCrYpTeD");
    // The same through the stream.
    let mut acc = Accumulator::new();
    for e in [
        json!({"type": "message_start", "message": {"id": "m", "model": "x"}}),
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "redacted_thinking", "data": "EnC"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "refusal",
               "stop_details": {"type": "refusal", "category": "bio"}}}),
        json!({"type": "message_stop"}),
    ] {
        acc.apply(event(e)).unwrap();
    }
    assert_refusal_with_redacted_thinking(acc.finish().unwrap(), "bio", "EnC");
}

/// A refusal in `category` whose only content is redacted thinking `data`.
#[track_caller]
fn assert_refusal_with_redacted_thinking(response: Response, category: &str, data: &str) {
    assert_eq!(response.stop_reason, Some(StopReason::Refusal));
    assert_eq!(
        response.stop_details.unwrap().category.as_deref(),
        Some(category)
    );
    let redacted = ContentBlock::RedactedThinking { data: data.into() };
    assert_eq!(response.content, vec![redacted]);
}

#[test]
fn tool_input_must_be_an_object() {
    let err = parse_tool_input("t", "[1, 2]").unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::MalformedToolInput);
    assert_eq!(parse_tool_input("t", "  ").unwrap(), json!({}));
}

fn event(value: serde_json::Value) -> StreamEvent {
    serde_json::from_value(value).unwrap()
}

fn started() -> Accumulator {
    let mut acc = Accumulator::new();
    acc.apply(event(
        json!({"type": "message_start", "message": {"id": "m", "model": "x"}}),
    ))
    .unwrap();
    acc
}

#[test]
fn protocol_violations_are_broken_streams() {
    let text_start = json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "text", "text": ""}});
    let broken = |acc: &mut Accumulator, value| acc.apply(event(value)).unwrap_err().kind;
    // A block before the message.
    let mut acc = Accumulator::new();
    assert_eq!(
        broken(&mut acc, text_start.clone()),
        ApiErrorKind::BrokenStream
    );
    // A delta of a block that never started.
    let mut acc = started();
    let delta = json!({"type": "content_block_delta", "index": 3,
        "delta": {"type": "text_delta", "text": "x"}});
    assert_eq!(broken(&mut acc, delta), ApiErrorKind::BrokenStream);
    // A delta of the wrong kind for its block.
    let mut acc = started();
    acc.apply(event(text_start)).unwrap();
    let delta = json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": "{"}});
    assert_eq!(broken(&mut acc, delta), ApiErrorKind::BrokenStream);
}

#[test]
fn a_known_event_with_unreadable_data_is_broken() {
    let bad = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":\"zero\"}\n\n";
    assert_eq!(
        decode_all(bad.as_bytes()).unwrap_err().kind,
        ApiErrorKind::BrokenStream
    );
    let bad = "event: message_stop\ndata: {not json\n\n";
    assert_eq!(
        decode_all(bad.as_bytes()).unwrap_err().kind,
        ApiErrorKind::BrokenStream
    );
}

#[test]
fn events_after_message_stop_are_ignored() {
    let mut stream = TEXT_ONLY.to_string();
    stream.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":9,\"delta\":{\"type\":\"text_delta\",\"text\":\"late\"}}\n\n");
    let response = decode_every_way(&stream).unwrap();
    assert_eq!(response.texts(), vec!["Hello, wörld! 🦀"]);
}

#[test]
fn unstopped_blocks_are_closed_at_the_end() {
    let stream = TOOL_USE.replace(
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "",
    );
    let response = decode_all(stream.as_bytes()).unwrap();
    assert_eq!(response.tool_uses()[0].input["max_bytes"], 4096);
}

#[test]
fn stream_error_kinds() {
    for (kind, expected) in [
        ("overloaded_error", ApiErrorKind::Overloaded),
        ("api_error", ApiErrorKind::Server),
        ("rate_limit_error", ApiErrorKind::RateLimited),
        ("invalid_request_error", ApiErrorKind::BrokenStream),
    ] {
        let mut acc = started();
        let err = acc
            .apply(event(
                json!({"type": "error", "error": {"type": kind, "message": "m"}}),
            ))
            .unwrap_err();
        assert_eq!(err.kind, expected, "{kind}");
    }
}

#[test]
fn a_non_streamed_message_body_is_understood() {
    let body = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [
            {"type": "thinking", "thinking": "hm", "signature": "s"},
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "id": "t", "name": "n", "input": {"a": 1}}
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": null}
    });
    let response = response_from_message_json(body.to_string().as_bytes()).unwrap();
    assert_eq!(response.texts(), vec!["hi"]);
    assert_eq!(
        response.content[0],
        ContentBlock::Thinking {
            thinking: "hm".into(),
            signature: "s".into()
        }
    );
    assert_eq!(response.tool_uses()[0].input, json!({"a": 1}));
    assert_eq!(response.stop_reason, Some(StopReason::ToolUse));
    assert_eq!(response.usage.output_tokens, 7);
    let err = response_from_message_json(b"<html>").unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::BrokenStream);
}

#[test]
fn a_garbled_block_index_is_a_broken_stream_not_an_allocation() {
    for index in [u64::MAX, 1 << 40, MAX_BLOCKS as u64] {
        let stream = format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{}}}}\n\n\
             event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{index},\
             \"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n"
        );
        let err = decode_all(stream.as_bytes()).unwrap_err();
        assert_eq!(err.kind, ApiErrorKind::BrokenStream, "{index}");
        assert!(err.message.contains("beyond any real reply"), "{err}");
    }
    // The last index allowed still works.
    let mut acc = started();
    acc.apply(event(
        json!({"type": "content_block_start", "index": MAX_BLOCKS - 1,
        "content_block": {"type": "text", "text": "x"}}),
    ))
    .unwrap();
}

#[test]
fn a_whole_message_cut_off_in_a_tool_call_names_the_call_and_drops_it() {
    // A batch answers with whole messages: a reply that stopped at
    // max_tokens right after a tool call was cut off in it.
    let body = json!({
        "id": "msg_c", "type": "message", "role": "assistant", "model": "m",
        "content": [
            {"type": "text", "text": "Caching."},
            {"type": "tool_use", "id": "t1", "name": "write_cache", "input": {"path": "a"}}
        ],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 5, "output_tokens": 4096}
    });
    let response = response_from_message_json(body.to_string().as_bytes()).unwrap();
    assert_eq!(response.cut_off_tool.as_deref(), Some("write_cache"));
    assert!(response.tool_uses().is_empty());
    assert_eq!(response.texts(), vec!["Caching."]);
    // The same stop after text is a reply cut short, nothing cut off.
    let body = json!({
        "id": "msg_d", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "Long"}],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 5, "output_tokens": 4096}
    });
    let response = response_from_message_json(body.to_string().as_bytes()).unwrap();
    assert_eq!(response.cut_off_tool, None);
    assert_eq!(response.texts(), vec!["Long"]);
}

/// What moves a reply forward: `message_start`, then content; pings only
/// while a thinking or tool-use block is open (the model at work unseen).
/// Keep-alives elsewhere, comments, unknown events, empty deltas and bytes
/// that complete no event are not progress.
#[test]
fn progress_is_content_not_keep_alives() {
    let ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    let event = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    let start = |index: usize, block: serde_json::Value| {
        event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": block}),
        )
    };
    let delta = |index: usize, delta: serde_json::Value| {
        event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    };
    let stop = |index: usize| {
        event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        )
    };
    let message_start = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "m", "model": "x",
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    );
    let (head, tail) = message_start.split_at(30);
    let steps: Vec<(String, bool)> = vec![
        (ping.into(), false),
        (": keep-alive\n\n".into(), false),
        (event("brand_new", json!({"type": "brand_new"})), false),
        (head.into(), false),
        (tail.into(), true),
        (ping.into(), false),
        (start(0, json!({"type": "text", "text": ""})), true),
        (ping.into(), false),
        (delta(0, json!({"type": "text_delta", "text": ""})), false),
        (delta(0, json!({"type": "text_delta", "text": "x"})), true),
        (stop(0), true),
        (
            start(
                1,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
            ),
            true,
        ),
        (ping.into(), true),
        (
            delta(1, json!({"type": "signature_delta", "signature": "s"})),
            true,
        ),
        (stop(1), true),
        (ping.into(), false),
        (
            start(
                2,
                json!({"type": "tool_use", "id": "t", "name": "n", "input": {}}),
            ),
            true,
        ),
        (ping.into(), true),
        (
            delta(2, json!({"type": "input_json_delta", "partial_json": "{}"})),
            true,
        ),
        (stop(2), true),
        (
            event(
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
            ),
            true,
        ),
        (event("message_stop", json!({"type": "message_stop"})), true),
    ];
    let mut decoder = ResponseDecoder::new();
    for (i, (chunk, progress)) in steps.iter().enumerate() {
        assert_eq!(
            decoder.push(chunk.as_bytes()),
            Ok(*progress),
            "step {i}: {chunk}"
        );
    }
    assert!(decoder.is_recognized() && decoder.is_complete());
    assert!(decoder.finish().is_ok());
}

/// A body with no event of the API (a web page, noise) is never progress
/// and never recognized; a ping alone is recognized but not progress.
#[test]
fn a_body_that_is_no_event_stream_is_not_recognized() {
    for body in [
        &b"<!DOCTYPE html><html><body>Welcome</body></html>\n"[..],
        b"\x00\xff\xfe noise \x1b[2J\ndata: {not json\n\n",
        b"{\"status\":\"ok\"}",
    ] {
        let mut decoder = ResponseDecoder::new();
        assert_eq!(decoder.push(body), Ok(false));
        assert!(!decoder.is_recognized());
        assert!(decoder.finish().is_err());
        assert!(!decoder.is_recognized());
    }
    let mut decoder = ResponseDecoder::new();
    assert_eq!(
        decoder.push(b"event: ping\ndata: {\"type\":\"ping\"}\n\n"),
        Ok(false)
    );
    assert!(decoder.is_recognized() && !decoder.has_started());
}
