//! The HTML report's pictures, as inline SVG that luminos computes itself
//! (no script, no outside file): horizontal bar charts and the structure
//! graph in a simple layered layout, one column per level, each parent
//! level with its children.
//!
//! Labels are untrusted (file names, model text) and go through
//! [`super::markup::html`]; a label too long for its box is cut, and the
//! whole of it is the box's tooltip.

use std::fmt::Write as _;

use super::graph::{Graph, NodeKindShown};
use super::markup::html;
use super::{DirCoverage, shape::bar_length};

/// One bar: its label, its value, the text shown for the value, and
/// whether it is drawn as set apart (an ignored directory).
pub(crate) struct Bar {
    pub label: String,
    pub value: u64,
    pub shown: String,
    pub apart: bool,
}

const CHART_WIDTH: usize = 345;
const LABEL_WIDTH: usize = 120;
const BAR_ROOM: usize = 120;
const ROW: usize = 22;

/// A horizontal bar chart, bars in proportion to the largest value.
pub(crate) fn bar_chart(title: &str, bars: &[Bar]) -> String {
    let height = bars.len() * ROW + 8;
    let max = bars.iter().map(|b| b.value).max().unwrap_or(0);
    let mut svg = format!(
        "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" width=\"{CHART_WIDTH}\" \
         height=\"{height}\" viewBox=\"0 0 {CHART_WIDTH} {height}\" \
         xmlns=\"http://www.w3.org/2000/svg\">",
        html(title)
    );
    for (i, bar) in bars.iter().enumerate() {
        let y = 4 + i * ROW;
        let length = bar_length(bar.value, max, BAR_ROOM);
        let _ = write!(
            svg,
            "<g><title>{}: {}</title><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{length}\" height=\"{}\" rx=\"2\"/>\
             <text class=\"value\" x=\"{}\" y=\"{}\">{}</text></g>",
            html(&bar.label),
            html(&bar.shown),
            LABEL_WIDTH - 6,
            y + 15,
            html(&cut(&bar.label, 18)),
            if bar.apart { "bar apart" } else { "bar" },
            LABEL_WIDTH,
            y + 3,
            ROW - 6,
            LABEL_WIDTH + length + 6,
            y + 15,
            html(&bar.shown),
        );
    }
    svg.push_str("</svg>");
    svg
}

const BOX_WIDTH: f64 = 170.0;
const BOX_HEIGHT: f64 = 38.0;
const COLUMN_GAP: f64 = 56.0;
const ROW_GAP: f64 = 10.0;
const MARGIN: f64 = 10.0;

/// The structure graph, left to right by level.
pub(crate) fn graph_svg(graph: &Graph) -> String {
    let positions = layout(graph);
    let width = positions
        .iter()
        .map(|(x, _)| x + BOX_WIDTH + MARGIN)
        .fold(0.0, f64::max);
    let height = positions
        .iter()
        .map(|(_, y)| y + BOX_HEIGHT + MARGIN)
        .fold(0.0, f64::max);
    let mut svg = format!(
        "<svg class=\"graph\" role=\"img\" aria-label=\"structure\" width=\"{width:.0}\" \
         height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" \
         xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for &(from, to) in &graph.edges {
        let (fx, fy) = positions[from];
        let (tx, ty) = positions[to];
        let (x1, y1) = (fx + BOX_WIDTH, fy + BOX_HEIGHT / 2.0);
        let (x2, y2) = (tx, ty + BOX_HEIGHT / 2.0);
        let bend = ((x2 - x1).abs() / 2.0).max(20.0);
        let _ = write!(
            svg,
            "<path class=\"edge\" d=\"M{x1:.1},{y1:.1} C{:.1},{y1:.1} {:.1},{y2:.1} {x2:.1},{y2:.1}\"/>",
            x1 + bend,
            x2 - bend
        );
    }
    for (node, &(x, y)) in graph.nodes.iter().zip(&positions) {
        let class = match node.kind {
            NodeKindShown::Root => "node root",
            NodeKindShown::Directory(Some(DirCoverage::Investigated)) => "node investigated",
            NodeKindShown::Directory(Some(DirCoverage::Folded)) => "node folded",
            NodeKindShown::Directory(Some(DirCoverage::Mechanical)) => "node mechanical",
            NodeKindShown::Directory(Some(DirCoverage::None)) => "node none",
            NodeKindShown::Directory(None) | NodeKindShown::Component => "node",
            NodeKindShown::More => "node more",
        };
        let tooltip = match &node.note {
            Some(note) => format!("{} ({note})", node.label),
            None => node.label.clone(),
        };
        let _ = write!(
            svg,
            "<g class=\"{class}\"><title>{}</title>\
             <rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{BOX_WIDTH}\" height=\"{BOX_HEIGHT}\" rx=\"5\"/>",
            html(&tooltip)
        );
        let centre = x + BOX_WIDTH / 2.0;
        match &node.note {
            Some(note) => {
                let _ = write!(
                    svg,
                    "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
                     <text class=\"note\" x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    y + 16.0,
                    html(&cut(&node.label, 24)),
                    y + 30.0,
                    html(&cut(note, 28))
                );
            }
            None => {
                let _ = write!(
                    svg,
                    "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    y + 23.0,
                    html(&cut(&node.label, 24))
                );
            }
        }
        svg.push_str("</g>");
    }
    svg.push_str("</svg>");
    svg
}

/// The top-left corner of each node: columns by level; the deepest column
/// stacked in order, and each node above centred on the nodes it points
/// to in the next column (or stacked after the one before it), never
/// overlapping the one before it.
fn layout(graph: &Graph) -> Vec<(f64, f64)> {
    let levels = graph.nodes.iter().map(|n| n.level).max().unwrap_or(0);
    let mut y = vec![0.0f64; graph.nodes.len()];
    for level in (0..=levels).rev() {
        let mut next_free = MARGIN;
        for (i, node) in graph.nodes.iter().enumerate() {
            if node.level != level {
                continue;
            }
            let below: Vec<f64> = graph
                .edges
                .iter()
                .filter(|(from, to)| *from == i && graph.nodes[*to].level == level + 1)
                .map(|(_, to)| y[*to])
                .collect();
            let wanted = if below.is_empty() {
                next_free
            } else {
                below.iter().sum::<f64>() / below.len() as f64
            };
            y[i] = wanted.max(next_free);
            next_free = y[i] + BOX_HEIGHT + ROW_GAP;
        }
    }
    graph
        .nodes
        .iter()
        .zip(y)
        .map(|(node, y)| (MARGIN + node.level as f64 * (BOX_WIDTH + COLUMN_GAP), y))
        .collect()
}

/// `text` cut to `chars` characters, with `…` when it was longer.
fn cut(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        text.to_string()
    } else {
        let mut out: String = text.chars().take(chars.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::graph::Node;

    fn node(label: &str, level: usize) -> Node {
        Node {
            label: label.into(),
            note: None,
            kind: NodeKindShown::Component,
            level,
        }
    }

    #[test]
    fn parents_sit_beside_their_children_and_nothing_overlaps() {
        let graph = Graph {
            nodes: vec![node("root", 0), node("a", 1), node("b", 1), node("c", 1)],
            edges: vec![(0, 1), (0, 2), (0, 3)],
        };
        let at = layout(&graph);
        assert_eq!(at[1].1, MARGIN);
        assert!(at[2].1 >= at[1].1 + BOX_HEIGHT);
        assert_eq!(at[0].1, at[2].1, "the root is centred on its children");
        assert!(at[0].0 < at[1].0);
    }

    #[test]
    fn bars_are_proportional_and_labels_escaped() {
        let svg = bar_chart(
            "t",
            &[
                Bar {
                    label: "<b>".into(),
                    value: 100,
                    shown: "100".into(),
                    apart: false,
                },
                Bar {
                    label: "x".into(),
                    value: 50,
                    shown: "50".into(),
                    apart: true,
                },
            ],
        );
        assert!(svg.contains("width=\"120\""));
        assert!(svg.contains("width=\"60\""));
        assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
        assert!(svg.contains("class=\"bar apart\""));
    }
}
