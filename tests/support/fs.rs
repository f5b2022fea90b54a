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
/// what made it), under [`temp_base`].
pub fn temp_dir(prefix: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(temp_base())
        .unwrap()
}

/// A temp dir like [`temp_dir`], in the system temp dir whatever
/// [`temp_base`] says.
pub fn disk_temp_dir(prefix: &str) -> TempDir {
    tempfile::Builder::new().prefix(prefix).tempdir().unwrap()
}

/// Where the suite's temp dirs go: `$TMPDIR` when it is set; else, in a
/// test binary that allows it (`crate::TEMP_IN_MEMORY`), `/dev/shm` when it
/// is a memory file system with a few GiB free; else the system temp dir.
///
/// Why memory: the suite creates and deletes tens of thousands of small
/// files (trees, caches). On a disk file system that has seen much of that
/// churn, creating a file can cost a millisecond of kernel time (ext4
/// passes over recently freed inodes), which made up a sixth of the
/// suite's CPU and most of some tests' time. What tests check does not
/// depend on the file system, but for the order it lists a directory in
/// (tmpfs: newest first), which a test comparing with such a tool puts on
/// disk ([`disk_temp_dir`]); benchmarks stay on disk, as users' trees are.
pub fn temp_base() -> &'static Path {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let memory = Path::new("/dev/shm");
        if crate::TEMP_IN_MEMORY && std::env::var_os("TMPDIR").is_none() && roomy_tmpfs(memory) {
            memory.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    })
}

/// `dir` is a memory file system, writable, not mounted `noexec` (a test
/// runs a planted script), with at least 4 GiB free.
fn roomy_tmpfs(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    const TMPFS_MAGIC: libc::c_long = 0x0102_1994;
    let Ok(c_path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `statfs` and `statvfs` are plain data, for which all zeroes
    // is a value.
    let (mut fs, mut vfs): (libc::statfs, libc::statvfs) =
        unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    // SAFETY: a NUL-terminated path, and structs we own to write into;
    // access(2) only reads the path.
    let answered = unsafe {
        libc::statfs(c_path.as_ptr(), &mut fs) == 0
            && libc::statvfs(c_path.as_ptr(), &mut vfs) == 0
            && libc::access(c_path.as_ptr(), libc::W_OK | libc::X_OK) == 0
    };
    let free = vfs.f_bavail.saturating_mul(vfs.f_frsize);
    answered
        && fs.f_type as libc::c_long == TMPFS_MAGIC
        && vfs.f_flag & libc::ST_NOEXEC == 0
        && free >= 4 << 30
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
