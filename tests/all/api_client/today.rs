//! The client against the mock answering as today's models do: thinking
//! that must come back unaltered, replies cut off at `max_tokens`,
//! refusals, paused turns, billing errors, long server waits, a full
//! context window, and endpoints that refuse or never answer.

use super::*;

use luminos::ai::api::error::FinalCause;
use luminos::ai::api::settings::{CallSettings, Workload};
use luminos::ai::api::types::ThinkingParam;
use luminos::ai::api::{MessagesRequest, Response, catalog};

/// A client for `model` with fast retries.
fn client_for(server: &MockServer, model: &str) -> (Client, Arc<Mutex<Vec<RetryNotice>>>) {
    let mut config = config(server);
    config.model = model.to_string();
    client_with(config, 6)
}

/// The request a luminos conversation of `workload` sends on `model`.
fn request_for(
    client: &Client,
    model: &str,
    workload: Workload,
    system: &str,
    messages: Vec<Message>,
) -> MessagesRequest {
    let settings = CallSettings::new(catalog::lookup(model).unwrap(), workload);
    client
        .request(system, messages, tools())
        .with_settings(&settings)
}

/// Three turns of a tool loop on `model`, each reply echoed back as it
/// came. Returns the responses.
async fn three_turns(client: &Client, model: &str, server: &MockServer) -> Vec<Response> {
    server.respond_with(|req| match req.turn() {
        0 | 1 => Reply::text_and_tool_uses("Looking.", [("read_file", json!({"path": "a"}))]),
        _ => Reply::text("Done."),
    });
    let mut messages = vec![Message::user_blocks(vec![ContentBlock::text("Go.")])];
    let mut responses = Vec::new();
    for _ in 0..3 {
        let request = request_for(client, model, Workload::Routine, "sys", messages.clone());
        let response = client.send(&request).await.unwrap();
        messages.push(Message::assistant(response.content.clone()));
        let results: Vec<ContentBlock> = response
            .tool_uses()
            .iter()
            .map(|call| ContentBlock::tool_result(&call.id, "text", false))
            .collect();
        messages.push(Message::user_blocks(if results.is_empty() {
            vec![ContentBlock::text("Go on.")]
        } else {
            results
        }));
        responses.push(response);
    }
    responses
}

#[tokio::test]
async fn thinking_comes_first_is_never_text_and_round_trips() {
    let server = MockServer::start();
    let model = "claude-sonnet-5-5";
    let (client, _) = client_for(&server, model);
    let responses = three_turns(&client, model, &server).await;
    for response in &responses {
        match &response.content[0] {
            ContentBlock::Thinking { signature, .. } => assert!(!signature.is_empty()),
            other => panic!("thinking first, not {other:?}"),
        }
        assert!(response.texts().iter().all(|t| !t.is_empty()));
        // Its tokens are output: the mock bills thinking it does not show.
        assert!(response.usage.output_tokens > 10);
    }
    // Every later request carried every earlier turn, thinking first.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        // Sonnet 5.5 in a routine loop: between_tools, with room to think.
        assert_eq!(request.body["thinking"], json!({"type": "between_tools"}));
        assert_eq!(request.body["max_tokens"], 32_768);
        for message in request
            .messages()
            .iter()
            .filter(|m| m["role"] == "assistant")
        {
            assert_eq!(message["content"][0]["type"], "thinking", "{message}");
        }
    }
    server.assert_no_violations();
}

/// The documented 400s: a thinking block altered or dropped, or anything
/// before it changed, on a model that binds thinking to the conversation.
#[tokio::test]
async fn a_binding_model_refuses_a_changed_conversation() {
    let model = "claude-sonnet-5-5";
    let first_turn = |server: &MockServer, client: &Client| {
        server.push(Reply::tool_use("read_file", json!({"path": "a"})));
        let request = request_for(
            client,
            model,
            Workload::Routine,
            "sys",
            vec![Message::user_blocks(vec![ContentBlock::text("Go.")])],
        );
        let client = client.clone();
        async move { client.send(&request).await.unwrap() }
    };
    // Each way of breaking the history, then whether the API must refuse it.
    type Break = fn(&mut Vec<Message>, &mut String);
    let breaks: [(&str, Break); 4] = [
        ("the thinking altered", |messages, _| {
            if let Content::Blocks(blocks) = &mut messages[1].content
                && let ContentBlock::Thinking { thinking, .. } = &mut blocks[0]
            {
                thinking.push_str("edited");
            }
        }),
        ("the thinking dropped", |messages, _| {
            if let Content::Blocks(blocks) = &mut messages[1].content {
                blocks.retain(|b| !b.is_thinking());
            }
        }),
        ("an earlier message rewritten", |messages, _| {
            messages[0] = Message::user_blocks(vec![ContentBlock::text("Go!")]);
        }),
        ("the system prompt changed", |_, system| {
            system.push_str(" (again)")
        }),
    ];
    for (what, break_it) in breaks {
        let server = MockServer::start();
        let (client, _) = client_for(&server, model);
        let response = first_turn(&server, &client).await;
        let mut system = "sys".to_string();
        let mut messages = vec![
            Message::user_blocks(vec![ContentBlock::text("Go.")]),
            Message::assistant(response.content.clone()),
            Message::user_blocks(vec![ContentBlock::tool_result(
                &response.tool_uses()[0].id,
                "text",
                false,
            )]),
        ];
        break_it(&mut messages, &mut system);
        let request = request_for(&client, model, Workload::Routine, &system, messages);
        let err = client.send(&request).await.unwrap_err();
        assert_eq!(err.kind, ApiErrorKind::InvalidRequest, "{what}");
        assert!(err.message.contains("thinking"), "{what}: {err}");
        assert_eq!(server.request_count(), 2, "{what}: a 400 is not retried");
        assert_eq!(server.take_violations().len(), 1, "{what}");
    }
}

/// A model that thinks but does not bind its thinking checks only the turn
/// being continued.
#[tokio::test]
async fn a_non_binding_model_checks_only_the_turn_being_continued() {
    let model = "claude-sonnet-5";
    assert!(!catalog::lookup(model).unwrap().binds_thinking);
    let server = MockServer::start();
    let (client, _) = client_for(&server, model);
    // Judgment work keeps the model's default: it thinks.
    server.push(Reply::tool_use("read_file", json!({"path": "a"})));
    let ask =
        |workload, system: &str, messages| request_for(&client, model, workload, system, messages);
    let start = vec![Message::user_blocks(vec![ContentBlock::text("Go.")])];
    let request = ask(Workload::Judgment, "sys", start.clone());
    assert_eq!(request.thinking, None);
    let response = client.send(&request).await.unwrap();
    assert!(response.content[0].is_thinking());
    let mut messages = start;
    messages.push(Message::assistant(response.content.clone()));
    messages.push(Message::user_blocks(vec![ContentBlock::tool_result(
        &response.tool_uses()[0].id,
        "text",
        false,
    )]));
    // A changed system prompt is fine here...
    server.push(Reply::text("ok"));
    let changed = ask(Workload::Judgment, "other", messages.clone());
    client.send(&changed).await.unwrap();
    // ...a dropped thinking block in the turn being continued is not.
    if let Content::Blocks(blocks) = &mut messages[1].content {
        blocks.retain(|b| !b.is_thinking());
    }
    let dropped = ask(Workload::Judgment, "sys", messages);
    let err = client.send(&dropped).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::InvalidRequest);
    assert_eq!(server.take_violations().len(), 1);
    // Routine work turns its thinking off, and the answers have none.
    server.push(Reply::text("plain"));
    let plain = ask(Workload::Routine, "sys", vec![Message::user_text("Go.")]);
    assert_eq!(plain.thinking, Some(ThinkingParam::Disabled));
    let response = client.send(&plain).await.unwrap();
    assert!(!response.content[0].is_thinking());
}

/// What the API refuses in the request itself: `disabled` where thinking
/// cannot be turned off, `between_tools` elsewhere than Sonnet 5.5.
#[tokio::test]
async fn thinking_parameters_a_model_refuses_are_400s() {
    for (model, thinking) in [
        ("claude-sonnet-5-5", ThinkingParam::Disabled),
        ("claude-opus-5-5", ThinkingParam::BetweenTools),
        (
            "claude-opus-4-8",
            ThinkingParam::Enabled {
                budget_tokens: 2048,
            },
        ),
    ] {
        let server = MockServer::start();
        let (client, _) = client_for(&server, model);
        let mut request = hello(&client);
        request.thinking = Some(thinking);
        let err = client.send(&request).await.unwrap_err();
        assert_eq!(err.kind, ApiErrorKind::InvalidRequest, "{model}");
        assert_eq!(server.take_violations().len(), 1, "{model}");
    }
}

#[tokio::test]
async fn a_call_cut_off_at_max_tokens_is_returned_once_not_retried() {
    let server = MockServer::start();
    server.push(
        Reply::text_and_tool_uses(
            "Caching.",
            [("write_cache", json!({"path": "a", "data": "x".repeat(400)}))],
        )
        .cut_off_at_max_tokens(),
    );
    let (client, notices) = mock_client(&server);
    let response = client.send(&hello(&client)).await.unwrap();
    assert_eq!(response.stop_reason, Some(StopReason::MaxTokens));
    assert_eq!(response.cut_off_tool.as_deref(), Some("write_cache"));
    assert!(response.tool_uses().is_empty());
    assert_eq!(response.texts(), vec!["Caching."]);
    assert_eq!(response.usage.output_tokens, 4096, "the whole max_tokens");
    assert_eq!(server.request_count(), 1, "never resent");
    assert!(notices.lock().unwrap().is_empty());
}

#[tokio::test]
async fn refusals_and_paused_turns_are_replies() {
    let server = MockServer::start();
    let model = "claude-sonnet-5-5";
    let (client, _) = client_for(&server, model);
    server.push(Reply::refusal("cyber"));
    // A routine call of `model` with `messages`.
    let routine =
        |messages: Vec<Message>| request_for(&client, model, Workload::Routine, "s", messages);
    let start = vec![Message::user_blocks(vec![ContentBlock::text("Go.")])];
    let response = client.send(&routine(start.clone())).await.unwrap();
    assert_eq!(response.stop_reason, Some(StopReason::Refusal));
    assert_eq!(
        response.stop_details.unwrap().category.as_deref(),
        Some("cyber")
    );
    assert!(response.content.is_empty());

    // A paused turn goes back as it came, and the call is made again.
    server.push(Reply::text("Half way.").pause_turn());
    let paused = client.send(&routine(start.clone())).await.unwrap();
    assert_eq!(paused.stop_reason, Some(StopReason::PauseTurn));
    let mut messages = start;
    messages.push(Message::assistant(paused.content.clone()));
    server.push(Reply::text("All the way."));
    let done = client.send(&routine(messages.clone())).await.unwrap();
    assert_eq!(done.texts(), vec!["All the way."]);
    server.assert_no_violations();
    // Ending on any other assistant turn is prefill, which 5.x refuses.
    if let Content::Blocks(blocks) = &mut messages[1].content {
        blocks.push(ContentBlock::text("and more"));
    }
    let err = client.send(&routine(messages)).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::InvalidRequest);
    assert_eq!(server.take_violations().len(), 1);
}

#[tokio::test]
async fn billing_errors_are_final_and_named() {
    let server = MockServer::start();
    server
        .push(Reply::billing_error().should_retry(true))
        .push(Reply::text("never"));
    let (client, notices) = mock_client(&server);
    let err = client.send(&hello(&client)).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::Billing);
    assert_eq!(err.final_cause(), Some(FinalCause::Billing));
    assert!(
        err.to_string().starts_with("billing problem (HTTP 402): "),
        "{err}"
    );
    assert_eq!(server.request_count(), 1);
    assert!(notices.lock().unwrap().is_empty());
}

#[tokio::test]
async fn server_waits_are_honoured_as_dates_and_refused_past_a_minute() {
    let server = MockServer::start();
    let soon = (chrono::Utc::now() + chrono::Duration::seconds(2))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    server
        .push(Reply::overloaded().header("retry-after", &soon))
        .push(Reply::text("ok"));
    let (client, notices) = mock_client(&server);
    client.send(&hello(&client)).await.unwrap();
    let wait = notices.lock().unwrap()[0].wait;
    assert!(
        wait > Duration::ZERO && wait <= Duration::from_secs(2),
        "{wait:?}"
    );

    // Two minutes is more than luminos waits: the call gives up at once.
    let server = MockServer::start();
    server
        .push(Reply::rate_limited().retry_after_secs(120))
        .push(Reply::text("too late"));
    let (client, notices) = mock_client(&server);
    let started = Instant::now();
    let err = client.send(&hello(&client)).await.unwrap_err();
    assert_eq!(err.kind, ApiErrorKind::RateLimited);
    assert!(err.to_string().contains("retry after 120s"), "{err}");
    assert_eq!(server.request_count(), 1);
    assert!(notices.lock().unwrap().is_empty());
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_prompt_past_the_window_is_a_400_that_names_its_size() {
    let server = MockServer::start();
    server.set_context_window(50);
    let (client, _) = mock_client(&server);
    let long = client.request(
        "You are terse.",
        vec![Message::user_text("word ".repeat(200))],
        tools(),
    );
    let err = client.send(&long).await.unwrap_err();
    let (tokens, maximum) = err.prompt_too_long().expect("prompt is too long");
    assert!(tokens > 50 && maximum == 50, "{err}");
    assert_eq!(err.final_cause(), None);
    // A correct client meets this; it is not a protocol violation.
    assert!(server.violations().is_empty());
}

/// Before the endpoint has ever answered, a silent one costs two headers
/// timeouts; after it has, a silence gets every retry.
#[tokio::test]
async fn a_silent_endpoint_is_given_up_on_after_two_headers_timeouts() {
    let server = MockServer::start();
    server.respond_with(|_| Reply::silent());
    let mut config = config(&server);
    config.headers_timeout = Duration::from_millis(300);
    let (client, notices) = client_with(config.clone(), 6);
    let started = Instant::now();
    let err = client.send(&hello(&client)).await.unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(err.kind, ApiErrorKind::Timeout);
    assert!(err.message.contains("no response headers"), "{err}");
    assert_eq!(server.request_count(), 2);
    assert_eq!(notices.lock().unwrap().len(), 1);
    assert!(elapsed >= Duration::from_millis(600), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert!(!client.has_answered());

    // Once it has answered, the same silence is retried to the full count.
    let server = MockServer::start();
    server.push(Reply::text("hello"));
    server.push_all((0..3).map(|_| Reply::silent()));
    server.push(Reply::text("back"));
    config.base_url = server.url();
    let (client, notices) = client_with(config, 6);
    client.send(&hello(&client)).await.unwrap();
    assert!(client.has_answered() && client.has_succeeded());
    let back = client.send(&hello(&client)).await.unwrap();
    assert_eq!(back.texts(), vec!["back"]);
    assert_eq!(notices.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_refused_connection_gets_three_retries_before_any_answer() {
    let (client, notices) = send_to_a_closed_port(6).await;
    assert_eq!(notices, 3);
    assert!(!client.has_answered());
}
