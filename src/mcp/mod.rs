//! `luminos mcp`: luminos as a Model Context Protocol server on stdio, for
//! coding agents (Claude Code, Cursor, ...), built on the official Rust SDK
//! (`rmcp`).
//!
//! Its tools ([`tools::McpTool`], one table) are thin doors onto what the
//! binary already does:
//! - `investigate` runs or resumes an investigation through the same entry
//!   point as `luminos TARGET`, its progress lines sent as MCP progress
//!   notifications (`notify.rs`) when the client asked for them;
//! - `overview`, `directory` and `flags` read the investigation back from
//!   the cache ([`crate::ai::orchestrator::read_cached`]): no API call, no
//!   key needed, nothing written, and they say when the tree has changed
//!   since;
//! - `ask` answers one question about the tree through the library
//!   function of `luminos ask` ([`crate::ai::ask::answer`]), with the
//!   question's own budget, leaving the cache as it was.
//!
//! Each call names its target, resolved and checked by the command line's
//! own rules (`target.rs`), so an MCP client gets the CLI's one-line
//! errors. A failed call is a tool result with `isError` carrying that line
//! (`convert.rs`); only an unknown tool is a protocol error.
//!
//! stdout is the protocol: nothing else is ever written to it (the
//! library writes only the report there, and the server writes no
//! report); progress and logs go to stderr.
//!
//! One job per file: the server (`server.rs`), the stdio wire that answers
//! every line rmcp cannot (`wire.rs`), the
//! tool table and dispatch (`tools.rs`), one file per tool (`overview.rs`,
//! `directory.rs`, `flags.rs`, `investigate.rs`, `ask.rs`), what the read
//! tools share (`read.rs`), target resolution (`target.rs`), progress
//! notifications (`notify.rs`) and results (`convert.rs`).

mod ask;
mod convert;
mod directory;
mod flags;
mod investigate;
mod notify;
mod overview;
mod read;
mod server;
mod target;
mod tools;
mod wire;

pub(crate) use server::serve;
