//! The integration suite: one test binary, one module per area. Every test
//! here runs the real binary on real temp trees, or the real client against
//! the in-process mock Messages API in [`support`]; none touches the network,
//! a real key or `/tmp/luminos`.

// Tests may panic on what they do not expect; their helpers are `pub` for
// their own modules only.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

#[path = "../support/mod.rs"]
mod support;

/// Temp trees and caches may live in memory (see `support::fs::temp_base`).
const TEMP_IN_MEMORY: bool = true;

mod agents_md;
mod api_client;
mod api_today;
mod ask;
mod batch;
mod budget;
mod cache;
mod cli;
mod concurrency;
mod crash_resume;
mod credentials;
mod discovery;
mod estimate;
mod faults;
mod grounding;
mod hostile;
mod language;
mod learning;
mod lenient;
mod local;
mod locations;
mod mcp;
mod mock_server;
mod money;
mod money_lines;
mod old_cache;
mod pipeline;
mod privacy;
mod progress;
mod prompt_cache;
mod readme;
mod redaction;
mod refine;
mod replanning;
mod report;
mod resume;
mod sandbox;
mod scan;
mod sections;
mod skip;
mod soak;
mod tools;
