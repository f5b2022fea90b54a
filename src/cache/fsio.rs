//! The cache's file-system primitives: private directories, atomic JSON
//! writes, single-write appends and tolerant reads.
//!
//! Everything the cache puts on disk goes through here, so the crash-safety
//! and privacy rules live in one place:
//! - directories are created 0700 and refused when they are symlinks or
//!   belong to another user (the default root sits in the shared `/tmp`);
//!   an existing directory's mode is never changed;
//! - a JSON document is written to a temp file in its own directory, fsynced,
//!   renamed over the old one, and the directory is fsynced, so a reader (or a
//!   run killed at any instant) sees the old document or the new one, never
//!   half of one;
//! - many JSON documents written at once ([`write_json_batch`]) each go to a
//!   temp file, one sync of the file system makes them all durable, then
//!   each is renamed and each directory fsynced: the same guarantees for two
//!   flushes in all instead of two per document;
//! - a JSONL line is one `write()` on an `O_APPEND` descriptor under an
//!   exclusive `flock`, so concurrent appenders never interleave. A SIGKILL
//!   can still cut that write short (the kernel may stop a write at a page
//!   boundary when a fatal signal arrives), so a killed run may leave the
//!   last line torn: the next append then starts a line of its own
//!   ([`append_locked`]) and readers skip what does not parse.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::CacheError;

/// Permission bits of every directory the cache creates.
const DIR_MODE: u32 = 0o700;
/// Permission bits of the lock and log files the cache creates.
const FILE_MODE: u32 = 0o600;

/// Attach the action and path to an I/O error.
pub(crate) fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CacheError {
    let path = path.to_path_buf();
    move |error| CacheError::Io {
        action,
        path,
        error,
    }
}

/// Create `path` (and missing parents) as a private directory, or accept an
/// existing one that is a real directory owned by us. An existing
/// directory's mode is left as it is: luminos changes no directory it did
/// not create (the ones it creates are 0700 from the start, and every file
/// in them 0600).
pub(crate) fn ensure_private_dir(path: &Path) -> Result<(), CacheError> {
    match DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)
    {
        Ok(()) => {}
        // A dangling symlink makes mkdir fail with EEXIST; the check below
        // names the real problem.
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => {
            // Something in the way is named for what it is (a symlink, a
            // directory of someone else's, a file); otherwise the mkdir
            // error itself says why (read-only file system, permission
            // denied), not the "no such file" of looking at what it could
            // not create.
            if std::fs::symlink_metadata(path).is_ok() {
                verify_private_dir(path)?;
            }
            if err.kind() == io::ErrorKind::NotADirectory
                && let Some(file) = path
                    .ancestors()
                    .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir()))
            {
                return Err(CacheError::NotADirectory(file.to_path_buf()));
            }
            return Err(io_err("creating", path)(err));
        }
    }
    verify_private_dir(path)
}

/// Refuse `path` unless it is a directory (not a symlink) owned by the
/// effective user. Its mode is not touched.
pub(crate) fn verify_private_dir(path: &Path) -> Result<(), CacheError> {
    let meta = fs::symlink_metadata(path).map_err(io_err("inspecting", path))?;
    if meta.file_type().is_symlink() {
        return Err(CacheError::Symlink(path.to_path_buf()));
    }
    let me = effective_uid();
    if meta.uid() != me {
        return Err(CacheError::ForeignOwner {
            path: path.to_path_buf(),
            owner: meta.uid(),
        });
    }
    if !meta.is_dir() {
        return Err(CacheError::NotADirectory(path.to_path_buf()));
    }
    Ok(())
}

/// The effective user id of this process.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Serialize like Python's `json.dump(value, f, indent=2)`: two-space indent,
/// `": "` after keys, no trailing newline.
pub(crate) fn to_pretty_json<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    // The documents luminos writes have string keys only, so this cannot
    // fail.
    serde_json::to_vec_pretty(value).unwrap_or_default()
}

/// How the temp files of [`write_atomic`] are named: `.tmp-<random>.partial`.
const TEMP_PREFIX: &str = ".tmp-";
const TEMP_SUFFIX: &str = ".partial";

/// A new temp file in `path`'s directory (a rename is only atomic within
/// one file system), named so [`remove_temp_files`] knows it, and that
/// directory.
fn temp_beside(path: &Path) -> io::Result<(tempfile::NamedTempFile, &Path)> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
        .tempfile_in(dir)?;
    Ok((temp, dir))
}

/// Atomically replace `path` with `bytes`: temp file in the same directory,
/// fsync, rename, fsync the directory.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (mut temp, dir) = temp_beside(path)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|err| err.error)?;
    sync_dir(dir)
}

/// Remove the [`write_atomic`] temp files in `dir`: a process killed between
/// creating one and renaming it leaves it behind, holding a summary nobody
/// will read. Only safe when no other process can be writing in `dir`.
/// Returns how many were removed; best effort.
pub(crate) fn remove_temp_files(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with(TEMP_PREFIX)
                && name.ends_with(TEMP_SUFFIX)
                && entry.file_type().is_ok_and(|t| t.is_file())
        })
        .filter(|entry| fs::remove_file(entry.path()).is_ok())
        .count()
}

/// Atomically write `value` as pretty JSON to `path`.
pub(crate) fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> io::Result<()> {
    write_atomic(path, &to_pretty_json(value))
}

/// Atomically write every `(path, value)` as pretty JSON: all to temp
/// files, one `syncfs` so their contents are on disk, the renames, then one
/// fsync per directory. A reader (or a run killed at any instant) sees each
/// document old or new, never half of one.
pub(crate) fn write_json_batch<T: Serialize>(items: &[(std::path::PathBuf, T)]) -> io::Result<()> {
    let mut temps = Vec::with_capacity(items.len());
    for (path, value) in items {
        let (mut temp, _) = temp_beside(path)?;
        temp.write_all(&to_pretty_json(value))?;
        temps.push((temp, path));
    }
    let Some((first, _)) = temps.first() else {
        return Ok(());
    };
    use std::os::fd::AsRawFd;
    // SAFETY: syncfs on a descriptor we own and keep open for the call.
    if unsafe { libc::syncfs(first.as_file().as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut dirs: Vec<&Path> = Vec::new();
    for (temp, path) in temps {
        temp.persist(path).map_err(|err| err.error)?;
        if let Some(dir) = path.parent()
            && !dirs.contains(&dir)
        {
            dirs.push(dir);
        }
    }
    dirs.into_iter().try_for_each(sync_dir)
}

/// fsync a directory so a rename inside it survives a crash.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Read and parse a JSON document; `None` when missing, unreadable, not JSON
/// or a symlink (the cache never creates symlinks, so one is foreign).
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Option<T> {
    let bytes = read_nofollow(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Read a whole file without following a final symlink.
pub(crate) fn read_nofollow(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Open (creating, 0600) a file for appending and reading, never through a
/// symlink.
pub(crate) fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Open (creating, 0600) a lock file, never through a symlink.
pub(crate) fn open_lock_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Append `lines` (each already newline-terminated) to `file` in a single
/// `write()`, holding an exclusive lock so no other appender interleaves.
/// A file whose last line was cut short (a full disk, a killed writer)
/// gets a newline first, so the cut line does not swallow this one.
pub(crate) fn append_locked(file: &File, bytes: &[u8]) -> io::Result<()> {
    file.lock()?;
    let result = ends_mid_line(file).and_then(|cut| {
        if cut {
            write_once(file, &[b"\n", bytes].concat())
        } else {
            write_once(file, bytes)
        }
    });
    let _ = file.unlock();
    result
}

/// Whether a non-empty file's last byte is not a newline.
fn ends_mid_line(file: &File) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    file.read_at(&mut last, len - 1)?;
    Ok(last[0] != b'\n')
}

/// One `write()` call; a short write (disk full, signal) is reported rather
/// than continued, because a second write could interleave with another
/// writer that does not lock.
fn write_once(mut file: &File, bytes: &[u8]) -> io::Result<()> {
    let written = file.write(bytes)?;
    if written == bytes.len() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::WriteZero,
            format!("short write: {written} of {} bytes", bytes.len()),
        ))
    }
}

/// One JSON document per line, compact, newline-terminated.
pub(crate) fn jsonl_line<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The parsable lines of a JSONL file, in order; anything unreadable is
/// skipped.
pub(crate) fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Vec<T> {
    match read_nofollow(path) {
        Ok(bytes) => parse_jsonl(&bytes),
        Err(_) => Vec::new(),
    }
}

/// Parse JSONL bytes, skipping blank and unparsable lines.
pub(crate) fn parse_jsonl<T: DeserializeOwned>(bytes: &[u8]) -> Vec<T> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_path;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn private_dir_is_created_0700_with_parents() {
        let (_tmp, dir) = temp_path("a/b/root");
        ensure_private_dir(&dir).unwrap();
        let mode = fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // Idempotent.
        ensure_private_dir(&dir).unwrap();
    }

    #[test]
    fn an_existing_dir_keeps_its_mode() {
        let (_tmp, dir) = temp_path("root");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o1777)).unwrap();
        ensure_private_dir(&dir).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o7777, 0o1777);
    }

    #[test]
    fn a_dir_that_cannot_be_created_names_the_real_error() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        fs::write(&file, "x").unwrap();
        let err = ensure_private_dir(&file.join("sub")).unwrap_err();
        assert!(
            matches!(&err, CacheError::NotADirectory(p) if *p == file),
            "{err}"
        );
    }

    #[test]
    fn symlinks_are_refused_even_dangling() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        fs::create_dir(&real).unwrap();
        let link = tmp.path().join("link");
        symlink(&real, &link).unwrap();
        assert!(matches!(
            ensure_private_dir(&link),
            Err(CacheError::Symlink(_))
        ));
        let dangling = tmp.path().join("dangling");
        symlink(tmp.path().join("nowhere"), &dangling).unwrap();
        assert!(matches!(
            ensure_private_dir(&dangling),
            Err(CacheError::Symlink(_))
        ));
        assert!(!tmp.path().join("nowhere").exists());
    }

    #[test]
    fn a_file_is_not_a_cache_dir() {
        let (_tmp, file) = temp_path("file");
        fs::write(&file, "x").unwrap();
        let err = ensure_private_dir(&file).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_files() {
        let (tmp, path) = temp_path("doc.json");
        write_json_atomic(&path, &serde_json::json!({"a": 1})).unwrap();
        write_json_atomic(&path, &serde_json::json!({"a": [1, 2]})).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\n  \"a\": [\n    1,\n    2\n  ]\n}"
        );
        let names: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn leftover_temp_files_are_removed_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let keep = tmp.path().join("entry.json");
        write_json_atomic(&keep, &serde_json::json!({"a": 1})).unwrap();
        fs::write(tmp.path().join(".tmp-abc123.partial"), "{\"a\"").unwrap();
        fs::write(tmp.path().join(".tmp-other.json"), "{}").unwrap();
        assert_eq!(remove_temp_files(tmp.path()), 1);
        let mut names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, [".tmp-other.json", "entry.json"]);
        assert_eq!(remove_temp_files(&tmp.path().join("missing")), 0);
    }

    #[test]
    fn read_json_skips_garbage_and_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let good = tmp.path().join("good.json");
        fs::write(&good, "{\"x\": true}").unwrap();
        let bad = tmp.path().join("bad.json");
        fs::write(&bad, "{\"x\": tr").unwrap();
        let link = tmp.path().join("link.json");
        symlink(&good, &link).unwrap();
        assert_eq!(
            read_json::<serde_json::Value>(&good),
            Some(serde_json::json!({"x": true}))
        );
        assert_eq!(read_json::<serde_json::Value>(&bad), None);
        assert_eq!(read_json::<serde_json::Value>(&link), None);
        assert_eq!(
            read_json::<serde_json::Value>(&tmp.path().join("missing.json")),
            None
        );
    }

    #[test]
    fn jsonl_skips_partial_and_blank_lines() {
        let parsed =
            parse_jsonl::<serde_json::Value>(b"{\"a\":1}\n\n  \nnot json\n{\"b\":2}\n{\"c\":");
        assert_eq!(
            parsed,
            vec![serde_json::json!({"a": 1}), serde_json::json!({"b": 2})]
        );
    }

    #[test]
    fn appends_are_whole_lines() {
        let (_tmp, path) = temp_path("log.jsonl");
        let file = open_append(&path).unwrap();
        append_locked(&file, &jsonl_line(&serde_json::json!({"n": 1}))).unwrap();
        let again = open_append(&path).unwrap();
        append_locked(&again, &jsonl_line(&serde_json::json!({"n": 2}))).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"n\":1}\n{\"n\":2}\n");
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_line_cut_short_does_not_swallow_the_next() {
        let (_tmp, path) = temp_path("log.jsonl");
        fs::write(&path, "{\"n\":1}\n{\"n\":").unwrap();
        let file = open_append(&path).unwrap();
        append_locked(&file, &jsonl_line(&serde_json::json!({"n": 3}))).unwrap();
        assert_eq!(
            parse_jsonl::<serde_json::Value>(&fs::read(&path).unwrap()),
            vec![serde_json::json!({"n": 1}), serde_json::json!({"n": 3})]
        );
    }
}
