//! The pure rules of an investigation: functions of their inputs, with no
//! model call, no clock and no cache write, so the run and `--estimate`
//! reach the same answers and each rule is unit-tested on its own.
//!
//! - [`decide`]: the one decision of a run, carried out by the orchestrator
//!   and priced by `--estimate`;
//! - [`discover`]: which directories there are, leaf-first;
//! - [`dir_stats`]: the scan's figures for each directory and subtree;
//! - [`fingerprint`]: whether a cached summary still matches the disk;
//! - [`listed`]: where a directory stands in a list, and the listed ones
//!   above it;
//! - [`levels`]: grouping summaries so every synthesis call fits;
//! - [`map`]: the condensed map the planner sees of a large tree;
//! - [`mechanical`]: the summary of a directory no loop investigates;
//! - [`plan`]: turning the planner's proposal into allocations and an order;
//! - [`room`]: how much of the model's window each prompt part that grows
//!   with the tree may take, and the smallest window a run works in;
//! - [`status`]: whether a finished investigation is complete or partial;
//! - [`tree_view`]: the trees the survey and planner see;
//! - [`units`]: folding small directories into investigation units.

pub(crate) mod decide;
pub(crate) mod dir_stats;
pub mod discover;
pub mod fingerprint;
pub(crate) mod levels;
pub(crate) mod listed;
pub(crate) mod map;
pub(crate) mod mechanical;
pub(crate) mod plan;
pub(crate) mod projection;
pub(crate) mod room;
pub(crate) mod status;
pub(crate) mod tree_view;
pub(crate) mod units;
