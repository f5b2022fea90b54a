//! The terminal report fitted to a width: every line of at most that many
//! columns (as a terminal counts them: [`unicode_width`]). A line of prose
//! is broken at spaces, its continuation indented under the text it
//! continues; a line of the tree (box-drawing connectors) or a rule is cut
//! instead, with `…`, since a broken tree line would read as another entry.
//! A word wider than the whole line (a long path) keeps a line of its own.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The narrowest width the report is laid out for: below it, lines are
/// laid out for this many columns (and wrap in the terminal).
pub(crate) const MIN_WIDTH: usize = 40;

/// The width a report gets when it is not going to a terminal (a pipe, a
/// file).
pub(crate) const DEFAULT_WIDTH: usize = 100;

/// `lines` with every line fitted to `width` columns.
pub(crate) fn fit_lines(lines: &[String], width: usize) -> Vec<String> {
    let width = width.max(MIN_WIDTH);
    let mut out = Vec::with_capacity(lines.len());
    for block in lines {
        // A pushed string may hold several lines (the tree).
        for line in block.split('\n') {
            fit_line(line, width, &mut out);
        }
    }
    out
}

fn fit_line(line: &str, width: usize, out: &mut Vec<String>) {
    if line.width() <= width {
        out.push(line.to_string());
    } else if is_drawing(line) {
        out.push(cut(line, width));
    } else {
        wrap(line, width, out);
    }
}

/// A tree line or a rule: cut, never wrapped.
fn is_drawing(line: &str) -> bool {
    let trimmed = line.trim();
    line.contains(['├', '└', '│'])
        || (!trimmed.is_empty() && trimmed.chars().all(|c| c == '=' || c == '-'))
}

/// `line` cut to `width` columns, the last one an ellipsis.
fn cut(line: &str, width: usize) -> String {
    let mut kept = String::new();
    let mut used = 0;
    for c in line.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        kept.push(c);
        used += w;
    }
    kept.push('…');
    kept
}

/// Where a continuation of `line` starts: under the text after its
/// indentation, after a `- ` bullet, or after a `[SEVERITY] ` tag.
fn hang(line: &str) -> usize {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    if rest.starts_with("- ") {
        return indent + 2;
    }
    if rest.starts_with('[')
        && let Some(close) = rest.find("] ").filter(|at| *at < 12)
    {
        return indent + close + 2;
    }
    indent
}

/// `line` broken at spaces into lines of at most `width` columns, the
/// spacing inside each piece kept as it was.
fn wrap(line: &str, width: usize, out: &mut Vec<String>) {
    let indent = line.len() - line.trim_start_matches(' ').len();
    // Narrow widths keep at least half the line for text.
    let hang = " ".repeat(hang(line).min(width / 2));
    let mut rest = line;
    let mut prefix = "";
    loop {
        let room = width - prefix.len();
        if rest.width() <= room {
            out.push(format!("{prefix}{rest}"));
            return;
        }
        // The first line's indentation is not a place to break.
        let skip = if prefix.is_empty() { indent } else { 0 };
        let at = last_break(rest, room, skip).or_else(|| {
            // A word wider than the room: it ends at the next space.
            rest[skip..].find(' ').map(|at| at + skip)
        });
        let Some(at) = at.filter(|at| *at > skip) else {
            out.push(format!("{prefix}{rest}"));
            return;
        };
        out.push(format!("{prefix}{}", rest[..at].trim_end()));
        rest = rest[at..].trim_start();
        if rest.is_empty() {
            return;
        }
        prefix = &hang;
    }
}

/// The byte index of the last space past `skip` at which `text` can break
/// to fit `room` columns.
fn last_break(text: &str, room: usize, skip: usize) -> Option<usize> {
    let mut used = 0;
    let mut found = None;
    for (i, c) in text.char_indices() {
        // `text[..i]` is `used` columns wide.
        if used > room {
            break;
        }
        if c == ' ' && i > skip {
            found = Some(i);
        }
        used += c.width().unwrap_or(0);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(text: &str, width: usize) -> Vec<String> {
        fit_lines(&[text.to_string()], width)
    }

    #[test]
    fn prose_wraps_at_spaces_under_its_text() {
        let lines = fit(
            "  Coverage: 12 directories investigated by a loop of their own, 30 folded into a unit.",
            40,
        );
        assert_eq!(
            lines,
            [
                "  Coverage: 12 directories investigated",
                "  by a loop of their own, 30 folded into",
                "  a unit.",
            ]
        );
        assert!(lines.iter().all(|l| l.width() <= 40));
        assert_eq!(
            fit(
                "    [CRITICAL] A registry token in plain text, in a file anyone can read.",
                40
            ),
            [
                "    [CRITICAL] A registry token in plain",
                "               text, in a file anyone",
                "               can read.",
            ]
        );
        assert_eq!(
            fit("  - one item of a list that goes on and on", 40),
            ["  - one item of a list that goes on and", "    on"]
        );
    }

    #[test]
    fn tree_lines_and_rules_are_cut_and_long_words_kept() {
        assert_eq!(
            fit(
                "│   ├── a-very-long-file-name-that-will-not-fit.txt  (12 B)",
                40
            ),
            ["│   ├── a-very-long-file-name-that-will…"]
        );
        assert_eq!(fit(&"=".repeat(60), 40), ["=".repeat(39) + "…"]);
        let path = format!("  {}", "x".repeat(50));
        assert_eq!(
            fit(&format!("{path} end"), 40),
            [path.clone(), "  end".to_string()]
        );
        // Wide characters count as two columns.
        let wide = fit(&format!("  {}", "日本語 ".repeat(10)), 40);
        assert!(wide.iter().all(|l| l.width() <= 40), "{wide:?}");
    }

    #[test]
    fn a_narrow_width_is_laid_out_at_the_minimum() {
        let lines = fit(&format!("  {}", "word ".repeat(30)), 10);
        assert!(lines.iter().all(|l| l.width() <= MIN_WIDTH));
        assert!(lines.len() > 1);
    }
}
