//! Writing to the user: the report on stdout or to a file, one-line errors on
//! stderr, and the escaping that keeps file names and model text from driving
//! the terminal.
//!
//! stdout carries only the report. A closed pipe (`luminos --json | head`) is
//! a clean exit, not an error.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

/// Print a top-level error as one line on stderr: `Error: <chain>`.
pub fn print_error(err: &anyhow::Error) {
    // `{:#}` joins the context chain on one line.
    let _ = writeln!(
        io::stderr().lock(),
        "Error: {}",
        escape_control(&format!("{err:#}"))
    );
}

/// Write the report and a trailing newline to stdout. A broken pipe means the
/// reader has seen enough, so it counts as success.
pub fn write_stdout(text: &str) -> io::Result<()> {
    write_stdout_with(|out| out.write_all(text.as_bytes()))
}

/// Like [`write_stdout`], with the report produced by `write` straight into a
/// buffered stdout (a large JSON report is never held whole in memory).
pub fn write_stdout_with(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let result = write(&mut out)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Write the report produced by `write` and a trailing newline to `path`,
/// replacing it.
pub fn write_file_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, std::fs::File::create(path)?);
    write(&mut out)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Make `text` safe to print on a terminal: control characters (C0 except
/// newline and tab, DEL and C1) become visible escapes such as `\x1b`, so a
/// file name or a model reply cannot move the cursor, change colours or set
/// the window title.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_control(c) {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Like [`escape_control`], but a single-line field: newlines and tabs are
/// escaped too, so a file name cannot forge extra report lines.
pub fn escape_line(text: &str) -> Cow<'_, str> {
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
            c if is_unsafe_control(c) => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn is_unsafe_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{2028}' || c == '\u{2029}'
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn single_line_fields_escape_newlines() {
        assert_eq!(escape_line("evil\nname\t\x1b"), "evil\\nname\\t\\x1b");
    }
}
