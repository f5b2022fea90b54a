//! Properties of [`apply_plan`] over random trees and random, often
//! nonsensical plans: whatever the planner proposes, the order keeps
//! children before parents, skips are honoured, turn counts stay in range
//! and no directory is lost or duplicated.

use std::collections::HashSet;

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use serde_json::{Value, json};

use super::*;
use crate::ai::rules::discover::sort_leaf_first;

const TARGET: &str = "/w/proj";

fn config() -> Config {
    Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::default()
    }
}

/// Relative directory paths, every ancestor included: names from a small
/// alphabet so paths collide, share prefixes (`a`, `a-b`) and can repeat
/// the target's own name.
fn tree() -> impl Strategy<Value = Vec<String>> {
    let name = prop::sample::select(vec!["a", "b", "a-b", "c.d", "proj", "x"]);
    prop::collection::vec(prop::collection::vec(name, 1..5), 0..12).prop_map(|paths| {
        let mut rels: BTreeSet<String> = BTreeSet::new();
        for parts in paths {
            for end in 1..=parts.len() {
                rels.insert(parts[..end].join("/"));
            }
        }
        rels.into_iter().collect()
    })
}

/// A path the planner might name: a real directory (maybe with a trailing
/// slash), `.`, the target's name, or something that does not exist.
fn named(rels: &[String]) -> BoxedStrategy<String> {
    let fixed = prop::sample::select(vec![
        ".".to_string(),
        "./".to_string(),
        "proj".to_string(),
        "nope".to_string(),
        "a/nope".to_string(),
        "/".to_string(),
        String::new(),
    ]);
    if rels.is_empty() {
        return fixed.boxed();
    }
    let real = (prop::sample::select(rels.to_vec()), any::<bool>())
        .prop_map(|(rel, slash)| if slash { format!("{rel}/") } else { rel });
    prop_oneof![2 => real, 1 => fixed].boxed()
}

/// `suggested_turns` as a planner might write it, or nothing.
fn turns() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        (-50i64..60).prop_map(|n| Some(json!(n))),
        Just(Some(json!(0))),
        Just(Some(json!(1e12))),
        Just(Some(json!(-1e12))),
        Just(Some(json!(u64::MAX))),
        (0.0f64..30.0).prop_map(|f| Some(json!(f))),
        Just(Some(json!("7"))),
        Just(Some(json!("lots"))),
        Just(Some(Value::Null)),
    ]
}

fn entries(rels: &[String], with_turns: bool) -> impl Strategy<Value = Vec<Value>> + use<> {
    let entry = (named(rels), turns()).prop_map(move |(path, turns)| {
        let mut entry = json!({"path": path, "reason": "r"});
        if let (true, Some(turns)) = (with_turns, turns) {
            entry["suggested_turns"] = turns;
        }
        entry
    });
    prop::collection::vec(entry, 0..6)
}

/// A tree, a subset to investigate (as a mask), and a plan as JSON.
fn case() -> impl Strategy<Value = (Vec<String>, Vec<bool>, Value)> {
    tree().prop_flat_map(|rels| {
        let order = prop::sample::select(vec!["leaf-first", "priority-first", "bogus", ""]);
        let plan = (
            entries(&rels, true),
            entries(&rels, false),
            entries(&rels, false),
            order,
        )
            .prop_map(|(priority, shallow, skip, order)| {
                json!({"priority_dirs": priority, "shallow_dirs": shallow,
                       "skip_dirs": skip, "investigation_order": order})
            });
        let mask = prop::collection::vec(any::<bool>(), rels.len() + 1);
        (Just(rels), mask, plan)
    })
}

fn abs(rel: &str) -> PathBuf {
    Path::new(TARGET).join(rel)
}

/// Which discovered directory a plan path names, independently of
/// `relative_lookup`: trailing slashes ignored, `.` is the target, a real
/// relative path wins over the target's own name.
fn resolve(all: &[PathBuf], raw: &str) -> Option<PathBuf> {
    let rel = raw.trim_end_matches('/');
    if rel == "." {
        return Some(PathBuf::from(TARGET));
    }
    if rel.is_empty() {
        return None;
    }
    let candidate = abs(rel);
    if all.contains(&candidate) {
        Some(candidate)
    } else if rel == "proj" {
        Some(PathBuf::from(TARGET))
    } else {
        None
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_plan_keeps_the_order_sound((rels, mask, raw) in case()) {
        let target = Path::new(TARGET);
        let mut all: Vec<PathBuf> = rels.iter().map(|rel| abs(rel)).collect();
        all.push(target.to_path_buf());
        sort_leaf_first(&mut all);
        let to_investigate: Vec<PathBuf> = all
            .iter()
            .zip(&mask)
            .filter(|(_, keep)| **keep)
            .map(|(dir, _)| dir.clone())
            .collect();
        let plan = Plan::from_value(&raw);
        let applied = apply_plan(&all, &to_investigate, &plan, target);

        // No duplicates, and only directories that were to be investigated.
        let ordered: HashSet<&PathBuf> = applied.order.iter().collect();
        prop_assert_eq!(ordered.len(), applied.order.len());
        let wanted: HashSet<&PathBuf> = to_investigate.iter().collect();
        prop_assert!(ordered.is_subset(&wanted));

        // Children before parents.
        for (i, earlier) in applied.order.iter().enumerate() {
            for later in &applied.order[i + 1..] {
                prop_assert!(
                    !later.starts_with(earlier),
                    "{} comes before its descendant {}", earlier.display(), later.display()
                );
            }
        }

        // Skipped directories never run, and every skip named is honoured.
        let skip: HashSet<PathBuf> = plan
            .skip_dirs
            .iter()
            .filter_map(|entry| resolve(&all, &entry.path))
            .collect();
        for dir in &applied.order {
            prop_assert!(!skip.contains(dir), "skipped {} was ordered", dir.display());
        }
        let skipped: HashSet<&PathBuf> = applied.skipped.iter().collect();
        prop_assert_eq!(skipped.len(), applied.skipped.len());
        let expected_skipped: HashSet<&PathBuf> =
            to_investigate.iter().filter(|dir| skip.contains(*dir)).collect();
        prop_assert_eq!(&skipped, &expected_skipped);

        // Nothing is lost: every directory is ordered or skipped, not both.
        prop_assert!(ordered.is_disjoint(&skipped));
        prop_assert_eq!(ordered.len() + skipped.len(), to_investigate.len());

        // Turn counts are always usable.
        prop_assert_eq!(applied.turns.len(), applied.order.len());
        for dir in &applied.order {
            let turns = applied.turns_for(dir);
            prop_assert!((1..=MAX_TURNS_CEILING).contains(&turns), "{} turns", turns);
        }

        // Leaf-first (anything but priority-first) keeps discovery's order.
        if plan.investigation_order == InvestigationOrder::LeafFirst {
            let kept: Vec<PathBuf> = to_investigate
                .iter()
                .filter(|dir| !skip.contains(*dir))
                .cloned()
                .collect();
            prop_assert_eq!(&applied.order, &kept);
        }
    }
}

/// [`children_first`] by its definition, the slow way: at each step, the
/// earliest directory none of whose listed descendants is still waiting.
fn children_first_by_definition(preferred: &[PathBuf]) -> Vec<PathBuf> {
    let mut left: Vec<&PathBuf> = preferred.iter().collect();
    let mut order = Vec::new();
    while !left.is_empty() {
        let next = (0..left.len())
            .find(|&i| {
                !left
                    .iter()
                    .any(|other| other != &left[i] && other.starts_with(left[i]))
            })
            .unwrap_or(0);
        order.push(left.remove(next).clone());
    }
    order
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn children_first_is_its_definition(
        (rels, order) in tree().prop_flat_map(|rels| {
            let n = rels.len();
            (Just(rels), Just((0..=n).collect::<Vec<usize>>()).prop_shuffle())
        }),
        keep in prop::collection::vec(any::<bool>(), 13..=13),
    ) {
        // Some of the directories (the target included), in any order.
        let mut all: Vec<PathBuf> = rels.iter().map(|rel| abs(rel)).collect();
        all.push(PathBuf::from(TARGET));
        let listed: Vec<PathBuf> = order
            .iter()
            .enumerate()
            .filter(|(i, _)| keep[i % keep.len()])
            .map(|(_, &i)| all[i].clone())
            .collect();
        prop_assert_eq!(children_first(&listed), children_first_by_definition(&listed));
    }
}
