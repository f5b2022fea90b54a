//! Parallel dir loops and fresh resumes, end to end with the real binary and
//! the scripted mock Messages API: `--jobs 4` leaves the cache `--jobs 1`
//! does; an unchanged rerun makes no request; a change re-investigates only
//! its directory and the ancestors that embed its summary; `--max-cost` stops
//! new loops and a later run finishes them; Ctrl-C exits 130 and resumes.

use crate::support;

use std::collections::BTreeSet;
use std::process::Output;
use std::time::Duration;

use luminos::ai::api::Usage;
use serde_json::Value;
use support::TestEnv;
use support::agent::{AgentEnv, Pass};
use support::entries::cache_entries;
use support::output::{assert_contains_all, stderr};

/// Safety net only: a run that takes this long is stuck.
const STUCK: Duration = Duration::from_secs(60);

fn run(env: &TestEnv, extra: &[&str]) -> Output {
    env.run_ok(extra)
}

fn json_run(env: &TestEnv, extra: &[&str]) -> Value {
    let output = run(env, &[&["--json"], extra].concat());
    serde_json::from_slice(&output.stdout).expect("one JSON report")
}

/// The passes of the requests from index `from` on, each once, in order.
fn passes_since(env: &AgentEnv, from: usize) -> Vec<Pass> {
    let mut passes = Vec::new();
    for (pass, _) in env.passes().into_iter().skip(from) {
        if !passes.contains(&pass) {
            passes.push(pass);
        }
    }
    passes
}

fn dirs_since(env: &AgentEnv, from: usize) -> BTreeSet<String> {
    passes_since(env, from)
        .into_iter()
        .filter_map(|pass| match pass {
            Pass::Dir(rel) => Some(rel),
            _ => None,
        })
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The JSON files of the only investigation under `cache_root` that do not
/// depend on timing or run order: the saved survey and plan, and the flags
/// as a sorted set of lines.
fn saved_passes(cache_root: &std::path::Path) -> (Value, Value, Vec<String>) {
    let dir = support::entries::investigation_dir(cache_root);
    let read = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join(name)).unwrap()).unwrap()
    };
    let mut flags: Vec<String> = std::fs::read_to_string(dir.join("flags.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    flags.sort();
    (read("survey.json"), read("plan.json"), flags)
}

#[test]
fn four_jobs_and_one_job_leave_the_same_cache() {
    let env = TestEnv::with_deep_project().with_agent(|a| {
        a.flag(
            "src/net/tls",
            "src/net/tls/cert.rs",
            "concern",
            "Self-signed.",
        )
        .flag("docs", "docs/guide.md", "info", "Thin guide.")
    });
    let serial_cache = env.root().join("cache-serial");
    let serial = env
        .cmd()
        .env("LUMINOS_CACHE_DIR", &serial_cache)
        .args(["--jobs", "1", "--json"])
        .arg(env.target())
        .output()
        .unwrap();
    assert!(serial.status.success(), "{}", stderr(&serial));
    let parallel = json_run(&env, &["--jobs", "4"]);

    let serial_entries = cache_entries(&serial_cache);
    let parallel_entries = cache_entries(env.cache());
    assert_eq!(serial_entries.dirs.len(), 7);
    similar_asserts::assert_eq!(serial_entries, parallel_entries);
    assert_eq!(saved_passes(&serial_cache), saved_passes(env.cache()));
    let serial: Value = serde_json::from_slice(&serial.stdout).unwrap();
    // Flags of one severity keep the order they were raised in, which is
    // the order loops finish in; as sets they are equal.
    let flag_set = |report: &Value| -> BTreeSet<String> {
        report["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(Value::to_string)
            .collect()
    };
    assert_eq!(flag_set(&serial), flag_set(&parallel));
    assert_eq!(flag_set(&serial).len(), 2);
    assert_eq!(serial["ai_brief"], parallel["ai_brief"]);
    assert_eq!(
        serial["investigation"]["api_requests"],
        parallel["investigation"]["api_requests"]
    );
}

#[test]
fn an_unchanged_rerun_makes_no_request_and_prints_the_same_report() {
    let env = TestEnv::with_deep_project()
        .with_agent(|a| a.flag("docs", "docs/guide.md", "info", "Thin guide."));
    let first = json_run(&env, &[]);
    let requests = env.server.request_count();
    let again = run(&env, &["--json"]);
    assert_eq!(env.server.request_count(), requests, "{}", stderr(&again));
    let err = stderr(&again);
    assert_contains_all(
        &err,
        &[
            "[AI] Directories to investigate: 0 (7 cached)",
            "Synthesis loaded from cache",
        ],
    );
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    for key in ["ai_brief", "ai_detailed", "flags"] {
        assert_eq!(first[key], again[key], "{key}");
    }
    assert!(!first["ai_brief"].as_str().unwrap().is_empty());
    assert_eq!(again["investigation"]["api_requests"], 0);
    assert_eq!(again["investigation"]["directories_cached"], 7);

    // The terminal report's verdict is the same text as well.
    let text = String::from_utf8(run(&env, &[]).stdout).unwrap();
    assert!(text.contains(first["ai_brief"].as_str().unwrap()));
    assert_eq!(env.server.request_count(), requests);
}

#[test]
fn a_changed_file_reinvestigates_its_directory_and_ancestors_only() {
    let env = TestEnv::with_deep_project().with_mock();
    run(&env, &[]);
    let before = env.server.request_count();
    env.file("src/net/tls/cert.rs", "pub struct Cert { pem: String }\n");
    // `-v`: each directory and why it is (not) investigated again.
    let out = run(&env, &["--jobs", "1", "-v"]);
    assert_eq!(
        dirs_since(&env, before),
        set(&["src/net/tls", "src/net", "src", "."])
    );
    let passes = passes_since(&env, before);
    assert!(
        !passes.contains(&Pass::Survey),
        "the saved survey is reused"
    );
    assert!(
        !passes.contains(&Pass::Planning),
        "the saved plan is reused"
    );
    assert_eq!(passes.last(), Some(&Pass::Synthesis));
    let err = stderr(&out);
    assert_contains_all(
        &err,
        &[
            "[AI] Investigating again (its contents changed): src/net/tls/",
            "[AI] Investigating again (a directory below it is investigated again): src/net/",
            "[AI] Skipping (cached): src/db/",
        ],
    );

    // A new directory: itself and its ancestors.
    let before = env.server.request_count();
    env.file("src/db/migrations/001.sql", "create table t (id int);\n");
    run(&env, &[]);
    assert_eq!(
        dirs_since(&env, before),
        set(&["src/db/migrations", "src/db", "src", "."])
    );

    // A deleted directory: its parent changed, and synthesis no longer sees
    // the old entry.
    let before = env.server.request_count();
    std::fs::remove_dir_all(env.path("docs")).unwrap();
    let report = json_run(&env, &[]);
    assert_eq!(dirs_since(&env, before), set(&["."]));
    let synthesis = env
        .passes()
        .into_iter()
        .skip(before)
        .find(|(pass, _)| *pass == Pass::Synthesis)
        .expect("synthesis runs again")
        .1;
    assert!(!synthesis.body_contains("docs/"), "a deleted dir's entry");
    assert_eq!(report["investigation"]["directories_investigated"], 7);
}

/// Every request of every dir loop reports this much: $0.315 at Sonnet's
/// prices, so one two-turn loop costs $0.63.
const COSTLY: Usage = Usage {
    input_tokens: 100_000,
    output_tokens: 1_000,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_1h_input_tokens: None,
};

#[test]
fn max_cost_stops_new_loops_and_a_later_run_finishes() {
    let dirs = [
        "src/net/tls",
        "src/net",
        "src/db",
        "src",
        "docs",
        "tests",
        ".",
    ];
    let env = TestEnv::with_deep_project().with_agent(|a| {
        dirs.iter()
            .fold(a, |a, dir| a.usage(Pass::Dir(dir.to_string()), COSTLY))
    });
    // The first loop starts (nothing measured yet, so a loop is expected to
    // cost about $0.11); after it, each is expected to cost $0.63, and
    // $0.63 + $0.63 passes $1.
    // Priced as Sonnet 4.5 ($3/$15), which the figures above assume.
    let out = run(
        &env,
        &[
            "--jobs",
            "1",
            "--max-cost",
            "1",
            "--model",
            "claude-sonnet-4-5",
            "--json",
        ],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let investigation = &report["investigation"];
    assert_eq!(investigation["cost_cap_hit"], true, "{investigation}");
    assert_eq!(dirs_since(&env, 0).len(), 1);
    assert_eq!(investigation["directories_remaining"], 6);
    assert!(investigation["cost_usd"].as_f64().unwrap() < 1.0);
    assert_eq!(
        passes_since(&env, 0).last(),
        Some(&Pass::Synthesis),
        "synthesis runs over what exists"
    );
    assert!(!report["ai_brief"].as_str().unwrap().is_empty());
    assert!(
        stderr(&out).contains("The spending cap left 6 directories for a later run"),
        "{}",
        stderr(&out)
    );

    // The terminal form says so too; each rerun under a cap makes progress
    // (its first loop starts, whatever it is expected to cost), and a run
    // without the cap finishes.
    let before = env.server.request_count();
    let text = run(&env, &["--max-cost", "0.01"]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("the --max-cost cap was hit"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
    assert_eq!(dirs_since(&env, before).len(), 1, "one loop under $0.01");
    let report = json_run(&env, &[]);
    assert_eq!(report["investigation"]["cost_cap_hit"], false);
    assert_eq!(report["investigation"]["directories_remaining"], 0);
    assert_eq!(report["investigation"]["directories_investigated"], 7);
}

#[test]
fn ctrl_c_exits_130_and_the_next_run_resumes() {
    let env = TestEnv::with_deep_project().with_mock();
    // Survey and planning answered; Ctrl-C while the first turns of two
    // loops wait on the API.
    let output = env.interrupt_while_waiting(&["--jobs", "2"], 2, 2, STUCK);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(130), "{err}");
    // What the run had spent is said, since no report follows.
    assert_contains_all(
        &err,
        &[
            "Interrupted after ",
            " API requests (about $",
            "run the same command again",
        ],
    );
    assert!(output.stdout.is_empty(), "no half report");
    let done_before = cache_entries(env.cache()).dirs.len();
    assert!(done_before < 7, "interrupted before the end");

    let report = json_run(&env, &[]);
    assert_eq!(report["investigation"]["directories_investigated"], 7);
    assert_eq!(report["investigation"]["directories_remaining"], 0);
    assert!(!report["ai_brief"].as_str().unwrap().is_empty());
    let entries = cache_entries(env.cache());
    assert_eq!(entries.dirs.len(), 7);
    assert!(entries.dirs.values().all(|e| e["partial"] != true));
}
