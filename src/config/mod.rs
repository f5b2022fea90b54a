//! The resolved configuration of one run.
//!
//! [`crate::cli::Args`] is what the user typed; [`Config`] is what luminos will
//! do. Flags and environment variables are read exactly once, by the command
//! line's resolution ([`crate::cli`]), and every later module takes the piece
//! of `Config` it needs. Nothing past `main` reads `std::env`.
//!
//! This module is the bottom of the run's settings: it holds the `Config`
//! types, every default ([`defaults`]), the environment variables' names,
//! the errors, and the parsing of values that need no command line
//! (`env` reads the environment, `base_url`, `language` and `own_outputs`
//! check one value each). It imports no command line and no pass, so the
//! engine and the passes can read it.

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use crate::ai::api::batch::BatchTiming;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::{Auth, ClientConfig};
use crate::money::Usd;
use crate::progress::ProgressStyle;
use crate::report::Format;
use crate::scan::ScanOptions;

/// Overrides the idle timeout, the longest an answer may go without
/// progress (decimal seconds, e.g. `0.5`): for slow proxies, and for tests
/// that stall streams on purpose.
pub(crate) const IDLE_TIMEOUT_VAR: &str = "LUMINOS_IDLE_TIMEOUT_SECS";

/// Overrides the deadline of one API attempt (decimal seconds): for tests
/// of endpoints that trickle forever.
pub(crate) const ATTEMPT_DEADLINE_VAR: &str = "LUMINOS_ATTEMPT_DEADLINE_SECS";

/// Overrides the wait for the response headers (decimal seconds): for
/// slow gateways, and for tests of endpoints that never answer.
pub(crate) const HEADERS_TIMEOUT_VAR: &str = "LUMINOS_HEADERS_TIMEOUT_SECS";

/// Overrides the wait before the first retry (milliseconds; later retries
/// double it): tests that inject faults by the dozen set it to a few ms.
pub(crate) const RETRY_BACKOFF_VAR: &str = "LUMINOS_RETRY_BACKOFF_MS";

/// The model's context window in tokens, as `--context-window` gives it
/// (the flag wins): for a local model behind an Anthropic-compatible
/// server, set once in the shell.
pub(crate) const CONTEXT_WINDOW_VAR: &str = "LUMINOS_CONTEXT_WINDOW";

/// Overrides the wait before a batch is first polled (milliseconds; later
/// polls wait longer, see [`crate::ai::api::batch::BatchTiming`]).
pub(crate) const BATCH_POLL_VAR: &str = "LUMINOS_BATCH_POLL_MS";

/// Everything a run needs to know, resolved from flags and environment.
#[derive(Debug, Clone)]
pub(crate) struct Config {
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
    /// The full trace on stderr (`-v`), not the few lines per directory.
    pub verbose: bool,
    /// What resolving the settings changed and the user should know (a
    /// base URL used without its `/v1`): one line each, printed before the
    /// scan.
    pub notes: Vec<String>,
}

/// Where the report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutputOptions {
    /// The report's format: `--format`, `--json`, else the `-o` file's
    /// extension, else text.
    pub format: Format,
    /// Write to this file instead of stdout (`-o`).
    pub file: Option<PathBuf>,
    /// `file`, relative to the target, when it lies inside it: a run
    /// records it in the cache, so later runs leave it out of the tree.
    pub inside_target: Option<PathBuf>,
    /// The columns the terminal report fits: the terminal's when stdout is
    /// one, else [`crate::report::text_fit::DEFAULT_WIDTH`].
    pub width: usize,
}

/// How the investigation runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InvestigationOptions {
    /// Start a new investigation (`--fresh`).
    pub fresh: bool,
    /// Model id sent with every request.
    pub model: String,
    /// What the catalog says about `model`, resolved once for the whole run
    /// (prices, window, thinking, lifecycle).
    pub model_facts: ModelFacts,
    /// Concurrent directory loops (`-j`).
    pub jobs: usize,
    /// What the run does after the scan.
    pub mode: Mode,
    /// Spend cap in dollars (`--max-cost`).
    pub max_cost: Option<Usd>,
    /// What one run may spend in dollars (`--budget`); `None`: no ceiling.
    pub budget: Option<Usd>,
    /// What one run may send and receive in tokens (`--token-budget`):
    /// input, cache and output together; `None`: no ceiling.
    pub token_budget: Option<u64>,
    /// The model's throughput the user gave (`--tokens-per-second`), for
    /// `--estimate` to say how long the run would take.
    pub tokens_per_second: Option<f64>,
    /// Redact secrets before text reaches the model (not `--no-redact`).
    pub redact: bool,
    /// Send requests through the Message Batches API (`--batch`).
    pub batch: bool,
    /// The most requests in one batch (`--batch-size`, default the API's
    /// limit).
    pub batch_size: usize,
    /// The language the model writes summaries, flags and the verdict in
    /// (`--language`); `None`: the model's own choice (English, in
    /// practice). Labels and JSON keys never change.
    pub language: Option<String>,
    /// Rounds of refinement after the synthesis (`--refine`, 1 unless
    /// `--refine-depth` says); `None`: no refinement.
    pub refine: Option<u32>,
}

/// `--price INPUT,OUTPUT`: dollars per million input and output tokens,
/// for a model the catalog does not price (or prices otherwise). Rates,
/// not amounts: they stay `f64` like the catalog's prices, and what they
/// price comes out as [`Usd`] where it is spent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GivenPrice {
    pub input: f64,
    pub output: f64,
}

/// What a run does; the flags that choose it exclude one another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Scan, then investigate (the default).
    Investigate,
    /// Scan, then project the cost; make no API call (`--estimate`).
    Estimate,
    /// Run the base scan alone (`--scan-only`).
    ScanOnly,
    /// Only cancel the batches in flight, then stop (`--cancel-batch`).
    CancelBatch,
}

/// Connection settings for the Messages API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiSettings {
    /// `ANTHROPIC_BASE_URL` without a trailing slash.
    pub base_url: String,
    /// The credential, if any was found.
    pub auth: Option<Auth>,
    /// Retries after the first attempt (`--max-retries`).
    pub max_retries: u32,
    /// Longest wait for the response headers
    /// (`LUMINOS_HEADERS_TIMEOUT_SECS`, default
    /// [`api::HEADERS_TIMEOUT`](crate::ai::api::HEADERS_TIMEOUT)).
    pub headers_timeout: Duration,
    /// Longest an answer may go without progress before the attempt
    /// counts as dead (`LUMINOS_IDLE_TIMEOUT_SECS`, default
    /// [`api::IDLE_TIMEOUT`](crate::ai::api::IDLE_TIMEOUT)).
    pub idle_timeout: Duration,
    /// Longest one attempt may take, however it progresses
    /// (`LUMINOS_ATTEMPT_DEADLINE_SECS`, default
    /// [`api::ATTEMPT_DEADLINE`](crate::ai::api::ATTEMPT_DEADLINE)).
    pub attempt_deadline: Duration,
    /// Wait before the first retry when the server names none
    /// (`LUMINOS_RETRY_BACKOFF_MS`, default
    /// [`api::retry::INITIAL_BACKOFF`](crate::ai::api::retry::INITIAL_BACKOFF)).
    pub retry_backoff: Duration,
    /// How batches are polled (`LUMINOS_BATCH_POLL_MS` sets the first
    /// wait; default [`crate::ai::api::batch::FIRST_POLL`]).
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
        client.attempt_deadline = self.api.attempt_deadline;
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
    /// `luminos ask TARGET QUESTION`: the target's configuration (its
    /// budget the question's), and the question as typed.
    Ask {
        config: Box<Config>,
        question: String,
    },
    /// `luminos mcp`: serve MCP on stdio; each tool call names its own
    /// target and is resolved then, with the same rules.
    Mcp,
}

/// A problem with the command line that stops the run before any work.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum ConfigError {
    /// The message format is the original's.
    #[error("'{0}' is not a directory or does not exist.")]
    NotADirectory(String),
    /// The target is a file: luminos investigates directories.
    #[error("'{0}' is a file; luminos investigates a directory (the one that holds it, say)")]
    IsAFile(String),
    /// More than one target: a usage error (exit 2). The names are
    /// already escaped to one line each.
    #[error(
        "luminos investigates one directory at a time, and was given {count}: {names}; run it once for each"
    )]
    TooManyTargets { count: usize, names: String },
    /// The target is a directory that cannot be listed.
    #[error("cannot read the directory '{target}': {error}")]
    Unreadable { target: String, error: String },
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
    /// Flags that ask for contradictory things: a usage error (exit 2).
    #[error("{0}")]
    Conflict(String),
    /// The window given is too small for luminos's fixed prompts: a usage
    /// error (exit 2) naming the smallest that works.
    #[error(
        "{by} {given} is too small: luminos's own prompts need a context window of at least \
         {} tokens (--context-window {smallest})",
        crate::text::format_thousands(*.smallest)
    )]
    WindowTooSmall {
        by: &'static str,
        given: u64,
        smallest: u64,
    },
    /// `ANTHROPIC_BASE_URL` is not an address: a usage error (exit 2),
    /// found before the scan. `value` is already escaped to one line.
    #[error("ANTHROPIC_BASE_URL is not an address luminos can use ('{value}'): {why}")]
    BadBaseUrl { value: String, why: String },
    /// `--language` is not a language's name: a usage error (exit 2).
    /// `value` is already escaped to one line.
    #[error("--language takes {expected}, not '{value}'")]
    InvalidLanguage {
        expected: &'static str,
        value: String,
    },
}

impl ConfigError {
    /// The command line itself is wrong, as clap's own errors say it is:
    /// the run exits with the usage status.
    pub(crate) fn is_usage(&self) -> bool {
        matches!(
            self,
            ConfigError::InvalidLanguage { .. }
                | ConfigError::Conflict(_)
                | ConfigError::WindowTooSmall { .. }
                | ConfigError::TooManyTargets { .. }
                | ConfigError::BadBaseUrl { .. }
        )
    }
}

mod base_url;
pub(crate) mod defaults;
mod env;
mod language;
mod own_outputs;

pub(crate) use base_url::parse_base_url;
pub(crate) use env::Env;
pub(crate) use language::parse_language;
pub(crate) use own_outputs::own_outputs;
