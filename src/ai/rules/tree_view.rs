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

use crate::scan::{NodeKind, ScanFilter, TreeNode, render_tree};

/// Entries listed in one prompt tree before directories stop being opened.
pub const MAX_NODES: usize = 2_000;

/// The tree of `target` to `depth` levels, rendered.
pub fn prompt_tree(target: &Path, filter: &ScanFilter, depth: usize) -> String {
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
    let mut node = TreeNode {
        name,
        path: path.to_string_lossy().into_owned(),
        kind: NodeKind::Directory,
        children: Some(Vec::new()),
        ..TreeNode::default()
    };
    let mut names: Vec<std::ffi::OsString> = match std::fs::read_dir(path) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect(),
        Err(_) => {
            node.error = Some("permission denied".to_string());
            return node;
        }
    };
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut children = Vec::new();
    for child_name in names {
        let child = path.join(&child_name);
        let shown = child_name.to_string_lossy().into_owned();
        let Ok(link_meta) = std::fs::symlink_metadata(&child) else {
            continue;
        };
        let followed = std::fs::metadata(&child).ok();
        if followed.as_ref().is_some_and(|m| m.is_dir()) {
            if !filter.allows_dir(&child) {
                continue;
            }
            *budget = budget.saturating_sub(1);
            let enter = level < depth && *budget > 0 && !link_meta.file_type().is_symlink();
            children.push(if enter {
                directory(&child, shown, level + 1, depth, filter, budget)
            } else {
                TreeNode {
                    name: shown,
                    path: child.to_string_lossy().into_owned(),
                    kind: NodeKind::Directory,
                    truncated: Some(true),
                    ..TreeNode::default()
                }
            });
        } else if let Some(meta) = followed.filter(|m| m.is_file()) {
            if !filter.allows_file(&child) {
                continue;
            }
            *budget = budget.saturating_sub(1);
            children.push(TreeNode {
                name: shown,
                path: child.to_string_lossy().into_owned(),
                kind: NodeKind::File,
                size: Some(meta.len()),
                ..TreeNode::default()
            });
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
}
