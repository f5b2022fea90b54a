//! The scheduler ends: a property test over random budgets, `-j` values
//! and loop costs. It drives the pure parts [`super::run_work`] drives,
//! in the same order ([`Ledger`], [`Schedule`], the replanning [`round`],
//! [`within_budget`]), with the purse reduced to what decides whether a
//! loop's first request goes (the budget less the spend, the worst cases in
//! flight and what is held for the synthesis), and loops that finish in a
//! random order.
//!
//! Loops cost what they cost, often far less than expected (so the
//! calibration falls and a loop's expected cost fits money its first
//! request does not), and a first request may cost more than its estimate:
//! the case that once made a round buy back, thousands of times, a loop
//! that could not start.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::ledger::{Ledger, MoneyThen};
use super::{Schedule, within_budget};
use crate::ai::api::cost::LoopUsage;
use crate::ai::passes::dir_loop::{DirOutcome, LoopEnd};
use crate::ai::rules::decide::{MIN_HANDOFFS_FOR_REPLAN, PlannedLoop, round};
use crate::ai::rules::plan::{Tier, TurnUse, children_first};
use crate::ai::rules::units::Unit;

/// One directory's loop: what it is expected to cost and what it does.
#[derive(Debug, Clone)]
struct Dir {
    /// Expected cost, as the decision priced it.
    expected: f64,
    /// What it costs when it runs.
    actual: f64,
    /// The first request's estimate, and what it really needs.
    first_estimate: f64,
    first_needed: f64,
}

fn dir() -> impl Strategy<Value = Dir> {
    (0.005f64..0.08, 0.02f64..1.5, 0.2f64..1.2, 0.8f64..1.6).prop_map(
        |(expected, actual, first, off)| Dir {
            expected,
            actual: expected * actual,
            first_estimate: expected * first,
            first_needed: expected * first * off,
        },
    )
}

/// The `n`-th directory of the simulated tree: `/t/d{n}` for most, some
/// nested one level under an earlier one, so children-first order and
/// closing below a starting loop come into play.
fn path_of(n: usize) -> PathBuf {
    if n % 5 == 4 {
        PathBuf::from(format!("/t/d{}/c{n}", n - 1))
    } else {
        PathBuf::from(format!("/t/d{n}"))
    }
}

fn planned(n: usize, dir: &Dir, rank: usize) -> PlannedLoop {
    PlannedLoop {
        unit: Unit::single(path_of(n)),
        turns: 10,
        tier: Tier::Default,
        cost: dir.expected,
        first_request: dir.first_estimate,
        rank,
    }
}

fn outcome(root: &Path, end: LoopEnd, cost: f64) -> DirOutcome {
    DirOutcome {
        dir: root.to_path_buf(),
        shown: root.to_string_lossy().into_owned(),
        summary: None,
        completeness: None,
        turns: TurnUse {
            allocated: 10,
            borrowed: 0,
            used: u32::from(end != LoopEnd::Unaffordable),
        },
        usage: LoopUsage {
            cost,
            ..LoopUsage::default()
        },
        end,
        leads: Vec::new(),
    }
}

/// A loop in flight: its schedule index, its ledger index, whether its
/// first request went, and what it holds in the purse.
struct Running {
    i: usize,
    n: usize,
    sent: bool,
    held: f64,
}

/// What a simulated run did.
#[derive(Debug)]
struct Ended {
    rounds: usize,
    starts: usize,
    spent: f64,
}

/// Steps after which a run is taken not to end.
const STEPS: usize = 5_000;

/// Run the work of `dirs` (the first `initial` bought by the first
/// decision, the rest open candidates) with `jobs` at once under `limit`,
/// the synthesis's share `reserve`, loops finishing in the order `picks`
/// says. `None`: it did not end within [`STEPS`].
fn simulate(
    dirs: &[Dir],
    initial: usize,
    jobs: usize,
    limit: f64,
    reserve: f64,
    picks: &[usize],
) -> Option<Ended> {
    let by_path: HashMap<PathBuf, &Dir> = (0..dirs.len()).map(|n| (path_of(n), &dirs[n])).collect();
    let loops: Vec<PlannedLoop> = (0..initial).map(|n| planned(n, &dirs[n], n)).collect();
    let candidates: Vec<PlannedLoop> = (initial..dirs.len())
        .map(|n| planned(n, &dirs[n], n))
        .collect();
    let mechanical: Vec<PathBuf> = (initial..dirs.len()).map(path_of).collect();
    let mut ledger = Ledger::new(Path::new("/t"), &loops, &mechanical, &candidates);
    let roots: Vec<PathBuf> = loops.iter().map(|l| l.unit.root.clone()).collect();
    let order = children_first(&roots);
    let mut loop_of: Vec<usize> = (order.iter())
        .map(|root| roots.iter().position(|r| r == root).unwrap_or(0))
        .collect();
    let mut schedule = Schedule::new(&order);
    let no_spend: HashMap<PathBuf, f64> = HashMap::new();
    let (mut spent, mut held, mut in_flight) = (0.0f64, 0.0f64, 0.0f64);
    let mut running: Vec<Running> = Vec::new();
    let mut decided_before = None;
    let mut starts = 0;
    let mut pick = picks.iter().cycle();
    // A round, carried out as the driver does: the purchases join the
    // schedule, the reserve is held.
    let replan = |ledger: &mut Ledger,
                  schedule: &mut Schedule,
                  loop_of: &mut Vec<usize>,
                  held: &mut f64,
                  spent: f64| {
        let (new, _, decided) = ledger.round(spent, &no_spend, "sim", |input| {
            round(input, reserve, Some(limit))
        });
        *held = decided.reserve;
        let mut added = 0;
        for n in new {
            match schedule.add(&ledger.bought[n].planned.unit.root) {
                Some(i) if i == loop_of.len() => {
                    loop_of.push(n);
                    added += 1;
                }
                Some(i) => {
                    loop_of[i] = n;
                    added += 1;
                }
                None => ledger.unbuy(n),
            }
        }
        added
    };
    for _ in 0..STEPS {
        while running.len() < jobs && schedule.has_ready() {
            let Some(i) = schedule.peek_next() else { break };
            let n = loop_of[i];
            let root = ledger.bought[n].planned.unit.root.clone();
            if decided_before != Some(n)
                && ledger.open_below(&root)
                && ledger
                    .cheapest_open()
                    .is_some_and(|cost| cost <= limit - spent - ledger.committed(&no_spend) - held)
            {
                if replan(&mut ledger, &mut schedule, &mut loop_of, &mut held, spent) == 0 {
                    decided_before = Some(n);
                }
                continue;
            }
            schedule.start_next();
            let expected = ledger.expected(n);
            let for_loops = Some(limit - held);
            let (running_cost, reserved) = (ledger.running(&no_spend), ledger.reserved_before(n));
            if !within_budget(spent, running_cost, expected, reserved, for_loops) {
                let money = MoneyThen {
                    limit: Some(limit),
                    spent,
                    held,
                    by_running: &no_spend,
                };
                ledger.drop_loop(n, money);
                schedule.finish(i);
                continue;
            }
            let _ = ledger.close_below(&root);
            ledger.start(n, expected);
            starts += 1;
            let needed = by_path[&root].first_needed;
            let sent = needed <= limit - spent - in_flight - held;
            let hold = if sent { needed } else { 0.0 };
            in_flight += hold;
            running.push(Running {
                i,
                n,
                sent,
                held: hold,
            });
        }
        if running.is_empty() {
            if schedule.has_ready() {
                continue;
            }
            if ledger.has_open_candidates()
                && replan(&mut ledger, &mut schedule, &mut loop_of, &mut held, spent) > 0
            {
                continue;
            }
            return Some(Ended {
                rounds: ledger.rounds,
                starts,
                spent,
            });
        }
        let at = pick.next().copied().unwrap_or(0) % running.len();
        let done = running.swap_remove(at);
        schedule.finish(done.i);
        in_flight -= done.held;
        let root = ledger.bought[done.n].planned.unit.root.clone();
        if !done.sent {
            let money = MoneyThen {
                limit: Some(limit),
                spent,
                held,
                by_running: &no_spend,
            };
            ledger.drop_loop(done.n, money);
            continue;
        }
        let cost = by_path[&root].actual.min(limit - spent - held).max(0.0);
        spent += cost;
        ledger.hand_off(done.n, &outcome(&root, LoopEnd::Submitted, cost));
        if ledger.handoffs_pending() >= MIN_HANDOFFS_FOR_REPLAN && ledger.has_open_candidates() {
            replan(&mut ledger, &mut schedule, &mut loop_of, &mut held, spent);
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Whatever the budget, the jobs and the loops' costs, the work ends,
    /// after a number of rounds bounded by the loops it finished and the
    /// candidates it had: every round but the last is either every third
    /// handoff, or buys a loop; and a loop that could not start is bought
    /// back only with more money than it had, which only a finished loop
    /// can leave.
    #[test]
    fn the_scheduler_always_ends_in_bounded_rounds(
        dirs in proptest::collection::vec(dir(), 2..40),
        initial in 1usize..6,
        jobs in 1usize..17,
        limit in 0.01f64..0.4,
        reserve in 0.0f64..0.05,
        picks in proptest::collection::vec(0usize..64, 1..32),
    ) {
        let initial = initial.min(dirs.len() - 1);
        let ended = simulate(&dirs, initial, jobs, limit, reserve, &picks);
        let Some(ended) = ended else {
            return Err(TestCaseError::fail(format!("did not end in {STEPS} steps")));
        };
        let candidates = dirs.len() - initial;
        let finished = ended.starts;
        let bound = (finished + 2) * (candidates + 1);
        prop_assert!(ended.rounds <= bound, "{} rounds, bound {bound}", ended.rounds);
        prop_assert!(ended.spent <= limit + 1e-9);
    }
}
