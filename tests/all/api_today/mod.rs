//! The real binary against the mock answering as today's API does: models
//! that think and bind their thinking to the conversation, replies cut off
//! at the output limit, refusals, paused turns, full context windows,
//! billing and gateway errors, dead endpoints, and models the catalog
//! deprecates or does not know.

use crate::support;

use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{AgentEnv, MockAgent, Pass, Turn};
use support::entries::cache_entries;
use support::mock::{MockServer, Reply};
use support::output::{assert_contains_all, item_where, lines_where, stderr};

mod bad_endpoints;
mod errors;
mod history;
mod models_and_costs;
mod stop_reasons;

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "not a JSON report ({err}):\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            stderr(output)
        )
    })
}

/// [`run_json`], insisting that the run succeeds.
fn run_json_ok(env: &TestEnv, cache: &str, extra: &[&str]) -> Output {
    let out = run_json(env, cache, extra);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// `luminos --json [extra] TARGET` with the cache under `cache`.
fn run_json(env: &TestEnv, cache: &str, extra: &[&str]) -> Output {
    env.cmd()
        .env("LUMINOS_CACHE_DIR", env.root().join(cache))
        .args(["--json", "-j", "1"])
        .args(extra)
        .arg(env.target())
        .output()
        .unwrap()
}

/// A one-directory target (no survey, no plan): `.` and synthesis only.
fn tiny(files: &[(&str, &str)]) -> TestEnv {
    let env = TestEnv::new();
    for (name, text) in files {
        env.file(name, text);
    }
    env
}

/// A [`tiny`] target whose directory loop `script` answers turn by turn.
fn tiny_scripted(
    files: &[(&str, &str)],
    script: impl Fn(&Turn<'_>) -> Reply + Send + Sync + 'static,
) -> AgentEnv {
    tiny(files).with_agent(|agent| agent.dir_script(".", script))
}

/// The model's last word in a loop: `submit_report` with `summary`, complete.
fn submitted(summary: &str) -> Reply {
    Reply::tool_use(
        "submit_report",
        json!({"summary": summary, "completeness": 1.0}),
    )
}

/// Runs [`run_json_ok`] on `env` (a one-directory target), checks that no
/// request broke the API's rules, and returns the dir loop's requests.
fn dir_requests_of_a_clean_run(env: &AgentEnv) -> (Output, Vec<support::mock::RecordedRequest>) {
    let out = run_json_ok(env, "cache", &[]);
    env.server.assert_no_violations();
    (out, of_pass(env, &root()))
}

/// `luminos --json TARGET` with a 1 ms retry backoff and `vars` set, for
/// endpoints that never answer.
fn run_json_failing_fast(env: &TestEnv, vars: &[(&str, &str)]) -> Output {
    let mut cmd = env.cmd();
    cmd.env("LUMINOS_RETRY_BACKOFF_MS", "1")
        .envs(vars.iter().copied());
    cmd.arg("--json").arg(env.target()).output().unwrap()
}

/// The `Warning: model ...` lines of `err`.
fn model_warnings(err: &str) -> Vec<&str> {
    lines_where(err, |l| l.starts_with("Warning: model"))
}

/// The requests of one pass.
fn of_pass(env: &AgentEnv, pass: &Pass) -> Vec<support::mock::RecordedRequest> {
    env.requests_of(pass)
}

fn root() -> Pass {
    Pass::Dir(".".to_string())
}

/// A small project whose survey the mock agent answers; every later
/// request gets `failure`.
fn failing_after_the_survey(
    failure: impl Fn() -> Reply + Send + Sync + 'static,
) -> (TestEnv, MockServer) {
    let env = TestEnv::with_small_project();
    let server = MockServer::start();
    let env = env.with_base_url(server.url());
    let agent = MockAgent::new(env.target());
    let target = agent.target().to_path_buf();
    server.respond_with(move |request| match Pass::of(&request.body, &target) {
        Pass::Survey => agent.reply(&request.body),
        _ => failure(),
    });
    (env, server)
}

/// The report's one-line error of a failed run (exit 3), printed once on
/// stderr too.
fn failure_of(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(3), "{}", stderr(out));
    let report = json_of(out);
    assert_eq!(report["investigation"]["status"], "failed");
    let error = report["investigation"]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!error.contains('\n'), "{error}");
    assert_eq!(
        stderr(out).matches("Investigation failed: ").count(),
        1,
        "{}",
        stderr(out)
    );
    error
}
