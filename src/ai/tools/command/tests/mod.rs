//! Tests of the tool as a whole: its schema and registration, the shape of
//! its results, and the property that no random command line escapes.

use super::*;
use crate::ai::tools::{REGISTRY, Toolbox, names};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

mod escapes;
mod oracles;
mod shape;
mod strategy;

// The integration suite's tree snapshot, so both suites mean the same by
// "the command changed nothing".
#[allow(unreachable_pub)]
#[path = "../../../../../tests/support/snapshot.rs"]
mod snapshot;
use snapshot::snapshot;
