//! Helpers the unit tests of several modules share (compiled for tests
//! only): special files and a ready cache on temp trees. Each module's own
//! fixtures stay in its tests; only what two or more modules build lives
//! here.

use std::path::Path;

use crate::cache::{Cache, CacheRoot};

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
