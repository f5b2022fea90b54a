//! The benchmarks: ignored tests that report ratios against a baseline
//! measured in the same run. Run one with
//! `cargo test --release --test bench -- --ignored --nocapture <name>`
//! (see the README's Benchmarks section).

// Tests may panic on what they do not expect; their helpers are `pub` for
// their own modules only.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

// The benchmarks use a slice of the suite's support (the tree builder, the
// mock API, the fake secrets); the rest is the suite's.
#[allow(dead_code, unused_imports)]
#[path = "../support/mod.rs"]
mod support;

/// Benchmarks build their trees on disk, where users' trees are (see
/// `support::fs::temp_base`).
const TEMP_IN_MEMORY: bool = false;

/// A command for `binary` (this build or a baseline's) that inherits none
/// of the caller's `ANTHROPIC_*` and `LUMINOS_*` settings: the benchmark
/// sets its own.
fn isolated(binary: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(binary);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("ANTHROPIC_") || key.starts_with("LUMINOS_") {
            cmd.env_remove(&key);
        }
    }
    cmd
}

/// [`isolated`], pointed at `server` with a key, its cache under `root`,
/// and batches polled every 5 ms.
fn isolated_against(
    binary: &std::path::Path,
    server: &support::mock::MockServer,
    root: &std::path::Path,
) -> std::process::Command {
    let mut cmd = isolated(binary);
    cmd.env("ANTHROPIC_API_KEY", "bench-key")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("LUMINOS_CACHE_DIR", root)
        .env("LUMINOS_BATCH_POLL_MS", "5");
    cmd
}

mod ask;
mod batch;
mod budget;
mod dead_endpoint;
mod first_request;
mod grounding;
mod jobs;
mod lean;
mod learn;
mod local;
mod money;
mod redact;
mod report;
mod scale;
mod scan;
mod terminal;
