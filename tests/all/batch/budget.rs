//! `--batch` under a budget, on the budget tests' tree: the same money
//! buys what twice that money buys interactively (the one decision prices
//! the loops, and the run counts the spend, at the catalog's batch
//! prices), mechanical entries send no request, and a synthesis in levels
//! sends each level's group calls in one round.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::{assert_nothing_paid_twice, command, signal, spawn_until_waiting_with, stderr};
use crate::budget::{BUDGET, DIRS, agent, is_group, tree};
use crate::support::agent::AgentEnv;
use crate::support::entries::{Entries, cache_entries};

/// A whole run with `args` in a cache root of its own, from a cold prompt
/// cache: its entries, its report, its stderr and the index of its first
/// request at the mock.
fn whole_run(env: &AgentEnv, name: &str, args: &[&str]) -> (Entries, Value, String, usize) {
    let root = env.root().join(name);
    env.server.clear_prompt_cache();
    let from = env.server.request_count();
    let out = command(env, &root, args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    (cache_entries(&root), report, stderr(&out), from)
}

fn cost(report: &Value) -> f64 {
    report["investigation"]["cost_usd"].as_f64().unwrap()
}

#[test]
fn under_batch_a_budget_buys_what_twice_it_buys_interactively() {
    let env = agent(tree());
    env.server.set_batch_delay(Duration::from_millis(5));
    let budget: f64 = BUDGET.parse().unwrap();
    let half = format!("{}", budget / 2.0);
    let (interactive, interactive_report, _, _) =
        whole_run(&env, "cache-interactive", &["--budget", BUDGET]);
    let (_, more_report, _, _) = whole_run(&env, "cache-more", &["--batch", "--budget", BUDGET]);
    let (batch, report, said, from) =
        whole_run(&env, "cache-batch", &["--batch", "--budget", &half]);
    env.server.assert_no_violations();

    // Half the money under --batch leaves what the whole leaves
    // interactively: the same loops, units and scan summaries.
    assert_eq!(batch.dirs.len(), DIRS);
    similar_asserts::assert_eq!(interactive.dirs, batch.dirs, "dir entries");
    let coverage = |r: &Value| r["investigation"]["coverage"].clone();
    assert_eq!(coverage(&report), coverage(&interactive_report));
    assert!(coverage(&report)["mechanical"].as_u64().unwrap() > 0);
    // ...at half the cost (the planner's prompt names the budget, so it
    // differs by a few tokens).
    assert!(cost(&report) <= budget / 2.0);
    let ratio = cost(&report) / cost(&interactive_report);
    assert!((ratio - 0.5).abs() < 0.01, "batch/interactive {ratio}");
    assert_eq!(
        report["investigation"]["api_requests"],
        interactive_report["investigation"]["api_requests"]
    );
    assert!(said.contains("(at batch prices)"), "{said}");
    // And the whole budget under --batch buys more loops than it does
    // interactively.
    let looped = |r: &Value| coverage(r)["investigated"].as_u64().unwrap();
    assert!(
        looped(&more_report) > looped(&interactive_report),
        "batch {} vs interactive {}",
        coverage(&more_report),
        coverage(&interactive_report)
    );
    assert!(cost(&more_report) <= budget);

    // Every request went in a batch; scan summaries sent none.
    let requests = &env.server.requests()[from..];
    assert!(requests.iter().all(|r| r.batch.is_some()));

    // The synthesis went in levels, each level's group calls in one batch.
    let levels = said.matches("Synthesis level ").count();
    assert!(levels >= 1, "{said}");
    let groups: Vec<_> = requests.iter().filter(|r| is_group(r)).collect();
    let batches: BTreeSet<&str> = groups
        .iter()
        .map(|r| r.batch.as_ref().unwrap().batch_id.as_str())
        .collect();
    assert!(groups.len() > levels, "{} groups", groups.len());
    assert_eq!(batches.len(), levels, "{batches:?}");
}

#[test]
fn estimate_batch_projects_what_twice_the_budget_buys_interactively() {
    let env = agent(tree());
    let root = env.root().join("cache-estimate");
    let estimate = |args: &[&str]| -> Value {
        let out = command(&env, &root, &[&["--estimate"], args].concat())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let budget: f64 = BUDGET.parse().unwrap();
    let interactive = estimate(&["--budget", BUDGET]);
    let batch = estimate(&["--batch", "--budget", &format!("{}", budget / 2.0)]);
    let more = estimate(&["--batch", "--budget", BUDGET]);
    assert_eq!(env.server.request_count(), 0, "no API call");
    assert!(interactive["budget_binding"] == true && batch["budget_binding"] == true);
    for key in [
        "loops",
        "units",
        "loops_affordable",
        "directories_folded",
        "directories_mechanical",
        "synthesis_levels",
        "api_calls",
    ] {
        assert_eq!(batch[key], interactive[key], "{key}");
    }
    for end in ["low", "high"] {
        let (b, i) = (
            batch["cost_usd"][end].as_f64().unwrap(),
            interactive["cost_usd"][end].as_f64().unwrap(),
        );
        assert!((b / i - 0.5).abs() < 0.01, "{end}: {b} vs {i}");
    }
    assert!(more["loops"].as_u64() > interactive["loops"].as_u64());
    assert!(
        more["directories_mechanical"].as_u64() < interactive["directories_mechanical"].as_u64()
    );
}

#[test]
fn killed_under_a_budget_the_rerun_buys_the_same_work_and_pays_nothing_twice() {
    let env = agent(tree());
    env.server.set_batch_delay(Duration::from_millis(5));
    let args = ["--batch", "--budget", BUDGET];
    let (clean, clean_report, _, _) = whole_run(&env, "cache-clean", &args);
    // Killed while it waits on the loops' second round (the survey's and
    // the plan's batches come first), with the work plan saved.
    let root = env.root().join("cache-killed");
    let base = env.server.batches().len();
    env.server.clear_prompt_cache();
    env.server.set_batch_delay(Duration::from_millis(1500));
    let mut child = spawn_until_waiting_with(&env, &root, base + 3, &args);
    signal(&mut child, libc::SIGKILL);
    env.server.set_batch_delay(Duration::from_millis(5));
    let out = command(&env, &root, &args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("Work plan loaded from cache."), "{said}");
    assert!(
        said.contains("that an earlier run left in flight"),
        "{said}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_nothing_paid_twice(&env, base, 0);
    // It carried on with the killed run's work; with its whole budget for
    // what was left, its replanning may buy more.
    cache_entries(&root).assert_carries_on(&clean);
    let coverage = |report: &Value| {
        let coverage = &report["investigation"]["coverage"];
        coverage["investigated"].as_u64().unwrap() + coverage["folded"].as_u64().unwrap()
    };
    assert!(coverage(&report) >= coverage(&clean_report), "{report}");
    // The rerun paid within its budget, replays apart; the killed run's
    // answers it replayed were not paid again.
    let batch = &report["investigation"]["batch"];
    assert!(batch["replayed"].as_u64().unwrap() > 0, "{batch}");
    let budget: f64 = BUDGET.parse().unwrap();
    assert!(cost(&report) <= budget, "{}", cost(&report));
}
