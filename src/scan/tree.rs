//! The directory tree (`tree`) and its rendering (`tree_rendered`).
//!
//! Built from the walk's listings with the original's rules: names sorted,
//! hidden names skipped unless `-a`, `-x` names skipped (files too, unlike
//! classification), files and directories judged by following symlinks (as
//! `os.path.isdir`/`isfile`), directories listed while their depth is below
//! `--depth` and shown as `truncated` beyond it, and a directory that cannot
//! be read (or whose entries cannot be examined) marked `permission denied`,
//! or `unreadable` for any other error.
//!
//! The walk does not enter symlinked directories, so those are listed here
//! (with the same filters). A symlink loop is bounded by the depth, as in the
//! original; a budget on the entries listed that way keeps a deep `-d` over
//! several loops from growing without end. A symlink that leads out of the
//! target is never followed: it is shown as a link, `name -> where`.
//!
//! A directory no model is sent into (the skip list, a `CACHEDIR.TAG`) is
//! marked `skipped`; `tree_rendered` stays the original's drawing.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use crate::text::escape_line;

use super::human_size;
use super::ignore_files::RuleStack;
use super::walk::{IgnoredCount, Kind, LinkTarget, ListError, Listing, Walk, WalkRules, list_dir};
use super::{NodeKind, TreeNode};

/// How many entries may be listed through symlinks. Links back to `.` or
/// `..` double the tree at every level of a deep `--depth`, and one listing
/// of a large directory is already thousands of nodes, so the budget counts
/// entries (what costs memory and time), not listings.
const LINKED_ENTRY_BUDGET: usize = 20_000;

/// Where a directory's listing comes from.
enum Source<'a> {
    /// The walk listed it: its path relative to the target.
    Walked(PathBuf),
    /// Reached through a symlink: list it now, under these rules.
    Linked(&'a RuleStack),
}

struct Builder<'a> {
    walk: &'a Walk,
    rules: &'a WalkRules,
    max_depth: usize,
    linked_budget: Cell<usize>,
}

/// Build the tree of `target` down to `max_depth`.
pub(crate) fn build_tree(
    target: &Path,
    walk: &Walk,
    rules: &WalkRules,
    max_depth: usize,
) -> TreeNode {
    let builder = Builder {
        walk,
        rules,
        max_depth,
        linked_budget: Cell::new(LINKED_ENTRY_BUDGET),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| target.to_string_lossy().into_owned());
    builder.directory(target, name, 0, Source::Walked(PathBuf::new()))
}

impl Builder<'_> {
    fn directory(&self, path: &Path, name: String, depth: usize, source: Source) -> TreeNode {
        let mut node = TreeNode::listed_dir(name, path);
        let owned;
        let (listing, rel): (&Listing, Option<PathBuf>) = match source {
            Source::Walked(rel) => match self.walk.dirs.get(&rel) {
                Some(record) => {
                    node.skipped = record.skipped;
                    (&record.listing, Some(rel))
                }
                None => {
                    owned = self.list_linked(path, &RuleStack::empty());
                    (&owned, None)
                }
            },
            Source::Linked(parent_rules) => {
                owned = self.list_linked(path, parent_rules);
                (&owned, None)
            }
        };
        if let Some(error) = listing.error {
            node.error = Some(describe(error));
            return node;
        }
        node.error = listing.entries_error.map(describe);
        let mut children = Vec::new();
        for entry in &listing.entries {
            if (!self.rules.show_hidden && entry.is_hidden()) || entry.excluded {
                continue;
            }
            let child_name = entry.name.to_string_lossy().into_owned();
            let child_path = path.join(&entry.name);
            if entry.is_dir_followed() {
                if depth >= self.max_depth
                    || (entry.kind != Kind::Dir && self.linked_budget.get() == 0)
                {
                    let mut truncated = TreeNode::truncated_dir(child_name, &child_path);
                    truncated.skipped = rel
                        .as_ref()
                        .filter(|_| entry.kind == Kind::Dir)
                        .and_then(|rel| self.walk.dirs.get(&rel.join(&entry.name)))
                        .and_then(|record| record.skipped);
                    children.push(truncated);
                    continue;
                }
                let source = match (&rel, entry.kind) {
                    (Some(rel), Kind::Dir) => Source::Walked(rel.join(&entry.name)),
                    _ => Source::Linked(&listing.rules),
                };
                children.push(self.directory(&child_path, child_name, depth + 1, source));
            } else if let Some(size) = entry.file_size_followed() {
                children.push(TreeNode::file(child_name, &child_path, size));
            } else if entry.link == Some(LinkTarget::Outside) {
                let to = std::fs::read_link(&child_path).unwrap_or_default();
                let to = to.to_string_lossy().into_owned();
                children.push(TreeNode::link(child_name, &child_path, to));
            }
        }
        node.children = Some(children);
        node
    }

    fn list_linked(&self, path: &Path, parent_rules: &RuleStack) -> Listing {
        // Contents seen through a symlink are not in the ignore summary: the
        // classification never sees them either.
        let listing = list_dir(
            self.rules,
            path,
            parent_rules,
            false,
            &mut Vec::new(),
            &mut IgnoredCount::default(),
        );
        let cost = 1 + listing.entries.len();
        self.linked_budget
            .set(self.linked_budget.get().saturating_sub(cost));
        listing
    }
}

/// How the tree marks a directory it could not read.
fn describe(error: ListError) -> String {
    match error {
        ListError::PermissionDenied => "permission denied".to_string(),
        ListError::Other(_) => "unreadable".to_string(),
    }
}

/// Render the tree as the original does, character for character. Names
/// are escaped so that a file name cannot add lines or drive the terminal.
///
/// Everything is written into one string: the scan renders a line per file
/// before the investigation's first request, so a few allocations per line
/// add up on a large tree.
pub(crate) fn render_tree(root: &TreeNode) -> String {
    let mut out = String::new();
    out.push_str(&escape_line(&root.name));
    out.push('/');
    render_children(root, &mut String::new(), &mut out);
    out
}

/// A line per child of `node` (and below), each on a new line after
/// `prefix`, the connectors of the ancestors.
fn render_children(node: &TreeNode, prefix: &mut String, out: &mut String) {
    let children = node.children.as_deref().unwrap_or_default();
    for (i, child) in children.iter().enumerate() {
        let is_last = i + 1 == children.len();
        out.push('\n');
        out.push_str(prefix);
        out.push_str(if is_last { "└── " } else { "├── " });
        push_node_label(out, child);
        let depth = prefix.len();
        prefix.push_str(if is_last { "    " } else { "│   " });
        render_children(child, prefix, out);
        prefix.truncate(depth);
    }
}

/// A node as its line shows it after the connectors: its escaped name and
/// what it is (a file's size, a directory's `/`, a link's target), with
/// any error. The terminal report's bounded tree draws nodes the same way.
pub(crate) fn push_node_label(out: &mut String, node: &TreeNode) {
    out.push_str(&escape_line(&node.name));
    match node.kind {
        NodeKind::File => {
            out.push_str("  (");
            out.push_str(&human_size(node.size.unwrap_or(0)));
            out.push(')');
        }
        NodeKind::Directory if node.truncated == Some(true) => out.push_str("/  ..."),
        NodeKind::Directory => out.push('/'),
        NodeKind::Symlink => {
            out.push_str(" -> ");
            out.push_str(&escape_line(node.target.as_deref().unwrap_or_default()));
        }
    }
    if let Some(error) = node.error.as_deref().filter(|e| !e.is_empty()) {
        out.push_str("  [");
        out.push_str(&escape_line(error));
        out.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, path: String, kind: NodeKind) -> TreeNode {
        TreeNode {
            name: name.into(),
            path,
            kind,
            ..TreeNode::default()
        }
    }

    fn file(name: &str, size: u64) -> TreeNode {
        let path = format!("/tmp/mydir/{name}");
        TreeNode {
            size: Some(size),
            ..node(name, path, NodeKind::File)
        }
    }

    fn dir(name: &str, children: Vec<TreeNode>) -> TreeNode {
        let path = format!("/tmp/{name}");
        TreeNode {
            children: Some(children),
            ..node(name, path, NodeKind::Directory)
        }
    }

    #[test]
    fn renders_like_the_reference() {
        let mut locked = dir("locked", vec![]);
        locked.error = Some("permission denied".into());
        let mut deep = dir("deep", vec![]);
        deep.children = None;
        deep.truncated = Some(true);
        let tree = dir(
            "mydir",
            vec![
                file("file.py", 1024),
                dir(
                    "subdir",
                    vec![file("a.txt", 5), dir("inner", vec![file("b", 2048)])],
                ),
                dir("zlast", vec![deep, file("c", 0)]),
                locked,
            ],
        );
        let expected = "\
mydir/
├── file.py  (1.0 KB)
├── subdir/
│   ├── a.txt  (5 B)
│   └── inner/
│       └── b  (2.0 KB)
├── zlast/
│   ├── deep/  ...
│   └── c  (0 B)
└── locked/  [permission denied]";
        similar_asserts::assert_eq!(render_tree(&tree), expected);
    }

    #[test]
    fn an_empty_root_is_one_line() {
        assert_eq!(render_tree(&dir("empty", vec![])), "empty/");
    }

    #[test]
    fn hostile_names_are_escaped() {
        let tree = dir("root", vec![file("evil\nname\x1b[2J", 1)]);
        assert_eq!(render_tree(&tree), "root/\n└── evil\\nname\\x1b[2J  (1 B)");
    }
}
