//! HTML report benchmark (ignored in the normal suite):
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture report::
//! ```
//!
//! The scan benchmark's tree (20,000 files in 1,021 directories) is
//! investigated by the release binary against the mock, with the budget
//! benchmark's realistic agents and no latency. Then, from the cache (no
//! request), the report is written as HTML and as JSON (the baseline),
//! alternately, and headless Chromium draws the page and, as its baseline,
//! a page of one line, alternately too. Printed: the page's size, the time
//! to write it against the JSON's, Chromium's time for the page against
//! the one-line page, and where the screenshot is.
//!
//! Without Chromium (`apt-get install chromium`, or `LUMINOS_CHROMIUM` set
//! to its path) the benchmark says so and stops: CI has none. The
//! screenshot goes to `LUMINOS_BENCH_SCREENSHOT`, or to
//! `luminos-report-1021.png` in the system's temporary directory, and the
//! page beside it (`.html`), to open in a browser. Set
//! `LUMINOS_BENCH_TREE=DIR` to keep the tree between runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::budget::{generated_tree, luminos, realistic_server};
use crate::scan::on_path;

const RUNS: usize = 5;

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn html_report_of_1021_directories_in_chromium() {
    let Some(chromium) = chromium() else {
        println!(
            "skipped: Chromium is not installed (apt-get install chromium, or set \
             LUMINOS_CHROMIUM to its path)"
        );
        return;
    };
    let tree = generated_tree("20k", 20_000, false);
    let work = crate::support::fs::temp_dir("luminos-report-bench-");
    let cache = work.path().join("cache");
    let server = realistic_server(&tree.root, Duration::ZERO);
    let started = Instant::now();
    let out = luminos(&server, &cache)
        .args(["--json", "-o"])
        .arg(work.path().join("first.json"))
        .arg(&tree.root)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "the investigation failed");
    println!(
        "investigated {} directories in {:.1} s ({} requests to the mock)",
        tree.dirs,
        started.elapsed().as_secs_f64(),
        server.request_count()
    );
    let requests = server.request_count();

    let page = work.path().join("report.html");
    let json = work.path().join("report.json");
    let (mut html_times, mut json_times) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        html_times.push(write_report(&server, &cache, &tree.root, &page, "html"));
        json_times.push(write_report(&server, &cache, &tree.root, &json, "json"));
    }
    assert_eq!(server.request_count(), requests, "the cache answered");
    let html_bytes = std::fs::metadata(&page).unwrap().len();
    let json_bytes = std::fs::metadata(&json).unwrap().len();
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(!text.contains("<script"), "the page has no script");
    let shown = text.matches("<details").count();

    let blank = work.path().join("blank.html");
    std::fs::write(
        &blank,
        "<!DOCTYPE html><html><body><p>luminos</p></body></html>",
    )
    .unwrap();
    let screenshot = std::env::var_os("LUMINOS_BENCH_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("luminos-report-1021.png"));
    let throwaway = work.path().join("blank.png");
    let (mut page_times, mut blank_times) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        page_times.push(draw(&chromium, &page, &screenshot, work.path()));
        blank_times.push(draw(&chromium, &blank, &throwaway, work.path()));
    }
    let (html_ms, json_ms) = (median(html_times), median(json_times));
    let (page_ms, blank_ms) = (median(page_times), median(blank_times));
    println!(
        "HTML page: {:.2} MB ({} <details> for {} directories); the JSON report {:.2} MB",
        html_bytes as f64 / 1e6,
        shown,
        tree.dirs,
        json_bytes as f64 / 1e6
    );
    println!(
        "writing it (the release binary, from the cache): {html_ms:.0} ms, the JSON {json_ms:.0} ms \
         (ratio {:.2}; medians of {RUNS})",
        html_ms / json_ms
    );
    println!(
        "Chromium headless screenshot: {page_ms:.0} ms for the page, {blank_ms:.0} ms for a \
         one-line page (ratio {:.2}, {:.0} ms more; medians of {RUNS})",
        page_ms / blank_ms,
        page_ms - blank_ms
    );
    let kept = screenshot.with_extension("html");
    std::fs::copy(&page, &kept).unwrap();
    println!(
        "screenshot: {} (the page: {})",
        screenshot.display(),
        kept.display()
    );
}

/// Chromium, from `LUMINOS_CHROMIUM` or the PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("LUMINOS_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|name| on_path(name))
        .map(PathBuf::from)
}

/// Write the report of `root` in `format` to `file` from the cache; the
/// wall time in milliseconds.
fn write_report(
    server: &crate::support::mock::MockServer,
    cache: &Path,
    root: &Path,
    file: &Path,
    format: &str,
) -> f64 {
    let started = Instant::now();
    let out = luminos(server, cache)
        .args(["--format", format, "-o"])
        .arg(file)
        .arg(root)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "writing the {format} report failed");
    took.as_secs_f64() * 1e3
}

/// Draw `page` in headless Chromium into `png` (a new, empty profile each
/// time, nothing fetched); the wall time in milliseconds.
fn draw(chromium: &Path, page: &Path, png: &Path, work: &Path) -> f64 {
    let profile = tempfile::tempdir_in(work).unwrap();
    let started = Instant::now();
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "Chromium failed on {}",
        page.display()
    );
    assert!(png.is_file(), "no screenshot of {}", page.display());
    took.as_secs_f64() * 1e3
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
