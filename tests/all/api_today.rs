//! The real binary against the mock answering as today's API does: models
//! that think and bind their thinking to the conversation, replies cut off
//! at the output limit, refusals, paused turns, full context windows,
//! billing and gateway errors, dead endpoints, and models the catalog
//! deprecates or does not know.

use crate::support;

use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{AgentEnv, MockAgent, Pass};
use support::entries::cache_entries;
use support::mock::{MockServer, Reply};
use support::output::{item_where, lines_where, stderr};

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "not a JSON report ({err}):\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            stderr(output)
        )
    })
}

/// [`run_json`], insisting that the run succeeds.
fn run_json_ok(env: &TestEnv, cache: &str, extra: &[&str]) -> Output {
    let out = run_json(env, cache, extra);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// `luminos --json [extra] TARGET` with the cache under `cache`.
fn run_json(env: &TestEnv, cache: &str, extra: &[&str]) -> Output {
    env.cmd()
        .env("LUMINOS_CACHE_DIR", env.root().join(cache))
        .args(["--json", "-j", "1"])
        .args(extra)
        .arg(env.target())
        .output()
        .unwrap()
}

/// A one-directory target (no survey, no plan): `.` and synthesis only.
fn tiny(files: &[(&str, &str)]) -> TestEnv {
    let env = TestEnv::new();
    for (name, text) in files {
        env.file(name, text);
    }
    env
}

/// Runs [`run_json_ok`] on `env` (a one-directory target), checks that no
/// request broke the API's rules, and returns the dir loop's requests.
fn dir_requests_of_a_clean_run(env: &AgentEnv) -> (Output, Vec<support::mock::RecordedRequest>) {
    let out = run_json_ok(env, "cache", &[]);
    env.server.assert_no_violations();
    (out, of_pass(env, &root()))
}

/// `luminos --json TARGET` with a 1 ms retry backoff and `vars` set, for
/// endpoints that never answer.
fn run_json_failing_fast(env: &TestEnv, vars: &[(&str, &str)]) -> Output {
    let mut cmd = env.cmd();
    cmd.env("LUMINOS_RETRY_BACKOFF_MS", "1")
        .envs(vars.iter().copied());
    cmd.arg("--json").arg(env.target()).output().unwrap()
}

/// The `Warning: model ...` lines of `err`.
fn model_warnings(err: &str) -> Vec<&str> {
    lines_where(err, |l| l.starts_with("Warning: model"))
}

/// The requests of one pass.
fn of_pass(env: &AgentEnv, pass: &Pass) -> Vec<support::mock::RecordedRequest> {
    env.requests_of(pass)
}

fn root() -> Pass {
    Pass::Dir(".".to_string())
}

/// The issue's first test: the whole pipeline on a model that thinks and
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
    let env = tiny(&[("a.txt", "alpha\n")]).with_agent(|agent| {
        agent.dir_script(".", |turn| match turn.turn {
            1 => Reply::text_and_tool_uses("Reading.", [("read_file", json!({"path": "a.txt"}))])
                .with_thinking(THOUGHT),
            _ => Reply::tool_use(
                "submit_report",
                json!({"summary": "One text file.", "completeness": 1.0}),
            )
            .with_thinking(THOUGHT),
        })
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
        .requests()
        .iter()
        .filter_map(|r| r.reported_usage)
        .map(|u| u.output_tokens)
        .sum();
    assert_eq!(json_of(&out)["investigation"]["tokens"]["output"], reported);
}

/// The redactor learns a token when the agent reads the file that holds
/// it; a piece of it that an earlier tool result quoted stays as it was
/// sent (rewriting it would break the conversation the thinking is bound
/// to), and only new text is masked.
#[test]
fn redaction_never_rewrites_a_message_already_sent() {
    const TOKEN: &str = "ghp_Xq9Lm2Vt7RpK4wZc8NbH1jY6dF3sG5aE0uTo";
    let piece = &TOKEN[4..30];
    let env = tiny(&[
        ("notes.txt", &format!("see {piece} for deploys\n")),
        ("deploy.env", &format!("GITHUB_TOKEN={TOKEN}\n")),
    ])
    .with_agent(|agent| {
        agent.dir_script(".", |turn| {
            let read = |path: &str| Reply::tool_use("read_file", json!({"path": path}));
            match turn.turn {
                1 => read("notes.txt"),
                2 => read("deploy.env"),
                3 => read("notes.txt"),
                _ => Reply::tool_use(
                    "submit_report",
                    json!({"summary": "Deploy notes.", "completeness": 1.0}),
                ),
            }
        })
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

/// A reply cut off at `max_tokens` inside a tool call: the call is not
/// run, the request is never sent again unchanged, and the model is told
/// to make smaller calls.
#[test]
fn a_cut_off_tool_call_is_never_run_or_resent_unchanged() {
    let env = tiny(&[("a.txt", "alpha\n")]).with_agent(|agent| {
        agent.dir_script(".", |turn| {
            if turn.body.to_string().contains("reached the output limit") {
                Reply::tool_use(
                    "submit_report",
                    json!({"summary": "Split the work.", "completeness": 1.0}),
                )
            } else {
                Reply::tool_use(
                    "write_cache",
                    json!({"cache_type": "file", "path": "a.txt",
                           "data": {"summary": "x".repeat(2000)}}),
                )
                .cut_off_at_max_tokens()
            }
        })
    });
    let out = run_json_ok(&env, "cache", &[]);
    let err = stderr(&out);
    assert!(!err.contains("retry 1/"), "{err}");
    assert!(
        err.contains("Reply cut off at the output limit in a call to write_cache"),
        "{err}"
    );
    let requests = of_pass(&env, &root());
    assert_eq!(requests.len(), 2);
    assert_ne!(requests[0].body, requests[1].body);
    let note = requests[1].last_user_text();
    assert!(
        note.contains("reached the output limit in the middle of a call to write_cache"),
        "{note}"
    );
    // The cut-off reply is not in the history; nothing it asked for ran.
    assert_eq!(requests[1].turn(), 0);
    let cached = cache_entries(&env.root().join("cache"));
    assert!(cached.files.is_empty(), "{:?}", cached.files);
    assert_eq!(json_of(&out)["investigation"]["status"], "complete");
}

/// A refusal ends its directory's loop with a partial entry and an info
/// flag; the other directories and the synthesis go on.
#[test]
fn a_refusal_ends_only_its_loop() {
    let env = TestEnv::with_small_project();
    let env = env.with_agent(|agent| agent.dir_script("docs", |_| Reply::refusal("cyber")));
    let out = run_json(&env, "cache", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    let investigation = &report["investigation"];
    assert_eq!(investigation["status"], "partial");
    assert_eq!(investigation["note"], "the model declined 1 directory");
    assert_eq!(investigation["directories_investigated"], 4);
    assert!(!report["ai_brief"].as_str().unwrap().is_empty());
    let flag = item_where(&report["flags"], "path", "docs");
    assert_eq!(flag["severity"], "info");
    assert!(
        flag["finding"].as_str().unwrap().contains("declined"),
        "{flag}"
    );
    assert!(
        flag["finding"].as_str().unwrap().contains("cyber"),
        "{flag}"
    );
    assert_eq!(of_pass(&env, &Pass::Dir("docs".into())).len(), 1);
    let cached = cache_entries(&env.root().join("cache"));
    let docs = cached
        .dirs
        .values()
        .find(|e| e["relative_path"] == "docs")
        .unwrap();
    assert_eq!(docs["partial"], true);
    assert_eq!(
        docs["partial_reason"],
        "model declined before files processed"
    );
    let others: Vec<&Value> = cached
        .dirs
        .values()
        .filter(|e| e["relative_path"] != "docs")
        .collect();
    assert_eq!(others.len(), 3);
    assert!(
        others.iter().all(|e| e.get("partial").is_none()),
        "{others:?}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("[AI] Investigation partial: the model declined 1 directory"),
        "{err}"
    );
    assert!(!err.contains("Investigation complete"), "{err}");
}

/// `pause_turn`: the turn goes back as it came and the model is called
/// again, with no user message in between.
#[test]
fn a_paused_turn_is_sent_back_and_continued() {
    let env = tiny(&[("a.txt", "alpha\n")]).with_agent(|agent| {
        agent.dir_script(".", |turn| match turn.turn {
            1 => Reply::text("Working through it.").pause_turn(),
            _ => Reply::tool_use(
                "submit_report",
                json!({"summary": "Resumed.", "completeness": 1.0}),
            ),
        })
    });
    let (out, requests) = dir_requests_of_a_clean_run(&env);
    assert_eq!(requests.len(), 2);
    let last = requests[1].messages().last().unwrap();
    assert_eq!(last["role"], "assistant");
    assert!(last.to_string().contains("Working through it."));
    assert_eq!(json_of(&out)["investigation"]["status"], "complete");
}

/// The window fills up: by the stop reason, or by the API's 400 "prompt
/// is too long". Either ends the loop as the budget does, with a partial
/// entry built from what the loop cached.
#[test]
fn a_full_context_window_ends_the_loop_like_the_budget() {
    // The file entry each loop writes first.
    let note = || {
        json!({"cache_type": "file", "path": "a.txt",
               "data": {"path": "a.txt", "relative_path": "a.txt", "size_bytes": 6,
                        "category": "text", "summary": "Alpha notes.",
                        "confidence": 0.9, "notable": false,
                        "cached_at": "2026-01-01T00:00:00+00:00"}})
    };
    // The stop reason.
    let env = tiny(&[("a.txt", "alpha\n")]).with_agent(|agent| {
        agent.dir_script(".", move |turn| match turn.turn {
            1 => Reply::tool_use("write_cache", note()),
            _ => Reply::text("and then").with_stop_reason("model_context_window_exceeded"),
        })
    });
    run_json_ok(&env, "cache", &[]);
    let cached = cache_entries(&env.root().join("cache"));
    let entry = cached.dirs.values().next().unwrap();
    assert_eq!(entry["partial_reason"], "context budget reached");
    assert_eq!(entry["summary"], "Alpha notes.");

    // The 400: turn 2 resends a 100 KB read, past a 20K-token window.
    let big = "lorem ipsum dolor sit amet ".repeat(4_000);
    let env = tiny(&[("a.txt", "alpha\n"), ("big.txt", &big)]).with_agent(|agent| {
        agent.dir_script(".", move |turn| match turn.turn {
            1 => Reply::tool_uses([
                ("write_cache", note()),
                (
                    "read_file",
                    json!({"path": "big.txt", "max_bytes": 200_000}),
                ),
            ]),
            _ => Reply::tool_use(
                "submit_report",
                json!({"summary": "never", "completeness": 1.0}),
            ),
        })
    });
    env.server.set_context_window(20_000);
    let out = run_json_ok(&env, "cache", &[]);
    assert!(
        stderr(&out).contains("prompt is too long"),
        "{}",
        stderr(&out)
    );
    let cached = cache_entries(&env.root().join("cache"));
    let entry = cached.dirs.values().next().unwrap();
    assert_eq!(entry["partial_reason"], "context budget reached");
    assert_eq!(entry["summary"], "Alpha notes.");
    // The 400 was the API's answer to a correct client, not a bug of ours.
    assert!(env.server.violations().is_empty());
}

#[test]
fn a_billing_error_stops_the_run_in_one_line() {
    let env = TestEnv::with_small_project();
    let env = env.with_mock();
    env.server.respond_with(|_| Reply::billing_error());
    let out = run_json(&env, "cache", &[]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(env.server.request_count(), 1);
    let error = json_of(&out)["investigation"]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.starts_with("the API refused the request for billing reasons")
            && error.contains("HTTP 402"),
        "{error}"
    );
    assert_eq!(stderr(&out).matches("billing reasons").count(), 1);
    // Nothing was billed, so nothing is said to be spent.
    assert!(json_of(&out)["investigation"].get("spent").is_none());
}

/// A run that fails after billed requests says what they cost, in the JSON
/// and in its one line.
#[test]
fn a_run_that_fails_midway_says_what_it_spent() {
    let env = TestEnv::new();
    env.small_project();
    let server = MockServer::start();
    let env = env.with_base_url(server.url());
    let agent = MockAgent::new(env.target());
    let target = agent.target().to_path_buf();
    server.respond_with(move |request| match Pass::of(&request.body, &target) {
        Pass::Survey => agent.reply(&request.body),
        _ => Reply::billing_error(),
    });
    let out = run_json(&env, "cache", &[]);
    assert_eq!(out.status.code(), Some(3));
    let investigation = &json_of(&out)["investigation"];
    assert_eq!(investigation["status"], "failed");
    let spent = &investigation["spent"];
    assert_eq!(spent["api_requests"], 1, "{investigation}");
    assert!(spent["tokens"]["input"].as_u64().unwrap() > 0, "{spent}");
    let cost = spent["cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0, "{spent}");
    assert!(
        stderr(&out).contains(&format!("(after 1 API request, about ${cost:.2})")),
        "{}",
        stderr(&out)
    );
}

/// The LiteLLM proxy answers a wrong key and an unknown model with 400s
/// whose words say so: the run stops the first time, even after earlier
/// calls succeeded.
#[test]
fn gateway_400s_for_a_wrong_key_or_model_stop_the_run_at_once() {
    let bodies = [
        (
            r#"{"error":{"message":"Authentication Error, Invalid proxy server token passed. Received API Key = sk-...abcd, Key Hash (Token) =0a1b. Unable to find token in cache or `LiteLLM_VerificationTokenTable`","type":"token_not_found_in_db","param":"key","code":"400"}}"#,
            "the API rejected the credential",
        ),
        (
            r#"{"error":{"message":"{'error': '/v1/messages: Invalid model name passed in model=claude-sonnet-5-5. Call `/v1/models` to view available models for your key.'}","type":"None","param":"None","code":"400"}}"#,
            "was not found by the API",
        ),
    ];
    for (body, said) in bodies {
        let env = TestEnv::with_small_project();
        let server = MockServer::start();
        let env = env.with_base_url(server.url());
        let agent = MockAgent::new(env.target());
        let target = agent.target().to_path_buf();
        server.respond_with(move |request| match Pass::of(&request.body, &target) {
            Pass::Survey => agent.reply(&request.body),
            _ => Reply::raw(400, "application/json", body),
        });
        let out = run_json(&env, "cache", &[]);
        assert_eq!(out.status.code(), Some(3), "{said}");
        assert_eq!(server.request_count(), 2, "{said}: stopped at the first");
        let error = json_of(&out)["investigation"]["error"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(error.contains(said), "{error}");
    }
}

/// A refused connection and an endpoint that never answers both end the
/// investigation after a few attempts, with one line naming the endpoint.
/// Timeouts and backoff are shortened here; the default give-up times are
/// measured by the ignored benchmark `bench::dead_endpoint`.
#[test]
fn dead_endpoints_fail_fast_and_say_what_to_check() {
    // Refused: the default TestEnv points at a closed port.
    let env = TestEnv::with_small_project();
    let started = Instant::now();
    let out = run_json_failing_fast(&env, &[]);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(3));
    let error = json_of(&out)["investigation"]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.starts_with("the API at http://127.0.0.1:9 could not be reached"),
        "{error}"
    );
    assert!(error.contains("ANTHROPIC_BASE_URL"), "{error}");
    let err = stderr(&out);
    // Before the endpoint ever answered: 3 retries, not the default 6.
    assert!(
        err.contains("retry 3/3") && !err.contains("retry 4/"),
        "{err}"
    );

    // Silent: accepts the connection, never sends the headers.
    let env = TestEnv::with_small_project();
    let server = MockServer::start();
    server.respond_with(|_| Reply::silent());
    let env = env.with_base_url(server.url());
    let started = Instant::now();
    let out = run_json_failing_fast(&env, &[("LUMINOS_HEADERS_TIMEOUT_SECS", "0.3")]);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(server.request_count(), 2, "two headers timeouts, then done");
    let report = json_of(&out);
    assert_eq!(report["investigation"]["status"], "failed");
    let error = report["investigation"]["error"].as_str().unwrap();
    assert!(
        error.contains("could not be reached") && error.contains("no response headers"),
        "{error}"
    );
    assert_eq!(stderr(&out).matches("Investigation failed: ").count(), 1);
}

/// A deprecated model named explicitly works, with one warning giving its
/// retirement date and replacement; an unknown one works, with one warning
/// saying its price is unknown and which price the figures assume.
#[test]
fn deprecated_and_unknown_models_work_with_one_warning() {
    let env = TestEnv::with_small_project();
    let env = env.with_mock();
    let out = run_json_ok(&env, "deprecated", &["--model", "claude-sonnet-4-5"]);
    let err = stderr(&out);
    let warnings = model_warnings(&err);
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("'claude-sonnet-4-5'"), "{err}");
    assert!(warnings[0].contains("2026-11-30"), "{err}");
    assert!(warnings[0].contains("claude-sonnet-5-5"), "{err}");

    let out = run_json_ok(&env, "unknown", &["--model", "claude-sonnet-9"]);
    let err = stderr(&out);
    let warnings = model_warnings(&err);
    assert_eq!(
        warnings,
        [
            "Warning: model 'claude-sonnet-9' is not in luminos's catalog, so its price is unknown; \
          costs and budgets assume Claude Sonnet 5.5's prices ($2 input / $10 output per million \
          tokens)"
        ],
        "{err}"
    );
    assert!(err.contains(" (at assumed prices)"), "{err}");
    assert_eq!(json_of(&out)["investigation"]["status"], "complete");
}

/// Costs come from the catalog, request by request.
#[test]
fn costs_are_priced_request_by_request() {
    // Haiku 5.5 charges five times past a 100K prompt, per request: two
    // loops of 60K-token calls never reach the tier, though their sum
    // would; the report's cost is priced call by call.
    let usage = luminos::ai::api::Usage {
        input_tokens: 60_000,
        output_tokens: 100,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
    };
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let env = tiny(&[("a.txt", "alpha\n")]).with_agent(move |agent| {
        agent.dir_script(".", move |turn| {
            counted.fetch_add(1, Ordering::SeqCst);
            let reply = match turn.turn {
                1 => Reply::tool_use("read_file", json!({"path": "a.txt"})),
                _ => Reply::tool_use(
                    "submit_report",
                    json!({"summary": "Alpha.", "completeness": 1.0}),
                ),
            };
            reply.with_usage(usage)
        })
    });
    let out = run_json_ok(&env, "cache", &["--model", "claude-haiku-5-5"]);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let report = json_of(&out);
    let cost = report["investigation"]["cost_usd"].as_f64().unwrap();
    let synthesis: Vec<luminos::ai::api::Usage> = of_pass(&env, &Pass::Synthesis)
        .iter()
        .filter_map(|r| r.reported_usage)
        .collect();
    let pricing = luminos::ai::api::cost::Pricing::for_model("claude-haiku-5-5");
    let expected =
        2.0 * pricing.cost(&usage) + synthesis.iter().map(|u| pricing.cost(u)).sum::<f64>();
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
    let mut summed = usage;
    summed.accumulate(&usage);
    assert!(
        cost < pricing.cost(&summed),
        "priced per request, not summed"
    );
}
