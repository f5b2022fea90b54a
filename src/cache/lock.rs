//! Advisory locks: the per-target run lock and the short lock around
//! `investigations.json`.
//!
//! Both are `flock` locks on small files under `<root>/locks/`, so the kernel
//! releases them when the holder exits or is killed; a stale lock file never
//! blocks anyone. Lock files are never deleted (deleting one while another
//! process waits on it would let two processes "hold" the lock at once).
//!
//! The run lock is keyed by the target, not the investigation, so a second run
//! on the same target waits (or stops) even when it was started with
//! `--fresh` and would otherwise pick a new investigation id.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::CacheError;
use super::fsio::{io_err, open_lock_file};

/// Name of the lock directory inside the cache root.
pub(crate) const LOCK_DIR: &str = "locks";

/// Held for the duration of a run on one target. Dropping it (or the process
/// dying) releases the lock.
#[derive(Debug)]
pub struct RunLock {
    file: File,
    path: PathBuf,
}

impl RunLock {
    /// The lock file (holds the owner's pid).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Clear the pid so nobody reads a stale one; closing the file releases
        // the lock itself.
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// Who holds a run lock: the pid, and the target it investigates (written
/// after the pid; a lock file of an older version holds only the pid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Holder {
    pub pid: u32,
    pub target: Option<PathBuf>,
}

/// Take the run lock at `path` for a run on `target`. Without `wait`, a lock
/// held elsewhere is [`CacheError::Busy`] naming the holder's pid; with
/// `wait`, block until it is free.
pub(crate) fn lock_run_file(path: &Path, target: &Path, wait: bool) -> Result<RunLock, CacheError> {
    let file = open_lock_file(path).map_err(io_err("opening lock file", path))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) if wait => {
            file.lock().map_err(io_err("waiting for lock", path))?;
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(CacheError::Busy {
                pid: read_holder(path).pid,
            });
        }
        Err(std::fs::TryLockError::Error(err)) => return Err(io_err("locking", path)(err)),
    }
    record_holder(&file, target).map_err(io_err("writing lock file", path))?;
    Ok(RunLock {
        file,
        path: path.to_path_buf(),
    })
}

/// Whether someone holds the lock at `path` right now (and who).
pub(crate) fn holder_of(path: &Path) -> Option<Holder> {
    let file = open_lock_file(path).ok()?;
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(_) => Some(read_holder(path)),
    }
}

/// `<pid>\n<target>`: the pid first, so the message for a busy target can
/// name the process, and the target, so `--clear-cache` can name what the
/// cache is busy with (lock files are named by a hash of it).
fn record_holder(mut file: &File, target: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let mut text = format!("{}\n", std::process::id()).into_bytes();
    text.extend_from_slice(target.as_os_str().as_bytes());
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&text)
}

/// Who the lock's holder says it is. The holder writes it just after
/// locking, so retry briefly before giving up and answering pid 0 (unknown).
fn read_holder(path: &Path) -> Holder {
    for _ in 0..20 {
        if let Some(holder) = try_read_holder(path) {
            return holder;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Holder {
        pid: 0,
        target: None,
    }
}

fn try_read_holder(path: &Path) -> Option<Holder> {
    use std::os::unix::ffi::OsStrExt;
    let mut bytes = Vec::new();
    open_lock_file(path).ok()?.read_to_end(&mut bytes).ok()?;
    let (first, rest) = match bytes.iter().position(|b| *b == b'\n') {
        Some(at) => (&bytes[..at], Some(&bytes[at + 1..])),
        None => (&bytes[..], None),
    };
    let pid = std::str::from_utf8(first).ok()?.trim().parse().ok()?;
    let target = rest
        .filter(|rest| !rest.is_empty())
        .map(|rest| PathBuf::from(std::ffi::OsStr::from_bytes(rest)));
    Some(Holder { pid, target })
}

/// A short exclusive lock (for read-modify-write of a shared file), released
/// on drop.
pub(crate) struct ExclusiveLock {
    file: File,
}

impl ExclusiveLock {
    pub(crate) fn acquire(path: &Path) -> Result<ExclusiveLock, CacheError> {
        let file = open_lock_file(path).map_err(io_err("opening lock file", path))?;
        file.lock().map_err(io_err("locking", path))?;
        Ok(ExclusiveLock { file })
    }
}

impl Drop for ExclusiveLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::temp_path;

    #[test]
    fn second_taker_is_busy_with_our_pid_until_release() {
        let (_tmp, path) = temp_path("t.lock");
        let target = Path::new("/srv/app\nwith a newline");
        let held = lock_run_file(&path, target, false).unwrap();
        assert_eq!(
            holder_of(&path),
            Some(Holder {
                pid: std::process::id(),
                target: Some(target.to_path_buf())
            })
        );
        match lock_run_file(&path, target, false) {
            Err(CacheError::Busy { pid }) => assert_eq!(pid, std::process::id()),
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(held);
        assert_eq!(holder_of(&path), None);
        let again = lock_run_file(&path, target, false).unwrap();
        assert_eq!(again.path(), path);
    }

    /// A lock file written by a version that recorded only the pid.
    #[test]
    fn a_pid_alone_is_a_holder_without_a_target() {
        let (_tmp, path) = temp_path("t.lock");
        std::fs::write(&path, "4242").unwrap();
        assert_eq!(
            try_read_holder(&path),
            Some(Holder {
                pid: 4242,
                target: None
            })
        );
        std::fs::write(&path, "").unwrap();
        assert_eq!(try_read_holder(&path), None);
    }

    #[test]
    fn waiting_taker_gets_the_lock_after_release() {
        let (_tmp, path) = temp_path("t.lock");
        let held = lock_run_file(&path, Path::new("/srv/app"), false).unwrap();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || {
                lock_run_file(&path, Path::new("/srv/app"), true).map(|_| ())
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished());
        drop(held);
        waiter.join().unwrap().unwrap();
    }
}
