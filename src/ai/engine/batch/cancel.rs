//! `--cancel-batch`: ask the API to stop the batches an investigation has
//! in flight, for when a run was stopped and its batch should not go on
//! costing money.
//!
//! Canceling stops what the API has not started; requests already being
//! processed may still complete and are billed. So the batch stays on
//! record (marked as canceled): the next `--batch` run reads it like any
//! other, keeps the answers that came, and sends again only what the
//! cancel stopped.

use crate::ai::api::batch::{MessageBatch, ProcessingStatus};
use crate::ai::api::{ApiError, ApiErrorKind, Client};
use crate::cache::CacheError;
use crate::cache::batch::BatchStore;

/// What `--cancel-batch` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CancelOutcome {
    /// The batches the API was asked to cancel, as it described them after.
    pub canceled: Vec<MessageBatch>,
    /// Batches on record that the API no longer knows (dropped from the
    /// record).
    pub gone: Vec<String>,
}

/// Why canceling failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CancelError {
    /// The API refused or did not answer (after retries).
    #[error("could not cancel batch {batch}: {error}")]
    Api { batch: String, error: ApiError },
    /// No credential is set, so the API cannot be asked.
    #[error(
        "--cancel-batch needs an Anthropic API key: export ANTHROPIC_API_KEY=<your key> (or ANTHROPIC_AUTH_TOKEN)"
    )]
    NoCredential,
    /// The client could not be built (a base URL that is not a URL).
    #[error("{0}")]
    Client(ApiError),
    /// The cache could not be read or written, or a run holds the target.
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// Cancel every batch `store` has in flight and record that it was asked.
pub(crate) async fn cancel_in_flight(
    client: &Client,
    store: &BatchStore,
) -> Result<CancelOutcome, CancelError> {
    let mut state = store.state();
    let mut outcome = CancelOutcome::default();
    let mut kept = Vec::new();
    let mut failure = None;
    for mut record in std::mem::take(&mut state.in_flight) {
        if failure.is_some() {
            kept.push(record);
            continue;
        }
        match client.cancel_batch(&record.id).await {
            Ok(batch) => {
                record.cancel_requested = true;
                kept.push(record);
                outcome.canceled.push(batch);
            }
            Err(err) if err.kind == ApiErrorKind::NotFound => outcome.gone.push(record.id),
            Err(error) => {
                failure = Some(CancelError::Api {
                    batch: record.id.clone(),
                    error,
                });
                kept.push(record);
            }
        }
    }
    state.in_flight = kept;
    store.write_state(&state)?;
    match failure {
        Some(err) => Err(err),
        None => Ok(outcome),
    }
}

/// The line `--cancel-batch` prints for one batch.
pub(crate) fn describe(batch: &MessageBatch) -> String {
    let counts = batch.request_counts;
    let status = match batch.processing_status {
        ProcessingStatus::Canceling => "canceling",
        ProcessingStatus::Ended => "ended",
        ProcessingStatus::InProgress => "in progress",
        ProcessingStatus::Unknown => "in an unknown state",
    };
    format!(
        "Batch {} is {status}: {} succeeded, {} errored, {} canceled, {} still processing.",
        batch.id, counts.succeeded, counts.errored, counts.canceled, counts.processing
    )
}
