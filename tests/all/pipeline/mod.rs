//! End-to-end runs of the real binary against the scripted mock Messages API:
//! the investigation pipeline's phases, passes and their effects on the cache
//! and the report.

use crate::support;

use std::path::PathBuf;
use std::process::Output;

use luminos::ai::api::Usage;
use luminos::ai::tools::{self, Toolbox};
use luminos::cache::{Cache, CacheRoot, EntryKind};
use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{
    AgentEnv, PAST_THE_CONTEXT_BUDGET, Pass, dir_summary, file_summary, visible_files,
};

use support::mock::{RecordedRequest, Reply};
use support::output::{
    AI_KEYS, SCAN_KEYS, assert_contains_all, fields, item_where, lines_where, stderr, stdout,
};

mod budget;
mod discovery;
mod failures;
mod passes;
mod resume_and_report;

/// A small project: 6 files in src/core, src, docs and the root.
fn project() -> TestEnv {
    TestEnv::with_small_project()
}

/// Runs luminos with one dir loop at a time, the original's order, so the
/// recorded requests of each loop are contiguous.
fn run(env: &TestEnv, extra: &[&str]) -> Output {
    env.run_ok(&[&["--jobs=1"], extra].concat())
}

fn canonical(env: &TestEnv) -> PathBuf {
    std::fs::canonicalize(env.target()).unwrap()
}

/// The investigation cache of `env`'s target (the current investigation).
fn cache(env: &TestEnv) -> Cache {
    let root = CacheRoot::open(env.cache()).unwrap();
    let id = root.investigation_id(&canonical(env), false).unwrap();
    assert!(!id.is_new, "no investigation was recorded");
    Cache::open(&root, &id.id, &canonical(env)).unwrap()
}

fn dir_entry(env: &TestEnv, rel: &str) -> Option<Value> {
    let path = canonical(env).join(rel);
    cache(env).read_entry(EntryKind::Dir, &path.to_string_lossy())
}

/// The `plan_evaluation.json` record of the directory `rel`.
fn evaluation_of(env: &TestEnv, rel: &str) -> Value {
    let evaluation = cache(env).read_json("plan_evaluation.json").unwrap();
    item_where(&evaluation["per_directory"], "dir", rel).clone()
}

/// The passes in request order, consecutive requests of one pass merged,
/// with how many requests each made.
fn pass_runs(env: &AgentEnv) -> Vec<(Pass, usize)> {
    let mut runs: Vec<(Pass, usize)> = Vec::new();
    for (pass, _) in env.passes() {
        match runs.last_mut() {
            Some((last, n)) if *last == pass => *n += 1,
            _ => runs.push((pass, 1)),
        }
    }
    runs
}

fn requests_of(env: &AgentEnv, pass: &Pass) -> Vec<RecordedRequest> {
    env.requests_of(pass)
}

/// A plan that only makes docs shallow (5 turns), leaf-first.
fn docs_shallow_plan() -> Value {
    json!({
        "priority_dirs": [], "skip_dirs": [], "notes": "",
        "shallow_dirs": [{"path": "docs", "reason": "prose"}],
        "investigation_order": "leaf-first"
    })
}

/// The passes of the requests from index `from` on.
fn passes_since(env: &AgentEnv, from: usize) -> Vec<Pass> {
    env.passes()
        .into_iter()
        .skip(from)
        .map(|(p, _)| p)
        .collect()
}

fn dir(rel: &str) -> Pass {
    Pass::Dir(rel.to_string())
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn scope_names(scope: Toolbox) -> Vec<String> {
    tools::names(scope)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// "Turns available: N" from a dir prompt.
fn turns_in_prompt(request: &RecordedRequest) -> u32 {
    let system = request.prompt_text();
    let at = system
        .find("\nTurns available: ")
        .expect("turn count in dir prompt");
    system[at + "\nTurns available: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The directory loops of the requests from index `from` on, in order,
/// each once.
fn dirs_investigated(env: &AgentEnv, from: usize) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    for (pass, _) in env.passes().into_iter().skip(from) {
        if let Pass::Dir(rel) = pass
            && !dirs.contains(&rel)
        {
            dirs.push(rel);
        }
    }
    dirs
}
