//! The engine that runs model calls: one agent loop ([`agent`]), the
//! run-wide [`session`] every call goes through (client, redactor, token
//! tracker), the shared [`pool`] of turns loops borrow from, the
//! [`window`] no request may outgrow, the [`purse`] no request may
//! overdraw, and the [`batch`] transport that
//! sends a `--batch` run's requests in rounds through the Message Batches
//! API; and the [`ceiling`] a conversation with money of its own (`ask`,
//! `--refine`) checks before each request.
//!
//! The engine knows how to run a conversation with tools; it does not know
//! what any pass asks, and imports none. Passes ([`crate::ai::passes`])
//! build prompts on top of it, and run the directory loops `-j` at a time
//! ([`crate::ai::passes::scheduler`]); the client below it
//! ([`crate::ai::api`]) knows no pass at all.

pub(crate) mod agent;
pub mod batch;
pub(crate) mod ceiling;
pub(crate) mod context;
pub(crate) mod pool;
pub(crate) mod purse;
pub(crate) mod session;
pub(crate) mod transcript;
pub(crate) mod window;
