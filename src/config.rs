//! The resolved configuration of one run.
//!
//! [`crate::cli::Args`] is what the user typed; [`Config`] is what luminos will
//! do. Flags and environment variables are read exactly once, here, and every
//! later module takes the piece of `Config` it needs. Nothing past `main` reads
//! `std::env`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use thiserror::Error;

use crate::ai::api::{self, Auth, ClientConfig, DEFAULT_BASE_URL, DEFAULT_MODEL};
use crate::ai::engine::batch::BatchTiming;
use crate::ai::rules::decide::DEFAULT_BUDGET_USD;
use crate::cli::Args;
use crate::progress::ProgressStyle;
use crate::scan::ScanOptions;

/// Where investigations are cached when `LUMINOS_CACHE_DIR` is unset.
pub(crate) const DEFAULT_CACHE_ROOT: &str = "/tmp/luminos";

/// Overrides the stream idle timeout (decimal seconds, e.g. `0.5`): for slow
/// proxies, and for tests that stall streams on purpose.
pub(crate) const IDLE_TIMEOUT_VAR: &str = "LUMINOS_IDLE_TIMEOUT_SECS";

/// Overrides the wait for the response headers (decimal seconds): for
/// slow gateways, and for tests of endpoints that never answer.
pub(crate) const HEADERS_TIMEOUT_VAR: &str = "LUMINOS_HEADERS_TIMEOUT_SECS";

/// Overrides the wait before the first retry (milliseconds; later retries
/// double it): tests that inject faults by the dozen set it to a few ms.
pub(crate) const RETRY_BACKOFF_VAR: &str = "LUMINOS_RETRY_BACKOFF_MS";

/// Overrides the wait before a batch is first polled (milliseconds; later
/// polls wait longer, see [`crate::ai::engine::batch::BatchTiming`]).
pub(crate) const BATCH_POLL_VAR: &str = "LUMINOS_BATCH_POLL_MS";

/// Everything a run needs to know, resolved from flags and environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// The target as the user typed it, for messages.
    pub target_arg: String,
    /// The absolute form of the target, not canonicalized (the original's
    /// `abspath`): report paths are built on it.
    pub target: PathBuf,
    /// The target with symlinks resolved: the sandbox root for every tool, the
    /// investigation key and the base of cache keys.
    pub target_canonical: PathBuf,
    /// What the base scan looks at.
    pub scan: ScanOptions,
    /// Where and how the report is written.
    pub output: OutputOptions,
    /// How the AI investigation runs.
    pub investigation: InvestigationOptions,
    /// How to reach the Messages API.
    pub api: ApiSettings,
    /// The cache root (`/tmp/luminos` or `LUMINOS_CACHE_DIR`).
    pub cache_root: PathBuf,
    /// How progress is shown on stderr.
    pub progress: ProgressStyle,
}

/// Where the report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputOptions {
    /// JSON instead of the terminal report (`--json`).
    pub json: bool,
    /// Write to this file instead of stdout (`-o`).
    pub file: Option<PathBuf>,
}

/// How the investigation runs.
#[derive(Debug, Clone, PartialEq)]
pub struct InvestigationOptions {
    /// Start a new investigation (`--fresh`).
    pub fresh: bool,
    /// Model id sent with every request.
    pub model: String,
    /// Concurrent directory loops (`-j`).
    pub jobs: usize,
    /// Only project the cost; make no API call (`--estimate`).
    pub estimate: bool,
    /// Run the base scan alone (`--scan-only`).
    pub scan_only: bool,
    /// Spend cap in dollars (`--max-cost`).
    pub max_cost: Option<f64>,
    /// What one run may spend in dollars (`--budget`); `None`: no ceiling.
    pub budget: Option<f64>,
    /// Redact secrets before text reaches the model (not `--no-redact`).
    pub redact: bool,
    /// Send requests through the Message Batches API (`--batch`).
    pub batch: bool,
    /// The most requests in one batch (`--batch-size`, default the API's
    /// limit).
    pub batch_size: usize,
    /// Only cancel the batches in flight, then stop (`--cancel-batch`).
    pub cancel_batch: bool,
}

/// Connection settings for the Messages API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiSettings {
    /// `ANTHROPIC_BASE_URL` without a trailing slash.
    pub base_url: String,
    /// The credential, if any was found.
    pub auth: Option<Auth>,
    /// Retries after the first attempt (`--max-retries`).
    pub max_retries: u32,
    /// Longest wait for the response headers
    /// (`LUMINOS_HEADERS_TIMEOUT_SECS`, default [`api::HEADERS_TIMEOUT`]).
    pub headers_timeout: Duration,
    /// Longest silence within a response before the attempt counts as
    /// stalled (`LUMINOS_IDLE_TIMEOUT_SECS`, default [`api::IDLE_TIMEOUT`]).
    pub idle_timeout: Duration,
    /// Wait before the first retry when the server names none
    /// (`LUMINOS_RETRY_BACKOFF_MS`, default
    /// [`api::retry::INITIAL_BACKOFF`]).
    pub retry_backoff: Duration,
    /// How batches are polled (`LUMINOS_BATCH_POLL_MS` sets the first
    /// wait; default [`crate::ai::engine::batch::FIRST_POLL`]).
    pub batch_timing: BatchTiming,
}

impl Config {
    /// The client's settings for this run, or `None` when no credential was
    /// found. The client owns its defaults; this fills in what the user set.
    pub(crate) fn client_config(&self) -> Option<ClientConfig> {
        let auth = self.api.auth.clone()?;
        let mut client = ClientConfig::new(
            self.api.base_url.clone(),
            auth,
            self.investigation.model.clone(),
        );
        client.max_retries = self.api.max_retries;
        client.headers_timeout = self.api.headers_timeout;
        client.idle_timeout = self.api.idle_timeout;
        client.retry_backoff = self.api.retry_backoff;
        Some(client)
    }
}

/// What the binary should do after resolving the command line.
#[derive(Debug, Clone)]
pub(crate) enum Invocation {
    /// `--clear-cache` with no target: clear and stop.
    ClearCacheOnly {
        /// The cache root to remove.
        cache_root: PathBuf,
    },
    /// Run on a target (after clearing the cache when asked).
    Run {
        /// The resolved configuration.
        config: Box<Config>,
        /// `--clear-cache` was also given.
        clear_cache_first: bool,
    },
}

/// A problem with the command line that stops the run before any work.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum ConfigError {
    /// The message format is the original's.
    #[error("'{0}' is not a directory or does not exist.")]
    NotADirectory(String),
    /// No TARGET and nothing else to do.
    #[error("the following argument is required: <TARGET> (see --help)")]
    MissingTarget,
    /// A tuning variable that is set but not a usable value.
    #[error("{name} must be {expected}, not '{value}'")]
    InvalidVar {
        name: &'static str,
        expected: &'static str,
        value: String,
    },
    /// A flag whose value is not usable.
    #[error("{flag} takes {expected}, not '{value}'")]
    InvalidFlag {
        flag: &'static str,
        expected: &'static str,
        value: String,
    },
}

/// The environment variables luminos reads, captured once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    pub anthropic_api_key: Option<String>,
    pub anthropic_auth_token: Option<String>,
    pub anthropic_base_url: Option<String>,
    pub luminos_model: Option<String>,
    pub luminos_cache_dir: Option<OsString>,
    /// `LUMINOS_IDLE_TIMEOUT_SECS`, unparsed.
    pub luminos_idle_timeout: Option<String>,
    /// `LUMINOS_HEADERS_TIMEOUT_SECS`, unparsed.
    pub luminos_headers_timeout: Option<String>,
    /// `LUMINOS_RETRY_BACKOFF_MS`, unparsed.
    pub luminos_retry_backoff: Option<String>,
    /// `LUMINOS_BATCH_POLL_MS`, unparsed.
    pub luminos_batch_poll: Option<String>,
    pub no_color: bool,
    /// Whether stderr is a terminal.
    pub stderr_is_terminal: bool,
}

impl Env {
    /// Read the process environment.
    pub(crate) fn from_process() -> Self {
        use std::io::IsTerminal;
        Env {
            anthropic_api_key: non_empty_var("ANTHROPIC_API_KEY"),
            anthropic_auth_token: non_empty_var("ANTHROPIC_AUTH_TOKEN"),
            anthropic_base_url: non_empty_var("ANTHROPIC_BASE_URL"),
            luminos_model: non_empty_var("LUMINOS_MODEL"),
            luminos_cache_dir: std::env::var_os("LUMINOS_CACHE_DIR").filter(|v| !v.is_empty()),
            luminos_idle_timeout: non_empty_var(IDLE_TIMEOUT_VAR),
            luminos_headers_timeout: non_empty_var(HEADERS_TIMEOUT_VAR),
            luminos_retry_backoff: non_empty_var(RETRY_BACKOFF_VAR),
            luminos_batch_poll: non_empty_var(BATCH_POLL_VAR),
            // https://no-color.org: present and non-empty disables colour.
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            stderr_is_terminal: std::io::stderr().is_terminal(),
        }
    }
}

fn non_empty_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Invocation {
    /// Resolve the command line and the environment into what to do.
    pub(crate) fn resolve(args: Args, env: &Env) -> Result<Invocation, ConfigError> {
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
        let retry_backoff = match &env.luminos_retry_backoff {
            Some(raw) => parse_retry_backoff(raw)?,
            None => api::retry::INITIAL_BACKOFF,
        };

        let batch_timing = match &env.luminos_batch_poll {
            Some(raw) => BatchTiming::starting_at(parse_batch_poll(raw)?),
            None => BatchTiming::default(),
        };

        let auth = match (&env.anthropic_api_key, &env.anthropic_auth_token) {
            (Some(key), _) => Some(Auth::ApiKey(key.clone())),
            (None, Some(token)) => Some(Auth::BearerToken(token.clone())),
            (None, None) => None,
        };

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
                model: args
                    .model
                    .filter(|m| !m.trim().is_empty())
                    .or_else(|| env.luminos_model.clone())
                    .unwrap_or_else(|| DEFAULT_MODEL.to_string()),
                jobs: args.jobs as usize,
                estimate: args.estimate,
                scan_only: args.scan_only,
                max_cost,
                budget,
                redact: !args.no_redact,
                batch: args.batch,
                batch_size: args
                    .batch_size
                    .map_or(api::batch::MAX_REQUESTS, |n| n as usize),
                cancel_batch: args.cancel_batch,
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

/// `--max-cost`: a finite dollar amount above zero (`2.50`, `$3`). A cap of
/// nothing, or less, could only stop the run before it starts.
fn parse_max_cost(raw: &str) -> Result<f64, ConfigError> {
    raw.trim()
        .trim_start_matches('$')
        .parse::<f64>()
        .ok()
        .filter(|usd| usd.is_finite() && *usd > 0.0)
        .ok_or_else(|| ConfigError::InvalidFlag {
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
    raw.trim()
        .trim_start_matches('$')
        .parse::<f64>()
        .ok()
        .filter(|usd| usd.is_finite() && *usd > 0.0)
        .map(Some)
        .ok_or_else(|| ConfigError::InvalidFlag {
            flag: "--budget",
            expected: "a dollar amount above zero, such as 5, or none",
            value: raw.to_string(),
        })
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

/// `LUMINOS_RETRY_BACKOFF_MS`: whole milliseconds, at most a minute (0 retries
/// at once).
fn parse_retry_backoff(raw: &str) -> Result<Duration, ConfigError> {
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms <= 60_000)
        .map(Duration::from_millis)
        .ok_or_else(|| ConfigError::InvalidVar {
            name: RETRY_BACKOFF_VAR,
            expected: "a whole number of milliseconds up to 60000",
            value: raw.to_string(),
        })
}

/// `LUMINOS_BATCH_POLL_MS`: whole milliseconds from 1 to an hour.
fn parse_batch_poll(raw: &str) -> Result<Duration, ConfigError> {
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| (1..=3_600_000).contains(ms))
        .map(Duration::from_millis)
        .ok_or_else(|| ConfigError::InvalidVar {
            name: BATCH_POLL_VAR,
            expected: "a whole number of milliseconds from 1 to 3600000",
            value: raw.to_string(),
        })
}

/// The absolute form of `path` without resolving symlinks, like Python's
/// `os.path.abspath`: joined to the working directory, then `.` and `..`
/// removed lexically.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    normalize_lexically(&joined)
}

/// Remove `.` and `..` components and duplicate separators without touching
/// the file system. `..` at the root stays at the root.
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(list: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("luminos").chain(list.iter().copied())).unwrap()
    }

    fn config(list: &[&str], env: &Env) -> Config {
        match Invocation::resolve(args(list), env).unwrap() {
            Invocation::Run { config, .. } => *config,
            other => panic!("expected a run, got {other:?}"),
        }
    }

    #[test]
    fn clear_cache_alone_needs_no_target() {
        let plan = Invocation::resolve(args(&["--clear-cache"]), &Env::default()).unwrap();
        assert!(
            matches!(plan, Invocation::ClearCacheOnly { cache_root } if cache_root == Path::new(DEFAULT_CACHE_ROOT))
        );
    }

    #[test]
    fn missing_target_is_an_error() {
        // clap refuses it first; resolve() still refuses it for library callers.
        assert!(Args::try_parse_from(["luminos"]).is_err());
        let mut raw = args(&["--clear-cache"]);
        raw.clear_cache = false;
        let err = Invocation::resolve(raw, &Env::default()).unwrap_err();
        assert_eq!(err, ConfigError::MissingTarget);
    }

    /// The investigation options `flags` resolve to, for a real target.
    fn investigation_with(flags: &[&str]) -> Result<InvestigationOptions, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().to_str().unwrap();
        let list: Vec<&str> = flags.iter().copied().chain([target]).collect();
        Invocation::resolve(args(&list), &Env::default()).map(|plan| match plan {
            Invocation::Run { config, .. } => config.investigation,
            other => panic!("expected a run, got {other:?}"),
        })
    }

    #[test]
    fn max_cost_is_a_positive_dollar_amount() {
        let cap = |flags: &[&str]| investigation_with(flags).map(|options| options.max_cost);
        assert_eq!(cap(&[]), Ok(None));
        assert_eq!(cap(&["--max-cost", "2.50"]), Ok(Some(2.5)));
        assert_eq!(cap(&["--max-cost=$3"]), Ok(Some(3.0)));
        // Negative amounts are values to refuse, not unknown flags.
        for bad in [
            &["--max-cost", "-5"][..],
            &["--max-cost=-5"],
            &["--max-cost", "0"],
        ] {
            let err = cap(bad).unwrap_err().to_string();
            assert!(
                err.starts_with("--max-cost takes a dollar amount above zero"),
                "{err}"
            );
        }
        for bad in ["lots", "inf", "NaN", "-0", ""] {
            assert!(cap(&["--max-cost", bad]).is_err(), "{bad}");
        }
        assert_eq!(
            cap(&["--max-cost", "-5"]).unwrap_err(),
            ConfigError::InvalidFlag {
                flag: "--max-cost",
                expected: "a dollar amount above zero, such as 2.50",
                value: "-5".into()
            }
        );
    }

    #[test]
    fn the_budget_is_dollars_or_none_and_five_by_default() {
        let budget = |flags: &[&str]| investigation_with(flags).map(|options| options.budget);
        assert_eq!(budget(&[]), Ok(Some(DEFAULT_BUDGET_USD)));
        assert_eq!(budget(&["--budget", "2.50"]), Ok(Some(2.5)));
        assert_eq!(budget(&["--budget=$20"]), Ok(Some(20.0)));
        assert_eq!(budget(&["--budget", " None "]), Ok(None));
        for bad in ["-5", "0", "lots", "inf", ""] {
            let err = budget(&["--budget", bad]).unwrap_err().to_string();
            assert!(
                err.starts_with("--budget takes a dollar amount above zero, such as 5, or none"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn a_file_is_not_a_directory() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let shown = file.path().to_string_lossy().into_owned();
        let err = Invocation::resolve(args(&[&shown]), &Env::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("'{shown}' is not a directory or does not exist.")
        );
    }

    #[test]
    fn api_key_wins_over_token_and_model_flag_over_env() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().to_str().unwrap();
        let env = Env {
            anthropic_api_key: Some("k".into()),
            anthropic_auth_token: Some("t".into()),
            luminos_model: Some("env-model".into()),
            anthropic_base_url: Some("http://127.0.0.1:9/".into()),
            ..Env::default()
        };
        let cfg = config(&[target, "--model", "flag-model"], &env);
        assert_eq!(cfg.api.auth, Some(Auth::ApiKey("k".into())));
        assert_eq!(cfg.investigation.model, "flag-model");
        assert_eq!(cfg.api.base_url, "http://127.0.0.1:9");
        let cfg = config(&[target], &env);
        assert_eq!(cfg.investigation.model, "env-model");
        let cfg = config(&[target], &Env::default());
        assert_eq!(cfg.investigation.model, DEFAULT_MODEL);
        assert_eq!(cfg.api.auth, None);
        assert_eq!(cfg.api.base_url, DEFAULT_BASE_URL);
    }

    #[test]
    fn timing_knobs_default_and_parse() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().to_str().unwrap();
        let cfg = config(&[target], &Env::default());
        assert_eq!(cfg.api.idle_timeout, api::IDLE_TIMEOUT);
        assert_eq!(cfg.api.headers_timeout, api::HEADERS_TIMEOUT);
        assert!(api::HEADERS_TIMEOUT < api::IDLE_TIMEOUT);
        assert_eq!(cfg.api.retry_backoff, api::retry::INITIAL_BACKOFF);
        let env = Env {
            luminos_idle_timeout: Some(" 0.25 ".into()),
            luminos_headers_timeout: Some("1.5".into()),
            luminos_retry_backoff: Some("0".into()),
            ..Env::default()
        };
        let cfg = config(&[target], &env);
        assert_eq!(cfg.api.idle_timeout, Duration::from_millis(250));
        assert_eq!(cfg.api.retry_backoff, Duration::ZERO);
        // They reach the client and its retry policy.
        let env = Env {
            anthropic_api_key: Some("k".into()),
            ..env
        };
        let cfg = config(&[target], &env);
        let client = cfg.client_config().unwrap();
        assert_eq!(client.idle_timeout, Duration::from_millis(250));
        assert_eq!(client.headers_timeout, Duration::from_millis(1500));
        let client = api::Client::new(client).unwrap();
        assert_eq!(client.retry_policy().initial_backoff, Duration::ZERO);
        assert_eq!(client.retry_policy().max_backoff, api::retry::MAX_BACKOFF);
        for (idle, headers, backoff) in [
            ("0", "1", "5"),
            ("-1", "1", "5"),
            ("soon", "1", "5"),
            ("1", "1", "1.5"),
            ("1", "1", "60001"),
            ("1", "0", "5"),
            ("1", "never", "5"),
        ] {
            let env = Env {
                luminos_idle_timeout: Some(idle.into()),
                luminos_headers_timeout: Some(headers.into()),
                luminos_retry_backoff: Some(backoff.into()),
                ..Env::default()
            };
            let err = Invocation::resolve(args(&[target]), &env).unwrap_err();
            assert!(
                matches!(err, ConfigError::InvalidVar { .. }),
                "{idle} {headers} {backoff}: {err}"
            );
        }
    }

    #[test]
    fn batch_flags_and_poll_timing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().to_str().unwrap();
        let cfg = config(&[target], &Env::default());
        assert!(!cfg.investigation.batch && !cfg.investigation.cancel_batch);
        assert_eq!(cfg.api.batch_timing, BatchTiming::default());
        let env = Env {
            luminos_batch_poll: Some("20".into()),
            ..Env::default()
        };
        let cfg = config(&["--batch", target], &env);
        assert!(cfg.investigation.batch);
        assert_eq!(cfg.investigation.batch_size, api::batch::MAX_REQUESTS);
        assert_eq!(
            config(&["--batch", "--batch-size", "500", target], &env)
                .investigation
                .batch_size,
            500
        );
        for bad in [
            &["--batch-size", "5"][..],
            &["--batch", "--batch-size", "0"],
        ] {
            let list: Vec<&str> = bad.iter().copied().chain([target]).collect();
            assert!(Args::try_parse_from(std::iter::once("luminos").chain(list)).is_err());
        }
        assert_eq!(cfg.api.batch_timing.first_poll, Duration::from_millis(20));
        assert_eq!(cfg.api.batch_timing.max_poll, Duration::from_millis(240));
        assert!(
            config(&["--cancel-batch", target], &Env::default())
                .investigation
                .cancel_batch
        );
        for bad in ["0", "-5", "soon", "3600001"] {
            let env = Env {
                luminos_batch_poll: Some(bad.into()),
                ..Env::default()
            };
            let err = Invocation::resolve(args(&[target]), &env).unwrap_err();
            assert!(
                matches!(
                    err,
                    ConfigError::InvalidVar {
                        name: BATCH_POLL_VAR,
                        ..
                    }
                ),
                "{bad}"
            );
        }
        for clash in [
            &["--cancel-batch", "--batch"][..],
            &["--cancel-batch", "--estimate"],
            &["--batch", "--scan-only"],
        ] {
            let list: Vec<&str> = clash.iter().copied().chain([target]).collect();
            assert!(
                Args::try_parse_from(std::iter::once("luminos").chain(list)).is_err(),
                "{clash:?}"
            );
        }
        // --estimate --batch prices a batch run.
        assert!(
            config(&["--estimate", "--batch", target], &Env::default())
                .investigation
                .batch
        );
    }

    #[test]
    fn auth_debug_never_shows_the_secret() {
        let shown = format!("{:?}", Auth::ApiKey("sk-secret".into()));
        assert!(!shown.contains("sk-secret"));
    }

    #[test]
    fn lexical_normalization() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c/")),
            PathBuf::from("/a/c")
        );
        assert_eq!(normalize_lexically(Path::new("/../a")), PathBuf::from("/a"));
        assert_eq!(normalize_lexically(Path::new("a/..")), PathBuf::from("."));
    }
}
