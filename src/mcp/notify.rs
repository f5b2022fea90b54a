//! A call's progress: every line luminos would print on a pipe goes to the
//! server's stderr (the client's log), and, when the client sent a
//! progress token with the call, to the client as a progress notification
//! (`notifications/progress`, one per line, the line as its message and a
//! count that grows by one each time, with no total: the number of lines a
//! run prints is not known ahead).
//!
//! Lines are handed over through a channel, in order, from whatever thread
//! prints them; [`CallProgress::finish`] closes it and waits until every
//! notification is out, so none trails the call's result.

use std::io::Write;
use std::sync::{Arc, Mutex};

use rmcp::Peer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RoleServer;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use super::tools::Call;
use crate::config::Config;
use crate::progress::Progress;

/// The progress of one call and the task that forwards it.
pub(super) struct CallProgress {
    pub progress: Progress,
    sender: Arc<Mutex<Option<UnboundedSender<String>>>>,
    forwarder: Option<JoinHandle<()>>,
}

impl CallProgress {
    /// Progress for a call from `peer` that sent `token` (none: stderr
    /// only).
    fn start(peer: Peer<RoleServer>, token: Option<ProgressToken>) -> CallProgress {
        let (sender, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
        let forwarder = token.map(|token| {
            tokio::spawn(async move {
                let mut step = 0u32;
                while let Some(line) = lines.recv().await {
                    step += 1;
                    let notification = ProgressNotificationParam::new(token.clone(), step.into())
                        .with_message(line);
                    // A client that went away misses the rest; the run goes on.
                    let _ = peer.notify_progress(notification).await;
                }
            })
        });
        let sender = Arc::new(Mutex::new(forwarder.as_ref().map(|_| sender)));
        let open = sender.clone();
        let progress = Progress::to_sink(
            Arc::new(move |line: &str| {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
                if let Some(sender) = lock(&open).as_ref() {
                    let _ = sender.send(line.trim_start().to_string());
                }
            }),
            false,
        );
        CallProgress {
            progress,
            sender,
            forwarder,
        }
    }

    /// Progress for `call`, a run with `config`, opened with the
    /// catalog's warning about its model when there is one (returned too,
    /// for the answer to carry).
    pub(super) fn for_run(call: &Call, config: &Config) -> (CallProgress, Vec<String>) {
        let notes = CallProgress::start(
            call.request.peer.clone(),
            call.request.meta.get_progress_token(),
        );
        let warnings: Vec<String> = crate::ai::model_warning(&config.investigation)
            .into_iter()
            .collect();
        for warning in &warnings {
            notes.progress.println(&format!("Warning: {warning}"));
        }
        (notes, warnings)
    }

    /// Stop forwarding (later lines go to stderr only) and wait until the
    /// notifications already handed over are sent.
    pub(super) async fn finish(mut self) {
        lock(&self.sender).take();
        if let Some(forwarder) = self.forwarder.take() {
            let _ = forwarder.await;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
