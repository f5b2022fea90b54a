//! What is sent back stays as sent: thinking blocks kept but never printed,
//! cached or summarised, and redaction never rewriting a message already sent.

use super::*;

/// The first test: the whole pipeline on a model that thinks and
/// binds its thinking (the default, Sonnet 5.5) leaves the same cache as
/// on one that does not (Sonnet 4.5), and no request drops a thinking
/// block (the mock refuses, with the documented 400, any that does, and
/// any change to what came before one).
#[test]
fn a_thinking_model_leaves_the_same_cache_as_one_that_does_not() {
    let env = TestEnv::with_small_project();
    let env = env.with_mock();
    let plain = run_json_ok(&env, "plain", &["--model", "claude-sonnet-4-5"]);
    let plain_requests = env.server.request_count();
    let thinking = run_json_ok(&env, "thinking", &[]);
    env.server.assert_no_violations();

    assert_eq!(
        cache_entries(&env.root().join("plain")),
        cache_entries(&env.root().join("thinking"))
    );
    assert_eq!(json_of(&plain)["ai_brief"], json_of(&thinking)["ai_brief"]);
    assert_eq!(json_of(&thinking)["investigation"]["status"], "complete");

    let passes = env.passes();
    let (before, after) = passes.split_at(plain_requests);
    for (pass, request) in before {
        assert_eq!(request.body["max_tokens"], 4096, "{pass:?}");
        assert!(request.body.get("thinking").is_none(), "{pass:?}");
    }
    let mut continued = 0;
    for (pass, request) in after {
        assert_eq!(request.body["model"], "claude-sonnet-5-5");
        assert_eq!(request.body["max_tokens"], 32_768, "{pass:?}");
        match pass {
            // Directory loops think between tool calls only.
            Pass::Dir(_) => assert_eq!(request.body["thinking"], json!({"type": "between_tools"})),
            // The passes that shape the report keep the model's default.
            _ => assert!(request.body.get("thinking").is_none(), "{pass:?}"),
        }
        for message in request
            .messages()
            .iter()
            .filter(|m| m["role"] == "assistant")
        {
            continued += 1;
            assert_eq!(
                message["content"][0]["type"], "thinking",
                "{pass:?}: {message}"
            );
            assert!(message["content"][0]["signature"].as_str().unwrap().len() > 8);
        }
    }
    assert!(continued >= 4, "every loop continued a turn");
}

/// Thinking is billed as output and never said or cached.
#[test]
fn thinking_text_is_never_printed_cached_or_summarised() {
    const THOUGHT: &str = "PONDERING-THE-HIDDEN-THOUGHT";
    let env = tiny_scripted(&[("a.txt", "alpha\n")], |turn| {
        let reply = match turn.turn {
            1 => Reply::text_and_tool_uses("Reading.", [("read_file", json!({"path": "a.txt"}))]),
            _ => submitted("One text file."),
        };
        reply.with_thinking(THOUGHT)
    });
    let out = run_json_ok(&env, "cache", &[]);
    assert!(!stderr(&out).contains(THOUGHT));
    assert!(!String::from_utf8_lossy(&out.stdout).contains(THOUGHT));
    for entry in walkdir::WalkDir::new(env.root().join("cache")) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            assert!(!text.contains(THOUGHT), "{}", entry.path().display());
        }
    }
    // The thought went back to the API with its turn, unaltered.
    let second = &of_pass(&env, &root())[1];
    assert_eq!(second.messages()[1]["content"][0]["thinking"], THOUGHT);
    // Its tokens are part of the output billed.
    let reported: u64 = env
        .server
        .reported_usages()
        .iter()
        .map(|u| u.output_tokens)
        .sum();
    assert_eq!(json_of(&out)["investigation"]["tokens"]["output"], reported);
}

/// The redactor learns a token when the agent reads the file that holds
/// it (here in a directory the ignore rules keep out of the scan, which
/// the learning before the first tool result does not enter); a piece of
/// it that an earlier tool result quoted stays as it was sent (rewriting
/// it would break the conversation the thinking is bound to), and only
/// new text is masked.
#[test]
fn redaction_never_rewrites_a_message_already_sent() {
    const TOKEN: &str = "ghp_Xq9Lm2Vt7RpK4wZc8NbH1jY6dF3sG5aE0uTo";
    let piece = &TOKEN[4..30];
    let notes = format!("see {piece} for deploys\n");
    let deploy = format!("GITHUB_TOKEN={TOKEN}\n");
    let files = [
        ("notes.txt", notes.as_str()),
        (".gitignore", "vault/\n"),
        ("vault/deploy.env", deploy.as_str()),
    ];
    let env = tiny_scripted(&files, |turn| {
        let read = |path: &str| Reply::tool_use("read_file", json!({"path": path}));
        match turn.turn {
            1 => read("notes.txt"),
            2 => read("vault/deploy.env"),
            3 => read("notes.txt"),
            _ => submitted("Deploy notes."),
        }
    });
    let (_, requests) = dir_requests_of_a_clean_run(&env);
    assert_eq!(requests.len(), 4);
    let last = &requests[3];
    // Turn 1's result, as first sent, in the last request.
    assert!(
        last.messages()[2].to_string().contains(piece),
        "{}",
        last.messages()[2]
    );
    // The same text read again after the token was learned is masked, and
    // the token itself never left.
    assert!(
        !last.messages()[6].to_string().contains(piece),
        "{}",
        last.messages()[6]
    );
    assert!(
        env.server
            .requests()
            .iter()
            .all(|r| !r.body_contains(TOKEN))
    );
}
