//! The Messages API client against the scripted mock server: the happy path,
//! every fault the mock can inject, retry timing, prompt caching and the
//! request as it goes over the wire.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use luminos::ai::api::cost::TokenTracker;
use luminos::ai::api::types::{CacheControl, Content, StopReason};
use luminos::ai::api::{
    ApiErrorKind, Client, ClientConfig, ContentBlock, Message, RetryNotice, RetryPolicy,
    ToolDefinition,
};
use luminos::config::Auth;
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

/// Each retryable fault, then a good reply: the client must come back with
/// the good reply after exactly one retry.
#[tokio::test]
async fn every_retryable_fault_recovers() {
    let faults: Vec<(&str, Reply, ApiErrorKind)> = vec![
        ("429", Reply::rate_limited(), ApiErrorKind::RateLimited),
        ("529", Reply::overloaded(), ApiErrorKind::Overloaded),
        ("500", Reply::server_error(), ApiErrorKind::Server),
        (
            "503",
            Reply::error(503, "api_error", "unavailable"),
            ApiErrorKind::Server,
        ),
        (
            "408",
            Reply::error(408, "timeout_error", "slow"),
            ApiErrorKind::Server,
        ),
        (
            "409",
            Reply::error(409, "api_error", "conflict"),
            ApiErrorKind::Server,
        ),
        ("html 502", Reply::html(502), ApiErrorKind::Server),
        (
            "plain 500",
            Reply::raw(500, "text/plain", "upstream exploded"),
            ApiErrorKind::Server,
        ),
        (
            "dropped",
            Reply::text("a long enough reply to cut in half").drop_mid_stream(),
            ApiErrorKind::BrokenStream,
        ),
        (
            "error event",
            Reply::text("partial answer here").error_event("overloaded_error", "Overloaded"),
            ApiErrorKind::Overloaded,
        ),
        (
            "api_error event",
            Reply::text("partial answer here").error_event("api_error", "boom"),
            ApiErrorKind::Server,
        ),
        (
            "cut tool json",
            Reply::tool_use("read_file", json!({"path": "a/b/c.txt"})).truncate_tool_json(),
            ApiErrorKind::MalformedToolInput,
        ),
        (
            "200 garbage",
            Reply::raw(200, "text/plain", "definitely not an event stream"),
            ApiErrorKind::BrokenStream,
        ),
    ];
    for (name, fault, kind) in faults {
        let server = MockServer::start();
        server.push(fault).push(Reply::text("recovered"));
        let (client, notices) = mock_client(&server);
        let response = client
            .send(&hello(&client))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(response.texts(), vec!["recovered"], "{name}");
        assert_eq!(server.request_count(), 2, "{name}");
        let notices = notices.lock().unwrap();
        assert_eq!(notices.len(), 1, "{name}");
        assert_eq!(notices[0].error.kind, kind, "{name}: {}", notices[0].error);
        assert_eq!(notices[0].attempt, 1);
        assert_eq!(notices[0].max_retries, 6);
        let line = notices[0].to_string();
        assert!(line.starts_with("API call failed: "), "{line}");
        assert!(line.contains("retry 1/6 in "), "{line}");
        assert!(!line.contains('\n'));
    }
}

#[tokio::test]
async fn final_errors_fail_fast_with_their_kind() {
    let cases = [
        (400, "invalid_request_error", ApiErrorKind::InvalidRequest),
        (401, "authentication_error", ApiErrorKind::Authentication),
        (403, "permission_error", ApiErrorKind::Permission),
        (404, "not_found_error", ApiErrorKind::NotFound),
        (413, "request_too_large", ApiErrorKind::RequestTooLarge),
    ];
    for (status, error_type, kind) in cases {
        let server = MockServer::start();
        server.push(Reply::error(status, error_type, "nope"));
        let (client, notices) = mock_client(&server);
        let err = client.send(&hello(&client)).await.unwrap_err();
        assert_eq!(err.kind, kind, "{status}");
        assert_eq!(err.status, Some(status));
        assert_eq!(server.request_count(), 1, "{status}");
        assert!(notices.lock().unwrap().is_empty());
        assert!(
            err.to_string().ends_with("[request-id: req_mock_0000]"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn an_unknown_model_says_so_in_one_line() {
    let server = MockServer::start();
    server.push(Reply::unknown_model("claude-nope"));
    let (client, _) = mock_client(&server);
    let err = client.send(&hello(&client)).await.unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(
        err.to_string(),
        "not found (HTTP 404): model: claude-nope [request-id: req_mock_0000]"
    );
}

#[tokio::test]
async fn the_servers_wait_is_honoured() {
    let server = MockServer::start();
    server
        .push(
            Reply::rate_limited()
                .retry_after_ms(300)
                .retry_after_secs(30),
        )
        .push(Reply::overloaded().retry_after_secs(1))
        .push(Reply::text("ok"));
    let (client, notices) = mock_client(&server);
    let started = Instant::now();
    client.send(&hello(&client)).await.unwrap();
    let elapsed = started.elapsed();
    let waits: Vec<Duration> = notices.lock().unwrap().iter().map(|n| n.wait).collect();
    // retry-after-ms wins over retry-after; both win over the tiny backoff.
    assert_eq!(
        waits,
        vec![Duration::from_millis(300), Duration::from_secs(1)]
    );
    assert!(elapsed >= Duration::from_millis(1250), "{elapsed:?}");
    let first = &notices.lock().unwrap()[0];
    assert!(first.to_string().contains("retry 1/6 in 300ms"), "{first}");
}

#[tokio::test]
async fn x_should_retry_is_obeyed() {
    let server = MockServer::start();
    server.push(Reply::server_error().should_retry(false));
    let (client, _) = mock_client(&server);
    let err = client.send(&hello(&client)).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Server);
    assert_eq!(server.request_count(), 1);

    let server = MockServer::start();
    server
        .push(Reply::error(400, "invalid_request_error", "try again").should_retry(true))
        .push(Reply::text("ok"));
    let (client, _) = mock_client(&server);
    client.send(&hello(&client)).await.unwrap();
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn retries_run_out_with_the_typed_error() {
    let server = MockServer::start();
    server.push_all((0..10).map(|_| Reply::overloaded()));
    let (client, notices) = client_with(config(&server), 3);
    let err = client.send(&hello(&client)).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Overloaded);
    assert_eq!(server.request_count(), 4);
    let attempts: Vec<u32> = notices.lock().unwrap().iter().map(|n| n.attempt).collect();
    assert_eq!(attempts, vec![1, 2, 3]);
    assert_eq!(server.queued(), 6);
}

#[tokio::test]
async fn the_idle_timeout_ends_a_stalled_stream_and_a_slow_first_byte() {
    let server = MockServer::start();
    server
        .push(Reply::text("this reply will stall halfway through").stall_mid_stream())
        .push(Reply::text("late").delay(Duration::from_secs(5)));
    server.respond_with(|_| Reply::text("fine"));
    let mut config = config(&server);
    config.idle_timeout = Duration::from_millis(500);
    let (client, notices) = client_with(config, 6);
    let started = Instant::now();
    let response = client.send(&hello(&client)).await.unwrap();
    assert_eq!(response.texts(), vec!["fine"]);
    assert!(started.elapsed() >= Duration::from_millis(1000));
    let notices = notices.lock().unwrap();
    assert_eq!(notices[0].error.kind, ApiErrorKind::Timeout);
    assert!(
        notices[0].error.message.contains("stalled"),
        "{}",
        notices[0].error
    );
    assert_eq!(notices[1].error.kind, ApiErrorKind::Timeout);
    assert!(
        notices[1].error.message.contains("no response"),
        "{}",
        notices[1].error
    );
}

#[tokio::test]
async fn a_stall_with_no_retries_left_is_a_timeout() {
    let server = MockServer::start();
    server.push(Reply::text("stalling").stall_mid_stream());
    let mut config = config(&server);
    config.idle_timeout = Duration::from_millis(500);
    let (client, _) = client_with(config, 0);
    let err = client.send(&hello(&client)).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Timeout);
    assert!(
        err.to_string().contains("[request-id: req_mock_0000]"),
        "{err}"
    );
}

#[tokio::test]
async fn garbage_is_survived() {
    let server = MockServer::start();
    server
        .push(Reply::html(502))
        .push(Reply::raw(
            500,
            "application/octet-stream",
            vec![0xff, 0x00, 0x1b, b'[', b'2', b'J'],
        ))
        .push(Reply::raw(503, "application/json", "{\"error\": "))
        .push(Reply::raw(
            200,
            "text/event-stream",
            "data: {\"type\":\"message_start\"\n\nevent: x\n\n",
        ))
        .push(
            Reply::text("made it through the noise")
                .with_noise()
                .with_crlf(),
        );
    let (client, notices) = mock_client(&server);
    let response = client.send(&hello(&client)).await.unwrap();
    assert_eq!(response.texts(), vec!["made it through the noise"]);
    let notices = notices.lock().unwrap();
    let lines: Vec<String> = notices.iter().map(|n| n.error.to_string()).collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].contains("502 Bad Gateway"), "{}", lines[0]);
    assert!(!lines[0].contains('<'), "{}", lines[0]);
    assert!(!lines[1].contains('\x1b'), "{}", lines[1]);
    assert!(
        lines[2].starts_with("server error (HTTP 503): unexpected response body"),
        "{}",
        lines[2]
    );
    assert_eq!(notices[3].error.kind, ApiErrorKind::BrokenStream);
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

#[tokio::test]
async fn connection_refused_is_a_connection_error() {
    let mut config = ClientConfig::new("http://127.0.0.1:9", Auth::ApiKey("k".into()), MODEL);
    config.connect_timeout = Duration::from_secs(2);
    let (client, notices) = client_with(config, 2);
    let err = client.send(&hello(&client)).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Connection, "{err}");
    assert_eq!(notices.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn concurrent_requests_share_one_client() {
    let server = MockServer::start();
    server.set_latency(Duration::from_millis(100));
    server.respond_with(|req| Reply::text(format!("echo {}", req.last_user_text())));
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
        Message::assistant(vec![ContentBlock::ToolUse {
            id: "toolu_1".into(),
            name: "read_file".into(),
            input: json!({"path": "a"}),
            cache_control: None,
        }]),
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

/// A long system prompt over a growing conversation: the first call writes
/// the cache, later calls read their history back from it, and caching
/// pays for itself.
#[tokio::test]
async fn prompt_caching_reads_the_history_back() {
    let server = MockServer::start();
    server.respond_with(|req| {
        if req.turn() < 4 {
            Reply::tool_use("read_file", json!({"path": format!("f{}.txt", req.turn())}))
        } else {
            Reply::text("done")
        }
    });
    let (client, _) = mock_client(&server);
    let system = "Investigate the directory carefully. ".repeat(400);
    let tracker = TokenTracker::new(MODEL);
    let mut messages = vec![Message::user_text("Start.")];
    loop {
        let response = client
            .send(&client.request(&system, messages.clone(), tools()))
            .await
            .unwrap();
        tracker.record(&response.usage);
        let calls = response.tool_uses();
        messages.push(Message::assistant(response.content.clone()));
        if calls.is_empty() {
            break;
        }
        let body = "file contents ".repeat(100);
        messages.push(Message::user_blocks(
            calls
                .iter()
                .map(|c| ContentBlock::tool_result(&c.id, &body, false))
                .collect(),
        ));
    }
    let usages: Vec<_> = server
        .requests()
        .iter()
        .map(|r| r.reported_usage.unwrap())
        .collect();
    assert_eq!(usages.len(), 5);
    assert!(
        usages[0].cache_creation_input_tokens > 3_000,
        "{:?}",
        usages[0]
    );
    assert_eq!(usages[0].cache_read_input_tokens, 0);
    for pair in usages.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        // Everything the previous call had in context is read back.
        assert_eq!(
            after.cache_read_input_tokens,
            before.context_tokens(),
            "{usages:?}"
        );
        assert!(after.cache_creation_input_tokens > 0);
        assert!(after.input_tokens < 50, "{after:?}");
    }
    assert!(tracker.cache_savings() > 0.0, "{}", tracker.cache_summary());
    for request in server.requests() {
        let marks = request.body.to_string().matches("cache_control").count();
        assert_eq!(marks, 3);
    }
}

#[tokio::test]
async fn small_prompts_are_not_cached() {
    let server = MockServer::start();
    server.push_all([Reply::text("a"), Reply::text("b")]);
    let (client, _) = mock_client(&server);
    for _ in 0..2 {
        let usage = client.send(&hello(&client)).await.unwrap().usage;
        assert_eq!(usage.cache_creation_input_tokens, 0);
        assert_eq!(usage.cache_read_input_tokens, 0);
        assert!(usage.input_tokens > 0);
    }
}

/// The request exactly as it goes over the wire for a multi-turn
/// conversation with tools: headers that matter and the body, showing where
/// the cache breakpoints land.
#[tokio::test]
async fn request_as_sent_snapshot() {
    let server = MockServer::start();
    server.push(Reply::text("Summary."));
    let (client, _) = mock_client(&server);
    let messages = vec![
        Message::user_text("Investigate /src."),
        Message::assistant(vec![
            ContentBlock::text("Listing first."),
            ContentBlock::ToolUse {
                id: "toolu_01".into(),
                name: "list_directory".into(),
                input: json!({"path": "."}),
                cache_control: None,
            },
        ]),
        Message::user_blocks(vec![ContentBlock::tool_result(
            "toolu_01",
            "main.rs\nlib.rs",
            false,
        )]),
        Message::assistant(vec![
            ContentBlock::ToolUse {
                id: "toolu_02".into(),
                name: "read_file".into(),
                input: json!({"path": "main.rs"}),
                cache_control: None,
            },
            ContentBlock::ToolUse {
                id: "toolu_03".into(),
                name: "read_file".into(),
                input: json!({"path": "missing.rs"}),
                cache_control: None,
            },
        ]),
        Message::user_blocks(vec![
            ContentBlock::tool_result("toolu_02", "fn main() {}", false),
            ContentBlock::tool_result("toolu_03", "no such file", true),
            ContentBlock::text("Now summarize."),
        ]),
    ];
    let mut request = client.request("You investigate directories.", messages, tools());
    // Marks a caller sets are replaced by the client's own.
    request.tools[0].cache_control = Some(CacheControl::ephemeral());
    if let Content::Blocks(blocks) = &mut request.messages[1].content {
        blocks[0].set_cache_control(Some(CacheControl::ephemeral()));
    }
    client.send(&request).await.unwrap();

    let sent = server.last_request().unwrap();
    let mut text = String::new();
    for name in [
        "anthropic-version",
        "content-type",
        "x-api-key",
        "authorization",
        "user-agent",
    ] {
        let value = sent.header(name).unwrap_or("(absent)");
        text.push_str(&format!("{name}: {value}\n"));
    }
    text.push('\n');
    text.push_str(&serde_json::to_string_pretty(&sent.body).unwrap());
    let text = text.replace(env!("CARGO_PKG_VERSION"), "[version]");
    insta::assert_snapshot!(text);
}
