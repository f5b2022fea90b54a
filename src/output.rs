//! Writing to the user: the report on stdout or to a file, and one-line
//! errors on stderr (escaped with [`crate::text`], so they cannot drive the
//! terminal).
//!
//! stdout carries only the report. A closed pipe (`luminos --json | head`) is
//! a clean exit, not an error. A report file (`-o`) is checked before the
//! run spends anything ([`check_output_file`]) and replaced atomically
//! ([`write_file_with`]), so a failed write never destroys the old one.

use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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

/// Why the report could not go to `-o FILE`, found before any work is done.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the report to '{}': {reason}", escape_control(&path.to_string_lossy()))]
pub(crate) struct OutputFileError {
    path: PathBuf,
    reason: String,
}

/// Check that the report can be written to `path` before the run spends
/// anything on it: its directory exists and takes a new file (the report is
/// written beside it and renamed into place), it is not a directory, and an
/// existing file can be written. A device or a pipe (`/dev/stdout`) is
/// written in place and needs no more than to exist.
pub(crate) fn check_output_file(path: &Path) -> Result<(), OutputFileError> {
    let refuse = |reason: String| OutputFileError {
        path: path.to_path_buf(),
        reason,
    };
    let dest = destination(path);
    match std::fs::metadata(&dest) {
        Ok(meta) if meta.is_dir() => return Err(refuse("it is a directory".to_string())),
        Ok(meta) if !meta.is_file() => return Ok(()),
        Ok(_) => {
            // Never truncated here: opened for writing, then closed.
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(&dest)
                .map_err(|err| refuse(err.to_string()))?;
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(refuse(err.to_string())),
    }
    let dir = directory_of(&dest);
    let shown = escape_control(&dir.to_string_lossy()).into_owned();
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(refuse(format!("'{shown}' is not a directory"))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(refuse(format!("the directory '{shown}' does not exist")));
        }
        Err(err) => return Err(refuse(format!("'{shown}': {err}"))),
    }
    // A file made and removed at once, named so it cannot be anyone's.
    let probe = dir.join(format!(
        ".luminos-report-probe-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|err| refuse(format!("no new file can be created in '{shown}' ({err})")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Write the report produced by `write` and a trailing newline to `path`,
/// replacing it atomically: the report goes to a temporary file in the same
/// directory, is flushed to disk and renamed over `path`, so a failure (a
/// full disk) leaves the old file whole. Through a symlink, the file it
/// names is replaced and the link kept; a device or a pipe is written in
/// place.
pub(crate) fn write_file_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dest = destination(path);
    let existing = std::fs::metadata(&dest).ok();
    if existing
        .as_ref()
        .is_some_and(|m| !m.is_file() && !m.is_dir())
    {
        let file = std::fs::OpenOptions::new().write(true).open(&dest)?;
        let mut out = io::BufWriter::with_capacity(64 * 1024, file);
        write(&mut out)?;
        out.write_all(b"\n")?;
        return out.flush();
    }
    let dir = directory_of(&dest);
    let mut temp = temp_file_in(dir)?;
    // The new report keeps the old one's permission bits.
    if let Some(meta) = &existing {
        temp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(
                meta.permissions().mode() & 0o7777,
            ))?;
    }
    let mut out = io::BufWriter::with_capacity(64 * 1024, temp.as_file_mut());
    write(&mut out)?;
    out.write_all(b"\n")?;
    out.flush()?;
    drop(out);
    temp.as_file().sync_all()?;
    temp.persist(&dest).map_err(|err| err.error)?;
    // The rename is durable once its directory is; failing that, the
    // report is written all the same.
    let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    Ok(())
}

/// A new temporary file for the report in `dir`, created as `File::create`
/// would create the report (0666 less the umask).
fn temp_file_in(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix(".luminos-report-")
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
}

/// The file `path` names, its symlinks followed (a link's target may not
/// exist yet): what the rename must replace, so the link itself stays.
fn destination(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    // As many links as the kernel follows (ELOOP past that).
    for _ in 0..40 {
        let is_link = std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink());
        let Some(to) = is_link.then(|| std::fs::read_link(&current).ok()).flatten() else {
            break;
        };
        current = directory_of(&current).join(to);
    }
    current
}

/// The directory a file path lies in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}
