//! Rounds of batches: errored requests go again, final errors stop the run,
//! an expired batch resumes with a new one, an oversized round goes as
//! several batches.

use super::*;

/// Like the default agent, but the dir loop of `rel` answers its first
/// request with `first`.
fn failing_once(env: &AgentEnv, rel: &'static str, first: Reply) -> Arc<AtomicUsize> {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let target = env.target().to_path_buf();
    env.set_agent(move |agent| {
        let plain = MockAgent::new(&target);
        agent.dir_script(rel, move |turn| {
            if seen.fetch_add(1, Ordering::SeqCst) == 0 {
                first.clone()
            } else {
                plain.reply(turn.body)
            }
        })
    });
    calls
}

#[test]
fn errored_requests_go_again_next_round_and_final_errors_stop_the_run() {
    let env = fixture().with_mock();
    let (clean, _) = interactive(&env);
    env.server.set_batch_delay(Duration::from_millis(5));
    failing_once(&env, "pkg0/mod1", Reply::overloaded());
    let root = env.root().join("cache-errored");
    let report = run_ok(&env, &root, &["--batch"]);
    let batch = &report["investigation"]["batch"];
    assert_eq!(
        (batch["errored"].as_u64(), batch["retried"].as_u64()),
        (Some(1), Some(1)),
        "{batch}"
    );
    assert_eq!(report["investigation"]["status"], "complete");
    // The failed request went again in the next round, alone of its kind:
    // sent twice, billed once.
    let sent = sent(&env);
    let twice = sent.values().filter(|n| **n == 2).count();
    assert_eq!(twice, 1, "{sent:?}");
    let billed = billed(&env);
    assert!(billed.values().all(|n| *n == 1));
    let entries = cache_entries(&root);
    similar_asserts::assert_eq!(clean.dirs, entries.dirs);
    similar_asserts::assert_eq!(clean.files, entries.files);

    // A billing error in a batch is final, as it is interactively.
    failing_once(&env, "pkg1/mod4", Reply::billing_error());
    let root = env.root().join("cache-billing");
    let out = run(&env, &root, &["--batch"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["investigation"]["status"], "failed");
    let error = report["investigation"]["error"].as_str().unwrap();
    assert!(error.contains("billing"), "{error}");
}

#[test]
fn an_expired_batch_resumes_with_a_new_one() {
    let env = fixture().with_mock();
    let (clean, _) = interactive(&env);
    env.server.set_batch_delay(Duration::from_millis(20));
    let base = env.server.batches().len();
    // The first loop round expires with three of its requests processed.
    env.server.expire_batches(&[base + 2]);
    env.server.process_at_once(3);
    let root = env.root().join("cache-expired");
    let report = run_ok(&env, &root, &["--batch"]);
    let batches = env.server.batches();
    let first_round = batches[base + 2].custom_ids.len();
    assert!(batches[base + 2].expires && first_round > 3);
    // The expired requests went in the very next batch.
    let next: HashSet<&String> = batches[base + 3].custom_ids.iter().collect();
    let expired: Vec<&String> = batches[base + 2].custom_ids[3..].iter().collect();
    assert!(expired.iter().all(|id| next.contains(id)));
    let batch = &report["investigation"]["batch"];
    assert_eq!(
        batch["expired"].as_u64(),
        Some(first_round as u64 - 3),
        "{batch}"
    );
    assert!(billed(&env).values().all(|n| *n == 1));
    let entries = cache_entries(&root);
    similar_asserts::assert_eq!(clean.dirs, entries.dirs);
    similar_asserts::assert_eq!(clean.files, entries.files);
}

#[test]
fn a_round_over_the_batch_size_goes_as_several_batches() {
    let env = fixture().with_mock();
    let (clean, _) = interactive(&env);
    env.server.set_batch_delay(Duration::from_millis(5));
    // Three requests a batch (an account's queue may need it; the mock
    // holds the client to it): the eight leaves go in three batches of one
    // round.
    env.server.set_batch_limits(3, 256 * 1024 * 1024);
    let base = env.server.batches().len();
    let root = env.root().join("cache-split");
    let out = run(&env, &root, &["--batch", "--batch-size", "3"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let batch = &report["investigation"]["batch"];
    assert_eq!(
        batch["rounds"].as_u64(),
        Some(9),
        "{batch}\n{}",
        stderr(&out)
    );
    assert!(batch["batches"].as_u64().unwrap() > 9, "{batch}");
    assert!(
        env.server.batches()[base..]
            .iter()
            .all(|b| b.custom_ids.len() <= 3)
    );
    env.server.assert_no_violations();
    let entries = cache_entries(&root);
    similar_asserts::assert_eq!(clean.dirs, entries.dirs);
    similar_asserts::assert_eq!(clean.files, entries.files);
}
