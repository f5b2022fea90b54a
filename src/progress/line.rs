//! The live line's layout: which of its fields a terminal `width` has room
//! for. Pure, so the widths users meet (60, 80, 200 columns) are unit
//! tests, not guesses.
//!
//! A line is a prefix and fields. When they do not fit, text that may be
//! shortened (a list of directory names) is cut to fit with an ellipsis,
//! as long as enough of it stays; otherwise whole fields are dropped, the
//! least important first. A figure is never cut inside: `$0.52` is shown
//! whole or not at all. The last column is never written,
//! because some terminals wrap there, and a wrapped live line is what
//! scrambles the scrollback when it is redrawn.

use unicode_width::UnicodeWidthStr;

/// The fewest characters a shortened field keeps before its ellipsis;
/// below that the field is dropped instead.
const MIN_KEPT: usize = 12;

/// How a field may give way when the line is too long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Give {
    /// Never dropped nor cut (the count, the spend).
    Never,
    /// Dropped whole; a higher rank goes first.
    Drop(u8),
    /// Shortened from its end with `…`, or dropped whole (rank as above)
    /// when too little of it would be left. Only for text, never figures.
    Cut(u8),
}

/// One field of a live line, with the separator shown before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LiveField {
    pub sep: &'static str,
    pub text: String,
    pub give: Give,
}

impl LiveField {
    /// A field that always stays.
    pub(crate) fn kept(sep: &'static str, text: impl Into<String>) -> LiveField {
        LiveField {
            sep,
            text: text.into(),
            give: Give::Never,
        }
    }

    /// A field dropped whole when the line is short of room (rank: higher
    /// goes first).
    pub(crate) fn droppable(sep: &'static str, text: impl Into<String>, rank: u8) -> LiveField {
        LiveField {
            sep,
            text: text.into(),
            give: Give::Drop(rank),
        }
    }

    /// A field that may be shortened, or dropped when too short.
    pub(crate) fn cuttable(sep: &'static str, text: impl Into<String>, rank: u8) -> LiveField {
        LiveField {
            sep,
            text: text.into(),
            give: Give::Cut(rank),
        }
    }
}

/// Terminal columns `text` takes.
pub(crate) fn columns(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// The line of `prefix` and `fields` for a terminal `width` columns wide.
/// Its width is always below `width`; without room for the prefix, it is
/// empty.
pub(crate) fn lay_out(prefix: &str, fields: &[LiveField], width: usize) -> String {
    let room = width.saturating_sub(1);
    if columns(prefix) > room {
        return String::new();
    }
    let mut shown: Vec<LiveField> = fields.to_vec();
    loop {
        let line = join(prefix, &shown);
        let over = columns(&line).saturating_sub(room);
        if over == 0 {
            return line;
        }
        // Text is shortened before anything goes: the least important
        // field that may be cut, as long as enough of it stays.
        if let Some(at) = least_important(&shown, true) {
            let keep = columns(&shown[at].text).saturating_sub(over + 1);
            if keep >= MIN_KEPT {
                shown[at].text = format!("{}…", take_columns(&shown[at].text, keep));
                continue;
            }
        }
        match least_important(&shown, false) {
            Some(at) => {
                shown.remove(at);
            }
            // Only fields that always stay are left: keep those that fit,
            // from the first, and never cut one.
            None => return fitting_prefix(prefix, &shown, room),
        }
    }
}

/// The prefix and the fields, each after its separator.
fn join(prefix: &str, fields: &[LiveField]) -> String {
    let mut line = prefix.to_string();
    for (n, field) in fields.iter().enumerate() {
        if n == 0 {
            line.push(' ');
        } else {
            line.push_str(field.sep);
        }
        line.push_str(&field.text);
    }
    line
}

/// The index of the field to give way first: the highest rank (the last
/// one among equals); only those that may be cut when `cut_only`.
fn least_important(fields: &[LiveField], cut_only: bool) -> Option<usize> {
    fields
        .iter()
        .enumerate()
        .filter_map(|(n, field)| match field.give {
            Give::Never => None,
            Give::Drop(_) if cut_only => None,
            Give::Drop(rank) | Give::Cut(rank) => Some((rank, n)),
        })
        .max()
        .map(|(_, n)| n)
}

/// The longest start of `text` that takes at most `max` columns.
fn take_columns(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += columns(c.encode_utf8(&mut [0; 4]));
        if used > max {
            return &text[..at];
        }
    }
    text
}

/// The prefix and as many whole fields, from the first, as `room` holds.
fn fitting_prefix(prefix: &str, fields: &[LiveField], room: usize) -> String {
    let mut kept = 0;
    while kept < fields.len() && columns(&join(prefix, &fields[..=kept])) <= room {
        kept += 1;
    }
    join(prefix, &fields[..kept])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dir board's fields as `Progress` builds them, 41 directories in.
    fn board() -> Vec<LiveField> {
        vec![
            LiveField::droppable("", "[=========>          ]", 4),
            LiveField::kept(" ", "17/41 dirs"),
            LiveField::kept(" | ", "$0.52"),
            LiveField::droppable(" | ", "1,234,567 tokens", 3),
            LiveField::cuttable(" | ", "running: pkg0/part1, pkg3/part2, pkg7", 2),
        ]
    }

    #[test]
    fn at_200_columns_everything_shows() {
        let line = lay_out("  [AI]", &board(), 200);
        assert_eq!(
            line,
            "  [AI] [=========>          ] 17/41 dirs | $0.52 | 1,234,567 tokens | running: \
             pkg0/part1, pkg3/part2, pkg7"
        );
    }

    #[test]
    fn at_80_columns_the_bar_goes_and_the_running_list_is_shortened() {
        let line = lay_out("  [AI]", &board(), 80);
        assert_eq!(
            line,
            "  [AI] 17/41 dirs | $0.52 | 1,234,567 tokens | running: pkg0/part1, pkg3/part2…"
        );
        assert_eq!(columns(&line), 79);
    }

    #[test]
    fn at_60_columns_whole_fields_go_and_no_figure_is_cut() {
        let line = lay_out("  [AI]", &board(), 60);
        // The token count is dropped whole, not cut.
        assert_eq!(
            line,
            "  [AI] 17/41 dirs | $0.52 | running: pkg0/part1, pkg3/part…"
        );
        for width in 1..=200 {
            let line = lay_out("  [AI]", &board(), width);
            assert!(columns(&line) < width.max(1), "{width}: {line}");
            if line.contains('$') {
                assert!(line.contains("$0.52"), "{width}: {line}");
            }
            if line.contains("tokens") {
                assert!(line.contains("1,234,567 tokens"), "{width}: {line}");
            }
            if line.contains("dirs") {
                assert!(line.contains("17/41 dirs"), "{width}: {line}");
            }
        }
    }

    #[test]
    fn a_narrow_terminal_keeps_whole_fields_only() {
        assert_eq!(lay_out("  [AI]", &board(), 20), "  [AI] 17/41 dirs");
        assert_eq!(lay_out("  [AI]", &board(), 7), "  [AI]");
        assert_eq!(lay_out("  [AI]", &board(), 6), "");
        assert_eq!(lay_out("  [AI]", &board(), 0), "");
    }

    #[test]
    fn wide_characters_count_as_two_columns() {
        let fields = vec![LiveField::cuttable(
            " ",
            "目录/子目录/文件名称很长的路径",
            1,
        )];
        for width in [10, 20, 30] {
            let line = lay_out("[scan]", &fields, width);
            assert!(columns(&line) < width, "{width}: {line}");
        }
        assert_eq!(take_columns("目录a", 3), "目");
    }
}
