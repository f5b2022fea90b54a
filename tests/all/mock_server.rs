//! The scripted mock Messages API server itself: later suites rely on its
//! rules, its determinism and its cache simulation, so they are pinned here.
//! These tests talk raw HTTP from plain threads, the way a child process or a
//! synchronous test would.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use luminos::ai::api::ContentBlock;
use luminos::ai::api::stream::decode_all;
use serde_json::{Value, json};
use support::mock::{MockBlock, MockServer, Reply};

type Headers = Vec<(&'static str, &'static str)>;

/// A well-formed streaming request body.
pub(crate) fn body(messages: Value) -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": true, "messages": messages})
}

pub(crate) fn good_headers() -> Headers {
    vec![
        ("x-api-key", "k"),
        ("anthropic-version", "2023-06-01"),
        ("content-type", "application/json"),
    ]
}

/// POST `body` with `headers` over a fresh connection; returns the status
/// and the de-chunked body.
fn post(server: &MockServer, headers: &[(&str, &str)], body: &Value) -> (u16, Vec<u8>) {
    post_to(server, "/v1/messages", headers, body)
}

/// [`post`] to `path`, returning the status and the de-chunked body.
pub(crate) fn post_to(
    server: &MockServer,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Vec<u8>) {
    let raw = post_raw_to(server, path, headers, body);
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..head_end]).to_string();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let rest = &raw[head_end + 4..];
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    (status, body)
}

fn post_raw(server: &MockServer, headers: &[(&str, &str)], body: &Value) -> Vec<u8> {
    post_raw_to(server, "/v1/messages", headers, body)
}

pub(crate) fn post_raw_to(
    server: &MockServer,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Vec<u8> {
    let body = body.to_string();
    let mut sock = TcpStream::connect(server.addr()).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: mock\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    sock.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    sock.read_to_end(&mut raw).unwrap();
    raw
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap(), 16).unwrap();
        rest = &rest[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[test]
fn serves_synchronous_clients_and_records_requests() {
    let server = MockServer::start();
    server.push(Reply::text_and_tool_uses(
        "Reading.",
        [("read_file", json!({"path": "a"}))],
    ));
    let (status, stream) = post(
        &server,
        &good_headers(),
        &body(json!([{"role": "user", "content": "hi"}])),
    );
    assert_eq!(status, 200);
    let response = decode_all(&stream).unwrap();
    assert_eq!(response.texts(), vec!["Reading."]);
    assert_eq!(response.tool_uses()[0].id, "toolu_mock_0000_1");
    let recorded = server.requests();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].header("X-Api-Key"), Some("k"));
    assert_eq!(recorded[0].last_user_text(), "hi");
    assert_eq!(recorded[0].turn(), 0);
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let run = |seed: u64| {
        let server = MockServer::start();
        server.set_seed(seed);
        server.push(Reply::text(
            "The quick brown fox jumps over the lazy dog. ".repeat(5),
        ));
        post_raw(
            &server,
            &good_headers(),
            &body(json!([{"role": "user", "content": "x"}])),
        )
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}

#[test]
fn fragments_are_many_and_small() {
    let server = MockServer::start();
    let text = "0123456789".repeat(20);
    server.push(Reply::text(text.clone()));
    let (_, stream) = post(
        &server,
        &good_headers(),
        &body(json!([{"role": "user", "content": "x"}])),
    );
    let stream = String::from_utf8(stream).unwrap();
    let deltas = stream.matches("text_delta").count();
    assert!(deltas >= 200 / 12, "{deltas} deltas");
    assert!(stream.contains("event: ping"));
    assert_eq!(decode_all(stream.as_bytes()).unwrap().texts(), vec![text]);
}

#[test]
fn protocol_violations_get_a_400_and_are_recorded() {
    let server = MockServer::start();
    let cases: Vec<(Headers, Value, &str)> = vec![
        (
            vec![
                ("anthropic-version", "2023-06-01"),
                ("content-type", "application/json"),
            ],
            body(json!([{"role": "user", "content": "x"}])),
            "no credential",
        ),
        (
            vec![("x-api-key", "k"), ("content-type", "application/json")],
            body(json!([{"role": "user", "content": "x"}])),
            "missing anthropic-version",
        ),
        (
            good_headers(),
            json!({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]}),
            "stream is not true",
        ),
        (
            good_headers(),
            body(json!([
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "text", "text": "no result"}]}
            ])),
            "tool_use t1 has no tool_result",
        ),
        (
            good_headers(),
            body(json!([
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "text", "text": "first"},
                    {"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}
            ])),
            "tool_result after other content",
        ),
        (
            good_headers(),
            body(json!([{"role": "user", "content": [{"type": "text", "text": ""}]}])),
            "text blocks must be non-empty",
        ),
        (
            good_headers(),
            body(json!([{"role": "assistant", "content": "hi"}])),
            "first message must be from the user",
        ),
        (
            good_headers(),
            body(
                json!([{"role": "user", "content": (0..5).map(|i| json!({"type": "text",
                "text": format!("b{i}"), "cache_control": {"type": "ephemeral"}})).collect::<Vec<_>>()}]),
            ),
            "5 cache_control breakpoints",
        ),
        (
            good_headers(),
            body(
                json!([{"role": "user", "content": [{"type": "text", "text": "x",
                "cache_control": {"type": "ephemeral", "ttl": "2h"}}]}]),
            ),
            "ttl must be \"5m\" or \"1h\"",
        ),
        (
            good_headers(),
            {
                // 5 minutes on the system prompt, then an hour after it.
                let mut request = body(json!([{"role": "user", "content": [{"type": "text",
                    "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]));
                request["system"] = json!([{"type": "text", "text": "s",
                    "cache_control": {"type": "ephemeral"}}]);
                request
            },
            "longer ttl comes after a shorter one",
        ),
    ];
    for (headers, request, expected) in cases {
        let (status, reply) = post(&server, &headers, &request);
        assert_eq!(status, 400, "{expected}");
        let reply: Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(reply["error"]["type"], "invalid_request_error");
        let violations = server.take_violations().join("\n");
        assert!(
            violations.contains(expected),
            "expected {expected:?} in:\n{violations}"
        );
    }
    // A scripted reply is not consumed by a rejected request.
    assert_eq!(server.queued(), 0);
    assert_eq!(server.request_count(), 10);
}

#[test]
fn an_unscripted_request_is_a_violation() {
    let server = MockServer::start();
    let (status, _) = post(
        &server,
        &good_headers(),
        &body(json!([{"role": "user", "content": "x"}])),
    );
    assert_eq!(status, 500);
    assert_eq!(
        server.take_violations(),
        vec!["request #0: no reply scripted"]
    );
}

#[test]
#[should_panic(expected = "protocol violations")]
fn dropping_a_server_with_violations_fails_the_test() {
    let server = MockServer::start();
    post(&server, &[], &json!({}));
    drop(server);
}

#[test]
fn latency_and_delay_come_before_the_first_byte() {
    let server = MockServer::start();
    server.set_latency(Duration::from_millis(100));
    server.push(Reply::text("slow").delay(Duration::from_millis(100)));
    let started = Instant::now();
    post(
        &server,
        &good_headers(),
        &body(json!([{"role": "user", "content": "x"}])),
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[test]
fn explicit_usage_overrides_the_simulation() {
    let server = MockServer::start();
    let usage = luminos::ai::api::Usage {
        input_tokens: 7,
        output_tokens: 8,
        cache_creation_input_tokens: 9,
        cache_read_input_tokens: 10,
        cache_creation_1h_input_tokens: None,
    };
    server.push(
        Reply::text("x")
            .with_usage(usage)
            .with_stop_reason("max_tokens"),
    );
    let (_, stream) = post(
        &server,
        &good_headers(),
        &body(json!([{"role": "user", "content": "x"}])),
    );
    let response = decode_all(&stream).unwrap();
    // The usage as given, its writes reported as written at 5 minutes.
    let reported = luminos::ai::api::Usage {
        cache_creation_1h_input_tokens: Some(0),
        ..usage
    };
    assert_eq!(response.usage, reported);
    assert_eq!(
        server.last_request().unwrap().reported_usage,
        Some(reported)
    );
}

/// The prefix cache: writes at breakpoints, reads on a later request that
/// shares the prefix, string and block spellings of a message are the same
/// prompt, and short prefixes are not cached.
#[test]
fn prompt_cache_simulation() {
    let server = MockServer::start();
    server.set_min_cacheable_tokens(100);
    server.respond_with(|_| Reply::text("ok"));
    let system =
        json!([{"type": "text", "text": "S".repeat(800), "cache_control": {"type": "ephemeral"}}]);
    let send = |messages: Value| {
        let mut request = body(messages);
        request["system"] = system.clone();
        post(&server, &good_headers(), &request);
        server.last_request().unwrap().reported_usage.unwrap()
    };
    let mark = json!({"type": "ephemeral"});
    let first = send(
        json!([{"role": "user", "content": [{"type": "text", "text": "Q".repeat(400), "cache_control": mark}]}]),
    );
    assert_eq!(first.cache_read_input_tokens, 0);
    assert!(first.cache_creation_input_tokens >= 300);
    assert!(first.input_tokens == 0, "{first:?}");

    // The same history as a plain string, then more turns.
    let second = send(json!([
        {"role": "user", "content": "Q".repeat(400)},
        {"role": "assistant", "content": [{"type": "text", "text": "A"}]},
        {"role": "user", "content": [{"type": "text", "text": "next", "cache_control": mark}]}
    ]));
    assert_eq!(second.cache_read_input_tokens, first.context_tokens());
    assert!(second.cache_creation_input_tokens > 0 && second.cache_creation_input_tokens < 20);

    // A different system prompt shares nothing.
    server.push(Reply::text("fresh"));
    let mut other = body(json!([{"role": "user", "content": "hi"}]));
    other["system"] = json!([{"type": "text", "text": "T".repeat(800), "cache_control": mark}]);
    post(&server, &good_headers(), &other);
    let usage = server.last_request().unwrap().reported_usage.unwrap();
    assert_eq!(usage.cache_read_input_tokens, 0);
    assert!(usage.cache_creation_input_tokens > 0);

    // Below the minimum, nothing is cached.
    server
        .set_min_cacheable_tokens(1_000_000)
        .clear_prompt_cache();
    let small = send(json!([{"role": "user", "content": "x"}]));
    assert_eq!(
        small.cache_creation_input_tokens + small.cache_read_input_tokens,
        0
    );
}

/// Cached prefixes live as long as their mark asks (5 minutes, or an hour
/// with `"ttl": "1h"`) from their last write or read, on the mock's clock,
/// which a test moves on or speeds up; the write is reported by lifetime
/// (`cache_creation`), and an hour mark may come before a 5-minute one.
#[test]
fn cached_prefixes_live_as_long_as_their_mark_asks() {
    let server = MockServer::start();
    server.set_min_cacheable_tokens(100);
    server.respond_with(|_| Reply::text("ok"));
    let minutes = |m: u64| Duration::from_secs(60 * m);
    let send = |ttl: Option<&str>| {
        let mut mark = json!({"type": "ephemeral"});
        if let Some(ttl) = ttl {
            mark["ttl"] = json!(ttl);
        }
        let mut request = body(json!([{"role": "user", "content": [
            {"type": "text", "text": "Q".repeat(400), "cache_control": mark}]}]));
        request["system"] = json!([{"type": "text", "text": "S".repeat(800)}]);
        let (status, raw) = post(&server, &good_headers(), &request);
        assert_eq!(status, 200);
        let usage = server.last_request().unwrap().reported_usage.unwrap();
        (usage, server.last_request().unwrap().reported_cache_1h, raw)
    };

    // Five minutes: read within them (which starts them over), gone after.
    let (first, hour, raw) = send(None);
    assert!(first.cache_creation_input_tokens > 0 && hour == 0);
    let raw = String::from_utf8_lossy(&raw);
    assert!(
        raw.contains(&format!(
            "\"cache_creation\":{{\"ephemeral_5m_input_tokens\":{},\"ephemeral_1h_input_tokens\":0}}",
            first.cache_creation_input_tokens
        )),
        "{raw}"
    );
    server.advance_cache_clock(minutes(4));
    assert!(send(None).0.cache_read_input_tokens > 0);
    server.advance_cache_clock(minutes(4));
    assert!(
        send(None).0.cache_read_input_tokens > 0,
        "the read started it over"
    );
    server.advance_cache_clock(minutes(6));
    let (expired, _, _) = send(None);
    assert_eq!(expired.cache_read_input_tokens, 0);
    assert_eq!(
        expired.cache_creation_input_tokens,
        first.cache_creation_input_tokens
    );

    // An hour: still there after fifty minutes, gone after seventy.
    server.clear_prompt_cache();
    let (written, hour, _) = send(Some("1h"));
    assert_eq!(hour, written.cache_creation_input_tokens);
    server.advance_cache_clock(minutes(50));
    let (read, hour, _) = send(Some("1h"));
    assert_eq!(
        read.cache_read_input_tokens,
        written.cache_creation_input_tokens
    );
    assert_eq!(hour, 0);
    server.advance_cache_clock(minutes(70));
    assert_eq!(send(Some("1h")).0.cache_read_input_tokens, 0);

    // A clock sped up: 6,000 times the wall clock makes 100 ms ten minutes.
    server.clear_prompt_cache().set_cache_clock_speed(6_000.0);
    send(None);
    send(Some("1h"));
    std::thread::sleep(Duration::from_millis(100));
    let (after, _, _) = send(Some("1h"));
    assert!(after.cache_read_input_tokens > 0, "the hour entry lives");
    server.set_cache_clock_speed(1.0);

    // Mixed: an hour on the system prompt, then 5 minutes after it; the
    // write is split where the hour marks end.
    server.clear_prompt_cache();
    let mut request = body(json!([{"role": "user", "content": [
        {"type": "text", "text": "Q".repeat(400), "cache_control": {"type": "ephemeral"}}]}]));
    request["system"] = json!([{"type": "text", "text": "S".repeat(800),
        "cache_control": {"type": "ephemeral", "ttl": "1h"}}]);
    post(&server, &good_headers(), &request);
    let last = server.last_request().unwrap();
    let usage = last.reported_usage.unwrap();
    assert_eq!(usage.cache_creation_input_tokens, usage.context_tokens());
    assert!(
        last.reported_cache_1h >= 200 && last.reported_cache_1h < usage.cache_creation_input_tokens
    );
    server.assert_no_violations();
}

/// Who thinks is the catalog's answer for the request's model and
/// `thinking`; what thought must come back as it went out.
#[test]
fn thinking_follows_the_model_and_must_come_back_unaltered() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("ok"));
    let ask = |model: &str, thinking: Option<Value>| {
        let mut request = body(json!([{"role": "user", "content": "hi"}]));
        request["model"] = json!(model);
        if let Some(thinking) = thinking {
            request["thinking"] = thinking;
        }
        let (status, stream) = post(&server, &good_headers(), &request);
        assert_eq!(status, 200, "{model}");
        decode_all(&stream).unwrap()
    };
    let first = |r: &luminos::ai::api::Response| r.content[0].is_thinking();
    assert!(first(&ask("claude-sonnet-5-5", None)));
    assert!(first(&ask(
        "claude-sonnet-5-5",
        Some(json!({"type": "between_tools"}))
    )));
    assert!(!first(&ask(
        "claude-sonnet-5",
        Some(json!({"type": "disabled"}))
    )));
    assert!(!first(&ask("claude-sonnet-4-5", None)));
    assert!(first(&ask(
        "claude-sonnet-4-5",
        Some(json!({"type": "enabled", "budget_tokens": 2048}))
    )));
    assert!(!first(&ask("some-other-model", None)));
    server.assert_no_violations();

    // Explicit blocks: redacted thinking, and a reply that does not think.
    server.push(
        Reply::blocks(vec![
            MockBlock::RedactedThinking,
            MockBlock::ToolUse {
                id: Some("toolu_x".into()),
                name: "read_file".into(),
                input: json!({"path": "a"}),
            },
        ])
        .with_stop_reason("tool_use"),
    );
    let reply = ask("claude-opus-5-5", None);
    let ContentBlock::RedactedThinking { data } = &reply.content[0] else {
        panic!("{:?}", reply.content);
    };
    assert!(!data.is_empty());
    server.push(Reply::text("plain").without_thinking());
    assert!(!first(&ask("claude-opus-5-5", None)));

    // Sent back with its data changed: the documented 400.
    let mut altered = body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [
            {"type": "redacted_thinking", "data": format!("{data}0")},
            {"type": "tool_use", "id": "toolu_x", "name": "read_file", "input": {"path": "a"}}
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}]}
    ]));
    altered["model"] = json!("claude-opus-5-5");
    let (status, reply) = post(&server, &good_headers(), &altered);
    assert_eq!(status, 400);
    let reply: Value = serde_json::from_slice(&reply).unwrap();
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("messages.1.content.0: Invalid `signature` in `thinking` block."),
        "{reply}"
    );
    assert_eq!(server.take_violations().len(), 1);
}
