//! The directory trees shown to the survey (2 levels) and the planner (6
//! levels), rendered exactly as the report's tree.
//!
//! The base scan's tree is built at `--depth` from its own walk; the passes
//! need other depths, so this builds a [`TreeNode`] with the original's
//! rules (names sorted, directories listed while shallower than the depth and
//! shown truncated below it, unreadable directories marked) over the same
//! scope as the scan ([`ScanFilter`]: hidden names, `-x`, ignore files).
//!
//! Limits keep a prompt bounded however large the tree, where the original
//! had none (a directory of 40,000 files once made a survey prompt of
//! 630,000 tokens):
//! - symlinked directories are shown but not entered;
//! - a directory lists at most [`FILES_SHOWN`] of its files, drawn evenly
//!   over their sorted names (a sample), and one line counts the rest and
//!   their size (an aggregate);
//! - after [`MAX_NODES`] entries, directories are no longer entered, and
//!   what a directory still holds is counted on one line instead of listed;
//! - the rendered tree is cut at [`MAX_TREE_BYTES`] on a line boundary,
//!   with a line saying so (long names), or sooner when the model's window
//!   is small ([`crate::ai::rules::room`]: the caller says how much).
//!
//! All deterministic: the same tree gives the same text.

use std::ffi::OsString;
use std::fs::DirEntry;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::scan::{ScanFilter, TreeNode, render_tree};

/// Entries listed in one prompt tree before directories stop being opened.
pub(crate) const MAX_NODES: usize = 2_000;
/// Files one directory lists; the rest are counted on one line.
pub(crate) const FILES_SHOWN: usize = 40;
/// The longest rendered tree, in bytes.
pub(crate) const MAX_TREE_BYTES: usize = 96 * 1024;
/// The line that ends a tree cut at [`MAX_TREE_BYTES`].
pub(crate) const TREE_CUT_LINE: &str = "[... the rest of the tree is left out]";

/// The tree of `target` to `depth` levels, rendered, within the limits
/// above and `max_bytes` ([`MAX_TREE_BYTES`] at most).
pub(crate) fn prompt_tree(
    target: &Path,
    filter: &ScanFilter,
    depth: usize,
    max_bytes: usize,
) -> String {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| target.to_string_lossy().into_owned());
    cut_lines(
        render_tree(&Lister::new(depth, filter).directory(target, name, 0)),
        max_bytes.min(MAX_TREE_BYTES),
    )
}

/// `text` cut after its last whole line within `max` bytes, with
/// [`TREE_CUT_LINE`] (which fits too), when it is longer.
pub(crate) fn cut_lines(text: String, max: usize) -> String {
    cut_lines_saying(text, max, TREE_CUT_LINE)
}

/// `text` cut after its last whole line within `max` bytes, with
/// `cut_line` (which fits too, unless `max` is shorter than it), when it is
/// longer.
pub(crate) fn cut_lines_saying(text: String, max: usize, cut_line: &str) -> String {
    if text.len() <= max {
        return text;
    }
    let room = max.saturating_sub(cut_line.len() + 1);
    let mut end = room.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').unwrap_or(0);
    let mut cut = text[..end].to_string();
    if !cut.is_empty() {
        cut.push('\n');
    }
    cut.push_str(cut_line);
    cut
}

/// The `n` indexes of `0..len` drawn evenly (all of them when `n >= len`).
pub(crate) fn even_sample(len: usize, n: usize) -> Vec<usize> {
    if n >= len {
        return (0..len).collect();
    }
    (0..n).map(|k| k * len / n).collect()
}

/// The line counting what a directory holds but does not list (the
/// files' size follows it, as a file's does).
fn left_out_line(files: usize, dirs: usize) -> String {
    let mut parts = Vec::new();
    if files > 0 {
        parts.push(format!(
            "{} more {}",
            crate::text::format_thousands(files as u64),
            if files == 1 { "file" } else { "files" },
        ));
    }
    if dirs > 0 {
        parts.push(format!(
            "{dirs} more {}",
            if dirs == 1 {
                "directory"
            } else {
                "directories"
            }
        ));
    }
    format!("[{}]", parts.join(", "))
}

/// The names in `path`, sorted bytewise, each with its entry.
fn sorted_entries(path: &Path) -> std::io::Result<Vec<(OsString, DirEntry)>> {
    let mut entries: Vec<(OsString, DirEntry)> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| (e.file_name(), e)))
        .collect();
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(entries)
}

/// Lists directories into a tree to `depth` levels, spending one
/// `budget` of [`MAX_NODES`] entries over the whole tree.
struct Lister<'a> {
    depth: usize,
    filter: &'a ScanFilter,
    budget: usize,
}

/// One directory's entries as they are read: the subdirectories (and, once
/// sampled, the files) it lists, its files waiting for the sample, and the
/// directories left out once the budget was spent.
#[derive(Default)]
struct Listing {
    children: Vec<TreeNode>,
    files: Vec<TreeNode>,
    hidden_dirs: usize,
}

impl<'a> Lister<'a> {
    fn new(depth: usize, filter: &'a ScanFilter) -> Self {
        Lister {
            depth,
            filter,
            budget: MAX_NODES,
        }
    }

    /// `path` (at `level`) as a node: its entries, or "permission denied"
    /// when it cannot be read.
    fn directory(&mut self, path: &Path, name: String, level: usize) -> TreeNode {
        let mut node = TreeNode::listed_dir(name, path);
        let Ok(entries) = sorted_entries(path) else {
            node.error = Some("permission denied".to_string());
            return node;
        };
        // Files first gathered, so that a sample can be drawn over all of them.
        let mut listing = Listing::default();
        for (child_name, entry) in entries {
            let child = path.join(&child_name);
            let shown = child_name.to_string_lossy().into_owned();
            self.add_entry(&mut listing, &child, shown, &entry, level);
        }
        node.children = Some(self.children(listing, path));
        node
    }

    /// Adds one entry of a directory at `level`: a subdirectory in scope is
    /// entered (or shown truncated below the depth, through a link, or as
    /// the budget runs out; counted once it is spent), a file in scope waits
    /// for the sample, and anything else is left out.
    fn add_entry(
        &mut self,
        listing: &mut Listing,
        child: &Path,
        shown: String,
        entry: &DirEntry,
        level: usize,
    ) {
        // `lstat` relative to the open directory; only a symlink needs a
        // second look, at what it points to.
        let Ok(link_meta) = entry.metadata() else {
            return;
        };
        let is_symlink = link_meta.file_type().is_symlink();
        let followed = if is_symlink {
            std::fs::metadata(child).ok()
        } else {
            Some(link_meta)
        };
        // The directory is in scope (the target, or entered below), so only
        // the entry's own name is left to judge.
        if followed.as_ref().is_some_and(|m| m.is_dir()) {
            if !self.filter.allows_entry(child, true) {
                return;
            }
            if self.budget == 0 {
                listing.hidden_dirs += 1;
                return;
            }
            self.budget -= 1;
            let enter = level < self.depth && self.budget > 0 && !is_symlink;
            listing.children.push(if enter {
                self.directory(child, shown, level + 1)
            } else {
                TreeNode::truncated_dir(shown, child)
            });
        } else if let Some(meta) = followed.filter(|m| m.is_file()) {
            if !self.filter.allows_entry(child, false) {
                return;
            }
            listing.files.push(TreeNode::file(shown, child, meta.len()));
        }
    }

    /// The children of the directory at `path`: its subdirectories and an
    /// even sample of its files (as many as [`FILES_SHOWN`] and the budget
    /// allow), sorted by name, then one line counting what is left out.
    fn children(&mut self, listing: Listing, path: &Path) -> Vec<TreeNode> {
        let Listing {
            mut children,
            files,
            hidden_dirs,
        } = listing;
        let shown = FILES_SHOWN.min(self.budget).min(files.len());
        self.budget -= shown;
        let keep: std::collections::HashSet<usize> =
            even_sample(files.len(), shown).into_iter().collect();
        let (mut more_files, mut more_bytes) = (0, 0);
        for (i, file) in files.into_iter().enumerate() {
            if keep.contains(&i) {
                children.push(file);
            } else {
                more_files += 1;
                more_bytes += file.size.unwrap_or(0);
            }
        }
        children.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        if more_files > 0 {
            children.push(TreeNode::file(
                left_out_line(more_files, hidden_dirs),
                path,
                more_bytes,
            ));
        } else if hidden_dirs > 0 {
            children.push(TreeNode::truncated_dir(left_out_line(0, hidden_dirs), path));
        }
        children
    }
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
            prompt_tree(&root, &filter, 2, MAX_TREE_BYTES),
            "proj/\n├── a/\n│   ├── b/\n│   │   └── c/  ...\n│   └── one.txt  (5 B)\n└── z.md  (0 B)"
        );
        assert_eq!(
            prompt_tree(&root, &filter, 0, MAX_TREE_BYTES),
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
        let shown = prompt_tree(&root, &everything, 1, MAX_TREE_BYTES);
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
        assert_eq!(prompt_tree(&root, &filter, 6, MAX_TREE_BYTES), deep);
        // One level shows b/ but nothing under it.
        let shallow = deep.replace(
            "│   ├── b/\n│   │   └── c/\n│   │       └── deep.rs  (13 B)",
            "│   ├── b/  ...",
        );
        assert!(shallow.contains("│   ├── b/  ...\n│   └── one.txt"));
        assert_eq!(prompt_tree(&root, &filter, 1, MAX_TREE_BYTES), shallow);
        let two = deep.replace(
            "│   │   └── c/\n│   │       └── deep.rs  (13 B)",
            "│   │   └── c/  ...",
        );
        assert_eq!(prompt_tree(&root, &filter, 2, MAX_TREE_BYTES), two);
    }

    #[test]
    fn a_flat_directory_is_sampled_and_counted_not_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("flat");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        for i in 0..1_000 {
            std::fs::write(root.join(format!("f{i:04}.txt")), "x").unwrap();
        }
        let filter = ScanFilter::new(&root, &ScanOptions::default());
        let tree = prompt_tree(&root, &filter, 2, MAX_TREE_BYTES);
        let listed = tree.lines().filter(|l| l.contains(".txt")).count();
        assert_eq!(listed, FILES_SHOWN, "{tree}");
        // Drawn evenly: the first file and one near the end.
        assert!(
            tree.contains("f0000.txt") && tree.contains("f0975.txt"),
            "{tree}"
        );
        assert!(tree.contains("[960 more files]  (960 B)"), "{tree}");
        assert!(tree.contains("sub/"), "{tree}");
        // The same tree, the same text.
        assert_eq!(prompt_tree(&root, &filter, 2, MAX_TREE_BYTES), tree);
    }

    #[test]
    fn past_the_entry_budget_directories_are_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("wide");
        for i in 0..(MAX_NODES + 50) {
            std::fs::create_dir_all(root.join(format!("d{i:05}"))).unwrap();
        }
        let filter = ScanFilter::new(&root, &ScanOptions::default());
        let tree = prompt_tree(&root, &filter, 1, MAX_TREE_BYTES);
        assert!(
            tree.lines().count() <= MAX_NODES + 2,
            "{}",
            tree.lines().count()
        );
        assert!(
            tree.ends_with("[50 more directories]/  ..."),
            "{}",
            &tree[tree.len() - 200..]
        );
    }

    #[test]
    fn a_long_tree_is_cut_on_a_line() {
        let text = (0..100)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let cut = cut_lines(text.clone(), 120);
        assert!(cut.len() <= 120, "{}", cut.len());
        assert!(cut.ends_with(TREE_CUT_LINE));
        assert!(cut.starts_with("line 0\nline 1\n"));
        assert_eq!(cut_lines(text.clone(), 10_000), text);
        assert_eq!(even_sample(10, 3), [0, 3, 6]);
        assert_eq!(even_sample(2, 3), [0, 1]);
    }
}
