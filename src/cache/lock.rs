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

/// Take the run lock at `path`. Without `wait`, a lock held elsewhere is
/// [`CacheError::Busy`] naming the holder's pid; with `wait`, block until it
/// is free.
pub(crate) fn lock_run_file(path: &Path, wait: bool) -> Result<RunLock, CacheError> {
    let file = open_lock_file(path).map_err(io_err("opening lock file", path))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) if wait => {
            file.lock().map_err(io_err("waiting for lock", path))?;
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(CacheError::Busy {
                pid: read_holder_pid(path),
            });
        }
        Err(std::fs::TryLockError::Error(err)) => return Err(io_err("locking", path)(err)),
    }
    record_pid(&file).map_err(io_err("writing lock file", path))?;
    Ok(RunLock {
        file,
        path: path.to_path_buf(),
    })
}

/// Whether someone holds the lock at `path` right now (and who).
pub(crate) fn holder_of(path: &Path) -> Option<u32> {
    let file = open_lock_file(path).ok()?;
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(_) => Some(read_holder_pid(path)),
    }
}

fn record_pid(mut file: &File) -> std::io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(std::process::id().to_string().as_bytes())
}

/// The pid written by the lock's holder. The holder writes it just after
/// locking, so retry briefly before giving up and answering 0 (unknown).
fn read_holder_pid(path: &Path) -> u32 {
    for _ in 0..20 {
        if let Some(pid) = try_read_pid(path) {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    0
}

fn try_read_pid(path: &Path) -> Option<u32> {
    let mut text = String::new();
    open_lock_file(path).ok()?.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
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

    #[test]
    fn second_taker_is_busy_with_our_pid_until_release() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.lock");
        let held = lock_run_file(&path, false).unwrap();
        assert_eq!(holder_of(&path), Some(std::process::id()));
        match lock_run_file(&path, false) {
            Err(CacheError::Busy { pid }) => assert_eq!(pid, std::process::id()),
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(held);
        assert_eq!(holder_of(&path), None);
        let again = lock_run_file(&path, false).unwrap();
        assert_eq!(again.path(), path);
    }

    #[test]
    fn waiting_taker_gets_the_lock_after_release() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.lock");
        let held = lock_run_file(&path, false).unwrap();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || lock_run_file(&path, true).map(|_| ()))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished());
        drop(held);
        waiter.join().unwrap().unwrap();
    }
}
