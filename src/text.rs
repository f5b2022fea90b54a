//! Text helpers every layer shares: escaping what comes from files and from
//! the model before it reaches a terminal, and formatting numbers the way the
//! report prints them. Pure functions, no I/O, no dependency on any other
//! module of the crate.

use std::borrow::Cow;

/// Make `text` safe to print on a terminal: control characters (C0 except
/// newline and tab, DEL and C1) become visible escapes such as `\x1b`, so a
/// file name or a model reply cannot move the cursor, change colours or set
/// the window title; the line and paragraph separators and the
/// bidirectional controls ([`is_bidi_control`]) become `\u{2028}`,
/// `\u{202e}`, so a name cannot reorder what a reader sees.
pub(crate) fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_control(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The visible escape of an unsafe character: `\x1b` for one byte's worth,
/// `\u{202e}` above.
fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write;
    let code = c as u32;
    let _ = if code <= 0xff {
        write!(out, "\\x{code:02x}")
    } else {
        write!(out, "\\u{{{code:x}}}")
    };
}

/// The bidirectional embedding, override and isolate controls (U+202A to
/// U+202E, U+2066 to U+2069): invisible, they reverse or reorder the text
/// after them on screen, so `invoice\u{202e}exe.txt` reads `invoicetxt.exe`.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Like [`escape_control`], but a single-line field: newlines and tabs are
/// escaped too, so a file name cannot forge extra report lines.
pub(crate) fn escape_line(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| is_unsafe_control(c) || c == '\n' || c == '\t' || c == '\r')
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe_control(c) => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn is_unsafe_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || c == '\u{2028}'
        || c == '\u{2029}'
        || is_bidi_control(c)
}

/// `text` whole when it has at most `max` bytes; otherwise the longest
/// start of it that fits and ends on a character boundary, trailing white
/// space trimmed, then `mark`.
pub(crate) fn cut_marked(text: &str, max: usize, mark: &str) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{mark}", text[..end].trim_end())
}

/// `1234567` → `1,234,567`, like Python's `{:,}`.
pub fn format_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A regular expression written in our own source. A bad one is a bug that
/// every test using it catches at once, not a condition a run can meet.
#[allow(
    clippy::expect_used,
    reason = "the pattern is a constant; its tests compile it"
)]
pub(crate) fn constant_regex(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a constant pattern compiles")
}

/// A span of time as people read it, to the second: `0s`, `42s`,
/// `4m 05s`, `1h 02m` (the seconds no longer matter past an hour).
pub(crate) fn format_duration(span: std::time::Duration) -> String {
    let secs = span.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// Bytes in lowercase hex, two digits each: how digests name cache files
/// and batch requests.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            escape_control("hello\nworld\t!"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn escape_sequences_are_neutralized() {
        assert_eq!(escape_control("a\x1b[31mred\x07"), "a\\x1b[31mred\\x07");
        assert_eq!(escape_control("cr\rhere"), "cr\\x0dhere");
        assert_eq!(escape_control("c1\u{9b}31m"), "c1\\x9b31m");
    }

    #[test]
    fn thousands_like_python() {
        for (n, shown) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (123_456, "123,456"),
            (1_234_567, "1,234,567"),
            (u64::MAX, "18,446,744,073,709,551,615"),
        ] {
            assert_eq!(format_thousands(n), shown, "{n}");
        }
    }

    #[test]
    fn durations_read_to_the_second() {
        use std::time::Duration;
        assert_eq!(format_duration(Duration::from_millis(999)), "0s");
        assert_eq!(format_duration(Duration::from_secs(42)), "42s");
        assert_eq!(format_duration(Duration::from_secs(245)), "4m 05s");
        assert_eq!(format_duration(Duration::from_secs(3720 + 59)), "1h 02m");
        assert_eq!(format_duration(Duration::from_secs(86_400 * 2)), "48h 00m");
    }

    #[test]
    fn bidirectional_controls_are_escaped() {
        assert_eq!(
            escape_control("invoice\u{202e}exe.txt"),
            "invoice\\u{202e}exe.txt"
        );
        assert_eq!(
            escape_line("a\u{2066}b\u{2069}\u{202a}"),
            "a\\u{2066}b\\u{2069}\\u{202a}"
        );
        assert_eq!(escape_control("line\u{2028}sep"), "line\\u{2028}sep");
        for c in ['\u{2029}', '\u{200e}', '\u{2065}', '\u{206a}', 'é'] {
            assert!(!is_bidi_control(c), "{c:?}");
        }
    }

    #[test]
    fn single_line_fields_escape_newlines() {
        assert_eq!(escape_line("evil\nname\t\x1b"), "evil\\nname\\t\\x1b");
    }
}
