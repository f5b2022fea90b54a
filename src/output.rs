//! Writing to the user: the report on stdout or to a file, and one-line
//! errors on stderr (escaped with [`crate::text`], so they cannot drive the
//! terminal).
//!
//! stdout carries only the report. A closed pipe (`luminos --json | head`) is
//! a clean exit, not an error.

use std::io::{self, Write};
use std::path::Path;

use crate::text::escape_control;

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
pub(crate) fn write_stdout(text: &str) -> io::Result<()> {
    write_stdout_with(|out| out.write_all(text.as_bytes()))
}

/// Like [`write_stdout`], with the report produced by `write` straight into a
/// buffered stdout (a large JSON report is never held whole in memory).
pub(crate) fn write_stdout_with(
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
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
pub(crate) fn write_file_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, std::fs::File::create(path)?);
    write(&mut out)?;
    out.write_all(b"\n")?;
    out.flush()
}
