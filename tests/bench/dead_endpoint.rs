//! Benchmark: how long a run with the default settings takes to give up on
//! an endpoint that cannot be used, from the start of the run (the first
//! request follows the scan of a small project within a second) to its
//! `failed` report and exit 3. No timeout or backoff is shortened. The
//! endpoints, each from a fresh cache:
//!
//! - refused: a closed local port;
//! - silent: accepts the connection, never sends the headers;
//! - headers then silence: a 200 event stream's headers, then nothing;
//! - pings only: a 200 event stream of `ping` events every 5 s;
//! - trickle: a real reply sent one byte every 2 s;
//! - web page, garbage, wrong JSON: a 200 whose body is not the API's;
//! - overloaded: 529 `overloaded_error` on every request.
//!
//! Targets (the issue's): refused within 30 s; a web page, garbage or
//! wrong JSON within 30 s; the rest within 150 s; every report `failed`.
//! The runs go side by side (they mostly wait), so this takes about two
//! minutes:
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

/// The issue's limit for an endpoint that is not the Messages API.
const WRONG_LIMIT: Duration = Duration::from_secs(30);
/// The issue's limit for a dead or overloaded endpoint.
const DEAD_LIMIT: Duration = Duration::from_secs(150);

/// `luminos --json` on a small project with every default, timed.
fn give_up(env: &TestEnv) -> (Duration, Output) {
    let started = Instant::now();
    let mut cmd = env.cmd();
    cmd.arg("--json").arg(env.target());
    let out = support::watch::output_within(cmd, Duration::from_secs(600));
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

/// One bad endpoint: its name, the limit it must keep, and the mock's
/// answer to every request (`None`: a closed port).
type Case = (&'static str, Duration, Option<fn() -> Reply>);

#[test]
#[ignore = "benchmark: waits for the default timeouts (about two minutes)"]
fn dead_endpoints_are_given_up_on_in_time() {
    let cases: Vec<Case> = vec![
        ("refused", WRONG_LIMIT, None),
        ("silent", DEAD_LIMIT, Some(Reply::silent)),
        (
            "headers then silence",
            DEAD_LIMIT,
            Some(Reply::headers_then_silence),
        ),
        (
            "pings only",
            DEAD_LIMIT,
            Some(|| Reply::pings_only(Duration::from_secs(5))),
        ),
        (
            "trickle",
            DEAD_LIMIT,
            Some(|| Reply::text("slowly").trickle(Duration::from_secs(2))),
        ),
        ("web page", WRONG_LIMIT, Some(Reply::web_page)),
        ("garbage", WRONG_LIMIT, Some(Reply::garbage_stream)),
        ("wrong JSON", WRONG_LIMIT, Some(Reply::wrong_json)),
        ("overloaded", DEAD_LIMIT, Some(Reply::overloaded)),
    ];
    let runs: Vec<_> = cases
        .into_iter()
        .map(|(name, limit, reply)| {
            std::thread::spawn(move || {
                let server = MockServer::start();
                let env = match reply {
                    Some(reply) => {
                        server.respond_with(move |_| reply());
                        TestEnv::new().with_base_url(server.url())
                    }
                    None => TestEnv::new(),
                };
                env.small_project();
                let (took, out) = give_up(&env);
                let error = failed(&out);
                (name, limit, took, server.request_count(), error)
            })
        })
        .collect();
    let mut over = Vec::new();
    println!("give-up time with the defaults, from the start of the run to its failed report:");
    for run in runs {
        let (name, limit, took, requests, error) = run.join().expect("a run");
        println!(
            "  {name:<21} {:>6.1} s  ({:.2} of the {} s limit, {requests} requests): {error}",
            took.as_secs_f64(),
            took.as_secs_f64() / limit.as_secs_f64(),
            limit.as_secs()
        );
        if took > limit {
            over.push(name);
        }
    }
    assert!(over.is_empty(), "over the limit: {over:?}");
}
