//! `--batch`: the Message Batches API as a transport behind the session's
//! one door ([`crate::ai::engine::session::Session::send`]), so that no pass
//! changes.
//!
//! **Rounds.** In batch mode each conversation's request is parked here and
//! its `send` waits. Work that runs conversations side by side (the
//! scheduler's dir loops) holds a [`Lane`] per conversation; when every
//! lane is parked, or nothing but parked requests is left (the survey, the
//! plan, the synthesis run alone and hold no lane), the batcher sends every
//! parked request as one batch, polls it with backoff, reads the results
//! (matched by `custom_id`, in any order) and wakes each conversation with
//! its answer. The tools then run locally and the conversations park their
//! next requests, while the scheduler starts the loops that became ready
//! before it lets go of the lane of a loop that ended: those join the same
//! next round. So `-j` does not limit a round's width, and the number of
//! rounds follows the longest chain of turns, not the number of loops.
//!
//! **Never paying twice.** A request is named by the SHA-256 of its exact
//! body (its `params`), which is also its `custom_id`. Before luminos waits
//! on a batch, the batch's id, its round and the names of its requests are
//! written to the investigation's cache ([`crate::cache::batch`]); each
//! answer is kept there as soon as it is read. The conversations themselves
//! are rebuilt rather than stored: a rerun replays them (the tools run
//! again on the same tree, and every request whose answer is kept gets it
//! back at once, without the API), and when it reaches requests of the
//! batch in flight, it waits for that batch instead of sending them again.
//! An answer kept is never read or billed again. The run's purse may give
//! the same request another `max_tokens` in a later run (a batch shares
//! the money left 64 ways, a plain run `-j` ways), so each request sent is
//! also recorded under its name without `max_tokens`; a kept answer found
//! that way serves when it ended on its own within the `max_tokens` asked
//! now (a plain run after `--cancel-batch` reuses what the batch answered). What a replay cannot
//! promise is that a conversation takes the same turns when something it
//! reads changed in between (the tree, or the shared turn pool once a
//! finished loop's unused turns are no longer there to borrow): it then
//! asks a new question, which is a new request, never a repeated one.
//!
//! **Errors per request.** A result that is `errored`, `canceled` or
//! `expired` (the batch was not done within 24 hours) goes into the next
//! round under the same retry policy as an interactive call: final errors
//! (a rejected key, billing, a bad request) are not retried and reach the
//! pass as the interactive error would; the rest are sent again in a new
//! batch until the policy's retries are spent.
//!
//! **The cache's lifetime.** Requests ask the prompt cache for 5 minutes
//! while rounds come back quickly, and for an hour once one did not or a
//! large one is coming ([`lifetime`]); the run's notes say which.
//!
//! **Accounting.** Answers read by this run are recorded in the run's token
//! tracker (priced at the catalog's batch prices by the caller); answers
//! replayed from the cache were paid by an earlier run and are counted
//! apart (`replayed` in [`BatchStats::totals`]).
//!
//! The API side (create, retrieve, results, cancel) is
//! [`crate::ai::api::batch`]; the files are [`crate::cache::batch`].

mod cancel;
mod lifetime;
mod rounds;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

use crate::ai::api::batch::BatchTiming;
use crate::ai::api::body::RequestBody;
use crate::ai::api::catalog::CacheTtl;
use crate::ai::api::cost::{Pricing, TokenTracker};
use crate::ai::api::{ApiError, ApiErrorKind, Client, Response};
use crate::cache::batch::BatchStore;
use crate::money::Usd;
use crate::progress::Progress;
use crate::report::BatchSummary;

pub(crate) use cancel::{CancelError, cancel_in_flight, describe as describe_batch};

/// The name of a request: the SHA-256 of its body, in lowercase hex (64
/// characters: a valid `custom_id`).
pub fn request_digest(params: &[u8]) -> String {
    crate::text::hex(&Sha256::digest(params))
}

/// The name of a request without its `max_tokens` and its caching marks
/// (see [`BatchStore::store_alias`]), with the `max_tokens` it asks for;
/// `None` for a body that is not a JSON object. The marks say what to keep
/// in the prompt cache, not what is asked: the same question with other
/// marks has the same answer.
pub(crate) fn loose_name(params: &[u8]) -> Option<(String, u32)> {
    let mut body: serde_json::Value = serde_json::from_slice(params).ok()?;
    let max_tokens = body
        .as_object_mut()?
        .remove("max_tokens")
        .and_then(|n| n.as_u64())
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0);
    without_marks(&mut body);
    Some((request_digest(&serde_json::to_vec(&body).ok()?), max_tokens))
}

/// [`loose_name`]'s digest alone.
pub(crate) fn loose_digest(params: &[u8]) -> Option<String> {
    loose_name(params).map(|(digest, _)| digest)
}

/// `value` with every `cache_control` removed, however deep.
fn without_marks(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("cache_control");
            map.values_mut().for_each(without_marks);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(without_marks),
        _ => {}
    }
}

/// What a run's batch work amounted to, for the live line and the report:
/// the report's counters, plus what only the live line shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BatchStats {
    /// The counters the report keeps (its `waited_secs` is filled from
    /// [`BatchStats::waited`] when the summary is taken).
    pub totals: BatchSummary,
    /// Requests in the batches being waited on now.
    pub pending: u64,
    /// Time spent waiting on batches.
    pub waited: Duration,
}

impl BatchStats {
    /// The report's `investigation.batch`.
    pub(crate) fn summary(&self) -> BatchSummary {
        BatchSummary {
            waited_secs: self.waited.as_secs_f64(),
            ..self.totals.clone()
        }
    }
}

/// Keeps the next round from being sent while the conversation it stands
/// for is busy (running tools, or about to start). Dropping it lets the
/// round go once everything else waits.
pub(crate) struct Lane {
    inner: Arc<Inner>,
}

impl Drop for Lane {
    fn drop(&mut self) {
        self.inner.queue().lanes -= 1;
        self.inner.wake.notify_one();
    }
}

/// The batch transport of one run: the rounds in batch mode, and the answers
/// an earlier batch run read (replayed in either mode).
pub(crate) struct Batcher {
    inner: Arc<Inner>,
    driver: Option<JoinHandle<()>>,
}

impl Drop for Batcher {
    fn drop(&mut self) {
        if let Some(driver) = self.driver.take() {
            driver.abort();
        }
    }
}

struct Inner {
    client: Client,
    store: BatchStore,
    tracker: Arc<TokenTracker>,
    /// What a kept answer cost the batch run that read it (the batch
    /// prices, whatever this run's are).
    replay_pricing: Pricing,
    /// Answers read from a batch are billed to this run: in batch mode. An
    /// interactive run that reads a batch canceled before it (see
    /// [`Batcher::settle_canceled`]) keeps the answers without billing
    /// them: the batch did, and they count as replayed when used.
    bill_reads: bool,
    progress: Progress,
    timing: BatchTiming,
    /// The most requests in one batch.
    max_requests: usize,
    queue: Mutex<Queue>,
    wake: Notify,
    stats: Mutex<BatchStats>,
    /// How long rounds took, and the lifetime chosen for the marks.
    pace: Mutex<lifetime::RoundPace>,
}

#[derive(Default)]
struct Queue {
    lanes: usize,
    parked: Vec<Parked>,
}

/// A request waiting for a round.
struct Parked {
    digest: String,
    params: Arc<[u8]>,
    /// Rounds in which it failed so far.
    failures: u32,
    /// The retry policy's wait after its last failure.
    not_before: Option<Instant>,
    reply: oneshot::Sender<Result<Response, ApiError>>,
}

impl Batcher {
    /// The batch transport: requests go out in rounds of batches of at
    /// most `max_requests` (and the API's limits). Starts the task that
    /// sends them (call inside the runtime).
    pub(crate) fn batching(
        client: Client,
        store: BatchStore,
        tracker: Arc<TokenTracker>,
        progress: &Progress,
        timing: BatchTiming,
        max_requests: usize,
    ) -> Batcher {
        let replay_pricing = tracker.pricing();
        let mut inner = Inner::new(client, store, tracker, progress, timing, replay_pricing);
        inner.max_requests = max_requests.clamp(1, crate::ai::api::batch::MAX_REQUESTS);
        let longest = Duration::from_secs(inner.store.state().longest_round_secs);
        inner.pace = Mutex::new(lifetime::RoundPace::resumed(longest));
        let inner = Arc::new(inner);
        let driver = tokio::spawn(rounds::drive(inner.clone()));
        Batcher {
            inner,
            driver: Some(driver),
        }
    }

    /// An interactive run over an investigation whose batch run kept
    /// answers (or left a batch that `--cancel-batch` canceled): a request
    /// whose answer is kept gets it back; any other goes to the Messages API
    /// as usual.
    pub(crate) fn replaying(
        client: Client,
        store: BatchStore,
        tracker: Arc<TokenTracker>,
        progress: &Progress,
        timing: BatchTiming,
    ) -> Batcher {
        // This run's prices are the interactive ones; the answers kept were
        // read at the batch prices.
        let replay_pricing = tracker.pricing().batch();
        let mut inner = Inner::new(client, store, tracker, progress, timing, replay_pricing);
        inner.bill_reads = false;
        Batcher {
            inner: Arc::new(inner),
            driver: None,
        }
    }

    /// Read the batches `--cancel-batch` canceled (once each has ended:
    /// a cancel lets requests already being processed finish) and keep
    /// their answers, so that the run reuses what was answered before the
    /// cancel instead of paying for it again, and sends the rest with its
    /// first round. Returns how many
    /// batches were read; a batch that could not be read stays on record,
    /// and the error says so.
    pub(crate) async fn settle_canceled(&self) -> Result<usize, ApiError> {
        let canceled: Vec<_> = (self.inner.store.state().in_flight.into_iter())
            .filter(|record| record.cancel_requested)
            .collect();
        self.inner.stats().totals.batches_resumed += canceled.len() as u32;
        for record in &canceled {
            self.inner.progress.ai(&format!(
                "Reading batch {}, canceled with --cancel-batch: what it answered before the \
                 cancel is reused, the rest is sent again.",
                record.id
            ));
        }
        rounds::read_batches(&self.inner, &canceled).await;
        let left = self.inner.store.state().in_flight;
        match canceled.iter().find(|c| left.iter().any(|l| l.id == c.id)) {
            Some(unread) => Err(ApiError::new(
                ApiErrorKind::Server,
                format!(
                    "could not read batch {}, canceled with --cancel-batch; run again to read it",
                    unread.id
                ),
            )),
            None => Ok(canceled.len()),
        }
    }

    /// Whether requests go out in batches.
    pub(crate) fn is_batching(&self) -> bool {
        self.driver.is_some()
    }

    /// A lane for one conversation that runs beside others (see
    /// [`Lane`]); `None` when requests do not go out in batches.
    pub(crate) fn lane(&self) -> Option<Lane> {
        self.is_batching().then(|| {
            self.inner.queue().lanes += 1;
            Lane {
                inner: self.inner.clone(),
            }
        })
    }

    /// The counts so far.
    pub(crate) fn stats(&self) -> BatchStats {
        self.inner.stats().clone()
    }

    /// The lifetime the next request's cache marks ask for (5 minutes while
    /// the rounds come back quickly, see [`lifetime`]), with the run's note
    /// on it.
    pub(crate) fn lifetime(&self) -> (CacheTtl, String) {
        let width = {
            let queue = self.inner.queue();
            queue.lanes.max(queue.parked.len() + 1)
        };
        let round = self.inner.stats().totals.rounds + 1;
        let mut pace = self.inner.pace();
        (pace.lifetime(round, width), pace.note())
    }

    /// Send `body` (the session's streaming request): its kept answer if
    /// there is one, else in the next round (batch mode) or to the
    /// Messages API at once. A batch carries it as `params`, without
    /// `stream`, since a batch answers with whole messages.
    pub(crate) async fn send(&self, body: RequestBody<'_>) -> Result<Response, ApiError> {
        let params = RequestBody {
            stream: false,
            ..body
        }
        .encode()?;
        let digest = request_digest(&params);
        if let Some(response) = self.inner.replay(&digest) {
            return Ok(response);
        }
        if let Some(response) = self.inner.replay_loose(&params, body.settings.max_tokens) {
            return Ok(response);
        }
        if !self.is_batching() {
            let response = self.inner.client.post(body.encode()?).await?;
            self.inner.tracker.record(&response.usage);
            return Ok(response);
        }
        let (reply, answer) = oneshot::channel();
        self.inner.queue().parked.push(Parked {
            digest,
            params: Arc::from(params),
            failures: 0,
            not_before: None,
            reply,
        });
        self.inner.wake.notify_one();
        answer.await.unwrap_or_else(|_| {
            Err(ApiError::new(
                ApiErrorKind::Server,
                "the batch transport stopped before the answer came",
            ))
        })
    }
}

impl Inner {
    fn new(
        client: Client,
        store: BatchStore,
        tracker: Arc<TokenTracker>,
        progress: &Progress,
        timing: BatchTiming,
        replay_pricing: Pricing,
    ) -> Inner {
        Inner {
            client,
            store,
            tracker,
            replay_pricing,
            bill_reads: true,
            progress: progress.clone(),
            timing,
            max_requests: crate::ai::api::batch::MAX_REQUESTS,
            queue: Mutex::new(Queue::default()),
            wake: Notify::new(),
            stats: Mutex::new(BatchStats::default()),
            pace: Mutex::new(lifetime::RoundPace::default()),
        }
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stats(&self) -> MutexGuard<'_, BatchStats> {
        self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn pace(&self) -> MutexGuard<'_, lifetime::RoundPace> {
        self.pace.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kept answer to `digest`, counted as replayed (an earlier run
    /// paid for it).
    fn replay(&self, digest: &str) -> Option<Response> {
        let response = self.kept(digest)?;
        // The replay prices are the run's (batch) dollar prices.
        let cost = Usd::new(self.replay_pricing.cost(&response.usage));
        let mut stats = self.stats();
        stats.totals.replayed += 1;
        stats.totals.replayed_cost_usd += cost;
        Some(response)
    }

    /// The kept answer to the same request sent with other caching marks
    /// (they follow how long a run's rounds take) or another `max_tokens`
    /// (a batch shares the money left another way than a plain run, so a
    /// run after `--cancel-batch` may ask with a different one): it is
    /// this request's answer too when it asked for the same `max_tokens`,
    /// or ended on its own (not on `max_tokens`) within the `max_tokens`
    /// asked now. Counted as replayed: an earlier run paid for it.
    fn replay_loose(&self, params: &[u8], max_tokens: u32) -> Option<Response> {
        let alias = self.store.alias(&loose_digest(params)?)?;
        let response = self.kept(&alias.digest)?;
        let same = alias.max_tokens == Some(max_tokens);
        let whole = response.stop_reason != Some(crate::ai::api::types::StopReason::MaxTokens)
            && response.usage.output_tokens <= u64::from(max_tokens);
        if !(same || whole) {
            return None;
        }
        self.replay(&alias.digest)
    }

    /// `parked`'s name as a batch in flight carries it (`carried`): its
    /// own, or the one it was sent under with other caching marks (see
    /// [`Inner::replay_loose`]), when the `max_tokens` is the same.
    fn carried_name(&self, parked: &Parked, carried: &HashSet<&str>) -> Option<String> {
        if carried.contains(parked.digest.as_str()) {
            return Some(parked.digest.clone());
        }
        let (loose, max_tokens) = loose_name(&parked.params)?;
        let alias = self.store.alias(&loose)?;
        (carried.contains(alias.digest.as_str()) && alias.max_tokens == Some(max_tokens))
            .then_some(alias.digest)
    }

    /// The kept answer to `digest`, if it reads.
    fn kept(&self, digest: &str) -> Option<Response> {
        let bytes = self.store.result(digest)?;
        crate::ai::api::stream::response_from_message_json(&bytes).ok()
    }

    /// Every parked request, when the next round may go: each lane's
    /// conversation waits (or there are no lanes and something waits).
    fn take_round(&self) -> Option<Vec<Parked>> {
        let mut queue = self.queue();
        if queue.parked.is_empty() || queue.parked.len() < queue.lanes {
            return None;
        }
        Some(std::mem::take(&mut queue.parked))
    }

    /// Park again what must wait for a later round.
    fn requeue(&self, parked: Vec<Parked>) {
        if parked.is_empty() {
            return;
        }
        let mut queue = self.queue();
        let newer = std::mem::take(&mut queue.parked);
        queue.parked = parked;
        queue.parked.extend(newer);
    }
}

/// How one request of a round came out, by digest.
#[derive(Debug, Clone)]
enum Outcome {
    /// Its answer, read by this run.
    Answered(Box<Response>),
    /// It must be retried or given up on, per the policy.
    Failed(ApiError),
}

/// What a round read back, by request digest.
type Outcomes = HashMap<String, Outcome>;

#[cfg(test)]
mod tests;
