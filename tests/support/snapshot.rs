//! What a command must leave alone, as data: every entry under a root with
//! its mode, size and modification time, so "nothing changed" is one
//! comparison. Shared by the integration suite (`all/sandbox.rs`) and the
//! command tool's unit tests (`src/ai/tools/command/tests`), which include
//! this file.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// An entry's mode, size and modification time (seconds, nanoseconds).
pub type Stamp = (u32, u64, i64, i64);

/// Every entry under `root`, links not followed, with its [`Stamp`].
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Stamp> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|entry| {
            let entry = entry.unwrap();
            let m = entry.path().symlink_metadata().unwrap();
            (
                entry.path().to_path_buf(),
                (m.mode(), m.len(), m.mtime(), m.mtime_nsec()),
            )
        })
        .collect()
}
