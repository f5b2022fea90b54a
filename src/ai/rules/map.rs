//! The condensed map the planner sees of a tree too large to show whole:
//! its directories as aggregated subtrees (directories, files, size, main
//! languages), the largest opened first, within a fixed number of lines.
//!
//! The six-level tree of a small target lists every file; a tree of 13,000
//! directories would fill any prompt with it. The map instead opens the
//! root, then always the subtree holding the most files not yet opened,
//! listing at most [`CHILDREN_SHOWN`] children of each (the largest; the
//! rest in one line), until [`MAP_LINES`] lines are used. Everything is
//! from the scan's figures ([`TreeStats`]): no walk. Pure.

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use super::dir_stats::{DirStats, TreeStats};
use super::discover::ChildIndex;
use crate::scan::human_size;

/// Lines a map may take.
pub(crate) const MAP_LINES: usize = 400;
/// Children listed under an opened directory; the rest share a line.
pub(crate) const CHILDREN_SHOWN: usize = 12;
/// Languages named per line.
const LANGUAGES_SHOWN: usize = 3;

/// `[12 dirs, 340 files, 2.1 MB; Rust 200, Python 40]`.
fn figures(stats: &DirStats) -> String {
    let mut languages: Vec<(&String, &u64)> = stats.subtree_languages.iter().collect();
    languages.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let languages: Vec<String> = languages
        .iter()
        .take(LANGUAGES_SHOWN)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    let dirs = if stats.subtree_dirs > 1 {
        format!("{} dirs, ", stats.subtree_dirs)
    } else {
        String::new()
    };
    let mut text = format!(
        "[{dirs}{} files, {}",
        stats.subtree_files,
        human_size(stats.subtree_bytes)
    );
    if !languages.is_empty() {
        text.push_str(&format!("; {}", languages.join(", ")));
    }
    text.push(']');
    text
}

/// The children of `dir` a map lists when it opens it: the largest
/// [`CHILDREN_SHOWN`] by files, then by name.
fn shown_children<'a>(children: &'a ChildIndex, stats: &TreeStats, dir: &Path) -> Vec<&'a PathBuf> {
    let mut list: Vec<&PathBuf> = children.of(dir).iter().collect();
    list.sort_by(|a, b| {
        stats
            .of(b)
            .subtree_files
            .cmp(&stats.of(a).subtree_files)
            .then_with(|| a.cmp(b))
    });
    list.truncate(CHILDREN_SHOWN);
    list
}

/// The map of the tree under `target` in at most `max_lines` lines.
pub(crate) fn condensed_map(
    target: &Path,
    children: &ChildIndex,
    stats: &TreeStats,
    max_lines: usize,
) -> String {
    // Which directories are opened: the largest first, while lines last.
    let mut opened = std::collections::HashSet::new();
    let mut lines = 1;
    let mut queue: BinaryHeap<(u64, std::cmp::Reverse<PathBuf>)> = BinaryHeap::new();
    queue.push((
        stats.of(target).subtree_files,
        std::cmp::Reverse(target.to_path_buf()),
    ));
    while let Some((_, std::cmp::Reverse(dir))) = queue.pop() {
        let all = children.of(&dir).len();
        if all == 0 {
            continue;
        }
        let shown = shown_children(children, stats, &dir);
        let cost = shown.len() + usize::from(all > shown.len());
        if lines + cost > max_lines {
            continue;
        }
        lines += cost;
        for child in &shown {
            queue.push((
                stats.of(child).subtree_files,
                std::cmp::Reverse((*child).clone()),
            ));
        }
        opened.insert(dir);
    }
    let name = target.file_name().map_or_else(
        || target.to_string_lossy().into_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut out = vec![format!("{name}/  {}", figures(stats.of(target)))];
    render(target, "", children, stats, &opened, &mut out);
    out.join("\n")
}

fn render(
    dir: &Path,
    indent: &str,
    children: &ChildIndex,
    stats: &TreeStats,
    opened: &std::collections::HashSet<PathBuf>,
    out: &mut Vec<String>,
) {
    if !opened.contains(dir) {
        return;
    }
    let mut shown = shown_children(children, stats, dir);
    shown.sort();
    let hidden: Vec<&PathBuf> = children
        .of(dir)
        .iter()
        .filter(|c| !shown.contains(c))
        .collect();
    let count = shown.len() + usize::from(!hidden.is_empty());
    for (i, child) in shown.iter().enumerate() {
        let last = i + 1 == count;
        let name = child
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let branch = if last { "└── " } else { "├── " };
        out.push(format!(
            "{indent}{branch}{name}/  {}",
            figures(stats.of(child))
        ));
        let deeper = format!("{indent}{}", if last { "    " } else { "│   " });
        render(child, &deeper, children, stats, opened, out);
    }
    if !hidden.is_empty() {
        let mut rest = DirStats::default();
        for child in &hidden {
            let s = stats.of(child);
            rest.subtree_dirs += s.subtree_dirs;
            rest.subtree_files += s.subtree_files;
            rest.subtree_bytes += s.subtree_bytes;
            for (language, n) in &s.subtree_languages {
                *rest.subtree_languages.entry(language.clone()).or_insert(0) += n;
            }
        }
        out.push(format!(
            "{indent}└── ... {} more directories  {}",
            hidden.len(),
            figures(&rest)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::rules::units::tests::dirs_and_files;

    /// A tree of `(dir, files)` under /t/proj, with 1000-byte Python files.
    fn tree(spec: &[(&str, usize)]) -> (ChildIndex, TreeStats) {
        let target = Path::new("/t/proj");
        let (dirs, files) = dirs_and_files(target, spec, "py", 1000);
        (
            ChildIndex::new(&dirs),
            TreeStats::new(target, target, &files, &dirs),
        )
    }

    #[test]
    fn a_small_tree_is_shown_whole() {
        let (children, stats) = tree(&[("", 1), ("src", 3), ("src/core", 2), ("docs", 1)]);
        let map = condensed_map(Path::new("/t/proj"), &children, &stats, MAP_LINES);
        assert_eq!(
            map,
            "proj/  [4 dirs, 7 files, 6.8 KB; Python 7]\n\
             ├── docs/  [1 files, 1000 B; Python 1]\n\
             └── src/  [2 dirs, 5 files, 4.9 KB; Python 5]\n    \
                 └── core/  [2 files, 2.0 KB; Python 2]"
        );
    }

    #[test]
    fn a_large_tree_opens_its_largest_subtrees_within_the_lines() {
        let mut spec: Vec<(String, usize)> = vec![(String::new(), 0)];
        for p in 0..30 {
            spec.push((format!("p{p:02}"), 0));
            for m in 0..30 {
                spec.push((format!("p{p:02}/m{m:02}"), 1 + (p * m) % 7));
            }
        }
        let spec: Vec<(&str, usize)> = spec.iter().map(|(r, n)| (r.as_str(), *n)).collect();
        let (children, stats) = tree(&spec);
        let map = condensed_map(Path::new("/t/proj"), &children, &stats, 60);
        let lines: Vec<&str> = map.lines().collect();
        assert!(lines.len() <= 60, "{}", lines.len());
        assert!(lines[0].starts_with("proj/  [931 dirs, "), "{}", lines[0]);
        // The root shows its 12 largest packages and the rest in one line.
        assert!(
            map.contains("└── ... 18 more directories  [558 dirs, "),
            "{map}"
        );
        // Some packages were opened too, each with a line for the rest.
        assert!(map.matches("more directories").count() > 1, "{map}");
    }
}
