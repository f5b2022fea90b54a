//! The passes themselves: their order, the tools each may use, what the
//! survey removes, the nudges of silent passes, the synthesis fallback and
//! unknown tools.

use super::*;

#[test]
fn phases_run_in_order_with_each_pass_tools() {
    let env = project().with_mock();
    let out = run(&env, &[]);

    assert_eq!(
        pass_runs(&env),
        [
            (Pass::Survey, 1),
            (Pass::Planning, 1),
            (dir("src/core"), 2),
            (dir("docs"), 2),
            (dir("src"), 2),
            (dir("."), 2),
            (Pass::Synthesis, 1),
        ]
    );
    for (pass, request) in env.passes() {
        assert!(
            request.system_text().contains("## Untrusted data"),
            "{pass:?}"
        );
        let offered = request.tool_names();
        match pass {
            Pass::Survey => assert_eq!(offered, names(&["submit_survey"])),
            Pass::Planning => assert_eq!(offered, names(&["submit_plan"])),
            Pass::Synthesis => {
                assert_eq!(offered, names(&["flag", "submit_report"]))
            }
            Pass::Dir(_) => assert_eq!(offered, scope_names(Toolbox::Dir)),
            Pass::Ask | Pass::Refine => panic!("{pass:?} in a plain run"),
        }
    }

    // The survey sees the triage list: every dir tool but submit_report.
    let survey = &requests_of(&env, &Pass::Survey)[0];
    let triage: Vec<String> = scope_names(Toolbox::Dir)
        .into_iter()
        .filter(|n| n != "submit_report")
        .collect();
    assert!(survey.system_text().contains(&triage.join(", ")));

    // The planner is told the directory count and the budget (10 per dir).
    let planning = requests_of(&env, &Pass::Planning)[0].system_text();
    assert!(planning.contains("\nDirectories in the investigation: 4\n"));
    assert!(planning.contains("together have 40 turns"));

    // Each directory's file summaries and report ended up in the cache.
    let core = canonical(&env).join("src/core");
    let entry = dir_entry(&env, "src/core").expect("src/core entry");
    assert_eq!(
        entry["summary"],
        dir_summary("src/core", &visible_files(&core))
    );
    assert_eq!(entry["completeness"], 0.8);
    let file = cache(&env)
        .read_entry(EntryKind::File, &core.join("engine.rs").to_string_lossy())
        .expect("file entry");
    assert_eq!(file["summary"], file_summary("src/core", "engine.rs"));

    // Synthesis saw all four directory summaries; its brief is the report's.
    let report = stdout(&out);
    assert!(
        report.contains("Scripted brief over 4 directory summaries."),
        "{report}"
    );
    let err = stderr(&out);
    assert_contains_all(
        &err,
        &[
            "[AI] Cache: ",
            "[AI] Survey pass...",
            "[AI] Survey: A scripted test target (confidence 0.90)",
            "[AI] Directories to investigate: 4",
            "[AI] Planning pass...",
            "[AI] Investigating: src/core/ (1/4, 10 turns)",
            "[AI] Synthesis pass...",
            "[AI] Investigation complete.",
        ],
    );
    // The plan's evaluation and the token counts are the full trace's.
    for verbose in ["Plan evaluation", "Total tokens used", "Investigation ID"] {
        assert!(!err.contains(verbose), "{verbose} in\n{err}");
    }
    let traced = stderr(&run(&env, &["-v", "--fresh"]));
    assert_contains_all(
        &traced,
        &[
            "[AI] Investigation ID: ",
            "[AI] Plan evaluation: 8/40 turns used (20% utilization)",
            "[AI] Total tokens used: ",
        ],
    );
    assert!(!err.contains("(resumed)"));
}

#[test]
fn child_summaries_reach_their_parents() {
    let env = project().with_mock();
    run(&env, &[]);
    let target = canonical(&env);
    let src = &requests_of(&env, &dir("src"))[0].prompt_text();
    let core_summary = dir_summary("src/core", &visible_files(&target.join("src/core")));
    assert!(
        src.contains(&format!("- src/core/: {core_summary}")),
        "{src}"
    );
    let root = &requests_of(&env, &dir("."))[0].prompt_text();
    assert!(root.contains("- docs/: Directory docs holds 1 files [guide.md]."));
    assert!(root.contains("- src/: Directory src holds 1 files [main.rs]."));
    let leaf = &requests_of(&env, &dir("docs"))[0].prompt_text();
    assert!(leaf.contains("(none: this is a leaf directory)"));
    // The dir path is the only absolute path in a dir prompt.
    let target_text = target.to_string_lossy();
    assert_eq!(src.matches(target_text.as_ref()).count(), 1, "{src}");
}

#[test]
fn tiny_target_skips_survey_and_planning() {
    let env = TestEnv::new();
    env.file("notes.txt", "hello\n");
    let env = env.with_mock();
    let out = run(&env, &[]);
    assert_eq!(pass_runs(&env), [(dir("."), 2), (Pass::Synthesis, 1)]);
    let err = stderr(&out);
    assert!(err.contains("[AI] Survey skipped — 1 files, 1 dirs (below threshold)."));
    assert!(err.contains("[AI] Survey: Small target — survey skipped. (confidence 0.00)"));
    assert!(err.contains("[AI] Planning skipped (small target)."));
    // The synthetic survey never filters the toolbox.
    let dir_request = &requests_of(&env, &dir("."))[0];
    assert_eq!(dir_request.tool_names(), scope_names(Toolbox::Dir));
}

#[test]
fn confident_survey_removes_skip_tools_but_never_submit_report() {
    let env = project().with_agent(|a| {
        a.submits(Pass::Survey, json!({
            "description": "Docs and a little code", "approach": "read",
            "relevant_tools": ["read_file"], "skip_tools": ["run_command", "submit_report", "nope"],
            "domain_notes": "none", "confidence": 0.9
        }))
    });
    let out = run(&env, &["-v"]);
    let expected: Vec<String> = scope_names(Toolbox::Dir)
        .into_iter()
        .filter(|n| n != "run_command")
        .collect();
    for request in requests_of(&env, &dir("src")) {
        assert_eq!(request.tool_names(), expected);
        assert!(request.prompt_text().contains(
            "Skip tools (already removed from your toolbox): run_command, submit_report, nope"
        ));
    }
    assert!(stderr(&out).contains("[AI] Survey skip_tools: run_command, submit_report, nope"));
}

#[test]
fn unconfident_survey_removes_nothing() {
    let env = project().with_agent(|a| {
        a.submits(
            Pass::Survey,
            json!({
                "description": "Unclear", "approach": "look", "relevant_tools": [],
                "skip_tools": ["run_command"], "domain_notes": "", "confidence": 0.49
            }),
        )
    });
    run(&env, &[]);
    for request in requests_of(&env, &dir("docs")) {
        assert_eq!(request.tool_names(), scope_names(Toolbox::Dir));
    }
}

#[test]
fn silent_survey_and_planning_are_nudged_then_dropped() {
    let env = project().with_agent(|a| a.silent(Pass::Survey).silent(Pass::Planning));
    let out = run(&env, &[]);
    let survey = requests_of(&env, &Pass::Survey);
    assert_eq!(survey.len(), 3);
    assert_eq!(survey[2].last_user_text(), "Call submit_survey, please.");
    let planning = requests_of(&env, &Pass::Planning);
    assert_eq!(planning.len(), 3);
    assert_eq!(planning[1].last_user_text(), "Call submit_plan, please.");
    let err = stderr(&out);
    assert!(err.contains("[AI] Warning: survey ran out of turns."));
    assert!(err.contains("[AI] Survey unavailable — proceeding without it."));
    assert!(err.contains("[AI] Warning: planning ran out of turns."));
    assert!(err.contains("[AI] Planning failed, using defaults."));
    // Without a survey the dir prompt says so; without a plan nothing is saved.
    assert!(
        requests_of(&env, &dir("docs"))[0]
            .prompt_text()
            .contains("(no survey available)")
    );
    assert!(cache(&env).read_json("plan.json").is_none());
}

#[test]
fn synthesis_falls_back_to_cached_summaries() {
    let env = project().with_agent(|a| a.silent(Pass::Synthesis));
    let out = run(&env, &["--json"]);
    let synthesis = requests_of(&env, &Pass::Synthesis);
    assert_eq!(synthesis.len(), 5);
    assert_eq!(
        synthesis[4].last_user_text(),
        "Call submit_report with your analysis, please."
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The root comes first in the fallback.
    let root = dir_summary(".", &visible_files(&canonical(&env)));
    assert_eq!(report["ai_brief"], root.as_str());
    let detailed = report["ai_detailed"].as_str().unwrap();
    assert!(detailed.starts_with(&format!("**./**: {root}")));
    assert!(detailed.contains("**src/core/**: Directory src/core holds 2 files"));
    assert!(stderr(&out).contains("[AI] Warning: synthesis ran out of turns."));
}

#[test]
fn unknown_tools_get_error_results() {
    let env = project().with_agent(|a| {
        a.dir_script("docs", |turn| match turn.turn {
            1 => Reply::tool_use("delete_everything", json!({"path": "."})),
            _ => Reply::tool_use(
                "submit_report",
                json!({"summary": "Docs.", "completeness": 0.5}),
            ),
        })
    });
    run(&env, &[]);
    let docs = requests_of(&env, &dir("docs"));
    assert_eq!(docs.len(), 2);
    let results = docs[1].tool_results();
    assert_eq!(results.len(), 1);
    assert!(results[0].is_error);
    assert!(
        results[0]
            .content
            .contains("no tool named 'delete_everything'")
    );
    assert_eq!(dir_entry(&env, "docs").unwrap()["summary"], "Docs.");
}
