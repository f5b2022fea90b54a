//! What the directories ignore rules left out hold: how many files (for the
//! report's ignore line) and how many bytes (for disk usage, which is the
//! disk's and counts them, as `du -b` does).
//!
//! The walk never records an ignored directory; it hands each one here as a
//! [`CountTask`], and every subdirectory found becomes another task, so the
//! work spreads over the walk's threads. Nothing is classified or read: a
//! listing and an `lstat` per entry.
//!
//! Bytes are kept per *key*: the directory's path relative to the target,
//! cut to the depth disk usage lists (two levels, or the ignored directory
//! itself when it lies deeper). That is all disk usage needs to give
//! `target/` and `target/debug` their rows without keeping a record of every
//! directory under `node_modules`. Files with several hard links are kept
//! apart with their inode, so disk usage counts each once, as du does.
//! `-x` names are left out, as `du --exclude` leaves them out.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::walk::{LinkTarget, WalkRules, link_target};

/// Directory levels below the target that disk usage lists
/// (`du --max-depth=2`).
pub(crate) const LISTED_DEPTH: usize = 2;

/// One ignored directory to look through.
#[derive(Debug, Clone)]
pub(crate) struct CountTask {
    /// Absolute.
    pub path: PathBuf,
    /// Relative to the target.
    pub rel: PathBuf,
    /// Depth of the ignored directory the walk met (the top of this
    /// ignored subtree), relative to the target.
    pub top_depth: usize,
    /// Whether its files count in the ignore line: visible ones only, as
    /// classification would have seen them.
    pub count_files: bool,
}

impl CountTask {
    /// The task for an ignored directory the walk met at `rel`.
    pub(crate) fn top(path: PathBuf, rel: PathBuf, count_files: bool) -> CountTask {
        let top_depth = rel.components().count();
        CountTask {
            path,
            rel,
            top_depth,
            count_files,
        }
    }

    /// Where this directory's bytes are kept.
    fn key(&self) -> PathBuf {
        key_of(&self.rel, self.top_depth)
    }
}

/// `rel` cut to `max(LISTED_DEPTH, top_depth)` components.
fn key_of(rel: &Path, top_depth: usize) -> PathBuf {
    rel.components().take(LISTED_DEPTH.max(top_depth)).collect()
}

/// A file with several hard links, under an ignored directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkedFile {
    pub key: PathBuf,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
}

/// What the ignored directories hold, merged over the walk's threads.
#[derive(Debug, Default)]
pub(crate) struct IgnoredTally {
    /// Visible files under ignored directories (the ignore line's count).
    pub files: u64,
    /// Bytes by key (see the module doc): files with one link, and the
    /// subdirectories' own entries. The top ignored directory's own entry
    /// is the walk's (it listed it).
    pub bytes: HashMap<PathBuf, u64>,
    /// Files with several hard links.
    pub linked: Vec<LinkedFile>,
}

impl IgnoredTally {
    /// Add another thread's tally.
    pub(crate) fn merge(&mut self, other: IgnoredTally) {
        self.files += other.files;
        for (key, bytes) in other.bytes {
            *self.bytes.entry(key).or_default() += bytes;
        }
        self.linked.extend(other.linked);
    }

    fn add(&mut self, key: &Path, bytes: u64) {
        if let Some(total) = self.bytes.get_mut(key) {
            *total += bytes;
        } else {
            self.bytes.insert(key.to_path_buf(), bytes);
        }
    }
}

/// List `task`'s directory: count its files and bytes into `tally`, and
/// return its subdirectories as further tasks. An unreadable directory or
/// entry adds nothing (du would say it could not read it, and count the
/// rest).
pub(crate) fn count_dir(
    rules: &WalkRules,
    task: &CountTask,
    tally: &mut IgnoredTally,
) -> Vec<CountTask> {
    let Ok(reader) = fs::read_dir(&task.path) else {
        return Vec::new();
    };
    let key = task.key();
    let mut tasks = Vec::new();
    for dirent in reader.filter_map(Result::ok) {
        let name = dirent.file_name();
        let excluded = rules.exclude.contains(&name);
        let Ok(meta) = dirent.metadata() else {
            continue;
        };
        let file_type = meta.file_type();
        let visible = task.count_files && rules.child_visible(true, &name);
        if file_type.is_dir() {
            if excluded {
                continue;
            }
            let rel = task.rel.join(&name);
            tally.add(&key_of(&rel, task.top_depth), meta.len());
            tasks.push(CountTask {
                path: dirent.path(),
                rel,
                top_depth: task.top_depth,
                count_files: visible,
            });
            continue;
        }
        if visible
            && (file_type.is_file()
                || (file_type.is_symlink()
                    && matches!(
                        link_target(&dirent.path(), rules.root()),
                        LinkTarget::File { .. }
                    )))
        {
            // Classification keeps files with `-x` names; disk usage does not.
            tally.files += 1;
        }
        if excluded {
            continue;
        }
        if meta.nlink() > 1 {
            tally.linked.push(LinkedFile {
                key: key.clone(),
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.len(),
            });
        } else {
            tally.add(&key, meta.len());
        }
    }
    tasks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stop_at_the_listed_depth_or_the_ignored_top() {
        let key = |rel: &str, top: usize| key_of(Path::new(rel), top);
        assert_eq!(key("target", 1), Path::new("target"));
        assert_eq!(key("target/debug", 1), Path::new("target/debug"));
        assert_eq!(key("target/debug/deps/x", 1), Path::new("target/debug"));
        assert_eq!(
            key("a/b/node_modules/x/y", 3),
            Path::new("a/b/node_modules")
        );
    }
}
