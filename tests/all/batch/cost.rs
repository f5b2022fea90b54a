//! What a batch run costs and says: half an interactive run's cost for the
//! same cache, `--estimate --batch` at half, and the batches summed up in the
//! report and on stderr.

use super::*;

#[test]
fn a_batch_run_leaves_an_interactive_runs_cache_at_half_the_cost() {
    let env = fixture().with_mock();
    env.server.set_batch_delay(Duration::from_millis(20));
    let (clean, interactive_report) = interactive(&env);
    let from = env.server.request_count();

    env.server.clear_prompt_cache();
    let root = env.root().join("cache-batch");
    let report = run_ok(&env, &root, &["--batch"]);
    similar_asserts::assert_eq!(clean.dirs, cache_entries(&root).dirs, "dir entries");
    similar_asserts::assert_eq!(clean.files, cache_entries(&root).files, "file entries");
    env.server.assert_no_violations();

    // The same requests, every one through a batch, billed at half price.
    let requests = &env.server.requests()[from..];
    assert!(requests.iter().all(|r| r.batch.is_some()));
    let (i, b) = (
        &interactive_report["investigation"],
        &report["investigation"],
    );
    assert_eq!(b["status"], "complete");
    assert_eq!(i["api_requests"], b["api_requests"]);
    assert_eq!(i["tokens"], b["tokens"], "the same tokens");
    let ratio = b["cost_usd"].as_f64().unwrap() / i["cost_usd"].as_f64().unwrap();
    assert!((ratio - 0.5).abs() < 1e-9, "batch/interactive cost {ratio}");

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
fn estimate_batch_is_half_the_interactive_estimate() {
    let env = fixture().with_mock();
    let root = env.root().join("cache-estimate");
    let interactive = run_ok(&env, &root, &["--estimate"]);
    let batch = run_ok(&env, &root, &["--estimate", "--batch"]);
    assert_eq!(env.server.request_count(), 0, "no API call");
    assert_eq!(batch["batch"], true);
    assert_eq!(interactive["batch"], false);
    assert_eq!(batch["api_calls"], interactive["api_calls"]);
    for end in ["low", "high"] {
        let (b, i) = (
            batch["cost_usd"][end].as_f64().unwrap(),
            interactive["cost_usd"][end].as_f64().unwrap(),
        );
        assert!(
            i > 0.0 && (b * 2.0 - i).abs() <= 0.0002,
            "{end}: {b} vs {i}"
        );
    }
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
