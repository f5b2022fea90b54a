//! The retry policy: which failures are worth sending the request again for,
//! and how long to wait first. Pure decisions, no sleeping and no I/O; the
//! transport in [`super`] acts on them.
//!
//! Retried (by resending the whole request): 408, 409, 429, every 5xx
//! including 529, connection failures, timeouts, broken streams, `error`
//! events inside a stream, and tool JSON that does not parse (nearly always
//! a stream cut short). The official SDKs do not retry failures after the
//! response has started; we do, since a fresh request is all it takes.
//!
//! Never retried: 400, 401, 403, 404, 413 — sending the same request again
//! cannot change the answer.
//!
//! The server has the last word: `x-should-retry: false` forbids a retry and
//! `x-should-retry: true` forces one; a wait it asks for (`retry-after-ms`,
//! then `retry-after`) replaces the computed backoff, capped at
//! [`MAX_SERVER_WAIT`].

use std::time::Duration;

use super::error::{ApiError, ApiErrorKind};

/// Retries after the first attempt unless `--max-retries` says otherwise.
pub const DEFAULT_MAX_RETRIES: u32 = 6;

/// Wait before the first retry.
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(500);

/// Each further retry waits this many times longer...
pub const BACKOFF_MULTIPLIER: u32 = 2;

/// ...up to this.
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// Up to this fraction is taken off each computed wait at random, so clients
/// that failed together do not come back together. Taking off rather than
/// adding keeps the wait within [`MAX_BACKOFF`].
pub const JITTER: f64 = 0.25;

/// The longest server-requested wait we honour as such; a longer one is cut
/// to this, so a confused proxy cannot park a run for an hour.
pub const MAX_SERVER_WAIT: Duration = Duration::from_secs(60);

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
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
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
        }
    }

    /// The same policy with other backoff bounds (tests use milliseconds).
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> RetryPolicy {
        self.initial_backoff = initial;
        self.max_backoff = max;
        self
    }

    /// Whether this kind of failure is worth a new attempt, before any
    /// server header is taken into account.
    pub fn is_retryable_kind(kind: ApiErrorKind) -> bool {
        match kind {
            ApiErrorKind::RateLimited
            | ApiErrorKind::Overloaded
            | ApiErrorKind::Server
            | ApiErrorKind::Timeout
            | ApiErrorKind::Connection
            | ApiErrorKind::BrokenStream
            | ApiErrorKind::MalformedToolInput => true,
            ApiErrorKind::Authentication
            | ApiErrorKind::Permission
            | ApiErrorKind::InvalidRequest
            | ApiErrorKind::NotFound
            | ApiErrorKind::RequestTooLarge => false,
        }
    }

    /// Whether `error` should be retried at all (ignoring the retry count).
    /// A server's `x-should-retry: false` can stop a retry; nothing makes a
    /// final kind (400, 401, 403, 404, 413) retryable: sending the same
    /// request again cannot fix it, and it would only cost money.
    pub fn should_retry(error: &ApiError) -> bool {
        RetryPolicy::is_retryable_kind(error.kind) && error.should_retry.unwrap_or(true)
    }

    /// Decide after a failed attempt. `retry` is the 1-based number of the
    /// retry that would be made; `rng` supplies the jitter.
    pub fn decide(&self, error: &ApiError, retry: u32, rng: &mut fastrand::Rng) -> RetryDecision {
        if retry == 0 || retry > self.max_retries || !RetryPolicy::should_retry(error) {
            return RetryDecision::GiveUp;
        }
        let wait = match error.retry_after {
            Some(server_wait) => server_wait.min(self.max_server_wait),
            None => self.backoff(retry, rng),
        };
        RetryDecision::Retry { wait }
    }

    /// The computed wait before retry number `retry` (1-based):
    /// `initial × multiplier^(retry-1)`, capped, minus up to `jitter` of it.
    pub fn backoff(&self, retry: u32, rng: &mut fastrand::Rng) -> Duration {
        let base = self.base_backoff(retry);
        let jitter = self.jitter.clamp(0.0, 1.0);
        base.mul_f64(1.0 - jitter * rng.f64())
    }

    /// The wait before jitter.
    pub fn base_backoff(&self, retry: u32) -> Duration {
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
        policy.decide(err, retry, &mut fastrand::Rng::with_seed(1))
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
        for status in [400, 401, 403, 404, 413] {
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
        let mut err = ApiError::from_http_response(400, |_| None, b"");
        err.should_retry = Some(true);
        assert_eq!(decide(&policy, &err, 1), RetryDecision::GiveUp);
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
        err.retry_after = Some(Duration::from_secs(3600));
        assert_eq!(
            decide(&policy, &err, 1),
            RetryDecision::Retry {
                wait: MAX_SERVER_WAIT
            }
        );
        err.retry_after = Some(Duration::ZERO);
        assert_eq!(
            decide(&policy, &err, 1),
            RetryDecision::Retry {
                wait: Duration::ZERO
            }
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
