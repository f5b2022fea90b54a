//! The API's settings, resolved from the command line and the captured
//! environment: the credential (`ANTHROPIC_API_KEY`, else
//! `ANTHROPIC_AUTH_TOKEN`), the base URL (checked before the scan), the
//! retries, and the timing variables a slow gateway or a test sets
//! (`LUMINOS_*_SECS`, `LUMINOS_*_MS`), each parsed into a typed setting or a
//! one-line [`ConfigError`].

use std::ops::RangeInclusive;
use std::time::Duration;

use super::ApiArgs;
use crate::ai::api::batch::BatchTiming;
use crate::ai::api::{self, Auth};
use crate::config::defaults::DEFAULT_BASE_URL;
use crate::config::{
    ATTEMPT_DEADLINE_VAR, ApiSettings, BATCH_POLL_VAR, ConfigError, Env, HEADERS_TIMEOUT_VAR,
    IDLE_TIMEOUT_VAR, RETRY_BACKOFF_VAR, parse_base_url,
};

/// The API's settings from `args` and `env`, with the note a base URL
/// ending in `/v1` gets.
pub(super) fn api_settings(
    args: &ApiArgs,
    env: &Env,
) -> Result<(ApiSettings, Option<String>), ConfigError> {
    let seconds = |raw: &Option<String>, name, default| match raw {
        Some(raw) => parse_seconds(name, raw),
        None => Ok(default),
    };
    let retry_backoff = retry_backoff(env)?;
    let batch_timing = batch_timing(env)?;
    let auth = auth(env);
    let (base_url, note) = match &env.anthropic_base_url {
        Some(raw) => parse_base_url(raw)?,
        None => (DEFAULT_BASE_URL.to_string(), None),
    };
    let settings = ApiSettings {
        base_url,
        auth,
        max_retries: args.max_retries,
        headers_timeout: seconds(
            &env.luminos_headers_timeout,
            HEADERS_TIMEOUT_VAR,
            api::HEADERS_TIMEOUT,
        )?,
        idle_timeout: seconds(
            &env.luminos_idle_timeout,
            IDLE_TIMEOUT_VAR,
            api::IDLE_TIMEOUT,
        )?,
        attempt_deadline: seconds(
            &env.luminos_attempt_deadline,
            ATTEMPT_DEADLINE_VAR,
            api::ATTEMPT_DEADLINE,
        )?,
        retry_backoff,
        batch_timing,
    };
    Ok((settings, note))
}

/// The first wait before a retry (`LUMINOS_RETRY_BACKOFF_MS`): whole
/// milliseconds, at most a minute (0 retries at once).
fn retry_backoff(env: &Env) -> Result<Duration, ConfigError> {
    Ok(match &env.luminos_retry_backoff {
        Some(raw) => parse_millis(
            RETRY_BACKOFF_VAR,
            raw,
            0..=60_000,
            "a whole number of milliseconds up to 60000",
        )?,
        None => api::retry::INITIAL_BACKOFF,
    })
}

/// How often a batch is polled (`LUMINOS_BATCH_POLL_MS`): its first wait
/// in whole milliseconds from 1 to an hour.
fn batch_timing(env: &Env) -> Result<BatchTiming, ConfigError> {
    Ok(match &env.luminos_batch_poll {
        Some(raw) => BatchTiming::starting_at(parse_millis(
            BATCH_POLL_VAR,
            raw,
            1..=3_600_000,
            "a whole number of milliseconds from 1 to 3600000",
        )?),
        None => BatchTiming::default(),
    })
}

/// The credential: `ANTHROPIC_API_KEY`, else `ANTHROPIC_AUTH_TOKEN`.
fn auth(env: &Env) -> Option<Auth> {
    match (&env.anthropic_api_key, &env.anthropic_auth_token) {
        (Some(key), _) => Some(Auth::ApiKey(key.clone())),
        (None, Some(token)) => Some(Auth::BearerToken(token.clone())),
        (None, None) => None,
    }
}

/// A timeout variable: positive decimal seconds, at most a day.
fn parse_seconds(name: &'static str, raw: &str) -> Result<Duration, ConfigError> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|secs| *secs > 0.0 && *secs <= 86_400.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| ConfigError::InvalidVar {
            name,
            expected: "a number of seconds above 0",
            value: raw.to_string(),
        })
}

/// A variable of whole milliseconds within `range` (the retry backoff, the
/// batch poll); `expected` puts the range in words for the error.
fn parse_millis(
    name: &'static str,
    raw: &str,
    range: RangeInclusive<u64>,
    expected: &'static str,
) -> Result<Duration, ConfigError> {
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| range.contains(ms))
        .map(Duration::from_millis)
        .ok_or_else(|| ConfigError::InvalidVar {
            name,
            expected,
            value: raw.to_string(),
        })
}
