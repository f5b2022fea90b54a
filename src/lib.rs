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

pub mod ai;
pub mod cache;
pub mod cli;
pub mod config;
pub mod exit_codes;
pub mod output;
pub mod progress;
pub mod redact;
pub mod report;
pub mod run;
pub mod scan;
