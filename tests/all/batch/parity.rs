//! `--batch` on the parity fixture (the pipeline tests' small project, as
//! it is): the same dir and file entries as an interactive run, every
//! request billed once, at half the cost.

use std::time::Duration;

use crate::support::TestEnv;
use crate::support::entries::cache_entries;

use super::{billed, interactive, run_ok};

#[test]
fn the_small_project_through_batches_matches_an_interactive_run_at_half_the_cost() {
    let env = TestEnv::new();
    env.small_project();
    let env = env.with_mock();
    env.server.set_batch_delay(Duration::from_millis(5));
    let (clean, interactive) = interactive(&env);
    env.server.clear_prompt_cache();
    let root = env.root().join("cache-batch");
    let report = run_ok(&env, &root, &["--batch"]);
    let batch = cache_entries(&root);
    assert_eq!(batch.dirs.len(), 4);
    similar_asserts::assert_eq!(clean.dirs, batch.dirs, "dir entries");
    similar_asserts::assert_eq!(clean.files, batch.files, "file entries");
    let (i, b) = (&interactive["investigation"], &report["investigation"]);
    assert_eq!(b["status"], "complete");
    assert_eq!(i["api_requests"], b["api_requests"]);
    let ratio = b["cost_usd"].as_f64().unwrap() / i["cost_usd"].as_f64().unwrap();
    assert!((ratio - 0.5).abs() < 1e-9, "batch/interactive cost {ratio}");
    assert!(billed(&env).values().all(|n| *n == 1));
    env.server.assert_no_violations();
}
