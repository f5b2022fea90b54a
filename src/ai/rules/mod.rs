//! The pure rules of an investigation: functions of their inputs, with no
//! model call, no clock and no cache write, so the run and `--estimate`
//! reach the same answers and each rule is unit-tested on its own.
//!
//! - [`discover`]: which directories there are, leaf-first;
//! - [`fingerprint`]: whether a cached summary still matches the disk;
//! - [`plan`]: turning the planner's proposal into allocations and an order;
//! - [`status`]: whether a finished investigation is complete or partial;
//! - [`tree_view`]: the trees the survey and planner see.

pub mod discover;
pub mod fingerprint;
pub mod plan;
pub mod status;
pub mod tree_view;
