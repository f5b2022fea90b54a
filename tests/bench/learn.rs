//! What learning the tree's values before the first tool result costs
//! (ignored in the normal suite):
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture --test-threads=1 learn::
//! ```
//!
//! On the scan benchmark's 20,000-file tree, the base scan alone against
//! learning every file the scan's walk listed (read, prefiltered, the rest
//! through the full redactor) from a cold start (no clean files known),
//! and a rerun's learning (the clean files known from the first), each the
//! median of seven warm runs taken in turn, in the same process. Target: the learning at
//! most the scan's own time. Then the same on the redactor benchmark's
//! corpus (the crate sources under `~/.cargo/registry/src`, real code
//! that names tokens and passwords), where more files meet the full
//! redactor. Nothing is asserted on time.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use luminos::ai::tools::learning::learn_tree;
use luminos::progress::Progress;
use luminos::redact::Redactor;
use luminos::scan::{ScanOptions, scan_with_dirs};

use super::scan::{FILES, generate_tree, ms};

fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// The median of `runs`.
fn median_of(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

/// The scan alone, a cold learning and a rerun's, on `tree`: measured in
/// turn, seven rounds after a warm-up, so a machine whose load changes
/// weighs on all three alike.
fn measure(label: &str, tree: &Path) {
    let options = ScanOptions::default();
    let canonical = std::fs::canonicalize(tree).unwrap();
    let (_, dirs) = scan_with_dirs(tree, &options, &Progress::silent());
    let files = &dirs.files();
    let first = learn_tree(
        &canonical,
        files,
        &Redactor::new(),
        &HashSet::new(),
        threads(),
    );
    let clean: HashSet<String> = first.clean.iter().cloned().collect();
    let (mut scans, mut colds, mut reruns) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..7 {
        let started = Instant::now();
        std::hint::black_box(scan_with_dirs(tree, &options, &Progress::silent()));
        scans.push(started.elapsed());
        let started = Instant::now();
        std::hint::black_box(learn_tree(
            &canonical,
            files,
            &Redactor::new(),
            &HashSet::new(),
            threads(),
        ));
        colds.push(started.elapsed());
        let started = Instant::now();
        std::hint::black_box(learn_tree(
            &canonical,
            files,
            &Redactor::new(),
            &clean,
            threads(),
        ));
        reruns.push(started.elapsed());
    }
    let scan = median_of(scans);
    println!(
        "{label}: {} files; {} through the full redactor, {} holding values",
        first.files, first.redacted, first.with_values
    );
    let line = |what: &str, took: Duration| {
        println!(
            "  {what:<28} {:>8.1} ms  ({:.2}x the scan)",
            ms(took),
            ms(took) / ms(scan)
        );
    };
    println!("  {:<28} {:>8.1} ms", "base scan", ms(scan));
    line("learning, cold", median_of(colds));
    line("learning, rerun (cached)", median_of(reruns));
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn learning_against_the_scan() {
    let tmp = crate::support::fs::temp_dir("luminos-bench-");
    let tree = super::scan::bench_tree(tmp.path());
    if !tree.exists() {
        generate_tree(&tree, FILES);
    }
    measure("the scan benchmark's tree", &tree);
    if let Some(corpus) = super::redact::registry_src() {
        measure(&format!("{}", corpus.display()), &corpus);
    }
}
