//! Scale benchmark (ignored in the normal suite):
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture scale::
//! ```
//!
//! Generates a 200,000-file tree (source, text, config, data, binary and
//! extensionless files of realistic sizes, in a few thousand nested
//! directories), then measures on a warm cache:
//!
//! - the base scan's wall time, as a ratio to `find TREE -type f -print0 |
//!   xargs -0 wc -l` measured in the same run (medians, runs interleaved so
//!   both see the same machine load). Target: at most 1.0;
//! - the scan's peak RSS. Target: under 300 MB;
//! - the same with the JSON and terminal reports rendered, with their sizes;
//! - the real binary end to end with `--estimate --json -o FILE`: the scan,
//!   discovery and the rendering of every prompt a run would send (no API
//!   call), for its wall time and peak RSS.
//!
//! Each scan runs in a child process (this test binary re-executed with
//! `LUMINOS_BENCH_CHILD` set, running only [`scale_child`]), so the peak RSS
//! read from `wait4` is the scan's own. Nothing is asserted on time.
//!
//! Set `LUMINOS_BENCH_TREE=DIR` to generate the tree in DIR and keep it; an
//! existing, non-empty DIR is reused as it is.

use std::io::Read;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::scan::{ms, time_shell};
use luminos::progress::Progress;
use luminos::report::{Format, RenderOptions, Report, render};
use luminos::scan::ScanOptions;

const FILES: usize = 200_000;
const RUNS: usize = 5;
/// Files per leaf directory, on average.
const FILES_PER_DIR: usize = 16;

const CHILD_ENV: &str = "LUMINOS_BENCH_CHILD";
const CHILD_MODE_ENV: &str = "LUMINOS_BENCH_CHILD_MODE";

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn scale_scan_against_find_wc_with_peak_rss() {
    let tmp = crate::support::fs::temp_dir("luminos-scale-");
    let tree = match std::env::var_os("LUMINOS_BENCH_TREE") {
        Some(dir) => PathBuf::from(dir),
        None => tmp.path().join("tree"),
    };
    let reused = tree.is_dir() && std::fs::read_dir(&tree).unwrap().next().is_some();
    if reused {
        println!("reusing the tree at {}", tree.display());
    } else {
        let started = Instant::now();
        let stats = generate_tree(&tree, FILES);
        println!(
            "generated {FILES} files in {} directories, {:.0} MB, in {:.1} s at {}",
            stats.dirs,
            stats.bytes as f64 / 1e6,
            started.elapsed().as_secs_f64(),
            tree.display()
        );
    }

    // Warm the cache for both sides, then interleave the timed runs.
    let find_wc = format!(
        "find '{}' -type f -print0 | xargs -0 wc -l > /dev/null",
        tree.display()
    );
    let first = run_child(&tree, "scan");
    assert_eq!(
        first.files,
        FILES,
        "the tree at {} is not the benchmark's tree",
        tree.display()
    );
    time_shell(&find_wc);
    let mut scans = Vec::new();
    let mut baselines = Vec::new();
    for _ in 0..RUNS {
        scans.push(run_child(&tree, "scan"));
        baselines.push(time_shell(&find_wc));
    }
    let wall = median(scans.iter().map(|s| s.wall).collect());
    let inner = median(scans.iter().map(|s| s.scan).collect());
    let rss = scans.iter().map(|s| s.peak_rss_kb).max().unwrap();
    let baseline = median(baselines);
    println!(
        "luminos base scan (process): {:>8.1} ms (median of {RUNS})",
        ms(wall)
    );
    println!("  of which scan::scan:       {:>8.1} ms", ms(inner));
    println!("find | xargs wc -l:          {:>8.1} ms", ms(baseline));
    println!(
        "ratio scan / find+wc:        {:.3}  (target <= 1.0)",
        ms(wall) / ms(baseline)
    );
    println!(
        "scan peak RSS:               {:>8.1} MB  (target < 300 MB)",
        rss as f64 / 1024.0
    );

    let report = run_child(&tree, "report");
    println!(
        "with reports rendered: JSON {:.1} MB in {:.0} ms, terminal {:.1} KB in {:.0} ms, peak RSS {:.1} MB",
        report.json_bytes as f64 / 1e6,
        ms(report.json),
        report.text_bytes as f64 / 1e3,
        ms(report.text),
        report.peak_rss_kb as f64 / 1024.0
    );
    report_binary(&tree);
}

/// What one child run measured.
#[derive(Debug, Default)]
struct ChildRun {
    files: usize,
    wall: Duration,
    scan: Duration,
    json: Duration,
    json_bytes: usize,
    text: Duration,
    text_bytes: usize,
    peak_rss_kb: i64,
}

/// Run [`scale_child`] in a fresh process and read its peak RSS.
fn run_child(tree: &Path, mode: &str) -> ChildRun {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "scale::scale_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD_ENV, tree)
    .env(CHILD_MODE_ENV, mode);
    let measured = measure(cmd);
    assert!(measured.ok, "child failed:\n{}", measured.stdout);
    let mut run = ChildRun {
        wall: measured.wall,
        peak_rss_kb: measured.peak_rss_kb,
        ..ChildRun::default()
    };
    for field in measured.stdout.split_whitespace() {
        let Some((key, value)) = field.split_once('=') else {
            continue;
        };
        let micros = || Duration::from_micros(value.parse().unwrap());
        match key {
            "files" => run.files = value.parse().unwrap(),
            "scan_us" => run.scan = micros(),
            "json_us" => run.json = micros(),
            "json_bytes" => run.json_bytes = value.parse().unwrap(),
            "text_us" => run.text = micros(),
            "text_bytes" => run.text_bytes = value.parse().unwrap(),
            _ => {}
        }
    }
    run
}

/// What [`measure`] saw.
pub struct Measured {
    pub ok: bool,
    pub stdout: String,
    pub wall: Duration,
    pub peak_rss_kb: i64,
}

/// Run `cmd` to the end, reaping it with `wait4` for its peak RSS.
#[allow(
    clippy::zombie_processes,
    reason = "reaped with wait4, which also gives its resource usage"
)]
pub fn measure(mut cmd: Command) -> Measured {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let (status, usage) = wait4(child.id());
    Measured {
        ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stdout,
        wall: started.elapsed(),
        peak_rss_kb: usage.ru_maxrss,
    }
}

/// The real binary end to end, `--estimate --json -o FILE`: the scan, then
/// discovery and every prompt a run would send, measured but not sent.
/// Informational: nothing is asserted.
fn report_binary(tree: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_luminos"));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("ANTHROPIC_") || key.starts_with("LUMINOS_") {
            cmd.env_remove(&key);
        }
    }
    cmd.env("LUMINOS_CACHE_DIR", tmp.path().join("cache"))
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .args(["--estimate", "--json", "-o"])
        .arg(&report)
        .arg(tree)
        .stderr(Stdio::null());
    let measured = measure(cmd);
    if !measured.ok {
        println!("luminos --estimate --json: failed; skipped");
        return;
    }
    let bytes = std::fs::metadata(&report).map_or(0, |m| m.len());
    println!(
        "luminos --estimate --json -o FILE: {:.1} s, peak RSS {:.1} MB, estimate {:.1} KB",
        measured.wall.as_secs_f64(),
        measured.peak_rss_kb as f64 / 1024.0,
        bytes as f64 / 1e3
    );
}

/// Reap `pid` and return its wait status and resource usage.
fn wait4(pid: u32) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own unreaped child; the pointers are valid.
        let got = unsafe { libc::wait4(pid as i32, &mut status, 0, &mut usage) };
        if got == pid as i32 {
            return (status, usage);
        }
        let err = std::io::Error::last_os_error();
        assert_eq!(err.kind(), std::io::ErrorKind::Interrupted, "wait4: {err}");
    }
}

/// The child side: scan the tree (and render the reports in `report` mode),
/// print what it measured, exit. Does nothing unless started by the parent.
#[test]
#[ignore = "run by scale_scan_against_find_wc_with_peak_rss in a child process"]
fn scale_child() {
    let Some(tree) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let mode = std::env::var(CHILD_MODE_ENV).unwrap_or_default();
    let tree = PathBuf::from(tree);
    let started = Instant::now();
    let scan = luminos::scan::scan(&tree, &ScanOptions::default(), &Progress::silent());
    let scan_us = started.elapsed().as_micros();
    print!(
        "files={} scan_us={scan_us} ",
        scan.survey_signals.total_files
    );
    if mode == "report" {
        let report = Report {
            scan,
            ..Report::default()
        };
        let started = Instant::now();
        let json = serde_json::to_string_pretty(&report).unwrap();
        let json_us = started.elapsed().as_micros();
        let started = Instant::now();
        let mut text = Vec::new();
        let options = RenderOptions {
            target: tree.to_string_lossy().into_owned(),
            depth: luminos::scan::ScanOptions::default().depth,
            width: 100,
        };
        render(&report, Format::Text, &options, &mut text).unwrap();
        let text_us = started.elapsed().as_micros();
        print!(
            "json_us={json_us} json_bytes={} text_us={text_us} text_bytes={} ",
            json.len(),
            text.len()
        );
    }
    println!();
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

// ---------------------------------------------------------------------------
// The tree
// ---------------------------------------------------------------------------

pub struct TreeStats {
    pub dirs: usize,
    pub bytes: u64,
}

/// Directory names below the top-level packages.
const WORDS: [&str; 8] = ["src", "lib", "core", "util", "tests", "api", "data", "docs"];

/// The directory of leaf group `d`: a package, then one to four more levels,
/// so files sit at every depth from 2 to 5 and directories fan out unevenly.
fn dir_of(root: &Path, d: usize) -> PathBuf {
    let mut dir = root.join(format!("pkg{:02}", d % 24));
    let mut rest = d / 24;
    let depth = 1 + (d * 7 / 3) % 4;
    for level in 0..depth {
        let word = WORDS[rest % WORDS.len()];
        rest /= WORDS.len();
        dir.push(if level == 0 {
            word.to_string()
        } else {
            format!("{word}{}", rest % 3)
        });
    }
    dir
}

/// Write `count` files under `root` on every core; deterministic for a given
/// count.
pub fn generate_tree(root: &Path, count: usize) -> TreeStats {
    let groups = count.div_ceil(FILES_PER_DIR);
    let dirs: Vec<PathBuf> = (0..groups).map(|d| dir_of(root, d)).collect();
    let mut unique = dirs.clone();
    unique.sort();
    unique.dedup();
    for dir in &unique {
        std::fs::create_dir_all(dir).unwrap();
    }
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    let bytes: u64 = std::thread::scope(|scope| {
        #[allow(
            clippy::needless_collect,
            reason = "joining as they are spawned would run the workers one at a time"
        )]
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let dirs = &dirs;
                scope.spawn(move || {
                    let mut written = 0u64;
                    for i in (t..count).step_by(threads) {
                        let mut rng = fastrand::Rng::with_seed(0x5ca1e ^ i as u64);
                        let (name, content) = file_content(i, &mut rng);
                        written += content.len() as u64;
                        std::fs::write(dirs[i % groups].join(name), content).unwrap();
                    }
                    written
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    TreeStats {
        // Every ancestor of a leaf too, and the root.
        dirs: count_dirs(&unique, root),
        bytes,
    }
}

fn count_dirs(leaves: &[PathBuf], root: &Path) -> usize {
    let mut all = std::collections::HashSet::new();
    for leaf in leaves {
        let mut dir = leaf.as_path();
        while dir != root && all.insert(dir.to_path_buf()) {
            dir = dir.parent().unwrap();
        }
    }
    all.len() + 1
}

/// A line count skewed toward small files, as in real code bases.
fn skewed(rng: &mut fastrand::Rng, max: usize) -> usize {
    let a = rng.usize(1..=max);
    let b = rng.usize(1..=max);
    a.min(b).min(rng.usize(1..=max))
}

fn lines_of(rng: &mut fastrand::Rng, max: usize, header: &str, line: &str) -> Vec<u8> {
    let n = skewed(rng, max);
    let mut text = String::with_capacity(n * (line.len() + 4));
    text.push_str(header);
    text.push('\n');
    for k in 0..n {
        text.push_str(&line.replace("{n}", &k.to_string()));
        text.push('\n');
    }
    text.into_bytes()
}

fn binary(rng: &mut fastrand::Rng, magic: &[u8], max: usize) -> Vec<u8> {
    let mut blob = vec![0u8; rng.usize(64..max)];
    rng.fill(&mut blob);
    blob[..magic.len()].copy_from_slice(magic);
    blob
}

/// The text files of the mix, each named `f{i}.<ext>`: the slots it takes
/// of every 20 files, its extension, and the most lines, the first line and
/// the numbered line (`{n}`) that [`lines_of`] writes.
#[rustfmt::skip]
const TEXT_FILES: &[(RangeInclusive<usize>, &str, usize, &str, &str)] = &[
    (0..=2,   "rs",   200, "// generated",       "    let value_{n} = compute({n}) + 1;"),
    (3..=5,   "py",   200, "# generated",        "    value_{n} = compute({n}) + 1"),
    (6..=7,   "ts",   200, "// generated",       "  const v{n}: number = compute({n});"),
    (8..=8,   "go",   200, "package gen",        "\tv{n} := compute({n})"),
    (9..=9,   "c",    200, "#include <stdio.h>", "  int v{n} = compute({n});"),
    (10..=10, "md",   120, "# Notes",            "Some prose about item {n}, and why it matters."),
    (12..=12, "yaml", 60,  "config:",            "  key{n}: value{n}"),
    (13..=13, "csv",  500, "id,value,label",     "{n},{n},row{n}"),
];

/// Name and content of file `i`. About half source, the rest text, config,
/// data, binaries and extensionless files; one file in 4,000 is a large log.
fn file_content(i: usize, rng: &mut fastrand::Rng) -> (String, Vec<u8>) {
    if i % 4000 == 1234 {
        return (
            format!("server{i}.log"),
            lines_of(
                rng,
                20_000,
                "boot",
                "2024-05-01T12:00:{n}Z INFO request served in {n} ms",
            ),
        );
    }
    let slot = i % 20;
    if let Some((_, ext, max, header, line)) =
        TEXT_FILES.iter().find(|(slots, ..)| slots.contains(&slot))
    {
        return (format!("f{i}.{ext}"), lines_of(rng, *max, header, line));
    }
    match slot {
        11 => (
            format!("f{i}.json"),
            lines_of(rng, 60, "{", "  \"key{n}\": {n},")
                .into_iter()
                .chain(*b"}\n")
                .collect(),
        ),
        14 => (
            format!("f{i}.png"),
            binary(rng, b"\x89PNG\r\n\x1a\n", 8 * 1024),
        ),
        15 => (format!("f{i}.o"), binary(rng, b"\x7fELF", 8 * 1024)),
        16 => (
            ["README", "LICENSE", "NOTES", "AUTHORS"][i / 20 % 4].to_string() + &i.to_string(),
            lines_of(rng, 80, "About this package", "Line {n} of plain text."),
        ),
        17 => (
            format!("run{i}"),
            lines_of(rng, 60, "#!/bin/sh", "echo step {n}"),
        ),
        18 => (format!("blob{i}"), binary(rng, b"\0\0", 4 * 1024)),
        // Slot 19: the table and the arms above take all the others.
        _ => (
            format!("Makefile{i}"),
            lines_of(rng, 40, "all: build", "\t$(CC) -c part{n}.c"),
        ),
    }
}
