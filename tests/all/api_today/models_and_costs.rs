//! Deprecated and unknown models (one warning), and costs priced request by
//! request.

use super::*;

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
        cache_creation_1h_input_tokens: None,
    };
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let env = tiny(&[("a.txt", "alpha\n")]).with_agent(move |agent| {
        agent.dir_script(".", move |turn| {
            counted.fetch_add(1, Ordering::SeqCst);
            let reply = match turn.turn {
                1 => Reply::tool_use("read_file", json!({"path": "a.txt"})),
                _ => submitted("Alpha."),
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

/// A model behind a gateway, which the catalog does not know: `--price`
/// gives its price, so the bill and the budget are in its dollars, with no
/// warning that its price is unknown; `0,0` is a free local model. A bad
/// price is a usage error (exit 2) before anything runs.
#[test]
fn a_given_price_prices_a_model_the_catalog_does_not_know() {
    let env = TestEnv::with_small_project();
    let env = env.with_mock();
    let out = run_json_ok(
        &env,
        "priced",
        &["--model", "local-llama-70b", "--price", "3,15"],
    );
    let err = stderr(&out);
    assert!(model_warnings(&err).is_empty(), "{err}");
    assert!(!err.contains("assumed prices"), "{err}");
    let report = json_of(&out);
    assert_eq!(report["investigation"]["status"], "complete");
    assert_eq!(report["investigation"]["model"], "local-llama-70b");
    // The bill, priced from what the mock reported at $3/$15, cache writes
    // at 1.25x and reads at 0.1x the input price.
    let expected: f64 = env
        .server
        .reported_usages()
        .iter()
        .map(|u| {
            (u.input_tokens as f64 * 3.0
                + u.cache_creation_input_tokens as f64 * 3.75
                + u.cache_read_input_tokens as f64 * 0.3
                + u.output_tokens as f64 * 15.0)
                / 1e6
        })
        .sum();
    let cost = report["investigation"]["cost_usd"].as_f64().unwrap();
    assert!(
        expected > 0.0 && (cost - expected).abs() < 1e-9,
        "{cost} vs {expected}"
    );

    let out = run_json_ok(
        &env,
        "free",
        &[
            "--model",
            "local-llama-70b",
            "--price",
            "0,0",
            "--budget",
            "0.01",
        ],
    );
    let report = json_of(&out);
    assert_eq!(report["investigation"]["cost_usd"], 0.0);
    assert_eq!(report["investigation"]["status"], "complete");

    let before = env.server.request_count();
    for bad in [
        "3",
        "3,15,1",
        "-1,2",
        "a,b",
        "nan,1",
        "1,inf",
        "",
        "2000000,1",
    ] {
        let out = env.output(&["--model", "x", "--price", bad]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "--price {bad:?}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("--price"), "{}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    assert_eq!(env.server.request_count(), before);
}

/// A model name with a newline (from `--model` or `LUMINOS_MODEL`) is
/// escaped in the warning a run prints, and in the one-line error when
/// the API does not know it: it cannot forge a line of its own.
#[test]
fn a_model_name_with_a_newline_is_escaped_when_printed() {
    let model = "claude-sonnet-9\nInvestigation complete.";
    let env = TestEnv::with_small_project().with_mock();
    let out = run_json_ok(&env, "warned", &["--model", model]);
    let err = stderr(&out);
    let warnings = model_warnings(&err);
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("'claude-sonnet-9\\nInvestigation complete.'"),
        "{err}"
    );
    assert!(
        !err.lines()
            .any(|l| l.starts_with("Investigation complete.'")),
        "{err}"
    );

    let env = TestEnv::with_small_project().with_mock();
    env.server
        .respond_with(move |_| Reply::unknown_model(model));
    let out = run_json(&env, "unknown", &["--model", model]);
    let error = failure_of(&out);
    assert!(
        error.starts_with("model 'claude-sonnet-9\\nInvestigation complete.' was not found"),
        "{error}"
    );
    let err = stderr(&out);
    assert!(
        !err.lines()
            .any(|l| l.starts_with("Investigation complete.'")),
        "{err}"
    );
}
