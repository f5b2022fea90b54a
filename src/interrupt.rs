//! Ctrl-C during the base scan. The scan is synchronous work on the
//! calling thread with its own counter line live on a terminal; left to
//! the default, SIGINT would kill the process mid-line, leaving the counter
//! on screen and a death by signal instead of the documented status 130.
//!
//! [`ScanWatch`] takes SIGINT over for as long as it lives: on Ctrl-C it
//! erases the live line, says the run was interrupted and ends the process
//! with [`ExitCode::Interrupted`]. The scan writes nothing (the run lock,
//! taken before it, is a `flock` the kernel releases), so ending the
//! process at once loses nothing. From the investigation on, Ctrl-C is the
//! orchestrator's (it stops new work and saves what is done).
//!
//! Its edges: it knows the progress display and the exit code, nothing of
//! the scan. Unix only, like the rest of the crate's terminal handling.

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;

use crate::exit_codes::ExitCode;
use crate::progress::Progress;

/// What is said on Ctrl-C during the scan.
const INTERRUPTED: &str = "Interrupted during the scan; nothing was spent.";

/// Ends the process on Ctrl-C until dropped.
pub(crate) struct ScanWatch {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ScanWatch {
    /// Take SIGINT over now, before the scan starts: the handler is
    /// installed when this returns, not when a thread gets round to it.
    /// `None` when it cannot be (the default behaviour then stays: the
    /// process dies by the signal).
    pub(crate) fn start(progress: &Progress) -> Option<ScanWatch> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        let mut interrupts = {
            let _entered = runtime.enter();
            signal(SignalKind::interrupt()).ok()?
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let progress = progress.clone();
        let thread = std::thread::Builder::new()
            .name("luminos-scan-ctrl-c".into())
            .spawn(move || {
                runtime.block_on(async move {
                    tokio::select! {
                        Some(()) = interrupts.recv() => {
                            progress.clear_live();
                            progress.println(INTERRUPTED);
                            std::process::exit(i32::from(ExitCode::Interrupted.code()));
                        }
                        _ = stopped => {}
                    }
                });
            })
            .ok()?;
        Some(ScanWatch {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for ScanWatch {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
