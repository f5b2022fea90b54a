//! The command line as the user typed it.
//!
//! This module only describes flags and what a well-formed value of each
//! is; it makes no decisions. Every flag value is checked here, by clap's
//! value parsers, so a bad one is a usage error (exit 2) with clap's
//! one-line message, whatever the flag. Its resolution (`resolve.rs`, with
//! the API's settings in `api.rs`) turns these values and the environment
//! into a [`crate::config::Config`] once, and only that travels past
//! `main`.
//!
//! `luminos TARGET` investigates; `luminos ask TARGET QUESTION` asks one
//! question ([`Command::Ask`]); `luminos mcp` serves MCP on stdio
//! ([`Command::Mcp`]). A first argument `ask` or `mcp` is the subcommand,
//! so a directory of that name is reached as `luminos ./ask` (or
//! `luminos -- ask`).

mod api;
mod resolve;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub(crate) use resolve::parse_price;

/// Investigate a directory and report what it is and what deserves attention.
///
/// luminos first runs a fast local scan (tree, file types, line counts, recent
/// files, disk usage), then a multi-pass AI investigation over the Anthropic
/// Messages API. Summaries are cached so an interrupted run resumes.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "luminos",
    version,
    about,
    long_about,
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true,
    after_help = "See --help for the environment variables luminos reads and examples.",
    after_long_help = long_help_epilogue()
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Directory to investigate (a directory named `ask` or `mcp`: ./ask,
    /// ./mcp).
    #[arg(value_name = "TARGET", required_unless_present = "clear_cache")]
    pub target: Option<PathBuf>,

    /// Anything after TARGET that is not a flag: luminos investigates one
    /// directory, so these are refused with one line (without this slot,
    /// clap would take a second directory for an unknown subcommand).
    #[arg(value_name = "MORE", hide = true, num_args = 0..)]
    pub more_targets: Vec<PathBuf>,

    /// Maximum depth of the rendered directory tree.
    #[arg(short = 'd', long, value_name = "N", default_value_t = crate::config::defaults::DEFAULT_DEPTH,
          allow_negative_numbers = true)]
    pub depth: usize,

    /// Include hidden files and directories.
    #[arg(short = 'a', long)]
    pub all: bool,

    /// Print the report as JSON (short for --format json).
    #[arg(long)]
    pub json: bool,

    /// Report format: text (the terminal report), json, markdown, html or
    /// agents (an AGENTS.md for coding agents) [default: from the -o
    /// file's name (AGENTS.md) or extension (.md, .html, .json), else
    /// text].
    #[arg(long, value_name = "FORMAT", value_enum)]
    pub format: Option<FormatArg>,

    /// Write the report to FILE instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// With a TARGET, forget its cached investigation (only that one), then
    /// investigate it anew; alone, remove the whole cache and exit, saying
    /// how many investigations it held and what their runs cost.
    #[arg(long)]
    pub clear_cache: bool,

    /// Start a new investigation instead of resuming the cached one.
    #[arg(long)]
    pub fresh: bool,

    /// Exclude a directory name everywhere (repeatable).
    #[arg(short = 'x', long = "exclude", value_name = "NAME")]
    pub exclude: Vec<String>,

    // The list is named from its one constant, not repeated here.
    #[arg(long = "include", value_name = "NAME", help = crate::scan::skip::include_help())]
    pub include: Vec<String>,

    #[command(flatten)]
    pub api: ApiArgs,

    /// How many directories are investigated at once.
    #[arg(short = 'j', long, value_name = "N", default_value_t = crate::config::defaults::DEFAULT_JOBS,
          allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,

    /// Project the cost of an investigation without calling the API.
    #[arg(long)]
    pub estimate: bool,

    /// With --estimate: how many tokens a second the model works through
    /// (a local model's throughput), to say how long the run would take.
    #[arg(long, value_name = "N", requires = "estimate", allow_negative_numbers = true,
          value_parser = tokens_per_second)]
    pub tokens_per_second: Option<f64>,

    /// Run the base scan alone, even when an API key is set.
    #[arg(long, conflicts_with = "estimate")]
    pub scan_only: bool,

    /// Send the investigation's requests through the Message Batches API:
    /// half the price, answered within a day; a rerun picks up a batch in
    /// flight.
    #[arg(long, conflicts_with = "scan_only")]
    pub batch: bool,

    /// With --batch: at most N requests per batch (default and most: the
    /// API's 100,000); a round larger than that goes as several batches.
    #[arg(long, value_name = "N", requires = "batch", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub batch_size: Option<u32>,

    /// Cancel the batches in flight for TARGET's investigation, then exit.
    #[arg(long, conflicts_with_all = ["estimate", "scan_only", "batch", "clear_cache", "fresh"])]
    pub cancel_batch: bool,

    /// Start no new directory once the spend would pass USD dollars.
    // Negative numbers are taken as values (so `--max-cost -5` is refused
    // for what it is, not as an unknown flag).
    #[arg(long, value_name = "USD", allow_negative_numbers = true, value_parser = max_cost)]
    pub max_cost: Option<f64>,

    // The default is named from its one constant, not repeated here.
    #[arg(
        long,
        value_name = "USD",
        allow_negative_numbers = true,
        value_parser = budget,
        help = format!(
            "Spend at most USD dollars on this run, priced from the model catalog; `none` for \
             no ceiling. A tree too large for it gets fewer loops, and summaries built without \
             the model for the rest [default: {}]",
            crate::config::defaults::DEFAULT_BUDGET_USD.as_f64()
        )
    )]
    pub budget: Option<Budget>,

    /// Do not respect .gitignore, .ignore and .git/info/exclude.
    #[arg(long)]
    pub no_ignore: bool,

    /// Send file text to the model without redacting secrets.
    #[arg(long)]
    pub no_redact: bool,

    /// Have the model write its summaries, flags and verdict in LANG (a
    /// name or tag: French, pt-BR); labels and JSON keys stay as they are.
    /// Summaries cached in another language are written again.
    #[arg(long, value_name = "LANG")]
    pub language: Option<String>,

    /// Print the full trace on stderr: every tool call, the model's own
    /// words, each note and each cached directory.
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// After the synthesis, send a refinement agent back to what the
    /// investigation was unsure of (low-confidence summaries, flags whose
    /// path was not found, summaries at odds with a finding); it checks them
    /// against the files and improves the report, within --budget.
    #[arg(long, conflicts_with_all = ["estimate", "scan_only", "cancel_batch"])]
    pub refine: bool,

    /// Refine in up to N rounds (default 1; implies --refine); a round that
    /// reads nothing new ends the refinement.
    #[arg(long, value_name = "N", conflicts_with_all = ["estimate", "scan_only", "cancel_batch"],
          allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub refine_depth: Option<u32>,
}

/// What luminos does besides investigating TARGET.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Ask one question about TARGET. One agent answers it from TARGET's
    /// cached investigation (run `luminos TARGET` first for the best answers)
    /// and from its files, read-only, within its own budget; the answer goes
    /// to stdout. A directory named `ask` is reached as `luminos ./ask`.
    // Boxed: a question's flags are most of the command line's size.
    Ask(Box<AskArgs>),
    /// Serve luminos to coding agents over the Model Context Protocol, on
    /// stdin and stdout: tools to investigate a directory, to read its
    /// cached investigation (overview, directory, flags) without an API
    /// call, and to ask a question about it. Started by an MCP client, not
    /// by hand; see the README.
    Mcp,
}

/// `luminos ask TARGET QUESTION` and its flags: those of a run that apply
/// to one question, with its own budget.
#[derive(Debug, Clone, clap::Args)]
pub struct AskArgs {
    /// The directory the question is about.
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,

    /// The question, quoted.
    #[arg(value_name = "QUESTION")]
    pub question: String,

    /// Print the answer, its checked citations and its cost as JSON.
    #[arg(long)]
    pub json: bool,

    // The default is named from its one constant, not repeated here.
    #[arg(
        long,
        value_name = "USD",
        allow_negative_numbers = true,
        value_parser = budget,
        help = format!(
            "Spend at most USD dollars on the question, every request priced at its worst case \
             before it is sent; `none` for no ceiling [default: {}]",
            crate::config::defaults::DEFAULT_ASK_BUDGET_USD.as_f64()
        )
    )]
    pub budget: Option<Budget>,

    #[command(flatten)]
    pub api: ApiArgs,

    /// Include hidden files and directories.
    #[arg(short = 'a', long)]
    pub all: bool,

    /// Exclude a directory name everywhere (repeatable).
    #[arg(short = 'x', long = "exclude", value_name = "NAME")]
    pub exclude: Vec<String>,

    /// Look into directories named NAME although the skip list would
    /// leave them out (repeatable; see `luminos --help`).
    #[arg(long = "include", value_name = "NAME")]
    pub include: Vec<String>,

    /// Do not respect .gitignore, .ignore and .git/info/exclude.
    #[arg(long)]
    pub no_ignore: bool,

    /// Send file text to the model without redacting secrets.
    #[arg(long)]
    pub no_redact: bool,

    /// Print the full trace on stderr: every tool call, the model's own
    /// words.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}

/// The model and how its calls are made: flags a run and `ask` share.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiArgs {
    // The default is named from its one constant, not repeated here.
    #[arg(
        long,
        value_name = "MODEL",
        value_parser = model_name,
        help = format!(
            "Model to use [env: LUMINOS_MODEL] [default: {}]",
            crate::config::defaults::DEFAULT_MODEL
        )
    )]
    pub model: Option<String>,

    /// The price of a model the catalog does not know (or a gateway's own),
    /// in dollars per million input and output tokens: `3,15`; `0,0` for a
    /// local model. Cache writes and reads are priced from the input price.
    #[arg(long, value_name = "INPUT,OUTPUT", allow_hyphen_values = true,
          value_parser = parse_price)]
    pub price: Option<crate::config::GivenPrice>,

    /// The model's context window in tokens, for a model the catalog does
    /// not know (a local model) or to lower a known one's: every request is
    /// sized to fit it, with room for the reply [env: LUMINOS_CONTEXT_WINDOW].
    #[arg(long, value_name = "TOKENS", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..=crate::ai::api::catalog::MAX_GIVEN_WINDOW))]
    pub context_window: Option<u64>,

    /// Send and receive at most TOKENS tokens (input, cache and output
    /// together), each request counted at its worst case before it goes;
    /// with --budget, the first ceiling reached ends the run.
    #[arg(long, value_name = "TOKENS", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub token_budget: Option<u64>,

    // The bound is named from its one constant, not repeated here.
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        default_value_t = crate::config::defaults::DEFAULT_MAX_RETRIES,
        value_parser = clap::value_parser!(u32).range(0..=i64::from(crate::config::defaults::MAX_RETRIES_LIMIT)),
        help = format!(
            "How many times a failed API call is retried (0 to {})",
            crate::config::defaults::MAX_RETRIES_LIMIT
        )
    )]
    pub max_retries: u32,
}

/// The values `--format` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    Text,
    Json,
    #[value(alias = "md")]
    Markdown,
    Html,
    /// `AGENTS.md` for coding agents.
    Agents,
}

/// The ENVIRONMENT and EXAMPLES sections of `--help`. The defaults are
/// named from their one constant each.
fn long_help_epilogue() -> String {
    format!(
        "ENVIRONMENT:
  ANTHROPIC_API_KEY     API key for the investigation; without one (or a token), the
                        scan alone is reported
  ANTHROPIC_AUTH_TOKEN  bearer token, used when no API key is set
  ANTHROPIC_BASE_URL    the API's address, for a proxy or gateway
                        [default: {base}]
  LUMINOS_MODEL         model, when --model is not given [default: {model}]
  LUMINOS_CACHE_DIR     where investigations are cached [default: {cache}]; a rerun
                        resumes from there, and an unchanged tree costs nothing
  LUMINOS_CONTEXT_WINDOW
                        the model's context window, when --context-window is not given
  NO_COLOR              no colour in the live line
  The LUMINOS_*_SECS and LUMINOS_*_MS timing variables are described in the README.

EXAMPLES:
  luminos ~/src/app                     investigate, spending at most ${budget}
  luminos --estimate ~/src/app          what it would cost, without spending anything
  luminos --budget 1 ~/src/app          spend at most $1
  luminos ~/src/app -o report.html      the whole report as one HTML page
  luminos --json ~/src/app | jq .flags  the findings, for scripts
  luminos ask ~/src/app \"Where are retries timed?\"
  luminos --model qwen3-coder --price 0,0 --context-window 32768 ~/src/app
                                        a local model (see the README's Local models)
  luminos --clear-cache                 remove every cached investigation",
        base = crate::config::defaults::DEFAULT_BASE_URL,
        model = crate::config::defaults::DEFAULT_MODEL,
        cache = crate::config::defaults::DEFAULT_CACHE_ROOT,
        budget = crate::config::defaults::DEFAULT_BUDGET_USD.as_f64(),
    )
}

impl Args {
    /// Parse `std::env::args_os`, exiting with clap's usage error on bad flags.
    pub fn parse_from_env() -> Self {
        Args::parse()
    }
}

/// `--budget`: a dollar ceiling, or none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    /// Spend at most this many dollars.
    Usd(f64),
    /// `none`: no ceiling.
    Unlimited,
}

/// `--max-cost`: a finite dollar amount above zero (`2.50`, `$3`). A cap of
/// nothing, or less, could only stop the run before it starts.
fn max_cost(raw: &str) -> Result<f64, String> {
    let usd = dollars_above_zero(raw)
        .ok_or_else(|| "a dollar amount above zero, such as 2.50".to_string())?;
    within_most(usd)
}

/// `--budget`: a finite dollar amount above zero (`5`, `$0.50`), or `none`
/// for no ceiling.
fn budget(raw: &str) -> Result<Budget, String> {
    if raw.trim().eq_ignore_ascii_case("none") {
        return Ok(Budget::Unlimited);
    }
    let usd = dollars_above_zero(raw)
        .ok_or_else(|| "a dollar amount above zero, such as 5, or none".to_string())?;
    within_most(usd).map(Budget::Usd)
}

/// The most `--budget` or `--max-cost` may say, in dollars. More is no
/// ceiling at all (`--budget none` says so), and every line that shows a
/// budget must stay a figure a person can read (`1e308` would print 309
/// digits).
const MOST_DOLLARS: f64 = 1_000_000.0;

/// `usd`, unless it is more than [`MOST_DOLLARS`].
fn within_most(usd: f64) -> Result<f64, String> {
    if usd > MOST_DOLLARS {
        return Err("at most 1000000 dollars (--budget none sets no ceiling)".to_string());
    }
    Ok(usd)
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

/// `--tokens-per-second`: a finite throughput above zero (`45`, `12.5`).
fn tokens_per_second(raw: &str) -> Result<f64, String> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or_else(|| "a number of tokens a second above zero, such as 40".to_string())
}

/// `--model`: a model id, which is never blank. (What the API makes of it
/// is the API's to say; a name with control characters is escaped
/// wherever it is printed.)
fn model_name(raw: &str) -> Result<String, String> {
    if raw.trim().is_empty() {
        Err("a model id, such as claude-sonnet-5-5".to_string())
    } else {
        Ok(raw.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Args::command().debug_assert();
    }

    fn parse(list: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(["luminos"].iter().chain(list).copied().chain(["."]))
    }

    /// Every bad flag value is clap's usage error (exit 2), saying what the
    /// flag takes in one line.
    #[test]
    fn every_bad_flag_value_is_a_usage_error() {
        let bad: &[(&[&str], &str)] = &[
            (
                &["--budget", "abc"],
                "a dollar amount above zero, such as 5, or none",
            ),
            (&["--budget", "0"], "a dollar amount above zero"),
            (&["--budget", "-5"], "a dollar amount above zero"),
            (&["--budget", "inf"], "a dollar amount above zero"),
            (&["--budget", ""], "a dollar amount above zero"),
            (
                &["--max-cost", "0"],
                "a dollar amount above zero, such as 2.50",
            ),
            (&["--max-cost", "-5"], "a dollar amount above zero"),
            (&["--max-cost=-5"], "a dollar amount above zero"),
            (&["--max-cost", "-0"], "a dollar amount above zero"),
            (&["--max-cost", "NaN"], "a dollar amount above zero"),
            (&["--max-cost", "lots"], "a dollar amount above zero"),
            (&["--budget", "1e308"], "at most 1000000 dollars"),
            (&["--max-cost", "1000000.01"], "at most 1000000 dollars"),
            (&["-j", "0"], "1..=64"),
            (&["-j", "65"], "1..=64"),
            (&["--batch", "--batch-size", "0"], "1..=100000"),
            (&["--max-retries", "21"], "0..=20"),
            (&["--max-retries", "1000000"], "0..=20"),
            (&["--max-retries", "-1"], "0..=20"),
            (&["-j", "-2"], "1..=64"),
            (&["--depth", "x"], "invalid digit"),
            (&["--depth", "-1"], "invalid digit"),
            (&["--model", ""], "a model id"),
            (&["--model", "  "], "a model id"),
            (&["--context-window", "0"], "1..="),
            (&["--context-window", "-5"], "invalid digit"),
            (&["--context-window", "lots"], "invalid digit"),
            (&["--token-budget", "0"], "1.."),
            (&["--token-budget", "1.5"], "invalid digit"),
            (
                &["--estimate", "--tokens-per-second", "0"],
                "a number of tokens a second above zero",
            ),
            (
                &["--estimate", "--tokens-per-second", "inf"],
                "a number of tokens a second above zero",
            ),
        ];
        for (flags, says) in bad {
            let err = parse(flags).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{flags:?}");
            let text = err.to_string();
            let first = text.lines().next().unwrap();
            assert!(
                first.starts_with("error: invalid value"),
                "{flags:?}: {text}"
            );
            assert!(first.contains(says), "{flags:?}: {first}");
        }
    }

    #[test]
    fn good_money_and_retry_values() {
        let args = parse(&[
            "--max-cost",
            "$2.50",
            "--budget",
            " None ",
            "--max-retries",
            "20",
        ])
        .unwrap();
        assert_eq!(args.max_cost, Some(2.5));
        assert_eq!(args.budget, Some(Budget::Unlimited));
        assert_eq!(args.api.max_retries, 20);
        assert_eq!(
            parse(&["--budget=$20"]).unwrap().budget,
            Some(Budget::Usd(20.0))
        );
        assert_eq!(parse(&["--max-retries", "0"]).unwrap().api.max_retries, 0);
    }

    #[test]
    fn mcp_is_a_subcommand_and_a_directory_named_mcp_stays_reachable() {
        let run = |list: &[&str]| {
            Args::try_parse_from(std::iter::once("luminos").chain(list.iter().copied()))
        };
        assert!(matches!(run(&["mcp"]).unwrap().command, Some(Command::Mcp)));
        for spelled in [["./mcp"].as_slice(), &["--", "mcp"]] {
            let args = run(spelled).unwrap();
            assert!(args.command.is_none());
            assert_eq!(args.target.unwrap().file_name().unwrap(), "mcp");
        }
        // After a run flag, `mcp` is a directory again.
        let args = run(&["--json", "mcp"]).unwrap();
        assert!(args.command.is_none() && args.json);
        // The subcommand takes no argument.
        assert_eq!(run(&["mcp", "."]).unwrap_err().exit_code(), 2);
    }

    /// The command line exactly as given (no target added).
    fn parse_exact(list: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("luminos").chain(list.iter().copied()))
    }

    #[test]
    fn ask_is_a_subcommand_and_a_directory_named_ask_stays_reachable() {
        let ask = parse_exact(&["ask", "--json", "--budget", "0.1", "src", "What is it?"]).unwrap();
        match ask.command {
            Some(Command::Ask(ask)) => {
                assert_eq!(ask.target, PathBuf::from("src"));
                assert_eq!(ask.question, "What is it?");
                assert!(ask.json);
                assert_eq!(ask.budget, Some(Budget::Usd(0.1)));
            }
            Some(Command::Mcp) | None => panic!("not the subcommand"),
        }
        for spelled in [["./ask"].as_slice(), &["--", "ask"]] {
            let run = parse_exact(spelled).unwrap();
            assert!(run.command.is_none());
            assert_eq!(run.target.unwrap().file_name().unwrap(), "ask");
        }
        // Usage errors: no question, a question too many, a bad budget.
        for bad in [
            ["ask", "src"].as_slice(),
            &["ask", "src", "q", "extra"],
            &["ask", "--budget", "0", "src", "q"],
        ] {
            let err = parse_exact(bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
        }
        // After a run flag, `ask` is a directory, and what follows more
        // targets, which the configuration refuses (exit 2 too).
        let run = parse_exact(&["--json", "ask", "src", "q"]).unwrap();
        assert!(run.command.is_none());
        assert_eq!(run.more_targets, [PathBuf::from("src"), PathBuf::from("q")]);
    }

    #[test]
    fn refine_depth_is_a_small_number_of_rounds() {
        assert!(parse(&["--refine"]).unwrap().refine);
        assert_eq!(
            parse(&["--refine-depth", "3"]).unwrap().refine_depth,
            Some(3)
        );
        for bad in [["--refine-depth", "0"], ["--refine-depth", "11"]] {
            assert_eq!(parse(&bad).unwrap_err().exit_code(), 2);
        }
        assert!(parse(&["--refine", "--estimate"]).is_err());
    }

    /// `--help` ends with the environment luminos reads, the cache's
    /// place among it, and examples; `-h` points there.
    #[test]
    fn help_names_the_environment_and_examples() {
        let help = Args::command().render_long_help().to_string();
        let env = help.find("ENVIRONMENT:").unwrap();
        let examples = help.find("EXAMPLES:").unwrap();
        assert!(env < examples, "{help}");
        for name in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "LUMINOS_MODEL",
            "LUMINOS_CACHE_DIR",
            "LUMINOS_CONTEXT_WINDOW",
            "[default: /tmp/luminos]",
            "[default: https://api.anthropic.com]",
        ] {
            assert!(help[env..examples].contains(name), "{name}: {help}");
        }
        assert!(help[examples..].contains("luminos --estimate ~/src/app"));
        let short = Args::command().render_help().to_string();
        assert!(short.contains("See --help for the environment"), "{short}");
    }

    /// `--help` states the bound of `--max-retries`.
    #[test]
    fn help_names_the_retry_bound() {
        let help = Args::command().render_long_help().to_string();
        assert!(help.contains("retried (0 to 20)"), "{help}");
    }
}
