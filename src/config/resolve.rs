//! Resolving the command line and the captured environment into an
//! [`Invocation`]: which source wins for each setting, the defaults, and the
//! parsing of flag and variable values into typed settings with a one-line
//! [`ConfigError`] for a bad one. It reads nothing itself beyond checking
//! the target directory; the environment arrives as an [`Env`].

use std::ops::RangeInclusive;

use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

use super::{
    ApiSettings, BATCH_POLL_VAR, Config, ConfigError, DEFAULT_CACHE_ROOT, Env, HEADERS_TIMEOUT_VAR,
    IDLE_TIMEOUT_VAR, InvestigationOptions, Invocation, Mode, OutputOptions, RETRY_BACKOFF_VAR,
};
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::{self, Auth, DEFAULT_BASE_URL, DEFAULT_MODEL};
use crate::ai::ask::DEFAULT_ASK_BUDGET_USD;
use crate::ai::engine::batch::BatchTiming;
use crate::ai::rules::decide::DEFAULT_BUDGET_USD;
use crate::cli::{Args, AskArgs, Command};
use crate::paths::absolute;
use crate::progress::ProgressStyle;
use crate::scan::ScanOptions;

impl Invocation {
    /// Resolve the command line and the environment into what to do.
    pub(crate) fn resolve(args: Args, env: &Env) -> Result<Invocation, ConfigError> {
        if let Some(Command::Ask(ask)) = args.command {
            return Invocation::resolve_ask(ask, env);
        }
        let cache_root = env
            .luminos_cache_dir
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CACHE_ROOT));
        let max_cost = args.max_cost.as_deref().map(parse_max_cost).transpose()?;
        let budget = match args.budget.as_deref() {
            Some(raw) => parse_budget(raw)?,
            None => Some(DEFAULT_BUDGET_USD),
        };

        let Some(target_arg) = args.target.clone() else {
            return if args.clear_cache {
                Ok(Invocation::ClearCacheOnly { cache_root })
            } else {
                Err(ConfigError::MissingTarget)
            };
        };

        let shown = target_arg.to_string_lossy().into_owned();
        if !target_arg.is_dir() {
            return Err(ConfigError::NotADirectory(shown));
        }
        let target = absolute(&target_arg);
        let target_canonical = std::fs::canonicalize(&target)
            .map_err(|_| ConfigError::NotADirectory(shown.clone()))?;

        let idle_timeout = match &env.luminos_idle_timeout {
            Some(raw) => parse_seconds(IDLE_TIMEOUT_VAR, raw)?,
            None => api::IDLE_TIMEOUT,
        };
        let headers_timeout = match &env.luminos_headers_timeout {
            Some(raw) => parse_seconds(HEADERS_TIMEOUT_VAR, raw)?,
            None => api::HEADERS_TIMEOUT,
        };
        // Whole milliseconds, at most a minute (0 retries at once).
        let retry_backoff = match &env.luminos_retry_backoff {
            Some(raw) => parse_millis(
                RETRY_BACKOFF_VAR,
                raw,
                0..=60_000,
                "a whole number of milliseconds up to 60000",
            )?,
            None => api::retry::INITIAL_BACKOFF,
        };

        // Whole milliseconds from 1 to an hour.
        let batch_timing = match &env.luminos_batch_poll {
            Some(raw) => BatchTiming::starting_at(parse_millis(
                BATCH_POLL_VAR,
                raw,
                1..=3_600_000,
                "a whole number of milliseconds from 1 to 3600000",
            )?),
            None => BatchTiming::default(),
        };

        let auth = match (&env.anthropic_api_key, &env.anthropic_auth_token) {
            (Some(key), _) => Some(Auth::ApiKey(key.clone())),
            (None, Some(token)) => Some(Auth::BearerToken(token.clone())),
            (None, None) => None,
        };

        let mode = Mode::of(&args);
        let model = args
            .model
            .filter(|m| !m.trim().is_empty())
            .or_else(|| env.luminos_model.clone())
            .unwrap_or_else(|| DEFAULT_MODEL.to_string());
        let config = Config {
            target_arg: shown,
            target,
            target_canonical,
            scan: ScanOptions {
                depth: args.depth,
                show_hidden: args.all,
                exclude: args.exclude,
                respect_ignore: !args.no_ignore,
            },
            output: OutputOptions {
                json: args.json,
                file: args.output,
            },
            investigation: InvestigationOptions {
                fresh: args.fresh,
                model_facts: ModelFacts::of(&model),
                model,
                jobs: args.jobs as usize,
                mode,
                max_cost,
                budget,
                redact: !args.no_redact,
                batch: args.batch,
                batch_size: args
                    .batch_size
                    .map_or(api::batch::MAX_REQUESTS, |n| n as usize),
                refine: args
                    .refine_depth
                    .or(args.refine.then_some(DEFAULT_REFINE_ROUNDS)),
            },
            api: ApiSettings {
                base_url: env
                    .anthropic_base_url
                    .clone()
                    .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
                    .trim_end_matches('/')
                    .to_string(),
                auth,
                max_retries: args.max_retries,
                headers_timeout,
                idle_timeout,
                retry_backoff,
                batch_timing,
            },
            cache_root,
            progress: if env.stderr_is_terminal {
                ProgressStyle::Live {
                    color: !env.no_color,
                }
            } else {
                ProgressStyle::Plain
            },
        };
        Ok(Invocation::Run {
            config: Box::new(config),
            clear_cache_first: args.clear_cache,
        })
    }
}

impl Invocation {
    /// `luminos ask`: the configuration a run on the same target with the
    /// flags `ask` shares would have, with the question's budget
    /// (`--budget`, or [`DEFAULT_ASK_BUDGET_USD`]).
    fn resolve_ask(ask: AskArgs, env: &Env) -> Result<Invocation, ConfigError> {
        let budget = match ask.budget.as_deref() {
            Some(raw) => parse_budget(raw)?,
            None => Some(DEFAULT_ASK_BUDGET_USD),
        };
        let shown = ask.target.to_string_lossy().into_owned();
        // The run's own defaults for every flag `ask` does not have.
        let argv = [
            std::ffi::OsStr::new("luminos"),
            std::ffi::OsStr::new("--"),
            ask.target.as_os_str(),
        ];
        let mut run = Args::try_parse_from(argv).map_err(|_| ConfigError::NotADirectory(shown))?;
        run.json = ask.json;
        run.model = ask.model;
        run.max_retries = ask.max_retries;
        run.all = ask.all;
        run.exclude = ask.exclude;
        run.no_ignore = ask.no_ignore;
        run.no_redact = ask.no_redact;
        match Invocation::resolve(run, env)? {
            Invocation::Run { mut config, .. } => {
                config.investigation.budget = budget;
                Ok(Invocation::Ask {
                    config,
                    question: ask.question,
                })
            }
            other => Ok(other),
        }
    }
}

/// Rounds of refinement `--refine` asks for without `--refine-depth`.
pub(crate) const DEFAULT_REFINE_ROUNDS: u32 = 1;

/// `--max-cost`: a finite dollar amount above zero (`2.50`, `$3`). A cap of
/// nothing, or less, could only stop the run before it starts.
fn parse_max_cost(raw: &str) -> Result<f64, ConfigError> {
    dollars_above_zero(raw).ok_or_else(|| ConfigError::InvalidFlag {
        flag: "--max-cost",
        expected: "a dollar amount above zero, such as 2.50",
        value: raw.to_string(),
    })
}

/// `--budget`: a finite dollar amount above zero (`5`, `$0.50`), or `none`
/// for no ceiling.
fn parse_budget(raw: &str) -> Result<Option<f64>, ConfigError> {
    if raw.trim().eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    dollars_above_zero(raw)
        .map(Some)
        .ok_or_else(|| ConfigError::InvalidFlag {
            flag: "--budget",
            expected: "a dollar amount above zero, such as 5, or none",
            value: raw.to_string(),
        })
}

/// A finite dollar amount above zero, with or without a leading `$`: what
/// `--max-cost` and `--budget` both take.
fn dollars_above_zero(raw: &str) -> Option<f64> {
    raw.trim()
        .trim_start_matches('$')
        .parse::<f64>()
        .ok()
        .filter(|usd| usd.is_finite() && *usd > 0.0)
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
