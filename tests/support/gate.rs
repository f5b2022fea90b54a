//! [`Gate`]: a latch a mock responder waits on, so a run can be held
//! mid-way for as long as a test needs, with no timing involved.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Closed until [`Gate::open`]; clones share the latch.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    /// Wait until the gate opens, or `bound` passes (so a failing test
    /// cannot leave the mock thread stuck); true if it opened.
    pub fn wait(&self, bound: Duration) -> bool {
        let (open, signal) = &*self.0;
        let guard = open.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = signal
            .wait_timeout_while(guard, bound, |open| !*open)
            .unwrap_or_else(|e| e.into_inner());
        *guard
    }

    pub fn open(&self) {
        let (open, signal) = &*self.0;
        *open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        signal.notify_all();
    }
}

/// Opens the gate when dropped, so a failed assertion still lets the mock
/// (and the held run) finish.
pub struct OpenOnDrop(pub Gate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}
