//! The command line as the user typed it.
//!
//! This module only describes flags; it makes no decisions. [`crate::config`]
//! resolves these raw values together with the environment into a
//! [`crate::config::Config`], and only that travels past `main`.

use std::path::PathBuf;

use clap::Parser;

/// Investigate a directory and report what it is and what deserves attention.
///
/// luminos first runs a fast local scan (tree, file types, line counts, recent
/// files, disk usage), then a multi-pass AI investigation over the Anthropic
/// Messages API. Summaries are cached so an interrupted run resumes.
#[derive(Debug, Clone, Parser)]
#[command(name = "luminos", version, about, long_about)]
pub struct Args {
    /// Directory to investigate.
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

    /// The price of a model the catalog does not know (or a gateway's own),
    /// in dollars per million input and output tokens: `3,15`; `0,0` for a
    /// local model. Cache writes and reads are priced from the input price.
    #[arg(long, value_name = "INPUT,OUTPUT", allow_hyphen_values = true,
          value_parser = crate::config::parse_price)]
    pub price: Option<crate::config::GivenPrice>,

    /// How many times a failed API call is retried.
    #[arg(long, value_name = "N", default_value_t = crate::ai::api::retry::DEFAULT_MAX_RETRIES)]
    pub max_retries: u32,

    /// How many directories are investigated at once.
    #[arg(short = 'j', long, value_name = "N", default_value_t = crate::ai::engine::scheduler::DEFAULT_JOBS,
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
}
