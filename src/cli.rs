//! The command line as the user typed it.
//!
//! This module only describes flags; it makes no decisions. [`crate::config`]
//! resolves these raw values together with the environment into a
//! [`crate::config::Config`], and only that travels past `main`.
//!
//! `luminos TARGET` investigates; `luminos ask TARGET QUESTION` asks one
//! question ([`Command::Ask`]). A first argument `ask` is the subcommand,
//! so a directory named `ask` is reached as `luminos ./ask` (or
//! `luminos -- ask`).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

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
    args_conflicts_with_subcommands = true
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Directory to investigate (a directory named `ask`: ./ask).
    #[arg(value_name = "TARGET", required_unless_present = "clear_cache")]
    pub target: Option<PathBuf>,

    /// Maximum depth of the rendered directory tree.
    #[arg(short = 'd', long, value_name = "N", default_value_t = crate::scan::DEFAULT_DEPTH)]
    pub depth: usize,

    /// Include hidden files and directories.
    #[arg(short = 'a', long)]
    pub all: bool,

    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// Write the report to FILE instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Remove the investigation cache, then exit unless a TARGET is given.
    #[arg(long)]
    pub clear_cache: bool,

    /// Start a new investigation instead of resuming the cached one.
    #[arg(long)]
    pub fresh: bool,

    /// Exclude a directory name everywhere (repeatable).
    #[arg(short = 'x', long = "exclude", value_name = "NAME")]
    pub exclude: Vec<String>,

    // The default is named from its one constant, not repeated here.
    #[arg(
        long,
        value_name = "MODEL",
        help = format!(
            "Model to use [env: LUMINOS_MODEL] [default: {}]",
            crate::ai::api::DEFAULT_MODEL
        )
    )]
    pub model: Option<String>,

    /// How many times a failed API call is retried.
    #[arg(long, value_name = "N", default_value_t = crate::ai::api::retry::DEFAULT_MAX_RETRIES)]
    pub max_retries: u32,

    /// How many directories are investigated at once.
    #[arg(short = 'j', long, value_name = "N", default_value_t = crate::ai::passes::scheduler::DEFAULT_JOBS,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,

    /// Project the cost of an investigation without calling the API.
    #[arg(long)]
    pub estimate: bool,

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
    #[arg(long, value_name = "N", requires = "batch",
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub batch_size: Option<u32>,

    /// Cancel the batches in flight for TARGET's investigation, then exit.
    #[arg(long, conflicts_with_all = ["estimate", "scan_only", "batch", "clear_cache", "fresh"])]
    pub cancel_batch: bool,

    /// Start no new directory once the spend would pass USD dollars.
    // Taken as text (negative numbers included, so `--max-cost -5` is a
    // value and not an unknown flag) and checked in `config`, which says
    // what is wrong in one line.
    #[arg(long, value_name = "USD", allow_negative_numbers = true)]
    pub max_cost: Option<String>,

    // The default is named from its one constant, not repeated here; taken
    // as text and checked in `config`, as --max-cost is.
    #[arg(
        long,
        value_name = "USD",
        allow_negative_numbers = true,
        help = format!(
            "Spend at most USD dollars on this run, priced from the model catalog; `none` for \
             no ceiling. A tree too large for it gets fewer loops, and summaries built without \
             the model for the rest [default: {}]",
            crate::ai::rules::decide::DEFAULT_BUDGET_USD
        )
    )]
    pub budget: Option<String>,

    /// Do not respect .gitignore, .ignore and .git/info/exclude.
    #[arg(long)]
    pub no_ignore: bool,

    /// Send file text to the model without redacting secrets.
    #[arg(long)]
    pub no_redact: bool,

    /// After the synthesis, send a refinement agent back to what the
    /// investigation was unsure of (low-confidence summaries, flags whose
    /// path was not found, summaries at odds with a finding); it checks them
    /// against the files and improves the report, within --budget.
    #[arg(long, conflicts_with_all = ["estimate", "scan_only", "cancel_batch"])]
    pub refine: bool,

    /// Refine in up to N rounds (default 1; implies --refine); a round that
    /// reads nothing new ends the refinement.
    #[arg(long, value_name = "N", conflicts_with_all = ["estimate", "scan_only", "cancel_batch"],
          value_parser = clap::value_parser!(u32).range(1..=10))]
    pub refine_depth: Option<u32>,
}

/// What luminos does besides investigating TARGET.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Ask one question about TARGET. One agent answers it from TARGET's
    /// cached investigation (run `luminos TARGET` first for the best answers)
    /// and from its files, read-only, within its own budget; the answer goes
    /// to stdout. A directory named `ask` is reached as `luminos ./ask`.
    Ask(AskArgs),
}

/// `luminos ask TARGET QUESTION` and its flags.
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
        help = format!(
            "Spend at most USD dollars on the question, every request priced at its worst case \
             before it is sent; `none` for no ceiling [default: {}]",
            crate::ai::ask::DEFAULT_ASK_BUDGET_USD
        )
    )]
    pub budget: Option<String>,

    #[arg(
        long,
        value_name = "MODEL",
        help = format!(
            "Model to use [env: LUMINOS_MODEL] [default: {}]",
            crate::ai::api::DEFAULT_MODEL
        )
    )]
    pub model: Option<String>,

    /// How many times a failed API call is retried.
    #[arg(long, value_name = "N", default_value_t = crate::ai::api::retry::DEFAULT_MAX_RETRIES)]
    pub max_retries: u32,

    /// Include hidden files and directories.
    #[arg(short = 'a', long)]
    pub all: bool,

    /// Exclude a directory name everywhere (repeatable).
    #[arg(short = 'x', long = "exclude", value_name = "NAME")]
    pub exclude: Vec<String>,

    /// Do not respect .gitignore, .ignore and .git/info/exclude.
    #[arg(long)]
    pub no_ignore: bool,

    /// Send file text to the model without redacting secrets.
    #[arg(long)]
    pub no_redact: bool,
}

impl Args {
    /// Parse `std::env::args_os`, exiting with clap's usage error on bad flags.
    pub fn parse_from_env() -> Self {
        Args::parse()
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

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("luminos").chain(args.iter().copied()))
    }

    #[test]
    fn ask_is_a_subcommand_and_a_directory_named_ask_stays_reachable() {
        let ask = parse(&["ask", "--json", "src", "What is it?"]).unwrap();
        match ask.command {
            Some(Command::Ask(ask)) => {
                assert_eq!(ask.target, PathBuf::from("src"));
                assert_eq!(ask.question, "What is it?");
                assert!(ask.json);
            }
            None => panic!("not the subcommand"),
        }
        for spelled in [["./ask"].as_slice(), &["--", "ask"]] {
            let run = parse(spelled).unwrap();
            assert!(run.command.is_none());
            assert_eq!(run.target.unwrap().file_name().unwrap(), "ask");
        }
        // Usage errors: no question, a question too many, a run flag before it.
        for bad in [
            ["ask", "src"].as_slice(),
            &["ask", "src", "q", "extra"],
            &["--json", "ask", "src", "q"],
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn refine_depth_is_a_small_number_of_rounds() {
        assert!(parse(&["--refine", "."]).unwrap().refine);
        assert_eq!(
            parse(&["--refine-depth", "3", "."]).unwrap().refine_depth,
            Some(3)
        );
        for bad in [["--refine-depth", "0", "."], ["--refine-depth", "11", "."]] {
            assert_eq!(parse(&bad).unwrap_err().exit_code(), 2);
        }
        assert!(parse(&["--refine", "--estimate", "."]).is_err());
    }
}
