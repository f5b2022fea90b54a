//! File-system fixtures the suites share: FIFOs, the guard that gives
//! locked entries their permissions back, and named temp dirs.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

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
