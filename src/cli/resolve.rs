//! Resolving the command line and the captured environment into an
//! [`Invocation`]: which source wins for each setting, the defaults, and the
//! parsing of variable values into typed settings with a one-line
//! [`ConfigError`] for a bad one (flag values arrive already checked by
//! clap, see [`crate::cli`]). It reads nothing itself beyond checking the
//! target directory (that it is one, and can be listed); the environment
//! arrives as an [`Env`].

use clap::Parser;
use std::path::{Path, PathBuf};

use super::api::api_settings;
use super::{ApiArgs, Args, AskArgs, Budget, Command, FormatArg};
use crate::ai::api;
use crate::ai::api::catalog::ModelFacts;
use crate::config::defaults::{
    DEFAULT_ASK_BUDGET_USD, DEFAULT_BUDGET_USD, DEFAULT_CACHE_ROOT, DEFAULT_MODEL,
    DEFAULT_REFINE_ROUNDS,
};
use crate::config::{
    CONTEXT_WINDOW_VAR, Config, ConfigError, Env, GivenPrice, InvestigationOptions, Invocation,
    Mode, OutputOptions, own_outputs, parse_language,
};
use crate::money::Usd;
use crate::paths::absolute;
use crate::progress::ProgressStyle;
use crate::report::Format;
use crate::scan::ScanOptions;

impl Invocation {
    /// Resolve the command line and the environment into what to do.
    pub(crate) fn resolve(args: Args, env: &Env) -> Result<Invocation, ConfigError> {
        match args.command {
            Some(Command::Ask(ask)) => return Invocation::resolve_ask(*ask, env),
            Some(Command::Mcp) => return Ok(Invocation::Mcp),
            None => {}
        }
        let format = output_format(&args)?;
        let cache_root = cache_root(env);
        let language = args.language.as_deref().map(parse_language).transpose()?;
        let Some(target_arg) = args.target.clone() else {
            return if args.clear_cache {
                Ok(Invocation::ClearCacheOnly { cache_root })
            } else {
                Err(ConfigError::MissingTarget)
            };
        };
        if !args.more_targets.is_empty() {
            return Err(too_many_targets(&target_arg, &args.more_targets));
        }
        let target = Target::checked(&target_arg)?;
        let (api, base_note) = api_settings(&args.api, env)?;
        let (own, inside_target) = outputs_inside(&args, &target, &cache_root);
        let clear_cache_first = args.clear_cache;
        let config = Config {
            target_arg: target.shown,
            target: target.absolute,
            target_canonical: target.canonical,
            output: OutputOptions {
                format,
                width: report_width(&args, env),
                file: args.output.clone(),
                inside_target,
            },
            investigation: investigation_options(&args, env, language)?,
            scan: ScanOptions {
                depth: args.depth,
                show_hidden: args.all,
                exclude: args.exclude,
                respect_ignore: !args.no_ignore,
                include: args.include,
                own_outputs: own,
            },
            api,
            cache_root,
            progress: progress_style(env),
            verbose: args.verbose,
            notes: base_note.into_iter().collect(),
        };
        Ok(Invocation::Run {
            config: Box::new(config),
            clear_cache_first,
        })
    }
}

/// The cache's root: `LUMINOS_CACHE_DIR`, else the default.
fn cache_root(env: &Env) -> PathBuf {
    env.luminos_cache_dir
        .as_ref()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_CACHE_ROOT))
}

/// The width the text report fits: the terminal's when it goes to one
/// (not to an `-o` file), else the default.
fn report_width(args: &Args, env: &Env) -> usize {
    match (&args.output, env.stdout_columns) {
        (None, Some(columns)) => columns,
        _ => crate::report::text_fit::DEFAULT_WIDTH,
    }
}

/// How progress is shown: a live line on a terminal (coloured unless
/// `NO_COLOR`), plain lines otherwise.
fn progress_style(env: &Env) -> ProgressStyle {
    if env.stderr_is_terminal {
        ProgressStyle::Live {
            color: !env.no_color,
        }
    } else {
        ProgressStyle::Plain
    }
}

/// The target as the user typed it, made absolute, and canonical.
struct Target {
    shown: String,
    absolute: PathBuf,
    canonical: PathBuf,
}

impl Target {
    /// `raw`, once it is known to be a directory that can be listed: a
    /// target that cannot be listed has nothing to report, and an
    /// investigation of it would be paid for nothing.
    fn checked(raw: &Path) -> Result<Target, ConfigError> {
        let shown = raw.to_string_lossy().into_owned();
        if raw.is_file() {
            return Err(ConfigError::IsAFile(shown));
        }
        if !raw.is_dir() {
            return Err(ConfigError::NotADirectory(shown));
        }
        let absolute = absolute(raw);
        let canonical = std::fs::canonicalize(&absolute)
            .map_err(|_| ConfigError::NotADirectory(shown.clone()))?;
        if let Err(err) = std::fs::read_dir(&canonical) {
            return Err(ConfigError::Unreadable {
                target: shown,
                error: err.to_string(),
            });
        }
        Ok(Target {
            shown,
            absolute,
            canonical,
        })
    }
}

/// What luminos writes inside `target` and must leave out of it: the cache
/// when it is placed there, the `-o` report (the second value, when it is
/// inside), and the reports earlier runs wrote there (read without
/// touching the cache), sorted.
fn outputs_inside(
    args: &Args,
    target: &Target,
    cache_root: &Path,
) -> (Vec<PathBuf>, Option<PathBuf>) {
    let (absolute, canonical) = (&target.absolute, &target.canonical);
    // The cache goes where `choose_root` says (a subdirectory of a
    // directory of other things); nothing is created to find out.
    let cache_in_use =
        crate::cache::choose_root(cache_root).unwrap_or_else(|_| cache_root.to_path_buf());
    let report_inside = args
        .output
        .as_deref()
        .and_then(|file| own_outputs(absolute, canonical, &[file]).pop());
    let mut own = own_outputs(absolute, canonical, &[&cache_in_use]);
    own.extend(report_inside.clone());
    if let Some(cache) = crate::cache::Cache::find_existing(cache_root, canonical) {
        own.extend(cache.own_outputs());
    }
    own.sort();
    own.dedup();
    (own, report_inside)
}

/// How the investigation runs, from the flags (and `LUMINOS_MODEL`): the
/// model and its facts (a price given with `--price` and a window given
/// with `--context-window` are the model's from here on: every figure of
/// the run reads these facts), the budgets, the jobs, the batches, the
/// language and the refinement.
fn investigation_options(
    args: &Args,
    env: &Env,
    language: Option<String>,
) -> Result<InvestigationOptions, ConfigError> {
    let model = args
        .api
        .model
        .clone()
        .filter(|m| !m.trim().is_empty())
        .or_else(|| env.luminos_model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL.to_string());
    Ok(InvestigationOptions {
        fresh: args.fresh,
        model_facts: model_facts(&model, &args.api, env, language.as_deref())?,
        model,
        jobs: args.jobs as usize,
        mode: mode_of(args),
        max_cost: args.max_cost.map(Usd::new),
        budget: match args.budget {
            Some(Budget::Usd(usd)) => Some(Usd::new(usd)),
            Some(Budget::Unlimited) => None,
            None => Some(DEFAULT_BUDGET_USD),
        },
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
    })
}

/// What the catalog says of `model`, with what the user gave instead: a
/// price given with `--price` and a window given with `--context-window`
/// (or [`CONTEXT_WINDOW_VAR`]). A window too small for luminos's fixed
/// prompts (with `language`'s rule) is refused, naming the smallest that
/// works.
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

/// The mode the flags ask for (clap refuses any two together).
fn mode_of(args: &Args) -> Mode {
    if args.cancel_batch {
        Mode::CancelBatch
    } else if args.estimate {
        Mode::Estimate
    } else if args.scan_only {
        Mode::ScanOnly
    } else {
        Mode::Investigate
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
        run.include = ask.include;
        run.no_ignore = ask.no_ignore;
        run.no_redact = ask.no_redact;
        run.verbose = ask.verbose;
        match Invocation::resolve(run, env)? {
            Invocation::Run { mut config, .. } => {
                config.investigation.budget = match ask.budget {
                    Some(Budget::Usd(usd)) => Some(Usd::new(usd)),
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

/// The one line for `luminos a b`: how many were given, each named (quoted
/// and escaped to one line), and what to do.
fn too_many_targets(first: &std::path::Path, more: &[PathBuf]) -> ConfigError {
    let names: Vec<String> = std::iter::once(first)
        .chain(more.iter().map(PathBuf::as_path))
        .map(|path| format!("'{}'", crate::text::escape_line(&path.to_string_lossy())))
        .collect();
    ConfigError::TooManyTargets {
        count: names.len(),
        names: names.join(", "),
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

#[cfg(test)]
mod tests;
