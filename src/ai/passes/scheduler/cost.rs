//! The scheduler's money rules, pure: what a loop is expected to cost
//! before it starts, and whether the spending cap (`--max-cost`) and the
//! budget let it start. They weigh figures the caller passes in;
//! [`super::run_work`] reads the session's spend and applies them.

use crate::ai::api::Usage;
use crate::ai::api::catalog::Model;
use crate::ai::api::cost::Pricing;
use crate::ai::api::settings::{CallSettings, Workload};

/// What a first loop is assumed to use before any loop of this run has
/// finished: a handful of turns over a small directory, in reference tokens
/// (4 bytes each), before the model's tokenizer and thinking.
pub(crate) const PRIOR_LOOP_USAGE: Usage = Usage {
    input_tokens: 30_000,
    output_tokens: 1_500,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_1h_input_tokens: None,
};

/// The turns [`PRIOR_LOOP_USAGE`] stands for, for the thinking it adds.
pub(crate) use crate::ai::passes::dir_loop::PRIOR_LOOP_TURNS;

/// What a new loop is expected to cost: the mean of the loops this run
/// finished, or [`PRIOR_LOOP_USAGE`] in `model`'s tokens (the catalog's
/// tokens per byte), with its thinking, at `pricing` (the model's, at batch
/// prices under `--batch`), before any has.
pub(crate) fn expected_loop_cost(finished: &[f64], model: &Model, pricing: &Pricing) -> f64 {
    if !finished.is_empty() {
        return finished.iter().sum::<f64>() / finished.len() as f64;
    }
    let scale = crate::ai::api::tokens::TokenEstimate::of(model).per_reference_token();
    let thinking = CallSettings::new(model, Workload::Routine).expected_thinking_tokens();
    let tokens = |n: u64| (n as f64 * scale).ceil() as u64;
    let prior = Usage {
        input_tokens: tokens(PRIOR_LOOP_USAGE.input_tokens),
        output_tokens: tokens(PRIOR_LOOP_USAGE.output_tokens) + thinking * PRIOR_LOOP_TURNS,
        ..PRIOR_LOOP_USAGE
    };
    pricing.cost(&prior)
}

/// The cap rule: start another loop only if the spend so far plus what it is
/// expected to cost stays within the cap.
pub(crate) fn within_cap(spent: f64, expected_next: f64, cap: Option<f64>) -> bool {
    cap.is_none_or(|cap| spent + expected_next <= cap)
}

/// The spend the cap rule weighs: what was spent, and under `--batch` also
/// what the running loops are expected to cost (`running`, the sum of
/// their expectations: their spend shows only once their round is read,
/// and every ready loop starts at once).
pub(crate) fn committed_spend(spent: f64, running: f64, batching: bool) -> f64 {
    if batching { spent + running } else { spent }
}

/// The budget rule: start a loop only if the spend so far, what the loops
/// already running are expected to cost (`running`, the sum of each one's
/// expectation), what this one is expected to cost, and what the loops
/// ranked before it that have not started are expected to cost
/// (`reserved`), stay within what the loops may spend. When money runs
/// short, the loops that matter most (the target's first) keep theirs.
///
/// Each running loop counts at its own expectation, not at the next one's:
/// under `--batch` hundreds start at once, a unit's loop beside a leaf's.
pub(crate) fn within_budget(
    spent: f64,
    running: f64,
    expected_next: f64,
    reserved: f64,
    for_loops: Option<f64>,
) -> bool {
    for_loops.is_none_or(|limit| spent + running + expected_next + reserved <= limit)
}
