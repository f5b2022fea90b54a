//! The retry policy: which failures are worth sending the request again for,
//! and how long to wait first. Pure decisions, no sleeping and no I/O; the
//! transport in [`super`] acts on them.
//!
//! Retried (by resending the whole request): 408, 409, 429, every 5xx
//! including 529, connection failures, timeouts, broken streams, `error`
//! events inside a stream, and tool JSON that does not parse when the
//! message did not stop at `max_tokens` (a stream that went wrong; a call
//! cut off by the output limit is a normal reply, see
//! [`super::stream`]). The official SDKs do not retry failures after the
//! response has started; we do, since a fresh request is all it takes.
//!
//! Never retried: 400, 401, 402, 403, 404, 413 and any status the API does
//! not document — sending the same request again cannot change the answer.
//!
//! The server's headers:
//! - `x-should-retry: false` cancels the retry of a failure we would retry;
//! - `x-should-retry: true` changes nothing: a retryable failure is retried
//!   anyway, and a final status stays final. The official SDKs let it force
//!   a retry of any status (Python SDK v0.121.0, TypeScript v0.120.0); we do
//!   not, because resending a request the API rejected costs money and
//!   cannot succeed;
//! - a wait it asks for (`retry-after-ms`, then `retry-after` in seconds or
//!   as an HTTP date) replaces the computed backoff when it is at most
//!   [`MAX_SERVER_WAIT`] (60 s, the bound the Python SDK honours). A longer
//!   wait is not slept through and not cut short either: the call gives up,
//!   since coming back earlier than asked would only be refused again, and
//!   a run should not sit silent for an hour.
//!
//! Before the endpoint has proven itself in a run, failures that say it is
//! the wrong endpoint or a dead one get fewer retries: a refused
//! connection or a name that does not resolve, before any HTTP answer
//! ([`RetryPolicy::unproven_connection_retries`]); a timeout (no headers, a
//! stream that makes no progress, an attempt past its deadline), before
//! any whole reply ([`RetryPolicy::unproven_timeout_retries`]); and an
//! answer that is not the Messages API's (an HTML page, garbage, JSON of
//! the wrong shape), before any whole reply: none. These are setup
//! problems that retries will not fix, and the run should say so within
//! seconds, not minutes. Once the endpoint has given a whole reply, a
//! failure is more likely passing and gets the full count.
//!
//! Whatever the count, a call waits at most [`MAX_TOTAL_WAIT`] in all
//! between its attempts: a retry whose wait would pass it is not made (an
//! overloaded API that asks for a minute each time is given up on in two
//! minutes, not six). `--max-retries` is at most [`MAX_RETRIES_LIMIT`].
//!
//! The API's pages behind these rules (read 2026-11-27): the errors page
//! (<https://platform.claude.com/docs/en/api/errors>: 429 `rate_limit_error`,
//! 500 `api_error`, 504 `timeout_error`, 529 `overloaded_error` "the API is
//! temporarily overloaded", and errors after a 200 arrive inside the
//! stream), and the rate-limits pages (a 429 carries `retry-after`, the
//! seconds to wait, as the AWS Claude Platform guide that mirrors
//! <https://platform.claude.com/docs/en/api/rate-limits> says).

use std::time::Duration;

use super::error::{ApiError, ApiErrorKind};

/// Retries after the first attempt unless `--max-retries` says otherwise.
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 6;

/// The most `--max-retries` allows: at the default backoff (0.5 s doubling
/// to 8 s), 20 retries would wait 135.5 s in all, and [`MAX_TOTAL_WAIT`]
/// stops them a little sooner.
pub(crate) const MAX_RETRIES_LIMIT: u32 = 20;

/// The longest one call waits in all between its attempts, computed
/// backoff and server-requested waits alike. The default six retries wait
/// 23.5 s at most; this bounds what a server's `retry-after` or a large
/// `--max-retries` can add.
pub(crate) const MAX_TOTAL_WAIT: Duration = Duration::from_secs(120);

/// Wait before the first retry.
pub(crate) const INITIAL_BACKOFF: Duration = Duration::from_millis(500);

/// Each further retry waits this many times longer...
pub(crate) const BACKOFF_MULTIPLIER: u32 = 2;

/// ...up to this.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// Up to this fraction is taken off each computed wait at random, so clients
/// that failed together do not come back together. Taking off rather than
/// adding keeps the wait within [`MAX_BACKOFF`].
pub(crate) const JITTER: f64 = 0.25;

/// The longest server-requested wait we honour; a call asked to wait longer
/// gives up instead, so a confused proxy cannot park a run for an hour.
pub(crate) const MAX_SERVER_WAIT: Duration = Duration::from_secs(60);

/// Retries of a refused connection (or a name that does not resolve, or a
/// connection that could not be made in time) before the endpoint has
/// answered once: with the default backoff about 3.5 s of waiting.
pub(crate) const UNPROVEN_CONNECTION_RETRIES: u32 = 3;

/// Retries of a timed-out attempt (no headers, no progress, past its
/// deadline) before the endpoint has given a whole reply: one, so that a
/// silent or stuck endpoint costs two timeouts.
pub(crate) const UNPROVEN_TIMEOUT_RETRIES: u32 = 1;

/// What a run has seen of its endpoint so far, as the retry policy weighs
/// a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct EndpointSeen {
    /// Some request got an HTTP response (any status).
    pub answered: bool,
    /// Some request got a whole reply.
    pub succeeded: bool,
}

impl EndpointSeen {
    /// An endpoint that has given whole replies (and so has answered).
    #[cfg(test)]
    pub(crate) const PROVEN: EndpointSeen = EndpointSeen {
        answered: true,
        succeeded: true,
    };
}

/// How failures are retried. The fields are public so tests can make the
/// waits tiny; [`RetryPolicy::new`] gives the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub initial_backoff: Duration,
    pub multiplier: u32,
    pub max_backoff: Duration,
    /// Fraction in `0.0..=1.0`.
    pub jitter: f64,
    pub max_server_wait: Duration,
    /// The longest one call waits in all between its attempts.
    pub max_total_wait: Duration,
    /// Retries of a connection failure while the endpoint has never
    /// answered (at most `max_retries`).
    pub unproven_connection_retries: u32,
    /// Retries of a timeout while the endpoint has never given a whole
    /// reply.
    pub unproven_timeout_retries: u32,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryDecision {
    /// Wait this long, then send the request again.
    Retry { wait: Duration },
    /// Return the error to the caller.
    GiveUp,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::new(DEFAULT_MAX_RETRIES)
    }
}

impl RetryPolicy {
    /// The default backoff with `max_retries` retries.
    pub fn new(max_retries: u32) -> RetryPolicy {
        RetryPolicy {
            max_retries,
            initial_backoff: INITIAL_BACKOFF,
            multiplier: BACKOFF_MULTIPLIER,
            max_backoff: MAX_BACKOFF,
            jitter: JITTER,
            max_server_wait: MAX_SERVER_WAIT,
            max_total_wait: MAX_TOTAL_WAIT,
            unproven_connection_retries: UNPROVEN_CONNECTION_RETRIES,
            unproven_timeout_retries: UNPROVEN_TIMEOUT_RETRIES,
        }
    }

    /// The same policy with other backoff bounds (tests use milliseconds).
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> RetryPolicy {
        self.initial_backoff = initial;
        self.max_backoff = max;
        self
    }

    /// Whether `error` should be retried at all (ignoring the retry count):
    /// when its kind is transient ([`ApiErrorKind::is_transient`]). A
    /// server's `x-should-retry: false` can stop a retry; nothing makes a
    /// final kind (400, 401, 402, 403, 404, 413) retryable: sending the same
    /// request again cannot fix it, and it would only cost money.
    pub fn should_retry(error: &ApiError) -> bool {
        error.kind.is_transient() && error.should_retry != Some(false)
    }

    /// Decide after a failed attempt. `retry` is the 1-based number of the
    /// retry that would be made; `seen` says what the endpoint has done in
    /// this run (see the module docs); `rng` supplies the jitter.
    pub(crate) fn decide(
        &self,
        error: &ApiError,
        retry: u32,
        seen: EndpointSeen,
        rng: &mut fastrand::Rng,
    ) -> RetryDecision {
        self.decide_after(error, retry, seen, Duration::ZERO, rng)
    }

    /// [`RetryPolicy::decide`] for a call that has already waited `waited`
    /// between its attempts: a retry whose wait would take it past
    /// `max_total_wait` is not made.
    pub(crate) fn decide_after(
        &self,
        error: &ApiError,
        retry: u32,
        seen: EndpointSeen,
        waited: Duration,
        rng: &mut fastrand::Rng,
    ) -> RetryDecision {
        match self.decide_alone(error, retry, seen, rng) {
            RetryDecision::Retry { wait } if waited + wait > self.max_total_wait => {
                RetryDecision::GiveUp
            }
            decision => decision,
        }
    }

    fn decide_alone(
        &self,
        error: &ApiError,
        retry: u32,
        seen: EndpointSeen,
        rng: &mut fastrand::Rng,
    ) -> RetryDecision {
        let allowed = self.allowed_retries(error, seen);
        if retry == 0 || retry > allowed || !RetryPolicy::should_retry(error) {
            return RetryDecision::GiveUp;
        }
        let wait = match error.retry_after {
            Some(server_wait) if server_wait > self.max_server_wait => {
                return RetryDecision::GiveUp;
            }
            Some(server_wait) => server_wait,
            None => self.backoff(retry, rng),
        };
        RetryDecision::Retry { wait }
    }

    /// How many retries a failure like `error` gets in all, before any
    /// server header is taken into account: fewer for a failure that says
    /// the endpoint is dead or wrong while it has not proven itself (see
    /// the module docs).
    pub(crate) fn allowed_retries(&self, error: &ApiError, seen: EndpointSeen) -> u32 {
        match error.kind {
            ApiErrorKind::Connection if !seen.answered => {
                self.unproven_connection_retries.min(self.max_retries)
            }
            ApiErrorKind::Timeout if !seen.succeeded => {
                self.unproven_timeout_retries.min(self.max_retries)
            }
            ApiErrorKind::UnexpectedAnswer if !seen.succeeded => 0,
            _ => self.max_retries,
        }
    }

    /// The computed wait before retry number `retry` (1-based):
    /// `initial × multiplier^(retry-1)`, capped, minus up to `jitter` of it.
    pub fn backoff(&self, retry: u32, rng: &mut fastrand::Rng) -> Duration {
        let base = self.base_backoff(retry);
        let jitter = self.jitter.clamp(0.0, 1.0);
        base.mul_f64(1.0 - jitter * rng.f64())
    }

    /// The wait before jitter.
    pub(crate) fn base_backoff(&self, retry: u32) -> Duration {
        let exponent = retry.saturating_sub(1).min(32);
        let factor = self.multiplier.max(1).saturating_pow(exponent);
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(kind: ApiErrorKind) -> ApiError {
        ApiError::new(kind, "x")
    }

    fn decide(policy: &RetryPolicy, err: &ApiError, retry: u32) -> RetryDecision {
        policy.decide(
            err,
            retry,
            EndpointSeen::PROVEN,
            &mut fastrand::Rng::with_seed(1),
        )
    }

    #[test]
    fn retryable_statuses_and_failures() {
        let policy = RetryPolicy::default();
        for status in [408, 409, 429, 500, 502, 503, 504, 529, 599] {
            let err = ApiError::from_http_response(status, |_| None, b"");
            assert!(
                matches!(decide(&policy, &err, 1), RetryDecision::Retry { .. }),
                "{status}"
            );
        }
        for kind in [
            ApiErrorKind::Timeout,
            ApiErrorKind::Connection,
            ApiErrorKind::BrokenStream,
            ApiErrorKind::MalformedToolInput,
            ApiErrorKind::UnexpectedAnswer,
        ] {
            assert!(matches!(
                decide(&policy, &error(kind), 1),
                RetryDecision::Retry { .. }
            ));
        }
    }

    #[test]
    fn final_statuses_are_never_retried() {
        let policy = RetryPolicy::default();
        for status in [400, 401, 402, 403, 404, 413, 418] {
            let err = ApiError::from_http_response(status, |_| None, b"");
            assert_eq!(decide(&policy, &err, 1), RetryDecision::GiveUp, "{status}");
        }
    }

    #[test]
    fn should_retry_header_wins() {
        let policy = RetryPolicy::default();
        let mut err = ApiError::from_http_response(500, |_| None, b"");
        err.should_retry = Some(false);
        assert_eq!(decide(&policy, &err, 1), RetryDecision::GiveUp);
        // A final status stays final whatever the header says.
        for status in [400, 402, 404] {
            let mut err = ApiError::from_http_response(status, |_| None, b"");
            err.should_retry = Some(true);
            assert_eq!(decide(&policy, &err, 1), RetryDecision::GiveUp, "{status}");
        }
    }

    #[test]
    fn retries_run_out() {
        let policy = RetryPolicy::new(2);
        let err = error(ApiErrorKind::Overloaded);
        assert!(matches!(
            decide(&policy, &err, 2),
            RetryDecision::Retry { .. }
        ));
        assert_eq!(decide(&policy, &err, 3), RetryDecision::GiveUp);
        assert_eq!(decide(&RetryPolicy::new(0), &err, 1), RetryDecision::GiveUp);
    }

    #[test]
    fn server_wait_wins_and_is_capped() {
        let policy = RetryPolicy::default();
        let mut err = error(ApiErrorKind::RateLimited);
        err.retry_after = Some(Duration::from_millis(1234));
        assert_eq!(
            decide(&policy, &err, 5),
            RetryDecision::Retry {
                wait: Duration::from_millis(1234)
            }
        );
        err.retry_after = Some(MAX_SERVER_WAIT);
        assert_eq!(
            decide(&policy, &err, 1),
            RetryDecision::Retry {
                wait: MAX_SERVER_WAIT
            }
        );
        // Asked to wait longer than we would: the call gives up rather than
        // sit silent, or come back early only to be refused again.
        err.retry_after = Some(Duration::from_secs(3600));
        assert_eq!(decide(&policy, &err, 1), RetryDecision::GiveUp);
        err.retry_after = Some(Duration::ZERO);
        assert_eq!(
            decide(&policy, &err, 1),
            RetryDecision::Retry {
                wait: Duration::ZERO
            }
        );
    }

    #[test]
    fn an_endpoint_that_has_not_proven_itself_gets_few_retries() {
        let policy = RetryPolicy::default();
        let silent = EndpointSeen::default();
        let answered = EndpointSeen {
            answered: true,
            succeeded: false,
        };
        let retries = |kind, seen: EndpointSeen| {
            (1..=policy.max_retries + 1)
                .take_while(|&n| {
                    matches!(
                        policy.decide(&error(kind), n, seen, &mut fastrand::Rng::with_seed(1)),
                        RetryDecision::Retry { .. }
                    )
                })
                .count() as u32
        };
        use ApiErrorKind::*;
        assert_eq!(retries(Connection, silent), UNPROVEN_CONNECTION_RETRIES);
        assert_eq!(retries(Timeout, silent), UNPROVEN_TIMEOUT_RETRIES);
        assert_eq!(retries(UnexpectedAnswer, silent), 0);
        // An answer (a ping-only stream, an HTML page) is not a reply: a
        // timeout or a wrong answer still gets few retries.
        assert_eq!(retries(Connection, answered), DEFAULT_MAX_RETRIES);
        assert_eq!(retries(Timeout, answered), UNPROVEN_TIMEOUT_RETRIES);
        assert_eq!(retries(UnexpectedAnswer, answered), 0);
        // Once a whole reply came, every failure gets the full count.
        for kind in [Connection, Timeout, UnexpectedAnswer, Overloaded] {
            assert_eq!(
                retries(kind, EndpointSeen::PROVEN),
                DEFAULT_MAX_RETRIES,
                "{kind:?}"
            );
        }
        // Other failures keep every retry.
        assert_eq!(retries(Overloaded, silent), DEFAULT_MAX_RETRIES);
        // --max-retries below the unproven count wins.
        let one = RetryPolicy::new(1);
        assert_eq!(
            one.decide(
                &error(Connection),
                2,
                silent,
                &mut fastrand::Rng::with_seed(1)
            ),
            RetryDecision::GiveUp
        );
    }

    /// A call's waits add up to at most `max_total_wait`, however many
    /// retries are allowed and however long the server asks to wait.
    #[test]
    fn a_call_waits_two_minutes_at_most_in_all() {
        let waits = |policy: &RetryPolicy, err: &ApiError| {
            let mut rng = fastrand::Rng::with_seed(3);
            let mut waited = Duration::ZERO;
            let mut retries = 0;
            while let RetryDecision::Retry { wait } =
                policy.decide_after(err, retries + 1, EndpointSeen::PROVEN, waited, &mut rng)
            {
                waited += wait;
                retries += 1;
            }
            (retries, waited)
        };
        let overloaded = error(ApiErrorKind::Overloaded);
        // The default count never meets the bound.
        let (retries, waited) = waits(&RetryPolicy::default(), &overloaded);
        assert_eq!(retries, DEFAULT_MAX_RETRIES);
        assert!(waited <= Duration::from_millis(23_500), "{waited:?}");
        // At the flag's limit the bound stops it (without jitter: 0.5 s
        // doubling to 8 s makes 119.5 s after 18 retries).
        let limit = RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::new(MAX_RETRIES_LIMIT)
        };
        assert_eq!(
            waits(&limit, &overloaded),
            (18, Duration::from_millis(119_500))
        );
        // A server that asks for a minute each time: two waits, not six.
        let mut asks = overloaded.clone();
        asks.retry_after = Some(Duration::from_secs(60));
        assert_eq!(
            waits(&RetryPolicy::default(), &asks),
            (2, Duration::from_secs(120))
        );
    }

    #[test]
    fn backoff_doubles_to_the_cap() {
        let policy = RetryPolicy::default();
        let bases: Vec<u128> = (1..=7)
            .map(|n| policy.base_backoff(n).as_millis())
            .collect();
        assert_eq!(bases, vec![500, 1000, 2000, 4000, 8000, 8000, 8000]);
        assert_eq!(policy.base_backoff(1000), MAX_BACKOFF);
    }

    #[test]
    fn jitter_stays_within_bounds_and_varies() {
        let policy = RetryPolicy::default();
        let mut rng = fastrand::Rng::with_seed(9);
        let waits: Vec<Duration> = (0..200).map(|_| policy.backoff(3, &mut rng)).collect();
        for wait in &waits {
            assert!(*wait <= Duration::from_secs(2), "{wait:?}");
            assert!(*wait >= Duration::from_millis(1500), "{wait:?}");
        }
        assert!(waits.iter().any(|w| *w != waits[0]));
    }

    #[test]
    fn tiny_backoff_for_tests() {
        let policy =
            RetryPolicy::new(3).with_backoff(Duration::from_millis(1), Duration::from_millis(4));
        assert_eq!(policy.base_backoff(10), Duration::from_millis(4));
    }
}
