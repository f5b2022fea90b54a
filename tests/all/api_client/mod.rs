//! The Messages API client against the scripted mock server: the happy path,
//! every fault the mock can inject, retry timing, prompt caching and the
//! request as it goes over the wire.

use crate::support;

mod batches;
mod caching;
mod edges;
mod faults;
mod today;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use luminos::ai::api::Auth;
use luminos::ai::api::cost::TokenTracker;
use luminos::ai::api::types::{CacheControl, Content, StopReason};
use luminos::ai::api::{
    ApiErrorKind, Client, ClientConfig, ContentBlock, Message, RetryNotice, RetryPolicy,
    ToolDefinition,
};
use serde_json::json;
use support::mock::{MockBlock, MockServer, Reply};

const MODEL: &str = "claude-sonnet-4-5";

fn config(server: &MockServer) -> ClientConfig {
    let mut config = ClientConfig::new(server.url(), Auth::ApiKey("test-key".into()), MODEL);
    config.connect_timeout = Duration::from_secs(2);
    config.idle_timeout = Duration::from_secs(2);
    config
}

/// Fast backoff so retries cost milliseconds.
fn fast(retries: u32) -> RetryPolicy {
    RetryPolicy::new(retries).with_backoff(Duration::from_millis(1), Duration::from_millis(10))
}

/// A client with fast retries that records every retry notice.
fn client_with(config: ClientConfig, retries: u32) -> (Client, Arc<Mutex<Vec<RetryNotice>>>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let sink = notices.clone();
    let client = Client::new(config)
        .unwrap()
        .with_retry_policy(fast(retries))
        .with_retry_observer(Arc::new(move |n: &RetryNotice| {
            sink.lock().unwrap().push(n.clone())
        }));
    (client, notices)
}

fn mock_client(server: &MockServer) -> (Client, Arc<Mutex<Vec<RetryNotice>>>) {
    client_with(config(server), 6)
}

/// A mock that answers every request with "echo " and its last user text,
/// so each answer shows which request it belongs to.
fn echo_server() -> MockServer {
    let server = MockServer::start();
    server.respond_with(|request| Reply::text(format!("echo {}", request.last_user_text())));
    server
}

/// An assistant's tool_use block for a conversation history.
fn tool_use(id: &str, name: &str, input: serde_json::Value) -> ContentBlock {
    ContentBlock::ToolUse {
        id: id.into(),
        name: name.into(),
        input,
        cache_control: None,
    }
}

fn tools() -> Vec<ToolDefinition> {
    ["read_file", "list_directory"]
        .iter()
        .map(|name| ToolDefinition {
            name: name.to_string(),
            description: format!("The {name} tool."),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}},
                "required": ["path"]}),
            cache_control: None,
        })
        .collect()
}

fn hello(client: &Client) -> luminos::ai::api::MessagesRequest {
    client.request("You are terse.", vec![Message::user_text("hello")], tools())
}

#[tokio::test]
async fn a_text_reply_round_trip() {
    let server = MockServer::start();
    server.push(Reply::text(
        "Hi there, wörld 🦀 — a longer reply to fragment.",
    ));
    let (client, notices) = mock_client(&server);
    let response = client.send(&hello(&client)).await.unwrap();
    assert_eq!(
        response.texts(),
        vec!["Hi there, wörld 🦀 — a longer reply to fragment."]
    );
    assert_eq!(response.stop_reason, Some(StopReason::EndTurn));
    assert_eq!(response.id, "msg_mock_0000");
    assert_eq!(response.model, MODEL);
    let request = server.last_request().unwrap();
    assert_eq!(request.header("x-api-key"), Some("test-key"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    let agent = request.header("user-agent").unwrap();
    assert_eq!(agent, format!("luminos/{}", env!("CARGO_PKG_VERSION")));
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.body["stream"], true);
    assert_eq!(request.body["max_tokens"], 4096);
    assert_eq!(response.usage, request.reported_usage.unwrap());
    assert!(notices.lock().unwrap().is_empty());
}

#[tokio::test]
async fn sequential_requests_reuse_the_connection() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::text("again and again, a reply of some length"));
    let (client, _) = mock_client(&server);
    for _ in 0..5 {
        client.send(&hello(&client)).await.unwrap();
    }
    assert_eq!(server.request_count(), 5);
    assert_eq!(server.connection_count(), 1);
}

#[tokio::test]
async fn a_bearer_token_goes_in_authorization() {
    let server = MockServer::start();
    server.push(Reply::text("ok"));
    let mut config = config(&server);
    config.auth = Auth::BearerToken("tok-123".into());
    let (client, _) = client_with(config, 0);
    client.send(&hello(&client)).await.unwrap();
    let request = server.last_request().unwrap();
    assert_eq!(request.header("authorization"), Some("Bearer tok-123"));
    assert_eq!(request.header("x-api-key"), None);
}

#[tokio::test]
async fn tool_calls_survive_any_fragmentation() {
    let input = json!({"path": "src/ünïcode/main.rs", "nested": {"list": [1, 2.5, null, "a\"b\\c"]},
        "long": "x".repeat(300)});
    for seed in 0..25 {
        let server = MockServer::start();
        server.set_seed(seed);
        server.push(
            Reply::blocks(vec![
                MockBlock::Text("Looking.".into()),
                MockBlock::ToolUse {
                    id: Some("toolu_fixed".into()),
                    name: "read_file".into(),
                    input: input.clone(),
                },
                MockBlock::ToolUse {
                    id: None,
                    name: "list_directory".into(),
                    input: json!({}),
                },
            ])
            .with_thinking("Let me think about which file to read first."),
        );
        let (client, _) = mock_client(&server);
        let response = client.send(&hello(&client)).await.unwrap();
        let calls = response.tool_uses();
        assert_eq!(response.texts(), vec!["Looking."], "seed {seed}");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id, "toolu_fixed");
        assert_eq!(calls[0].input, input, "seed {seed}");
        assert_eq!(calls[1].id, "toolu_mock_0000_2");
        assert_eq!(calls[1].input, json!({}));
        assert_eq!(response.stop_reason, Some(StopReason::ToolUse));
    }
}

#[tokio::test]
async fn a_non_streamed_json_reply_is_accepted() {
    let server = MockServer::start();
    let body = json!({"id": "msg_x", "type": "message", "role": "assistant", "model": MODEL,
        "content": [{"type": "text", "text": "whole"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1}});
    server.push(Reply::raw(200, "application/json", body.to_string()));
    let (client, _) = mock_client(&server);
    let response = client.send(&hello(&client)).await.unwrap();
    assert_eq!(response.texts(), vec!["whole"]);
}

/// Sends to a closed local port with up to `retries` retries: the call
/// ends in a connection error; returns the client and how many retry
/// notices it gave.
async fn send_to_a_closed_port(retries: u32) -> (Client, usize) {
    let mut config = ClientConfig::new("http://127.0.0.1:9", Auth::ApiKey("k".into()), MODEL);
    config.connect_timeout = Duration::from_secs(2);
    let (client, notices) = client_with(config, retries);
    let err = client.send(&hello(&client)).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Connection, "{err}");
    let notices = notices.lock().unwrap().len();
    (client, notices)
}

#[tokio::test]
async fn connection_refused_is_a_connection_error() {
    let (_, notices) = send_to_a_closed_port(2).await;
    assert_eq!(notices, 2);
}

#[tokio::test]
async fn concurrent_requests_share_one_client() {
    let server = echo_server();
    server.set_latency(Duration::from_millis(100));
    let (client, _) = mock_client(&server);
    let started = Instant::now();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let request =
                    client.request("s", vec![Message::user_text(format!("n{i}"))], vec![]);
                client.send(&request).await
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        let response = task.await.unwrap().unwrap();
        assert_eq!(response.texts(), vec![format!("echo n{i}")]);
    }
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert_eq!(server.request_count(), 8);
}

/// An agent loop scripted with a closure: two tool turns, then an answer.
/// The history the client sends must keep the mock's protocol rules.
#[tokio::test]
async fn a_scripted_agent_loop() {
    let server = MockServer::start();
    server.respond_with(|req| match req.turn() {
        0 => Reply::tool_uses([
            ("list_directory", json!({"path": "."})),
            ("read_file", json!({"path": "README.md"})),
        ]),
        1 => {
            let results = req.tool_results();
            assert_eq!(results.len(), 2);
            assert_eq!(results[0].content, "README.md\nsrc/");
            assert!(results[1].is_error);
            Reply::text_and_tool_uses("One more.", [("read_file", json!({"path": "src/lib.rs"}))])
        }
        _ => Reply::text("It is a Rust library."),
    });
    let (client, _) = mock_client(&server);
    let mut messages = vec![Message::user_text("Investigate.")];
    let answer = loop {
        let response = client
            .send(&client.request("sys", messages.clone(), tools()))
            .await
            .unwrap();
        let calls = response.tool_uses();
        messages.push(Message::assistant(response.content.clone()));
        if calls.is_empty() {
            break response.texts().join("");
        }
        let results = calls
            .iter()
            .map(|call| match call.input["path"].as_str() {
                Some(".") => ContentBlock::tool_result(&call.id, "README.md\nsrc/", false),
                _ => ContentBlock::tool_result(&call.id, "no such file", true),
            })
            .collect();
        messages.push(Message::user_blocks(results));
    };
    assert_eq!(answer, "It is a Rust library.");
    assert_eq!(server.request_count(), 3);
    server.assert_no_violations();
}

#[tokio::test]
async fn the_mock_rejects_broken_histories() {
    let server = MockServer::start();
    let (client, _) = mock_client(&server);
    // A tool_use left unanswered, and a tool_result after text.
    let messages = vec![
        Message::user_text("go"),
        Message::assistant(vec![tool_use("toolu_1", "read_file", json!({"path": "a"}))]),
        Message::user_blocks(vec![
            ContentBlock::text("here you go"),
            ContentBlock::tool_result("toolu_2", "x", false),
        ]),
    ];
    let err = client
        .send(&client.request("sys", messages, tools()))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::InvalidRequest);
    assert_eq!(server.request_count(), 1);
    let violations = server.take_violations();
    let all = violations.join("\n");
    assert!(all.contains("tool_use toolu_1 has no tool_result"), "{all}");
    assert!(all.contains("tool_result after other content"), "{all}");
    assert!(all.contains("answers no tool_use"), "{all}");

    // Missing headers, straight through reqwest.
    let raw = reqwest::Client::new()
        .post(format!("{}/v1/messages", server.url()))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 400);
    let all = server.take_violations().join("\n");
    assert!(all.contains("no credential"), "{all}");
    assert!(all.contains("missing anthropic-version"), "{all}");
}
