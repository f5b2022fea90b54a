//! File-system fixtures the suites share: FIFOs, the guard that gives
//! locked entries their permissions back, named temp dirs, and directories
//! built once per run of the test binary.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use tempfile::TempDir;

use super::TestEnv;

/// Make a FIFO at `path`, as a hostile tree might hold one.
pub fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
}

/// Gives the named entries of a target their permissions back (0755) when
/// dropped, so the temp dir can be removed after a test locked them.
pub struct Unlock<'a>(pub &'a TestEnv, pub &'static [&'static str]);

impl Drop for Unlock<'_> {
    fn drop(&mut self) {
        for rel in self.1 {
            let _ =
                std::fs::set_permissions(self.0.path(rel), std::fs::Permissions::from_mode(0o755));
        }
    }
}

/// A temp dir whose name starts with `prefix` (so a leftover one says
/// what made it).
pub fn temp_dir(prefix: &str) -> TempDir {
    tempfile::Builder::new().prefix(prefix).tempdir().unwrap()
}

/// The directory in `cell`, built by `build` in a new temp dir the first
/// time any test asks, and shared by every test of this run of the test
/// binary. It is removed when the process exits (a `static` is never
/// dropped, so a `TempDir` in one would stay behind).
pub fn shared_dir(
    cell: &'static OnceLock<PathBuf>,
    prefix: &str,
    build: impl FnOnce(&Path),
) -> &'static Path {
    cell.get_or_init(|| {
        let dir = temp_dir(prefix).keep();
        remove_at_exit(dir.clone());
        build(&dir);
        dir
    })
}

/// Directories [`remove_at_exit`] removes when the process exits.
static AT_EXIT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn remove_at_exit(dir: PathBuf) {
    static REGISTERED: OnceLock<()> = OnceLock::new();
    REGISTERED.get_or_init(|| {
        // SAFETY: registers a plain `extern "C"` function with no
        // preconditions; `exit` (which the test harness ends with) runs it.
        assert_eq!(unsafe { libc::atexit(remove_shared_dirs) }, 0);
    });
    AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()).push(dir);
}

extern "C" fn remove_shared_dirs() {
    let dirs = std::mem::take(&mut *AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()));
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}
