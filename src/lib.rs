//! luminos: investigate a directory and say what it is and what deserves your
//! attention.
//!
//! The crate is a library plus a thin binary (`src/main.rs`). The work happens in
//! two halves:
//!
//! - [`scan`]: a fast, native base scan of the tree (structure, file classes,
//!   line counts, recent files, disk usage);
//! - [`ai`]: a multi-pass agent investigation over the Anthropic Messages API,
//!   cached under [`cache`] so runs resume.
//!
//! [`run`] wires them together for the binary; [`report`] renders the result.
//!
//! # The original
//!
//! luminos began as a port of the public Python tool archeious/luminos.
//! Throughout this crate, "the original" means that tool, and only that
//! tool. Where luminos keeps its behaviour on purpose (report labels, JSON
//! and cache field names, tool names and schemas, thresholds, orders), a
//! comment says "as the original" or "the original's", so a reader knows the
//! detail is an interface and not a free choice. Where luminos differs on
//! purpose, the comment says so and why; the README lists every such
//! difference.

// Unit tests may panic on what they do not expect; the crate itself may not.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
// The public surface is only what the binary and the integration tests use,
// so the docs are read with `--document-private-items`, where these links
// resolve.
#![allow(rustdoc::private_intra_doc_links)]

pub mod ai;
pub mod cache;
pub mod cli;
pub(crate) mod config;
pub mod exit_codes;
pub(crate) mod grounding;
pub(crate) mod interrupt;
pub(crate) mod lenient;
pub(crate) mod mcp;
pub mod money;
pub mod outline;
pub mod output;
pub(crate) mod paths;
pub mod progress;
pub mod redact;
pub mod report;
pub mod run;
pub mod scan;
pub mod text;
pub mod usage;

#[cfg(test)]
mod testing;
