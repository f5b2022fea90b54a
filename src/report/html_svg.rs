//! The HTML report's charts, as inline SVG that luminos computes itself
//! (no script, no outside file): horizontal bar charts, each bar in
//! proportion to the largest. The structure graph is `html_graph`'s.
//!
//! Labels are untrusted (file names, model text) and go through
//! [`super::markup::html`]; a label too long for its room is cut
//! ([`cut`]), and the whole of it is the bar's tooltip.

use std::fmt::Write as _;

use super::markup::html;
use super::shape::bar_length;

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

/// `text` cut to `chars` characters, with `…` when it was longer.
pub(super) fn cut(text: &str, chars: usize) -> String {
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
