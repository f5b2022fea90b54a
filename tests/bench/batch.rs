//! `--batch` benchmark (ignored in the normal suite): the scan benchmark's
//! tree (20,000 files in 1,021 directories, four levels) investigated
//! interactively and through the mock's Message Batches API, whose every
//! batch takes a fixed [`BATCH_DELAY`].
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture batch::
//! ```
//!
//! The mock's scripted agent is the budget benchmark's (each loop reads a
//! few files of its directory, caches what they are, then reports: three
//! turns), with the default model's prompt-cache minimum. Five runs of the
//! release binary, each from an empty cache and a cold prompt cache:
//! 1. interactive, `--budget none` (every directory its own loop), `-j 4`;
//! 2. the same with `--batch`;
//! 3. the same with `--batch`, killed (SIGKILL) while it waits on a round in
//!    the middle of the directory loops, then run again to the end;
//! 4. interactive under the default budget ($5);
//! 5. `--batch` under the default budget.
//!
//! Printed: requests, tokens and the bill of each, the batch/interactive
//! cost ratio for the same work, rounds against loops and against the
//! longest chain of turns (measured from the requests: survey, plan, the
//! turns of the loops along the deepest path, the synthesis calls one after
//! another), what the killed run's successor replayed and picked up, and
//! what the default budget bought in each mode.
//!
//! Asserted (the issue's targets): for the same work the batch bill is half
//! the interactive one (within 1%) and the entries are the same; the rounds
//! are within two of the longest chain and far below the loops; after the
//! kill no request was sent or billed twice and the cache equals the
//! uninterrupted batch run's; the default budget buys at least 1.8 times
//! the loops under `--batch`.
//!
//! Set `LUMINOS_BENCH_TREE=DIR` to keep the tree (in `DIR/20k`) between
//! runs, as the budget benchmark does.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::budget::{Tree, luminos, realistic_server, thousands, tree_dir};
use crate::support::agent::Pass;
use crate::support::entries::{Entries, batches_in_flight, cache_entries};
use crate::support::mock::MockServer;

/// How long every batch takes at the mock, from its creation to its end.
const BATCH_DELAY: Duration = Duration::from_millis(300);
/// Before each interactive response (it changes wall times, not bills).
const LATENCY: Duration = Duration::from_millis(20);
/// The first wait before a batch is polled (later ones grow to 12 times it).
const POLL_MS: &str = "20";

/// One run to its end.
struct Run {
    entries: Entries,
    report: Value,
    stderr: String,
    wall: Duration,
    /// The index of its first request at the mock.
    from: usize,
}

impl Run {
    fn investigation(&self) -> &Value {
        &self.report["investigation"]
    }

    fn cost(&self) -> f64 {
        self.investigation()["cost_usd"].as_f64().unwrap()
    }

    fn loops(&self) -> u64 {
        self.investigation()["coverage"]["investigated"]
            .as_u64()
            .unwrap()
    }
}

fn command(server: &MockServer, cache_root: &Path, target: &Path, args: &[&str]) -> Command {
    let mut cmd = luminos(server, cache_root);
    cmd.env("LUMINOS_BATCH_POLL_MS", POLL_MS)
        .arg("--json")
        .args(args)
        .arg(target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn whole_run(server: &MockServer, tree: &Tree, cache_root: &Path, args: &[&str]) -> Run {
    server.clear_prompt_cache();
    let from = server.request_count();
    let started = Instant::now();
    let out = command(server, cache_root, &tree.root, args)
        .output()
        .unwrap();
    let wall = started.elapsed();
    assert_ok(&out);
    Run {
        entries: cache_entries(cache_root),
        report: serde_json::from_slice(&out.stdout).unwrap(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        wall,
        from,
    }
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "luminos failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The longest chain of requests that had to go one after another in
/// `run`: the survey, the plan, along each path from a leaf up to the
/// target the turns of every loop on it (a parent's loop starts once its
/// children's have ended), and the synthesis calls (each level's, then the
/// verdict). Also the number of loops.
fn longest_chain(server: &MockServer, run: &Run, target: &Path) -> (u64, u64) {
    let mut turns: HashMap<String, u64> = HashMap::new();
    let (mut before, mut synthesis_levels) = (0, 0);
    for request in &server.requests()[run.from..] {
        match Pass::of(&request.body, target) {
            Pass::Survey | Pass::Planning => before += 1,
            Pass::Dir(rel) => *turns.entry(rel).or_default() += 1,
            Pass::Synthesis => {}
            Pass::Ask | Pass::Refine => panic!("no question or refinement here"),
        }
    }
    synthesis_levels += run.stderr.matches("Synthesis level ").count() as u64;
    let path_turns = |rel: &str| -> u64 {
        Path::new(rel)
            .ancestors()
            .map(|a| match a.to_string_lossy().as_ref() {
                "" => ".".to_string(),
                other => other.to_string(),
            })
            .filter_map(|a| turns.get(&a).copied())
            .sum()
    };
    let loops_chain = turns.keys().map(|rel| path_turns(rel)).max().unwrap_or(0);
    (
        before + loops_chain + synthesis_levels + 1,
        turns.len() as u64,
    )
}

/// Spawn a `--batch` run and return once it waits on the `n`-th batch the
/// mock ever created (created, and recorded in the cache).
fn spawn_until_waiting(
    server: &MockServer,
    cache_root: &Path,
    target: &Path,
    args: &[&str],
    n: usize,
) -> Child {
    let mut child = command(server, cache_root, target, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(600);
    loop {
        if let Some(batch) = server.batches().get(n)
            && batches_in_flight(cache_root).contains(&batch.id)
        {
            return child;
        }
        assert!(child.try_wait().unwrap().is_none(), "ended before the kill");
        assert!(Instant::now() < until, "never waited on batch {n}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn summary(name: &str, run: &Run) {
    let i = run.investigation();
    println!(
        "  {name:>24}: {} requests, {} tokens, billed ${:.4}, {} loops, {} folded, {} \
         mechanical; wall {:.1} s",
        i["api_requests"],
        thousands(
            ["input", "output", "cache_write", "cache_read"]
                .iter()
                .map(|k| i["tokens"][k].as_u64().unwrap_or(0))
                .sum()
        ),
        run.cost(),
        run.loops(),
        i["coverage"]["folded"],
        i["coverage"]["mechanical"],
        run.wall.as_secs_f64()
    );
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn batch_halves_the_bill_and_rounds_follow_the_chain_of_turns() {
    let tree = tree_dir("20k", 20_000, |root| {
        crate::scan::generate_tree(root, 20_000);
    });
    let target = std::fs::canonicalize(&tree.root).unwrap();
    let work = crate::support::fs::temp_dir("luminos-batch-run-");
    let server = realistic_server(&tree.root, LATENCY);
    server.set_batch_delay(BATCH_DELAY);
    let unbounded = ["--budget", "none"];
    let batched = ["--budget", "none", "--batch"];

    // 1 and 2: the same work, interactive and in batches.
    let interactive = whole_run(&server, &tree, &work.path().join("interactive"), &unbounded);
    let clean_root = work.path().join("batch");
    let batch = whole_run(&server, &tree, &clean_root, &batched);
    let b = batch.investigation();
    assert_eq!(b["status"], "complete", "{}", batch.stderr);
    let ratio = batch.cost() / interactive.cost();
    let rounds = b["batch"]["rounds"].as_u64().unwrap();
    let (chain, loops) = longest_chain(&server, &batch, &target);
    println!(
        "tree: {} directories; batch delay {} ms a round",
        tree.dirs,
        BATCH_DELAY.as_millis()
    );
    summary("interactive, no budget", &interactive);
    summary("--batch, no budget", &batch);
    println!("  cost ratio (batch / interactive, same work): {ratio:.4}  (target 0.5)");
    println!(
        "  rounds: {rounds} for {loops} loops; longest chain of turns {chain}; waited {:.1} s \
         over {} batches",
        b["batch"]["waited_secs"].as_f64().unwrap(),
        b["batch"]["batches"]
    );
    assert_eq!(
        b["api_requests"],
        interactive.investigation()["api_requests"]
    );
    assert!(
        batch.entries.dirs == interactive.entries.dirs,
        "dir entries differ"
    );
    assert!((ratio - 0.5).abs() < 0.005, "cost ratio {ratio}");
    assert!(
        rounds.abs_diff(chain) <= 2,
        "{rounds} rounds, chain {chain}"
    );
    assert!(rounds * 10 < loops, "{rounds} rounds for {loops} loops");

    // 3: killed while it waits on a round in the middle of the loops (the
    // survey's and the plan's batches come first), then run again.
    server.clear_prompt_cache();
    let killed_root = work.path().join("killed");
    let first = server.batches().len();
    let mut child = spawn_until_waiting(&server, &killed_root, &tree.root, &batched, first + 6);
    let target_batch = server.batches()[first + 6].clone();
    // SAFETY: kill(2) on our own child, not reaped yet.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    child.wait().unwrap();
    println!(
        "  killed while waiting on round 7 ({} requests in flight)",
        target_batch.custom_ids.len()
    );
    let resumed = whole_run(&server, &tree, &killed_root, &batched);
    let r = resumed.investigation();
    println!(
        "  rerun: {} answers replayed from the cache (${:.4} paid by the killed run), {} batch \
         picked up, {} requests sent, ${:.4} billed; wall {:.1} s",
        r["batch"]["replayed"],
        r["batch"]["replayed_cost_usd"].as_f64().unwrap(),
        r["batch"]["batches_resumed"],
        r["batch"]["requests"],
        resumed.cost(),
        resumed.wall.as_secs_f64()
    );
    let batches = server.batches();
    let ids: HashSet<&str> = batches[first..].iter().map(|b| b.id.as_str()).collect();
    let mut sent: HashMap<&str, usize> = HashMap::new();
    for batch in &batches[first..] {
        for id in &batch.custom_ids {
            *sent.entry(id).or_default() += 1;
        }
    }
    let mut billed: HashMap<String, usize> = HashMap::new();
    for request in server.requests() {
        if let Some(b) = request.batch.filter(|b| ids.contains(b.batch_id.as_str())) {
            *billed.entry(b.custom_id).or_default() += 1;
        }
    }
    let twice = billed.values().filter(|n| **n > 1).count();
    let resent = sent.values().filter(|n| **n > 1).count();
    let same =
        batch.entries.dirs == resumed.entries.dirs && batch.entries.files == resumed.entries.files;
    println!(
        "  after the kill: {} requests billed across both runs ({} in the uninterrupted run), \
         {twice} billed twice, {resent} sent twice; cache {} the uninterrupted run's",
        billed.len(),
        b["batch"]["requests"],
        if same { "equals" } else { "DIFFERS FROM" }
    );
    assert_eq!(twice, 0);
    assert_eq!(resent, 0);
    assert!(same, "the cache after the kill differs");

    // 4 and 5: what the default budget buys in each mode.
    let interactive5 = whole_run(&server, &tree, &work.path().join("interactive5"), &[]);
    let batch5 = whole_run(&server, &tree, &work.path().join("batch5"), &["--batch"]);
    summary("interactive, $5", &interactive5);
    summary("--batch, $5", &batch5);
    let bought = batch5.loops() as f64 / interactive5.loops() as f64;
    println!(
        "  loops the default budget buys: {bought:.2} times as many under --batch \
         (${:.2} vs ${:.2} billed)",
        batch5.cost(),
        interactive5.cost()
    );
    for run in [&interactive5, &batch5] {
        assert!(run.cost() <= 5.0);
        assert_eq!(run.entries.dirs.len(), tree.dirs);
    }
    assert!(bought >= 1.8, "{bought}");
}
