//! `--batch` on the parity fixture (the pipeline tests' small project, as
//! it is): the same dir and file entries as an interactive run, every
//! request billed once, at the batch prices; and with rounds of ten minutes
//! on the prompt cache's clock, at most 0.55x the interactive run.

use std::time::Duration;

use crate::support::TestEnv;
use crate::support::entries::cache_entries;

use super::{batch_run, billed, interactive};

#[test]
fn the_small_project_through_batches_matches_an_interactive_run_at_batch_prices() {
    let env = TestEnv::new();
    env.small_project();
    let env = env.with_mock();
    env.server.set_batch_delay(Duration::from_millis(5));
    let (clean, interactive) = interactive(&env);
    let (root, report) = batch_run(&env);
    let batch = cache_entries(&root);
    assert_eq!(batch.dirs.len(), 4);
    similar_asserts::assert_eq!(clean.dirs, batch.dirs, "dir entries");
    similar_asserts::assert_eq!(clean.files, batch.files, "file entries");
    let (i, b) = (&interactive["investigation"], &report["investigation"]);
    assert_eq!(b["status"], "complete");
    assert_eq!(i["api_requests"], b["api_requests"]);
    let from = env.server.request_count() - b["api_requests"].as_u64().unwrap() as usize;
    let bill = b["cost_usd"].as_f64().unwrap();
    let expected = super::priced(
        &env.server.requests()[from..],
        i["model"].as_str().unwrap(),
        true,
    );
    assert!((bill - expected).abs() < 1e-9, "{bill} vs {expected}");
    assert!(billed(&env).values().all(|n| *n == 1));
    env.server.assert_no_violations();
}

/// How long each batch takes on the prompt cache's clock in
/// [`with_ten_minute_rounds_a_batch_run_costs_at_most_055_of_an_interactive_one`].
const ROUND: Duration = Duration::from_secs(10 * 60);
/// What each turn thinks, in output tokens: what luminos allows a
/// directory turn of its default model (Sonnet 5.5, thinking between tool
/// calls) when it prices one, rather than the mock's token figure.
const THINKING: u64 = 300;

/// The parity fixture with loops that take ten turns each (one step a
/// turn, as a careful model does, each thinking [`THINKING`] tokens),
/// interactively (the prompt cache's clock at the wall clock's pace) and
/// through batches whose every round takes ten minutes on that clock: the
/// batch run bills at most 0.55x the interactive one, measured in the same
/// test. The survey's round takes ten minutes, so from the next round the
/// marks ask for an hour, which keeps what one round writes for the next
/// (with 5 minutes every round would write its whole conversation again),
/// and the run's notes say so.
#[test]
fn with_ten_minute_rounds_a_batch_run_costs_at_most_055_of_an_interactive_one() {
    let env = TestEnv::new();
    env.small_project();
    let env = env.with_agent(|agent| agent.thorough_dirs(10));
    env.server
        .set_batch_delay(Duration::from_millis(20))
        .set_batch_round_time(ROUND)
        .set_thinking_tokens(THINKING);
    let (clean, interactive) = interactive(&env);
    let from = env.server.request_count();
    let (root, report) = batch_run(&env);
    similar_asserts::assert_eq!(clean.dirs, cache_entries(&root).dirs, "dir entries");
    let (i, b) = (&interactive["investigation"], &report["investigation"]);
    assert_eq!(b["status"], "complete");
    assert_eq!(i["api_requests"], b["api_requests"]);
    // Survey, plan, ten turns at each of three levels, synthesis.
    assert_eq!(b["batch"]["rounds"], 1 + 1 + 3 * 10 + 1, "{}", b["batch"]);
    let ratio = b["cost_usd"].as_f64().unwrap() / i["cost_usd"].as_f64().unwrap();
    assert!(ratio <= 0.55, "batch/interactive cost {ratio}");
    // What the rounds read back is what the batch prices were charged on.
    let requests = &env.server.requests()[from..];
    let marked: Vec<_> = requests
        .iter()
        .filter(|r| r.body_contains("cache_control"))
        .collect();
    assert!(!marked.is_empty());
    assert!(marked.iter().all(|r| r.body_contains("\"1h\"")));
    assert!(requests.iter().any(|r| r.reported_cache_1h > 0));
    let notes = b["notes"].to_string();
    assert!(
        notes
            .contains("From batch round 2, prompt-cache marks asked for an hour: a round took 10m"),
        "{notes}"
    );
    assert!(
        requests
            .iter()
            .map(|r| r.reported_usage.unwrap().cache_read_input_tokens)
            .sum::<u64>()
            > 0
    );
    let expected = super::priced(requests, i["model"].as_str().unwrap(), true);
    assert!((b["cost_usd"].as_f64().unwrap() - expected).abs() < 1e-9);
    env.server.assert_no_violations();
}
