//! `--estimate`: what an investigation of the target would cost, without an
//! API call, a credential, or any write to the cache.
//!
//! [`estimate`] (in `gather.rs`) gathers the same facts a run does
//! ([`crate::ai::situation::Situation`]: discovery in the run's scope, the
//! target's investigation looked up read-only, fingerprints, saved survey,
//! plan and synthesis), takes the run's own decision
//! ([`crate::ai::rules::decide::decide`]: which passes run, which
//! directories get a loop, are folded into a unit or summarised from the
//! scan, how the synthesis is laid out) and renders the real prompts of
//! that decision to measure them. Everything else is the pure projection
//! from those sizes ([`crate::ai::rules::projection`], which the budget
//! decision prices loops with too), and the report it yields with its text
//! form (`report.rs`). The tests here cover both.
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
//! - **Calibrated where a key is set.** The first loop's prompt is counted
//!   by the API's free token-counting endpoint, and every token figure is
//!   scaled by that count over the estimate's own (`calibrate.rs`); without
//!   a key, or when the count does not come, the byte rule stands and the
//!   estimate says so.
//!
//! Prices are the catalog's for `--model`/`LUMINOS_MODEL`, each call priced
//! on its own (a price tier depends on one request's prompt), at the batch
//! prices (half) with `--batch`, which sends the same requests. An unknown
//! model is priced as the catalog's stand-in, and the estimate says so.

mod calibrate;
mod gather;
mod report;

pub(crate) use calibrate::calibrate;
pub(crate) use gather::estimate;
pub(crate) use report::{Counts, Estimate};

#[cfg(doc)]
use crate::ai::rules::decide::should_skip_survey;
#[cfg(doc)]
use crate::ai::rules::projection::{
    DIR_OUTPUT_TOKENS_PER_TURN, LOW_TURNS, ModelTerms, SUMMARY_BYTES, SURVEY_BLOCK_BYTES,
};

/// What reading each of these files once adds to a conversation: each is cut
/// at `read_file`'s default `max_bytes`, as the agent reads it by default.
#[cfg(test)]
pub(crate) fn read_tokens(file_sizes: impl IntoIterator<Item = u64>) -> u64 {
    file_sizes
        .into_iter()
        .map(|size| {
            crate::ai::rules::projection::reference_tokens(
                size.min(crate::ai::tools::fs::DEFAULT_MAX_BYTES),
            )
        })
        .sum()
}

#[cfg(test)]
mod tests;
