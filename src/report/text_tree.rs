//! The terminal report's tree: the scan's tree drawn within a line budget,
//! so that the report of a 20,000-file tree is not 20,000 lines of tree.
//!
//! Lines go to what matters most first: anything a flag was raised on or
//! under, then the largest (a directory by the bytes of the files the scan
//! saw below it). Each directory lists the children that got lines,
//! directories first, flagged first, largest first, and one `... N more`
//! line for the rest; a directory none of whose children got a line says
//! on its own line how many entries it holds. A directory no model is
//! sent into (build output, the skip list) is one line, marked, however
//! large: it cannot crowd the sources out.
//! The JSON keeps the whole tree (`tree`, `tree_rendered`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::shape::{Flagged, Sizes, relative_to};
use crate::scan::tree::push_node_label;
use crate::scan::{NodeKind, TreeNode, human_size};
use crate::text::escape_line;

/// The most lines the tree section takes.
pub(crate) const TREE_LINES: usize = 40;

/// How a node ranks for a line, larger first: flagged, bytes, a directory,
/// then the tree's own order.
type Rank = (bool, u64, bool, Reverse<usize>);

/// A child of a directory already given lines, waiting for one.
struct Candidate<'a> {
    rank: Rank,
    node: &'a TreeNode,
    parent: usize,
}

impl PartialEq for Candidate<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.rank == other.rank
    }
}
impl Eq for Candidate<'_> {}
impl PartialOrd for Candidate<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank.cmp(&other.rank)
    }
}

/// A directory that has lines: the children shown, and how many are not.
struct Open<'a> {
    shown: Vec<(Rank, &'a TreeNode, Option<usize>)>,
    hidden: usize,
    hidden_bytes: u64,
}

/// What the tree is drawn from.
pub(crate) struct TreeContext<'a> {
    pub target: &'a str,
    pub sizes: &'a Sizes<'a>,
    pub flagged: &'a Flagged,
}

/// The tree in at most `budget` lines (the root's included).
pub(crate) fn bounded_tree(root: &TreeNode, context: &TreeContext<'_>, budget: usize) -> String {
    let mut tree = Budget {
        context,
        open: Vec::new(),
        heap: BinaryHeap::new(),
        seq: 0,
    };
    let root_id = tree.open(root);
    let mut lines = 1;
    while let Some(candidate) = tree.heap.pop() {
        let node = candidate.node;
        let grows = !children(node).is_empty();
        let parent = &tree.open[candidate.parent];
        // Its own line, and its parent's `... more` line: there while a
        // parent with a child shown has others hidden (a parent with none
        // shown says how many it holds on its own line).
        let more_before = usize::from(!parent.shown.is_empty() && parent.hidden > 0);
        let more_after = usize::from(parent.hidden > 1);
        let after = lines + 1 + more_after - more_before;
        if after > budget {
            continue;
        }
        let parent = candidate.parent;
        lines = after;
        tree.open[parent].hidden -= 1;
        tree.open[parent].hidden_bytes -= candidate.rank.1;
        let id = grows.then(|| tree.open(node));
        tree.open[parent].shown.push((candidate.rank, node, id));
    }
    let mut out = String::new();
    out.push_str(&escape_line(&root.name));
    out.push('/');
    if !collapsed(&tree.open[root_id], &mut out) {
        draw(&mut tree.open, root_id, &mut String::new(), &mut out);
    }
    out
}

/// `  (12 entries, 3.4 KB)` after the line of a directory none of whose
/// children got a line; whether it was one.
fn collapsed(open: &Open<'_>, out: &mut String) -> bool {
    if !open.shown.is_empty() || open.hidden == 0 {
        return false;
    }
    out.push_str("  (");
    out.push_str(&open.hidden.to_string());
    out.push_str(if open.hidden == 1 {
        " entry"
    } else {
        " entries"
    });
    if open.hidden_bytes > 0 {
        out.push_str(", ");
        out.push_str(&human_size(open.hidden_bytes));
    }
    out.push(')');
    true
}

/// The lines given out so far, and the children waiting for one.
struct Budget<'a, 'c> {
    context: &'c TreeContext<'c>,
    open: Vec<Open<'a>>,
    heap: BinaryHeap<Candidate<'a>>,
    /// Ties rank in the tree's own (name) order.
    seq: usize,
}

impl<'a> Budget<'a, '_> {
    /// Give `node` (a directory with a line) its children as candidates.
    fn open(&mut self, node: &'a TreeNode) -> usize {
        let id = self.open.len();
        self.open.push(Open {
            shown: Vec::new(),
            hidden: 0,
            hidden_bytes: 0,
        });
        for child in children(node) {
            let rank = self.rank(child);
            self.open[id].hidden += 1;
            self.open[id].hidden_bytes += rank.1;
            // A skipped directory is one line: what it holds is counted,
            // never drawn.
            if node.skipped.is_some() {
                continue;
            }
            self.heap.push(Candidate {
                rank,
                node: child,
                parent: id,
            });
        }
        id
    }

    fn rank(&mut self, node: &TreeNode) -> Rank {
        let rel = relative_to(self.context.target, &node.path);
        let bytes = match node.kind {
            NodeKind::File => node.size.unwrap_or(0),
            NodeKind::Directory => self.context.sizes.get(&node.path),
            NodeKind::Symlink => 0,
        };
        self.seq += 1;
        (
            self.context.flagged.holds(&rel),
            bytes,
            node.kind == NodeKind::Directory,
            Reverse(self.seq),
        )
    }
}

fn children(node: &TreeNode) -> &[TreeNode] {
    node.children.as_deref().unwrap_or_default()
}

/// The lines of the open directory `id`, after `prefix`.
fn draw(open: &mut [Open<'_>], id: usize, prefix: &mut String, out: &mut String) {
    let mut shown = std::mem::take(&mut open[id].shown);
    // Directories first, then as they ranked.
    shown.sort_by_key(|(rank, _, _)| Reverse((rank.2, *rank)));
    let (hidden, hidden_bytes) = (open[id].hidden, open[id].hidden_bytes);
    let count = shown.len() + usize::from(hidden > 0);
    for (i, (_, node, child)) in shown.into_iter().enumerate() {
        let last = i + 1 == count;
        out.push('\n');
        out.push_str(prefix);
        out.push_str(if last { "└── " } else { "├── " });
        push_node_label(out, node);
        if let Some(skipped) = node.skipped {
            out.push_str("  [");
            out.push_str(skipped.describe());
            out.push(']');
        }
        if let Some(child) = child
            && !collapsed(&open[child], out)
        {
            let depth = prefix.len();
            prefix.push_str(if last { "    " } else { "│   " });
            draw(open, child, prefix, out);
            prefix.truncate(depth);
        }
    }
    if hidden > 0 {
        out.push('\n');
        out.push_str(prefix);
        out.push_str("└── ... ");
        out.push_str(&hidden.to_string());
        out.push_str(" more");
        if hidden_bytes > 0 {
            out.push_str(" (");
            out.push_str(&human_size(hidden_bytes));
            out.push(')');
        }
    }
}
