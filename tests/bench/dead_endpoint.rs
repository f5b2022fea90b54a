//! Benchmark: how long a run with the default settings takes to give up on
//! an endpoint that cannot be reached. Two cases, each from a fresh cache:
//! a refused connection (a closed local port) and an endpoint that accepts
//! the connection and never sends the response headers (the mock's
//! `Reply::silent`). No timeout or backoff is shortened.
//!
//! Targets (the issue's): refused within 30 s, silent within 150 s, and the
//! JSON report says `failed` in both. The silent case waits for real
//! timeouts, so this takes about two minutes:
//!
//! ```sh
//! cargo test --release --test bench -- --ignored --nocapture dead_endpoint::
//! ```

use crate::support;

use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::TestEnv;
use support::mock::{MockServer, Reply};

const REFUSED_LIMIT: Duration = Duration::from_secs(30);
const SILENT_LIMIT: Duration = Duration::from_secs(150);

/// `luminos --json` on a small project with every default, timed.
fn give_up(env: &TestEnv) -> (Duration, Output) {
    let started = Instant::now();
    let out = env
        .cmd()
        .arg("--json")
        .arg(env.target())
        .output()
        .expect("run luminos");
    (started.elapsed(), out)
}

fn failed(out: &Output) -> String {
    let report: Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    assert_eq!(report["investigation"]["status"], "failed");
    assert_eq!(out.status.code(), Some(3));
    report["investigation"]["error"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
#[ignore = "benchmark: waits for the default timeouts (about two minutes)"]
fn dead_endpoints_are_given_up_on_in_time() {
    let env = TestEnv::with_small_project();
    let (refused, out) = give_up(&env);
    let error = failed(&out);
    println!(
        "refused connection: gave up after {:.1} s: {error}",
        refused.as_secs_f64()
    );

    let server = MockServer::start();
    server.respond_with(|_| Reply::silent());
    let silent_env = TestEnv::new().with_base_url(server.url());
    silent_env.small_project();
    let (silent, out) = give_up(&silent_env);
    let error = failed(&out);
    println!(
        "silent endpoint: gave up after {:.1} s ({} requests): {error}",
        silent.as_secs_f64(),
        server.request_count()
    );
    println!(
        "ratios to the targets: refused {:.2} of 30 s, silent {:.2} of 150 s",
        refused.as_secs_f64() / REFUSED_LIMIT.as_secs_f64(),
        silent.as_secs_f64() / SILENT_LIMIT.as_secs_f64()
    );
    assert!(refused <= REFUSED_LIMIT, "{refused:?}");
    assert!(silent <= SILENT_LIMIT, "{silent:?}");
}
