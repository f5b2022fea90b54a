//! Time-to-first-request benchmark (ignored in the normal suite):
//!
//! ```text
//! PATH=/path/to/tokei/bin:$PATH \
//!   cargo test --release --test bench -- --ignored --nocapture first_request::
//! ```
//!
//! On the 20,000-file tree of the scan benchmark ([`super::scan`]), measures
//! how long the real release binary takes from being spawned until the mock
//! Messages API receives its first request (the survey's): the base scan,
//! discovery, fingerprints, the cache, the survey's prompt and the client.
//! That is everything a user waits for before the model starts working, and
//! it is compared with tools that do only the counting: `tokei TREE` (when
//! tokei is on PATH) and `find TREE -type f -print0 | xargs -0 wc -l`,
//! measured in the same run, interleaved, on a warm cache. Target: at most
//! 1.0x tokei. Nothing is asserted on time.
//!
//! Every luminos run starts from an empty cache directory, so none of them
//! resumes; the mock answers the first request with a 400 and the process is
//! killed as soon as the request has arrived.
//!
//! `LUMINOS_BENCH_BASELINE_BIN` (or `LUMINOS_BENCH_BASELINE`) names another
//! build of luminos, timed the same way in the same run, interleaved.
//!
//! `LUMINOS_BENCH_TREE=DIR` generates the tree in DIR and keeps it; an
//! existing DIR is reused as it is.

use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::scan::{FILES, generate_tree, ms, on_path, time_shell};
use crate::support::TestEnv;
use crate::support::mock::{MockServer, Reply};

const RUNS: usize = 7;
/// How long one run may take to make its first request before the
/// benchmark gives up on it.
const PATIENCE: Duration = Duration::from_secs(120);

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn time_to_first_request_against_tokei_and_find_wc() {
    let env = TestEnv::new();
    let tree = match std::env::var_os("LUMINOS_BENCH_TREE") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => env.root().join("tree"),
    };
    if !tree.exists() {
        generate_tree(&tree, FILES);
    }
    println!("tree: {FILES} files at {}", tree.display());

    let server = MockServer::start();
    let (arrived, arrivals) = mpsc::channel::<Instant>();
    let arrived = std::sync::Mutex::new(arrived);
    server.respond_with(move |_| {
        let _ = arrived
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(Instant::now());
        Reply::error(400, "invalid_request_error", "the benchmark stops here")
    });
    let env = env.with_base_url(server.url());

    let tokei = on_path("tokei");
    let tokei_script = format!("tokei '{}' > /dev/null", tree.display());
    let find_wc_script = format!(
        "find '{}' -type f -print0 | xargs -0 wc -l > /dev/null",
        tree.display()
    );

    let baseline = ["LUMINOS_BENCH_BASELINE_BIN", "LUMINOS_BENCH_BASELINE"]
        .iter()
        .find_map(std::env::var_os)
        .map(std::path::PathBuf::from)
        .filter(|bin| bin.is_file());
    let mut run = 0;
    let mut first_request = |binary: Option<&std::path::Path>| {
        run += 1;
        let mut cmd = env.bare_cmd();
        if let Some(binary) = binary {
            let ours = cmd;
            cmd = std::process::Command::new(binary);
            for (key, value) in ours.get_envs() {
                match value {
                    Some(value) => cmd.env(key, value),
                    None => cmd.env_remove(key),
                };
            }
            if let Some(dir) = ours.get_current_dir() {
                cmd.current_dir(dir);
            }
        }
        cmd.env("ANTHROPIC_API_KEY", "bench-key")
            .env("LUMINOS_CACHE_DIR", env.root().join(format!("cache-{run}")))
            .arg(&tree)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let started = Instant::now();
        let child = cmd.spawn().expect("spawn luminos");
        let arrival = arrivals.recv_timeout(PATIENCE);
        stop(child);
        // The 400 may have made the client send more before it was killed.
        while arrivals.try_recv().is_ok() {}
        let arrival = arrival.expect("luminos made no API request");
        arrival.duration_since(started)
    };

    // Warm the page cache and the binary for every side, then interleave.
    first_request(None);
    if let Some(baseline) = &baseline {
        first_request(Some(baseline));
    }
    time_shell(&find_wc_script);
    if tokei {
        time_shell(&tokei_script);
    }
    let (mut ours, mut find_wc, mut tokeis) = (Vec::new(), Vec::new(), Vec::new());
    let mut before = Vec::new();
    for _ in 0..RUNS {
        ours.push(first_request(None));
        if let Some(baseline) = &baseline {
            before.push(first_request(Some(baseline)));
        }
        find_wc.push(time_shell(&find_wc_script));
        if tokei {
            tokeis.push(time_shell(&tokei_script));
        }
    }
    server.assert_no_violations();

    let ours = median(ours);
    let find_wc = median(find_wc);
    println!(
        "luminos, spawn to first request: {:>8.1} ms (median of {RUNS})",
        ms(ours)
    );
    println!("find | xargs wc -l:              {:>8.1} ms", ms(find_wc));
    println!(
        "ratio first request / find+wc:   {:.3}",
        ms(ours) / ms(find_wc)
    );
    let tokei_time = tokei.then(|| median(tokeis));
    crate::scan::print_against_tokei("first request", ours, tokei_time);
    if !before.is_empty() {
        let before = median(before);
        println!(
            "baseline, spawn to first request: {:>8.1} ms; this build / baseline {:.3}",
            ms(before),
            ms(ours) / ms(before)
        );
        if let Some(tokei) = tokei_time {
            println!(
                "ratio baseline first request / tokei: {:.3}",
                ms(before) / ms(tokei)
            );
        }
    }
}

/// Kill a run once its request has arrived (or it took too long).
fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}
