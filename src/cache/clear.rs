//! `--clear-cache`: remove the cache root, and refuse anything that could
//! remove more than that; `--clear-cache TARGET`: remove that target's
//! investigation only. Either says what it removed, with the cost its runs
//! recorded (what the money bought is what goes).
//!
//! The root comes from `LUMINOS_CACHE_DIR`, so a typo could point it at a home
//! directory. Removal therefore happens only when every name in the root is
//! one luminos writes there, the root is a real directory of ours, and no run
//! holds a lock in it.

use std::path::{Path, PathBuf};

use super::documents::Meta;
use super::fsio::{io_err, verify_private_dir};
use super::root::{choose_root, is_cache_name};
use super::{CacheError, lock};
use crate::money::Usd;

/// What `--clear-cache` did, with the cache root it looked at (the named
/// directory, or its `luminos` subdirectory: see `root.rs`).
#[derive(Debug, Clone, PartialEq)]
pub enum Cleared {
    Removed {
        root: PathBuf,
        /// The investigations it held and what their runs recorded.
        removed: Removed,
    },
    /// There was no cache there.
    Absent(PathBuf),
}

/// Investigations removed, and what their runs recorded spending.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Removed {
    pub investigations: usize,
    /// The recorded cost of those that have a record.
    pub recorded_cost_usd: Usd,
    /// Those with no record of their cost (written by an older luminos,
    /// or never paid for).
    pub unrecorded: usize,
}

impl Removed {
    fn add(&mut self, dir: &Path) {
        self.investigations += 1;
        let spending = Meta::of(dir).and_then(|meta| meta.spending);
        match spending {
            Some(spending) => self.recorded_cost_usd += spending.cost_usd,
            None => self.unrecorded += 1,
        }
    }
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
    let mut removed = Removed::default();
    for id in investigation_ids(&root) {
        removed.add(&root.join(id));
    }
    // remove_dir_all never follows symlinks inside the tree.
    std::fs::remove_dir_all(&root).map_err(io_err("removing", &root))?;
    Ok(Cleared::Removed { root, removed })
}

/// Remove `target_canonical`'s investigation from the cache root for the
/// path the user named, and nothing else: its entry in the index and its
/// directory, with those earlier `--fresh` runs left behind for the same
/// target. Refused while a run investigates the target.
pub fn clear_investigation(named: &Path, target_canonical: &Path) -> Result<Removed, CacheError> {
    let root = choose_root(named)?;
    if !root.is_dir() {
        return Ok(Removed::default());
    }
    verify_private_dir(&root)?;
    // Held until the directories are gone, so no run starts on the target
    // meanwhile.
    let _run = if root.join(lock::LOCK_DIR).is_dir() {
        let path = root
            .join(lock::LOCK_DIR)
            .join(format!("{}.lock", super::sha256_hex(target_canonical)));
        Some(
            lock::lock_run_file(&path, target_canonical, false).map_err(|err| match err {
                CacheError::Busy { pid } => CacheError::CacheInUse {
                    root: root.clone(),
                    pid,
                    target: Some(target_canonical.to_path_buf()),
                },
                other => other,
            })?,
        )
    } else {
        None
    };
    let indexed = super::index::forget(&root, target_canonical)?;
    let target = target_canonical.to_string_lossy();
    let mut removed = Removed::default();
    for id in investigation_ids(&root) {
        let dir = root.join(&id);
        let of_target = Meta::of(&dir).is_some_and(|meta| meta.target == target);
        if indexed.as_deref() == Some(id.as_str()) || of_target {
            removed.add(&dir);
            std::fs::remove_dir_all(&dir).map_err(io_err("removing", &dir))?;
        }
    }
    Ok(removed)
}

/// The investigation directories in `root`, by id.
fn investigation_ids(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut ids: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
        .filter(|id| super::index::is_investigation_dir(root, id))
        .collect();
    ids.sort();
    ids
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
