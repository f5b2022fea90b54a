//! How a turn's stop reason ends or continues a loop: a cut-off tool call, a
//! refusal, a paused turn, a full context window.

use super::*;

/// A reply cut off at `max_tokens` inside a tool call: the call is not
/// run, the request is never sent again unchanged, and the model is told
/// to make smaller calls.
#[test]
fn a_cut_off_tool_call_is_never_run_or_resent_unchanged() {
    let env = tiny_scripted(&[("a.txt", "alpha\n")], |turn| {
        if turn.body.to_string().contains("reached the output limit") {
            submitted("Split the work.")
        } else {
            Reply::tool_use(
                "write_cache",
                json!({"cache_type": "file", "path": "a.txt",
                       "data": {"summary": "x".repeat(2000)}}),
            )
            .cut_off_at_max_tokens()
        }
    });
    let out = run_json_ok(&env, "cache", &[]);
    let err = stderr(&out);
    assert!(!err.contains("retry 1/"), "{err}");
    assert!(
        err.contains("Reply cut off at the output limit in a call to write_cache"),
        "{err}"
    );
    let requests = of_pass(&env, &root());
    assert_eq!(requests.len(), 2);
    assert_ne!(requests[0].body, requests[1].body);
    let note = requests[1].last_user_text();
    assert!(
        note.contains("reached the output limit in the middle of a call to write_cache"),
        "{note}"
    );
    // The cut-off reply is not in the history; nothing it asked for ran.
    assert_eq!(requests[1].turn(), 0);
    let cached = cache_entries(&env.root().join("cache"));
    assert!(cached.files.is_empty(), "{:?}", cached.files);
    assert_eq!(json_of(&out)["investigation"]["status"], "complete");
}

/// A refusal ends its directory's loop with a partial entry and an info
/// flag; the other directories and the synthesis go on.
#[test]
fn a_refusal_ends_only_its_loop() {
    let env = TestEnv::with_small_project();
    let env = env.with_agent(|agent| agent.dir_script("docs", |_| Reply::refusal("cyber")));
    let out = run_json(&env, "cache", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    let investigation = &report["investigation"];
    assert_eq!(investigation["status"], "partial");
    assert_eq!(investigation["note"], "the model declined 1 directory");
    assert_eq!(investigation["directories_investigated"], 4);
    assert!(!report["ai_brief"].as_str().unwrap().is_empty());
    let flag = item_where(&report["flags"], "path", "docs");
    assert_eq!(flag["severity"], "info");
    assert_contains_all(flag["finding"].as_str().unwrap(), &["declined", "cyber"]);
    assert_eq!(of_pass(&env, &Pass::Dir("docs".into())).len(), 1);
    let cached = cache_entries(&env.root().join("cache"));
    let docs = cached
        .dirs
        .values()
        .find(|e| e["relative_path"] == "docs")
        .unwrap();
    assert_eq!(docs["partial"], true);
    assert_eq!(
        docs["partial_reason"],
        "model declined before files processed"
    );
    let others: Vec<&Value> = cached
        .dirs
        .values()
        .filter(|e| e["relative_path"] != "docs")
        .collect();
    assert_eq!(others.len(), 3);
    assert!(
        others.iter().all(|e| e.get("partial").is_none()),
        "{others:?}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("[AI] Investigation partial: the model declined 1 directory"),
        "{err}"
    );
    assert!(!err.contains("Investigation complete"), "{err}");

    // An unchanged rerun reuses the declined entry and pays for nothing,
    // and stays as partial as the run that wrote it.
    let before = env.server.request_count();
    let again = json_of(&run_json(&env, "cache", &[]));
    assert_eq!(env.server.request_count(), before);
    assert_eq!(again["investigation"]["status"], "partial");
    assert_eq!(
        again["investigation"]["note"],
        "the model declined 1 directory"
    );
}

/// `pause_turn`: the turn goes back as it came and the model is called
/// again, with no user message in between.
#[test]
fn a_paused_turn_is_sent_back_and_continued() {
    let env = tiny_scripted(&[("a.txt", "alpha\n")], |turn| match turn.turn {
        1 => Reply::text("Working through it.").pause_turn(),
        _ => submitted("Resumed."),
    });
    let (out, requests) = dir_requests_of_a_clean_run(&env);
    assert_eq!(requests.len(), 2);
    let last = requests[1].messages().last().unwrap();
    assert_eq!(last["role"], "assistant");
    assert!(last.to_string().contains("Working through it."));
    assert_eq!(json_of(&out)["investigation"]["status"], "complete");
}

/// The window fills up: by the stop reason, or by the API's 400 "prompt
/// is too long". Either ends the loop as the budget does, with a partial
/// entry built from what the loop cached.
#[test]
fn a_full_context_window_ends_the_loop_like_the_budget() {
    // The file entry each loop writes first.
    let note = || {
        json!({"cache_type": "file", "path": "a.txt",
               "data": {"path": "a.txt", "relative_path": "a.txt", "size_bytes": 6,
                        "category": "text", "summary": "Alpha notes.",
                        "confidence": 0.9, "notable": false,
                        "cached_at": "2026-01-01T00:00:00+00:00"}})
    };
    // The stop reason.
    let env = tiny_scripted(&[("a.txt", "alpha\n")], move |turn| match turn.turn {
        1 => Reply::tool_use("write_cache", note()),
        _ => Reply::text("and then").with_stop_reason("model_context_window_exceeded"),
    });
    run_json_ok(&env, "cache", &[]);
    let cached = cache_entries(&env.root().join("cache"));
    let entry = cached.dirs.values().next().unwrap();
    assert_eq!(entry["partial_reason"], "context budget reached");
    assert_eq!(entry["summary"], "Alpha notes.");

    // The 400: turn 2 resends a 100 KB read, past a 20K-token window.
    let big = "lorem ipsum dolor sit amet ".repeat(4_000);
    let files = [("a.txt", "alpha\n"), ("big.txt", big.as_str())];
    let env = tiny_scripted(&files, move |turn| match turn.turn {
        1 => Reply::tool_uses([
            ("write_cache", note()),
            (
                "read_file",
                json!({"path": "big.txt", "max_bytes": 200_000}),
            ),
        ]),
        _ => submitted("never"),
    });
    env.server.set_context_window(20_000);
    let out = run_json_ok(&env, "cache", &[]);
    assert!(
        stderr(&out).contains("prompt is too long"),
        "{}",
        stderr(&out)
    );
    let cached = cache_entries(&env.root().join("cache"));
    let entry = cached.dirs.values().next().unwrap();
    assert_eq!(entry["partial_reason"], "context budget reached");
    assert_eq!(entry["summary"], "Alpha notes.");
    // The 400 was the API's answer to a correct client, not a bug of ours.
    assert!(env.server.violations().is_empty());
}
