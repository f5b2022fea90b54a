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
//! - **Tokens come from bytes at the model's rate.** The prompts and files
//!   are measured at the reference 4 bytes per token (rounded up), the usual
//!   rule of thumb for English and code with the tokenizer of the Claude 4.6
//!   generation and earlier; the projection then scales every text figure
//!   by the catalog's tokens per byte ([`ModelTerms::text_scale`]: 1.3 on
//!   the newer tokenizer of Opus 4.7 and the 5.x models, which the token
//!   counting page says yields about 30% more tokens). No tokenizer ships.
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
//! - **Thinking** adds output where the model thinks with the settings the
//!   run would send ([`crate::ai::api::settings`]): an allowance per call of
//!   the survey, planning and synthesis, and a smaller one per dir-loop
//!   turn. Thinking is billed as output.
//! - **A dir loop** starts from its real system prompt and assignment
//!   (listings of every directory of its unit included), plus an allowance
//!   per child summary not written yet ([`SUMMARY_BYTES`]) and for the
//!   survey block ([`SURVEY_BLOCK_BYTES`]), plus the tools. With caching,
//!   every loop after the first reads the shared prefix (tools and system
//!   prompt) back from the cache. Over its turns the agent reads the directory's own files: each
//!   file adds min(size, `read_file`'s default 4 KiB) of text to the
//!   conversation, spread evenly over the turns, and every turn adds
//!   [`DIR_OUTPUT_TOKENS_PER_TURN`] of output that later turns resend. A turn
//!   resends the whole conversation, so input grows quadratically with turns;
//!   the loop stops once a context passes the model's budget
//!   ([`crate::ai::api::settings::context_budget`]), as the real one does.
//! - **Low** assumes [`LOW_TURNS`] turns per directory (at most its
//!   allotment), the files an agent is expected to read rather than all of
//!   them (as the budget prices a loop), and prompt caching working as
//!   designed: each turn reads the previous turn's context from the cache
//!   (at the model's cache-read price) and writes only what is new (1.25×).
//! - **High** assumes every allotted turn is used (10 per directory without
//!   a plan: priority and shallow tiers are unknown before planning) and no
//!   cache hit at all: every input token at the full price.
//!
//! Prices are the catalog's for `--model`/`LUMINOS_MODEL`, each call priced
//! on its own (a price tier depends on one request's prompt), at the batch
//! prices (half) with `--batch`, which sends the same requests. An unknown
//! model is priced as the catalog's stand-in, and the estimate says so.

mod gather;

use serde::Serialize;

use crate::ai::api::Usage;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::cost::Pricing;
use crate::ai::api::settings::{CallSettings, Workload, context_budget};
use crate::ai::rules::decide::GROUP_OUTPUT_TOKENS;
use crate::text::format_thousands;

pub(crate) use gather::estimate;

#[cfg(doc)]
use crate::ai::passes::survey::should_skip_survey;

/// Bytes per reference token, the rule of thumb every measurement here uses
/// before [`ModelTerms::text_scale`] turns it into the model's tokens.
pub(crate) const BYTES_PER_TOKEN: u64 = 4;
/// Turns per directory in the low projection.
pub(crate) const LOW_TURNS: u32 = 3;
/// Output per dir-loop turn: a step line, tool calls and cache summaries.
pub(crate) const DIR_OUTPUT_TOKENS_PER_TURN: u64 = 350;
/// Output of the survey call.
pub(crate) const SURVEY_OUTPUT_TOKENS: u64 = 400;
/// Output of the planning call.
pub(crate) const PLANNING_OUTPUT_TOKENS: u64 = 800;
/// Output of the synthesis call (brief and detailed analysis).
pub(crate) const SYNTHESIS_OUTPUT_TOKENS: u64 = 1_500;
/// A directory summary (1-3 sentences) as a parent's or synthesis's prompt
/// will carry it, for directories not summarized yet.
pub(crate) const SUMMARY_BYTES: usize = 320;
/// The survey block in dir and planning prompts (description, approach,
/// tool advice), which only exists once the survey ran.
pub(crate) const SURVEY_BLOCK_BYTES: u64 = 600;

/// `bytes / 4`, rounded up: reference tokens.
pub(crate) fn tokens_of_bytes(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// What reading each of these files once adds to a conversation: each is cut
/// at `read_file`'s default `max_bytes`, as the agent reads it by default.
#[cfg(test)]
pub(crate) fn read_tokens(file_sizes: impl IntoIterator<Item = u64>) -> u64 {
    file_sizes
        .into_iter()
        .map(|size| tokens_of_bytes(size.min(crate::ai::tools::fs::DEFAULT_MAX_BYTES)))
        .sum()
}

/// One directory loop to project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirInput {
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
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inputs {
    /// Prompt tokens of the survey call, when one would be made.
    pub survey: Option<u64>,
    /// Prompt tokens of the planning call, when one would be made.
    pub planning: Option<u64>,
    /// Prompt tokens of each synthesis call (none when a saved synthesis
    /// built from the same entries is reused).
    pub synthesis: Vec<u64>,
    /// One entry per directory to investigate.
    pub dirs: Vec<DirInput>,
    /// What holds the run's spending, when a budget does.
    pub ceiling: Option<Ceiling>,
}

/// How a budget bounds what a run can spend: the run starts no loop once
/// the money it expects the loop to cost is gone, but the loops already
/// running (at most `jobs`) may each still use every turn. So the worst
/// case is the budget plus `jobs` of the costliest loops, however many
/// loops the tree would need.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ceiling {
    /// `--budget`, in dollars.
    pub budget: f64,
    /// The most loops running at once: `-j`, or every loop with `--batch`.
    pub jobs: usize,
}

impl Ceiling {
    /// The most a run can spend whose costliest loop is `costliest_loop`.
    pub(crate) fn limit(&self, costliest_loop: f64) -> f64 {
        self.budget + self.jobs.max(1) as f64 * costliest_loop
    }
}

/// What the projection takes from the catalog for one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ModelTerms {
    /// The model's tokens per reference token (bytes / 4): the catalog's
    /// tokens per byte times 4, so 1.0 on the older tokenizer and 1.3 on
    /// the newer one.
    pub text_scale: f64,
    /// A dir loop stops once a context passes this many tokens.
    pub context_budget: u64,
    /// Thinking output of one survey, planning or synthesis call.
    pub judgment_thinking: u64,
    /// Thinking output of one dir-loop turn.
    pub routine_thinking: u64,
    pub pricing: Pricing,
}

impl ModelTerms {
    /// The terms of `model` (the catalog's stand-in when it is unknown).
    pub(crate) fn of(model: &str) -> ModelTerms {
        let facts = ModelFacts::of(model);
        let m = facts.model;
        ModelTerms {
            text_scale: m.tokens_per_byte * BYTES_PER_TOKEN as f64,
            context_budget: context_budget(m),
            judgment_thinking: CallSettings::new(m, Workload::Judgment).expected_thinking_tokens(),
            routine_thinking: CallSettings::new(m, Workload::Routine).expected_thinking_tokens(),
            pricing: Pricing::for_model(model),
        }
    }

    /// The terms of a run on `model`: at the catalog's batch prices when
    /// it goes through the Message Batches API (`--batch`), which answers
    /// the same requests for less, so the same budget buys more work.
    pub(crate) fn for_run(model: &str, batch: bool) -> ModelTerms {
        let terms = ModelTerms::of(model);
        if batch {
            ModelTerms {
                pricing: terms.pricing.batch(),
                ..terms
            }
        } else {
            terms
        }
    }

    /// Reference tokens in this model's tokens, rounded up.
    pub(crate) fn scale(&self, reference_tokens: u64) -> u64 {
        (reference_tokens as f64 * self.text_scale).ceil() as u64
    }
}

/// Calls, token usage and cost of one scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Tally {
    pub calls: u64,
    pub usage: Usage,
    /// Dollars, each call priced on its own.
    pub cost: f64,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.calls += other.calls;
        self.usage.accumulate(&other.usage);
        self.cost += other.cost;
    }

    /// One more call with `usage`.
    fn call(&mut self, usage: Usage, pricing: &Pricing) {
        self.calls += 1;
        self.cost += pricing.cost(&usage);
        self.usage.accumulate(&usage);
    }

    /// One call with `input` tokens of prompt (priced as plain input: a
    /// single call's prefix is never read back) and `output` tokens of reply.
    pub(crate) fn single(input: u64, output: u64, pricing: &Pricing) -> Tally {
        let mut tally = Tally::default();
        tally.call(
            Usage {
                input_tokens: input,
                output_tokens: output,
                ..Usage::default()
            },
            pricing,
        );
        tally
    }
}

/// A low and a high figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Range<T> {
    pub low: T,
    pub high: T,
}

/// One dir loop of `turns` turns starting from `prompt_tokens`, reading
/// `read_tokens` of files spread evenly over the turns after the first
/// (both in reference tokens; `terms` scales them to the model's).
/// With `caching`, each turn reads the previous context back from the cache
/// and writes only the new part; without, all of it is plain input. The
/// loop stops before a turn once the previous context passed the model's
/// budget, as the real loop does. Thinking is output, not resent.
#[cfg(test)]
pub(crate) fn project_loop(
    prompt_tokens: u64,
    read_tokens: u64,
    turns: u32,
    caching: bool,
    terms: &ModelTerms,
) -> Tally {
    project_loop_with_prefix(0, prompt_tokens, read_tokens, turns, caching, terms)
}

/// [`project_loop`] for a loop whose first `prefix_tokens` (the tools and
/// the system prompt every loop of a run shares) another loop already
/// wrote to the cache: with caching, its first turn reads them back
/// instead of writing them.
pub(crate) fn project_loop_with_prefix(
    prefix_tokens: u64,
    prompt_tokens: u64,
    read_tokens: u64,
    turns: u32,
    caching: bool,
    terms: &ModelTerms,
) -> Tally {
    let turns = u64::from(turns);
    let prefix_tokens = terms.scale(prefix_tokens.min(prompt_tokens));
    let prompt_tokens = terms.scale(prompt_tokens);
    let read_tokens = terms.scale(read_tokens);
    let text_output = terms.scale(DIR_OUTPUT_TOKENS_PER_TURN);
    let growth = if turns > 1 {
        read_tokens.div_ceil(turns - 1) + text_output
    } else {
        0
    };
    let mut tally = Tally::default();
    let mut last_context = 0;
    for turn in 0..turns {
        if turn > 0 && last_context > terms.context_budget {
            break;
        }
        let context = prompt_tokens + turn * growth;
        let mut usage = Usage {
            output_tokens: text_output + terms.routine_thinking,
            ..Usage::default()
        };
        if !caching {
            usage.input_tokens = context;
        } else if turn == 0 {
            usage.cache_read_input_tokens = prefix_tokens;
            usage.cache_creation_input_tokens = context - prefix_tokens;
        } else {
            usage.cache_read_input_tokens = last_context;
            usage.cache_creation_input_tokens = context - last_context;
        }
        tally.call(usage, &terms.pricing);
        last_context = context;
    }
    tally
}

/// Calls, usage and cost of the whole run in the low and high scenarios.
pub(crate) fn project(inputs: &Inputs, terms: &ModelTerms) -> Range<Tally> {
    let single = |prompt: u64, output: u64| {
        Tally::single(
            terms.scale(prompt),
            terms.scale(output) + terms.judgment_thinking,
            &terms.pricing,
        )
    };
    let scenario = |low: bool| {
        let mut tally = Tally::default();
        let mut costliest_loop: f64 = 0.0;
        if let Some(tokens) = inputs.survey {
            tally.add(single(tokens, SURVEY_OUTPUT_TOKENS));
        }
        if let Some(tokens) = inputs.planning {
            tally.add(single(tokens, PLANNING_OUTPUT_TOKENS));
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
            let one = project_loop_with_prefix(
                dir.prefix_tokens,
                dir.prompt_tokens,
                read,
                turns,
                low,
                terms,
            );
            costliest_loop = costliest_loop.max(one.cost);
            tally.add(one);
        }
        // In levels, every call before the verdict summarises a group and
        // thinks as routine work.
        let verdict = inputs.synthesis.len().saturating_sub(1);
        for (n, tokens) in inputs.synthesis.iter().enumerate() {
            tally.add(if n == verdict {
                single(*tokens, SYNTHESIS_OUTPUT_TOKENS)
            } else {
                Tally::single(
                    terms.scale(*tokens),
                    terms.scale(GROUP_OUTPUT_TOKENS) + terms.routine_thinking,
                    &terms.pricing,
                )
            });
        }
        // Calls and tokens stay what the tree would take; the bill cannot
        // pass what the budget lets the run start.
        if let Some(ceiling) = inputs.ceiling {
            tally.cost = tally.cost.min(ceiling.limit(costliest_loop));
        }
        tally
    };
    Range {
        low: scenario(true),
        high: scenario(false),
    }
}

/// Dollars, rounded to a hundredth of a cent so the JSON stays readable.
fn dollars(cost: f64) -> f64 {
    (cost * 10_000.0).round() / 10_000.0
}

/// The result of `--estimate`, as printed (text) or serialized (`--json`).
/// The JSON keys are stable; see the README.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Estimate {
    /// The target as the report names it.
    pub target: String,
    pub model: String,
    /// The catalog's warning about the model (unknown, so its price is
    /// assumed; deprecated; retired), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_warning: Option<String>,
    /// The investigation that would be resumed, if any.
    pub investigation_id: Option<String>,
    /// Priced for the Message Batches API (`--batch`).
    pub batch: bool,
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
    /// The high cost is lower than every allotted turn of every loop would
    /// be: the budget stops the run from starting them all.
    pub cost_held_by_budget: bool,
}

/// What [`estimate`] counted before the projection.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Counts {
    pub target: String,
    pub model: String,
    /// [`crate::ai::api::catalog::ModelFacts::warning`] for the model.
    pub model_warning: Option<String>,
    pub investigation_id: Option<String>,
    /// `--batch`: priced at the batch prices.
    pub batch: bool,
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
    pub(crate) fn new(counts: Counts, inputs: &Inputs) -> Estimate {
        let tally = project(inputs, &ModelTerms::for_run(&counts.model, counts.batch));
        let range = |f: &dyn Fn(&Tally) -> u64| Range {
            low: f(&tally.low),
            high: f(&tally.high),
        };
        Estimate {
            api_calls: range(&|t| t.calls),
            input_tokens: range(&|t| t.usage.context_tokens()),
            output_tokens: range(&|t| t.usage.output_tokens),
            cost_usd: Range {
                low: dollars(tally.low.cost),
                high: dollars(tally.high.cost),
            },
            cost_held_by_budget: inputs.ceiling.is_some_and(|_| {
                let unbounded = project(
                    &Inputs {
                        ceiling: None,
                        ..inputs.clone()
                    },
                    &ModelTerms::of(&counts.model),
                );
                unbounded.high.cost > tally.high.cost
            }),
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
            model_warning: counts.model_warning,
            investigation_id: counts.investigation_id,
            batch: counts.batch,
            directories_total: counts.total,
            directories_cached: counts.cached,
            directories_skipped: counts.skipped,
        }
    }

    /// The text form, one fact per line.
    pub(crate) fn render_text(&self) -> String {
        let mut lines = vec![format!(
            "Estimate for {} with {} (no API call was made)",
            crate::text::escape_line(&self.target),
            crate::text::escape_line(&self.model)
        )];
        if let Some(warning) = &self.model_warning {
            lines.push(format!("Warning: {}", crate::text::escape_line(warning)));
        }
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
        let prices = if self.batch {
            " at Message Batches API prices (half the interactive ones)"
        } else {
            ""
        };
        lines.push(format!(
            "Estimated cost: ${:.2} to ${:.2}{prices}",
            self.cost_usd.low, self.cost_usd.high
        ));
        lines.push(format!(
            "Low: {LOW_TURNS} turns per directory with prompt caching; high: every allotted \
             turn with no cache hits{}.",
            if self.cost_held_by_budget {
                ", held by the budget (no loop starts once it is spent; those running may finish \
                 past it)"
            } else {
                ""
            }
        ));
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests;
