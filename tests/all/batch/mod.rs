//! `--batch` end to end: the whole pipeline through the mock's Message
//! Batches API, compared with an interactive run of the same tree; a run
//! killed while it waits on a batch, then resumed; per-request errors,
//! expiry and cancel; `--estimate --batch`.

use crate::support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::TestEnv;
use support::agent::{AgentEnv, MockAgent};
use support::entries::{Entries, batches_in_flight, cache_entries, investigation_dir};
use support::mock::Reply;

mod budget;
mod cost;
mod interrupt;
mod parity;
mod rounds;

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

/// `luminos [extra] TARGET` on `cache_root`, polling batches every few
/// milliseconds: the terminal report, unless `extra` asks for JSON.
fn text_command(env: &AgentEnv, cache_root: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = env.bare_cmd();
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .env("LUMINOS_CACHE_DIR", cache_root)
        .env("LUMINOS_BATCH_POLL_MS", "5")
        .env("LUMINOS_RETRY_BACKOFF_MS", "1")
        .args(extra)
        .arg(env.target());
    cmd
}

/// `luminos --json [extra] TARGET`, as [`text_command`].
fn command(env: &AgentEnv, cache_root: &Path, extra: &[&str]) -> std::process::Command {
    text_command(env, cache_root, &[&["--json"], extra].concat())
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

/// A `--batch` run on its own cache root, from a cold prompt cache: the
/// root and the report.
fn batch_run(env: &AgentEnv) -> (PathBuf, Value) {
    env.server.clear_prompt_cache();
    let root = env.root().join("cache-batch");
    let report = run_ok(env, &root, &["--batch"]);
    (root, report)
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
            .is_some_and(|batch| batches_in_flight(cache_root).contains(&batch.id));
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

/// What `requests` cost at `model`'s catalog prices, from the usage the mock
/// reported: each cache write at the rate of the lifetime it was written
/// for, and everything halved when `batch`.
pub(crate) fn priced(requests: &[support::mock::RecordedRequest], model: &str, batch: bool) -> f64 {
    let p = luminos::ai::api::catalog::ModelFacts::of(model)
        .model
        .prices;
    let factor = if batch { 0.5 } else { 1.0 };
    requests
        .iter()
        .filter_map(|r| r.reported_usage.map(|u| (u, r.reported_cache_1h)))
        .map(|(u, hour)| {
            let five = u.cache_creation_input_tokens - hour;
            factor
                * (u.input_tokens as f64 * p.input
                    + u.output_tokens as f64 * p.output
                    + u.cache_read_input_tokens as f64 * p.cache_read
                    + five as f64 * p.cache_write_5m
                    + hour as f64 * p.cache_write_1h)
                / 1e6
        })
        .sum()
}
