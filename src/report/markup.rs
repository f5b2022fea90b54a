//! Escaping for the formats that give characters a meaning: Markdown (and
//! the Mermaid labels inside it) and HTML. Every file name and every piece
//! of model text is untrusted, so each is written through one of these and
//! shows as the text it is: a file named `<script>` stays text, a summary
//! cannot open a link, a table cell cannot add a column.
//!
//! Control characters are escaped first ([`crate::text`]), as on the
//! terminal, so no format carries them.

use std::fmt::Write as _;

use crate::text::{escape_control, escape_line};

/// Text for HTML element content or a quoted attribute value.
pub(crate) fn html(text: &str) -> String {
    let text = escape_control(text);
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// One line of untrusted text as Markdown inline text: every character
/// Markdown (GitHub's flavour) would read as emphasis, code, a link, an
/// image, HTML, an entity, a table cell or strikethrough is escaped, and so
/// is what would start a block at the start of the line (a heading, a
/// list, a quote, a rule, a code block).
pub(crate) fn md_inline(text: &str) -> String {
    let line = escape_line(text);
    // Leading spaces would make an indented code block.
    let line = line.trim_start();
    let mut out = String::with_capacity(line.len() + 8);
    let block_marker = line_start_marker(line);
    for (i, c) in line.chars().enumerate() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // (Parentheses and `!` only mean something next to brackets,
            // which are escaped.)
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if i == block_marker => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The index (in chars) of the character that would make `line` a
/// heading, a list item, a numbered item, a setext underline or a rule, if
/// any.
fn line_start_marker(line: &str) -> usize {
    let mut chars = line.chars();
    match chars.next() {
        Some('-' | '+' | '=' | '#') => 0,
        Some(c) if c.is_ascii_digit() => {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            let after = line.chars().nth(digits + 1);
            match line.chars().nth(digits) {
                Some('.' | ')') if after.is_none_or(char::is_whitespace) => digits,
                _ => usize::MAX,
            }
        }
        _ => usize::MAX,
    }
}

/// Untrusted text of any length as Markdown paragraphs: each line escaped
/// with [`md_inline`], lines kept as hard breaks, blank lines as paragraph
/// breaks.
pub(crate) fn md_paragraphs(text: &str) -> String {
    let mut paragraphs: Vec<Vec<String>> = vec![Vec::new()];
    for line in text.lines() {
        if line.trim().is_empty() {
            if paragraphs.last().is_some_and(|p| !p.is_empty()) {
                paragraphs.push(Vec::new());
            }
        } else if let Some(current) = paragraphs.last_mut() {
            current.push(md_inline(line));
        }
    }
    paragraphs
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| p.join("\\\n"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Untrusted text as a code span: a backtick fence longer than any run of
/// backticks inside, padded when the text starts or ends with one. Inside a
/// table `|` still splits cells, so it is escaped there (GitHub unescapes
/// it within the span).
pub(crate) fn md_code(text: &str, in_table: bool) -> String {
    let text = escape_line(text);
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') || text.trim().is_empty() {
        " "
    } else {
        ""
    };
    let body = if in_table {
        text.replace('|', "\\|")
    } else {
        text.into_owned()
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// A relative path as a link destination: every byte but letters, digits,
/// `-._~/` percent-encoded, so no path can end the link, become a scheme
/// (`javascript:`) or an autolink.
pub(crate) fn url_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// Untrusted text as a Mermaid label between double quotes: letters,
/// digits, spaces and `/._-:,` stay, everything else becomes an entity
/// code (`#35;`), so no label can close its quotes or its brackets, add an
/// edge or carry markup.
pub(crate) fn mermaid_label(text: &str) -> String {
    let text = escape_line(text);
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_alphanumeric() || " /._-:,".contains(c) {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", c as u32);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_markup_and_quotes() {
        assert_eq!(
            html("<script>alert('x')</script> & \"q\"\x1b"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;\\x1b"
        );
    }

    #[test]
    fn markdown_inline_neutralises_links_html_tables_and_blocks() {
        assert_eq!(
            md_inline("[click](javascript:x) <img src=x> a|b *c* `d` \\"),
            "\\[click\\](javascript:x) &lt;img src=x&gt; a\\|b \\*c\\* \\`d\\` \\\\"
        );
        assert_eq!(md_inline("# title"), "\\# title");
        assert_eq!(md_inline("- item"), "\\- item");
        assert_eq!(md_inline("12. item"), "12\\. item");
        assert_eq!(md_inline("    code"), "code");
        assert_eq!(md_inline("line\nbreak"), "line\\\\nbreak");
        assert_eq!(md_inline("2.5 MB"), "2.5 MB");
    }

    #[test]
    fn paragraphs_keep_lines_and_breaks() {
        assert_eq!(md_paragraphs("one\ntwo\n\n\nthree"), "one\\\ntwo\n\nthree");
    }

    #[test]
    fn code_spans_outlast_the_backticks_inside() {
        assert_eq!(md_code("a.rs", false), "`a.rs`");
        assert_eq!(md_code("a`b", false), "``a`b``");
        assert_eq!(md_code("`x", false), "`` `x ``");
        assert_eq!(md_code("a|b", true), "`a\\|b`");
    }

    #[test]
    fn urls_and_mermaid_labels_are_inert() {
        assert_eq!(url_path("src/my file(1).rs"), "src/my%20file%281%29.rs");
        assert_eq!(url_path("javascript:alert(1)"), "javascript%3Aalert%281%29");
        assert_eq!(
            mermaid_label("a\"]-->b[\"<br>#"),
            "a#34;#93;--#62;b#91;#34;#60;br#62;#35;"
        );
    }
}
