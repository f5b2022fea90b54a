//! `--clear-cache`: remove the cache root, and refuse anything that could
//! remove more than that.
//!
//! The root comes from `LUMINOS_CACHE_DIR`, so a typo could point it at a home
//! directory. Removal therefore happens only when every name in the root is
//! one luminos writes there, the root is a real directory of ours, and no run
//! holds a lock in it.

use std::path::{Path, PathBuf};

use super::fsio::{io_err, verify_private_dir};
use super::root::{choose_root, is_cache_name};
use super::{CacheError, lock};

/// What `--clear-cache` did, with the cache root it looked at (the named
/// directory, or its `luminos` subdirectory: see `root.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleared {
    Removed(PathBuf),
    /// There was no cache there.
    Absent(PathBuf),
}

/// Remove the cache root for the path the user named, and nothing else.
///
/// Refused: a symlink (the cache never uses one, so whatever it points at is
/// not ours, and even removing the link would undo someone's setup), a
/// directory of another user, a directory holding anything luminos does not
/// create (so `LUMINOS_CACHE_DIR=$HOME --clear-cache` deletes at most
/// `$HOME/luminos`, the cache luminos kept there), and a cache in use by a
/// running investigation.
pub fn clear_cache(named: &Path) -> Result<Cleared, CacheError> {
    let root = choose_root(named)?;
    match std::fs::symlink_metadata(&root) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Cleared::Absent(root));
        }
        Err(err) => return Err(io_err("inspecting", &root)(err)),
        Ok(_) => {}
    }
    verify_private_dir(&root)?;
    check_only_cache_contents(&root)?;
    check_no_run_in_progress(&root)?;
    // remove_dir_all never follows symlinks inside the tree.
    std::fs::remove_dir_all(&root).map_err(io_err("removing", &root))?;
    Ok(Cleared::Removed(root))
}

/// Refuse unless every name in `root` is one luminos writes there.
fn check_only_cache_contents(root: &Path) -> Result<(), CacheError> {
    let entries = std::fs::read_dir(root).map_err(io_err("listing", root))?;
    for entry in entries {
        let entry = entry.map_err(io_err("listing", root))?;
        let name = entry.file_name();
        let known = name.to_str().is_some_and(is_cache_name);
        if !known {
            return Err(CacheError::NotACache {
                path: root.to_path_buf(),
                entry: name.to_string_lossy().into_owned(),
            });
        }
    }
    Ok(())
}

/// Refuse while any run lock in the root is held, naming the cache, the
/// run and what it investigates (no target was given to compare with).
fn check_no_run_in_progress(root: &Path) -> Result<(), CacheError> {
    let Ok(locks) = std::fs::read_dir(root.join(lock::LOCK_DIR)) else {
        return Ok(());
    };
    for entry in locks.flatten() {
        if let Some(holder) = lock::holder_of(&entry.path()) {
            return Err(CacheError::CacheInUse {
                root: root.to_path_buf(),
                pid: holder.pid,
                target: holder.target,
            });
        }
    }
    Ok(())
}
