//! `luminos ask` figures (ignored in the normal suite):
//!
//! ```text
//! cargo test --release --test bench -- --ignored --nocapture ask::
//! ```
//!
//! The real binary investigates this repository's own `src/` against the
//! mock Messages API (scripted agents whose directory summaries are about
//! 1,200 characters, as a real agent's), then asks three questions,
//! each answered after one file read. Reported, for each question: how
//! much of the cache its prompt carries (the bytes of the first request's
//! system prompt against every cached summary's), and the wall time of the
//! question against a `--scan-only` run over the same tree measured in the
//! same run (the scan is the part of a question that grows with the tree).
//! Asserted: the prompt stays within its bounds whatever the tree holds,
//! and the cache is the same before and after.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{MockAgent, Pass, Turn};
use support::mock::{MockServer, Reply};

/// Every cached summary's text, in bytes.
fn cached_summary_bytes(cache_root: &Path) -> usize {
    walkdir::WalkDir::new(cache_root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_type().is_file()
                && e.path().extension().is_some_and(|x| x == "json")
                && e.path()
                    .parent()
                    .and_then(|p| p.file_name())
                    .is_some_and(|n| n == "dirs" || n == "files")
        })
        .filter_map(|e| {
            let entry: Value = serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
            Some(entry["summary"].as_str().unwrap_or_default().len())
        })
        .sum()
}

fn cache_snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn ask_figures_on_our_own_src() {
    let src = std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).unwrap();
    let server = MockServer::start();
    // Directory summaries of a real agent's length.
    let agent =
        MockAgent::new(&src)
            .summary_chars(1_200)
            .pass_script(Pass::Ask, |turn: &Turn<'_>| match turn.turn {
                1 => Reply::tool_use("read_file", json!({"path": "ai/ask/mod.rs"})),
                _ => Reply::tool_use(
                    "submit_answer",
                    json!({"answer": "See ai/ask/mod.rs and ai/ask/context.rs."}),
                ),
            });
    server.respond_with(move |request| agent.reply(&request.body));
    let env = TestEnv::new().with_base_url(server.url());
    let out = env.cmd().args(["--json"]).arg(&src).output().unwrap();
    assert!(out.status.success());
    let summaries = cached_summary_bytes(env.cache());
    let before = cache_snapshot(env.cache());
    println!(
        "ask on {}: {summaries} bytes of cached summaries",
        src.display()
    );

    let best = |args: &[&str]| {
        let mut best = Duration::MAX;
        for _ in 0..3 {
            let started = Instant::now();
            let out = env
                .cmd()
                .env("LUMINOS_RETRY_BACKOFF_MS", "1")
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            best = best.min(started.elapsed());
        }
        best
    };
    let scan = best(&["--scan-only", "--json", src.to_str().unwrap()]);
    for question in [
        "How does ask choose the summaries it shows?",
        "Where is the budget of a question enforced?",
        "What does the refinement withdraw?",
    ] {
        let from = server.request_count();
        let asked = best(&["ask", src.to_str().unwrap(), question]);
        let requests = server.requests();
        let first = &requests[from];
        let prompt = first.system_text().len();
        println!(
            "  {question:?}: prompt {prompt} bytes ({:.1}% of the summaries' bytes), \
             {:.2}x the time of --scan-only ({:.0} ms vs {:.0} ms)",
            100.0 * prompt as f64 / summaries.max(1) as f64,
            asked.as_secs_f64() / scan.as_secs_f64(),
            asked.as_secs_f64() * 1e3,
            scan.as_secs_f64() * 1e3,
        );
        assert!(prompt < 72 * 1024, "{prompt}");
    }
    assert_eq!(
        cache_snapshot(env.cache()),
        before,
        "a question changed the cache"
    );
}
