//! `investigate` over MCP: the binary's investigation against the mock,
//! its progress as notifications, its answer the overview; read back
//! afterwards without a request, and resumed for nothing.

use super::*;

#[test]
fn investigate_sends_progress_and_answers_with_the_overview() {
    let env = TestEnv::with_small_project()
        .with_agent(|agent| agent.flag("src", "src/main.rs", "critical", "main() does nothing"));
    let mcp = Mcp::of(&env);
    let result = mcp
        .call_raw("investigate", args(&env, json!({"budget": 3})))
        .unwrap();
    assert_eq!(
        result.is_error,
        Some(false),
        "{:?}\n{}",
        result.content,
        mcp.stderr()
    );
    let answer = result.structured_content.unwrap();
    let requests = env.server.request_count();
    assert!(
        requests >= 6,
        "survey, planning, 4 loops, synthesis: {requests}"
    );
    let run = &answer["investigation"];
    assert_eq!(run["status"], "complete");
    assert_eq!(run["api_requests"], json!(requests));
    assert_eq!(run["budget_usd"], 3.0);
    assert!(run["cost_usd"].as_f64().unwrap() > 0.0);
    assert!(
        answer["brief"]
            .as_str()
            .unwrap()
            .starts_with("Scripted brief")
    );
    assert_eq!(answer["flags"][0]["finding"], "main() does nothing");
    assert_eq!(answer["flags"][0]["severity"], "critical");

    // One notification per line of progress under the call's token (the
    // client gives every request one), counted 1, 2, 3... (the client may
    // handle them out of order; the wire order is the protocol test's).
    let mut progress = mcp.progress_through("[AI] Investigation complete");
    progress.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    assert!(progress.len() >= 10, "{progress:?}");
    for (n, note) in progress.iter().enumerate() {
        assert_eq!(note.progress_token, progress[0].progress_token);
        assert_eq!(note.progress, (n + 1) as f64);
        assert_eq!(note.total, None);
    }
    let messages: Vec<&str> = progress
        .iter()
        .map(|note| note.message.as_deref().unwrap())
        .collect();
    assert!(
        messages.iter().any(|m| m.starts_with("[scan] ")),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"[AI] Starting multi-pass investigation..."),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("[AI] Investigation complete")),
        "{messages:?}"
    );
    // The same lines are the server's log.
    assert!(
        mcp.stderr()
            .contains("[AI] Starting multi-pass investigation...")
    );

    // Read back: the same verdict, the run's status, no request.
    let overview = mcp.answer("overview", args(&env, json!({})));
    assert_eq!(overview["brief"], answer["brief"]);
    assert_eq!(overview["flags"], answer["flags"]);
    assert_eq!(overview["investigation"]["status"], "complete");
    assert!(overview["investigation"]["finished_at"].is_string());
    // Again: resumed over an unchanged tree, it costs nothing.
    let again = mcp.answer("investigate", args(&env, json!({})));
    assert_eq!(again["brief"], answer["brief"]);
    assert_eq!(again["investigation"]["api_requests"], 0);
    assert_eq!(env.server.request_count(), requests);
}

/// An endpoint that refuses every connection: the investigation fails, and
/// the call is a tool error saying why, in the run's own line.
#[test]
fn a_failed_investigation_is_a_tool_error() {
    let env = TestEnv::with_small_project();
    let mut cmd = env.bare_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .env("LUMINOS_RETRY_BACKOFF_MS", "1");
    let mcp = Mcp::start(cmd);
    let line = mcp.failure("investigate", args(&env, json!({})));
    assert!(line.starts_with("Investigation failed: "), "{line}");
    // Nothing reached its end, so there is nothing to read back.
    assert!(
        mcp.failure("overview", args(&env, json!({})))
            .contains("has not been investigated yet")
    );
}

/// A second `investigate` of a target while this server's first one runs
/// is refused in one line that says the server itself holds the run (not
/// "another luminos run (pid N) ... stop it" naming the server's own pid);
/// the first call then finishes as usual.
#[test]
fn a_second_investigate_while_the_first_runs_says_the_server_holds_it() {
    use crate::support::agent::MockAgent;
    use crate::support::gate::{Gate, OpenOnDrop};
    use crate::support::mock::MockServer;
    use std::time::Duration;

    let server = MockServer::start();
    let env = TestEnv::with_small_project().with_base_url(server.url());
    let agent = MockAgent::new(env.target());
    let gate = Gate::default();
    let held = gate.clone();
    // Every request waits for the gate: the first run holds the target's
    // run lock until the second call has been answered.
    server.respond_with(move |request| {
        held.wait(Duration::from_secs(60));
        agent.reply(&request.body)
    });
    let release = OpenOnDrop(gate.clone());
    let mcp = Mcp::of(&env);
    let first_args = args(&env, json!({"budget": 3}));
    let (first, second) = mcp.runtime.block_on(async {
        let first = mcp.session().call_tool(
            CallToolRequestParams::new("investigate")
                .with_arguments(first_args.as_object().unwrap().clone()),
        );
        let second = async {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while server.request_count() == 0 && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let second = mcp
                .session()
                .call_tool(
                    CallToolRequestParams::new("investigate")
                        .with_arguments(args(&env, json!({})).as_object().unwrap().clone()),
                )
                .await;
            gate.open();
            second
        };
        tokio::join!(first, second)
    });
    drop(release);
    let second = second.unwrap();
    assert_eq!(second.is_error, Some(true), "{:?}", second.content);
    let line = text_of(&second);
    assert!(
        line.contains("this MCP server is already investigating this target"),
        "{line}"
    );
    assert!(!line.contains("pid") && !line.contains("stop it"), "{line}");
    let first = first.unwrap();
    assert_eq!(first.is_error, Some(false), "{:?}", first.content);
}
