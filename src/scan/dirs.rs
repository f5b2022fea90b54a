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
use std::sync::Arc;

use super::fingerprint::Fingerprint;
use super::ignore_files::{RuleFilesPresent, RuleStack};
use super::walk::{DirRecord, Kind, Listing, WalkRules, in_skipped_subtree, skipped_roots};

/// One directory in the scan's scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedDir {
    /// Relative to the target; empty for the target itself.
    pub rel: PathBuf,
    /// The digest of its direct contents in scope, as the walk saw them;
    /// `None` when the walk could not examine the directory (see the module
    /// doc).
    pub fingerprint: Option<Fingerprint>,
    /// It, or a directory above it, is one no model is sent into (the skip
    /// list, a `CACHEDIR.TAG`: [`super::skip`]).
    pub skipped: bool,
}

/// Every directory in the scan's scope, sorted by relative path (bytes),
/// and every regular file the walk saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedDirs {
    dirs: Vec<ScannedDir>,
    /// Every regular file of every directory the walk listed, relative to
    /// the target, sorted: hidden ones and those ignore rules leave out of
    /// the scan included (a `.env` in `.gitignore`), since the agent's
    /// tools can still read them; not what lies in a directory the walk
    /// did not enter (an ignored or `-x` one), nor symlinks. What the
    /// redactor learns before the first tool result, on a thread of its
    /// own (so shared, not copied), in no particular order.
    files: Arc<FilesByDir>,
}

/// Regular files by directory: each directory (relative to the target)
/// with the names of its files.
pub(crate) type FilesByDir = Vec<(PathBuf, Vec<OsString>)>;

/// The paths of `files`, relative to the target.
pub(crate) fn file_paths(files: &FilesByDir) -> Vec<PathBuf> {
    files
        .iter()
        .flat_map(|(dir, names)| names.iter().map(move |name| dir.join(name)))
        .collect()
}

impl ScannedDirs {
    /// The visible directories of a walk, with the unexamined ones it found.
    pub(crate) fn from_walk(dirs: HashMap<PathBuf, DirRecord>, rules: &WalkRules) -> ScannedDirs {
        let roots = skipped_roots(&dirs);
        let mut scanned = Vec::new();
        let mut files = Vec::with_capacity(dirs.len());
        for (rel, record) in dirs {
            // The names are moved, not copied: the walk is done with them,
            // and the paths are joined later, off the first request's path.
            let DirRecord {
                listing,
                visible,
                fingerprint,
                unexamined,
                skipped: _,
            } = record;
            let names: Vec<OsString> = (listing.entries.into_iter())
                .chain(listing.ignored)
                .filter(|entry| entry.kind == Kind::File)
                .map(|entry| entry.name)
                .collect();
            if !names.is_empty() {
                files.push((rel.clone(), names));
            }
            if !visible {
                continue;
            }
            let skipped = in_skipped_subtree(&roots, &rel);
            for name in &unexamined {
                if rules.child_visible(true, name) {
                    let child = rel.join(name);
                    let by_name =
                        super::skip::skip_reason(&child, name, None, &rules.include).is_some();
                    scanned.push(ScannedDir {
                        rel: child,
                        fingerprint: None,
                        skipped: skipped || by_name,
                    });
                }
            }
            scanned.push(ScannedDir {
                rel,
                fingerprint,
                skipped,
            });
        }
        scanned.sort_unstable_by(|a, b| a.rel.as_os_str().cmp(b.rel.as_os_str()));
        ScannedDirs {
            dirs: scanned,
            files: Arc::new(files),
        }
    }

    /// The directories, sorted by relative path.
    pub fn iter(&self) -> std::slice::Iter<'_, ScannedDir> {
        self.dirs.iter()
    }

    /// Every regular file the walk saw, by directory (see the field's
    /// doc): shared, for a thread of its own.
    pub(crate) fn files_by_dir(&self) -> &Arc<FilesByDir> {
        &self.files
    }

    /// Every regular file the walk saw, relative to the target.
    pub fn files(&self) -> Vec<PathBuf> {
        file_paths(&self.files)
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
