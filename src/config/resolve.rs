//! Resolving the command line and the captured environment into an
//! [`Invocation`]: which source wins for each setting, the defaults, and the
//! parsing of variable values into typed settings with a one-line
//! [`ConfigError`] for a bad one (flag values arrive already checked by
//! clap, see [`crate::cli`]). It reads nothing itself beyond checking the
//! target directory (that it is one, and can be listed); the environment
//! arrives as an [`Env`].

use std::ops::RangeInclusive;

use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

use super::defaults::{
    DEFAULT_ASK_BUDGET_USD, DEFAULT_BASE_URL, DEFAULT_BUDGET_USD, DEFAULT_CACHE_ROOT,
    DEFAULT_MODEL, DEFAULT_REFINE_ROUNDS,
};
use super::language::parse_language;
use super::{
    ATTEMPT_DEADLINE_VAR, ApiSettings, BATCH_POLL_VAR, CONTEXT_WINDOW_VAR, Config, ConfigError,
    Env, GivenPrice, HEADERS_TIMEOUT_VAR, IDLE_TIMEOUT_VAR, InvestigationOptions, Invocation, Mode,
    OutputOptions, RETRY_BACKOFF_VAR,
};
use crate::ai::api::batch::BatchTiming;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::{self, Auth};
use crate::cli::{ApiArgs, Args, AskArgs, Budget, Command, FormatArg};
use crate::paths::absolute;
use crate::progress::ProgressStyle;
use crate::report::Format;
use crate::scan::ScanOptions;

impl Invocation {
    /// Resolve the command line and the environment into what to do.
    pub(crate) fn resolve(args: Args, env: &Env) -> Result<Invocation, ConfigError> {
        match args.command {
            Some(Command::Ask(ask)) => return Invocation::resolve_ask(ask, env),
            Some(Command::Mcp) => return Ok(Invocation::Mcp),
            None => {}
        }
        let format = output_format(&args)?;
        let cache_root = env
            .luminos_cache_dir
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_CACHE_ROOT));
        let max_cost = args.max_cost;
        let language = args.language.as_deref().map(parse_language).transpose()?;
        let budget = match args.budget {
            Some(Budget::Usd(usd)) => Some(usd),
            Some(Budget::Unlimited) => None,
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
        // A target that cannot be listed has nothing to report, and an
        // investigation of it would be paid for nothing.
        if let Err(err) = std::fs::read_dir(&target_canonical) {
            return Err(ConfigError::Unreadable {
                target: shown,
                error: err.to_string(),
            });
        }

        let idle_timeout = match &env.luminos_idle_timeout {
            Some(raw) => parse_seconds(IDLE_TIMEOUT_VAR, raw)?,
            None => api::IDLE_TIMEOUT,
        };
        let headers_timeout = match &env.luminos_headers_timeout {
            Some(raw) => parse_seconds(HEADERS_TIMEOUT_VAR, raw)?,
            None => api::HEADERS_TIMEOUT,
        };
        let attempt_deadline = match &env.luminos_attempt_deadline {
            Some(raw) => parse_seconds(ATTEMPT_DEADLINE_VAR, raw)?,
            None => api::ATTEMPT_DEADLINE,
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
            .api
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| env.luminos_model.clone())
            .unwrap_or_else(|| DEFAULT_MODEL.to_string());
        let model_facts = model_facts(&model, &args.api, env, language.as_deref())?;
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
                format,
                file: args.output,
            },
            investigation: InvestigationOptions {
                fresh: args.fresh,
                model_facts,
                model,
                jobs: args.jobs as usize,
                mode,
                max_cost,
                budget,
                token_budget: args.api.token_budget,
                tokens_per_second: args.tokens_per_second,
                redact: !args.no_redact,
                batch: args.batch,
                batch_size: args
                    .batch_size
                    .map_or(api::batch::MAX_REQUESTS, |n| n as usize),
                language,
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
                max_retries: args.api.max_retries,
                headers_timeout,
                idle_timeout,
                attempt_deadline,
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
            verbose: args.verbose,
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
        let shown = ask.target.to_string_lossy().into_owned();
        // The run's own defaults for every flag `ask` does not have.
        let argv = [
            std::ffi::OsStr::new("luminos"),
            std::ffi::OsStr::new("--"),
            ask.target.as_os_str(),
        ];
        let mut run = Args::try_parse_from(argv).map_err(|_| ConfigError::NotADirectory(shown))?;
        run.json = ask.json;
        run.api = ask.api;
        run.all = ask.all;
        run.exclude = ask.exclude;
        run.no_ignore = ask.no_ignore;
        run.no_redact = ask.no_redact;
        run.verbose = ask.verbose;
        match Invocation::resolve(run, env)? {
            Invocation::Run { mut config, .. } => {
                config.investigation.budget = match ask.budget {
                    Some(Budget::Usd(usd)) => Some(usd),
                    Some(Budget::Unlimited) => None,
                    None => Some(DEFAULT_ASK_BUDGET_USD),
                };
                Ok(Invocation::Ask {
                    config,
                    question: ask.question,
                })
            }
            other => Ok(other),
        }
    }
}

/// The report's format: `--format`, or `--json` (its short form), or the
/// `-o` file's extension, else text. `--json` with another `--format`, and
/// `--estimate` with a format it has no rendering for, are usage errors.
fn output_format(args: &Args) -> Result<Format, ConfigError> {
    let asked = args.format.map(|format| match format {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Html => Format::Html,
        FormatArg::Agents => Format::Agents,
    });
    let explicit = match (args.json, asked) {
        (true, Some(format)) if format != Format::Json => {
            return Err(ConfigError::Conflict(format!(
                "--json is short for --format json; it cannot go with --format {}",
                format.as_str()
            )));
        }
        (true, _) => Some(Format::Json),
        (false, asked) => asked,
    };
    let by_name = args.output.as_deref().and_then(Format::from_extension);
    let format = explicit.or(by_name).unwrap_or(Format::Text);
    if args.estimate && matches!(format, Format::Markdown | Format::Html | Format::Agents) {
        return Err(ConfigError::Conflict(format!(
            "--estimate writes text or JSON, not {}{}",
            format.as_str(),
            if explicit.is_none() {
                " (from the -o file's extension; add --format text or --format json)"
            } else {
                ""
            }
        )));
    }
    Ok(format)
}

/// `--price INPUT,OUTPUT` (clap's value parser, so a bad value is a usage
/// error, exit 2): two dollar amounts per million tokens, each from 0 (a
/// local model) to [`api::catalog::MAX_GIVEN_PRICE`], with or without `$`.
pub(crate) fn parse_price(raw: &str) -> Result<GivenPrice, String> {
    let amount = |part: &str| {
        part.trim()
            .trim_start_matches('$')
            .parse::<f64>()
            .ok()
            .filter(|usd| usd.is_finite() && (0.0..=api::catalog::MAX_GIVEN_PRICE).contains(usd))
    };
    let parts: Vec<&str> = raw.split(',').collect();
    match parts.as_slice() {
        [input, output] => match (amount(input), amount(output)) {
            (Some(input), Some(output)) => Ok(GivenPrice { input, output }),
            _ => Err(format!(
                "each price is dollars per million tokens, from 0 to {}",
                api::catalog::MAX_GIVEN_PRICE
            )),
        },
        _ => Err(
            "takes INPUT,OUTPUT: dollars per million input and output tokens, such as \
                  3,15 (0,0 for a local model)"
                .to_string(),
        ),
    }
}

/// What the catalog says of `model`, with what the user gave instead: a
/// price given with `--price` and a window given with `--context-window`
/// (or [`CONTEXT_WINDOW_VAR`]) are the model's from here on, so every
/// figure of the run (the window, the purse, `--estimate`) reads them. A
/// window too small for luminos's fixed prompts (with `language`'s rule)
/// is refused, naming the smallest that works.
fn model_facts(
    model: &str,
    api: &ApiArgs,
    env: &Env,
    language: Option<&str>,
) -> Result<ModelFacts, ConfigError> {
    let mut facts = ModelFacts::of(model);
    if let Some(price) = api.price {
        facts = facts.with_price(price.input, price.output);
    }
    let given = match (api.context_window, &env.luminos_context_window) {
        (Some(tokens), _) => Some((tokens, "--context-window")),
        (None, Some(raw)) => Some((parse_window(raw)?, CONTEXT_WINDOW_VAR)),
        (None, None) => None,
    };
    if let Some((tokens, by)) = given {
        facts = facts.with_window(tokens, by);
        let smallest = crate::ai::smallest_window::smallest_window(facts.model, language);
        if tokens < smallest {
            return Err(ConfigError::WindowTooSmall {
                by,
                given: tokens,
                smallest,
            });
        }
    }
    Ok(facts)
}

/// [`CONTEXT_WINDOW_VAR`]: a whole number of tokens, as the flag takes it.
fn parse_window(raw: &str) -> Result<u64, ConfigError> {
    raw.trim()
        .parse::<u64>()
        .ok()
        .filter(|tokens| (1..=api::catalog::MAX_GIVEN_WINDOW).contains(tokens))
        .ok_or_else(|| ConfigError::InvalidVar {
            name: CONTEXT_WINDOW_VAR,
            expected: "a whole number of tokens",
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
