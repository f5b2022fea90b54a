//! The decision's money rules: what a resumed run pays for, what a later
//! run with more money deepens, the smallest budget that buys an
//! investigation. The trees and setups are the parent module's.

use super::*;

#[test]
fn a_resumed_run_does_not_pay_for_the_survey_and_plan_it_reuses() {
    let tree = small();
    let decision = run(&tree, &resumed(&tree, Plan::default()), None);
    assert_eq!(decision.survey, PassChoice::Reuse);
    assert_eq!(decision.work.budget.fixed, 0.0);
    let first = run(&tree, &Setup::default(), None);
    assert!(first.work.budget.fixed > 0.0);
}

/// `wide` after a run at `budget` that left most of it to the scan: its
/// loops' directories model-read, the rest summarised from the scan.
fn left_to_the_scan(tree: &Tree, budget: f64) -> (Decision, Setup) {
    let first = run_with_budget(tree, Some(budget), None);
    let mechanical: HashSet<PathBuf> = first.work.mechanical.iter().cloned().collect();
    let later = Setup {
        states: all_unchanged(tree),
        mechanical,
        saved_survey: true,
        saved_plan: Some(Plan::default()),
        saved_work: Some(first.saved_work()),
        synthesis_current: true,
        budget: Some(budget),
        ..Setup::default()
    };
    (first, later)
}

#[test]
fn more_money_than_the_run_before_deepens_what_it_left_to_the_scan() {
    let tree = wide();
    let full = unbudgeted_cost(&tree);
    let (first, same) = left_to_the_scan(&tree, full / 3.0);
    assert!(first.work.mechanical.len() > 20);
    // The same budget again: nothing to do, nothing to pay.
    let again = run(&tree, &same, None);
    assert_eq!(again.survey, PassChoice::NotNeeded);
    assert!(again.work.loops.is_empty() && again.work.candidates.is_empty());
    assert!(again.work.synthesis.reused);
    // More money: loops for what was left to the scan, best first, without
    // --fresh; what stays unbought stays as it is (no new entry to write).
    let more = Setup {
        budget: Some(full / 1.5),
        ..same
    };
    let deeper = run(&tree, &more, None);
    assert_eq!(deeper.survey, PassChoice::Reuse);
    assert!(deeper.freshness.stale.is_empty());
    assert!(!deeper.work.loops.is_empty());
    assert!(deeper.work.mechanical.is_empty());
    for planned in &deeper.work.loops {
        for dir in planned.unit.dirs() {
            assert!(first.work.mechanical.contains(dir), "{dir:?}");
        }
    }
    let best = |loops: &[PlannedLoop]| loops.iter().map(|l| l.rank).min();
    let worst_bought = deeper.work.loops.iter().map(|l| l.rank).max();
    if let Some(first_left) = best(&deeper.work.candidates) {
        // The order of interest: nothing bought ranks after everything
        // left, unless it is cheaper (passed-over ones are skipped).
        assert!(worst_bought.is_some() && first_left > 0);
    }
    assert!(!deeper.work.synthesis.reused);
    // --fresh starts over instead.
    let fresh = Setup {
        fresh: true,
        ..more
    };
    assert!(
        deepenable(&DecisionInputs {
            fresh: true,
            ..inputs_of(&tree, &fresh)
        })
        .is_empty()
    );
}

#[test]
fn the_smallest_budget_buys_a_loop_and_a_cent_less_does_not() {
    let tree = wide();
    let setup = Setup::default();
    let inputs = inputs_of(&tree, &setup);
    let smallest = smallest_budget(&inputs, Some(8_000));
    assert!(smallest > 0.01 && smallest < 5.0, "{smallest}");
    assert_eq!((smallest * 100.0).round() / 100.0, smallest);
    let with = |budget: f64| {
        decide(
            &DecisionInputs {
                budget: Some(budget),
                ..inputs
            },
            None,
        )
    };
    assert!(!with(smallest).work.loops.is_empty());
    // Every request a minimal run sends fits it at its worst case.
    let terms = ModelTerms::for_run(inputs.model, false);
    let survey = terms
        .pricing
        .worst_case(8_000, crate::ai::api::settings::MIN_REPLY_TOKENS, false);
    assert!(smallest > survey);
}

/// The budget a partial run's note names is the smallest (in cents) with
/// which the decision every run buys by gives every directory a loop: a
/// cent less leaves some to the scan.
#[test]
fn the_budget_to_read_everything_is_the_smallest_that_buys_every_loop() {
    let tree = wide();
    let setup = Setup::default();
    let inputs = inputs_of(&tree, &setup);
    let named = budget_to_read_everything(&inputs, &Plan::default());
    assert_eq!((named * 100.0).round() / 100.0, named);
    let with = |budget: f64| {
        decide(
            &DecisionInputs {
                budget: Some(budget),
                ..inputs
            },
            None,
        )
        .work
    };
    let at = with(named);
    assert!(at.mechanical.is_empty() && at.candidates.is_empty());
    assert!(!with(named - 0.01).mechanical.is_empty(), "{named}");
    let full = unbudgeted_cost(&tree);
    println!("named {named}, priced without a budget {full}");
    assert!(
        named <= (full * 100.0).ceil() / 100.0 + 1e-9,
        "{named} > {full}"
    );
}
