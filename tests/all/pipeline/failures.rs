//! Runs the API stops: unknown models, foreign 404s, rejected first requests
//! and keys, an unreachable API: one line, the report still printed, the
//! failed investigation's exit status.

use super::*;

use support::output::{failed_error, fields};

/// `luminos [extra] TARGET` against a mock that answers every request with
/// `reply`: the run must stop at that first answer, without a retry, with
/// the failed investigation's exit status.
fn stopped_by(reply: Reply, extra: &[&str]) -> Output {
    let env = project().with_mock();
    env.server.respond_with(move |_| reply.clone());
    let out = env.output(extra);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        env.server.request_count(),
        1,
        "the first answer ends the run, not retried"
    );
    out
}

/// An unknown model ends the investigation at its first answer: the
/// report still prints, says why in one line, and the exit status is the
/// failed investigation's.
#[test]
fn unknown_model_stops_the_run_with_one_line() {
    let out = stopped_by(
        Reply::unknown_model("claude-retired-1"),
        &["--model", "claude-retired-1"],
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
    let out = stopped_by(Reply::html(404), &[]);
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
    let out = stopped_by(
        Reply::error(400, "invalid_request_error", "scripted refusal"),
        &["--json"],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ai_brief"], "");
    let error = failed_error(&report);
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
fn an_unreachable_api_ends_the_investigation_once() {
    // The default TestEnv points at a closed local port.
    let env = project();
    let out = env.output(&["--max-retries", "1", "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ai_brief"], "");
    let error = failed_error(&report);
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
    let out = stopped_by(
        Reply::error(401, "authentication_error", "invalid x-api-key"),
        &[],
    );
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("credential")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("invalid x-api-key"), "{err}");
    assert!(stdout(&out).contains("Investigation failed: the API rejected the credential"));
}

/// An endpoint that dies after two dir loops have finished: the
/// investigation fails (exit 3, status `failed` with its error), and its
/// report, JSON and text alike, still shows what those loops paid for:
/// their directories' summaries, file summaries and flags, with `none` for
/// the directories never reached.
#[test]
fn a_run_that_dies_midway_reports_what_it_learned() {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use support::agent::{MockAgent, dir_of};

    const FINISHED: usize = 2;
    let env = project().with_mock();
    let target = canonical(&env);
    let rels = [".", "src", "src/core", "docs"];
    let mut agent = MockAgent::new(env.target());
    for rel in rels {
        let path = if rel == "." {
            "README.md".to_string()
        } else {
            format!("{rel}/")
        };
        agent = agent.flag(rel, &path, "concern", &format!("Finding in {rel}."));
    }
    // The loops seen so far, in order; once a loop past the first
    // `FINISHED` starts, every request fails, as from an endpoint gone.
    let seen: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    env.server.respond_with(move |request| {
        let mut seen = seen.lock().unwrap();
        if let Some(dir) = dir_of(&request.body)
            && !seen.contains(&dir)
        {
            seen.push(dir);
        }
        if seen.len() > FINISHED {
            Reply::server_error()
        } else {
            agent.reply(&request.body)
        }
    });
    let flags = ["--jobs=1", "--max-retries", "0"];

    let out = env.output(&[&flags[..], &["--json"]].concat());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["investigation"]["status"], "failed");
    assert!(
        report["investigation"]["error"]
            .as_str()
            .unwrap()
            .contains("Internal server error"),
        "{}",
        report["investigation"]
    );
    let finished: HashSet<String> = report["directories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|dir| dir["coverage"] == "investigated")
        .map(|dir| dir["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(finished.len(), FINISHED, "{}", report["directories"]);
    let mut shown = Vec::new();
    for dir in report["directories"].as_array().unwrap() {
        let rel = dir["path"].as_str().unwrap();
        shown.push(rel.to_string());
        if !finished.contains(rel) {
            assert_eq!(dir["coverage"], "none", "{dir}");
            assert_eq!(dir["summary"], Value::Null, "{dir}");
            continue;
        }
        let files = visible_files(&target.join(rel));
        assert_eq!(dir["summary"], dir_summary(rel, &files).as_str(), "{dir}");
        let summaries = fields(&dir["files"], "summary");
        let expected: Vec<String> = files
            .iter()
            .map(|(name, _)| file_summary(rel, name))
            .collect();
        assert_eq!(summaries, expected, "{dir}");
    }
    shown.sort();
    assert_eq!(shown, [".", "docs", "src", "src/core"]);
    let mut raised: Vec<&str> = report["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|flag| flag["finding"].as_str().unwrap())
        .collect();
    raised.sort();
    let mut expected: Vec<String> = finished
        .iter()
        .map(|rel| format!("Finding in {rel}."))
        .collect();
    expected.sort();
    assert_eq!(raised, expected);

    // The text report of the same failed investigation, resumed from the
    // same cache: the same summaries under DIRECTORIES.
    let out = env.output(&flags);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("  Investigation failed: "), "{text}");
    assert!(text.contains(">> DIRECTORIES"), "{text}");
    let squashed = support::output::squashed(&text);
    for rel in &finished {
        let summary = dir_summary(rel, &visible_files(&target.join(rel)));
        assert!(squashed.contains(&summary), "{summary}\n{text}");
    }
    // The directories the run did not reach are counted in one line.
    let without = format!(
        "  {} director{} without a summary.",
        4 - FINISHED,
        if 4 - FINISHED == 1 { "y" } else { "ies" }
    );
    assert!(text.contains(&without), "{without}\n{text}");
}
