//! Grounding: every path and symbol luminos cites is checked against the
//! tree before the report shows it.
//!
//! The agents write about files; sometimes they name files or functions
//! that do not exist. luminos holds what it needs to check them: the base
//! scan's complete file list and tree-sitter outlines of the source files.
//! This is pure code over the cache and the scan: no model call, no cost,
//! and it runs on every report, resumed runs included. Nothing it computes
//! is cached.
//!
//! One job per module:
//! - `extract`: the paths and symbols a text cites;
//! - `scope`: the tree, indexed from the scan's file list;
//! - `resolve`: where a cited path is (target, citing entry, unique name);
//! - `definitions` and `outlines`: what source files define, read
//!   lazily within a fixed budget;
//! - `symbols`: whether a cited symbol is defined;
//! - `check`: the report's grounding — counts, the unresolved list,
//!   rewritten paths, verified flags;
//! - `feedback`: the same checks inside a directory loop, so the agent
//!   hears about a path that does not exist while it can still fix it;
//! - `check::cite`: one text's citations, each found or not (the answer
//!   of `luminos ask`).
//!
//! Its edges: it reads the scan and cache entries it is handed and the
//! source files of the target (read-only, bounded); it writes nothing.

pub(crate) mod check;
pub(crate) mod definitions;
pub(crate) mod extract;
pub(crate) mod feedback;
pub(crate) mod outlines;
pub(crate) mod resolve;
pub(crate) mod scope;
pub(crate) mod symbols;

pub(crate) use check::{CheckedCitation, Sources, cite, ground};
pub(crate) use feedback::LoopCheck;
pub(crate) use scope::Scope;

pub(crate) use crate::report::grounding::{CitationKind, CitedIn, Grounding, Unresolved};
