//! What `--batch` and `--cancel-batch` add around the investigation, kept
//! apart from the orchestrator's phases, which stay the same in both modes:
//!
//! - the prices: under `--batch` every request is billed at the catalog's
//!   batch prices, so the tracker (and with it the cap, the live line and
//!   the report) counts half, and the same money buys twice the work (the
//!   session counts them so: [`Session::for_run`]);
//! - the session's transport: rounds of batches with `--batch`; otherwise
//!   the Messages API, answering from the cache what an earlier batch run
//!   of this investigation already read, so nothing is paid twice;
//! - a run without `--batch` refuses to start while a batch is in flight:
//!   it would pay again for what the batch is already doing; once
//!   `--cancel-batch` canceled it, the run goes ahead, reads what the batch
//!   answered before the cancel and reuses it;
//! - an interrupted run says the batch goes on at the API, and how to pick
//!   it up or cancel it;
//! - a complete investigation's batch files are removed;
//! - `--cancel-batch` ([`cancel_batches`]).

use crate::ai::engine::batch::{self, BatchStats, Batcher, CancelError};
use crate::ai::engine::session::Session;
use crate::ai::failure::InvestigationError;
use crate::ai::{Outcome, api};
use crate::cache::batch::BatchStore;
use crate::cache::{Cache, CacheRoot};
use crate::config::Config;
use crate::progress::Progress;
use crate::report::InvestigationStatus;
use crate::text::{escape_line, format_duration};

/// Refuse a run without `--batch` while a batch is in flight that
/// `--cancel-batch` did not cancel.
pub(crate) fn refuse_in_flight(config: &Config, cache: &Cache) -> Result<(), InvestigationError> {
    let in_flight = BatchStore::at(cache).state().in_flight;
    let running: Vec<&str> = in_flight
        .iter()
        .filter(|b| !b.cancel_requested)
        .map(|b| b.id.as_str())
        .collect();
    if config.investigation.batch || running.is_empty() {
        return Ok(());
    }
    Err(InvestigationError::BatchInFlight {
        ids: running.join(", "),
    })
}

/// `session` with the transport this run uses (see the module docs).
pub(crate) fn with_transport(
    session: Session,
    config: &Config,
    cache: &Cache,
    progress: &Progress,
) -> Result<Session, InvestigationError> {
    let client = session.client().clone();
    let tracker = session.tracker_handle();
    if config.investigation.batch {
        let store = BatchStore::open(cache)?;
        progress.ai(
            "Batch mode: requests go out in rounds through the Message Batches API, at half \
             price; a round can take up to 24 hours.",
        );
        let batcher = Batcher::batching(
            client,
            store,
            tracker,
            progress,
            config.api.batch_timing,
            config.investigation.batch_size,
        );
        return Ok(session.with_batcher(batcher));
    }
    let store = BatchStore::at(cache);
    if store.result_count() == 0 && store.state().in_flight.is_empty() {
        return Ok(session);
    }
    Ok(session.with_batcher(Batcher::replaying(
        client,
        store,
        tracker,
        progress,
        config.api.batch_timing,
    )))
}

/// A run over batches `--cancel-batch` canceled reads them first (in
/// either mode), so that what they answered is reused and what they did
/// not goes out with the first round, not a round later (see
/// [`Batcher::settle_canceled`]).
pub(crate) async fn settle_canceled(session: &Session) -> Result<(), InvestigationError> {
    match session.batcher() {
        Some(batcher) => batcher
            .settle_canceled()
            .await
            .map(|_| ())
            .map_err(InvestigationError::Unavailable),
        None => Ok(()),
    }
}

/// What an interrupted run says about the batches it leaves in flight.
pub(crate) fn in_flight_line(config: &Config, cache: &Cache) -> Option<String> {
    let state = BatchStore::at(cache).state();
    if state.in_flight.is_empty() {
        return None;
    }
    let ids: Vec<&str> = state.in_flight.iter().map(|b| b.id.as_str()).collect();
    let requests: usize = state.in_flight.iter().map(|b| b.requests.len()).sum();
    let target = escape_line(&config.target_arg).into_owned();
    Some(format!(
        "The batch {} ({requests} requests) keeps running at the API and is billed as it is \
         processed; `luminos --batch {target}` picks up its results, and \
         `luminos --cancel-batch {target}` cancels it.",
        ids.join(", ")
    ))
}

/// Remove the batch files of a complete investigation: nothing is in
/// flight and every answer is in the summaries. An incomplete one keeps
/// them, so its next run pays for nothing twice.
pub(crate) fn forget_when_complete(cache: &Cache, outcome: &Outcome, progress: &Progress) {
    if outcome.status.status != InvestigationStatus::Complete {
        return;
    }
    if let Err(err) = BatchStore::at(cache).clear() {
        progress.ai(&format!("Warning: could not remove the batch files: {err}"));
    }
}

/// The stderr line that sums up a batch run.
pub(crate) fn stats_line(stats: &BatchStats) -> String {
    format!(
        "Batch: {} rounds, {} requests sent, {} answered, {} failed in a batch and {} sent again, \
         {} answers reused; waited {}.",
        stats.totals.rounds,
        stats.totals.requests,
        stats.totals.succeeded,
        stats.totals.errored + stats.totals.canceled + stats.totals.expired,
        stats.totals.retried,
        stats.totals.replayed,
        format_duration(stats.waited)
    )
}

/// `--cancel-batch`: ask the API to cancel the batches in flight for the
/// target's investigation (see [`batch::cancel_in_flight`]), and
/// say what became of each. It waits for no batch and changes no summary;
/// a run investigating the target at that moment is refused, like a
/// second run.
pub(crate) async fn cancel_batches(config: &Config) -> Result<Vec<String>, CancelError> {
    let target = escape_line(&config.target_arg).into_owned();
    let root = CacheRoot::open(&config.cache_root)?;
    let _lock = root.lock_run(&config.target_canonical, false)?;
    let Some(cache) = Cache::find_existing(&config.cache_root, &config.target_canonical) else {
        return Ok(vec![format!(
            "No investigation of {target} is cached: there is no batch to cancel."
        )]);
    };
    let store = BatchStore::at(&cache);
    if store.state().in_flight.is_empty() {
        return Ok(vec![format!("No batch is in flight for {target}.")]);
    }
    let client_config = config.client_config().ok_or(CancelError::NoCredential)?;
    let client = api::Client::new(client_config).map_err(CancelError::Client)?;
    let outcome = batch::cancel_in_flight(&client, &store).await?;
    let mut lines: Vec<String> = outcome.canceled.iter().map(batch::describe_batch).collect();
    for id in &outcome.gone {
        lines.push(format!(
            "Batch {id} is no longer known to the API; it is forgotten."
        ));
    }
    if !outcome.canceled.is_empty() {
        lines.push(format!(
            "Requests not processed yet will not be billed. `luminos --batch {target}` reads \
             what was answered before the cancel and sends the rest again."
        ));
    }
    Ok(lines)
}
