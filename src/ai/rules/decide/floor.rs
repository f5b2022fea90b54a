//! The smallest budget that buys an investigation of a tree: below it a run
//! sends nothing and ends with the scan report, saying what would do.
//!
//! An investigation is at least its survey and plan (when this run makes
//! them), one loop (the target's, the first in the order of interest) and a
//! synthesis. Two figures, the larger wins, rounded up to the cent:
//! - the budget with which [`super::decide`] buys a loop at all (found by
//!   halving the interval, the decision being pure);
//! - the worst case of each request such a run must be able to send, each
//!   with the smallest reply ([`MIN_REPLY_TOKENS`]): the survey's (its
//!   prompt as measured), planning's, the loop's first and the synthesis's
//!   ([`crate::ai::api::cost::Pricing::worst_case`], as the session prices
//!   them before sending).

use super::budget::first_request_cost;
use super::{
    DecisionInputs, PLANNING_PROMPT_TOKENS, PassChoice, SECTION_BYTES, TASK_BYTES, decide,
    planning_choice, smallest_cents, survey_choice,
};
use crate::ai::api::settings::MIN_REPLY_TOKENS;
use crate::ai::rules::levels::PROMPT_OVERHEAD_TOKENS;
use crate::ai::rules::projection::{ModelTerms, reference_tokens};

/// No budget above this many dollars is looked for.
pub(super) const MOST: f64 = 100_000.0;

/// What the requests a minimal investigation over `inputs` must be able to
/// send may cost at their worst, each with the smallest reply: the
/// survey's (`survey_tokens`, its prompt in the model's tokens as the
/// session counts it, when this run sends one), planning's, a loop's
/// first and a synthesis call's.
pub(crate) fn requests_floor(inputs: &DecisionInputs<'_>, survey_tokens: Option<u64>) -> f64 {
    let terms = ModelTerms::for_run(inputs.model, inputs.batch);
    let pricing = terms.pricing;
    let counted = |reference: u64| terms.at_most(reference);
    let reply = MIN_REPLY_TOKENS;
    let mut requests = first_request_cost(
        &terms,
        inputs.loop_prefix_tokens + reference_tokens(TASK_BYTES),
    ) + pricing.worst_case(
        counted(PROMPT_OVERHEAD_TOKENS + reference_tokens(SECTION_BYTES)),
        reply,
        false,
    );
    if survey_choice(inputs) == PassChoice::Run {
        requests += pricing.worst_case(survey_tokens.unwrap_or(0), reply, false);
    }
    if planning_choice(inputs) == PassChoice::Run {
        requests += pricing.worst_case(counted(PLANNING_PROMPT_TOKENS), reply, false);
    }
    requests
}

/// The smallest budget, in dollars (whole cents), that buys an
/// investigation over `inputs` (whose budget it ignores); see
/// [`requests_floor`] for `survey_tokens`.
pub(crate) fn smallest_budget(inputs: &DecisionInputs<'_>, survey_tokens: Option<u64>) -> f64 {
    let requests = requests_floor(inputs, survey_tokens);
    let buys = |dollars: f64| {
        let with = DecisionInputs {
            budget: Some(dollars),
            ..*inputs
        };
        !decide(&with, None).work.loops.is_empty()
    };
    let high = (smallest_cents(buys, 0) * 100.0).round();
    let cents = (requests * 100.0 - 1e-9).ceil().max(high);
    cents / 100.0
}
