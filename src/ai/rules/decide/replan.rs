//! Replanning on handoffs (seed 003), so the budget is used: as loops
//! finish, the run decides again with the money actually left.
//!
//! The first decision buys loops at their *expected* cost. Loops then cost
//! what they cost: each finished loop is a handoff (what it found, how
//! complete, the turns and money it used, the paths it cited). After every
//! [`MIN_HANDOFFS_FOR_REPLAN`] handoffs, and whenever nothing is left to
//! run while money is, a round decides again ([`round`]):
//!
//! - the loops' expected costs are scaled by what the finished ones cost
//!   against what they were expected to cost ([`Calibration`], shrunk
//!   toward 1 while few have finished);
//! - the synthesis is projected again over the loops bought so far and the
//!   directories still left to the scan, and that (with its margin) is
//!   kept for it, as the first decision keeps it: never more than a fifth
//!   of what the budget leaves after the survey and planning;
//! - what is left after the spend, the loops still to run or finish and
//!   the synthesis buys the next candidates, with the same purchase rule as
//!   the first decision ([`super::buy`]): first the ones a finished loop
//!   named (a lead: a flag or a citation pointing into a directory left to
//!   the scan), then the rest in the order of interest.
//!
//! The input is only what changed (seed 003's delta): the spend, the
//! handoffs' calibration and leads, and the candidates still open; nothing
//! is asked of a model. Pure: the scheduler gathers the input and carries
//! out the purchases (children before parents still), and the orchestrator
//! saves each round to the cache so a resumed run carries on with it.

use std::path::PathBuf;

use super::synthesis::project_synthesis;
use super::{DecisionInputs, PlannedLoop, SYNTHESIS_MARGIN, SYNTHESIS_SHARE, buy};
use crate::ai::rules::fingerprint::Freshness;
use crate::ai::rules::levels::Capacity;
use crate::ai::rules::projection::ModelTerms;

/// Handoffs between two rounds (seed 003's `MIN_HANDOFFS_FOR_REPLAN`).
pub(crate) const MIN_HANDOFFS_FOR_REPLAN: usize = 3;
/// Finished loops' costs count against this many loops that cost what
/// they were expected to: one cheap first loop does not make every other
/// look cheap.
pub(crate) const PRIOR_LOOPS: f64 = 2.0;

/// What the finished loops cost against what they were expected to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Calibration {
    pub loops: usize,
    pub expected: f64,
    pub actual: f64,
}

impl Calibration {
    /// One more finished loop, `expected` to cost what it cost `actual`.
    pub(crate) fn add(&mut self, expected: f64, actual: f64) {
        self.loops += 1;
        self.expected += expected.max(0.0);
        self.actual += actual.max(0.0);
    }

    /// What a loop costs for each dollar it was expected to: 1 before any
    /// finished, then the finished loops' ratio, shrunk toward 1 by
    /// [`PRIOR_LOOPS`] loops of their mean expectation.
    pub(crate) fn scale(&self) -> f64 {
        if self.loops == 0 || self.expected <= 0.0 {
            return 1.0;
        }
        let prior = PRIOR_LOOPS * self.expected / self.loops as f64;
        (self.actual + prior) / (self.expected + prior)
    }
}

/// What a round decides from.
#[derive(Debug, Clone)]
pub(crate) struct RoundInput<'a> {
    /// What the run has spent.
    pub spent: f64,
    /// What the loops bought and not finished are still expected to cost
    /// (running ones at their whole expectation), scaled.
    pub committed: f64,
    /// Every loop bought so far, finished or not.
    pub loops: &'a [PlannedLoop],
    /// Stale directories left to the scan so far.
    pub mechanical: &'a [PathBuf],
    /// The candidates still open, in the order of interest.
    pub candidates: &'a [PlannedLoop],
    /// Which of them a finished loop named.
    pub led: &'a [bool],
    pub calibration: Calibration,
}

/// What a round decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Round {
    /// Kept for the synthesis from now on.
    pub reserve: f64,
    /// What the new loops could spend.
    pub money: f64,
    /// The calibration's scale.
    pub scale: f64,
    /// Indexes into the input's candidates, in purchase order.
    pub bought: Vec<usize>,
}

/// What a run's rounds decide over: the inputs and the plan's freshness of
/// the first decision, and the synthesis's capacity and prices.
pub(crate) struct Replanner<'a> {
    pub inputs: DecisionInputs<'a>,
    pub freshness: &'a Freshness,
    pub capacity: Capacity,
    pub terms: ModelTerms,
    /// The most kept for the synthesis ([`SYNTHESIS_SHARE`] of what the
    /// budget leaves after the survey and planning); none without one.
    pub most_reserved: Option<f64>,
}

impl<'a> Replanner<'a> {
    /// The replanner of a run over `inputs` whose first decision found
    /// `freshness` and priced the survey and planning at `fixed`.
    pub(crate) fn new(
        inputs: DecisionInputs<'a>,
        freshness: &'a Freshness,
        fixed: f64,
    ) -> Replanner<'a> {
        let terms = ModelTerms::for_run(inputs.model, inputs.batch);
        let capacity = Capacity::new(
            inputs.model.model.context_window,
            inputs.budget,
            terms.pricing.prices.input,
        );
        Replanner {
            most_reserved: inputs
                .budget
                .map(|limit| (limit - fixed).max(0.0) * SYNTHESIS_SHARE),
            inputs,
            freshness,
            capacity,
            terms,
        }
    }

    /// Decide one round (see the module docs).
    pub(crate) fn round(&self, input: &RoundInput<'_>) -> Round {
        let synthesis = project_synthesis(
            &self.inputs,
            self.freshness,
            input.loops,
            input.mechanical,
            self.capacity,
            &self.terms,
        );
        let reserve = synthesis.cost * SYNTHESIS_MARGIN;
        let reserve = self.most_reserved.map_or(reserve, |most| reserve.min(most));
        round(input, reserve, self.inputs.budget)
    }
}

/// What new loops could spend under `limit` (none: no end) after `spent`,
/// what the loops bought and not finished are still expected to cost
/// (`committed`) and what is kept for the synthesis (`reserve`): what a
/// round buys with, and what a loop that could not start had (see
/// [`crate::ai::passes::scheduler`]'s ledger).
pub(crate) fn money_for_loops(limit: Option<f64>, spent: f64, committed: f64, reserve: f64) -> f64 {
    limit.map_or(f64::INFINITY, |limit| limit - spent - committed - reserve)
}

/// Decide one round with `reserve` kept for the synthesis, under `limit`
/// (none: every candidate is bought). A candidate is bought only when the
/// money pays for its first request too (its `first_request`, which the
/// ledger raises past the money a loop of it once failed to start with):
/// so a round never buys back a loop that cannot start with the same
/// money, and the run moves on to the synthesis.
pub(crate) fn round(input: &RoundInput<'_>, reserve: f64, limit: Option<f64>) -> Round {
    let scale = input.calibration.scale();
    let money = money_for_loops(limit, input.spent, input.committed, reserve);
    let led = |i: &usize| input.led.get(*i).copied().unwrap_or(false);
    let (mut order, rest): (Vec<usize>, Vec<usize>) = (0..input.candidates.len()).partition(led);
    order.extend(rest);
    let bought = if money > 0.0 {
        buy(input.candidates, &order, money, scale)
    } else {
        Vec::new()
    };
    Round {
        reserve,
        money,
        scale,
        bought,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::rules::plan::Tier;
    use crate::ai::rules::units::Unit;

    fn candidate(name: &str, cost: f64, rank: usize) -> PlannedLoop {
        PlannedLoop {
            unit: Unit::single(PathBuf::from("/t").join(name)),
            turns: 10,
            tier: Tier::Default,
            cost,
            first_request: cost / 4.0,
            rank,
        }
    }

    fn input<'a>(
        candidates: &'a [PlannedLoop],
        led: &'a [bool],
        spent: f64,
        calibration: Calibration,
    ) -> RoundInput<'a> {
        RoundInput {
            spent,
            committed: 0.5,
            loops: &[],
            mechanical: &[],
            candidates,
            led,
            calibration,
        }
    }

    #[test]
    fn a_loop_whose_first_request_the_money_cannot_pay_for_is_not_bought() {
        // Loops far cheaper than expected: a's expected cost fits the
        // $0.03 left, its first request's worst case ($0.05) does not.
        let mut cheap = Calibration::default();
        for _ in 0..40 {
            cheap.add(0.2, 0.02);
        }
        let mut candidates = [candidate("a", 0.2, 0), candidate("b", 0.2, 1)];
        candidates[0].first_request = 0.05;
        candidates[1].first_request = 0.01;
        let none = [false; 2];
        let decided = round(&input(&candidates, &none, 1.37, cheap), 0.1, Some(2.0));
        assert!((decided.money - 0.03).abs() < 1e-9, "{}", decided.money);
        assert!(candidates[0].cost * decided.scale <= decided.money);
        assert_eq!(decided.bought, [1]);
    }

    #[test]
    fn calibration_starts_at_one_and_follows_the_handoffs_slowly() {
        let mut calibration = Calibration::default();
        assert_eq!(calibration.scale(), 1.0);
        // One loop at half its expectation: halfway there is not trusted.
        calibration.add(0.1, 0.05);
        let one = calibration.scale();
        assert!(one > 0.5 && one < 1.0, "{one}");
        for _ in 0..20 {
            calibration.add(0.1, 0.05);
        }
        let many = calibration.scale();
        assert!(many < one && (many - 0.5).abs() < 0.05, "{many}");
    }

    #[test]
    fn money_left_buys_in_order_of_interest_and_leads_come_first() {
        let candidates = [
            candidate("a", 0.2, 0),
            candidate("b", 0.2, 1),
            candidate("c", 0.2, 2),
        ];
        // $2 - $1 spent - $0.5 running - $0.1 synthesis: $0.4, two loops.
        let none = [false; 3];
        let plain = round(
            &input(&candidates, &none, 1.0, Calibration::default()),
            0.1,
            Some(2.0),
        );
        assert_eq!(plain.bought, [0, 1]);
        assert!((plain.money - 0.4).abs() < 1e-9);
        // A finished loop named c: it goes first.
        let led = [false, false, true];
        let leads = round(
            &input(&candidates, &led, 1.0, Calibration::default()),
            0.1,
            Some(2.0),
        );
        assert_eq!(leads.bought, [2, 0]);
        // Loops that cost half what was expected: the same money buys all.
        let mut cheap = Calibration::default();
        for _ in 0..40 {
            cheap.add(0.2, 0.1);
        }
        let calibrated = round(&input(&candidates, &none, 1.0, cheap), 0.1, Some(2.0));
        assert_eq!(calibrated.bought, [0, 1, 2]);
        // Nothing left: nothing bought.
        let broke = round(
            &input(&candidates, &none, 1.5, Calibration::default()),
            0.1,
            Some(2.0),
        );
        assert!(broke.bought.is_empty());
        // Without a ceiling, everything.
        let unbounded = round(
            &input(&candidates, &none, 1.5, Calibration::default()),
            0.1,
            None,
        );
        assert_eq!(unbounded.bought, [0, 1, 2]);
    }
}
