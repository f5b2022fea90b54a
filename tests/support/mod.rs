//! Shared test support: a temp-tree builder ([`TestEnv`]) that runs the real
//! binary in isolation, and the scripted mock Messages API server ([`mock`]).
//!
//! Tests never touch the network, a real key or `/tmp/luminos`: every command
//! built here gets its own `LUMINOS_CACHE_DIR` and an `ANTHROPIC_BASE_URL`
//! pointing at a mock server on 127.0.0.1 (or at a closed port).

pub mod agent;
pub mod entries;
pub mod fake;
pub mod fs;
pub mod gate;
pub mod mock;
pub mod output;
pub mod pty;
pub mod secrets;
pub mod snapshot;
pub mod tree;
pub mod watch;

pub use tree::TestEnv;
