//! What the budget prices and in what order it buys: the expected cost of
//! a survey or planning call ([`pass_cost`]) and of a unit's loop
//! ([`LoopCosts`], reading what [`expected_read_bytes`] says an agent
//! reads), and the order of interest in which units get loops
//! ([`assign_ranks`]).
//!
//! Its edges: pure pricing and ranking over the [`DecisionInputs`]; which units
//! exist is [`crate::ai::rules::units`], which of them are bought is
//! [`super::decide`], and the token arithmetic of a loop is the estimate's
//! projection ([`project_loop`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::{
    DecisionInputs, EXPECTED_READS, EXPECTED_READS_PER_FOLDED, EXPECTED_TURNS, PassChoice,
    PlannedLoop, SECTION_BYTES, SUMMARY_OUTPUT_TOKENS, TASK_BYTES,
};
use crate::ai::api::Usage;
use crate::ai::api::settings::MIN_REPLY_TOKENS;
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::plan::Tier;
use crate::ai::rules::projection::{
    DIR_OUTPUT_TOKENS_PER_TURN, ModelTerms, Tally, project_loop, reference_tokens,
};
use crate::ai::rules::units::Unit;

/// What one single-call pass is expected to cost this run. A pass reused
/// from the cache costs nothing: the run that saved it paid for it, and a
/// resumed run does not pay for it again, so it does not take its price
/// from this run's budget. `prompt` and `output` are reference tokens; the
/// pass thinks as a judgment call does.
pub(super) fn pass_cost(terms: &ModelTerms, choice: PassChoice, prompt: u64, output: u64) -> f64 {
    match choice {
        PassChoice::Run => {
            Tally::single(
                terms.scale(prompt),
                terms.scale(output) + terms.judgment_thinking,
                &terms.pricing,
            )
            .cost
        }
        PassChoice::Reuse | PassChoice::Skip | PassChoice::NotNeeded => 0.0,
    }
}

/// What a request of `reference_tokens` (before the model's tokenizer) may
/// cost at its worst with the smallest reply, as the session prices it
/// before sending: counted with the window's margin, every token written
/// to the prompt cache, [`MIN_REPLY_TOKENS`] produced. A loop's first
/// request is its prefix and its assignment; a loop the money left cannot
/// send it for ends before it starts.
pub(crate) fn first_request_cost(terms: &ModelTerms, reference_tokens: u64) -> f64 {
    let counted = terms.at_most(reference_tokens);
    terms.pricing.worst_case(counted, MIN_REPLY_TOKENS, true)
}

/// Buy loops: go through `order` (indexes into `loops`) and take each
/// whose expected cost, times `scale`, fits what is left of `money`, and
/// whose first request (its `first_request`, a worst case, not scaled)
/// the money left could send; one that does not fit is passed over for
/// the cheaper ones after it. The bought indexes, in `order`'s order.
///
/// The one purchase rule of a run: the first decision buys with it (and
/// `--estimate` with that decision), and every replanning round buys the
/// next loops with it from the money actually left
/// ([`super::replan::round`]). A loop whose first request the money cannot
/// pay for is never bought: it would end before it sent anything, and a
/// round buying it again would go round forever.
pub(crate) fn buy(loops: &[PlannedLoop], order: &[usize], money: f64, scale: f64) -> Vec<usize> {
    let mut left = money;
    let mut bought = Vec::new();
    for &i in order {
        let cost = loops[i].cost * scale;
        if cost <= left && loops[i].first_request <= left {
            left -= cost;
            bought.push(i);
        }
    }
    bought
}

/// The expected cost of loops.
pub(super) struct LoopCosts<'a, 'f> {
    pub(super) inputs: &'a DecisionInputs<'f>,
    pub(super) terms: ModelTerms,
}

impl LoopCosts<'_, '_> {
    /// The reference tokens of the assignment of `unit`'s loop: its fixed
    /// text, its directories' listings and a section per child summary
    /// from outside the unit.
    fn task_tokens(&self, unit: &Unit) -> u64 {
        let inputs = self.inputs;
        let inside: HashSet<&Path> = unit.dirs().map(PathBuf::as_path).collect();
        let mut listing = 0;
        let mut outside = 0u64;
        for dir in unit.dirs() {
            let stats = inputs.stats.of(dir);
            listing += stats.listing_bytes;
            outside += inputs
                .children
                .of(dir)
                .iter()
                .filter(|child| !inside.contains(child.as_path()))
                .count() as u64;
        }
        reference_tokens(TASK_BYTES + listing + outside * SECTION_BYTES)
    }

    /// The worst case of the first request of `unit`'s loop
    /// ([`first_request_cost`]): no loop is bought unless the money left
    /// pays for it.
    pub(super) fn first_request(&self, unit: &Unit) -> f64 {
        first_request_cost(
            &self.terms,
            self.inputs.loop_prefix_tokens + self.task_tokens(unit),
        )
    }

    /// What the loop of `unit` with `turns` turns is expected to cost.
    pub(super) fn expected(&self, unit: &Unit, turns: u32) -> f64 {
        let inputs = self.inputs;
        let read = expected_read_bytes(inputs.stats, unit);
        let prefix = inputs.loop_prefix_tokens;
        let task = self.task_tokens(unit);
        let expected_turns = (EXPECTED_TURNS + unit.members.len() as u32).min(turns.max(1));
        let tally = project_loop(
            prefix,
            prefix + task,
            reference_tokens(read),
            expected_turns,
            true,
            &self.terms,
        );
        debug_assert!(tally.usage.output_tokens >= DIR_OUTPUT_TOKENS_PER_TURN);
        // The summaries written, on top of the turns' own output.
        let summaries = Usage {
            output_tokens: self.terms.scale(SUMMARY_OUTPUT_TOKENS * unit.len() as u64),
            ..Usage::default()
        };
        tally.cost + self.terms.pricing.cost(&summaries)
    }
}

/// What the loop of `unit` is expected to read: an agent reads the files
/// that explain the rest ([`EXPECTED_READS`] of its directory, and
/// [`EXPECTED_READS_PER_FOLDED`] of each folded one), not every file; each
/// as `read_file` returns it by default (up to 4 KiB).
pub(crate) fn expected_read_bytes(stats: &TreeStats, unit: &Unit) -> u64 {
    let (mut read, mut files) = (0u64, 0u64);
    for dir in unit.dirs() {
        let dir = stats.of(dir);
        read += dir.read_bytes;
        files += u64::from(dir.files);
    }
    let reads = files.min(EXPECTED_READS + EXPECTED_READS_PER_FOLDED * unit.members.len() as u64);
    (read * reads).checked_div(files).unwrap_or(0)
}

/// Rank `loops` by [`rank`] (their `rank` fields), and return their
/// indexes in that order.
pub(super) fn assign_ranks(
    inputs: &DecisionInputs<'_>,
    tiers: &HashMap<PathBuf, Tier>,
    loops: &mut [PlannedLoop],
) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..loops.len()).collect();
    ranked.sort_by_cached_key(|&i| rank(inputs, tiers, &loops[i].unit));
    for (place, &i) in ranked.iter().enumerate() {
        loops[i].rank = place;
    }
    ranked
}

/// The order in which units get loops: the target first, then by the
/// plan's tier of the nearest named directory at or above the unit's root
/// (priority, unnamed, shallow), then the most source files, the most
/// files, and the path.
fn rank(
    inputs: &DecisionInputs<'_>,
    tiers: &HashMap<PathBuf, Tier>,
    unit: &Unit,
) -> (
    u8,
    u8,
    std::cmp::Reverse<u64>,
    std::cmp::Reverse<u64>,
    PathBuf,
) {
    let tier = unit
        .root
        .ancestors()
        .take_while(|dir| dir.starts_with(inputs.target))
        .find_map(|dir| tiers.get(dir).copied())
        .unwrap_or(Tier::Default);
    let tier_rank = match tier {
        Tier::Priority => 0,
        Tier::Default => 1,
        Tier::Shallow => 2,
    };
    let (source, files) = unit.dirs().fold((0u64, 0u64), |(s, f), dir| {
        let stats = inputs.stats.of(dir);
        (
            s + u64::from(stats.source_files()),
            f + u64::from(stats.files),
        )
    });
    (
        u8::from(unit.root != inputs.target),
        tier_rank,
        std::cmp::Reverse(source),
        std::cmp::Reverse(files),
        unit.root.clone(),
    )
}
