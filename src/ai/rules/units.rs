//! Investigation units: one loop for a directory and the small directories
//! below it, so that a tree of many tiny directories needs far fewer loops.
//!
//! A loop has a price of its own whatever it finds (its prompt, its first
//! turns, its report), so a directory of two files costs nearly what one of
//! twenty does. When the budget cannot buy a loop per directory, the
//! directories to investigate are folded bottom-up: a directory whose
//! subtree (with what was already folded into it) is small joins its
//! parent's unit. The thresholds, and why:
//!
//! - [`FOLD_MAX_FILES`] = 12 files: about what one loop reads in two or three
//!   turns of batched calls, so a folded directory adds a turn or two, not a
//!   loop's worth of work;
//! - [`FOLD_MAX_READ_BYTES`] = 96 KiB of what `read_file` would return
//!   (each file up to its 4 KiB default): about 31,000 tokens with the
//!   newer tokenizer, a fifth of the context a loop may use (140,000), so a
//!   unit's reading stays well inside one loop's context;
//! - [`UNIT_MAX_DIRS`] = 8 directories per unit: each needs a dir summary of
//!   its own from the agent, and [`UNIT_TURNS_PER_DIR`] = 2 more turns each
//!   keeps the largest unit (10 + 7 x 2 = 24 turns) under the 25-turn
//!   ceiling;
//! - [`UNIT_MAX_DEPTH`] = 2: folded directories sit at most two levels below
//!   the unit's top, a subtree an agent can keep in view.
//!
//! Never folded: the target itself (it has no parent), a directory the plan
//! marks priority (the planner wants it looked at on its own), and a
//! directory whose parent is not being investigated in this run (cached, or
//! skipped by the plan). Pure: the directories, their figures and tiers in,
//! units out.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::dir_stats::TreeStats;
use super::discover::ChildIndex;
use super::plan::{MAX_TURNS_CEILING, Tier};

/// A subtree with at most this many files may fold into its parent's unit.
pub(crate) const FOLD_MAX_FILES: u64 = 12;
/// ...and at most this many bytes to read (each file up to 4 KiB).
pub(crate) const FOLD_MAX_READ_BYTES: u64 = 96 * 1024;
/// A unit covers at most this many directories.
pub(crate) const UNIT_MAX_DIRS: usize = 8;
/// Folded directories lie at most this many levels below the unit's top.
pub(crate) const UNIT_MAX_DEPTH: usize = 2;
/// Extra turns a unit gets per folded directory.
pub(crate) const UNIT_TURNS_PER_DIR: u32 = 2;

/// One loop's assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    /// The unit's top directory: the loop is named after it.
    pub root: PathBuf,
    /// The directories folded into it, leaf-first.
    pub members: Vec<PathBuf>,
}

impl Unit {
    /// A unit of one directory.
    pub(crate) fn single(root: PathBuf) -> Unit {
        Unit {
            root,
            members: Vec::new(),
        }
    }

    /// Every directory of the unit: the root, then the members.
    pub(crate) fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.root).chain(&self.members)
    }

    /// How many directories it covers.
    pub(crate) fn len(&self) -> usize {
        1 + self.members.len()
    }
}

/// The turns of a unit whose root is allotted `root_turns`.
pub(crate) fn unit_turns(root_turns: u32, members: usize) -> u32 {
    let extra = UNIT_TURNS_PER_DIR.saturating_mul(u32::try_from(members).unwrap_or(u32::MAX));
    root_turns.saturating_add(extra).min(MAX_TURNS_CEILING)
}

/// A unit in the making.
#[derive(Debug, Clone)]
struct FoldCandidate {
    members: Vec<PathBuf>,
    files: u64,
    read_bytes: u64,
    /// Levels of members below the root (0 alone).
    depth: usize,
}

/// Fold `order` (the directories to investigate, children before parents)
/// into units, keeping `order`'s order for the units' roots. `tier_of`
/// gives the plan's tier of a directory; `target` is never folded.
pub(crate) fn fold_units(
    order: &[PathBuf],
    target: &Path,
    children: &ChildIndex,
    stats: &TreeStats,
    tier_of: impl Fn(&Path) -> Tier,
) -> Vec<Unit> {
    let investigated: HashSet<&Path> = order.iter().map(PathBuf::as_path).collect();
    let mut candidates: HashMap<&Path, FoldCandidate> = HashMap::new();
    let mut folded: HashSet<&Path> = HashSet::new();
    // Every child comes before its parent in `order`, so a parent's
    // candidates are final when it is reached.
    for dir in order {
        let own = stats.of(dir);
        let mut candidate = FoldCandidate {
            members: Vec::new(),
            files: u64::from(own.files),
            read_bytes: own.read_bytes,
            depth: 0,
        };
        let mut kids: Vec<(&Path, FoldCandidate)> = children
            .of(dir)
            .iter()
            .filter(|child| investigated.contains(child.as_path()))
            .filter_map(|child| Some((child.as_path(), candidates.get(child.as_path())?.clone())))
            .filter(|(child, kid)| foldable(child, kid, target, &tier_of))
            .collect();
        // The smallest first, so a full unit holds as many as it can.
        kids.sort_by(|a, b| a.1.files.cmp(&b.1.files).then_with(|| a.0.cmp(b.0)));
        for (child, kid) in kids {
            let dirs = 1 + candidate.members.len() + 1 + kid.members.len();
            if dirs > UNIT_MAX_DIRS || kid.depth + 1 > UNIT_MAX_DEPTH {
                continue;
            }
            folded.insert(child);
            candidate.members.push(child.to_path_buf());
            candidate.members.extend(kid.members);
            candidate.files += kid.files;
            candidate.read_bytes += kid.read_bytes;
            candidate.depth = candidate.depth.max(kid.depth + 1);
        }
        candidates.insert(dir, candidate);
    }
    order
        .iter()
        .filter(|dir| !folded.contains(dir.as_path()))
        .map(|dir| {
            let mut members = candidates
                .remove(dir.as_path())
                .map(|c| c.members)
                .unwrap_or_default();
            super::discover::sort_leaf_first(&mut members);
            Unit {
                root: dir.clone(),
                members,
            }
        })
        .collect()
}

/// Whether `dir` (with what it already holds) may join its parent's unit.
fn foldable(
    dir: &Path,
    candidate: &FoldCandidate,
    target: &Path,
    tier_of: &impl Fn(&Path) -> Tier,
) -> bool {
    dir != target
        && tier_of(dir) != Tier::Priority
        && candidate.files <= FOLD_MAX_FILES
        && candidate.read_bytes <= FOLD_MAX_READ_BYTES
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::scan::ClassifiedFile;

    /// The directories (leaf first) and the source files of a tree given as
    /// `(dir, files)` under `target`: `f0.<ext>`, `f1.<ext>`... of `size`
    /// bytes each (shared with the map tests).
    pub(in crate::ai::rules) fn dirs_and_files(
        target: &Path,
        spec: &[(&str, usize)],
        ext: &str,
        size: u64,
    ) -> (Vec<PathBuf>, Vec<ClassifiedFile>) {
        let mut dirs: Vec<PathBuf> = spec
            .iter()
            .map(|(rel, _)| {
                if rel.is_empty() {
                    target.to_path_buf()
                } else {
                    target.join(rel)
                }
            })
            .collect();
        super::super::discover::sort_leaf_first(&mut dirs);
        let files = spec
            .iter()
            .flat_map(|(rel, n)| {
                (0..*n).map(move |i| ClassifiedFile {
                    path: target
                        .join(rel)
                        .join(format!("f{i}.{ext}"))
                        .to_string_lossy()
                        .into_owned(),
                    name: format!("f{i}.{ext}"),
                    category: "source".into(),
                    size,
                    description: None,
                })
            })
            .collect();
        (dirs, files)
    }

    /// A tree of `(dir, files)` under /t, with 1 KiB files.
    fn tree(spec: &[(&str, usize)]) -> (Vec<PathBuf>, TreeStats, ChildIndex) {
        let target = Path::new("/t");
        let (dirs, files) = dirs_and_files(target, spec, "rs", 1024);
        let stats = TreeStats::new(target, target, &files, &dirs);
        let children = ChildIndex::new(&dirs);
        (dirs, stats, children)
    }

    fn shown(units: &[Unit]) -> Vec<(String, Vec<String>)> {
        let rel = |p: &PathBuf| super::super::discover::relative(Path::new("/t"), p);
        units
            .iter()
            .map(|u| (rel(&u.root), u.members.iter().map(rel).collect()))
            .collect()
    }

    fn default_tier(_: &Path) -> Tier {
        Tier::Default
    }

    #[test]
    fn small_directories_fold_into_their_parent() {
        let (dirs, stats, children) = tree(&[
            ("", 2),
            ("src", 30),
            ("src/util", 3),
            ("src/util/deep", 1),
            ("docs", 2),
            ("big", 40),
        ]);
        let units = fold_units(&dirs, Path::new("/t"), &children, &stats, default_tier);
        assert_eq!(
            shown(&units),
            [
                ("big".to_string(), vec![]),
                (
                    "src".to_string(),
                    vec!["src/util/deep".to_string(), "src/util".to_string()]
                ),
                (".".to_string(), vec!["docs".to_string()]),
            ]
        );
    }

    #[test]
    fn limits_on_files_bytes_depth_and_size_hold() {
        // 13 files is one too many; a three-level chain stops at two.
        let (dirs, stats, children) = tree(&[
            ("", 0),
            ("a", 0),
            ("a/many", 13),
            ("a/b", 0),
            ("a/b/c", 0),
            ("a/b/c/d", 0),
        ]);
        let units = fold_units(&dirs, Path::new("/t"), &children, &stats, default_tier);
        let shown = shown(&units);
        assert!(shown.contains(&("a/many".to_string(), vec![])), "{shown:?}");
        // d folds into c, c into b (2 levels below b); b's subtree is then
        // too deep to join a.
        assert!(
            shown.contains(&(
                "a/b".to_string(),
                vec!["a/b/c/d".to_string(), "a/b/c".to_string()]
            )),
            "{shown:?}"
        );
        for unit in &units {
            assert!(unit.len() <= UNIT_MAX_DIRS);
        }

        // Twenty empty children: a unit takes 7 of them, the rest stay.
        let spec: Vec<(String, usize)> = std::iter::once((String::new(), 0))
            .chain((0..20).map(|i| (format!("d{i:02}"), 0)))
            .collect();
        let spec: Vec<(&str, usize)> = spec.iter().map(|(r, n)| (r.as_str(), *n)).collect();
        let (dirs, stats, children) = tree(&spec);
        let units = fold_units(&dirs, Path::new("/t"), &children, &stats, default_tier);
        let root = units.iter().find(|u| u.root == Path::new("/t")).unwrap();
        assert_eq!(root.len(), UNIT_MAX_DIRS);
        assert_eq!(units.len(), 1 + 20 - (UNIT_MAX_DIRS - 1));
    }

    #[test]
    fn priority_cached_and_unlisted_directories_stay_out() {
        let (dirs, stats, children) = tree(&[("", 1), ("p", 1), ("q", 1), ("r", 1)]);
        let tier = |dir: &Path| {
            if dir == Path::new("/t/p") {
                Tier::Priority
            } else {
                Tier::Default
            }
        };
        // r is cached: not in the order, so not folded.
        let order: Vec<PathBuf> = dirs.iter().filter(|d| !d.ends_with("r")).cloned().collect();
        let units = fold_units(&order, Path::new("/t"), &children, &stats, tier);
        assert_eq!(
            shown(&units),
            [
                ("p".to_string(), vec![]),
                (".".to_string(), vec!["q".to_string()])
            ]
        );
    }

    #[test]
    fn turns_grow_with_the_unit_up_to_the_ceiling() {
        assert_eq!(unit_turns(10, 0), 10);
        assert_eq!(unit_turns(10, 3), 16);
        assert_eq!(unit_turns(10, 7), 24);
        assert_eq!(unit_turns(20, 7), MAX_TURNS_CEILING);
    }
}
