//! Money said up front and at the end, on stderr: the budget before
//! anything is spent, what the run spent as its last line, and, when a
//! report comes from the cache, what the investigation cost in all, when
//! and by which luminos, beside this run's $0.00.

use crate::support;

use serde_json::Value;
use support::TestEnv;
use support::output::{squashed, stderr, stdout};

fn json(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap()
}

#[test]
fn the_budget_comes_first_and_the_spend_last() {
    let env = TestEnv::with_small_project().with_mock();
    let out = env.run_ok(&["--json"]);
    let err = stderr(&out);
    assert_eq!(
        err.lines().next().unwrap(),
        "Budget: up to $5.00 (preview with --estimate; change with --budget)"
    );
    let investigation = &json(&out)["investigation"];
    let cost = investigation["cost_usd"].as_f64().unwrap();
    let requests = investigation["api_requests"].as_u64().unwrap();
    assert!(requests > 1);
    assert_eq!(
        err.lines().last().unwrap(),
        format!("Spent: ${cost:.2} of $5.00 on {requests} API requests.")
    );

    // Another budget is the one said; runs that cannot spend say none.
    let out = env.run_ok(&["--fresh", "--budget", "2"]);
    assert!(stderr(&out).starts_with("Budget: up to $2.00 (preview with --estimate"));
    for quiet in [&["--scan-only"][..], &["--estimate"]] {
        let err = stderr(&env.run_ok(quiet));
        assert!(!err.contains("Budget:") && !err.contains("Spent:"), "{err}");
    }
    let out = env.bare_cmd().arg(env.target()).output().unwrap();
    assert!(!stderr(&out).contains("Budget:"));
}

#[test]
fn a_report_from_the_cache_gives_what_the_investigation_cost() {
    let env = TestEnv::with_small_project().with_mock();
    let first = json(&env.run_ok(&["--json"]));
    let cost = first["investigation"]["cost_usd"].as_f64().unwrap();
    let requests = first["investigation"]["api_requests"].as_u64().unwrap();
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();

    let again = env.run_ok_from_cache(&[], "the investigation");
    let text = stdout(&again);
    let expected = format!(
        "Cost: this run: $0.00, from the cache; the investigation cost ${cost:.2} in all \
         ({requests} API requests), last paid for on {today} by luminos {}.",
        env!("CARGO_PKG_VERSION")
    );
    assert!(squashed(&text).contains(&expected), "{expected}\n{text}");
    assert_eq!(
        stderr(&again).lines().last().unwrap(),
        "Spent: $0.00; everything came from the cache."
    );

    // The JSON carries the record; a second paid run adds to it.
    let cached = json(&env.run_ok_from_cache(&["--json"], "the investigation"));
    let all = &cached["investigation"]["all_runs"];
    assert_eq!(all["api_requests"], requests);
    assert!((all["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-9);
    assert_eq!(all["luminos_version"], env!("CARGO_PKG_VERSION"));
    env.file("src/new.rs", "pub fn added() {}\n");
    let more = json(&env.run_ok(&["--json"]));
    let paid = more["investigation"]["api_requests"].as_u64().unwrap();
    assert!(paid > 0);
    assert_eq!(
        more["investigation"]["all_runs"]["api_requests"],
        requests + paid
    );
}

/// A run Ctrl-C stopped paid for what it sent too: the record counts it,
/// and the next run's total includes it.
#[test]
fn an_interrupted_run_is_counted_in_what_the_investigation_cost() {
    let env = TestEnv::with_small_project().with_mock();
    // The survey and the plan are answered; the run stops while two loops
    // wait on theirs (those two were never answered, so never billed).
    let out =
        env.interrupt_while_waiting(&["--jobs", "2"], 2, 2, std::time::Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let done = json(&env.run_ok(&["--json"]));
    let this_run = done["investigation"]["api_requests"].as_u64().unwrap();
    assert_eq!(
        done["investigation"]["all_runs"]["api_requests"],
        this_run + 2,
        "{}",
        done["investigation"]
    );
}
