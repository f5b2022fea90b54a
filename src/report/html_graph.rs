//! The structure graph as inline SVG that luminos lays out itself (no
//! script, no outside file), in one of two layouts:
//!
//! - the tree's picture (the target, its largest directories, the largest
//!   below each) as columns: the target on top, its directories in a row
//!   under it, each one's own directories stacked below it, so forty boxes
//!   fit in one screen rather than a column a metre long;
//! - any other graph (the synthesis's components) in layers from left to
//!   right, each node beside the nodes it points to.
//!
//! A legend names the colours of coverage. Labels are untrusted and go
//! through [`super::markup::html`], cut to their box (the whole label is
//! the box's tooltip).

use std::fmt::Write as _;

use super::DirCoverage;
use super::graph::{Graph, Node, NodeKindShown};
use super::html_svg::cut;
use super::markup::html;

const MARGIN: f64 = 10.0;

/// Where a box is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Place {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

impl Place {
    fn centre(&self) -> f64 {
        self.x + self.width / 2.0
    }
    fn bottom(&self) -> f64 {
        self.y + self.height
    }
}

/// One edge's path: its `d` attribute and every point it is drawn
/// through (a Bézier curve stays within its control points), so the
/// canvas can be made to hold it.
struct Edge {
    d: String,
    points: Vec<(f64, f64)>,
}

/// The graph, laid out by its kind.
pub(crate) fn graph_svg(graph: &Graph) -> String {
    let is_tree = graph.nodes.first().map(|n| n.kind) == Some(NodeKindShown::Root)
        && graph.nodes.iter().all(|n| n.level <= 2);
    let (places, edges) = if is_tree {
        let places = columns(graph);
        let edges: Vec<Edge> = graph
            .edges
            .iter()
            .map(|&(from, to)| elbow(&places[from], &places[to], graph.nodes[to].level))
            .collect();
        (places, edges)
    } else {
        let places = layers(graph);
        let edges: Vec<Edge> = graph
            .edges
            .iter()
            .map(|&(from, to)| curve(&places[from], &places[to]))
            .collect();
        (places, edges)
    };
    let legend_y = places.iter().map(Place::bottom).fold(0.0, f64::max) + 16.0;
    // The canvas holds every box and every edge (components that depend
    // on each other draw an edge back to the left), and the legend.
    let points = edges.iter().flat_map(|e| e.points.iter().copied());
    let (mut left, mut right, mut bottom) = (0.0f64, legend_end() + MARGIN, legend_y + 24.0);
    for (x, y) in points {
        left = left.min(x - MARGIN);
        right = right.max(x + MARGIN);
        bottom = bottom.max(y + MARGIN);
    }
    for place in &places {
        right = right.max(place.x + place.width + MARGIN);
    }
    let (width, height) = (right - left, bottom);
    let mut svg = format!(
        "<svg class=\"graph\" role=\"img\" aria-label=\"structure\" width=\"{width:.0}\" \
         height=\"{height:.0}\" viewBox=\"{left:.0} 0 {width:.0} {height:.0}\" \
         xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for edge in edges {
        let _ = write!(svg, "<path class=\"edge\" d=\"{}\"/>", edge.d);
    }
    for (node, place) in graph.nodes.iter().zip(&places) {
        draw_node(&mut svg, node, place);
    }
    legend(&mut svg, legend_y);
    svg.push_str("</svg>");
    svg
}

fn class_of(kind: NodeKindShown) -> &'static str {
    match kind {
        NodeKindShown::Root => "node root",
        NodeKindShown::Directory(Some(DirCoverage::Investigated)) => "node investigated",
        NodeKindShown::Directory(Some(DirCoverage::Folded)) => "node folded",
        NodeKindShown::Directory(Some(DirCoverage::Mechanical)) => "node mechanical",
        NodeKindShown::Directory(Some(DirCoverage::None)) => "node none",
        NodeKindShown::Directory(None) | NodeKindShown::Component => "node",
        NodeKindShown::More => "node more",
    }
}

fn draw_node(svg: &mut String, node: &Node, place: &Place) {
    let tooltip = match &node.note {
        Some(note) => format!("{} ({note})", node.label),
        None => node.label.clone(),
    };
    let Place {
        x,
        y,
        width,
        height,
    } = *place;
    let _ = write!(
        svg,
        "<g class=\"{}\"><title>{}</title>\
         <rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{height:.1}\" rx=\"5\"/>",
        class_of(node.kind),
        html(&tooltip)
    );
    // About 7 pixels a character at the label's size.
    let room = ((width - 8.0) / 7.0).max(4.0) as usize;
    let centre = place.centre();
    match &node.note {
        Some(note) => {
            let _ = write!(
                svg,
                "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
                 <text class=\"note\" x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                y + height / 2.0 - 2.0,
                html(&cut(&node.label, room)),
                y + height / 2.0 + 11.0,
                html(&cut(note, room + 2))
            );
        }
        None => {
            let _ = write!(
                svg,
                "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                y + height / 2.0 + 4.0,
                html(&cut(&node.label, room))
            );
        }
    }
    svg.push_str("</g>");
}

/// The legend's entries: each colour's class and what it means.
const LEGEND: [(&str, &str); 4] = [
    ("investigated", "investigated: a loop of its own"),
    ("folded", "folded into a unit"),
    ("mechanical", "mechanical: from the scan"),
    ("none", "no summary"),
];

/// The room one legend entry takes: its swatch, the gap and its text (at
/// about 6.2 pixels a character of the note's size).
fn legend_step(label: &str) -> f64 {
    26.0 + label.len() as f64 * 6.2
}

/// Where the legend's row ends.
fn legend_end() -> f64 {
    MARGIN
        + LEGEND
            .iter()
            .map(|(_, label)| legend_step(label))
            .sum::<f64>()
}

/// The colours of coverage, in a row at `y`.
fn legend(svg: &mut String, y: f64) {
    let mut x = MARGIN;
    for (class, label) in LEGEND {
        let _ = write!(
            svg,
            "<g class=\"node {class}\"><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"14\" height=\"14\" rx=\"3\"/>\
             <text class=\"note\" x=\"{:.1}\" y=\"{:.1}\">{label}</text></g>",
            x + 19.0,
            y + 11.0
        );
        x += legend_step(label);
    }
}

const COLUMN: f64 = 108.0;
const COLUMN_GAP: f64 = 8.0;
const ROOT_WIDTH: f64 = 200.0;
const ROOT_HEIGHT: f64 = 38.0;
const FIRST_HEIGHT: f64 = 36.0;
const SECOND_HEIGHT: f64 = 32.0;
const INDENT: f64 = 12.0;
const STACK_GAP: f64 = 6.0;
const LEVEL_GAP: f64 = 28.0;

/// The tree as columns: the root centred on top, its children in a row,
/// each one's children stacked under it, indented.
fn columns(graph: &Graph) -> Vec<Place> {
    let first: Vec<usize> = children_of(graph, 0);
    let row = first.len().max(1) as f64 * (COLUMN + COLUMN_GAP) - COLUMN_GAP;
    let width = row.max(ROOT_WIDTH);
    let mut places = vec![
        Place {
            x: 0.0,
            y: 0.0,
            width: 0.0,
            height: 0.0
        };
        graph.nodes.len()
    ];
    places[0] = Place {
        x: MARGIN + (width - ROOT_WIDTH) / 2.0,
        y: MARGIN,
        width: ROOT_WIDTH,
        height: ROOT_HEIGHT,
    };
    let first_y = MARGIN + ROOT_HEIGHT + LEVEL_GAP;
    for (i, &node) in first.iter().enumerate() {
        let x = MARGIN + i as f64 * (COLUMN + COLUMN_GAP);
        places[node] = Place {
            x,
            y: first_y,
            width: COLUMN,
            height: FIRST_HEIGHT,
        };
        for (j, &child) in children_of(graph, node).iter().enumerate() {
            places[child] = Place {
                x: x + INDENT,
                y: first_y + FIRST_HEIGHT + STACK_GAP + j as f64 * (SECOND_HEIGHT + STACK_GAP),
                width: COLUMN - INDENT,
                height: SECOND_HEIGHT,
            };
        }
    }
    places
}

fn children_of(graph: &Graph, node: usize) -> Vec<usize> {
    graph
        .edges
        .iter()
        .filter(|(from, _)| *from == node)
        .map(|(_, to)| *to)
        .collect()
}

/// A right-angled connector: from the root down to a bus and down to a
/// first-level box; from a first-level box down its left side and into a
/// box stacked under it.
fn elbow(from: &Place, to: &Place, level: usize) -> Edge {
    if level <= 1 {
        let bus = from.bottom() + LEVEL_GAP / 2.0;
        let (x1, x2) = (from.centre(), to.centre());
        Edge {
            d: format!(
                "M{x1:.1},{:.1} V{bus:.1} H{x2:.1} V{:.1}",
                from.bottom(),
                to.y
            ),
            points: vec![(x1, from.bottom()), (x1, bus), (x2, bus), (x2, to.y)],
        }
    } else {
        let x = from.x + INDENT / 2.0;
        let y = to.y + to.height / 2.0;
        Edge {
            d: format!("M{x:.1},{:.1} V{y:.1} H{:.1}", from.bottom(), to.x),
            points: vec![(x, from.bottom()), (x, y), (to.x, y)],
        }
    }
}

const BOX_WIDTH: f64 = 170.0;
const BOX_HEIGHT: f64 = 38.0;
const LAYER_GAP: f64 = 56.0;
const ROW_GAP: f64 = 10.0;

/// Layers from left to right: the deepest layer stacked in order, and each
/// node before it centred on the nodes it points to in the next layer (or
/// stacked after the one above it), never overlapping the one above it.
fn layers(graph: &Graph) -> Vec<Place> {
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
        .map(|(node, y)| Place {
            x: MARGIN + node.level as f64 * (BOX_WIDTH + LAYER_GAP),
            y,
            width: BOX_WIDTH,
            height: BOX_HEIGHT,
        })
        .collect()
}

/// A curve from the right of one box to the left of another in a later
/// layer; from the left of one box to the right of another in an earlier
/// layer (two components that depend on each other); and between two
/// boxes of one layer, a loop out to the right of both, within the gap
/// before the next layer.
fn curve(from: &Place, to: &Place) -> Edge {
    let (y1, y2) = (from.y + from.height / 2.0, to.y + to.height / 2.0);
    let (x1, x2, c1, c2) = if to.x > from.x {
        let (x1, x2) = (from.x + from.width, to.x);
        let bend = ((x2 - x1) / 2.0).max(20.0);
        (x1, x2, x1 + bend, x2 - bend)
    } else if to.x < from.x {
        let (x1, x2) = (from.x, to.x + to.width);
        let bend = (x1 - x2) / 2.0;
        (x1, x2, x1 - bend, x2 + bend)
    } else {
        let x = from.x + from.width;
        (x, x, x + LAYER_GAP / 2.0, x + LAYER_GAP / 2.0)
    };
    Edge {
        d: format!("M{x1:.1},{y1:.1} C{c1:.1},{y1:.1} {c2:.1},{y2:.1} {x2:.1},{y2:.1}"),
        points: vec![(x1, y1), (c1, y1), (c2, y2), (x2, y2)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(label: &str, level: usize, kind: NodeKindShown) -> Node {
        Node {
            label: label.into(),
            note: None,
            kind,
            level,
        }
    }

    #[test]
    fn layers_put_parents_beside_their_children_without_overlap() {
        let component = NodeKindShown::Component;
        let graph = Graph {
            nodes: vec![
                node("root", 0, component),
                node("a", 1, component),
                node("b", 1, component),
                node("c", 1, component),
            ],
            edges: vec![(0, 1), (0, 2), (0, 3)],
        };
        let at = layers(&graph);
        assert_eq!(at[1].y, MARGIN);
        assert!(at[2].y >= at[1].y + BOX_HEIGHT);
        assert_eq!(at[0].y, at[2].y, "the root is centred on its children");
        assert!(at[0].x < at[1].x);
    }

    /// Every number of every path and box, as (x, y) pairs, against the
    /// canvas the `viewBox` gives.
    fn assert_on_canvas(svg: &str) {
        let view = regex::Regex::new(r#"viewBox="(-?\d+) (-?\d+) (\d+) (\d+)""#).unwrap();
        let caps = view.captures(svg).unwrap();
        let n = |i: usize| caps[i].parse::<f64>().unwrap();
        let (left, top, width, height) = (n(1), n(2), n(3), n(4));
        let pair = regex::Regex::new(r"(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)").unwrap();
        let paths = regex::Regex::new(r#"d="([^"]*)""#).unwrap();
        for path in paths.captures_iter(svg) {
            for point in pair.captures_iter(&path[1]) {
                let (x, y): (f64, f64) = (point[1].parse().unwrap(), point[2].parse().unwrap());
                assert!(
                    x >= left && x <= left + width && y >= top && y <= top + height,
                    "({x}, {y}) off the canvas {left} {top} {width} {height}: {}",
                    &path[1]
                );
            }
        }
        let rects = regex::Regex::new(
            r#"<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)""#,
        )
        .unwrap();
        for rect in rects.captures_iter(svg) {
            let v = |i: usize| rect[i].parse::<f64>().unwrap();
            assert!(v(1) >= left && v(1) + v(3) <= left + width, "{}", &rect[0]);
            assert!(v(2) >= top && v(2) + v(4) <= top + height, "{}", &rect[0]);
        }
    }

    #[test]
    fn components_that_depend_on_each_other_stay_on_the_canvas() {
        let component = NodeKindShown::Component;
        for edges in [
            vec![(0, 1), (1, 0)],
            vec![(0, 1), (1, 2), (2, 0), (2, 1)],
            vec![(0, 1), (0, 2), (1, 2), (2, 1)],
        ] {
            let graph = Graph {
                nodes: vec![
                    node("api", 0, component),
                    node("core", 1, component),
                    node("store", 2, component),
                ],
                edges,
            };
            let graph = Graph {
                nodes: graph
                    .nodes
                    .into_iter()
                    .map(|mut n| {
                        n.level = n.level.min(1);
                        n
                    })
                    .collect(),
                ..graph
            };
            assert_on_canvas(&graph_svg(&graph));
        }
    }

    #[test]
    fn the_tree_stands_in_columns() {
        let dir = NodeKindShown::Directory(None);
        let graph = Graph {
            nodes: vec![
                node("t", 0, NodeKindShown::Root),
                node("a", 1, dir),
                node("a1", 2, dir),
                node("a2", 2, dir),
                node("b", 1, dir),
            ],
            edges: vec![(0, 1), (1, 2), (1, 3), (0, 4)],
        };
        let at = columns(&graph);
        assert_eq!(at[1].y, at[4].y, "first level in a row");
        assert!(at[4].x >= at[1].x + at[1].width, "side by side");
        assert!(
            at[2].y >= at[1].bottom() && at[3].y >= at[2].bottom(),
            "stacked below"
        );
        assert!(at[2].x > at[1].x, "indented");
        assert!(at[0].bottom() < at[1].y);
        let svg = graph_svg(&graph);
        assert_on_canvas(&svg);
        assert_eq!(svg.matches("<path class=\"edge\"").count(), 4);
        assert!(svg.contains("investigated: a loop of its own"));
    }

    /// A narrow graph (a root and one directory) is drawn as wide as its
    /// legend, whose last label ends inside the picture.
    #[test]
    fn the_legend_fits_a_narrow_graph() {
        let graph = Graph {
            nodes: vec![
                node("t", 0, NodeKindShown::Root),
                node("a", 1, NodeKindShown::Directory(None)),
            ],
            edges: vec![(0, 1)],
        };
        let svg = graph_svg(&graph);
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        let (_, last) = LEGEND[LEGEND.len() - 1];
        let at = svg.find(&format!(">{last}</text>")).unwrap();
        let x: f64 = svg[..at]
            .rsplit("<text class=\"note\" x=\"")
            .next()
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            x + last.len() as f64 * 6.2 <= width,
            "the legend ends at {} of {width}",
            x + last.len() as f64 * 6.2
        );
    }
}
