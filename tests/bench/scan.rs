//! Base-scan benchmark (ignored in the normal suite):
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture scan::
//! ```
//!
//! Generates a 20,000-file tree (source, text, data and extensionless files,
//! nested directories), then reports the scan's warm-cache median time as
//! ratios to baselines measured in the same run: `find TREE -type f -print0 |
//! xargs -0 wc -l` always, and `tokei TREE` when tokei is on PATH. Targets:
//! at most 0.5x find/wc and at most 1.0x tokei. Nothing is asserted on time.
//!
//! Set `LUMINOS_BENCH_TREE=DIR` to generate the tree in DIR and keep it (for
//! profiling the binary on it); an existing DIR is reused as it is.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use luminos::progress::Progress;
use luminos::scan::ScanOptions;

/// Files in the generated tree (also the first-request benchmark's tree).
pub(crate) const FILES: usize = 20_000;
const RUNS: usize = 7;

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn base_scan_against_find_wc_and_tokei() {
    let tmp = crate::support::fs::temp_dir("luminos-bench-");
    let tree = bench_tree(tmp.path());
    let bytes = if tree.exists() {
        0
    } else {
        generate_tree(&tree, FILES)
    };
    println!(
        "tree: {FILES} files, {:.1} MB, at {}",
        bytes as f64 / 1e6,
        tree.display()
    );

    let options = ScanOptions::default();
    let scan = median(|| {
        let started = Instant::now();
        let report = luminos::scan::scan(&tree, &options, &Progress::silent());
        let took = started.elapsed();
        assert_eq!(report.survey_signals.total_files as usize, FILES);
        took
    });
    println!("luminos base scan: {:>8.1} ms (median of {RUNS})", ms(scan));

    let find_wc = median(|| {
        time_shell(&format!(
            "find '{}' -type f -print0 | xargs -0 wc -l > /dev/null",
            tree.display()
        ))
    });
    println!("find | xargs wc -l: {:>8.1} ms", ms(find_wc));
    println!(
        "ratio scan / find+wc: {:.3}  (target <= 0.5)",
        ms(scan) / ms(find_wc)
    );

    let tokei = on_path("tokei")
        .then(|| median(|| time_shell(&format!("tokei '{}' > /dev/null", tree.display()))));
    print_against_tokei("scan", scan, tokei);
}

/// The tokei baseline and `ours / tokei` (target <= 1.0), or why it was
/// skipped (`tokei` is None when tokei is not on PATH).
pub(crate) fn print_against_tokei(label: &str, ours: Duration, tokei: Option<Duration>) {
    let Some(tokei) = tokei else {
        println!("tokei not on PATH: skipped (cargo install tokei to compare)");
        return;
    };
    println!("tokei: {:>8.1} ms", ms(tokei));
    println!(
        "ratio {label} / tokei: {:.3}  (target <= 1.0)",
        ms(ours) / ms(tokei)
    );
}

/// Where the benchmark's tree is: `LUMINOS_BENCH_TREE`, or `tree` in the
/// temporary directory `tmp`.
pub(crate) fn bench_tree(tmp: &Path) -> std::path::PathBuf {
    match std::env::var_os("LUMINOS_BENCH_TREE") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => tmp.join("tree"),
    }
}

/// Warm up once, then the median of [`RUNS`] timings.
pub(crate) fn median(mut run: impl FnMut() -> Duration) -> Duration {
    run();
    let mut times: Vec<Duration> = (0..RUNS).map(|_| run()).collect();
    times.sort();
    times[RUNS / 2]
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub(crate) fn time_shell(script: &str) -> Duration {
    let started = Instant::now();
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("sh runs");
    let took = started.elapsed();
    assert!(status.success(), "baseline failed: {script}");
    took
}

pub(crate) fn on_path(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Write `count` files under `root` in nested directories; returns the bytes
/// written. Deterministic for a given count.
pub(crate) fn generate_tree(root: &Path, count: usize) -> u64 {
    let mut rng = fastrand::Rng::with_seed(0x5ca9);
    let mut written = 0u64;
    for i in 0..count {
        // 20 top-level directories, 10 below each, and every third file one
        // level deeper still: about 100 files per leaf directory.
        let mut dir = root
            .join(format!("pkg{:02}", i % 20))
            .join(format!("mod{}", (i / 20) % 10));
        if i % 3 == 0 {
            dir = dir.join(format!("sub{}", (i / 200) % 4));
        }
        std::fs::create_dir_all(&dir).unwrap();
        let (name, content) = file_content(i, &mut rng);
        written += content.len() as u64;
        std::fs::write(dir.join(name), content).unwrap();
    }
    written
}

fn file_content(i: usize, rng: &mut fastrand::Rng) -> (String, Vec<u8>) {
    let lines = rng.usize(5..300);
    let source = |comment: &str, line: &str| -> Vec<u8> {
        let mut text = format!("{comment} generated file {i}\n");
        for n in 0..lines {
            text.push_str(&line.replace("{n}", &n.to_string()));
            text.push('\n');
        }
        text.into_bytes()
    };
    match i % 10 {
        0 | 1 => (
            format!("f{i}.rs"),
            source("//", "    let value_{n} = compute({n}) + 1;"),
        ),
        2 | 3 => (
            format!("f{i}.py"),
            source("#", "    value_{n} = compute({n}) + 1"),
        ),
        4 => (
            format!("f{i}.js"),
            source("//", "  const v{n} = compute({n});"),
        ),
        5 => (
            format!("f{i}.md"),
            source("#", "Some prose about item {n}."),
        ),
        6 => (
            format!("f{i}.json"),
            format!("{{\"id\": {i}, \"n\": {lines}}}\n").into_bytes(),
        ),
        7 => (format!("f{i}.csv"), source("id,value", "{n},{n}")),
        8 => (format!("NOTES{i}"), source("#", "plain text line {n}")),
        _ => {
            let mut blob = vec![0u8; rng.usize(64..4096)];
            rng.fill(&mut blob);
            (format!("blob{i}"), blob)
        }
    }
}
