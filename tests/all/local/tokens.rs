//! `--token-budget`: a ceiling on the tokens a run sends and receives,
//! held by the purse with every request at its worst case, alone or beside
//! a dollar budget; and what `--estimate` says of tokens and time.

use serde_json::Value;

use super::sloppy::LOCAL;
use crate::support::TestEnv;
use crate::support::agent::AgentEnv;
use crate::support::mock::MockServer;
use crate::support::output::stderr;

/// Three dozen directories of a few files each.
fn tree() -> TestEnv {
    let env = TestEnv::new();
    env.file("README.md", "# A project of many small packages\n");
    for p in 0..12 {
        for m in ["core", "io"] {
            env.file(
                &format!("pkg{p:02}/{m}/lib.rs"),
                "pub fn run() -> u32 {\n    42\n}\n".repeat(20),
            );
        }
        env.file(&format!("pkg{p:02}/README.md"), "A package.\n");
    }
    env
}

/// A local model's server, whose loops take the turns the plan expects
/// (listing, reading, caching, reporting).
fn local(env: TestEnv) -> AgentEnv {
    env.with_agent_on(MockServer::ollama(65_536), |agent| agent.thorough_dirs(5))
}

/// The tokens the mock reported, input and output together.
fn reported(env: &AgentEnv) -> u64 {
    env.server
        .reported_usages()
        .iter()
        .map(|u| u.context_tokens() + u.output_tokens)
        .sum()
}

fn report(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_token_budget_holds_what_the_run_sends_and_receives() {
    // What the whole run takes, unbounded.
    let whole = local(tree());
    let mut args = LOCAL.to_vec();
    args.push("--json");
    let out = whole.run_ok(&args);
    assert_eq!(report(&out)["investigation"]["status"], "complete");
    let all = reported(&whole);
    // Half of it: the run plans in tokens, keeps some for the verdict,
    // and stops short of the ceiling.
    let ceiling = all / 2;
    let held = local(tree());
    let budget = ceiling.to_string();
    let mut args = LOCAL.to_vec();
    args.extend(["--token-budget", &budget, "--json"]);
    let out = held.output(&args);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let used = reported(&held);
    assert!(used <= ceiling, "{used} tokens of {ceiling}\n{err}");
    assert!(
        used > ceiling / 3,
        "{used} tokens of {ceiling}: the money was left unused\n{err}"
    );
    let report = report(&out);
    // Honest about what it left to the scan, and the verdict was written.
    assert!(
        matches!(
            report["investigation"]["status"].as_str(),
            Some("complete" | "partial")
        ),
        "{}",
        report["investigation"]
    );
    assert!(
        !report["ai_brief"].as_str().unwrap_or("").is_empty(),
        "{err}"
    );
    assert!(err.contains("tokens"), "{err}");
    assert!(held.server.over_window().is_empty());
}

#[test]
fn beside_a_dollar_budget_the_first_reached_ends_the_run() {
    // Priced at $10 a million in and out, a dollar budget of a tenth of a
    // cent pays for fewer tokens than the token budget allows.
    let env = local(tree());
    let out = env.output(&[
        "--model",
        "qwen3-coder",
        "--price",
        "10,10",
        "--context-window",
        "65536",
        "--budget",
        "0.05",
        "--token-budget",
        "10000000",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let used = reported(&env);
    assert!(used as f64 * 10.0 / 1e6 <= 0.05, "{used}");
}

#[test]
fn the_estimate_counts_tokens_and_time_only_at_a_throughput() {
    let env = local(tree());
    let mut args = LOCAL.to_vec();
    args.extend(["--estimate", "--token-budget", "300000"]);
    let out = env.run_ok(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Tokens in all: "), "{text}");
    assert!(
        text.contains("held to the token budget (300,000)"),
        "{text}"
    );
    assert!(
        text.contains("cannot tell without --tokens-per-second"),
        "{text}"
    );
    args.extend(["--tokens-per-second", "40", "--json"]);
    let out = env.run_ok(&args);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let high = json["tokens"]["high"].as_u64().unwrap();
    assert!(high <= 300_000);
    assert_eq!(
        json["duration_seconds"]["high"].as_u64(),
        Some(high.div_ceil(40))
    );
    assert_eq!(json["token_budget"], 300_000);
    // No API call, and the counting the server does not serve was tried
    // at most (Ollama's layer answers it 404).
    assert_eq!(env.server.request_count(), 0);
    // --tokens-per-second alone is a usage error.
    let out = env.output(&["--tokens-per-second", "40"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Ollama's layer has no Message Batches API: `--batch` stops at once with
/// one line, having sent nothing.
#[test]
fn batch_stops_with_one_line() {
    let env = local(tree());
    let mut args = LOCAL.to_vec();
    args.push("--batch");
    let out = env.output(&args);
    assert!(!out.status.success());
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("has no Message Batches API"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&env.server.url()) && line.contains("run without --batch"),
        "{line}"
    );
    assert_eq!(env.server.request_count(), 0, "{err}");
}

/// A plan in tokens is still a run with a dollar budget: the report and
/// the spent line say that budget in dollars, never the plan's tokens.
#[test]
fn a_plan_in_tokens_reports_the_dollar_budget() {
    let env = local(tree());
    let mut args = LOCAL.to_vec();
    args.extend(["--budget", "2", "--token-budget", "150000", "--json"]);
    let out = env.output(&args);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(report(&out)["investigation"]["budget_usd"], 2.0, "{err}");
    assert!(err.contains(" of $2.00 on "), "{err}");
}
