//! The engine that runs model calls: one turn of a conversation
//! ([`agent`]) and the one driver that takes the turns under a pass's
//! policy ([`conversation`]), the run-wide [`session`] every call goes
//! through (client, redactor, token tracker), the shared [`pool`] of turns
//! loops borrow from, the [`window`] no request may outgrow, the [`purse`]
//! no request may overdraw (each conversation's requests take their share
//! of it; [`plan_money`] says whether the run plans in dollars or in
//! tokens), and the [`batch`] transport that sends a `--batch` run's
//! requests in rounds through the Message Batches API.
//!
//! The engine knows how to run a conversation with tools; it does not know
//! what any pass asks, and imports none. Passes ([`crate::ai::passes`])
//! build prompts on top of it, and run the directory loops `-j` at a time
//! ([`crate::ai::passes::scheduler`]); the client below it
//! ([`crate::ai::api`]) knows no pass at all.

pub(crate) mod agent;
pub mod batch;
pub(crate) mod context;
pub(crate) mod conversation;
pub(crate) mod notes;
pub(crate) mod plan_money;
pub(crate) mod pool;
pub(crate) mod purse;
pub(crate) mod session;
pub(crate) mod transcript;
pub(crate) mod window;
