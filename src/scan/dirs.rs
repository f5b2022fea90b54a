//! [`ScannedDirs`]: every directory the base scan's walk found in scope, each
//! with its [`Fingerprint`], handed to the investigation beside the report so
//! that it does not walk the target a second time to discover directories
//! and fingerprint them.
//!
//! In scope means what [`super::ScanFilter::allows_dir`] allows: hidden names
//! (without `-a`), `-x` names and ignore rules leave a directory and
//! everything below it out, and symlinks are not followed. The target itself
//! is always in. The investigation's own skip list (`node_modules`, ...) is
//! the investigation's business, applied by its discovery.
//!
//! A directory whose parent could be listed but not searched is in scope
//! too (the investigation always counted it), but the walk knows only its
//! name: its fingerprint is `None`, to be read from the disk by whoever needs
//! it.
//!
//! Nothing here is part of the report: the JSON keeps its keys.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::fingerprint::Fingerprint;
use super::ignore_files::{RuleFilesPresent, RuleStack};
use super::walk::{DirRecord, Kind, Listing, WalkRules};

/// One directory in the scan's scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedDir {
    /// Relative to the target; empty for the target itself.
    pub rel: PathBuf,
    /// The digest of its direct contents in scope, as the walk saw them;
    /// `None` when the walk could not examine the directory (see the module
    /// doc).
    pub fingerprint: Option<Fingerprint>,
}

/// Every directory in the scan's scope, sorted by relative path (bytes),
/// and every regular file the walk saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScannedDirs {
    dirs: Vec<ScannedDir>,
    /// Every regular file of every directory the walk listed, relative to
    /// the target, sorted: hidden ones and those ignore rules leave out of
    /// the scan included (a `.env` in `.gitignore`), since the agent's
    /// tools can still read them; not what lies in a directory the walk
    /// did not enter (an ignored or `-x` one), nor symlinks. What the
    /// redactor learns before the first tool result.
    files: Vec<PathBuf>,
}

impl ScannedDirs {
    /// The visible directories of a walk, with the unexamined ones it found.
    pub(crate) fn from_walk(dirs: HashMap<PathBuf, DirRecord>, rules: &WalkRules) -> ScannedDirs {
        let mut scanned = Vec::new();
        let mut files = Vec::new();
        for (rel, record) in &dirs {
            let listing = &record.listing;
            for entry in listing.entries.iter().chain(&listing.ignored) {
                if entry.kind == Kind::File {
                    files.push(rel.join(&entry.name));
                }
            }
        }
        files.sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        for (rel, record) in dirs {
            if !record.visible {
                continue;
            }
            for name in &record.unexamined {
                if rules.child_visible(true, name) {
                    scanned.push(ScannedDir {
                        rel: rel.join(name),
                        fingerprint: None,
                    });
                }
            }
            scanned.push(ScannedDir {
                rel,
                fingerprint: record.fingerprint,
            });
        }
        scanned.sort_unstable_by(|a, b| a.rel.as_os_str().cmp(b.rel.as_os_str()));
        ScannedDirs {
            dirs: scanned,
            files,
        }
    }

    /// The directories, sorted by relative path.
    pub fn iter(&self) -> std::slice::Iter<'_, ScannedDir> {
        self.dirs.iter()
    }

    /// Every regular file the walk saw, relative to the target, sorted
    /// (see the field's doc).
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// The listing's unexamined subdirectories that `-x` and the ignore rules
/// leave in scope. Their names were listed but nothing else about `dir`'s
/// entries could be read, so the rules come from probing `dir` for ignore
/// files by name, as [`super::ScanFilter`] does (and discovery did).
pub(crate) fn unexamined_in_scope(
    rules: &WalkRules,
    dir: &Path,
    parent_rules: &RuleStack,
    listing: &Listing,
) -> Vec<OsString> {
    if listing.unexamined_dirs.is_empty() {
        return Vec::new();
    }
    let stack = if rules.respect_ignore {
        parent_rules.enter(dir, RuleFilesPresent::probe(dir)).0
    } else {
        RuleStack::empty()
    };
    listing
        .unexamined_dirs
        .iter()
        .filter(|name| !rules.exclude.contains(*name))
        .filter(|name| stack.is_empty() || !stack.is_ignored(&dir.join(name), true))
        .cloned()
        .collect()
}
