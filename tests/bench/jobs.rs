//! Benchmark: parallel dir loops. The real binary investigates a 41-directory
//! tree against the mock Messages API with 100 ms before every response's
//! first byte, once with `--jobs 1` and once with `--jobs 4`, from a fresh
//! cache each time. The API's latency, not our CPU, is what a real run waits
//! on, so this is the speed-up a user sees.
//!
//! Target: the `--jobs 4` wall time is at most 0.35 × the `--jobs 1` wall time
//! measured in the same run (each the best of two, alternating, so both see
//! the same machine). Every run must make the same 81 requests.
//!
//! ```sh
//! cargo test --test bench -- --ignored --nocapture jobs::
//! ```

use crate::support;

use std::time::{Duration, Instant};

use support::agent::AgentEnv;
use support::entries::{all_dirs, cache_entries, module_tree};
use support::output::assert_success;

/// The latency the issue asks for.
const LATENCY: Duration = Duration::from_millis(100);
/// `module_tree(36)`: the root, 4 packages and 36 modules.
const MODULES: usize = 36;
const DIRECTORIES: usize = 41;
const TARGET_RATIO: f64 = 0.35;

/// One whole investigation at `jobs` from an empty cache: wall time and the
/// number of API requests it made.
fn investigate(env: &AgentEnv, jobs: usize, round: usize) -> (Duration, usize) {
    let cache = env.root().join(format!("cache-j{jobs}-{round}"));
    let before = env.server.request_count();
    let started = Instant::now();
    let output = env
        .cmd()
        .env("LUMINOS_CACHE_DIR", &cache)
        .args(["--json", "--jobs", &jobs.to_string()])
        .arg(env.target())
        .output()
        .expect("run luminos");
    let wall = started.elapsed();
    assert_success(output, &format!("--jobs {jobs}"));
    assert_eq!(cache_entries(&cache).dirs.len(), DIRECTORIES);
    (wall, env.server.request_count() - before)
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn four_jobs_take_at_most_a_third_of_one() {
    let env = module_tree(MODULES).with_mock();
    assert_eq!(all_dirs(env.target()).len(), DIRECTORIES);
    env.server.set_latency(LATENCY);

    let mut serial = Duration::MAX;
    let mut parallel = Duration::MAX;
    let mut requests = Vec::new();
    for round in 0..2 {
        let (wall, count) = investigate(&env, 1, round);
        serial = serial.min(wall);
        requests.push(count);
        let (wall, count) = investigate(&env, 4, round);
        parallel = parallel.min(wall);
        requests.push(count);
    }
    // Survey, planning and synthesis, two turns for each of the 36 modules
    // and the root, one for each of the 4 packages without files.
    assert!(
        requests.iter().all(|&count| count == 3 + 2 * 37 + 4),
        "every run makes the same 81 requests: {requests:?}"
    );

    let ratio = parallel.as_secs_f64() / serial.as_secs_f64();
    println!(
        "{DIRECTORIES} directories, {} requests per run, {} ms latency",
        requests[0],
        LATENCY.as_millis()
    );
    println!("--jobs 1: {:>6.2} s", serial.as_secs_f64());
    println!("--jobs 4: {:>6.2} s", parallel.as_secs_f64());
    println!("ratio:    {ratio:>6.3}  (target <= {TARGET_RATIO})");
    assert!(
        ratio <= TARGET_RATIO,
        "--jobs 4 took {ratio:.3} of --jobs 1 (target {TARGET_RATIO})"
    );
}
