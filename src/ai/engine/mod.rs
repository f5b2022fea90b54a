//! The engine that runs model calls: one agent loop ([`agent`]), the
//! run-wide [`session`] every call goes through (client, redactor, token
//! tracker), the shared [`pool`] of turns loops borrow from, and the
//! [`scheduler`] that runs directory loops `-j` at a time, children first,
//! the [`window`] no request may outgrow, and the [`batch`] transport that
//! sends a `--batch` run's requests in rounds through the Message Batches
//! API.
//!
//! The engine knows how to run a conversation with tools; it does not know
//! what any pass asks, and imports none: the scheduler runs the work a pass
//! hands it ([`scheduler::DirWork`]). Passes ([`crate::ai::passes`]) build
//! prompts on top of it; the client below it ([`crate::ai::api`]) knows no
//! pass at all.

pub(crate) mod agent;
pub mod batch;
pub(crate) mod pool;
pub(crate) mod scheduler;
pub(crate) mod session;
pub(crate) mod transcript;
pub(crate) mod window;
