//! The task that sends the rounds: wait until a round may go, send it (or
//! wait for the batches an earlier run left in flight), poll with backoff,
//! read the results into the cache, and answer each parked request or park
//! it again for the next round.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use super::{Inner, Outcome, Outcomes, Parked};
use crate::ai::api::batch::{
    BatchItem, BatchOutcome, MAX_BYTES, MAX_REQUESTS, MessageBatch, ResultsError, split_for_limits,
};
use crate::ai::api::{ApiError, ApiErrorKind, RetryDecision};
use crate::cache::batch::{BatchState, InFlightBatch};
use crate::cache::now_iso;

/// Send rounds for as long as the run lasts (the batcher aborts it).
pub(super) async fn drive(inner: Arc<Inner>) {
    loop {
        match inner.take_round() {
            Some(parked) => {
                let leftover = round(&inner, parked).await;
                inner.requeue(leftover);
            }
            None => inner.wake.notified().await,
        }
    }
}

/// One round: the batches an earlier run left in flight (their requests
/// are the ones this run replayed up to) and a new batch of every parked
/// request they do not carry, waited on together: a request that could go
/// now does not wait a round for a batch that has nothing of it.
async fn round(inner: &Inner, mut parked: Vec<Parked>) -> Vec<Parked> {
    let resumed = inner.store.state().in_flight;
    let carried: HashSet<&str> = resumed
        .iter()
        .flat_map(|record| record.requests.iter().map(String::as_str))
        .collect();
    // A request an earlier run sent with other caching marks is waited for
    // under the name it was sent with.
    if !carried.is_empty() {
        for request in &mut parked {
            if let Some(name) = inner.carried_name(request, &carried) {
                request.digest = name;
            }
        }
    }
    let fresh: Vec<&Parked> = parked
        .iter()
        .filter(|p| !carried.contains(p.digest.as_str()))
        .collect();
    if !resumed.is_empty() {
        inner.stats().totals.batches_resumed += resumed.len() as u32;
        for record in &resumed {
            inner.progress.ai(&format!(
                "Batch round {}: picking up {} ({}) that an earlier run left in flight.",
                record.round,
                record.id,
                requests(record.requests.len())
            ));
        }
    }
    let (mut outcomes, created) = submit(inner, &fresh).await;
    if !resumed.is_empty() || !created.is_empty() {
        inner.stats().totals.rounds += 1;
    }
    outcomes.extend(read_batches(inner, &resumed).await);
    outcomes.extend(read_batches(inner, &created).await);
    deliver(inner, parked, &outcomes)
}

/// Send `parked` as the next round: one batch, or more when the API's
/// limits require. Each batch is recorded in the cache before it is
/// waited on. Returns the requests that could not be sent (as failures)
/// and the batches created.
async fn submit(inner: &Inner, parked: &[&Parked]) -> (Outcomes, Vec<InFlightBatch>) {
    let mut outcomes = Outcomes::new();
    let mut created = Vec::new();
    if parked.is_empty() {
        return (outcomes, created);
    }
    // The retry policy's wait for requests that failed last round.
    if let Some(until) = parked.iter().filter_map(|p| p.not_before).max() {
        tokio::time::sleep_until(until.into()).await;
    }
    let mut state = inner.store.state();
    let round = state.round + 1;
    let limit = inner.max_requests.min(MAX_REQUESTS);
    for chunk in split_for_limits(batch_items(parked), limit, MAX_BYTES) {
        match send(inner, &mut state, round, &chunk).await {
            Ok(record) => created.push(record),
            Err(err) => {
                for item in &chunk {
                    outcomes.insert(item.custom_id.clone(), Outcome::Failed(err.clone()));
                }
            }
        }
    }
    (outcomes, created)
}

/// The batch items of `parked`, each request once (two parked requests
/// with one digest are one item).
fn batch_items(parked: &[&Parked]) -> Vec<BatchItem> {
    let mut seen = HashSet::new();
    parked
        .iter()
        .filter(|p| seen.insert(p.digest.as_str()))
        .map(|p| BatchItem {
            custom_id: p.digest.clone(),
            params: p.params.clone(),
        })
        .collect()
}

/// Create one batch of `chunk` in `round` and record it in `state` (and the
/// cache) before it is waited on; the error, for each of its requests,
/// when it could not be created or recorded.
async fn send(
    inner: &Inner,
    state: &mut BatchState,
    round: u32,
    chunk: &[BatchItem],
) -> Result<InFlightBatch, ApiError> {
    let ids: Vec<String> = chunk.iter().map(|i| i.custom_id.clone()).collect();
    let batch = inner.client.create_batch(chunk).await?;
    let record = InFlightBatch {
        id: batch.id.clone(),
        round,
        submitted_at: now_iso(),
        requests: ids.clone(),
        cancel_requested: false,
    };
    state.round = round;
    state.in_flight.push(record.clone());
    let aliased = chunk
        .iter()
        .try_for_each(|item| match super::loose_name(&item.params) {
            Some((loose, max_tokens)) => {
                inner.store.store_alias(&loose, &item.custom_id, max_tokens)
            }
            None => Ok(()),
        });
    if let Err(err) = aliased.and_then(|()| inner.store.write_state(state)) {
        // A batch no later run could find must not be waited on (a
        // kill would lose what it paid for): stop it now.
        state.in_flight.pop();
        let _ = inner.client.cancel_batch(&batch.id).await;
        return Err(ApiError::new(
            ApiErrorKind::Server,
            format!(
                "could not record batch {} in the cache, so it was canceled: {err}",
                batch.id
            ),
        ));
    }
    {
        let mut stats = inner.stats();
        stats.totals.batches += 1;
        stats.totals.requests += ids.len() as u64;
    }
    inner.progress.ai(&format!(
        "Batch round {round}: {} sent as {}; waiting for it.",
        requests(ids.len()),
        batch.id
    ));
    Ok(record)
}

/// Wait for each batch of `records` to end and read its results.
pub(super) async fn read_batches(inner: &Inner, records: &[InFlightBatch]) -> Outcomes {
    let mut outcomes = Outcomes::new();
    for record in records {
        let read = match wait_until_ended(inner, record).await {
            Ok(batch) => read_results(inner, record, &batch).await,
            Err(err) => Err(err),
        };
        match read {
            Ok(read) => {
                forget(inner, record);
                outcomes.extend(read);
            }
            Err(err) => {
                if err.kind == ApiErrorKind::NotFound {
                    // The API no longer knows it (deleted, or its results
                    // are past their 29 days): its requests go again.
                    inner.progress.ai(&format!(
                        "Warning: batch {} is gone from the API ({err}); its requests are sent again.",
                        record.id
                    ));
                    forget(inner, record);
                }
                for id in &record.requests {
                    outcomes.insert(id.clone(), Outcome::Failed(err.clone()));
                }
            }
        }
    }
    outcomes
}

/// Poll `record`'s batch, with backoff, until it has ended.
async fn wait_until_ended(inner: &Inner, record: &InFlightBatch) -> Result<MessageBatch, ApiError> {
    let line = inner.progress.batch_line();
    let started = Instant::now();
    let counted = inner.stats().waited;
    inner.stats().pending += record.requests.len() as u64;
    let mut wait = inner.timing.first_poll;
    let result = loop {
        let batch = match inner.client.retrieve_batch(&record.id).await {
            Ok(batch) => batch,
            Err(err) => break Err(err),
        };
        let waited = counted + started.elapsed();
        inner.stats().waited = waited;
        let counts = batch.request_counts;
        line.waiting(
            record.round,
            &record.id,
            [counts.processing, counts.succeeded, counts.errored],
            waited,
        );
        if batch.has_ended() {
            // How long the round took, for the lifetime of later marks:
            // as the API dates it, or as long as it was waited on.
            let took = batch.processing_time().unwrap_or_default();
            inner.pace().round_took(took.max(started.elapsed()));
            break Ok(batch);
        }
        tokio::time::sleep(wait).await;
        wait = inner.timing.next_wait(wait);
    };
    let mut stats = inner.stats();
    stats.waited = counted + started.elapsed();
    stats.pending = stats.pending.saturating_sub(record.requests.len() as u64);
    result
}

/// Read an ended batch: keep every answer in the cache as it arrives,
/// record what it cost, and say how each request of `record` came out.
async fn read_results(
    inner: &Inner,
    record: &InFlightBatch,
    batch: &MessageBatch,
) -> Result<Outcomes, ApiError> {
    let wanted: HashSet<&str> = record.requests.iter().map(String::as_str).collect();
    let mut outcomes = Outcomes::new();
    let handled = inner
        .client
        .batch_results(batch, |line| take_line(inner, &wanted, &mut outcomes, line))
        .await;
    match handled {
        Ok(_) => {}
        Err(ResultsError::Api(err)) => return Err(err),
        Err(ResultsError::Handler(err)) => {
            return Err(ApiError::new(
                ApiErrorKind::Server,
                format!(
                    "could not keep an answer of batch {} in the cache: {err}",
                    record.id
                ),
            ));
        }
    }
    let missing = ApiError::new(
        ApiErrorKind::Server,
        format!("batch {} returned no result for this request", record.id),
    );
    for id in &record.requests {
        outcomes
            .entry(id.clone())
            .or_insert_with(|| Outcome::Failed(missing.clone()));
    }
    let (mut answered, mut failed) = (0, 0);
    for id in &record.requests {
        match outcomes.get(id) {
            Some(Outcome::Answered(_)) => answered += 1,
            Some(Outcome::Failed(_)) | None => failed += 1,
        }
    }
    let failed_note = if failed == 0 {
        String::new()
    } else {
        format!(", {failed} did not (they go again if the retry policy allows)")
    };
    inner.progress.ai(&format!(
        "Batch round {}: {} ended; {answered} answered{failed_note}.",
        record.round, record.id
    ));
    Ok(outcomes)
}

/// One results line: keep a new answer (and record what it cost, once), or
/// note why the request has none.
fn take_line(
    inner: &Inner,
    wanted: &HashSet<&str>,
    outcomes: &mut Outcomes,
    line: crate::ai::api::batch::ResultLine,
) -> Result<(), crate::cache::CacheError> {
    if !wanted.contains(line.custom_id.as_str()) {
        return Ok(());
    }
    let outcome = match line.outcome {
        BatchOutcome::Succeeded(message) => {
            let bytes = message.to_string();
            match crate::ai::api::stream::response_from_message_json(bytes.as_bytes()) {
                Ok(response) => {
                    // Kept before anything else happens: an answer read is
                    // never read or paid for again. A download read twice
                    // (after a broken connection) is recorded once.
                    let new = !inner.store.has_result(&line.custom_id);
                    inner.store.store_result(&line.custom_id, &message)?;
                    if new {
                        if inner.bill_reads {
                            inner.tracker.record(&response.usage);
                        }
                        inner.stats().totals.succeeded += 1;
                    }
                    Outcome::Answered(Box::new(response))
                }
                Err(err) => Outcome::Failed(err),
            }
        }
        BatchOutcome::Errored(err) => {
            inner.stats().totals.errored += 1;
            Outcome::Failed(err)
        }
        BatchOutcome::Canceled => {
            inner.stats().totals.canceled += 1;
            Outcome::Failed(ApiError::new(
                ApiErrorKind::Server,
                "the batch was canceled before this request was processed",
            ))
        }
        BatchOutcome::Expired => {
            inner.stats().totals.expired += 1;
            Outcome::Failed(ApiError::new(
                ApiErrorKind::Server,
                "the batch expired (24 hours) before this request was processed",
            ))
        }
    };
    outcomes.insert(line.custom_id, outcome);
    Ok(())
}

/// Drop `record` from the batches in flight: it was read (or is gone).
fn forget(inner: &Inner, record: &InFlightBatch) {
    let mut state = inner.store.state();
    state.in_flight.retain(|b| b.id != record.id);
    let longest = inner.pace().longest.as_secs();
    state.longest_round_secs = state.longest_round_secs.max(longest);
    if let Err(err) = inner.store.write_state(&state) {
        // Its answers are kept; a later run reads the batch again, which
        // costs nothing.
        inner
            .progress
            .ai(&format!("Warning: could not update the batch state: {err}"));
    }
}

/// Answer each parked request from `outcomes` (or an answer kept
/// earlier); returns the ones that wait for a later round: failures the
/// retry policy sends again, and requests this round did not carry.
pub(super) fn deliver(inner: &Inner, parked: Vec<Parked>, outcomes: &Outcomes) -> Vec<Parked> {
    let policy = inner.client.retry_policy().clone();
    let mut rng = fastrand::Rng::new();
    let mut later = Vec::new();
    let mut again: Vec<String> = Vec::new();
    let mut retried = 0;
    for mut request in parked {
        let outcome = match outcomes.get(&request.digest) {
            Some(outcome) => Some(outcome.clone()),
            None => inner
                .kept(&request.digest)
                .map(|response| Outcome::Answered(Box::new(response))),
        };
        match outcome {
            Some(Outcome::Answered(response)) => {
                let _ = request.reply.send(Ok(*response));
            }
            Some(Outcome::Failed(err)) => {
                request.failures += 1;
                match policy.decide(&err, request.failures, inner.client.seen(), &mut rng) {
                    RetryDecision::Retry { wait } => {
                        request.not_before = Some(Instant::now() + wait);
                        if !again.contains(&err.to_string()) {
                            again.push(err.to_string());
                        }
                        retried += 1;
                        later.push(request);
                    }
                    RetryDecision::GiveUp => {
                        let _ = request.reply.send(Err(err));
                    }
                }
            }
            None => later.push(request),
        }
    }
    if retried > 0 {
        inner.stats().totals.retried += retried as u64;
        inner.progress.ai(&format!(
            "Batch: {} go again in the next round ({}).",
            requests(retried),
            again.join("; ")
        ));
    }
    later
}

/// `1 request`, `3 requests`.
fn requests(n: usize) -> String {
    if n == 1 {
        "1 request".to_string()
    } else {
        format!("{n} requests")
    }
}
