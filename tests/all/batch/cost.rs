//! What a batch run costs and says: the same requests as an interactive
//! run, billed at the batch prices (half of every rate, cache writes at the
//! lifetime they ask for: 5 minutes while rounds come back quickly),
//! `--estimate --batch` likewise, and the batches summed up in the report
//! and on stderr.

use super::*;
use crate::support::output::assert_contains;

#[test]
fn a_batch_run_leaves_an_interactive_runs_cache_at_batch_prices() {
    let env = fixture().with_mock();
    env.server.set_batch_delay(Duration::from_millis(20));
    let (clean, interactive_report) = interactive(&env);
    let from = env.server.request_count();

    let (root, report) = batch_run(&env);
    similar_asserts::assert_eq!(clean.dirs, cache_entries(&root).dirs, "dir entries");
    similar_asserts::assert_eq!(clean.files, cache_entries(&root).files, "file entries");
    env.server.assert_no_violations();

    // The same requests, every one through a batch; the rounds come back
    // within milliseconds, so each cache mark asks for 5 minutes (the mock
    // reports no write at the hour's lifetime), and the run says so.
    let requests = &env.server.requests()[from..];
    assert!(requests.iter().all(|r| r.batch.is_some()));
    assert!(requests.iter().all(|r| r.reported_cache_1h == 0));
    assert!(
        requests
            .iter()
            .any(|r| r.reported_usage.unwrap().cache_creation_input_tokens > 0)
    );
    assert!(
        requests
            .iter()
            .all(|r| !r.body.to_string().contains("\"1h\""))
    );
    assert_contains(
        &report["investigation"]["notes"].to_string(),
        "prompt-cache marks asked for 5 minutes",
    );
    let (i, b) = (
        &interactive_report["investigation"],
        &report["investigation"],
    );
    assert_eq!(b["status"], "complete");
    assert_eq!(i["api_requests"], b["api_requests"]);
    assert_eq!(i["tokens"], b["tokens"], "the same tokens");
    let model = i["model"].as_str().unwrap();
    let bill = b["cost_usd"].as_f64().unwrap();
    let expected = priced(requests, model, true);
    assert!((bill - expected).abs() < 1e-9, "{bill} vs {expected}");
    // The same tokens, every cache write at 5 minutes as interactively:
    // exactly half the bill.
    let interactive_cost = i["cost_usd"].as_f64().unwrap();
    assert!(
        (bill * 2.0 - interactive_cost).abs() < 1e-9,
        "{bill} vs {interactive_cost}"
    );

    // Rounds follow the chain of turns, not the number of loops: survey,
    // plan, two turns (cache the files, report) at each of the three
    // levels, synthesis; twelve loops.
    let batch = &b["batch"];
    let loops = clean.dirs.len();
    assert_eq!(loops, 12);
    assert_eq!(batch["rounds"], 1 + 1 + 2 * 3 + 1, "{batch}");
    assert!(batch["rounds"].as_u64().unwrap() < loops as u64 * 2);
    assert_eq!(batch["requests"], b["api_requests"]);
    assert_eq!(batch["succeeded"], b["api_requests"]);
    assert_eq!(batch["errored"], 0);
    assert!(
        i.get("batch").is_none(),
        "interactive runs have no batch key"
    );
    // Each request was sent and billed once; a complete investigation
    // keeps no batch files.
    assert!(billed(&env).values().all(|n| *n == 1));
    assert!(!investigation_dir(&root).join("batch").exists());
}

#[test]
fn estimate_batch_is_priced_as_the_batch_is() {
    let env = fixture().with_mock();
    let root = env.root().join("cache-estimate");
    let interactive = run_ok(&env, &root, &["--estimate"]);
    let batch = run_ok(&env, &root, &["--estimate", "--batch"]);
    assert_eq!(env.server.request_count(), 0, "no API call");
    assert_eq!(batch["batch"], true);
    assert_eq!(interactive["batch"], false);
    assert_eq!(batch["api_calls"], interactive["api_calls"]);
    // High (no cache hit, nothing written): half. Low: half, but what the
    // cache writes lasts an hour, at 2x the input price rather than 1.25x.
    let cost = |e: &Value, end: &str| e["cost_usd"][end].as_f64().unwrap();
    let (b, i) = (cost(&batch, "high"), cost(&interactive, "high"));
    assert!(i > 0.0 && (b * 2.0 - i).abs() <= 0.0002, "high: {b} vs {i}");
    let (b, i) = (cost(&batch, "low"), cost(&interactive, "low"));
    assert!(b * 2.0 > i && b * 2.0 < i * 1.6, "low: {b} vs {i}");
    let out = text_command(&env, &root, &["--estimate", "--batch"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("at Message Batches API prices (half the interactive ones)"),
        "{text}"
    );
}

#[test]
fn the_terminal_report_and_stderr_sum_up_the_batches() {
    let env = fixture().with_mock();
    env.server.set_batch_delay(Duration::from_millis(5));
    let root = env.root().join("cache-text");
    let out = text_command(&env, &root, &["--batch"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with("Batch: "))
        .unwrap_or_else(|| panic!("no batch line in\n{report}"));
    for part in ["9 rounds", "waited", "batch prices"] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    let said = stderr(&out);
    for part in [
        "(at batch prices)",
        "Batch round 1: 1 request sent as msgbatch_",
        "Batch: 9 rounds",
    ] {
        assert!(said.contains(part), "{part:?} not on stderr:\n{said}");
    }
}
