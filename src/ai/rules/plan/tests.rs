use super::*;
use serde_json::json;

const T: &str = "/work/proj";

fn p(rel: &str) -> PathBuf {
    if rel == "." {
        PathBuf::from(T)
    } else {
        Path::new(T).join(rel)
    }
}

/// a/x, a/y, a, b, c, root: leaf-first, as discovery returns them.
fn all_dirs() -> Vec<PathBuf> {
    ["a/x", "a/y", "a", "b", "c", "."]
        .into_iter()
        .map(p)
        .collect()
}

fn plan(value: Value) -> Plan {
    Plan::from_value(&value)
}

fn apply(plan: &Plan) -> AppliedPlan {
    let all = all_dirs();
    apply_plan(&all, &all, plan, Path::new(T))
}

fn rels(order: &[PathBuf]) -> Vec<String> {
    order
        .iter()
        .map(|d| match d.strip_prefix(T).unwrap().to_str().unwrap() {
            "" => ".".to_string(),
            rel => rel.to_string(),
        })
        .collect()
}

#[test]
fn default_plan_keeps_order_and_default_turns() {
    let applied = apply(&Plan::default());
    assert_eq!(applied.order, all_dirs());
    assert!(
        applied
            .order
            .iter()
            .all(|d| applied.turns_for(d) == DEFAULT_TURNS)
    );
    assert!(applied.unmatched.is_empty() && applied.skipped.is_empty());
    assert_eq!(plan_summary_line(&applied), None);
}

#[test]
fn skip_priority_and_shallow_turns() {
    let applied = apply(&plan(json!({
        "skip_dirs": [{"path": "b", "reason": "vendored"}],
        "priority_dirs": [
            {"path": "a", "reason": "core", "suggested_turns": 18},
            {"path": "a/x", "reason": "big", "suggested_turns": 50}
        ],
        "shallow_dirs": [{"path": "c", "reason": "docs"}]
    })));
    assert_eq!(rels(&applied.order), ["a/x", "a/y", "a", "c", "."]);
    assert_eq!(applied.skipped, [p("b")]);
    assert_eq!(applied.turns_for(&p("a")), 18);
    assert_eq!(applied.turns_for(&p("a/x")), MAX_TURNS_CEILING);
    assert_eq!(applied.turns_for(&p("c")), SHALLOW_TURNS);
    assert_eq!(applied.turns_for(&p("a/y")), DEFAULT_TURNS);
    assert_eq!(applied.tier_of(&p("c")), Tier::Shallow);
    assert_eq!(applied.tier_of(&p("a")), Tier::Priority);
    assert_eq!(
        plan_summary_line(&applied).unwrap(),
        "Plan: 2 priority, 1 skipped, 3 default/shallow"
    );
}

#[test]
fn junk_suggested_turns_are_normalized() {
    assert_eq!(normalize_turns(None), PRIORITY_FALLBACK_TURNS);
    assert_eq!(normalize_turns(Some(&json!(null))), PRIORITY_FALLBACK_TURNS);
    assert_eq!(
        normalize_turns(Some(&json!("lots"))),
        PRIORITY_FALLBACK_TURNS
    );
    assert_eq!(normalize_turns(Some(&json!(0))), 1);
    assert_eq!(normalize_turns(Some(&json!(-4))), 1);
    assert_eq!(normalize_turns(Some(&json!(17.6))), 18);
    assert_eq!(normalize_turns(Some(&json!("16"))), 16);
    // The proposal keeps its size; applying it caps it.
    assert_eq!(normalize_turns(Some(&json!(1000))), 1000);
    assert_eq!(normalize_turns(Some(&json!(1e12))), u32::MAX);
    let applied = apply(&plan(json!({
        "priority_dirs": [{"path": "a"}, {"path": "b", "suggested_turns": 0},
                          {"path": "c", "suggested_turns": 40}]
    })));
    assert_eq!(applied.turns_for(&p("a")), PRIORITY_FALLBACK_TURNS);
    assert_eq!(applied.turns_for(&p("b")), 1);
    assert_eq!(applied.turns_for(&p("c")), MAX_TURNS_CEILING);
}

/// `plan.json` keeps the proposal as the planner made it, with the
/// original's defaults for what it left out; reading it back gives the same
/// plan as the proposal itself.
#[test]
fn the_saved_proposal_is_the_planners_own() {
    let input = json!({
        "priority_dirs": [{"path": "a", "reason": "core", "suggested_turns": 40, "extra": 1}],
        "skip_dirs": null,
        "investigation_order": "priority-first",
        "unasked": "dropped"
    });
    let document = proposal_document(&input);
    assert_eq!(
        document,
        json!({
            "priority_dirs": [{"path": "a", "reason": "core", "suggested_turns": 40, "extra": 1}],
            "shallow_dirs": [],
            "skip_dirs": [],
            "investigation_order": "priority-first",
            "notes": ""
        })
    );
    assert_eq!(Plan::from_value(&document), Plan::from_value(&input));
    assert_eq!(
        Plan::from_value(&document).priority_dirs[0].suggested_turns,
        40
    );
    assert_eq!(
        apply(&Plan::from_value(&document)).turns_for(&p("a")),
        MAX_TURNS_CEILING
    );
    assert_eq!(
        proposal_document(&json!({}))["investigation_order"],
        "leaf-first"
    );
}

#[test]
fn malformed_plan_values_take_defaults() {
    let normalized = plan(json!({
        "priority_dirs": "everything",
        "shallow_dirs": [{"reason": "no path"}, {"path": 3}, {"path": "c"}],
        "investigation_order": "random",
        "notes": 12
    }));
    assert_eq!(
        normalized,
        Plan {
            shallow_dirs: vec![TierDir {
                path: "c".into(),
                reason: String::new()
            }],
            ..Plan::default()
        }
    );
    assert_eq!(plan(json!(null)), Plan::default());
}

#[test]
fn plan_round_trips_through_json_with_original_keys() {
    let original = plan(json!({
        "priority_dirs": [{"path": "a", "reason": "core", "suggested_turns": 18}],
        "shallow_dirs": [{"path": "c", "reason": "docs"}],
        "skip_dirs": [],
        "investigation_order": "priority-first",
        "notes": "n"
    }));
    let value = original.to_value();
    assert_eq!(
        value,
        json!({
            "priority_dirs": [{"path": "a", "reason": "core", "suggested_turns": 18}],
            "shallow_dirs": [{"path": "c", "reason": "docs"}],
            "skip_dirs": [],
            "investigation_order": "priority-first",
            "notes": "n"
        })
    );
    assert_eq!(Plan::from_value(&value), original);
}

#[test]
fn priority_first_orders_bands_and_keeps_leaf_first_within() {
    let applied = apply(&plan(json!({
        "investigation_order": "priority-first",
        "priority_dirs": [{"path": "c", "reason": "entry", "suggested_turns": 15}],
        "shallow_dirs": [{"path": "b", "reason": "tests"}, {"path": "a/x", "reason": "fixtures"}]
    })));
    // priority band: c; default band: a/y, a (after its shallow child a/x), .;
    // shallow band: a/x, b — but a parent never precedes a listed child.
    assert_eq!(rels(&applied.order), ["c", "a/y", "a/x", "a", "b", "."]);
}

#[test]
fn priority_parent_waits_for_its_default_children() {
    let applied = apply(&plan(json!({
        "investigation_order": "priority-first",
        "priority_dirs": [{"path": "a", "reason": "core", "suggested_turns": 20}]
    })));
    assert_eq!(rels(&applied.order), ["a/x", "a/y", "a", "b", "c", "."]);
    let applied = apply(&plan(json!({
        "investigation_order": "priority-first",
        "priority_dirs": [
            {"path": "a/x", "reason": "deep", "suggested_turns": 15},
            {"path": "a", "reason": "parent", "suggested_turns": 15}
        ]
    })));
    let order = rels(&applied.order);
    assert!(order.iter().position(|d| d == "a/x") < order.iter().position(|d| d == "a"));
    assert_eq!(order, ["a/x", "a/y", "a", "b", "c", "."]);
}

#[test]
fn every_order_puts_children_before_parents() {
    let all = all_dirs();
    for order in ["leaf-first", "priority-first"] {
        for tiered in ["a/x", "a/y", "a", "b", "c", "."] {
            for key in ["priority_dirs", "shallow_dirs"] {
                let applied = apply(&plan(json!({
                    "investigation_order": order,
                    key: [{"path": tiered, "reason": "r", "suggested_turns": 20}]
                })));
                assert_eq!(applied.order.len(), all.len());
                for (i, dir) in applied.order.iter().enumerate() {
                    for later in &applied.order[i + 1..] {
                        assert!(
                            !later.starts_with(dir) || later == dir,
                            "{order} {key} {tiered}: {dir:?} before its child {later:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn root_matches_dot_and_its_name() {
    let by_dot = apply(&plan(json!({
        "priority_dirs": [{"path": ".", "reason": "root", "suggested_turns": 16}]
    })));
    assert_eq!(by_dot.turns_for(&p(".")), 16);
    let by_name = apply(&plan(json!({
        "priority_dirs": [{"path": "proj", "reason": "root", "suggested_turns": 18}]
    })));
    assert_eq!(by_name.turns_for(&p(".")), 18);
    assert!(by_name.unmatched.is_empty());
    let trailing_slash = apply(&plan(
        json!({"shallow_dirs": [{"path": "a/", "reason": ""}]}),
    ));
    assert_eq!(trailing_slash.turns_for(&p("a")), SHALLOW_TURNS);
}

#[test]
fn unknown_paths_are_collected_for_one_warning() {
    let applied = apply(&plan(json!({
        "skip_dirs": [{"path": "nonexistent", "reason": "gone"}],
        "priority_dirs": [{"path": "also_missing", "reason": "?", "suggested_turns": 20}],
        "shallow_dirs": [{"path": "b", "reason": "ok"}]
    })));
    assert_eq!(applied.order.len(), all_dirs().len());
    assert_eq!(applied.unmatched, ["nonexistent", "also_missing"]);
    assert_eq!(
        unmatched_warning(&applied).unwrap(),
        "Warning: plan referenced unknown dirs: nonexistent, also_missing"
    );
    assert_eq!(unmatched_warning(&apply(&Plan::default())), None);
}

#[test]
fn only_dirs_to_investigate_are_ordered() {
    let all = all_dirs();
    let subset = vec![p("a/y"), p("b")];
    let applied = apply_plan(
        &all,
        &subset,
        &plan(json!({"priority_dirs": [{"path": "a", "reason": "cached", "suggested_turns": 20}]})),
        Path::new(T),
    );
    // `a` is cached: it matches (no warning) but is not investigated.
    assert_eq!(applied.order, subset);
    assert!(applied.unmatched.is_empty());
    assert_eq!(plan_summary_line(&applied), None);
}

#[test]
fn skip_wins_and_shallow_overrides_priority() {
    let applied = apply(&plan(json!({
        "investigation_order": "priority-first",
        "priority_dirs": [
            {"path": "b", "reason": "x", "suggested_turns": 20},
            {"path": "c", "reason": "x", "suggested_turns": 20}
        ],
        "shallow_dirs": [{"path": "c", "reason": "y"}],
        "skip_dirs": [{"path": "b", "reason": "z"}]
    })));
    assert!(!applied.order.contains(&p("b")));
    assert_eq!(applied.tier_of(&p("c")), Tier::Shallow);
    assert_eq!(applied.turns_for(&p("c")), SHALLOW_TURNS);
    assert_eq!(applied.order.last(), Some(&p(".")));
}

#[test]
fn children_first_is_stable_when_already_valid() {
    let dirs = all_dirs();
    assert_eq!(children_first(&dirs), dirs);
    let reversed: Vec<PathBuf> = dirs.iter().rev().cloned().collect();
    assert_eq!(
        rels(&children_first(&reversed)),
        ["c", "b", "a/y", "a/x", "a", "."]
    );
    // `/a/b-c` is not below `/a/b`.
    let siblings = vec![PathBuf::from("/a/b"), PathBuf::from("/a/b-c")];
    assert_eq!(children_first(&siblings), siblings);
}

#[test]
fn python_rounding() {
    assert_eq!(round2(12.0 / 18.0), 0.67);
    assert_eq!(round2(0.125), 0.12);
    assert_eq!(round2(0.375), 0.38);
    assert_eq!(round2(1.0), 1.0);
    assert_eq!(round2(2.0 / 3.0), 0.67);
}

fn record(dir: &str, tier: Tier, allocated: u32, used: u32) -> Utilization {
    Utilization {
        dir: dir.to_string(),
        tier,
        turns: TurnUse {
            allocated,
            borrowed: 0,
            used,
        },
        completeness: None,
        confidence: None,
    }
}

#[test]
fn evaluation_schema_and_rounding() {
    let records = vec![
        Utilization {
            completeness: Some(0.85),
            confidence: Some(Some(0.9)),
            ..record("src", Tier::Priority, 18, 12)
        },
        Utilization {
            completeness: Some(0.7),
            confidence: Some(None),
            turns: TurnUse {
                allocated: 5,
                borrowed: 2,
                used: 3,
            },
            ..record("docs", Tier::Shallow, 0, 0)
        },
        record("x", Tier::Default, 0, 0),
    ];
    let typed = plan_evaluation(
        InvestigationOrder::LeafFirst,
        &records,
        "2026-01-01T00:00:00Z",
    );
    let evaluation = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        evaluation,
        json!({
            "plan_order": "leaf-first",
            "total_dirs_investigated": 3,
            "total_turns_allocated": 23,
            "total_turns_used": 15,
            "overall_utilization": 0.65,
            "per_directory": [
                {"dir": "src", "planned_tier": "priority", "turns_allocated": 18,
                 "turns_borrowed": 0, "turns_used": 12, "utilization": 0.67, "completeness": 0.85, "confidence": 0.9},
                {"dir": "docs", "planned_tier": "shallow", "turns_allocated": 5,
                 "turns_borrowed": 2, "turns_used": 3, "utilization": 0.6, "completeness": 0.7, "confidence": null},
                {"dir": "x", "planned_tier": "default", "turns_allocated": 0,
                 "turns_borrowed": 0, "turns_used": 0, "utilization": 0}
            ],
            "evaluated_at": "2026-01-01T00:00:00Z"
        })
    );
    // Zero allocations are the integer 0, as the original writes them.
    assert_eq!(
        evaluation["per_directory"][2]["utilization"].to_string(),
        "0"
    );
    assert_eq!(
        utilization_line(&typed),
        "Plan evaluation: 15/23 turns used (65% utilization)"
    );
}

#[test]
fn empty_evaluation() {
    let typed = plan_evaluation(InvestigationOrder::PriorityFirst, &[], "t");
    let evaluation = serde_json::to_value(&typed).unwrap();
    assert_eq!(evaluation["total_dirs_investigated"], 0);
    assert_eq!(evaluation["overall_utilization"].to_string(), "0");
    assert_eq!(evaluation["plan_order"], "priority-first");
    assert_eq!(
        utilization_line(&typed),
        "Plan evaluation: 0/0 turns used (0% utilization)"
    );
}
