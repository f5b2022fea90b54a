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
