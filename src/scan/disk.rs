//! Disk usage: the numbers `du -b --max-depth=2 --exclude=NAME TARGET` gave the
//! original, computed from the walk.
//!
//! - Sizes are apparent sizes (`st_size`) of every entry, directories'
//!   own entries included; symlinks count their own size and are not followed.
//! - A file with several hard links counts once, where the walk meets it
//!   first (in name order).
//! - `-x` names (files and directories) and ignored entries are pruned.
//! - Every directory down to two levels below the target is listed, in du's
//!   post-order (children before their parent, the target last), siblings by
//!   name. Hidden directories are left out of the list unless `-a`, but their
//!   bytes still count in their parents, as with du.
//!
//! `top_directories` is the largest five of that list; ties keep list order.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::walk::{Kind, Walk, WalkRules, is_hidden_name};
use super::{DiskEntry, human_size};

/// How many levels below the target are listed (`--max-depth=2`).
const MAX_DEPTH: usize = 2;

struct Du<'a> {
    target: &'a Path,
    walk: &'a Walk,
    show_hidden: bool,
    seen_links: HashSet<(u64, u64)>,
    rows: Vec<DiskEntry>,
}

/// Per-directory usage, in du's order.
pub(crate) fn disk_usage(target: &Path, walk: &Walk, rules: &WalkRules) -> Vec<DiskEntry> {
    let mut du = Du {
        target,
        walk,
        show_hidden: rules.show_hidden,
        seen_links: HashSet::new(),
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
            for entry in &record.listing.entries {
                if entry.excluded {
                    continue;
                }
                if entry.kind == Kind::Dir {
                    let child_hidden = hidden || is_hidden_name(&entry.name);
                    total +=
                        self.directory(rel.join(&entry.name), entry.size, depth + 1, child_hidden);
                } else if entry.nlink <= 1 || self.seen_links.insert((entry.dev, entry.ino)) {
                    total += entry.size;
                }
            }
        }
        if depth <= MAX_DEPTH && (self.show_hidden || !hidden) {
            self.rows.push(DiskEntry {
                path: super::join_rel(self.target, &rel)
                    .to_string_lossy()
                    .into_owned(),
                size_bytes: total,
                size_human: human_size(total),
            });
        }
        total
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
