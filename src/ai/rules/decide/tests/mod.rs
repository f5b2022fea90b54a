use std::collections::{BTreeSet, HashSet};

use super::*;
use crate::ai::api::DEFAULT_MODEL;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::rules::dir_stats::TreeStats;
use crate::ai::rules::discover::{ChildIndex, relative, sort_leaf_first};
use crate::ai::rules::plan::{PriorityDir, TierDir};
use crate::ai::rules::units::Unit;
use crate::scan::ClassifiedFile;

const TARGET: &str = "/t";

/// A tree under /t: `(relative dir, source files of 2 KiB)`.
struct Tree {
    dirs: Vec<PathBuf>,
    children: ChildIndex,
    stats: TreeStats,
    total_files: u64,
}

fn tree(spec: &[(&str, usize)]) -> Tree {
    let target = Path::new(TARGET);
    let mut dirs: Vec<PathBuf> = spec
        .iter()
        .map(|(rel, _)| match *rel {
            "." => target.to_path_buf(),
            rel => target.join(rel),
        })
        .collect();
    sort_leaf_first(&mut dirs);
    let files: Vec<ClassifiedFile> = spec
        .iter()
        .flat_map(|(rel, n)| {
            (0..*n).map(move |i| {
                let dir = if *rel == "." {
                    target.to_path_buf()
                } else {
                    target.join(rel)
                };
                ClassifiedFile {
                    path: dir.join(format!("f{i}.rs")).to_string_lossy().into_owned(),
                    name: format!("f{i}.rs"),
                    category: "source".into(),
                    size: 2048,
                    description: None,
                }
            })
        })
        .collect();
    Tree {
        children: ChildIndex::new(&dirs),
        stats: TreeStats::new(target, target, &files, &dirs),
        total_files: files.len() as u64,
        dirs,
    }
}

/// The small project of the pipeline tests: `.`, src, src/core, docs.
fn small() -> Tree {
    tree(&[(".", 2), ("src", 1), ("src/core", 2), ("docs", 1)])
}

/// 4 packages of 6 modules, each module with two small subdirectories:
/// 1 + 4 + 24 + 48 = 77 directories.
fn wide() -> Tree {
    let mut spec: Vec<(String, usize)> = vec![(".".into(), 1)];
    for p in 0..4 {
        spec.push((format!("pkg{p}"), 0));
        for m in 0..6 {
            spec.push((format!("pkg{p}/mod{m}"), 20));
            spec.push((format!("pkg{p}/mod{m}/a"), 3));
            spec.push((format!("pkg{p}/mod{m}/b"), 2));
        }
    }
    let spec: Vec<(&str, usize)> = spec.iter().map(|(r, n)| (r.as_str(), *n)).collect();
    tree(&spec)
}

struct Setup {
    states: HashMap<PathBuf, DirState>,
    mechanical: HashSet<PathBuf>,
    saved_survey: bool,
    saved_plan: Option<Plan>,
    saved_work: Option<SavedWork>,
    synthesis_current: bool,
    fresh: bool,
    budget: Option<f64>,
    batch: bool,
}

impl Default for Setup {
    fn default() -> Setup {
        Setup {
            states: HashMap::new(),
            mechanical: HashSet::new(),
            saved_survey: false,
            saved_plan: None,
            saved_work: None,
            synthesis_current: false,
            fresh: false,
            batch: false,
            budget: Some(5.0),
        }
    }
}

/// [`run`] with the default setup but for `budget`.
fn run_with_budget(tree: &Tree, budget: Option<f64>, proposal: Option<&Plan>) -> Decision {
    let setup = Setup {
        budget,
        ..Setup::default()
    };
    run(tree, &setup, proposal)
}

/// What one loop per directory of `tree`, and its synthesis, would cost.
fn unbudgeted_cost(tree: &Tree) -> f64 {
    let everything = run_with_budget(tree, None, None);
    everything.work.budget.fixed
        + everything.work.budget.loops_cost
        + everything.work.synthesis.cost
}

/// What `decide` is given for `tree` under `setup`, priced for the default
/// model.
fn inputs_of<'a>(tree: &'a Tree, setup: &'a Setup) -> DecisionInputs<'a> {
    DecisionInputs {
        target: Path::new(TARGET),
        dirs: &tree.dirs,
        children: &tree.children,
        stats: &tree.stats,
        states: &setup.states,
        mechanical: &setup.mechanical,
        total_files: tree.total_files,
        fresh: setup.fresh,
        saved_survey: setup.saved_survey,
        saved_plan: setup.saved_plan.as_ref(),
        saved_work: setup.saved_work.as_ref(),
        synthesis_current: setup.synthesis_current,
        budget: setup.budget,
        model: ModelFacts::of(DEFAULT_MODEL),
        batch: setup.batch,
        loop_prefix_tokens: 4_000,
    }
}

fn run(tree: &Tree, setup: &Setup, proposal: Option<&Plan>) -> Decision {
    let inputs = inputs_of(tree, setup);
    let decision = decide(&inputs, proposal);
    // The run sends the survey on this alone, before it decides the rest.
    assert_eq!(survey_choice(&inputs), decision.survey);
    decision
}

fn rel(dir: &Path) -> String {
    relative(Path::new(TARGET), dir)
}

fn rels<'a>(dirs: impl IntoIterator<Item = &'a PathBuf>) -> Vec<String> {
    dirs.into_iter().map(|d| rel(d)).collect()
}

fn all_unchanged(tree: &Tree) -> HashMap<PathBuf, DirState> {
    tree.dirs
        .iter()
        .map(|d| (d.clone(), DirState::Unchanged))
        .collect()
}

/// A plan's tier entry for `docs`, read as prose.
fn docs_as_prose() -> Vec<TierDir> {
    vec![TierDir {
        path: "docs".into(),
        reason: "prose".into(),
    }]
}

/// A resumed run of the [`small`] tree: the survey and `plan` saved, every
/// directory cached but `docs`.
fn resumed(tree: &Tree, plan: Plan) -> Setup {
    let mut states = all_unchanged(tree);
    states.insert(PathBuf::from("/t/docs"), DirState::Missing);
    Setup {
        states,
        saved_survey: true,
        saved_plan: Some(plan),
        ..Setup::default()
    }
}

#[test]
fn a_tree_that_fits_gets_a_loop_per_directory_as_before() {
    let tree = small();
    let decision = run(&tree, &Setup::default(), None);
    assert!(!decision.tiny);
    assert_eq!(
        (decision.survey, decision.planning),
        (PassChoice::Run, PassChoice::Run)
    );
    assert!(!decision.work.budget.binding);
    assert_eq!(
        decision
            .work
            .loops
            .iter()
            .map(|l| rel(&l.unit.root))
            .collect::<Vec<_>>(),
        rels(&decision.applied.order)
    );
    assert_eq!(
        rels(&decision.applied.order),
        ["src/core", "docs", "src", "."]
    );
    assert!(
        decision
            .work
            .loops
            .iter()
            .all(|l| l.unit.members.is_empty() && l.turns == 10)
    );
    assert!(decision.work.mechanical.is_empty());
    assert_eq!(decision.folded(), 0);
    assert!(decision.work.synthesis.layout.levels.is_empty());
    assert!(decision.work.budget.loops_cost > 0.0);
    // No ceiling never binds either.
    let unbounded = run_with_budget(&wide(), None, None);
    assert!(!unbounded.work.budget.binding);
    assert_eq!(unbounded.work.loops.len(), 77);
}

#[test]
fn tiny_targets_skip_the_survey_and_the_plan() {
    let tree = tree(&[(".", 2)]);
    let decision = run(&tree, &Setup::default(), None);
    assert!(decision.tiny);
    assert_eq!(
        (decision.survey, decision.planning),
        (PassChoice::Skip, PassChoice::Skip)
    );
    assert_eq!(decision.work.loops.len(), 1);
    assert_eq!(decision.work.budget.fixed, 0.0);
}

#[test]
fn an_unchanged_tree_needs_nothing_and_reuses_the_synthesis() {
    let tree = small();
    let setup = Setup {
        states: all_unchanged(&tree),
        saved_survey: true,
        saved_plan: Some(Plan::default()),
        synthesis_current: true,
        ..Setup::default()
    };
    let decision = run(&tree, &setup, None);
    assert_eq!(
        (decision.survey, decision.planning),
        (PassChoice::NotNeeded, PassChoice::NotNeeded)
    );
    assert!(decision.work.loops.is_empty() && decision.work.mechanical.is_empty());
    assert_eq!(decision.freshness.fresh.len(), 4);
    assert!(decision.work.synthesis.reused);
    assert_eq!(decision.work.synthesis.cost, 0.0);
    // Entries changed since the saved synthesis: it is made again.
    let changed = Setup {
        synthesis_current: false,
        ..setup
    };
    assert!(!run(&tree, &changed, None).work.synthesis.reused);
}

#[test]
fn a_resume_reuses_the_saved_survey_and_plan_unless_fresh() {
    let tree = small();
    let shallow_docs = Plan {
        shallow_dirs: docs_as_prose(),
        ..Plan::default()
    };
    let setup = resumed(&tree, shallow_docs.clone());
    let decision = run(&tree, &setup, None);
    assert_eq!(
        (decision.survey, decision.planning),
        (PassChoice::Reuse, PassChoice::Reuse)
    );
    assert_eq!(decision.plan, shallow_docs);
    // docs and the root, which embeds its summary.
    assert_eq!(rels(&decision.applied.order), ["docs", "."]);
    assert_eq!(decision.work.loops[0].turns, 5);
    let fresh = Setup {
        fresh: true,
        ..setup
    };
    let decision = run(&tree, &fresh, None);
    assert_eq!(
        (decision.survey, decision.planning),
        (PassChoice::Run, PassChoice::Run)
    );
    assert_eq!(decision.plan, Plan::default());
}

#[test]
fn the_planners_proposal_is_applied_and_skips_settle() {
    let tree = small();
    let proposal = Plan {
        priority_dirs: vec![PriorityDir {
            path: "src".into(),
            reason: "core".into(),
            suggested_turns: 20,
        }],
        skip_dirs: docs_as_prose(),
        ..Plan::default()
    };
    let decision = run(&tree, &Setup::default(), Some(&proposal));
    assert_eq!(decision.planning, PassChoice::Run);
    assert_eq!(rels(&decision.applied.skipped), ["docs"]);
    assert_eq!(rels(&decision.applied.order), ["src/core", "src", "."]);
    assert_eq!(decision.work.loops[1].turns, 20);
    assert_eq!(decision.work.loops[1].tier, Tier::Priority);
    // The skipped directory is settled: neither looped nor summarised.
    assert!(decision.freshness.fresh.contains(&PathBuf::from("/t/docs")));
    assert!(decision.work.mechanical.is_empty());
}

/// Every directory to work on is covered exactly once: by a loop of its
/// own, folded into one, or mechanically.
fn assert_covered_once(decision: &Decision) {
    let mut covered: Vec<PathBuf> = decision
        .work
        .loops
        .iter()
        .flat_map(|l| l.unit.dirs().cloned())
        .chain(decision.work.mechanical.iter().cloned())
        .collect();
    let count = covered.len();
    covered.sort();
    covered.dedup();
    assert_eq!(covered.len(), count, "a directory covered twice");
    let expected: BTreeSet<PathBuf> = decision.applied.order.iter().cloned().collect();
    assert_eq!(covered.into_iter().collect::<BTreeSet<_>>(), expected);
}

#[test]
fn a_binding_budget_folds_units_and_summarises_the_rest() {
    let tree = wide();
    let full = unbudgeted_cost(&tree);
    // Half of what one loop per directory would cost.
    let budget = full / 2.0;
    let decision = run_with_budget(&tree, Some(budget), None);
    assert!(decision.work.budget.binding);
    assert_covered_once(&decision);
    // Units: each module with its two small subdirectories, the root with
    // the (file-less) packages it can hold.
    assert!(
        decision.work.budget.units < 77,
        "{}",
        decision.work.budget.units
    );
    assert!(decision.folded() > 0);
    assert!(!decision.work.mechanical.is_empty());
    // The target gets its loop first.
    assert!(
        decision
            .work
            .loops
            .iter()
            .any(|l| l.unit.root == Path::new(TARGET))
    );
    // What the loops are expected to cost stays within what the synthesis
    // leaves them: at most a fifth is kept for it, and more than it is
    // projected to cost (the margin covers the sections the loops bought
    // with what the first cut freed).
    let spendable = budget - decision.work.budget.fixed;
    let reserve = decision.work.budget.synthesis_reserve;
    assert!(decision.work.budget.loops_cost <= spendable - reserve + 1e-9);
    assert!(reserve <= spendable * SYNTHESIS_SHARE + 1e-9, "{reserve}");
    assert!(
        reserve >= decision.work.synthesis.cost,
        "{reserve} {:?}",
        decision.work.synthesis
    );
    // What it did not buy stays open to replanning, best first, and its
    // directories are the scan's until then.
    assert!(!decision.work.candidates.is_empty());
    let ranks: Vec<usize> = decision.work.candidates.iter().map(|c| c.rank).collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
    for candidate in &decision.work.candidates {
        for dir in candidate.unit.dirs() {
            assert!(decision.work.mechanical.contains(dir), "{dir:?}");
        }
    }
    assert!(decision.work.budget.loops_affordable >= decision.work.loops.len().saturating_sub(1));
    // Children still come before their parents.
    for (i, planned) in decision.work.loops.iter().enumerate() {
        for later in &decision.work.loops[i + 1..] {
            assert!(!later.unit.root.starts_with(&planned.unit.root));
        }
    }
    // Nothing to spend: every directory summarised from the scan.
    let broke = run_with_budget(&tree, Some(0.0), None);
    assert!(broke.work.loops.is_empty());
    assert_eq!(broke.work.mechanical.len(), 77);
    assert_covered_once(&broke);
}

#[test]
fn under_batch_the_budget_buys_nearly_twice_the_work() {
    let tree = wide();
    let everything = run(
        &tree,
        &Setup {
            budget: None,
            ..Setup::default()
        },
        None,
    );
    let full = everything.work.budget.fixed
        + everything.work.budget.loops_cost
        + everything.work.synthesis.cost;
    let at = |budget: f64, batch: bool| {
        run(
            &tree,
            &Setup {
                budget: Some(budget),
                batch,
                ..Setup::default()
            },
            None,
        )
    };
    for share in [0.2, 0.35, 0.5] {
        let budget = full * share;
        let interactive = at(budget, false);
        let batch = at(budget, true);
        let doubled = at(budget * 2.0, false);
        assert!(interactive.work.budget.binding, "{share}");
        assert!(batch.batch && !interactive.batch);
        // Batch prices are half the catalog's, but a batch's cache writes
        // last an hour (2x the input price, not 1.25x): each loop is
        // expected at a little more than half its cost, so a budget under
        // --batch buys nearly what twice that budget buys interactively.
        assert!(
            batch.work.loops.len() > interactive.work.loops.len(),
            "{share}"
        );
        assert!(
            batch.work.loops.len() <= doubled.work.loops.len(),
            "{share}"
        );
        // (Up to a third of the full cost: past that the batch reaches the
        // tree's dear loops, where more money buys few more. At half, the
        // batch buys 25, the interactive run 20, twice the money all 77.)
        assert!(
            batch.work.budget.loops_affordable * 10
                >= 15 * interactive.work.budget.loops_affordable
                || share > 0.4,
            "{share}: {} vs {} of {}",
            batch.work.budget.loops_affordable,
            interactive.work.budget.loops_affordable,
            everything.work.loops.len()
        );
        for b in &batch.work.loops {
            let Some(d) = doubled.work.loops.iter().find(|d| d.unit == b.unit) else {
                continue;
            };
            let ratio = b.cost * 2.0 / d.cost;
            assert!((1.0..1.3).contains(&ratio), "{share}: {ratio}");
        }
        assert_covered_once(&batch);
    }
    // A little more than half of what everything costs interactively buys
    // everything in batches.
    let batch = at(full * 0.65, true);
    assert!(!batch.work.budget.binding);
    assert_eq!(batch.work.loops.len(), everything.work.loops.len());
    assert!(batch.work.mechanical.is_empty());
}

#[test]
fn the_planners_priority_subtree_is_bought_first() {
    let tree = wide();
    let everything = run_with_budget(&tree, None, None);
    let one_loop = everything
        .work
        .loops
        .iter()
        .map(|l| l.cost)
        .fold(0.0, f64::max);
    let budget = everything.work.budget.fixed + everything.work.synthesis.cost + one_loop * 6.0;
    let proposal = Plan {
        priority_dirs: vec![PriorityDir {
            path: "pkg3".into(),
            reason: "the core".into(),
            suggested_turns: 15,
        }],
        ..Plan::default()
    };
    let decision = run_with_budget(&tree, Some(budget), Some(&proposal));
    assert!(decision.work.budget.binding);
    let looped: Vec<String> = decision
        .work
        .loops
        .iter()
        .map(|l| rel(&l.unit.root))
        .collect();
    assert!(looped.contains(&".".to_string()), "{looped:?}");
    assert!(
        looped
            .iter()
            .filter(|r| *r != ".")
            .all(|r| r.starts_with("pkg3")),
        "{looped:?}"
    );
    assert_covered_once(&decision);
}

#[test]
fn a_small_budget_lays_the_synthesis_out_in_levels() {
    // The root and 40 directories too big to fold: the few loops 30 cents
    // buy (after the survey and the plan, which think) leave most of them
    // mechanical, each its own section.
    let mut spec: Vec<(String, usize)> = vec![(".".into(), 2)];
    spec.extend((0..40).map(|i| (format!("d{i:02}"), 15)));
    let spec: Vec<(&str, usize)> = spec.iter().map(|(r, n)| (r.as_str(), *n)).collect();
    let tree = tree(&spec);
    let decision = run_with_budget(&tree, Some(0.3), None);
    assert!(decision.work.budget.binding);
    assert!(!decision.work.loops.is_empty() && !decision.work.mechanical.is_empty());
    // A call may read at most a twentieth of 30 cents of input: 41 sections
    // need more than one.
    assert!(
        !decision.work.synthesis.layout.levels.is_empty(),
        "{:?}",
        decision.work.synthesis
    );
    assert!(decision.work.synthesis.layout.calls() > 1);
    let roomy = run_with_budget(&tree, None, None);
    assert!(roomy.work.synthesis.layout.levels.is_empty());
}

#[test]
fn mechanical_entries_join_the_synthesis_only_at_the_top_of_their_region() {
    assert!(in_synthesis(false, Some(true)));
    assert!(in_synthesis(false, None));
    assert!(in_synthesis(true, None));
    assert!(in_synthesis(true, Some(false)));
    assert!(!in_synthesis(true, Some(true)));
}

#[test]
fn a_resume_carries_on_with_the_saved_work() {
    let tree = wide();
    let full = unbudgeted_cost(&tree);
    let budget = Some(full / 2.0);
    let first = run_with_budget(&tree, budget, None);
    assert!(first.work.budget.binding && !first.work.resumed);
    // The run stopped after its first loop: that loop's directories are
    // done, the rest is left.
    let done: HashSet<&PathBuf> = first.work.loops[0].unit.dirs().collect();
    let states: HashMap<PathBuf, DirState> = tree
        .dirs
        .iter()
        .map(|d| {
            let state = if done.contains(d) {
                DirState::Unchanged
            } else {
                DirState::Missing
            };
            (d.clone(), state)
        })
        .collect();
    let resumed = Setup {
        states: states.clone(),
        saved_survey: true,
        saved_plan: Some(Plan::default()),
        saved_work: Some(first.saved_work()),
        budget,
        ..Setup::default()
    };
    let second = run(&tree, &resumed, None);
    assert!(second.work.resumed);
    let shape = |loops: &[PlannedLoop]| -> Vec<(Unit, u32)> {
        loops.iter().map(|l| (l.unit.clone(), l.turns)).collect()
    };
    assert_eq!(shape(&second.work.loops), shape(&first.work.loops[1..]));
    // The order of interest holds among what is left.
    let ranks = |loops: &[PlannedLoop]| -> Vec<PathBuf> {
        let mut list: Vec<&PlannedLoop> = loops.iter().collect();
        list.sort_by_key(|l| l.rank);
        list.iter().map(|l| l.unit.root.clone()).collect()
    };
    let mut expected = ranks(&first.work.loops);
    expected.retain(|root| root != &first.work.loops[0].unit.root);
    assert_eq!(ranks(&second.work.loops), expected);
    assert_eq!(second.work.mechanical, first.work.mechanical);
    // Another budget, or --fresh: decided anew.
    let other = Setup {
        budget: Some(full),
        ..resumed
    };
    assert!(!run(&tree, &other, None).work.resumed);
    let fresh = Setup {
        fresh: true,
        states: HashMap::new(),
        budget,
        saved_work: Some(first.saved_work()),
        ..Setup::default()
    };
    assert!(!run(&tree, &fresh, None).work.resumed);
}

#[test]
fn skip_rule_needs_both_thresholds() {
    assert!(should_skip_survey(4, 1));
    assert!(should_skip_survey(0, 0));
    assert!(!should_skip_survey(5, 1));
    assert!(!should_skip_survey(4, 2));
    assert!(!should_skip_survey(100, 30));
}

mod money;
