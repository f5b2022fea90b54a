//! Fault soak: a whole investigation against a mock Messages API that fails
//! about one request in ten, with every fault the mock can produce, must end
//! with exactly the cache a fault-free run writes.
//!
//! The faulted requests are chosen up front from the requests the scripted
//! agent is known to need (survey, planning, two turns per directory,
//! synthesis) with a seeded RNG, so the same requests fail whatever order the
//! directory loops run in. A faulted request gets its fault once; the retry
//! (the same conversation state) gets the agent's real reply. The client's
//! timing knobs keep the run fast: a short idle timeout for stalls and slow
//! first bytes, and a tiny first backoff.

use crate::support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::TestEnv;
use support::agent::{AgentEnv, MockAgent, Pass, turn_of, visible_files};
use support::entries::{all_dirs, cache_entries, module_tree};
use support::mock::Reply;

/// The stream idle timeout the short soak runs with: stalls and slow first
/// bytes cost this much each.
const IDLE_SECS: f64 = 0.25;

/// The long soak's: eight loops at once share the mock's one thread, and
/// on a loaded machine a healthy reply's headers can take longer than
/// [`IDLE_SECS`] every time a call tries; the run then rightly gives up on
/// an endpoint that seems dead, which is not what this test is about.
const LONG_IDLE_SECS: f64 = 1.0;

/// One request the agent is expected to make: its pass and 1-based turn.
type Key = (Pass, usize);

/// The requests the default agent makes on a tree with these directories:
/// one turn for a directory without files, two (cache them, report) for
/// the others.
fn expected_keys(target: &Path, dirs: &[String]) -> Vec<Key> {
    let mut keys = vec![(Pass::Survey, 1), (Pass::Planning, 1), (Pass::Synthesis, 1)];
    for dir in dirs {
        keys.push((Pass::Dir(dir.clone()), 1));
        if !visible_files(&target.join(dir)).is_empty() {
            keys.push((Pass::Dir(dir.clone()), 2));
        }
    }
    keys
}

/// Every fault the mock can produce, applied to the reply the agent would
/// have sent (stream faults need it; HTTP faults replace it).
const FAULT_KINDS: [&str; 12] = [
    "rate_limited",
    "rate_limited_secs",
    "overloaded",
    "server_error",
    "html",
    "garbage_json",
    "garbage_bytes",
    "drop_mid_stream",
    "error_event",
    "truncate_tool_json",
    "stall_mid_stream",
    "slow_first_byte",
];

fn fault(kind: &str, real: Reply, idle: f64) -> Reply {
    match kind {
        "rate_limited" => Reply::rate_limited().retry_after_ms(3),
        "rate_limited_secs" => Reply::rate_limited().retry_after_secs(0),
        "overloaded" => Reply::overloaded(),
        "server_error" => Reply::server_error(),
        "html" => Reply::html(502),
        "garbage_json" => Reply::raw(200, "application/json", "{\"type\": \"mess"),
        "garbage_bytes" => Reply::raw(
            503,
            "application/octet-stream",
            vec![0xff, 0x00, 0xfe, 0x7f],
        ),
        "drop_mid_stream" => real.drop_mid_stream(),
        "error_event" => real.error_event("overloaded_error", "Overloaded"),
        "truncate_tool_json" => real.truncate_tool_json(),
        "stall_mid_stream" => real.stall_mid_stream(),
        "slow_first_byte" => real.delay(Duration::from_secs_f64(idle + 0.3)),
        other => panic!("unknown fault kind {other}"),
    }
}

/// Which requests fail and how: about `rate` of the keys (at least one per
/// fault kind), picked by a seeded shuffle; kinds are dealt round-robin.
/// The survey, a run's first request, is never faulted: before any whole
/// reply came, the client rightly takes a 200 that is not a message for
/// the wrong endpoint and stops (see `api_today::bad_endpoints`), so only
/// later requests can show that such a fault is survived.
fn fault_plan(keys: &[Key], rate: f64, seed: u64) -> HashMap<Key, &'static str> {
    let mut shuffled: Vec<Key> = keys
        .iter()
        .filter(|(pass, _)| *pass != Pass::Survey)
        .cloned()
        .collect();
    fastrand::Rng::with_seed(seed).shuffle(&mut shuffled);
    let count = ((keys.len() as f64 * rate).round() as usize)
        .max(FAULT_KINDS.len())
        .min(keys.len());
    shuffled
        .into_iter()
        .take(count)
        .enumerate()
        .map(|(i, key)| (key, FAULT_KINDS[i % FAULT_KINDS.len()]))
        .collect()
}

/// What the faulty server did, for the assertions.
#[derive(Default)]
struct Served {
    /// Faults served, by key.
    faults: HashMap<Key, &'static str>,
    /// Requests per key.
    requests: HashMap<Key, usize>,
}

/// Answer as the default agent, except that each planned key gets its fault
/// the first time it arrives (a slow first byte outlasts `idle`).
fn serve_with_faults(
    env: &AgentEnv,
    plan: HashMap<Key, &'static str>,
    idle: f64,
) -> Arc<Mutex<Served>> {
    let agent = MockAgent::new(env.target());
    let target = agent.target().to_path_buf();
    let served = Arc::new(Mutex::new(Served::default()));
    let record = served.clone();
    env.server.respond_with(move |request| {
        let key = (Pass::of(&request.body, &target), turn_of(&request.body));
        let real = agent.reply(&request.body);
        let mut served = record.lock().unwrap();
        *served.requests.entry(key.clone()).or_default() += 1;
        match plan.get(&key) {
            Some(kind) if !served.faults.contains_key(&key) => {
                served.faults.insert(key, kind);
                fault(kind, real, idle)
            }
            _ => real,
        }
    });
    served
}

/// Run the binary on `env`'s target with this cache root and extra flags,
/// with no budget: the soak expects a loop of its own for every directory
/// (the requests [`expected_keys`] lists), and the default budget ($5)
/// buys that only on a small tree. On the long soak's 221 directories it
/// folds most of them into units and summarises 46 from the scan, as it
/// should; that is the budget's subject (`tests/all/budget.rs`), not this
/// one's.
fn run(env: &TestEnv, cache_root: &Path, idle: f64, extra: &[&str]) -> std::process::Output {
    env.cmd()
        .env("LUMINOS_CACHE_DIR", cache_root)
        .env("LUMINOS_IDLE_TIMEOUT_SECS", idle.to_string())
        .env("LUMINOS_HEADERS_TIMEOUT_SECS", idle.to_string())
        .env("LUMINOS_RETRY_BACKOFF_MS", "2")
        .args(["--budget", "none"])
        .args(extra)
        .arg(env.target())
        .output()
        .expect("run luminos")
}

/// Soak a tree of `dirs_wanted` leaf directories: a clean `-j 1` run, then
/// one faulty run per entry of `jobs` (`"default"` passes no `-j`), with
/// the client's idle and headers timeouts at `idle` seconds.
fn soak(dirs_wanted: usize, seed: u64, jobs: &[&str], idle: f64) {
    let env = module_tree(dirs_wanted).with_mock();
    let dirs = all_dirs(env.target());

    // The fault-free baseline.
    let clean_root = env.root().join("cache-clean");
    let out = run(&env, &clean_root, idle, &["-j", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let clean = cache_entries(&clean_root);
    assert_eq!(clean.dir_paths(), dirs, "every directory has an entry");
    assert_eq!(clean.files.len(), dirs_wanted * 2 + 1);

    let keys = expected_keys(env.target(), &dirs);
    for &jobs in jobs {
        let plan = fault_plan(&keys, 0.10, seed);
        let planned = plan.len();
        let served = serve_with_faults(&env, plan.clone(), idle);
        let root = env.root().join(format!("cache-faulty-j{jobs}"));
        let flags: &[&str] = match jobs {
            "default" => &[],
            n => &["-j", n],
        };
        let out = run(&env, &root, idle, flags);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "-j {jobs}: {}\n{stderr}", out.status);

        let served = served.lock().unwrap();
        // Every planned fault was served once and then retried.
        let mut missing: Vec<_> = plan
            .iter()
            .filter(|(key, _)| !served.faults.contains_key(*key))
            .collect();
        missing.sort_by_key(|(key, _)| format!("{key:?}"));
        assert!(
            missing.is_empty(),
            "-j {jobs}: never requested: {missing:?}"
        );
        for (key, kind) in &served.faults {
            assert!(
                served.requests[key] >= 2,
                "-j {jobs}: {key:?} got {kind} and was not retried"
            );
        }
        let mut kinds: Vec<&str> = served.faults.values().copied().collect();
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds.len(), FAULT_KINDS.len(), "every kind was served");
        // A loaded machine may time out a healthy reply too, so at least.
        assert!(
            stderr.matches("retry 1/").count() >= planned,
            "-j {jobs}: a retry line per fault\n{stderr}"
        );

        let faulty = cache_entries(&root);
        similar_asserts::assert_eq!(clean.dirs, faulty.dirs, "-j {jobs}: dir entries");
        similar_asserts::assert_eq!(clean.files, faulty.files, "-j {jobs}: file entries");
    }
}

/// 41 directories; the faulty run uses the default `-j`, so its loops may
/// run in any order and still match the sequential clean run. A few seconds.
#[test]
fn faults_are_retried_and_leave_the_cache_as_a_clean_run_does() {
    soak(36, 0x50AC, &["default"], IDLE_SECS);
}

/// 221 directories, faulty runs with `-j 1`, the default and `-j 8`; see
/// README (Benchmarks).
#[test]
#[ignore]
fn soak_long() {
    soak(200, 0xB16_50AC, &["1", "default", "8"], LONG_IDLE_SECS);
}
