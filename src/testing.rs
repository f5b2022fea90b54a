//! Helpers the unit tests of several modules share (compiled for tests
//! only): temp targets, special files and a ready cache on temp trees. Each
//! module's own fixtures stay in its tests; only what two or more modules
//! build lives here.

use std::path::{Path, PathBuf};

use crate::cache::{Cache, CacheRoot};

/// A temp dir holding the directory `target` with `files` (paths relative
/// to it, parents created) and their contents, and the target's canonical
/// path. The rest of the temp dir is the caller's: what lies outside the
/// target.
pub(crate) fn temp_target(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    std::fs::create_dir(&target).unwrap();
    for (path, content) in files {
        let path = target.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let target = std::fs::canonicalize(target).unwrap();
    (tmp, target)
}

/// Make a FIFO at `path`, as a hostile tree might hold one.
pub(crate) fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

/// The cache root at `dir/cache` and the investigation cache of `target`
/// (canonical) in it.
pub(crate) fn open_cache(dir: &Path, target: &Path) -> (CacheRoot, Cache) {
    let root = CacheRoot::open(&dir.join("cache")).unwrap();
    let id = root.investigation_id(target, false).unwrap();
    let cache = Cache::open(&root, &id.id, target).unwrap();
    (root, cache)
}

/// A fresh temp dir and the path `name` below it, not created: the file or
/// directory a cache helper is about to make. Keep the dir bound while the
/// path is in use; dropping it removes everything below.
pub(crate) fn temp_path(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(name);
    (tmp, path)
}

/// The keys of the JSON object `value`, in order.
pub(crate) fn json_keys(value: &serde_json::Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}
