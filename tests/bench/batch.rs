//! `--batch` benchmark (ignored in the normal suite): the scan benchmark's
//! tree (20,000 files in 1,021 directories, four levels) investigated
//! interactively and through the mock's Message Batches API, whose every
//! batch takes a fixed [`BATCH_DELAY`], and [`ROUND_TIME`] (ten minutes) on
//! the prompt cache's clock.
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
//! Asserted: for the same work the batch bill is between half the
//! interactive one and 0.7 of it (half of every rate, with what is cached
//! written for an hour, at 2x the input price rather than 1.25x) and the
//! entries are the same; the rounds are within two of the longest chain and
//! far below the loops; after the kill no request was sent or billed twice
//! and the cache equals the uninterrupted batch run's; the default budget
//! buys at least 1.4 times the loops under `--batch`.
//!
//! [`ten_minute_rounds_on_the_parity_fixture`] measures the issue's target
//! on the parity fixture, with loops of ten turns: at most 0.55 times the
//! interactive bill.
//!
//! Set `LUMINOS_BENCH_TREE=DIR` to keep the tree (in `DIR/20k`) between
//! runs, as the budget benchmark does.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::budget::{Tree, generated_tree, luminos, realistic_server, thousands};
use crate::support::agent::Pass;
use crate::support::entries::{Entries, batches_in_flight, cache_entries};
use crate::support::mock::MockServer;

/// How long every batch takes at the mock, from its creation to its end.
const BATCH_DELAY: Duration = Duration::from_millis(300);
/// How long every batch takes on the prompt cache's clock: ten minutes (the
/// client's own work between rounds keeps the wall clock's pace).
const ROUND_TIME: Duration = Duration::from_secs(10 * 60);
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
    let tree = generated_tree("20k", 20_000, false);
    let target = std::fs::canonicalize(&tree.root).unwrap();
    let work = crate::support::fs::temp_dir("luminos-batch-run-");
    let server = realistic_server(&tree.root, LATENCY);
    server
        .set_batch_delay(BATCH_DELAY)
        .set_batch_round_time(ROUND_TIME);
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
    println!("  cost ratio (batch / interactive, same work, rounds of ten minutes): {ratio:.4}");
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
    // Half of every rate, but what is cached is written for an hour: at
    // 2x the input price rather than 1.25x.
    assert!(ratio > 0.5 && ratio < 0.7, "cost ratio {ratio}");
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
    assert!(bought >= 1.4, "{bought}");
}

/// How long each batch takes at the mock in
/// [`ten_minute_rounds_on_the_parity_fixture`] (and [`ROUND_TIME`] on the
/// prompt cache's clock).
const PARITY_DELAY: Duration = Duration::from_millis(100);
/// What each dir-loop turn thinks, in output tokens: luminos's own
/// allowance for its default model thinking between tool calls (see
/// `BETWEEN_TOOLS_THINKING_TOKENS`), not the mock's token figure.
const TURN_THINKING: u64 = 300;

/// One run of `binary` (`luminos [args] --json TARGET`) on `root`, from a
/// cold prompt cache: its investigation object.
fn parity_run(
    binary: &Path,
    server: &MockServer,
    target: &Path,
    root: &Path,
    args: &[&str],
) -> Value {
    server.clear_prompt_cache();
    let out = crate::isolated_against(binary, server, root)
        .args(args)
        .arg("--json")
        .arg(target)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ok(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["investigation"].clone()
}

/// The parity fixture (the pipeline tests' small project) with loops that
/// take ten turns each, one step a turn, each thinking [`TURN_THINKING`]
/// tokens: interactively (the prompt cache's clock at the wall clock's
/// pace), then through batches whose every round takes ten minutes on that
/// clock. Prints both bills, the ratio, the rounds and what the rounds read
/// and wrote; asserts the ratio is at most 0.55. With
/// `LUMINOS_BENCH_BASELINE_BIN=PATH` (another build of luminos, say the main
/// branch's) the same two runs are made with it too, for a before and
/// after measured in the same run.
#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn ten_minute_rounds_on_the_parity_fixture() {
    let env = crate::support::TestEnv::with_small_project();
    let target = std::fs::canonicalize(env.target()).unwrap();
    let server = MockServer::start();
    let agent = crate::support::agent::MockAgent::new(&target).thorough_dirs(10);
    server.respond_with(move |request| agent.reply(&request.body));
    server
        .set_batch_delay(PARITY_DELAY)
        .set_batch_round_time(ROUND_TIME)
        .set_thinking_tokens(TURN_THINKING);
    let work = crate::support::fs::temp_dir("luminos-batch-parity-");
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_luminos"));
    let mut binaries = vec![("this build", ours)];
    if let Some(other) = std::env::var_os("LUMINOS_BENCH_BASELINE_BIN") {
        binaries.push(("baseline", PathBuf::from(other)));
    }
    println!(
        "parity fixture, loops of ten turns ({TURN_THINKING} thinking tokens each); a batch \
         takes {} ms at the mock, ten minutes on the prompt cache's clock",
        PARITY_DELAY.as_millis()
    );
    let mut ours_ratio = None;
    for (name, binary) in &binaries {
        let interactive = parity_run(
            binary,
            &server,
            &target,
            &work.path().join(format!("{name}-i")),
            &[],
        );
        let batch = parity_run(
            binary,
            &server,
            &target,
            &work.path().join(format!("{name}-b")),
            &["--batch"],
        );
        let cost = |i: &Value| i["cost_usd"].as_f64().unwrap();
        let ratio = cost(&batch) / cost(&interactive);
        println!(
            "  {name:>10}: interactive ${:.5} ({} requests, tokens {}), --batch ${:.5} ({} rounds, \
             tokens {}): ratio {ratio:.4}",
            cost(&interactive),
            interactive["api_requests"],
            interactive["tokens"],
            cost(&batch),
            batch["batch"]["rounds"],
            batch["tokens"],
        );
        if *name == "this build" {
            ours_ratio = Some(ratio);
        }
    }
    let ratio = ours_ratio.unwrap();
    assert!(ratio <= 0.55, "batch/interactive {ratio}");
    server.assert_no_violations();
}
