//! Which directory the cache lives in, given the path the user named
//! (`LUMINOS_CACHE_DIR`, or `/tmp/luminos`).
//!
//! luminos changes nothing it did not create, so a directory it finds
//! already holding other things is never taken over: it keeps its cache in
//! a subdirectory of its own, [`SUBDIR`], inside it. `LUMINOS_CACHE_DIR=/tmp`
//! or `=~/.cache` therefore means `/tmp/luminos` or `~/.cache/luminos`. That
//! is done in a directory of your own, or in a shared one with the sticky
//! bit (like `/tmp`, where nobody else can move the subdirectory away);
//! another user's directory stays refused as it was. The path itself is the
//! root when it does not exist yet (luminos creates it), is empty, or
//! already is a luminos cache (it holds `investigations.json` or `locks/`,
//! or only names luminos writes there).
//!
//! Refused, in one line each: a symlink, something that is not a
//! directory, and a `luminos` subdirectory that itself holds other things.
//! Whose the root is (it must be yours) is checked when it is opened
//! (`fsio.rs`); nothing here creates, changes or removes anything, so
//! `--estimate` and `--clear-cache` use it too.

use std::path::{Path, PathBuf};

use super::fsio::io_err;
use super::{CacheError, index, lock};

/// The subdirectory luminos keeps its cache in when the named directory
/// already holds other things.
pub(crate) const SUBDIR: &str = "luminos";

/// The cache root for the path the user named: `named` itself, or
/// `named/luminos` when `named` is a directory of other things (see the
/// module doc).
pub(crate) fn choose_root(named: &Path) -> Result<PathBuf, CacheError> {
    match contents(named)? {
        Contents::Missing | Contents::Empty | Contents::Cache => Ok(named.to_path_buf()),
        // Someone else's directory: refused when it is opened.
        Contents::Foreign(_) if !may_hold_ours(named) => Ok(named.to_path_buf()),
        Contents::Foreign(_) => {
            let sub = named.join(SUBDIR);
            match contents(&sub)? {
                Contents::Missing | Contents::Empty | Contents::Cache => Ok(sub),
                Contents::Foreign(entry) => Err(CacheError::NotACache { path: sub, entry }),
            }
        }
    }
}

/// Whether a directory may hold a cache directory of ours: it is ours, or
/// shared with the sticky bit, so that no one else can replace what we put
/// in it.
fn may_hold_ours(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .is_ok_and(|meta| meta.uid() == super::fsio::effective_uid() || meta.mode() & 0o1000 != 0)
}

/// What a would-be cache root holds.
enum Contents {
    /// Nothing there yet.
    Missing,
    Empty,
    /// A luminos cache (maybe with a stray file in it).
    Cache,
    /// Something else, named by its first entry that luminos did not write.
    Foreign(String),
}

/// Look at `path` without following a final symlink.
fn contents(path: &Path) -> Result<Contents, CacheError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Contents::Missing),
        // A file on the way: named for what it is.
        Err(err) if err.kind() == std::io::ErrorKind::NotADirectory => {
            let file = path
                .ancestors()
                .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir()));
            return Err(match file {
                Some(file) => CacheError::NotADirectory(file.to_path_buf()),
                None => io_err("inspecting", path)(err),
            });
        }
        Err(err) => return Err(io_err("inspecting", path)(err)),
    };
    if meta.file_type().is_symlink() {
        return Err(CacheError::Symlink(path.to_path_buf()));
    }
    if !meta.is_dir() {
        return Err(CacheError::NotADirectory(path.to_path_buf()));
    }
    let mut foreign = None;
    let mut empty = true;
    for entry in std::fs::read_dir(path).map_err(io_err("listing", path))? {
        let entry = entry.map_err(io_err("listing", path))?;
        empty = false;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == index::INDEX_FILE || name == lock::LOCK_DIR {
            return Ok(Contents::Cache);
        }
        if foreign.is_none() && !is_cache_name(&name) {
            foreign = Some(name.into_owned());
        }
    }
    Ok(match foreign {
        Some(entry) => Contents::Foreign(entry),
        None if empty => Contents::Empty,
        None => Contents::Cache,
    })
}

/// A name luminos writes in a cache root.
pub(crate) fn is_cache_name(name: &str) -> bool {
    name == index::INDEX_FILE
        || name == lock::LOCK_DIR
        || index::is_canonical_uuid(name)
        || (name.starts_with(".tmp-") && name.ends_with(".partial"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_missing_empty_or_luminos_directory_is_the_root_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("missing");
        assert_eq!(choose_root(&missing).unwrap(), missing);
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert_eq!(choose_root(&empty).unwrap(), empty);
        let cache = tmp.path().join("cache");
        std::fs::create_dir_all(cache.join("locks")).unwrap();
        // A stray file does not make a cache someone else's.
        std::fs::write(cache.join(".DS_Store"), "x").unwrap();
        assert_eq!(choose_root(&cache).unwrap(), cache);
    }

    #[test]
    fn a_directory_of_other_things_gets_a_subdirectory_and_keeps_its_mode() {
        let tmp = tempfile::tempdir().unwrap();
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        std::fs::write(shared.join("someone-elses.txt"), "x").unwrap();
        assert_eq!(choose_root(&shared).unwrap(), shared.join(SUBDIR));
        let mode = std::fs::metadata(&shared).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o1777);
        // A `luminos` of other things is refused, not looked into further.
        std::fs::create_dir(shared.join(SUBDIR)).unwrap();
        std::fs::write(shared.join(SUBDIR).join("notes.txt"), "x").unwrap();
        let err = choose_root(&shared).unwrap_err();
        assert!(err.to_string().contains("notes.txt"), "{err}");
    }

    #[test]
    fn another_users_directory_gets_a_subdirectory_only_when_sticky() {
        if super::super::fsio::effective_uid() == 0 {
            let tmp = tempfile::tempdir().unwrap();
            for (name, mode, sub) in [("plain", 0o777, false), ("sticky", 0o1777, true)] {
                let dir = tmp.path().join(name);
                std::fs::create_dir(&dir).unwrap();
                std::fs::write(dir.join("theirs.txt"), "x").unwrap();
                std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
                let expected = if sub { dir.join(SUBDIR) } else { dir.clone() };
                assert_eq!(choose_root(&dir).unwrap(), expected, "{name}");
            }
        } else {
            // Root's, populated: `/` is refused as it is, `/tmp` is shared.
            assert_eq!(choose_root(Path::new("/")).unwrap(), Path::new("/"));
            assert_eq!(
                choose_root(Path::new("/tmp")).unwrap(),
                Path::new("/tmp").join(SUBDIR)
            );
        }
    }

    #[test]
    fn a_file_or_a_symlink_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(matches!(
            choose_root(&file),
            Err(CacheError::NotADirectory(_))
        ));
        assert!(matches!(
            choose_root(&file.join("sub")),
            Err(CacheError::NotADirectory(p)) if p == file
        ));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path(), &link).unwrap();
        assert!(matches!(choose_root(&link), Err(CacheError::Symlink(_))));
    }
}
