//! `--estimate`: what an investigation of the target would cost, without an
//! API call, a credential, or any write to the cache.
//!
//! [`estimate`] (in `gather.rs`) gathers the same facts a run does
//! ([`crate::ai::facts::RunFacts`]: discovery in the run's scope, the
//! target's investigation looked up read-only, fingerprints, saved survey,
//! plan and synthesis), takes the run's own decision
//! ([`crate::ai::rules::decide::decide`]: which passes run, which
//! directories get a loop, are folded into a unit or summarised from the
//! scan, how the synthesis is laid out) and renders the real prompts of
//! that decision to measure them. Everything below is the pure projection
//! from those sizes, with unit tests.
//!
//! The model of a run, and why:
//! - **Tokens are bytes / 4** (rounded up), the usual rule of thumb for
//!   English and code; no tokenizer is shipped.
//! - **Fixed calls.** The survey and the planner make one call each, unless
//!   the target is tiny ([`should_skip_survey`], both skipped), a saved one is
//!   resumed, or nothing is left to investigate. Synthesis makes one call
//!   per group of each level and one for the verdict (see
//!   [`crate::ai::rules::levels`]), or none when the saved one was built
//!   from the same entries. Each call's input is its real rendered system
//!   prompt (synthesis: its sections, with an allowance for summaries not
//!   written yet), kickoff message and tool definitions; its output is a
//!   fixed allowance (`*_OUTPUT_TOKENS`).
//! - **Directories summarised from the scan** cost nothing.
//! - **A dir loop** starts from its real system prompt and assignment
//!   (listings of every directory of its unit included), plus an allowance
//!   per child summary not written yet ([`SUMMARY_BYTES`]) and for the
//!   survey block ([`SURVEY_BLOCK_BYTES`]), plus the tools. With caching,
//!   every loop after the first reads the shared prefix (tools and system
//!   prompt) back from the cache. Over its turns the agent reads the directory's own files: each
//!   file adds min(size, `read_file`'s default 4 KiB) / 4 tokens to the
//!   conversation, spread evenly over the turns, and every turn adds
//!   [`DIR_OUTPUT_TOKENS_PER_TURN`] of output that later turns resend. A turn
//!   resends the whole conversation, so input grows quadratically with turns;
//!   the loop stops once a context passes the budget, as the real one does.
//! - **Low** assumes [`LOW_TURNS`] turns per directory (at most its
//!   allotment), the files an agent is expected to read rather than all of
//!   them (as the budget prices a loop), and prompt caching working as
//!   designed: each turn reads the previous turn's context from the cache
//!   (the catalog's read price) and writes only what is new (1.25×).
//! - **High** assumes every allotted turn is used (10 per directory without
//!   a plan: priority and shallow tiers are unknown before planning) and no
//!   cache hit at all: every input token at the full price.
//!
//! Prices are the token summary's ([`Pricing::for_model`] via
//! [`estimate_cost`]), for `--model`/`LUMINOS_MODEL`.

mod gather;

use serde::Serialize;

use crate::ai::api::Usage;
use crate::ai::api::cost::{CONTEXT_BUDGET, estimate_cost};

use crate::ai::tools::fs::DEFAULT_MAX_BYTES;
use crate::text::format_thousands;

pub use gather::{EstimateError, estimate};

#[cfg(doc)]
use crate::ai::{api::cost::Pricing, passes::survey::should_skip_survey};

/// Bytes per token, the rule of thumb every projection here uses.
pub const BYTES_PER_TOKEN: u64 = 4;
/// Turns per directory in the low projection.
pub const LOW_TURNS: u32 = 3;
/// Output per dir-loop turn: a step line, tool calls and cache summaries.
pub const DIR_OUTPUT_TOKENS_PER_TURN: u64 = 350;
/// Output of the survey call.
pub const SURVEY_OUTPUT_TOKENS: u64 = 400;
/// Output of the planning call.
pub const PLANNING_OUTPUT_TOKENS: u64 = 800;
/// Output of the synthesis call (brief and detailed analysis).
pub const SYNTHESIS_OUTPUT_TOKENS: u64 = 1_500;
/// A directory summary (1-3 sentences) as a parent's or synthesis's prompt
/// will carry it, for directories not summarized yet.
pub const SUMMARY_BYTES: usize = 320;
/// The survey block in dir and planning prompts (description, approach,
/// tool advice), which only exists once the survey ran.
pub const SURVEY_BLOCK_BYTES: u64 = 600;

/// `bytes / 4`, rounded up.
pub fn tokens_of_bytes(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// What reading each of these files once adds to a conversation: each is cut
/// at `read_file`'s default `max_bytes`, as the agent reads it by default.
pub fn read_tokens(file_sizes: impl IntoIterator<Item = u64>) -> u64 {
    file_sizes
        .into_iter()
        .map(|size| tokens_of_bytes(size.min(DEFAULT_MAX_BYTES)))
        .sum()
}

/// One directory loop to project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirInput {
    /// System prompt + kickoff + tool definitions, in tokens.
    pub prompt_tokens: u64,
    /// Tokens of the directory's files, as [`read_tokens`] counts them: the
    /// high projection reads them all.
    pub read_tokens: u64,
    /// What the low projection reads: the files an agent is expected to
    /// read ([`crate::ai::rules::decide::expected_read_bytes`]).
    pub read_tokens_low: u64,
    /// The turns the run would allot (10, or the saved plan's).
    pub turns: u32,
    /// Tokens of the start read back from the cache instead of written:
    /// the tools and system prompt another loop of the run wrote first.
    pub prefix_tokens: u64,
}

/// Everything the projection needs, measured by [`estimate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// Prompt tokens of the survey call, when one would be made.
    pub survey: Option<u64>,
    /// Prompt tokens of the planning call, when one would be made.
    pub planning: Option<u64>,
    /// Prompt tokens of each synthesis call (none when a saved synthesis
    /// built from the same entries is reused).
    pub synthesis: Vec<u64>,
    /// One entry per directory to investigate.
    pub dirs: Vec<DirInput>,
}

/// Calls and token usage of one scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub calls: u64,
    pub usage: Usage,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.calls += other.calls;
        self.usage.accumulate(&other.usage);
    }

    /// One call with `input` tokens of prompt (priced as plain input: a
    /// single call's prefix is never read back) and `output` tokens of reply.
    fn single(input: u64, output: u64) -> Tally {
        Tally {
            calls: 1,
            usage: Usage {
                input_tokens: input,
                output_tokens: output,
                ..Usage::default()
            },
        }
    }
}

/// A low and a high figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Range<T> {
    pub low: T,
    pub high: T,
}

/// One dir loop of `turns` turns starting from `prompt_tokens`, reading
/// `read_tokens` of files spread evenly over the turns after the first.
/// With `caching`, each turn reads the previous context back from the cache
/// and writes only the new part; without, all of it is plain input. The
/// loop stops before a turn once the previous context passed
/// [`CONTEXT_BUDGET`], as the real loop does.
pub fn project_loop(prompt_tokens: u64, read_tokens: u64, turns: u32, caching: bool) -> Tally {
    project_loop_with_prefix(0, prompt_tokens, read_tokens, turns, caching)
}

/// [`project_loop`] for a loop whose first `prefix_tokens` (the tools and
/// the system prompt every loop of a run shares) another loop already
/// wrote to the cache: with caching, its first turn reads them back
/// instead of writing them.
pub fn project_loop_with_prefix(
    prefix_tokens: u64,
    prompt_tokens: u64,
    read_tokens: u64,
    turns: u32,
    caching: bool,
) -> Tally {
    let prefix_tokens = prefix_tokens.min(prompt_tokens);
    let turns = u64::from(turns);
    let growth = if turns > 1 {
        read_tokens.div_ceil(turns - 1) + DIR_OUTPUT_TOKENS_PER_TURN
    } else {
        0
    };
    let mut tally = Tally::default();
    let mut last_context = 0;
    for turn in 0..turns {
        if turn > 0 && last_context > CONTEXT_BUDGET {
            break;
        }
        let context = prompt_tokens + turn * growth;
        tally.calls += 1;
        tally.usage.output_tokens += DIR_OUTPUT_TOKENS_PER_TURN;
        if !caching {
            tally.usage.input_tokens += context;
        } else if turn == 0 {
            tally.usage.cache_read_input_tokens += prefix_tokens;
            tally.usage.cache_creation_input_tokens += context - prefix_tokens;
        } else {
            tally.usage.cache_read_input_tokens += last_context;
            tally.usage.cache_creation_input_tokens += context - last_context;
        }
        last_context = context;
    }
    tally
}

/// Calls and usage of the whole run in the low and high scenarios.
pub fn project(inputs: &Inputs) -> Range<Tally> {
    let scenario = |low: bool| {
        let mut tally = Tally::default();
        if let Some(tokens) = inputs.survey {
            tally.add(Tally::single(tokens, SURVEY_OUTPUT_TOKENS));
        }
        if let Some(tokens) = inputs.planning {
            tally.add(Tally::single(tokens, PLANNING_OUTPUT_TOKENS));
        }
        for dir in &inputs.dirs {
            let turns = if low {
                dir.turns.min(LOW_TURNS)
            } else {
                dir.turns
            };
            let read = if low {
                dir.read_tokens_low
            } else {
                dir.read_tokens
            };
            tally.add(project_loop_with_prefix(
                dir.prefix_tokens,
                dir.prompt_tokens,
                read,
                turns,
                low,
            ));
        }
        for tokens in &inputs.synthesis {
            tally.add(Tally::single(*tokens, SYNTHESIS_OUTPUT_TOKENS));
        }
        tally
    };
    Range {
        low: scenario(true),
        high: scenario(false),
    }
}

/// Dollars, rounded to a hundredth of a cent so the JSON stays readable.
fn dollars(model: &str, usage: &Usage) -> f64 {
    (estimate_cost(model, usage) * 10_000.0).round() / 10_000.0
}

/// The result of `--estimate`, as printed (text) or serialized (`--json`).
/// The JSON keys are stable; see the README.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// The target as the report names it.
    pub target: String,
    pub model: String,
    /// The investigation that would be resumed, if any.
    pub investigation_id: Option<String>,
    /// Every directory discovery found.
    pub directories_total: usize,
    /// Directories a dir loop would investigate (folded ones included).
    pub directories_to_investigate: usize,
    /// Directories already summarized in the cache (left out).
    pub directories_cached: usize,
    /// Directories a saved plan skips (left out).
    pub directories_skipped: usize,
    /// Whether a survey call would be made.
    pub survey: bool,
    /// Whether a planning call would be made.
    pub planning: bool,
    /// Whether a synthesis call would be made.
    pub synthesis: bool,
    /// `--budget` in dollars; `null` for no ceiling.
    pub budget_usd: Option<f64>,
    /// The budget shapes the run: directories are folded into units or
    /// summarised from the scan.
    pub budget_binding: bool,
    /// Dir loops the run would make.
    pub loops: usize,
    /// Units the directories to investigate make (one per directory when
    /// the budget does not bind).
    pub units: usize,
    /// Loops the budget buys at the units' average expected cost.
    pub loops_affordable: usize,
    /// Directories folded into another directory's loop (counted in
    /// `directories_to_investigate`).
    pub directories_folded: usize,
    /// Directories summarised from the scan, without the model.
    pub directories_mechanical: usize,
    /// Synthesis levels below the verdict (0: one call, or none).
    pub synthesis_levels: usize,
    pub api_calls: Range<u64>,
    /// Every input token, cached or not.
    pub input_tokens: Range<u64>,
    pub output_tokens: Range<u64>,
    pub cost_usd: Range<f64>,
}

/// What [`estimate`] counted before the projection.
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    pub target: String,
    pub model: String,
    pub investigation_id: Option<String>,
    pub total: usize,
    pub cached: usize,
    pub skipped: usize,
    pub budget: Option<f64>,
    pub budget_binding: bool,
    pub units: usize,
    pub loops_affordable: usize,
    /// Directories folded into the loops of `Inputs::dirs`.
    pub folded: usize,
    pub mechanical: usize,
    pub synthesis_levels: usize,
}

impl Estimate {
    /// Project `inputs` and price the result for `counts.model`.
    pub fn new(counts: Counts, inputs: &Inputs) -> Estimate {
        let tally = project(inputs);
        let range = |f: &dyn Fn(&Tally) -> u64| Range {
            low: f(&tally.low),
            high: f(&tally.high),
        };
        Estimate {
            api_calls: range(&|t| t.calls),
            input_tokens: range(&|t| t.usage.context_tokens()),
            output_tokens: range(&|t| t.usage.output_tokens),
            cost_usd: Range {
                low: dollars(&counts.model, &tally.low.usage),
                high: dollars(&counts.model, &tally.high.usage),
            },
            directories_to_investigate: inputs.dirs.len() + counts.folded,
            survey: inputs.survey.is_some(),
            planning: inputs.planning.is_some(),
            synthesis: !inputs.synthesis.is_empty(),
            budget_usd: counts.budget,
            budget_binding: counts.budget_binding,
            loops: inputs.dirs.len(),
            units: counts.units,
            loops_affordable: counts.loops_affordable,
            directories_folded: counts.folded,
            directories_mechanical: counts.mechanical,
            synthesis_levels: counts.synthesis_levels,
            target: counts.target,
            model: counts.model,
            investigation_id: counts.investigation_id,
            directories_total: counts.total,
            directories_cached: counts.cached,
            directories_skipped: counts.skipped,
        }
    }

    /// The text form, one fact per line.
    pub fn render_text(&self) -> String {
        let mut lines = vec![format!(
            "Estimate for {} with {} (no API call was made)",
            crate::text::escape_line(&self.target),
            self.model
        )];
        let mut dirs = format!(
            "Directories: {} to investigate of {} found, {} already cached",
            self.directories_to_investigate, self.directories_total, self.directories_cached
        );
        if self.directories_skipped > 0 {
            dirs.push_str(&format!(
                ", {} skipped by the saved plan",
                self.directories_skipped
            ));
        }
        lines.push(dirs);
        if self.budget_binding {
            lines.push(format!(
                "Budget: ${:.2} buys about {} loops for the {} units the directories make; \
                 {} loops ({} directories folded into them), {} directories summarised \
                 from the scan",
                self.budget_usd.unwrap_or_default(),
                self.loops_affordable,
                self.units,
                self.loops,
                self.directories_folded,
                self.directories_mechanical
            ));
        }
        let mut passes = Vec::new();
        if self.survey {
            passes.push("survey".to_string());
        }
        if self.planning {
            passes.push("planning".to_string());
        }
        if self.loops > 0 {
            passes.push(format!("{} directory loops", self.loops));
        }
        if self.synthesis {
            passes.push(if self.synthesis_levels > 0 {
                format!("synthesis in {} levels", self.synthesis_levels + 1)
            } else {
                "synthesis".to_string()
            });
        }
        if passes.is_empty() {
            passes.push("everything is cached".to_string());
        }
        lines.push(format!(
            "API calls: {} to {} ({})",
            self.api_calls.low,
            self.api_calls.high,
            passes.join(", ")
        ));
        let tokens = |r: &Range<u64>| {
            format!(
                "{} to {}",
                format_thousands(r.low),
                format_thousands(r.high)
            )
        };
        lines.push(format!("Input tokens: {}", tokens(&self.input_tokens)));
        lines.push(format!("Output tokens: {}", tokens(&self.output_tokens)));
        lines.push(format!(
            "Estimated cost: ${:.2} to ${:.2}",
            self.cost_usd.low, self.cost_usd.high
        ));
        lines.push(format!(
            "Low: {LOW_TURNS} turns per directory with prompt caching; high: every allotted \
             turn with no cache hits."
        ));
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests;
