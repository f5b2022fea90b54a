//! Resuming and `--fresh`, and what the report carries (sorted flags, every
//! JSON key).

use super::*;

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
    // The cached directories are counted, not named (`-v` names them).
    assert!(!err.contains("Skipping (cached)"), "{err}");
    assert!(
        err.contains("[AI] Directories to investigate: 2 (2 cached)"),
        "{err}"
    );
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
    // The JSON sorts them too (the original kept the order they were
    // raised in: src/core, docs, then src at --jobs 1).
    assert_eq!(severities, ["critical", "concern", "info"]);
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
