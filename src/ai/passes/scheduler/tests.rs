//! Unit tests of the scheduler's pure rules: the dependency graph
//! ([`super::Schedule`]) and the cost, cap and budget rules.

use std::path::{Path, PathBuf};

use super::*;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::cost::Pricing;

fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}

/// Drive a schedule with `jobs` workers where the running directory
/// that started first always finishes first; returns the start order.
fn simulate(order: &[PathBuf], jobs: usize) -> Vec<PathBuf> {
    let mut schedule = Schedule::new(order);
    let mut running: std::collections::VecDeque<usize> = Default::default();
    let mut started = Vec::new();
    loop {
        while running.len() < jobs {
            match schedule.start_next() {
                Some(i) => {
                    started.push(order[i].clone());
                    running.push_back(i);
                }
                None => break,
            }
        }
        match running.pop_front() {
            Some(i) => schedule.finish(i),
            None => break,
        }
    }
    started
}

#[test]
fn one_job_reproduces_the_order() {
    let order = paths(&["/t/a/x", "/t/b", "/t/a", "/t/c", "/t"]);
    assert_eq!(simulate(&order, 1), order);
}

#[test]
fn no_parent_starts_before_its_children_finish() {
    let order = paths(&["/t/a/x/y", "/t/a/x", "/t/b/z", "/t/a", "/t/b", "/t/c", "/t"]);
    let mut schedule = Schedule::new(&order);
    // Everything without listed descendants is ready at once, in order.
    let mut first = Vec::new();
    while let Some(i) = schedule.start_next() {
        first.push(order[i].clone());
    }
    assert_eq!(first, paths(&["/t/a/x/y", "/t/b/z", "/t/c"]));
    let index = |p: &str| order.iter().position(|d| d == Path::new(p)).unwrap();
    schedule.finish(index("/t/b/z"));
    assert_eq!(schedule.start_next(), Some(index("/t/b")));
    assert!(
        !schedule.has_ready(),
        "/t/a waits for /t/a/x, /t waits for all"
    );
    schedule.finish(index("/t/a/x/y"));
    assert_eq!(schedule.start_next(), Some(index("/t/a/x")));
    for p in ["/t/a/x", "/t/b", "/t/c"] {
        schedule.finish(index(p));
    }
    assert_eq!(schedule.start_next(), Some(index("/t/a")));
    assert!(!schedule.has_ready());
    schedule.finish(index("/t/a"));
    assert_eq!(schedule.start_next(), Some(index("/t")));
    assert_eq!(schedule.not_started(), 0);
}

#[test]
fn band_order_holds_among_ready_directories() {
    // A priority-first order: the priority band first, then default.
    let order = paths(&["/t/p2", "/t/p1", "/t/d1", "/t/d2", "/t"]);
    assert_eq!(simulate(&order, 3), order);
    for jobs in 1..=5 {
        let started = simulate(&order, jobs);
        assert_eq!(started.last().unwrap(), Path::new("/t"), "jobs {jobs}");
    }
}

#[test]
fn every_jobs_count_respects_dependencies() {
    let order = paths(&[
        "/t/a/b/c", "/t/a/b/d", "/t/e/f", "/t/a/b", "/t/e", "/t/g", "/t/a", "/t",
    ]);
    for jobs in 1..=8 {
        let started = simulate(&order, jobs);
        assert_eq!(started.len(), order.len());
        for (pos, dir) in started.iter().enumerate() {
            for later in &started[pos + 1..] {
                assert!(!later.starts_with(dir), "{dir:?} started before {later:?}");
            }
        }
    }
}

#[test]
fn the_budget_counts_the_running_loops_and_the_higher_ranked_ones() {
    assert!(within_budget(100.0, 8.0, 1.0, 50.0, None));
    assert!(within_budget(1.0, 0.0, 1.0, 0.0, Some(2.0)));
    assert!(within_budget(1.0, 0.5, 0.5, 0.0, Some(2.0)));
    assert!(!within_budget(1.0, 1.0, 0.5, 0.0, Some(2.0)));
    assert!(!within_budget(1.0, 0.0, 0.5, 0.6, Some(2.0)));
    assert!(!within_budget(0.0, 0.0, 0.01, 0.0, Some(0.0)));
    // A cheap loop beside an expensive one running: their own
    // expectations count, not twice the cheap one's.
    assert!(!within_budget(0.0, 1.5, 0.1, 0.0, Some(1.5)));
    assert!(within_budget(0.0, 1.4, 0.1, 0.0, Some(1.5)));
}

#[test]
fn a_filter_picks_the_earliest_ready_of_its_kind() {
    let order = paths(&["/t/a", "/t/b", "/t/c", "/t"]);
    let mut schedule = Schedule::new(&order);
    assert!(schedule.has_ready_where(|i| i == 1));
    assert_eq!(schedule.start_next_where(|i| i > 0), Some(1));
    assert_eq!(schedule.start_next_where(|i| i == 3), None);
    assert_eq!(schedule.start_next(), Some(0));
}

#[test]
fn the_cap_counts_the_expected_next_loop() {
    assert!(within_cap(100.0, 100.0, None));
    assert!(within_cap(0.5, 0.4, Some(1.0)));
    assert!(within_cap(0.6, 0.4, Some(1.0)));
    assert!(!within_cap(0.61, 0.4, Some(1.0)));
    assert!(!within_cap(0.0, 0.01, Some(0.0)));
}

#[test]
fn under_batch_the_cap_counts_the_running_loops() {
    assert_eq!(committed_spend(1.0, 1.5, false), 1.0);
    assert_eq!(committed_spend(1.0, 1.5, true), 2.5);
    // Three loops of 0.5 running and 1.0 spent: a fourth fits a cap of
    // 3.0, not of 2.9.
    assert!(within_cap(committed_spend(1.0, 1.5, true), 0.5, Some(3.0)));
    assert!(!within_cap(committed_spend(1.0, 1.5, true), 0.5, Some(2.9)));
}

#[test]
fn expected_cost_is_the_mean_of_finished_loops_or_the_prior() {
    let priced = |model: &str| Pricing::for_model(model);
    let model = |id: &str| ModelFacts::of(id).model;
    let prior = expected_loop_cost(
        &[],
        model("claude-sonnet-4-5"),
        &priced("claude-sonnet-4-5"),
    );
    assert!((prior - (0.09 + 0.0225)).abs() < 1e-9, "{prior}");
    assert_eq!(
        expected_loop_cost(
            &[0.1, 0.3],
            model("claude-sonnet-4-5"),
            &priced("claude-sonnet-4-5")
        ),
        0.2
    );
    // At batch prices the prior is half.
    let batch = expected_loop_cost(
        &[],
        model("claude-sonnet-4-5"),
        &priced("claude-sonnet-4-5").batch(),
    );
    assert!((batch - prior / 2.0).abs() < 1e-12, "{batch}");
    // Opus 4.8: 5/3 the price, 1.3 the tokens for the same text, no
    // thinking in loops (it is opt-in there).
    let opus = expected_loop_cost(&[], model("claude-opus-4-8"), &priced("claude-opus-4-8"));
    assert!(
        (opus - (39_000.0 * 5.0 + 1_950.0 * 25.0) / 1e6).abs() < 1e-9,
        "{opus}"
    );
    // Sonnet 5.5 thinks between tools: 3 turns of notes on top.
    let sonnet = expected_loop_cost(
        &[],
        model("claude-sonnet-5-5"),
        &priced("claude-sonnet-5-5"),
    );
    let thinking = 3 * crate::ai::api::settings::BETWEEN_TOOLS_THINKING_TOKENS;
    let expected = (39_000.0 * 2.0 + (1_950 + thinking) as f64 * 10.0) / 1e6;
    assert!((sonnet - expected).abs() < 1e-9, "{sonnet}");
}

#[test]
fn a_loop_bought_later_waits_for_those_below_and_holds_up_those_above() {
    let order = paths(&["/t/a/x", "/t/b", "/t"]);
    let mut schedule = Schedule::new(&order);
    assert_eq!(schedule.start_next(), Some(0));
    // /t/a joins: it waits for /t/a/x, and /t waits for it.
    let a = schedule.add(Path::new("/t/a")).unwrap();
    assert_eq!(a, 3);
    assert_eq!(schedule.start_next(), Some(1));
    schedule.finish(1);
    assert!(!schedule.has_ready(), "/t/a waits for /t/a/x, /t for /t/a");
    schedule.finish(0);
    assert_eq!(schedule.peek_next(), Some(a));
    assert_eq!(schedule.start_next(), Some(a));
    schedule.finish(a);
    assert_eq!(schedule.start_next(), Some(2));
    // Nothing joins below a loop that started; one waiting or running
    // does not join twice; one that finished may join again (a loop the
    // budget could not start, bought back).
    assert_eq!(schedule.add(Path::new("/t/c")), None);
    assert_eq!(schedule.add(Path::new("/t")), None);
    let mut fresh = Schedule::new(&paths(&["/t/b", "/t"]));
    assert_eq!(fresh.start_next(), Some(0));
    assert_eq!(fresh.add(Path::new("/t/b")), None);
    fresh.finish(0);
    assert_eq!(fresh.add(Path::new("/t/b")), Some(0));
    assert!(
        !fresh.has_ready_where(|i| i == 1),
        "/t waits for /t/b again"
    );
    assert_eq!(fresh.start_next(), Some(0));
    assert!(!schedule.unfinished_at_or_below(Path::new("/t/a")));
    assert!(schedule.unfinished_at_or_below(Path::new("/t")));
}
