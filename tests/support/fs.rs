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

/// Whether the tests run as root, where permission bits do not stop reads
/// or writes.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A real tmpfs of a fixed size, mounted on a temp dir and unmounted when
/// dropped: a disk that fills up for real.
pub struct Tmpfs {
    dir: TempDir,
}

impl Tmpfs {
    /// Mount a tmpfs of `size` (`256k`, `16m`), or say why not (mounting
    /// needs root, or CAP_SYS_ADMIN in a container) and return `None`.
    pub fn mount(size: &str) -> Option<Tmpfs> {
        let dir = temp_dir("luminos-tmpfs-");
        if let Err(err) = mount_tmpfs(dir.path(), 0, &format!("size={size},mode=0755")) {
            println!("SKIPPED: cannot mount a tmpfs here ({err}); this case needs one");
            return None;
        }
        Some(Tmpfs { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Give the file system `size` in all (free space, as a user would).
    pub fn resize(&self, size: &str) {
        mount_tmpfs(self.path(), libc::MS_REMOUNT, &format!("size={size}")).unwrap();
    }
}

/// mount(2) a tmpfs at `path` with `flags` and `options`.
fn mount_tmpfs(path: &Path, flags: libc::c_ulong, options: &str) -> std::io::Result<()> {
    let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let options = std::ffi::CString::new(options).unwrap();
    // SAFETY: valid NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            path.as_ptr(),
            c"tmpfs".as_ptr(),
            flags,
            options.as_ptr().cast(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let path = std::ffi::CString::new(self.path().as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid path; a lazy unmount never fails on a busy mount.
        unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
    }
}
