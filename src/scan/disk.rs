//! Disk usage: the numbers `du -b --max-depth=2 --exclude=NAME TARGET` gave the
//! original, computed from the walk.
//!
//! - Sizes are apparent sizes (`st_size`) of every entry, directories'
//!   own entries included; symlinks count their own size and are not followed.
//! - A file with several hard links counts once, where the walk meets it
//!   first (in name order).
//! - `-x` names (files and directories) are pruned, as `du --exclude` does.
//! - What the ignore rules left out of the rest of the scan still takes
//!   space, so it counts here: an ignored directory (`target/`,
//!   `node_modules`) gets its row, marked `ignored`, and its bytes count in
//!   its parents (the walk tallies them, `super::ignored`).
//! - Every directory down to two levels below the target is listed, in du's
//!   post-order (children before their parent, the target last), siblings by
//!   name. Hidden directories are left out of the list unless `-a`, but their
//!   bytes still count in their parents, as with du.
//!
//! `top_directories` is the largest five of that list; ties keep list order.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::ignored::{LISTED_DEPTH as MAX_DEPTH, LinkedFile};
use super::walk::{Entry, Kind, Walk, WalkRules, is_hidden_name};
use super::{DiskEntry, human_size};

struct Du<'a> {
    target: &'a Path,
    walk: &'a Walk,
    show_hidden: bool,
    seen_links: HashSet<(u64, u64)>,
    /// The keys of the ignored tally below each key, sorted.
    ignored_children: HashMap<&'a Path, Vec<&'a Path>>,
    /// The linked files of the ignored tally, by key.
    ignored_links: HashMap<&'a Path, Vec<&'a LinkedFile>>,
    rows: Vec<DiskEntry>,
}

/// Per-directory usage, in du's order.
pub(crate) fn disk_usage(target: &Path, walk: &Walk, rules: &WalkRules) -> Vec<DiskEntry> {
    let mut ignored_children: HashMap<&Path, Vec<&Path>> = HashMap::new();
    for key in walk.ignored.bytes.keys() {
        if let Some(parent) = key.parent() {
            ignored_children.entry(parent).or_default().push(key);
        }
    }
    for children in ignored_children.values_mut() {
        children.sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    }
    let mut ignored_links: HashMap<&Path, Vec<&LinkedFile>> = HashMap::new();
    for file in &walk.ignored.linked {
        ignored_links.entry(&file.key).or_default().push(file);
    }
    let mut du = Du {
        target,
        walk,
        show_hidden: rules.show_hidden,
        seen_links: HashSet::new(),
        ignored_children,
        ignored_links,
        rows: Vec::new(),
    };
    du.directory(PathBuf::new(), walk.root_size, 0, false);
    du.rows
}

impl Du<'_> {
    /// Total bytes under `rel` (its own entry included), adding its row when
    /// shallow enough.
    fn directory(&mut self, rel: PathBuf, own_size: u64, depth: usize, hidden: bool) -> u64 {
        let mut total = own_size;
        if let Some(record) = self.walk.dirs.get(&rel) {
            // Ignored entries are merged in by name, so rows stay in du's
            // order and a hard link counts where du would meet it first.
            let mut ignored = record.listing.ignored.iter().peekable();
            for entry in &record.listing.entries {
                while let Some(skipped) = ignored.next_if(|i| i.name < entry.name) {
                    total += self.ignored_entry(&rel, skipped, depth, hidden);
                }
                if entry.excluded {
                    continue;
                }
                if entry.kind == Kind::Dir {
                    let child_hidden = hidden || is_hidden_name(&entry.name);
                    total +=
                        self.directory(rel.join(&entry.name), entry.size, depth + 1, child_hidden);
                } else {
                    total += self.file(entry);
                }
            }
            for skipped in ignored {
                total += self.ignored_entry(&rel, skipped, depth, hidden);
            }
        }
        self.row(&rel, total, depth, hidden, false);
        total
    }

    /// The bytes of a file (once per inode, as du counts hard links).
    fn file(&mut self, entry: &Entry) -> u64 {
        if entry.nlink <= 1 || self.seen_links.insert((entry.dev, entry.ino)) {
            entry.size
        } else {
            0
        }
    }

    /// An entry of `parent` that the ignore rules left out.
    fn ignored_entry(&mut self, parent: &Path, entry: &Entry, depth: usize, hidden: bool) -> u64 {
        if entry.kind != Kind::Dir {
            return self.file(entry);
        }
        let child_hidden = hidden || is_hidden_name(&entry.name);
        self.ignored_dir(
            &parent.join(&entry.name),
            entry.size,
            depth + 1,
            child_hidden,
        )
    }

    /// The bytes of an ignored directory (`own_size` for its own entry)
    /// from the walk's tally, with its row and those of the keys below it.
    fn ignored_dir(&mut self, rel: &Path, own_size: u64, depth: usize, hidden: bool) -> u64 {
        let mut total = own_size + self.walk.ignored.bytes.get(rel).copied().unwrap_or(0);
        let links = self.ignored_links.get(rel).cloned().unwrap_or_default();
        for file in links {
            if self.seen_links.insert((file.dev, file.ino)) {
                total += file.size;
            }
        }
        let children = self.ignored_children.get(rel).cloned().unwrap_or_default();
        for child in children {
            let child_hidden = hidden || child.file_name().is_some_and(is_hidden_name);
            // A subdirectory's own entry is in its own key's bytes.
            total += self.ignored_dir(child, 0, depth + 1, child_hidden);
        }
        self.row(rel, total, depth, hidden, true);
        total
    }

    fn row(&mut self, rel: &Path, total: u64, depth: usize, hidden: bool, ignored: bool) {
        if depth <= MAX_DEPTH && (self.show_hidden || !hidden) {
            self.rows.push(DiskEntry {
                path: super::join_rel(self.target, rel)
                    .to_string_lossy()
                    .into_owned(),
                size_bytes: total,
                size_human: human_size(total),
                ignored,
            });
        }
    }
}

/// The `n` largest directories; equal sizes keep their order.
pub(crate) fn top_directories(usage: &[DiskEntry], n: usize) -> Vec<DiskEntry> {
    let mut sorted = usage.to_vec();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.size_bytes));
    sorted.truncate(n);
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(sizes: &[u64]) -> Vec<DiskEntry> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| DiskEntry {
                path: format!("/dir{i}"),
                size_bytes: s,
                size_human: human_size(s),
                ignored: false,
            })
            .collect()
    }

    #[test]
    fn top_directories_are_the_largest_in_order() {
        let top = top_directories(&entries(&[100, 500, 200, 800, 300, 50]), 3);
        let sizes: Vec<u64> = top.iter().map(|e| e.size_bytes).collect();
        assert_eq!(sizes, [800, 500, 300]);
        assert_eq!(top_directories(&entries(&[100, 200]), 5).len(), 2);
        assert!(top_directories(&[], 5).is_empty());
    }

    #[test]
    fn ties_keep_their_order() {
        let top = top_directories(&entries(&[7, 9, 7, 9]), 4);
        let paths: Vec<&str> = top.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["/dir1", "/dir3", "/dir0", "/dir2"]);
    }
}
