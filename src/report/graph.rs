//! The picture of the structure both Markdown (as a Mermaid graph) and HTML
//! (as inline SVG) draw: the main components and how they relate.
//!
//! It comes from the synthesis's components when the model named them
//! (the `components` domain section, [`synthesis_components`]); otherwise
//! it is the top two levels of the tree, largest first, each directory
//! with its coverage. This module only
//! decides the nodes, the edges and each node's level; drawing is the
//! formats' (`markdown`, `html_svg`).

use std::collections::HashMap;

use super::shape::{Sizes, relative_to};
use super::{DirCoverage, Report};
use crate::scan::{NodeKind, TreeNode};

/// Directories shown on the first level below the target.
const FIRST_LEVEL: usize = 8;
/// Directories shown below each of those.
const SECOND_LEVEL: usize = 4;
/// Components shown at most.
const COMPONENTS: usize = 24;

/// What a node stands for, which sets how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeKindShown {
    /// The target itself.
    Root,
    /// A directory, with how it got its summary (`None`: no investigation).
    Directory(Option<DirCoverage>),
    /// A component the synthesis named.
    Component,
    /// `N more` directories left out.
    More,
}

/// One box of the picture.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// Untrusted text: each format escapes it.
    pub label: String,
    /// A second line (the coverage), untrusted too.
    pub note: Option<String>,
    pub kind: NodeKindShown,
    /// Column of a layered drawing, from 0.
    pub level: usize,
}

/// The nodes and the edges (`from` relates to `to`: contains or uses).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Graph {
    pub nodes: Vec<Node>,
    pub edges: Vec<(usize, usize)>,
}

/// One component as the synthesis named it, where it lives, and the
/// names of the components it depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamedComponent {
    pub name: String,
    pub path: Option<String>,
    pub depends_on: Vec<String>,
}

/// The components the synthesis named (its `components` section), with
/// what each depends on; empty when it named none.
pub(crate) fn synthesis_components(report: &Report) -> Vec<NamedComponent> {
    report
        .ai_sections
        .components
        .iter()
        .map(|c| NamedComponent {
            name: c.name.clone(),
            path: c.path.clone(),
            depends_on: c.depends_on.clone(),
        })
        .collect()
}

/// The picture for `report`: the synthesis's components when it named
/// some, else the top two levels of the tree.
pub(crate) fn structure_graph(report: &Report, target: &str) -> Graph {
    let components = synthesis_components(report);
    if components.is_empty() {
        tree_graph(report, target)
    } else {
        component_graph(&components)
    }
}

/// The target, its largest directories, and the largest below each, with
/// their coverage; `N more` nodes for what is left out.
pub(crate) fn tree_graph(report: &Report, target: &str) -> Graph {
    let sizes = Sizes::of(report, target);
    let coverage: HashMap<&str, DirCoverage> = report
        .directories
        .iter()
        .map(|d| (d.path.as_str(), d.coverage))
        .collect();
    let investigated = !report.directories.is_empty();
    let mut graph = Graph::default();
    let root = &report.scan.tree;
    graph.nodes.push(Node {
        label: format!("{}/", root.name),
        note: coverage
            .get(".")
            .map(|c| c.as_str().to_string())
            .filter(|_| investigated),
        kind: NodeKindShown::Root,
        level: 0,
    });
    let directory = |node: &TreeNode, level: usize| {
        let rel = relative_to(target, &node.path);
        let covered = investigated.then(|| coverage.get(rel.as_str()).copied().unwrap_or_default());
        Node {
            label: format!("{}/", node.name),
            note: covered.map(|c| c.as_str().to_string()),
            kind: NodeKindShown::Directory(covered),
            level,
        }
    };
    for (first, hidden) in largest_dirs(root, &sizes, FIRST_LEVEL) {
        let Some(first) = first else {
            add_more(&mut graph, 0, hidden, 1);
            continue;
        };
        let at = graph.nodes.len();
        graph.nodes.push(directory(first, 1));
        graph.edges.push((0, at));
        for (second, hidden) in largest_dirs(first, &sizes, SECOND_LEVEL) {
            match second {
                Some(second) => {
                    graph.edges.push((at, graph.nodes.len()));
                    graph.nodes.push(directory(second, 2));
                }
                None => add_more(&mut graph, at, hidden, 2),
            }
        }
    }
    graph
}

/// The subdirectories of `node`, the `keep` largest first (ties in name
/// order), then `(None, n)` when `n` more were left out.
fn largest_dirs<'a>(
    node: &'a TreeNode,
    sizes: &Sizes<'_>,
    keep: usize,
) -> Vec<(Option<&'a TreeNode>, usize)> {
    let mut dirs: Vec<&TreeNode> = node
        .children
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|child| child.kind == NodeKind::Directory)
        .collect();
    dirs.sort_by_key(|dir| std::cmp::Reverse(sizes.get(&dir.path)));
    let hidden = dirs.len().saturating_sub(keep);
    let mut shown: Vec<(Option<&TreeNode>, usize)> = dirs
        .into_iter()
        .take(keep)
        .map(|dir| (Some(dir), 0))
        .collect();
    if hidden > 0 {
        shown.push((None, hidden));
    }
    shown
}

fn add_more(graph: &mut Graph, parent: usize, hidden: usize, level: usize) {
    graph.edges.push((parent, graph.nodes.len()));
    graph.nodes.push(Node {
        label: format!("{hidden} more"),
        note: None,
        kind: NodeKindShown::More,
        level,
    });
}

/// The components as nodes, an edge from each to what it depends on (by
/// name, ignoring case; unknown names and self-dependencies are dropped),
/// each on the level after the deepest component that depends on it.
pub(crate) fn component_graph(components: &[NamedComponent]) -> Graph {
    let components = &components[..components.len().min(COMPONENTS)];
    let index: HashMap<String, usize> = components
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.to_lowercase(), i))
        .collect();
    let mut edges = Vec::new();
    for (from, component) in components.iter().enumerate() {
        for name in &component.depends_on {
            if let Some(&to) = index.get(&name.to_lowercase())
                && to != from
                && !edges.contains(&(from, to))
            {
                edges.push((from, to));
            }
        }
    }
    // Longest path from a component nothing depends on; a cycle stops
    // growing after as many rounds as there are components.
    let mut levels = vec![0usize; components.len()];
    for _ in 0..components.len() {
        let mut changed = false;
        for &(from, to) in &edges {
            if levels[to] < levels[from] + 1 && levels[from] + 1 < components.len() {
                levels[to] = levels[from] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    Graph {
        nodes: components
            .iter()
            .zip(levels)
            .map(|(c, level)| Node {
                label: c.name.clone(),
                note: c.path.clone(),
                kind: NodeKindShown::Component,
                level,
            })
            .collect(),
        edges,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(name: &str, uses: &[&str]) -> NamedComponent {
        NamedComponent {
            name: name.into(),
            path: None,
            depends_on: uses.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn components_are_layered_by_what_depends_on_them() {
        let graph = component_graph(&[
            component("CLI", &["engine", "report"]),
            component("Engine", &["API client", "engine", "nowhere"]),
            component("API client", &[]),
            component("Report", &["Engine"]),
        ]);
        let levels: Vec<(&str, usize)> = graph
            .nodes
            .iter()
            .map(|n| (n.label.as_str(), n.level))
            .collect();
        assert_eq!(
            levels,
            [("CLI", 0), ("Engine", 2), ("API client", 3), ("Report", 1)]
        );
        assert_eq!(graph.edges, [(0, 1), (0, 3), (1, 2), (3, 1)]);
        // A cycle ends.
        let cycle = component_graph(&[component("a", &["b"]), component("b", &["a"])]);
        assert!(cycle.nodes.iter().all(|n| n.level < 2));
    }
}
