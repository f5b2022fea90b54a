//! End-to-end runs of the real binary against the scripted mock Messages API:
//! the investigation pipeline's phases, passes and their effects on the cache
//! and the report.

use crate::support;

use std::path::PathBuf;
use std::process::Output;

use luminos::ai::api::Usage;
use luminos::ai::tools::{self, Toolbox};
use luminos::cache::{Cache, CacheRoot, EntryKind};
use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{
    AgentEnv, PAST_THE_CONTEXT_BUDGET, Pass, dir_summary, file_summary, visible_files,
};
use support::mock::{RecordedRequest, Reply};
use support::output::{
    AI_KEYS, SCAN_KEYS, assert_contains_all, fields, item_where, lines_where, stderr, stdout,
};

/// A small project: 6 files in src/core, src, docs and the root.
fn project() -> TestEnv {
    TestEnv::with_small_project()
}

/// Runs luminos with one dir loop at a time, the original's order, so the
/// recorded requests of each loop are contiguous.
fn run(env: &TestEnv, extra: &[&str]) -> Output {
    env.run_ok(&[&["--jobs=1"], extra].concat())
}

fn canonical(env: &TestEnv) -> PathBuf {
    std::fs::canonicalize(env.target()).unwrap()
}

/// The investigation cache of `env`'s target (the current investigation).
fn cache(env: &TestEnv) -> Cache {
    let root = CacheRoot::open(env.cache()).unwrap();
    let id = root.investigation_id(&canonical(env), false).unwrap();
    assert!(!id.is_new, "no investigation was recorded");
    Cache::open(&root, &id.id, &canonical(env)).unwrap()
}

fn dir_entry(env: &TestEnv, rel: &str) -> Option<Value> {
    let path = canonical(env).join(rel);
    cache(env).read_entry(EntryKind::Dir, &path.to_string_lossy())
}

/// The `plan_evaluation.json` record of the directory `rel`.
fn evaluation_of(env: &TestEnv, rel: &str) -> Value {
    let evaluation = cache(env).read_json("plan_evaluation.json").unwrap();
    item_where(&evaluation["per_directory"], "dir", rel).clone()
}

/// The passes in request order, consecutive requests of one pass merged,
/// with how many requests each made.
fn pass_runs(env: &AgentEnv) -> Vec<(Pass, usize)> {
    let mut runs: Vec<(Pass, usize)> = Vec::new();
    for (pass, _) in env.passes() {
        match runs.last_mut() {
            Some((last, n)) if *last == pass => *n += 1,
            _ => runs.push((pass, 1)),
        }
    }
    runs
}

fn requests_of(env: &AgentEnv, pass: &Pass) -> Vec<RecordedRequest> {
    env.requests_of(pass)
}

/// A plan that only makes docs shallow (5 turns), leaf-first.
fn docs_shallow_plan() -> Value {
    json!({
        "priority_dirs": [], "skip_dirs": [], "notes": "",
        "shallow_dirs": [{"path": "docs", "reason": "prose"}],
        "investigation_order": "leaf-first"
    })
}

/// The passes of the requests from index `from` on.
fn passes_since(env: &AgentEnv, from: usize) -> Vec<Pass> {
    env.passes()
        .into_iter()
        .skip(from)
        .map(|(p, _)| p)
        .collect()
}

fn dir(rel: &str) -> Pass {
    Pass::Dir(rel.to_string())
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn scope_names(scope: Toolbox) -> Vec<String> {
    tools::names(scope)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// "Turns available: N" from a dir prompt.
fn turns_in_prompt(request: &RecordedRequest) -> u32 {
    let system = request.prompt_text();
    let at = system
        .find("\nTurns available: ")
        .expect("turn count in dir prompt");
    system[at + "\nTurns available: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

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
                assert_eq!(
                    offered,
                    names(&["read_cache", "list_cache", "flag", "submit_report"])
                )
            }
            Pass::Dir(_) => assert_eq!(offered, scope_names(Toolbox::Dir)),
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
            "[AI] Investigation ID: ",
            "[AI] Survey pass...",
            "[AI] Survey: A scripted test target (confidence 0.90)",
            "[AI] Directories to investigate: 4",
            "[AI] Planning pass...",
            "[AI] Investigating: src/core/ (1/4, 10 turns)",
            "[AI] Plan evaluation: 8/40 turns used (20% utilization)",
            "[AI] Synthesis pass...",
            "[AI] Total tokens used: ",
            "[AI] Investigation complete.",
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
    let out = run(&env, &[]);
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
    let out = run(&env, &[]);
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

/// An entry lost to an interrupted run is investigated again, with the
/// saved plan's turns and the saved survey; its ancestors follow because they
/// embed its summary, and the rest is skipped.
#[test]
fn resume_skips_cached_dirs_and_reuses_the_survey_and_plan() {
    let env = project().with_agent(|a| a.submits(Pass::Planning, docs_shallow_plan()));
    run(&env, &[]);
    let first = env.server.request_count();
    let docs = canonical(&env).join("docs");
    cache(&env)
        .remove_entry(EntryKind::Dir, &docs.to_string_lossy())
        .unwrap();

    env.set_agent(|a| a);
    let out = run(&env, &[]);
    let new_passes = passes_since(&env, first);
    assert!(!new_passes.contains(&Pass::Survey));
    assert!(!new_passes.contains(&Pass::Planning));
    assert_eq!(dirs_investigated(&env, first), ["docs", "."]);
    assert_eq!(new_passes.last(), Some(&Pass::Synthesis));
    let docs_requests = requests_of(&env, &dir("docs"));
    assert_eq!(turns_in_prompt(docs_requests.last().unwrap()), 5);
    let err = stderr(&out);
    assert!(err.contains(" (resumed)"), "{err}");
    assert!(err.contains("[AI] Skipping (cached): src/core/"), "{err}");
    assert!(err.contains("[AI] Directories cached: 2"), "{err}");
    assert!(err.contains("[AI] Directories to investigate: 2"), "{err}");
    assert!(err.contains("[AI] Plan loaded from cache."), "{err}");
    assert!(dir_entry(&env, "docs").is_some());
}

#[test]
fn fresh_starts_over() {
    let env = project().with_mock();
    run(&env, &[]);
    let first_id = cache(&env).id().to_string();
    let before = env.server.request_count();
    let out = run(&env, &["--fresh"]);
    assert_ne!(cache(&env).id(), first_id);
    let new_passes = passes_since(&env, before);
    assert!(new_passes.contains(&Pass::Planning));
    assert_eq!(
        new_passes
            .iter()
            .filter(|p| matches!(p, Pass::Dir(_)))
            .count(),
        8
    );
    let err = stderr(&out);
    assert!(!err.contains("(resumed)"));
    assert!(!err.contains("Skipping (cached)"));
}

#[test]
fn flags_are_sorted_in_the_report() {
    let env = project().with_agent(|a| {
        a.flag("docs", "docs/guide.md", "info", "A guide.")
            .flag("src", "src/main.rs", "critical", "Deletes the disk.")
            .flag("src/core", "src/core/model.rs", "concern", "No tests.")
    });
    let out = run(&env, &[]);
    let report = stdout(&out);
    let at = |needle: &str| {
        report
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} in {report}"))
    };
    assert!(at("Deletes the disk.") < at("No tests."));
    assert!(at("No tests.") < at("A guide."));
    let json_out = run(&env, &["--json"]);
    let parsed: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let severities = fields(&parsed["flags"], "severity");
    // The JSON keeps the order the flags were raised in, as the original
    // does: src/core, docs, then src at --jobs 1.
    assert_eq!(severities, ["concern", "info", "critical"]);
}

#[test]
fn json_report_carries_every_key() {
    let env = project().with_mock();
    let out = run(&env, &["--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    for key in SCAN_KEYS.iter().chain(&AI_KEYS).chain(&["investigation"]) {
        assert!(report.get(key).is_some(), "missing {key}");
    }
    assert_eq!(
        report["ai_brief"],
        "Scripted brief over 4 directory summaries."
    );
    let summary = &report["investigation"];
    assert_eq!(summary["id"], cache(&env).id());
    assert_eq!(summary["directories_investigated"], 4);
    assert_eq!(summary["directories_cached"], 0);
    assert_eq!(summary["directories_remaining"], 0);
    assert_eq!(summary["api_requests"], 11);
    assert!(summary["tokens"]["input"].as_u64().unwrap() > 0);
    assert!(summary["cost_usd"].as_f64().unwrap() > 0.0);
}

/// An unknown model ends the investigation at its first answer: the
/// report still prints, says why in one line, and the exit status is the
/// failed investigation's.
#[test]
fn unknown_model_stops_the_run_with_one_line() {
    let env = project().with_mock();
    env.server
        .respond_with(|_| Reply::unknown_model("claude-retired-1"));
    let out = env.output(&["--model", "claude-retired-1"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        env.server.request_count(),
        1,
        "a 404 is not retried and ends the run"
    );
    let err = stderr(&out);
    let lines = lines_where(&err, |l| l.contains("was not found by the API"));
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("'claude-retired-1'") && lines[0].contains("--model"),
        "{err}"
    );
    // The catalog does not know it either, and says so once, up front.
    assert_eq!(
        err.matches("is not in luminos's catalog").count(),
        1,
        "{err}"
    );
    let report = stdout(&out);
    assert!(report.contains("LUMINOS"), "{report}");
    assert!(
        report.contains("  Investigation failed: model 'claude-retired-1' was not found"),
        "{report}"
    );
}

/// A 404 that is not the API's own (a web server's HTML page: the base URL
/// is wrong) stops the run too, but blames the URL, not the model.
#[test]
fn a_foreign_404_blames_the_base_url_not_the_model() {
    let env = project().with_mock();
    env.server.respond_with(|_| Reply::html(404));
    let out = env.cmd().arg(env.target()).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(env.server.request_count(), 1);
    let err = stderr(&out);
    let errors = lines_where(&err, |l| l.starts_with("Investigation failed"));
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("check ANTHROPIC_BASE_URL"), "{err}");
    assert!(!errors[0].contains("--model"), "{err}");
}

/// A gateway that rejects the very first request (here with a plain 400)
/// would reject every other one: the investigation ends there, the report
/// prints and says so.
#[test]
fn a_rejected_first_request_ends_the_investigation_once() {
    let env = project().with_mock();
    env.server
        .respond_with(|_| Reply::error(400, "invalid_request_error", "scripted refusal"));
    let out = env.output(&["--json"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(env.server.request_count(), 1);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ai_brief"], "");
    assert_eq!(report["investigation"]["status"], "failed");
    let error = report["investigation"]["error"].as_str().unwrap();
    assert!(error.contains("scripted refusal"), "{error}");
    assert!(!error.contains('\n'));
    let err = stderr(&out);
    assert_eq!(err.matches("Investigation failed: ").count(), 1, "{err}");
    assert!(!err.contains("Investigation complete"), "{err}");
}

#[test]
fn investigation_failure_prints_the_report_and_exits_three() {
    let env = project().with_mock();
    run(&env, &[]);
    // Break the investigation's meta.json so closing it fails on resume.
    let meta = cache(&env).dir().join("meta.json");
    std::fs::remove_file(&meta).unwrap();
    std::fs::create_dir_all(meta.join("blocker")).unwrap();
    let out = env.cmd().arg(env.target()).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("Investigation failed: "), "{err}");
    let report = stdout(&out);
    assert!(report.contains("LUMINOS"), "{report}");
    assert!(report.contains("  Investigation failed: "), "{report}");
    assert!(!report.contains("Scripted brief"));
}

#[test]
fn discovery_follows_the_scans_scope() {
    let env = project();
    env.files(&[
        (".gitignore", "out/\n"),
        ("out/bundle.js", "x\n"),
        ("node_modules/pkg/index.js", "x\n"),
        ("fixtures/a.txt", "a\n"),
        (".config/settings.toml", "a = 1\n"),
    ]);
    let env = env.with_mock();
    run(&env, &["-x", "fixtures"]);
    let dirs: Vec<Pass> = pass_runs(&env)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| matches!(p, Pass::Dir(_)))
        .collect();
    assert_eq!(dirs, [dir("src/core"), dir("docs"), dir("src"), dir(".")]);

    // With -a and --no-ignore, hidden and ignored directories come back; the
    // skip list (node_modules) and -x still apply.
    let before = env.server.request_count();
    run(&env, &["--fresh", "-a", "--no-ignore", "-x", "fixtures"]);
    let dirs: Vec<Pass> = env
        .passes()
        .into_iter()
        .skip(before)
        .map(|(p, _)| p)
        .filter(|p| matches!(p, Pass::Dir(_)))
        .fold(Vec::new(), |mut acc, p| {
            if acc.last() != Some(&p) {
                acc.push(p);
            }
            acc
        });
    assert_eq!(
        dirs,
        [
            dir("src/core"),
            dir(".config"),
            dir("docs"),
            dir("out"),
            dir("src"),
            dir(".")
        ]
    );
}

/// The directory loops of the requests from index `from` on, in order,
/// each once.
fn dirs_investigated(env: &AgentEnv, from: usize) -> Vec<String> {
    let mut dirs: Vec<String> = Vec::new();
    for (pass, _) in env.passes().into_iter().skip(from) {
        if let Pass::Dir(rel) = pass
            && !dirs.contains(&rel)
        {
            dirs.push(rel);
        }
    }
    dirs
}

/// Ignore rules at several levels, a negation in a nested file that takes
/// back a parent's rule, and each of `-a` and `--no-ignore` alone: the
/// investigation visits exactly the directories the scan kept.
#[test]
fn discovery_applies_nested_rules_negations_and_each_flag_alone() {
    let env = TestEnv::new();
    env.files(&[
        (".gitignore", "gen/\n*.log\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/.gitignore", "!gen/\ncache/\n"),
        ("src/gen/out.rs", "// generated, but taken back\n"),
        ("src/cache/blob.rs", "// ignored by src/.gitignore\n"),
        ("lib/gen/x.rs", "// ignored by the root rule\n"),
        ("lib/lib.rs", "pub fn f() {}\n"),
        ("lib/debug.log", "noise\n"),
        (".tools/run.sh", "echo\n"),
        (
            ".tools/gen/t.rs",
            "// hidden, and ignored by the root rule\n",
        ),
    ]);
    let env = env.with_mock();

    let cases: [(&[&str], &[&str]); 4] = [
        (&[], &["src/gen", "lib", "src", "."]),
        (&["-a"], &["src/gen", ".tools", "lib", "src", "."]),
        (
            &["--no-ignore"],
            &["lib/gen", "src/cache", "src/gen", "lib", "src", "."],
        ),
        (
            &["-a", "--no-ignore"],
            &[
                ".tools/gen",
                "lib/gen",
                "src/cache",
                "src/gen",
                ".tools",
                "lib",
                "src",
                ".",
            ],
        ),
    ];
    for (flags, expected) in cases {
        let before = env.server.request_count();
        let mut args = vec!["--fresh", "--json"];
        args.extend_from_slice(flags);
        let out = run(&env, &args);
        assert_eq!(dirs_investigated(&env, before), expected, "{flags:?}");
        // lib's prompt lists only what the scan kept, and says what it left
        // out.
        let lib = env.server.requests()[before..]
            .iter()
            .find(|r| Pass::of(&r.body, &canonical(&env)) == dir("lib"))
            .unwrap()
            .prompt_text();
        if flags.contains(&"--no-ignore") {
            assert!(lib.contains("  debug.log  (6 bytes)"), "{lib}");
            assert!(!lib.contains("left out"), "{lib}");
        } else {
            assert!(!lib.contains("debug.log") && !lib.contains("gen/"), "{lib}");
            assert!(
                lib.contains("  lib.rs  (14 bytes)  [text/plain]\n  (2 more entries left out by ignore files or --exclude)\n</untrusted-data>"),
                "{lib}"
            );
        }
        // The JSON report says which rules were in effect and what they took.
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let ignore = &report["ignore"];
        if flags.contains(&"--no-ignore") {
            assert_eq!(
                *ignore,
                json!({"enabled": false, "rule_files": [], "files_removed": 0, "dirs_removed": 0}),
                "{flags:?}"
            );
        } else {
            assert_eq!(ignore["enabled"], true);
            assert_eq!(
                ignore["rule_files"],
                json!([".gitignore", "src/.gitignore"])
            );
            // lib/gen and src/cache (and with -a, .tools/gen), the files in
            // them, and lib/debug.log.
            let hidden_too = flags.contains(&"-a");
            assert_eq!(
                ignore["dirs_removed"],
                if hidden_too { 3 } else { 2 },
                "{flags:?}"
            );
            assert_eq!(
                ignore["files_removed"],
                if hidden_too { 4 } else { 3 },
                "{flags:?}"
            );
        }
    }
}

#[test]
fn an_unreachable_api_ends_the_investigation_once() {
    // The default TestEnv points at a closed local port.
    let env = project();
    let out = env.output(&["--max-retries", "1", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ai_brief"], "");
    assert_eq!(report["investigation"]["status"], "failed");
    let error = report["investigation"]["error"].as_str().unwrap();
    assert!(
        error.starts_with("the API at http://127.0.0.1:9 could not be reached")
            && error.contains("check ANTHROPIC_BASE_URL, the network and any proxy"),
        "{error}"
    );
    let err = stderr(&out);
    assert_eq!(err.matches("Investigation failed: ").count(), 1, "{err}");
    // One pass tried (with its one retry); no other pass waited on it.
    assert!(!err.contains("Planning pass..."), "{err}");
    assert_eq!(err.matches("retry 1/1").count(), 1, "{err}");
}

#[test]
fn a_rejected_key_stops_the_run_with_one_line() {
    let env = project().with_mock();
    env.server
        .respond_with(|_| Reply::error(401, "authentication_error", "invalid x-api-key"));
    let out = env.cmd().arg(env.target()).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        env.server.request_count(),
        1,
        "a 401 is not retried and ends the run"
    );
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("credential")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("invalid x-api-key"), "{err}");
    assert!(stdout(&out).contains("Investigation failed: the API rejected the credential"));
}
