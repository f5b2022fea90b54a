//! The first write the cache could not make ([`WriteFault`]), latched for
//! the whole run.
//!
//! A cache that cannot be written (a full disk, a read-only file system,
//! permissions taken away mid-run) makes every later answer worthless: it
//! would be paid for and then lost, and paid for again by the next run. So
//! every write the cache fails to make is latched here, once, by whichever
//! clone of the [`Cache`] made it, and the engine sends no new request once
//! one is latched (see [`crate::ai::engine::agent`]); the run then ends
//! `failed`, naming what could not be written and where.
//!
//! Its edges: it records and tells; stopping is the engine's business.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::{Cache, CacheError};

/// A cache write that failed: what was being done, where, and the system's
/// words for why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteFault {
    action: &'static str,
    path: PathBuf,
    error: String,
}

impl fmt::Display for WriteFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the cache could not be written ({} {}: {}); no new API request was sent after \
             that. Free some space or fix the permissions there, then run again to resume",
            self.action,
            self.path.display(),
            self.error
        )
    }
}

impl std::error::Error for WriteFault {}

/// Shared by every clone of one [`Cache`]: the first fault wins.
#[derive(Debug, Clone, Default)]
pub(crate) struct FaultLatch(Arc<OnceLock<WriteFault>>);

impl Cache {
    /// Latch a failed write (the first one is kept) and hand the error back,
    /// for `map_err`.
    pub(crate) fn note_write_failure(
        &self,
        action: &'static str,
        path: &Path,
        error: std::io::Error,
    ) -> std::io::Error {
        let _ = self.fault.0.set(WriteFault {
            action,
            path: path.to_path_buf(),
            error: error.to_string(),
        });
        error
    }

    /// [`Cache::note_write_failure`] for a failure already made a
    /// [`CacheError`] (creating a directory): an I/O one is latched.
    pub(crate) fn note_cache_error(&self, err: CacheError) -> CacheError {
        if let CacheError::Io {
            action,
            path,
            error,
        } = &err
        {
            let _ = self.fault.0.set(WriteFault {
                action,
                path: path.clone(),
                error: error.to_string(),
            });
        }
        err
    }

    /// The first write this cache could not make in this run, if any.
    pub fn write_fault(&self) -> Option<WriteFault> {
        self.fault.0.get().cloned()
    }
}
