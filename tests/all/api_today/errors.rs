//! API errors that stop a run: billing, failing midway (and what was spent),
//! gateway 400s, dead endpoints.

use super::*;

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
    let (env, _server) = failing_after_the_survey(Reply::billing_error);
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
        let (env, server) =
            failing_after_the_survey(move || Reply::raw(400, "application/json", body));
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
