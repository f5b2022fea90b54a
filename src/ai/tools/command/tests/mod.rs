//! Tests of the tool as a whole: its schema and registration, the shape of
//! its results, and the property that no random command line escapes.

use super::*;
use crate::ai::tools::{REGISTRY, names};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::PathBuf;

mod escapes;
mod oracles;
mod shape;
mod strategy;
