//! The directory trees shown to the survey (2 levels) and the planner (6
//! levels), rendered exactly as the report's tree.
//!
//! The base scan's tree is built at `--depth` from its own walk; the passes
//! need other depths, so this builds a [`TreeNode`] with the original's
//! rules (names sorted, directories listed while shallower than the depth and
//! shown truncated below it, unreadable directories marked) over the same
//! scope as the scan ([`ScanFilter`]: hidden names, `-x`, ignore files).
//!
//! Two limits keep a prompt bounded where the original had none: symlinked
//! directories are shown but not entered, and after [`MAX_NODES`] entries
//! the remaining directories are shown truncated.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::scan::{ScanFilter, TreeNode, render_tree};

/// Entries listed in one prompt tree before directories stop being opened.
pub(crate) const MAX_NODES: usize = 2_000;

/// The tree of `target` to `depth` levels, rendered.
pub(crate) fn prompt_tree(target: &Path, filter: &ScanFilter, depth: usize) -> String {
    let mut budget = MAX_NODES;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| target.to_string_lossy().into_owned());
    render_tree(&directory(target, name, 0, depth, filter, &mut budget))
}

fn directory(
    path: &Path,
    name: String,
    level: usize,
    depth: usize,
    filter: &ScanFilter,
    budget: &mut usize,
) -> TreeNode {
    let mut node = TreeNode::listed_dir(name, path);
    let mut entries: Vec<(std::ffi::OsString, std::fs::DirEntry)> = match std::fs::read_dir(path) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| (e.file_name(), e)))
            .collect(),
        Err(_) => {
            node.error = Some("permission denied".to_string());
            return node;
        }
    };
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut children = Vec::new();
    for (child_name, entry) in entries {
        let child = path.join(&child_name);
        let shown = child_name.to_string_lossy().into_owned();
        // `lstat` relative to the open directory; only a symlink needs a
        // second look, at what it points to.
        let Ok(link_meta) = entry.metadata() else {
            continue;
        };
        let is_symlink = link_meta.file_type().is_symlink();
        let followed = if is_symlink {
            std::fs::metadata(&child).ok()
        } else {
            Some(link_meta)
        };
        // `path` is in scope (the target, or entered below), so only the
        // entry's own name is left to judge.
        if followed.as_ref().is_some_and(|m| m.is_dir()) {
            if !filter.allows_entry(&child, true) {
                continue;
            }
            *budget = budget.saturating_sub(1);
            let enter = level < depth && *budget > 0 && !is_symlink;
            children.push(if enter {
                directory(&child, shown, level + 1, depth, filter, budget)
            } else {
                TreeNode::truncated_dir(shown, &child)
            });
        } else if let Some(meta) = followed.filter(|m| m.is_file()) {
            if !filter.allows_entry(&child, false) {
                continue;
            }
            *budget = budget.saturating_sub(1);
            children.push(TreeNode::file(shown, &child, meta.len()));
        }
    }
    node.children = Some(children);
    node
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::ScanOptions;

    #[test]
    fn depth_scope_and_rendering() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("proj");
        for dir in ["a/b/c", ".hidden", "vendor"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("a/one.txt"), "12345").unwrap();
        std::fs::write(root.join("z.md"), "").unwrap();
        std::fs::write(root.join(".gitignore"), "vendor/\n").unwrap();
        let filter = ScanFilter::new(&root, &ScanOptions::default());
        assert_eq!(
            prompt_tree(&root, &filter, 2),
            "proj/\n├── a/\n│   ├── b/\n│   │   └── c/  ...\n│   └── one.txt  (5 B)\n└── z.md  (0 B)"
        );
        assert_eq!(
            prompt_tree(&root, &filter, 0),
            "proj/\n├── a/  ...\n└── z.md  (0 B)"
        );
        let everything = ScanFilter::new(
            &root,
            &ScanOptions {
                show_hidden: true,
                respect_ignore: false,
                ..ScanOptions::default()
            },
        );
        let shown = prompt_tree(&root, &everything, 1);
        assert!(
            shown.contains(".hidden/") && shown.contains("vendor/") && shown.contains(".gitignore")
        );
    }

    /// Every kind of entry the scope and the listing treat differently:
    /// hidden, ignored (by the root and by a nested repository), `-x`
    /// directories and a file of that name, symlinks to a directory, to a
    /// file and to nothing, a FIFO, a name that is not UTF-8.
    #[test]
    fn an_odd_tree_is_shown_within_the_scope() {
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("proj");
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("a/one.txt", "12345");
        write("a/b/c/deep.rs", "fn deep() {}\n");
        write(".hidden/h.txt", "h");
        write(".gitignore", "vendor/\n*.log\n");
        write("vendor/v.rs", "v");
        write("x/skipped.rs", "x");
        write("src/x", "a file named like the -x directory");
        write("src/main.rs", "fn main() {}\n");
        write("src/app.log", "ignored");
        write("repo/.git/info/exclude", "gen/\n");
        write("repo/gen/g.py", "g");
        write("repo/code.py", "c = 1\n");
        std::fs::write(
            root.join("src")
                .join(std::ffi::OsStr::from_bytes(b"bad\xff.rs")),
            "b",
        )
        .unwrap();
        std::os::unix::fs::symlink("../a", root.join("src/link_dir")).unwrap();
        std::os::unix::fs::symlink("main.rs", root.join("src/link_file")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("src/broken")).unwrap();
        crate::testing::mkfifo(&root.join("src/pipe"));

        let filter = ScanFilter::new(
            &root,
            &ScanOptions {
                exclude: vec!["x".into()],
                ..ScanOptions::default()
            },
        );
        let deep = "\
proj/
├── a/
│   ├── b/
│   │   └── c/
│   │       └── deep.rs  (13 B)
│   └── one.txt  (5 B)
├── repo/
│   └── code.py  (6 B)
└── src/
    ├── bad\u{fffd}.rs  (1 B)
    ├── link_dir/  ...
    ├── link_file  (13 B)
    ├── main.rs  (13 B)
    └── x  (34 B)";
        assert_eq!(prompt_tree(&root, &filter, 6), deep);
        // One level shows b/ but nothing under it.
        let shallow = deep.replace(
            "│   ├── b/\n│   │   └── c/\n│   │       └── deep.rs  (13 B)",
            "│   ├── b/  ...",
        );
        assert!(shallow.contains("│   ├── b/  ...\n│   └── one.txt"));
        assert_eq!(prompt_tree(&root, &filter, 1), shallow);
        let two = deep.replace(
            "│   │   └── c/\n│   │       └── deep.rs  (13 B)",
            "│   │   └── c/  ...",
        );
        assert_eq!(prompt_tree(&root, &filter, 2), two);
    }
}
