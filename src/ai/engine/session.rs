//! A model session: the one door every request of a run goes through.
//!
//! It wraps the shared [`Client`] with what the passes must not forget:
//! - redaction of everything luminos sends (system prompt, message text,
//!   tool results), once per message, when a conversation's
//!   [`Transcript`] first sends it, so no secret reaches the API even if a
//!   source forgot to redact, and no message changes once sent;
//! - token accounting into the run's shared [`TokenTracker`];
//! - the budget as a hard ceiling: each request is priced at its worst
//!   case before it goes, and one the money left cannot pay for is not
//!   sent ([`Purse`]);
//! - the model's catalog facts (resolved once, with the configuration) and
//!   the settings each kind of conversation asks it for ([`CallSettings`]);
//! - one stderr line per retry;
//! - the transport: straight to the Messages API, or (`--batch`) through
//!   the [`Batcher`], which sends requests in rounds of batches and answers
//!   from the cache what an earlier batch run already read.
//!
//! It is `Send + Sync` and shared, inside the run's
//! [`RunContext`](crate::ai::engine::context::RunContext), between
//! concurrent dir loops; it holds no per-loop state.

use std::sync::Arc;

use crate::ai::api::body::RequestBody;
use crate::ai::api::caching::{ExpectedReads, Marks};
use crate::ai::api::catalog::{CacheTtl, ModelFacts};
use crate::ai::api::cost::{Pricing, TokenTracker};
use crate::ai::api::settings::{CallSettings, Workload};
use crate::ai::api::tokens::TokenEstimate;
use crate::ai::api::{self, ApiError, Client, Response, RetryNotice};
use crate::ai::engine::batch::{BatchStats, Batcher, Lane};
use crate::ai::engine::notes::RunNotes;
use crate::ai::engine::plan_money::PlanMoney;
use crate::ai::engine::purse::{Allowance, BATCH_WAYS, Meter, OverBudget, Pace, Purse, Used};
use crate::ai::engine::transcript::Transcript;
use crate::ai::failure::InvestigationError;
use crate::ai::tools::learning::FirstRequest;
use crate::config::Config;
use crate::money::Usd;
use crate::progress::Progress;
use crate::redact::Redactor;

/// The run's note of the context window its requests were sized to.
const WINDOW_NOTE: &str = "window";

/// The shared door to the model.
pub(crate) struct Session {
    client: Client,
    redactor: Arc<Redactor>,
    tracker: Arc<TokenTracker>,
    facts: ModelFacts,
    batcher: Option<Batcher>,
    purse: Purse,
    /// What the run's plan counts in ([`PlanMoney`]).
    plan: Meter,
    notes: RunNotes,
    /// Said once the first request goes, or the session ends.
    first_request: Arc<FirstRequest>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.first_request.set(false);
    }
}

/// Why a request was not answered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    /// The API failed (after the client's retries).
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The money left cannot pay for it: it was not sent.
    #[error(transparent)]
    OverBudget(#[from] OverBudget),
}

impl Session {
    /// The session of a run (or of a question) on `config`: its client
    /// (none without a credential, or with a base URL or credential the
    /// client cannot use), its redactor, a tracker at the model's prices
    /// (the catalog's batch prices under `--batch`) and a purse of the
    /// budget, shared by the requests that may be in flight together. The
    /// batch transport, which needs the investigation's cache, is added by
    /// whoever opened it ([`Session::with_batcher`]).
    pub(crate) fn for_run(
        config: &Config,
        progress: &Progress,
    ) -> Result<Session, InvestigationError> {
        let options = &config.investigation;
        let client_config = config
            .client_config()
            .ok_or(InvestigationError::NoCredential)?;
        let client = Client::new(client_config).map_err(InvestigationError::Client)?;
        let redactor = Arc::new(if options.redact {
            Redactor::new()
        } else {
            Redactor::disabled()
        });
        let pricing = Pricing::of(options.model_facts.model);
        let (pricing, ways) = if options.batch {
            (pricing.batch(), BATCH_WAYS)
        } else {
            (pricing, options.jobs)
        };
        let plan = PlanMoney::of(options).meter;
        let mut session = Session::new(
            client,
            options.model_facts,
            redactor,
            Arc::new(TokenTracker::with_pricing(pricing)),
            Purse::new(options.budget, ways).with_tokens(options.token_budget, plan),
            progress,
        );
        session.plan = plan;
        Ok(session)
    }

    /// A session over `client` (whose model the catalog describes as
    /// `facts`) that spends at most what `purse` holds and reports retries
    /// on `progress`.
    pub(crate) fn new(
        client: Client,
        facts: ModelFacts,
        redactor: Arc<Redactor>,
        tracker: Arc<TokenTracker>,
        purse: Purse,
        progress: &Progress,
    ) -> Session {
        let progress = progress.clone();
        let client = client.with_retry_observer(Arc::new(move |notice: &RetryNotice| {
            progress.ai(&notice.to_string());
        }));
        let notes = RunNotes::default();
        notes.set(WINDOW_NOTE, facts.window_note());
        Session {
            client,
            redactor,
            tracker,
            facts,
            batcher: None,
            purse,
            plan: Meter::Dollars,
            notes,
            first_request: Arc::default(),
        }
    }

    /// Said once this session's first request goes out (or it ends).
    pub(crate) fn first_request(&self) -> Arc<FirstRequest> {
        self.first_request.clone()
    }

    /// The run's money: the budget, what is held back, what is left.
    pub(crate) fn purse(&self) -> &Purse {
        &self.purse
    }

    /// This session sending through `batcher` (see [`Batcher`]).
    pub(crate) fn with_batcher(mut self, batcher: Batcher) -> Session {
        self.batcher = Some(batcher);
        self
    }

    /// Whether requests go out in batches (`--batch`).
    pub(crate) fn is_batching(&self) -> bool {
        self.batcher.as_ref().is_some_and(Batcher::is_batching)
    }

    /// The batch transport, when the session has one.
    pub(crate) fn batcher(&self) -> Option<&Batcher> {
        self.batcher.as_ref()
    }

    /// A lane for a conversation that runs beside others, in batch mode
    /// (see [`Lane`]); `None` otherwise.
    pub(crate) fn lane(&self) -> Option<Lane> {
        self.batcher.as_ref().and_then(Batcher::lane)
    }

    /// What the batch transport did so far, in batch mode.
    pub(crate) fn batch_stats(&self) -> Option<BatchStats> {
        self.batcher
            .as_ref()
            .filter(|b| b.is_batching())
            .map(Batcher::stats)
    }

    /// What the work of this run has cost so far, for the budget and the
    /// cap: what this run paid, and what the answers it replayed from an
    /// earlier batch run cost when that run paid for them. A run resumed
    /// after a kill then weighs the same spend an uninterrupted run would
    /// have, so it starts the same loops.
    pub(crate) fn spent(&self) -> Usd {
        let replayed = self
            .batcher
            .as_ref()
            .map_or(Usd::ZERO, |b| b.stats().totals.replayed_cost_usd);
        self.tracker.cost() + replayed
    }

    /// What the run has used by each of the purse's meters: its dollars
    /// ([`Session::spent`]) and the tokens it sent and received (what an
    /// earlier batch run paid for and this one replays was not sent by
    /// this run).
    pub(crate) fn used(&self) -> Used {
        let usage = self.tracker.totals().usage;
        Used {
            dollars: self.spent(),
            tokens: usage.context_tokens() + usage.output_tokens,
        }
    }

    /// What the run has spent in the meter its plan counts in
    /// ([`PlanMoney`]): dollars, or millions of tokens; a plan's amount,
    /// so a bare `f64` whichever it is.
    pub(crate) fn plan_spent(&self) -> f64 {
        match self.plan {
            Meter::Dollars => self.spent().as_f64(),
            Meter::Tokens => self.used().tokens as f64 / 1_000_000.0,
        }
    }

    /// The prices the run's plan counts a request's usage at.
    pub(crate) fn plan_pricing(&self) -> Pricing {
        match self.plan {
            Meter::Dollars => self.tracker.pricing(),
            Meter::Tokens => Pricing::per_token(),
        }
    }

    /// The meter the run's plan counts in.
    pub(crate) fn plan_meter(&self) -> Meter {
        self.plan
    }

    /// `amount` in the meter the run's plan counts in, as a user reads it.
    pub(crate) fn show_plan(&self, amount: f64) -> String {
        self.plan.show(amount)
    }

    /// The model every request uses.
    pub(crate) fn model(&self) -> &str {
        self.client.model()
    }

    /// The most tokens a request of a conversation of `workload` may
    /// carry: the model's context window (catalog) less the `max_tokens`
    /// its reply asks for.
    pub(crate) fn window_limit(&self, workload: Workload) -> u64 {
        self.model_facts()
            .model
            .context_window
            .saturating_sub(u64::from(self.settings(workload).max_tokens))
    }

    /// How many tokens the model makes of text (catalog).
    pub(crate) fn token_estimate(&self) -> TokenEstimate {
        TokenEstimate::of(self.facts.model)
    }

    /// What the run notes for its report ([`RunNotes`]).
    pub(crate) fn notes(&self) -> &RunNotes {
        &self.notes
    }

    /// The run's redactor.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The run's redactor, shared (for the learning that runs beside the
    /// first requests).
    pub(crate) fn shared_redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }

    /// The run's token totals.
    pub(crate) fn tracker(&self) -> &TokenTracker {
        &self.tracker
    }

    /// The run's token totals, to read after the session is gone (what an
    /// interrupted or failed run spent) or to share with the batch
    /// transport.
    pub(crate) fn tracker_handle(&self) -> Arc<TokenTracker> {
        self.tracker.clone()
    }

    /// The catalog's facts for the run's model.
    pub(crate) fn model_facts(&self) -> ModelFacts {
        self.facts
    }

    /// The settings a conversation of this kind asks the run's model for.
    pub(crate) fn settings(&self, workload: Workload) -> CallSettings {
        CallSettings::new(self.model_facts().model, workload)
    }

    /// The client, for what the run learnt about the endpoint.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The tokens of `transcript`'s next request, as the window and the
    /// purse count them.
    pub(crate) fn request_tokens(&self, transcript: &Transcript) -> u64 {
        self.token_estimate().at_most(transcript.request_bytes())
    }

    /// How long the prefixes a request writes are asked to live: 5 minutes,
    /// or what the batch rounds need (see [`Batcher::lifetime`]).
    fn cache_lifetime(&self) -> CacheTtl {
        match self.batcher.as_ref().filter(|b| b.is_batching()) {
            Some(batcher) => {
                let (ttl, note) = batcher.lifetime();
                self.notes.set(BATCH_LIFETIME_NOTE, note);
                ttl
            }
            None => CacheTtl::FiveMinutes,
        }
    }

    /// The prompt-caching marks of `transcript`'s next request, whose parts
    /// later requests are expected to read `reads` times (see
    /// [`Marks::place`]).
    fn marks(&self, transcript: &Transcript, reads: ExpectedReads) -> Marks {
        Marks::place(
            reads,
            transcript.written(),
            transcript.newest_user(),
            self.cache_lifetime(),
            &self.tracker.pricing().prices,
        )
    }

    /// The run's prices for a request carrying `marks`: what it writes to
    /// the cache is priced at the lifetime its marks ask for.
    fn pricing_for(&self, marks: Marks) -> Pricing {
        Pricing {
            write_ttl: marks.ttl,
            ..self.tracker.pricing()
        }
    }

    /// What the purse would allow `transcript`'s next request (paced as
    /// `pace`, its parts expected to be read back `reads` times) if it went
    /// now, holding nothing: whether it is the last the money pays for, or
    /// why it cannot go.
    pub(crate) fn quote(
        &self,
        transcript: &Transcript,
        reads: ExpectedReads,
        pace: Pace,
    ) -> Result<Allowance, OverBudget> {
        let marks = self.marks(transcript, reads);
        self.purse.quote(
            self.used(),
            &self.pricing_for(marks),
            self.request_tokens(transcript),
            marks.may_write(),
            self.settings(transcript.workload()).max_tokens,
            pace,
        )
    }

    /// Send the conversation as it stands (redacting what it adds, once)
    /// and account the reply's usage. `reads` says how often later requests
    /// are expected to read its parts back, which places its prompt-caching
    /// marks ([`Marks::place`]). The request goes only if the money left
    /// pays for its worst case, with a smaller `max_tokens` when that is
    /// what fits its conversation's `pace` ([`Purse`]). It is written
    /// straight from the transcript ([`RequestBody`]): nothing of the
    /// history is copied.
    pub(crate) async fn send(
        &self,
        transcript: &mut Transcript,
        reads: ExpectedReads,
        pace: Pace,
    ) -> Result<Response, SendError> {
        transcript.seal(&self.redactor);
        let mut settings = self.settings(transcript.workload());
        let marks = self.marks(transcript, reads);
        // Held until the answer is counted (or the request fails).
        let reservation = self.purse.reserve(
            self.used(),
            &self.pricing_for(marks),
            self.request_tokens(transcript),
            marks.may_write(),
            settings.max_tokens,
            pace,
        )?;
        settings.max_tokens = reservation.max_tokens;
        self.first_request.set(true);
        let body = RequestBody {
            model: self.model(),
            system: transcript.system(),
            messages: transcript.messages(),
            tools: transcript.tools(),
            settings,
            marks,
            stream: true,
        };
        let response = match &self.batcher {
            // It accounts what it reads (and not what it replays).
            Some(batcher) => batcher.send(body).await?,
            None => {
                let response = self.client.post(body.encode()?).await?;
                self.tracker.record(&response.usage);
                response
            }
        };
        drop(reservation);
        transcript.answered_with(marks);
        Ok(response)
    }
}

/// The run's note of the lifetime its batches' cache marks asked for.
const BATCH_LIFETIME_NOTE: &str = "batch-cache-lifetime";

/// The API errors no pass should shrug off, because every later request
/// would fail the same way; each ends the investigation the first time it
/// is seen, whatever pass meets it:
/// - a final answer about the credential, the model or the account
///   ([`crate::ai::api::ApiError::final_cause`]), whatever status a gateway gave it,
///   and a base URL that is not the Messages API (or, with `--batch`, has
///   no Message Batches API);
/// - an endpoint that stayed unreachable, silent or stuck through its
///   retries (the client gives up early on an endpoint that never
///   answered; see [`crate::ai::api::retry`]). The original let each pass
///   fail on its own; this is deliberate;
/// - an answer that is not the Messages API's (the client gives it no
///   retry before a whole reply came);
/// - an API that stayed overloaded, rate limited or failing (an HTTP
///   status that said so), or whose streams kept breaking, until the call
///   gave up: the other directories would each spend their retries the
///   same way, so the run gives up as a whole rather than directory by
///   directory;
/// - a 400 on a run whose requests have never succeeded, unless it is about
///   that request's size: the same model, key and parameters go into every
///   request, so none would fare better.
///
/// Other errors are the pass's to handle, as in the original.
pub(crate) fn stop_for_api_error(
    session: &Session,
    err: &api::ApiError,
) -> Result<(), InvestigationError> {
    match run_ending(session, err) {
        Some(fatal) => Err(fatal),
        None => Ok(()),
    }
}

/// The investigation's error for `err`, whose `cause` is the API's final
/// answer about the credential, the model, the account or the endpoint.
fn final_answer(
    session: &Session,
    err: &api::ApiError,
    cause: crate::ai::api::error::FinalCause,
) -> InvestigationError {
    use crate::ai::api::error::FinalCause;
    let base_url = || crate::text::escape_line(session.client().base_url()).into_owned();
    match cause {
        FinalCause::UnknownModel => InvestigationError::UnknownModel {
            model: crate::text::escape_line(session.model()).into_owned(),
            detail: err.to_string(),
        },
        FinalCause::NotMessagesApi => InvestigationError::NotMessagesApi {
            base_url: base_url(),
            err: Box::new(err.clone()),
        },
        FinalCause::NoBatchesApi => InvestigationError::NoBatchesApi {
            base_url: base_url(),
            err: Box::new(err.clone()),
        },
        FinalCause::Credential => InvestigationError::Auth(err.clone()),
        FinalCause::Billing => InvestigationError::Billing(err.clone()),
    }
}

/// The investigation's error for `err`, when it ends the investigation
/// (see [`stop_for_api_error`]).
fn run_ending(session: &Session, err: &api::ApiError) -> Option<InvestigationError> {
    let client = session.client();
    let base_url = || crate::text::escape_line(client.base_url()).into_owned();
    let not_the_api = || InvestigationError::NotMessagesApi {
        base_url: base_url(),
        err: Box::new(err.clone()),
    };
    if let Some(cause) = err.final_cause() {
        return Some(final_answer(session, err, cause));
    }
    match err.kind {
        api::ApiErrorKind::Connection | api::ApiErrorKind::Timeout => {
            Some(InvestigationError::Unreachable {
                endpoint: base_url(),
                answered: client.has_answered(),
                replied: client.has_succeeded(),
                detail: err.to_string(),
            })
        }
        api::ApiErrorKind::UnexpectedAnswer => Some(not_the_api()),
        api::ApiErrorKind::Overloaded => Some(InvestigationError::Overloaded(err.clone())),
        // An HTTP error status whose body is not the API's came from
        // something else at the base URL.
        api::ApiErrorKind::RateLimited | api::ApiErrorKind::Server
            if err.status.is_some() && !err.has_api_error_body() =>
        {
            Some(not_the_api())
        }
        api::ApiErrorKind::RateLimited | api::ApiErrorKind::Server if err.status.is_some() => {
            Some(InvestigationError::Unavailable(err.clone()))
        }
        // A stream that broke on every try is the endpoint's doing, not
        // the conversation's.
        api::ApiErrorKind::BrokenStream => Some(InvestigationError::Unavailable(err.clone())),
        api::ApiErrorKind::InvalidRequest | api::ApiErrorKind::RequestTooLarge
            if !client.has_succeeded() && err.prompt_too_long().is_none() =>
        {
            Some(InvestigationError::Rejected(err.clone()))
        }
        api::ApiErrorKind::InvalidRequest
        | api::ApiErrorKind::RequestTooLarge
        | api::ApiErrorKind::Authentication
        | api::ApiErrorKind::Billing
        | api::ApiErrorKind::Permission
        | api::ApiErrorKind::NotFound
        | api::ApiErrorKind::RateLimited
        | api::ApiErrorKind::Server
        | api::ApiErrorKind::MalformedToolInput => None,
    }
}
