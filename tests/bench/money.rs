//! Money benchmark (ignored in the normal suite): what a budget buys and
//! bills, before and after, in the same run.
//!
//! ```text
//! LUMINOS_BENCH_BASELINE=/path/to/an/earlier/luminos \
//!   cargo test --release --test bench -- --ignored --nocapture money::
//! ```
//!
//! The trees are the budget benchmark's: the scan benchmark's (20,000
//! files in 1,021 directories) and the scale benchmark's (200,000 files in
//! 13,048), and two of 40,000 files (the scan generator's shape, 1,021
//! directories; the scale generator's, 3,966). The mock answers with the
//! budget benchmark's scripted agents (each loop reads a few files of each
//! directory it covers, caches what they are, then reports; synthesis
//! calls submit at once), 20 ms before every response. Each run starts
//! from an empty cache against a new mock server.
//!
//! Printed for each run, for this build and, when `LUMINOS_BENCH_BASELINE`
//! names another binary (an earlier build), for that one on the same tree
//! in the same run: the money billed (at the default model's list prices,
//! from the tokens each answer reports, cache writes and reads included)
//! and the share of the budget it is, the directories a model read, the
//! requests, the replanning rounds, and the status.
//!
//! Asserted for this build (the issue's targets): every run bills at most
//! its budget; `--budget 0.01` on 40,000 files bills at most $0.01;
//! `--budget 0.5` on 1,021 directories at most $0.50; the default $5 on
//! 1,021 directories bills at least $4 unless a model read every directory,
//! and a model reads at least twice as many directories as the baseline
//! (and as the 67 the issue measured); a later run with $5 after one with
//! $0.50 gives loops to directories the first left to the scan.
//!
//! Set `LUMINOS_BENCH_TREE=DIR` to keep the trees between runs.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use luminos::ai::api::DEFAULT_MODEL;
use luminos::ai::api::cost::Pricing;
use serde_json::Value;

use crate::budget::{Tree, command, generated_tree, realistic_server, thousands};
use crate::support::entries::cache_entries;

/// Before every response (it changes wall times, not bills).
const LATENCY: Duration = Duration::from_millis(20);
/// What a model read under the default budget before replanning (issue 27).
const READ_BEFORE: usize = 67;

/// What one run did.
#[derive(Debug, Clone)]
struct Measured {
    billed: f64,
    requests: usize,
    read_by_model: usize,
    entries: usize,
    rounds: usize,
    status: String,
    wall: Duration,
}

/// The binary the figures are compared against, if given.
fn baseline() -> Option<PathBuf> {
    std::env::var_os("LUMINOS_BENCH_BASELINE")
        .map(PathBuf::from)
        .filter(|bin| bin.is_file())
}

/// Run `bin` over `tree` with `args` against a new mock, into
/// `cache_root` (which may hold an earlier run's cache).
fn run(bin: &Path, tree: &Tree, args: &[&str], cache_root: &Path) -> Measured {
    let server = realistic_server(&tree.root, LATENCY);
    let started = Instant::now();
    let out = command(bin, &server, cache_root)
        .arg("--json")
        .args(args)
        .arg(&tree.root)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let wall = started.elapsed();
    assert!(out.status.success(), "{} {args:?} failed", bin.display());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pricing = Pricing::for_model(DEFAULT_MODEL);
    let requests = server.requests();
    let billed = requests
        .iter()
        .filter_map(|r| r.reported_usage)
        .map(|usage| pricing.cost(&usage))
        // From +0.0: an empty sum of f64 is -0.0, printed "$-0.0000".
        .fold(0.0, |sum, cost| sum + cost);
    let has_cache = std::fs::read_dir(cache_root)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    let (read_by_model, entries, rounds) = if has_cache {
        let entries = cache_entries(cache_root);
        let dir = crate::support::entries::investigation_dir(cache_root);
        let rounds = std::fs::read(dir.join("replans.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .and_then(|doc| doc["rounds"].as_array().map(Vec::len))
            .unwrap_or(0);
        (entries.model_read().len(), entries.dirs.len(), rounds)
    } else {
        (0, 0, 0)
    };
    Measured {
        billed,
        requests: requests.len(),
        read_by_model,
        entries,
        rounds,
        status: report["investigation"]["status"]
            .as_str()
            .unwrap_or("?")
            .to_string(),
        wall,
    }
}

/// One line of figures.
fn show(label: &str, budget: f64, m: &Measured) {
    println!(
        "  {label:<9} billed ${:.4} of ${budget:.2} ({:.1}%), read by a model {} of {} \
         entries, {} requests, {} replanning rounds, {}, {:.1} s",
        m.billed,
        m.billed * 100.0 / budget,
        thousands(m.read_by_model as u64),
        thousands(m.entries as u64),
        thousands(m.requests as u64),
        m.rounds,
        m.status,
        m.wall.as_secs_f64()
    );
}

/// This build and the baseline over `tree` with `--budget budget`, each
/// from an empty cache; this build's figures, and the baseline's.
fn before_and_after(tree: &Tree, budget: f64) -> (Measured, Option<Measured>) {
    let work = crate::support::fs::temp_dir("luminos-money-");
    let budget_arg = format!("{budget}");
    let args = ["--budget", budget_arg.as_str()];
    let before = baseline().map(|bin| run(&bin, tree, &args, &work.path().join("before")));
    let after = run(
        Path::new(env!("CARGO_BIN_EXE_luminos")),
        tree,
        &args,
        &work.path().join("after"),
    );
    println!("--budget {budget} on {} directories:", tree.dirs);
    if let Some(before) = &before {
        show("before", budget, before);
    }
    show("after", budget, &after);
    if let Some(before) = &before {
        println!(
            "  after/before: billed {:.2}x, read by a model {:.2}x",
            after.billed / before.billed.max(1e-9),
            after.read_by_model as f64 / before.read_by_model.max(1) as f64
        );
    }
    assert!(
        after.billed <= budget,
        "billed ${} of ${budget}",
        after.billed
    );
    (after, before)
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn money_on_1021_directories() {
    let tree = generated_tree("20k", 20_000, false);
    // The default budget is used, and buys far more reading.
    let (after, before) = before_and_after(&tree, 5.0);
    let everything = after.read_by_model >= after.entries;
    assert!(
        after.billed >= 4.0 || everything,
        "billed ${}",
        after.billed
    );
    let floor = before
        .as_ref()
        .map_or(READ_BEFORE, |before| before.read_by_model)
        .max(READ_BEFORE);
    assert!(
        after.read_by_model >= 2 * floor || everything,
        "{} read, {floor} before",
        after.read_by_model
    );
    // Half a dollar is a ceiling too.
    before_and_after(&tree, 0.5);

    // A later run with more money deepens what the first left to the scan.
    let work = crate::support::fs::temp_dir("luminos-money-deepen-");
    let cache = work.path().join("cache");
    let bin = Path::new(env!("CARGO_BIN_EXE_luminos"));
    let first = run(bin, &tree, &["--budget", "0.5"], &cache);
    let later = run(bin, &tree, &["--budget", "5"], &cache);
    println!("--budget 0.5, then --budget 5 on the same cache:");
    show("first", 0.5, &first);
    show("later", 5.0, &later);
    assert!(later.billed <= 5.0);
    assert!(later.read_by_model > first.read_by_model);
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn money_on_13048_directories() {
    let tree = generated_tree("200k", 200_000, true);
    let (after, _) = before_and_after(&tree, 5.0);
    assert!(after.read_by_model > READ_BEFORE);
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn a_cent_on_40000_files() {
    let scan_shape = generated_tree("40k-scan", 40_000, false);
    before_and_after(&scan_shape, 0.01);
    let scale_shape = generated_tree("40k-scale", 40_000, true);
    before_and_after(&scale_shape, 0.01);
}
