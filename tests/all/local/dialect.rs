//! The mock's Ollama dialect, pinned: later tests of local models rely on
//! it answering as Ollama's Anthropic compatibility layer does (see the
//! mock's `ollama.rs` for the sources).

use serde_json::{Value, json};

use crate::mock_server::{body, good_headers, post_raw_to, post_to};
use crate::support::mock::{MockServer, Reply, tool_results_of};

/// The stream's events, as (event, data) pairs.
fn events(body: &[u8]) -> Vec<(String, Value)> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter_map(|frame| {
            let event = frame.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = frame.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((event.to_string(), serde_json::from_str(data).unwrap()))
        })
        .collect()
}

#[test]
fn a_stream_has_two_counts_no_ping_no_signature_and_whole_tool_input() {
    let server = MockServer::ollama(32_768);
    let input = json!({"path": "src", "max_bytes": 4096, "note": "a longer input, to be split"});
    server.push(Reply::tool_use("read_file", input.clone()));
    let mut request = body(json!([{"role": "user", "content": "hi"}]));
    request["model"] = json!("qwen3-coder");
    request["system"] =
        json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]);
    let (status, reply) = post_to(&server, "/v1/messages", &good_headers(), &request);
    assert_eq!(status, 200);
    let seen = events(&reply);
    let names: Vec<&str> = seen.iter().map(|(e, _)| e.as_str()).collect();
    assert!(
        !names.contains(&"ping") && !names.contains(&"error"),
        "{names:?}"
    );
    // Usage: two counts, at the start and the end; no cache.
    for (event, data) in &seen {
        let usage = match event.as_str() {
            "message_start" => &data["message"]["usage"],
            "message_delta" => &data["usage"],
            _ => continue,
        };
        let keys: Vec<&String> = usage.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["input_tokens", "output_tokens"], "{event}");
    }
    // Thinking, with its text and no signature.
    let deltas: Vec<&Value> = seen
        .iter()
        .filter(|(e, _)| e == "content_block_delta")
        .map(|(_, d)| &d["delta"])
        .collect();
    assert!(deltas.iter().any(|d| d["type"] == "thinking_delta"));
    assert!(deltas.iter().all(|d| d["type"] != "signature_delta"));
    // The tool's input whole, in one delta.
    let json_deltas: Vec<&&Value> = deltas
        .iter()
        .filter(|d| d["type"] == "input_json_delta")
        .collect();
    assert_eq!(json_deltas.len(), 1);
    let whole: Value =
        serde_json::from_str(json_deltas[0]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(whole, input);
    // A thinking block with no signature (a client keeps it empty) comes
    // back without a check, and a turned-off thinking gets none.
    let produced = json!([
        {"type": "thinking", "thinking": "whatever", "signature": ""},
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "src"}}
    ]);
    server.push(Reply::text("done"));
    let mut again = body(json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": produced},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
    ]));
    again["thinking"] = json!({"type": "disabled"});
    let (status, reply) = post_to(&server, "/v1/messages", &good_headers(), &again);
    assert_eq!(status, 200);
    assert!(
        events(&reply)
            .iter()
            .all(|(_, d)| d["content_block"]["type"] != "thinking")
    );
    assert_eq!(
        tool_results_of(&server.last_request().unwrap().body).len(),
        1
    );
    assert!(server.over_window().is_empty());
}

#[test]
fn a_prompt_past_the_window_is_answered_as_if_cut_and_recorded() {
    let server = MockServer::ollama(1_000);
    server.push(Reply::text("an answer from half a prompt"));
    let long = "word ".repeat(2_000);
    let (status, reply) = post_to(
        &server,
        "/v1/messages",
        &good_headers(),
        &body(json!([{"role": "user", "content": long}])),
    );
    assert_eq!(status, 200, "no 400: the prompt is cut without a word");
    let start = events(&reply)
        .into_iter()
        .find(|(e, _)| e == "message_start")
        .unwrap()
        .1;
    assert_eq!(start["message"]["usage"]["input_tokens"], 1_000);
    let over = server.over_window();
    assert_eq!(over.len(), 1);
    assert_eq!((over[0].index, over[0].window), (0, 1_000));
    assert!(over[0].tokens > 2_000, "{over:?}");
}

#[test]
fn token_counting_and_batches_are_not_served() {
    let server = MockServer::ollama(32_768);
    for path in ["/v1/messages/count_tokens", "/v1/messages/batches"] {
        let raw = post_raw_to(&server, path, &good_headers(), &json!({"model": "m"}));
        let text = String::from_utf8_lossy(&raw);
        assert!(text.starts_with("HTTP/1.1 404"), "{path}: {text}");
        assert!(
            text.to_ascii_lowercase()
                .contains("content-type: text/plain"),
            "{text}"
        );
        assert!(text.ends_with("404 page not found"), "{text}");
    }
    assert_eq!(server.request_count(), 0);
}
