//! The plan's turn tiers and band order, and how a loop ends on its turn
//! limit or the context budget (partial entries, borrowing from the pool).

use super::*;

/// src/core, docs, src, tests, vendor and the root.
fn tiered_project() -> TestEnv {
    let env = project();
    env.file("tests/t.rs", "#[test] fn t() {}\n")
        .file("vendor/lib.js", "var x;\n");
    env
}

#[test]
fn plan_tiers_turns_and_band_order_keep_children_first() {
    let env = tiered_project().with_agent(|a| {
        a.submits(Pass::Planning, json!({
            "priority_dirs": [{"path": "src", "reason": "core", "suggested_turns": 30}],
            "shallow_dirs": [{"path": "docs", "reason": "prose"}],
            "skip_dirs": [{"path": "vendor", "reason": "third party"}, {"path": "ghost", "reason": "?"}],
            "investigation_order": "priority-first",
            "notes": "Look at the engine."
        }))
    });
    let out = run(&env, &["-v"]);
    let dirs: Vec<Pass> = pass_runs(&env)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| matches!(p, Pass::Dir(_)))
        .collect();
    // Priority band (src) waits for its default-tier child src/core.
    assert_eq!(
        dirs,
        [
            dir("src/core"),
            dir("src"),
            dir("tests"),
            dir("docs"),
            dir(".")
        ]
    );
    let turns = |rel: &str| turns_in_prompt(&requests_of(&env, &dir(rel))[0]);
    assert_eq!(turns("src"), 25);
    assert_eq!(turns("docs"), 5);
    assert_eq!(turns("src/core"), 10);
    assert_eq!(turns("."), 10);
    assert!(requests_of(&env, &dir("vendor")).is_empty());
    assert!(dir_entry(&env, "vendor").is_none());

    let err = stderr(&out);
    assert!(err.contains("[AI] Warning: plan referenced unknown dirs: ghost"));
    assert_eq!(err.matches("unknown dirs").count(), 1);
    assert!(err.contains("[AI] Plan: 1 priority, 1 skipped, 4 default/shallow"));
    assert!(err.contains("[AI] Plan notes: Look at the engine."));
    assert!(err.contains("[AI] Investigating: src/ (2/5, 25 turns)"));

    let evaluation = cache(&env).read_json("plan_evaluation.json").unwrap();
    assert_eq!(evaluation["plan_order"], "priority-first");
    assert_eq!(evaluation["total_dirs_investigated"], 5);
    // meta.json counts as the original does: the five investigated and no
    // cached one (the skipped vendor/ is neither).
    let meta = cache(&env).read_json("meta.json").unwrap();
    assert_eq!(meta["directories_investigated"], 5);
    assert_eq!(evaluation["total_turns_allocated"], 60);
    assert_eq!(evaluation["total_turns_used"], 10);
    assert_eq!(evaluation["overall_utilization"], 0.17);
    let src = &evaluation["per_directory"][1];
    assert_eq!(
        *src,
        json!({"dir": "src", "planned_tier": "priority", "turns_allocated": 25,
               "turns_borrowed": 0, "turns_used": 2, "utilization": 0.08, "completeness": 0.8, "confidence": null})
    );
    assert_eq!(evaluation["per_directory"][3]["planned_tier"], "shallow");
    let root_name = canonical(&env)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(evaluation["per_directory"][4]["dir"], root_name.as_str());

    // plan.json keeps the proposal as it came; the cap of 25 is in the
    // applied plan (the prompt, and turns_allocated above).
    let plan = cache(&env).read_json("plan.json").unwrap();
    assert_eq!(plan["priority_dirs"][0]["suggested_turns"], 30);
    assert_eq!(plan["investigation_order"], "priority-first");
    assert_eq!(
        plan["skip_dirs"][1],
        json!({"path": "ghost", "reason": "?"})
    );
}

#[test]
fn budget_breach_flushes_a_partial_entry() {
    let big = PAST_THE_CONTEXT_BUDGET;
    let env = project().with_agent(|a| a.usage(dir("src/core"), big));
    let out = run(&env, &[]);
    // One call (which cached the files), then the budget check stopped it.
    assert_eq!(requests_of(&env, &dir("src/core")).len(), 1);
    let entry = dir_entry(&env, "src/core").expect("partial entry");
    assert_eq!(entry["partial"], true);
    assert_eq!(entry["partial_reason"], "context budget reached");
    assert_eq!(
        entry["summary"],
        format!(
            "{} {}",
            file_summary("src/core", "engine.rs"),
            file_summary("src/core", "model.rs")
        )
    );
    assert!(stderr(&out).contains("[AI] [src/core] Context budget reached — exiting early (context size 151,000 > 140,000 budget"));
    // The parent still gets the partial summary.
    let src = requests_of(&env, &dir("src"))[0].prompt_text();
    assert!(src.contains("- src/core/: File engine.rs of directory src/core."));
}

#[test]
fn budget_breach_before_any_file_writes_the_stub() {
    let big = Usage {
        input_tokens: 10,
        output_tokens: 5,
        cache_creation_input_tokens: 140_000,
        cache_read_input_tokens: 0,
        cache_creation_1h_input_tokens: None,
    };
    let env = project().with_agent(|a| {
        a.usage(dir("docs"), big)
            .dir_script("docs", |_| Reply::text("Step 1: looking around."))
    });
    run(&env, &[]);
    assert_eq!(requests_of(&env, &dir("docs")).len(), 1);
    let entry = dir_entry(&env, "docs").unwrap();
    assert_eq!(entry["partial"], true);
    assert_eq!(
        entry["partial_reason"],
        "context budget reached before files processed"
    );
}

/// A silent loop is nudged every turn; past its allocation it borrows what
/// the other loops left in the pool, then stops at the turn limit with a
/// partial entry, so a resume does not pay for it again.
#[test]
fn turn_limit_nudges_borrows_then_writes_a_partial_entry() {
    let env = project().with_agent(|a| {
        a.submits(Pass::Planning, docs_shallow_plan())
            .stalling_dir("docs")
    });
    let out = run(&env, &[]);
    // 4 directories make a pool of 40 turns; the plan allocates 5 + 3 x 10,
    // and src/core (first in band order) submits in 2 of its 10. So docs
    // may borrow 5 + 8 = 13 turns past its 5.
    let docs = requests_of(&env, &dir("docs"));
    assert_eq!(docs.len(), 18);
    for request in &docs[2..] {
        assert!(
            request
                .last_user_text()
                .starts_with("Call submit_report with your summary, please."),
            "{}",
            request.last_user_text()
        );
    }
    assert!(
        docs.last()
            .unwrap()
            .last_user_text()
            .contains("1 turn left"),
        "the last turn is announced: {}",
        docs.last().unwrap().last_user_text()
    );
    assert!(stderr(&out).contains("[AI] [docs] Warning: max turns reached for docs"));
    let entry = dir_entry(&env, "docs").expect("a partial entry");
    assert_eq!(entry["partial"], true);
    assert_eq!(entry["partial_reason"], "turn limit reached");
    assert_eq!(entry["summary"], file_summary("docs", "guide.md"));

    let docs_eval = evaluation_of(&env, "docs");
    assert_eq!(docs_eval["turns_allocated"], 5);
    assert_eq!(docs_eval["turns_used"], 18);
    assert_eq!(docs_eval["turns_borrowed"], 13);

    let before = env.server.request_count();
    let json_run = run(&env, &["--json"]);
    assert_eq!(env.server.request_count(), before, "nothing left to do");
    let report: Value = serde_json::from_slice(&json_run.stdout).unwrap();
    assert_eq!(report["investigation"]["directories_remaining"], 0);
    assert_eq!(report["investigation"]["directories_cached"], 4);
}

/// A loop whose last allotted turn passes the context budget ends on the
/// budget: it does not borrow a turn it could not use.
#[test]
fn the_budget_is_checked_before_borrowing() {
    let big = PAST_THE_CONTEXT_BUDGET;
    let env = project().with_agent(|a| {
        a.submits(Pass::Planning, docs_shallow_plan())
            .dir_script("docs", move |turn| {
                let reply = Reply::text("Still reading.");
                if turn.turn == 5 {
                    reply.with_usage(big)
                } else {
                    reply
                }
            })
    });
    run(&env, &[]);
    assert_eq!(requests_of(&env, &dir("docs")).len(), 5);
    let entry = dir_entry(&env, "docs").unwrap();
    assert_eq!(
        entry["partial_reason"],
        "context budget reached before files processed"
    );
    let docs = evaluation_of(&env, "docs");
    assert_eq!(
        (docs["turns_used"].clone(), docs["turns_borrowed"].clone()),
        (json!(5), json!(0))
    );
}
