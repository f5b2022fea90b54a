//! `--batch` end to end: the whole pipeline through the mock's Message
//! Batches API, compared with an interactive run of the same tree; a run
//! killed while it waits on a batch, then resumed; per-request errors,
//! expiry and cancel; `--estimate --batch`.

use crate::support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::TestEnv;
use support::agent::{AgentEnv, MockAgent};
use support::entries::{Entries, cache_entries, investigation_dir};
use support::mock::Reply;

/// How long a batch run may take to reach a point.
const DEADLINE: Duration = Duration::from_secs(60);

/// The fixture: a small project and a few module directories, three levels
/// of directories (leaves, their parents, the root), so rounds chain.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.small_project();
    for i in 0..6 {
        env.file(
            &format!("pkg{}/mod{i}/lib.rs", i / 3),
            format!("pub fn f{i}() -> u32 {{ {i} }}\n"),
        );
        env.file(
            &format!("pkg{}/mod{i}/notes.txt", i / 3),
            format!("Module {i}.\n"),
        );
    }
    env
}

/// `luminos --json [extra] TARGET` on `cache_root`, polling batches every
/// few milliseconds.
fn command(env: &AgentEnv, cache_root: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = env.std_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .env("LUMINOS_CACHE_DIR", cache_root)
        .env("LUMINOS_BATCH_POLL_MS", "5")
        .env("LUMINOS_RETRY_BACKOFF_MS", "1")
        .arg("--json")
        .args(extra)
        .arg(env.target());
    cmd
}

fn run(env: &AgentEnv, cache_root: &Path, extra: &[&str]) -> Output {
    command(env, cache_root, extra)
        .output()
        .expect("run luminos")
}

fn run_ok(env: &AgentEnv, cache_root: &Path, extra: &[&str]) -> Value {
    let out = run(env, cache_root, extra);
    assert!(
        out.status.success(),
        "luminos {extra:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the JSON report")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Requests the mock processed in batches, by custom_id: how often each
/// was billed.
fn billed(env: &AgentEnv) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for request in env.server.requests() {
        if let Some(batch) = request.batch
            && request.reported_usage.is_some()
        {
            *counts.entry(batch.custom_id).or_default() += 1;
        }
    }
    counts
}

/// In how many batches each custom_id was sent.
fn sent(env: &AgentEnv) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for batch in env.server.batches() {
        for id in batch.custom_ids {
            *counts.entry(id).or_default() += 1;
        }
    }
    counts
}

/// An uninterrupted interactive run's entries and report, on its own
/// cache root, from a cold prompt cache.
fn interactive(env: &AgentEnv) -> (Entries, Value) {
    let root = env.root().join("cache-interactive");
    env.server.clear_prompt_cache();
    let report = run_ok(env, &root, &[]);
    (cache_entries(&root), report)
}

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

/// The ids of the batches `cache_root`'s investigation has in flight.
fn in_flight(cache_root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache_root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("batch/state.json")).ok())
        .filter_map(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .flat_map(|state| {
            state["in_flight"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["id"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Spawn a `--batch` run on `cache_root` and return once it waits on the
/// `n`-th batch the mock ever created (0-based): created, and recorded in
/// the cache. Panics if the run ends first.
fn spawn_until_waiting(env: &AgentEnv, cache_root: &Path, n: usize) -> Child {
    spawn_until_waiting_with(env, cache_root, n, &["--batch"])
}

/// [`spawn_until_waiting`] with `args` (which must include `--batch`).
fn spawn_until_waiting_with(env: &AgentEnv, cache_root: &Path, n: usize, args: &[&str]) -> Child {
    let mut child = command(env, cache_root, args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn luminos");
    let until = Instant::now() + DEADLINE;
    loop {
        let waiting = env
            .server
            .batches()
            .get(n)
            .is_some_and(|batch| in_flight(cache_root).contains(&batch.id));
        if waiting {
            return child;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("the run ended ({status}) before waiting on batch {n}:\n{err}");
        }
        assert!(Instant::now() < until, "never waited on batch {n}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn signal(child: &mut Child, signal: libc::c_int) -> Output {
    // SAFETY: kill(2) on our own child's pid, which is not reaped yet.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
    let child = std::mem::replace(child, dummy());
    child.wait_with_output().unwrap()
}

/// A reaped stand-in, so a signalled child can be moved out.
fn dummy() -> Child {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    child.wait().unwrap();
    child
}

/// The requests of batches created from the `from`-th on: each custom_id
/// must have been billed once, and sent in one batch but for the
/// `resent` ones (which a batch did not process).
fn assert_nothing_paid_twice(env: &AgentEnv, from: usize, resent: usize) {
    let batches = env.server.batches();
    let ids: HashSet<String> = batches[from..].iter().map(|b| b.id.clone()).collect();
    let mut sent: HashMap<String, usize> = HashMap::new();
    for batch in &batches[from..] {
        for id in &batch.custom_ids {
            *sent.entry(id.clone()).or_default() += 1;
        }
    }
    let twice: Vec<_> = sent.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.iter().all(|(_, n)| **n == 2), "{twice:?}");
    assert_eq!(
        twice.len(),
        resent,
        "requests sent in two batches: {twice:?}"
    );
    let mut billed: HashMap<String, usize> = HashMap::new();
    for request in env.server.requests() {
        if let Some(batch) = request.batch.filter(|b| ids.contains(&b.batch_id)) {
            *billed.entry(batch.custom_id).or_default() += 1;
        }
    }
    assert!(billed.values().all(|n| *n == 1), "billed twice: {billed:?}");
    assert_eq!(
        billed.len(),
        sent.len(),
        "every request sent was processed once"
    );
}

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
    // predecessor read and picks up the batch it left. A batch takes long
    // enough that the kill lands while the run waits on it, even on a
    // loaded machine.
    env.server.set_batch_delay(Duration::from_millis(1500));
    for n in [base, base + 3, base + 5] {
        let mut child = spawn_until_waiting(&env, &root, n);
        let out = signal(&mut child, libc::SIGKILL);
        assert!(!out.status.success());
    }
    env.server.set_batch_delay(Duration::from_millis(5));
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
    assert!(in_flight(&root).is_empty());
}

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
    let twice: Vec<_> = sent.values().filter(|n| **n == 2).collect();
    assert_eq!(twice.len(), 1, "{sent:?}");
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
fn a_batch_in_flight_can_be_canceled_and_its_answers_are_still_used() {
    let env = fixture().with_mock();
    let (clean, _) = interactive(&env);
    let base = env.server.batches().len();
    let root = env.root().join("cache-canceled");
    // Two requests of each batch are processed at once and the rest would
    // take 30 s: the survey and plan batches (one request each) end at
    // once, the first loop round (eight leaves) waits.
    env.server.set_batch_delay(Duration::from_secs(30));
    env.server.process_at_once(2);
    let mut child = spawn_until_waiting(&env, &root, base + 2);
    let id = env.server.batches()[base + 2].id.clone();
    let processed = || {
        env.server
            .requests()
            .iter()
            .filter(|r| r.batch.as_ref().is_some_and(|b| b.batch_id == id))
            .count()
    };
    // The run's first look at the batch gets its two requests processed.
    let until = Instant::now() + DEADLINE;
    while processed() < 2 {
        assert!(Instant::now() < until, "the batch was never looked at");
        std::thread::sleep(Duration::from_millis(2));
    }
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
    assert_eq!(batch["canceled"].as_u64(), Some(6), "{batch}");
    assert_eq!(batch["retried"].as_u64(), Some(6), "{batch}");
    assert_nothing_paid_twice(&env, base, 6);
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
    assert_eq!(in_flight(&root), std::slice::from_ref(id));
    // The next run picks it up and goes to the end.
    env.server.set_batch_delay(Duration::from_millis(5));
    let report = run_ok(&env, &root, &["--batch"]);
    assert_eq!(report["investigation"]["status"], "complete");
    assert_nothing_paid_twice(&env, 0, 0);
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
    let out = env
        .std_cmd()
        .env("LUMINOS_CACHE_DIR", &root)
        .args(["--estimate", "--batch"])
        .arg(env.target())
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
    let mut cmd = env.std_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .env("LUMINOS_CACHE_DIR", &root)
        .env("LUMINOS_BATCH_POLL_MS", "5")
        .args(["--batch"])
        .arg(env.target());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with("Batch: "))
        .unwrap_or_else(|| panic!("no batch line in\n{report}"));
    assert!(
        line.contains("9 rounds") && line.contains("waited") && line.contains("batch prices"),
        "{line}"
    );
    let said = stderr(&out);
    assert!(said.contains("(at batch prices)"), "{said}");
    assert!(
        said.contains("Batch round 1: 1 request sent as msgbatch_"),
        "{said}"
    );
    assert!(said.contains("Batch: 9 rounds"), "{said}");
}

mod budget;
mod parity;
