//! Prompt caching: usage under the mock's prefix cache, and the request as
//! it goes over the wire.

use super::*;

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
    let usages = server.reported_usages();
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
    assert!(
        tracker.cache_savings() > luminos::money::Usd::ZERO,
        "{}",
        tracker.cache_summary()
    );
    for request in server.requests() {
        let marks = request.body.to_string().matches("cache_control").count();
        // Tools, system, the newest user message and, from the second turn,
        // the one before it.
        assert_eq!(marks, if request.turn() == 0 { 3 } else { 4 });
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
            tool_use("toolu_01", "list_directory", json!({"path": "."})),
        ]),
        Message::user_blocks(vec![ContentBlock::tool_result(
            "toolu_01",
            "main.rs\nlib.rs",
            false,
        )]),
        Message::assistant(vec![
            tool_use("toolu_02", "read_file", json!({"path": "main.rs"})),
            tool_use("toolu_03", "read_file", json!({"path": "missing.rs"})),
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
