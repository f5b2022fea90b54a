//! `--batch` under a budget, on the budget tests' tree: the same money
//! buys more than it buys interactively, nearly what twice that money buys
//! (the one decision prices the loops, and the run counts the spend, at the
//! catalog's batch prices: half of every rate, with cache writes at the
//! 1-hour lifetime), mechanical entries send no request, and a synthesis in
//! levels sends each level's group calls in one round.

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
fn under_batch_a_budget_buys_more_than_it_does_interactively() {
    let env = agent(tree());
    env.server.set_batch_delay(Duration::from_millis(5));
    let budget: f64 = BUDGET.parse().unwrap();
    let (_, interactive_report, _, _) = whole_run(&env, "cache-interactive", &["--budget", BUDGET]);
    let (batch, report, said, _) = whole_run(&env, "cache-batch", &["--batch", "--budget", BUDGET]);
    env.server.assert_no_violations();

    // Every directory has an entry; the same money has a model read more
    // directories, and the bill stays within it.
    assert_eq!(batch.dirs.len(), DIRS);
    let read = |r: &Value| {
        r["investigation"]["directories_investigated"]
            .as_u64()
            .unwrap()
    };
    let coverage = |r: &Value| r["investigation"]["coverage"].clone();
    assert!(coverage(&report)["mechanical"].as_u64().unwrap() > 0);
    assert!(
        read(&report) > read(&interactive_report),
        "batch {} vs interactive {}",
        coverage(&report),
        coverage(&interactive_report)
    );
    assert!(cost(&report) <= budget);
    assert!(said.contains("(at batch prices)"), "{said}");
}

/// With less money the synthesis takes levels (a call may carry a
/// twentieth of the budget's worth of input): each level's group calls go
/// in one batch, and scan summaries send no request.
#[test]
fn under_batch_each_synthesis_level_is_one_round() {
    let env = agent(tree());
    env.server.set_batch_delay(Duration::from_millis(5));
    let (_, _, said, from) = whole_run(&env, "cache-batch", &["--batch", "--budget", "0.27"]);
    env.server.assert_no_violations();
    let requests = &env.server.requests()[from..];
    assert!(requests.iter().all(|r| r.batch.is_some()));
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
fn estimate_batch_projects_more_work_for_the_same_budget() {
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
    let batch = estimate(&["--batch", "--budget", BUDGET]);
    let twice = estimate(&["--budget", &format!("{}", budget * 2.0)]);
    assert_eq!(env.server.request_count(), 0, "no API call");
    assert!(interactive["budget_binding"] == true && batch["budget_binding"] == true);
    let count = |e: &Value, key: &str| e[key].as_u64().unwrap();
    // More than the same money buys interactively, at most what twice it
    // buys (a batch's cache writes cost more than half theirs).
    assert!(count(&batch, "loops_affordable") > count(&interactive, "loops_affordable"));
    assert!(count(&batch, "loops_affordable") <= count(&twice, "loops_affordable"));
    assert!(
        count(&batch, "directories_mechanical") < count(&interactive, "directories_mechanical")
    );
    assert!(batch["cost_usd"]["high"].as_f64().unwrap() <= budget);
}

#[test]
fn killed_under_a_budget_the_rerun_buys_the_same_work_and_pays_nothing_twice() {
    let env = agent(tree());
    env.server.set_batch_delay(Duration::from_millis(5));
    let args = ["--batch", "--budget", BUDGET];
    let (clean, clean_report, _, _) = whole_run(&env, "cache-clean", &args);
    // Killed while it waits on the loops' second round (the survey's and
    // the plan's batches come first), with the work plan saved; that batch
    // is held in progress until the kill has landed.
    let root = env.root().join("cache-killed");
    let base = env.server.batches().len();
    env.server.clear_prompt_cache();
    env.server.hold_batches_from(Some(base + 3));
    let mut child = spawn_until_waiting_with(&env, &root, base + 3, &args);
    signal(&mut child, libc::SIGKILL);
    env.server.hold_batches_from(None);
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
