//! The terminal report of a finished run on the scan benchmark's tree
//! (20,000 files in 1,021 directories), ignored in the normal suite:
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture terminal::
//! ```
//!
//! The binary investigates the tree against the mock with the budget
//! benchmark's agents and the default budget, stdout and stderr piped as a
//! person's `luminos TREE | less` would have them; then reruns it from the
//! cache, and a third time with `-o TREE/LUMINOS.md` twice. Printed and
//! asserted: at most 300 stdout lines for the finished run (6,726 before
//! the terminal report had a size), a few stderr lines per directory, the
//! rerun's report the same size and free, and no request for the second
//! `-o` run. `LUMINOS_BENCH_TREE=DIR` keeps the tree between runs.

use std::process::Output;
use std::time::Duration;

use crate::budget::{generated_tree, luminos, realistic_server};

/// The bound the terminal report keeps on this tree.
const MAX_STDOUT_LINES: usize = 300;

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn terminal_report_of_1021_directories() {
    let tree = generated_tree("20k", 20_000, false);
    let work = crate::support::fs::temp_dir("luminos-terminal-bench-");
    let cache = work.path().join("cache");
    let server = realistic_server(&tree.root, Duration::ZERO);
    let run = |extra: &[&str]| -> Output {
        let out = luminos(&server, &cache)
            .args(extra)
            .arg(&tree.root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let lines = |bytes: &[u8]| String::from_utf8_lossy(bytes).lines().count();

    let first = run(&[]);
    let (stdout, stderr) = (lines(&first.stdout), lines(&first.stderr));
    let paid = server.request_count();
    println!(
        "finished run: {stdout} stdout lines, {stderr} stderr lines for {} directories \
         ({:.2} per directory), {paid} requests",
        tree.dirs,
        stderr as f64 / tree.dirs as f64
    );
    assert!(stdout <= MAX_STDOUT_LINES, "{stdout} stdout lines");
    assert!(stderr <= 3 * tree.dirs, "{stderr} stderr lines");

    let again = run(&[]);
    assert_eq!(server.request_count(), paid, "the rerun paid again");
    println!("from the cache: {} stdout lines", lines(&again.stdout));
    assert!(lines(&again.stdout) <= MAX_STDOUT_LINES);

    let report = tree.root.join("LUMINOS.md");
    let report = report.to_string_lossy().into_owned();
    run(&["-o", &report]);
    let after_first = server.request_count();
    run(&["-o", &report]);
    run(&["-o", &report]);
    println!(
        "-o TREE/LUMINOS.md three times: {} requests for the first, {} for the second and \
         third",
        after_first - paid,
        server.request_count() - after_first
    );
    assert_eq!(server.request_count(), after_first, "-o made the rerun pay");
    std::fs::remove_file(&report).unwrap();
}
