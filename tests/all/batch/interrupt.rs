//! A run interrupted while its batch is in flight: killed, canceled or
//! stopped with Ctrl-C, it never pays twice and resumes to the same cache.

use super::*;

#[test]
fn killed_while_waiting_a_rerun_sends_nothing_twice_and_ends_with_the_same_cache() {
    let env = fixture().with_mock();
    let (clean, _) = interactive(&env);
    let root = env.root().join("cache-killed");
    let base = env.server.batches().len();
    // Batches: survey (base), plan (base+1), then two rounds per level
    // (the leaves' first turns, their second, the next level's...),
    // synthesis. Killed while waiting on the survey's, on the leaves'
    // second turns and on the middle level's; each rerun replays what its
    // predecessor read and picks up the batch it left. The batch a run is
    // killed on is held in progress, so the kill lands while the run waits
    // on it however loaded the machine; moving the mark past it lets the
    // rerun find it ended.
    env.server.set_batch_delay(Duration::from_millis(5));
    for n in [base, base + 3, base + 5] {
        env.server.hold_batches_from(Some(n));
        let mut child = spawn_until_waiting(&env, &root, n);
        let out = signal(&mut child, libc::SIGKILL);
        assert!(!out.status.success());
    }
    env.server.hold_batches_from(None);
    let out = run(&env, &root, &["--batch"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("that an earlier run left in flight"),
        "{}",
        stderr(&out)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["investigation"]["status"], "complete");
    assert!(report["investigation"]["batch"]["batches_resumed"].as_u64() == Some(1));
    assert!(
        report["investigation"]["batch"]["replayed"]
            .as_u64()
            .unwrap()
            > 0,
        "{}",
        stderr(&out)
    );
    assert_nothing_paid_twice(&env, base, 0);
    let resumed = cache_entries(&root);
    similar_asserts::assert_eq!(clean.dirs, resumed.dirs, "dir entries");
    similar_asserts::assert_eq!(clean.files, resumed.files, "file entries");
    assert!(batches_in_flight(&root).is_empty());
}

#[test]
fn a_batch_in_flight_can_be_canceled_and_its_answers_are_still_used() {
    // Two leaves off the longest chain (src/core, then src, then the root:
    // two turns each; a pkg dir has no files of its own and reports on its
    // first turn): the rest still takes a round per turn of that chain.
    cancel_then_resume(&["pkg0/mod0", "pkg1/mod3"], 2 * 3 + 1);
}

/// The number of rounds follows what is left of the longest chain, not
/// the order the run happened to put the leaves in: when what the canceled
/// batch answered is src/core's first turn, the resumed run needs a round
/// fewer.
#[test]
fn a_canceled_batch_that_answered_the_longest_chain_saves_its_round() {
    cancel_then_resume(&["src/core", "docs"], 2 * 3);
}

/// A `--batch` run killed while it waits on the first loop round, whose
/// batch has processed the first turns of the leaves `answered` (and no
/// other request); refused without `--batch`; `--cancel-batch`; then a
/// `--batch` run that reads what the canceled batch answered and takes
/// `rounds` rounds.
fn cancel_then_resume(answered: &[&str], rounds: u64) {
    let env = fixture().with_mock();
    let (clean, _) = interactive(&env);
    let base = env.server.batches().len();
    let root = env.root().join("cache-canceled");
    // The survey and plan batches (one request each) end at once; in the
    // first loop round (eight leaves) the first turns of `answered` are
    // processed as soon as it is seen and the rest would take 30 s. They
    // are named, not taken by position: which leaves come first in a
    // batch is up to the run's scheduling, and it decides the rounds.
    let target = std::fs::canonicalize(env.target()).unwrap();
    let answered: Vec<String> = answered.iter().map(|d| d.to_string()).collect();
    let leaves = answered.len();
    env.server.set_batch_delay(Duration::from_secs(30));
    env.server.process_at_once_if(
        move |params| match support::agent::Pass::of(params, &target) {
            support::agent::Pass::Dir(rel) => {
                support::agent::turn_of(params) == 1 && answered.contains(&rel)
            }
            _ => true,
        },
    );
    let mut child = spawn_until_waiting(&env, &root, base + 2);
    let id = env.server.batches()[base + 2].id.clone();
    // The run's first look at the batch gets those requests processed.
    let looked_at = env.server.wait_until(DEADLINE, |requests| {
        let of_batch = |r: &&support::mock::RecordedRequest| {
            r.batch.as_ref().is_some_and(|b| b.batch_id == id)
        };
        requests.iter().filter(of_batch).count() >= leaves
    });
    assert!(looked_at, "the batch was never looked at");
    signal(&mut child, libc::SIGKILL);

    // A run without --batch would pay again: it is refused.
    let requests = env.server.request_count();
    let out = run(&env, &root, &[]);
    assert_eq!(out.status.code(), Some(3));
    let said = stderr(&out);
    assert!(
        said.contains("--batch") && said.contains("--cancel-batch"),
        "{said}"
    );
    assert_eq!(env.server.request_count(), requests);

    // Canceling needs the API, so a key.
    let out = command(&env, &root, &["--cancel-batch"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--cancel-batch needs an Anthropic API key"),
        "{}",
        stderr(&out)
    );

    // --cancel-batch: no scan, no report, the API asked to cancel.
    let mut cmd = command(&env, &root, &["--cancel-batch"]);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        out.stdout.is_empty() || out.stdout == b"null",
        "no report on stdout"
    );
    let said = stderr(&out);
    let id = &env.server.batches()[base + 2].id;
    assert!(
        said.contains(id.as_str()) && said.contains("canceling"),
        "{said}"
    );
    assert!(env.server.batches()[base + 2].canceled);

    // The next --batch run reads what was answered before the cancel and
    // sends the rest again.
    env.server.set_batch_delay(Duration::from_millis(5));
    let report = run_ok(&env, &root, &["--batch"]);
    assert_eq!(report["investigation"]["status"], "complete");
    let batch = &report["investigation"]["batch"];
    assert_eq!(batch["batches_resumed"].as_u64(), Some(1), "{batch}");
    let canceled = env.server.batches()[base + 2].custom_ids.len() - leaves;
    assert_eq!(batch["canceled"].as_u64(), Some(canceled as u64), "{batch}");
    // The canceled batch is read before the first round, not in a round of
    // its own: what it did not answer goes out at once, with the second
    // turns of the leaves it answered.
    assert_eq!(batch["retried"].as_u64(), Some(0), "{batch}");
    assert_eq!(batch["rounds"].as_u64(), Some(rounds), "{batch}");
    assert_nothing_paid_twice(&env, base, canceled);
    let entries = cache_entries(&root);
    similar_asserts::assert_eq!(clean.dirs, entries.dirs);
    similar_asserts::assert_eq!(clean.files, entries.files);
    let out = command(&env, &root, &["--cancel-batch"]).output().unwrap();
    assert!(
        stderr(&out).contains("No batch is in flight"),
        "{}",
        stderr(&out)
    );
}

/// After `--cancel-batch`, a run without `--batch` goes ahead: it reads
/// what the canceled batch answered before the cancel, reuses it (nothing
/// answered is sent again) and asks the Messages API for the rest.
#[test]
fn after_a_cancel_a_plain_run_goes_ahead_and_reuses_what_was_answered() {
    let env = fixture().with_mock();
    let (clean, _) = interactive(&env);
    let base = env.server.batches().len();
    let root = env.root().join("cache-canceled-plain");
    let id = killed_on_a_half_answered_round(&env, &root, base);
    let answered = env
        .server
        .requests()
        .iter()
        .filter(|r| r.batch.as_ref().is_some_and(|b| b.batch_id == id))
        .count();
    let out = command(&env, &root, &["--cancel-batch"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let from = env.server.request_count();
    let out = run(&env, &root, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["investigation"]["status"], "complete");
    assert!(
        stderr(&out).contains(&format!("Reading batch {id}, canceled with --cancel-batch")),
        "{}",
        stderr(&out)
    );
    // What the batches answered (the survey, the plan, the two requests the
    // canceled one processed) is not asked again; the rest goes to the
    // Messages API, each once.
    let asked = env.server.requests()[from..]
        .iter()
        .filter(|r| r.batch.is_none())
        .count();
    let total = report["investigation"]["api_requests"].as_u64().unwrap() as usize;
    assert_eq!(asked, total);
    let interactive_total = clean_requests(&env);
    // (The batch run's requests may ask for less output than a plain
    // run's, its share of the budget being among the 64 a batch may hold
    // in flight: an answer that ended within the plain run's max_tokens is
    // its answer all the same.)
    assert_eq!(total, interactive_total - 2 - answered);
    let entries = cache_entries(&root);
    similar_asserts::assert_eq!(clean.dirs, entries.dirs);
    similar_asserts::assert_eq!(clean.files, entries.files);
    assert!(batches_in_flight(&root).is_empty());
}

/// A `--batch` run on `root`, killed while it waits on its first loop
/// round's batch (the mock ever made `base` batches before it): two
/// requests of each batch are processed at once and the rest would take
/// 30 s, so the survey and plan batches (one request each) end at once and
/// the round (eight leaves) waits, its first two answered by the run's
/// first look at it. Returns the round's batch id.
fn killed_on_a_half_answered_round(env: &AgentEnv, root: &Path, base: usize) -> String {
    env.server.set_batch_delay(Duration::from_secs(30));
    env.server.process_at_once(2);
    let mut child = spawn_until_waiting(env, root, base + 2);
    let id = env.server.batches()[base + 2].id.clone();
    let looked_at = env.server.wait_until(DEADLINE, |requests| {
        let of_batch = |r: &&support::mock::RecordedRequest| {
            r.batch.as_ref().is_some_and(|b| b.batch_id == id)
        };
        requests.iter().filter(of_batch).count() >= 2
    });
    assert!(looked_at, "the batch was never looked at");
    signal(&mut child, libc::SIGKILL);
    id
}

/// How many requests the clean interactive run of [`fixture`] made.
fn clean_requests(env: &AgentEnv) -> usize {
    let root = env.root().join("cache-count");
    let from = env.server.request_count();
    env.server.clear_prompt_cache();
    run_ok(env, &root, &[]);
    env.server.request_count() - from
}

#[test]
fn ctrl_c_while_waiting_says_the_batch_goes_on_and_how_to_resume() {
    let env = fixture().with_mock();
    let root = env.root().join("cache-interrupted");
    env.server.set_batch_delay(Duration::from_secs(30));
    let mut child = spawn_until_waiting(&env, &root, 0);
    let out = signal(&mut child, libc::SIGINT);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let said = stderr(&out);
    let id = &env.server.batches()[0].id;
    assert!(
        said.contains(&format!(
            "The batch {id} (1 requests) keeps running at the API"
        )),
        "{said}"
    );
    assert!(
        said.contains("--batch") && said.contains("--cancel-batch"),
        "{said}"
    );
    assert_eq!(batches_in_flight(&root), std::slice::from_ref(id));
    // The next run picks it up and goes to the end.
    env.server.set_batch_delay(Duration::from_millis(5));
    let report = run_ok(&env, &root, &["--batch"]);
    assert_eq!(report["investigation"]["status"], "complete");
    assert_nothing_paid_twice(&env, 0, 0);
}
