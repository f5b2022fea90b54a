//! `--estimate` with the real binary: no API request, no credential, no
//! cache write, and counts that follow the tree and the cache.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::TestEnv;
use support::agent::AgentEnv;
use support::output::assert_success;

/// 4 directories (., src, src/core, docs) and 6 files: not a tiny target.
fn project() -> TestEnv {
    TestEnv::with_small_project()
}

/// `luminos --estimate [extra] TARGET` with no credential at all.
fn estimate(env: &TestEnv, extra: &[&str]) -> Output {
    let command = env
        .bare_cmd()
        .arg("--estimate")
        .args(extra)
        .arg(env.target())
        .output();
    assert_success(command.expect("run luminos"), "luminos --estimate")
}

/// Whether the estimate runs the survey, the planning and the synthesis.
fn passes_to_run(value: &Value) -> (Option<bool>, Option<bool>, Option<bool>) {
    let runs = |pass: &str| value[pass].as_bool();
    (runs("survey"), runs("planning"), runs("synthesis"))
}

fn estimate_json(env: &TestEnv, extra: &[&str]) -> Value {
    let output = estimate(env, &[&["--json"], extra].concat());
    serde_json::from_slice(&output.stdout).expect("--estimate --json prints one JSON object")
}

fn range(value: &Value, key: &str) -> (u64, u64) {
    (
        value[key]["low"].as_u64().unwrap(),
        value[key]["high"].as_u64().unwrap(),
    )
}

/// Every file under `root` with its size and modification time.
fn snapshot(root: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| {
            let meta = e.metadata().unwrap();
            (e.into_path(), meta.len(), meta.modified().unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn no_key_no_request_no_cache_and_counts_that_match_the_tree() {
    let env = project().with_mock();
    let value = estimate_json(&env, &[]);
    assert_eq!(env.server.request_count(), 0, "an estimate calls no API");
    assert!(
        !env.cache().exists(),
        "an estimate must not create the cache"
    );

    assert_eq!(value["directories_total"], 4);
    assert_eq!(value["directories_to_investigate"], 4);
    assert_eq!(value["directories_cached"], 0);
    assert_eq!(value["directories_skipped"], 0);
    assert_eq!(value["investigation_id"], Value::Null);
    assert_eq!(value["model"], luminos::ai::api::DEFAULT_MODEL);
    assert_eq!(
        (value["survey"].as_bool(), value["planning"].as_bool()),
        (Some(true), Some(true))
    );
    // survey + planning + 4 loops of 3 (low) or 10 (high) turns + synthesis.
    assert_eq!(range(&value, "api_calls"), (2 + 4 * 3 + 1, 2 + 4 * 10 + 1));
    let (low_in, high_in) = range(&value, "input_tokens");
    assert!(0 < low_in && low_in < high_in, "{value}");
    let (low, high) = (
        value["cost_usd"]["low"].as_f64().unwrap(),
        value["cost_usd"]["high"].as_f64().unwrap(),
    );
    assert!(0.0 < low && low < high, "{value}");
}

#[test]
fn text_by_default_and_the_model_sets_the_price() {
    let env = project().with_mock();
    let text = String::from_utf8(estimate(&env, &[]).stdout).unwrap();
    assert!(
        text.contains("Directories: 4 found; 4 to investigate\n"),
        "{text}"
    );
    assert!(text.contains("API calls: 15 to 43"), "{text}");
    assert!(text.contains("Estimated cost: $"), "{text}");

    let sonnet = estimate_json(&env, &["--model", "claude-sonnet-4-5"]);
    let haiku = estimate_json(&env, &["--model", "claude-haiku-4-5"]);
    let opus = estimate_json(&env, &["--model", "claude-opus-4-8"]);
    assert_eq!(haiku["model"], "claude-haiku-4-5");
    let cost = |v: &Value, end: &str| v["cost_usd"][end].as_f64().unwrap();
    for end in ["low", "high"] {
        // Haiku 4.5 lists at a third of Sonnet 4.5's prices, with the same
        // tokenizer and no thinking: a third of the cost.
        let ratio = cost(&haiku, end) / cost(&sonnet, end);
        assert!((ratio - 1.0 / 3.0).abs() < 0.005, "{end}: {ratio}");
        // Opus 4.8 lists at 5/3 of Sonnet 4.5's prices at equal tokens, but
        // its newer tokenizer makes about 1.3 times the tokens of the same
        // text (the catalog's tokens per byte): 5/3 x 1.3 is the true ratio
        // (within the rounding of each figure up to a whole token).
        let ratio = cost(&opus, end) / cost(&sonnet, end);
        assert!((ratio - 5.0 / 3.0 * 1.3).abs() < 0.01, "{end}: {ratio}");
        let tokens = |v: &Value| v["input_tokens"][end].as_f64().unwrap();
        let scale = tokens(&opus) / tokens(&sonnet);
        assert!((scale - 1.3).abs() < 0.005, "{end}: {scale}");
    }
    // The same model, deprecated or not, prices the same; neither warns.
    assert!(
        sonnet.get("model_warning").is_some(),
        "deprecated: {sonnet}"
    );
    assert!(opus["model_warning"].is_null());
    assert_eq!(env.server.request_count(), 0);
}

/// A model the catalog does not know is estimated at its stand-in's
/// prices, and the estimate says so, in text and in JSON; a deprecated one
/// is named with its retirement date and replacement.
#[test]
fn an_unknown_or_deprecated_model_gets_a_warning() {
    let env = project().with_mock();
    let text = String::from_utf8(estimate(&env, &["--model", "claude-opus-9"]).stdout).unwrap();
    let line = "Warning: model 'claude-opus-9' is not in luminos's catalog, so its price is \
                unknown; costs and budgets assume Claude Opus 5.5's prices ($4 input / $20 output \
                per million tokens)";
    assert_eq!(text.matches(line).count(), 1, "{text}");
    let json = estimate_json(&env, &["--model", "claude-opus-9"]);
    assert_eq!(json["model_warning"], line.trim_start_matches("Warning: "));
    let stand_in = estimate_json(&env, &["--model", "claude-opus-5-5"]);
    assert_eq!(json["cost_usd"], stand_in["cost_usd"]);

    let deprecated = estimate_json(&env, &["--model", "claude-sonnet-4-5-20250929"]);
    let warning = deprecated["model_warning"].as_str().unwrap();
    assert!(
        warning.contains("2026-11-30") && warning.contains("claude-sonnet-5-5"),
        "{warning}"
    );
    assert!(estimate_json(&env, &[])["model_warning"].is_null());
}

#[test]
fn a_tiny_target_has_no_survey_or_planning() {
    let env = TestEnv::new().with_mock();
    env.file("notes.txt", "hello\n");
    let value = estimate_json(&env, &[]);
    assert_eq!(value["directories_to_investigate"], 1);
    assert_eq!(
        (value["survey"].as_bool(), value["planning"].as_bool()),
        (Some(false), Some(false))
    );
    assert_eq!(range(&value, "api_calls"), (3 + 1, 10 + 1));
}

#[test]
fn output_file_like_the_report() {
    let env = project().with_mock();
    let file = env.root().join("estimate.json");
    let output = estimate(&env, &["--json", "-o", file.to_str().unwrap()]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.starts_with("Report written to "), "{stdout}");
    let value: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(value["directories_total"], 4);
}

/// A whole run, so every directory is cached and the survey, plan and
/// synthesis are saved.
fn investigated() -> AgentEnv {
    let env = project().with_agent(|agent| agent);
    env.run_ok(&[]);
    env
}

#[test]
fn an_unchanged_tree_costs_nothing() {
    let env = investigated();
    let value = estimate_json(&env, &[]);
    assert_eq!(value["directories_cached"], 4);
    assert_eq!(value["directories_to_investigate"], 0);
    assert_eq!(
        passes_to_run(&value),
        (Some(false), Some(false), Some(false))
    );
    assert_eq!(range(&value, "api_calls"), (0, 0));
    assert_eq!(value["cost_usd"]["high"], 0.0);
}

#[test]
fn changed_directories_and_their_ancestors_are_counted_and_the_cache_is_untouched() {
    let env = investigated();
    env.file("docs/guide.md", "Guide, rewritten at greater length.\n");
    let requests = env.server.request_count();
    let before = snapshot(env.cache());
    let index: Value =
        serde_json::from_slice(&std::fs::read(env.cache().join("investigations.json")).unwrap())
            .unwrap();

    let value = estimate_json(&env, &[]);
    assert_eq!(
        env.server.request_count(),
        requests,
        "an estimate calls no API"
    );
    assert_eq!(snapshot(env.cache()), before, "an estimate writes nothing");

    let target = std::fs::canonicalize(env.target()).unwrap();
    assert_eq!(value["investigation_id"], index[target.to_str().unwrap()]);
    assert_eq!(value["directories_total"], 4);
    // docs changed, so docs and the root (which embeds its summary) again.
    assert_eq!(value["directories_cached"], 2);
    assert_eq!(value["directories_to_investigate"], 2);
    // The saved survey and plan are reused; synthesis runs again.
    assert_eq!(
        passes_to_run(&value),
        (Some(false), Some(false), Some(true))
    );
    assert_eq!(range(&value, "api_calls"), (2 * 3 + 1, 2 * 10 + 1));

    let fresh = estimate_json(&env, &["--fresh"]);
    assert_eq!(fresh["directories_cached"], 0);
    assert_eq!(fresh["directories_to_investigate"], 4);
    assert_eq!(fresh["investigation_id"], Value::Null);
    assert_eq!(fresh["planning"], true);
    assert_eq!(snapshot(env.cache()), before);
}

/// With a key set, the token counts are calibrated by the API's free token
/// counting: one call, of the first loop's prompt, and every token figure
/// scaled by its count over the estimate's own; the text says so, and the
/// decision is the same. A count that fails leaves the estimate as it is,
/// saying why, and the estimate still succeeds; without a key no call is
/// made.
#[test]
fn a_key_calibrates_the_token_counts_with_the_free_token_counting() {
    let env = project().with_mock();
    let keyed = |extra: &[&str]| -> Output {
        let out = env
            .cmd()
            .arg("--estimate")
            .args(extra)
            .arg(env.target())
            .output()
            .unwrap();
        assert_success(out, "luminos --estimate")
    };
    let plain = estimate_json(&env, &[]);
    assert!(plain.get("token_calibration").is_none(), "{plain}");
    assert!(env.server.token_counts().is_empty(), "no key, no call");

    let calibrated: Value = serde_json::from_slice(&keyed(&["--json"]).stdout).unwrap();
    let counts = env.server.token_counts();
    assert_eq!(counts.len(), 1, "one call");
    assert_eq!(env.server.request_count(), 0, "no message was created");
    let body = &counts[0];
    assert!(
        body["system"][0]["text"]
            .as_str()
            .unwrap()
            .contains("investigators")
    );
    assert!(body["tools"].as_array().unwrap().len() > 3);
    let c = &calibrated["token_calibration"];
    let factor = c["factor"].as_f64().unwrap();
    assert!(
        (factor - c["counted"].as_f64().unwrap() / c["estimated"].as_f64().unwrap()).abs() < 1e-9
    );
    assert!(factor > 0.0 && (factor - 1.0).abs() > 0.01, "{c}");
    // The same decision; the token figures scaled (within rounding).
    for key in [
        "loops",
        "directories_to_investigate",
        "api_calls",
        "synthesis_levels",
    ] {
        assert_eq!(calibrated[key], plain[key], "{key}");
    }
    let (_, high) = range(&calibrated, "input_tokens");
    let (_, plain_high) = range(&plain, "input_tokens");
    let scaled = plain_high as f64 * factor;
    assert!(
        (high as f64 - scaled).abs() <= scaled * 0.01 + 50.0,
        "{high} vs {scaled}"
    );
    let text = String::from_utf8(keyed(&[]).stdout).unwrap();
    assert!(
        text.contains("Token counts calibrated with the API's token counting"),
        "{text}"
    );

    // A failing count: the estimate stands, and says why.
    env.server
        .fail_token_counts(support::mock::Reply::overloaded());
    let failed: Value = serde_json::from_slice(&keyed(&["--json"]).stdout).unwrap();
    assert!(failed.get("token_calibration").is_none());
    assert!(failed["token_calibration_error"].is_string(), "{failed}");
    assert_eq!(failed["input_tokens"], plain["input_tokens"]);
    let text = String::from_utf8(keyed(&[]).stdout).unwrap();
    assert!(text.contains("Token counts not calibrated"), "{text}");
    assert_eq!(env.server.request_count(), 0);
}

/// `--estimate --json` with a model the catalog does not know warns on
/// stderr, as a run does, so the user of a `jq` pipeline sees it; stdout
/// stays one JSON object whose keys do not depend on the model
/// (`model_warning` is `null` for a current one). A text estimate on
/// stdout says it there, once; one written to a file says it on stderr.
#[test]
fn the_json_estimate_warns_on_stderr_too() {
    let env = project();
    let out = estimate(&env, &["--json", "--model", "claude-opus-9"]);
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("Warning: model 'claude-opus-9'"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON object on stdout");
    assert_eq!(
        json["model_warning"],
        warnings[0].trim_start_matches("Warning: ")
    );
    let current = estimate_json(&env, &[]);
    assert!(current["model_warning"].is_null(), "{current}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&current), keys(&json));

    let text = estimate(&env, &["--model", "claude-opus-9"]);
    assert!(
        !String::from_utf8_lossy(&text.stderr).contains("Warning: model"),
        "said once, in the text on stdout"
    );
    let file = env.root().join("estimate.txt");
    let to_file = estimate(
        &env,
        &["--model", "claude-opus-9", "-o", file.to_str().unwrap()],
    );
    assert!(
        String::from_utf8_lossy(&to_file.stderr).contains("Warning: model 'claude-opus-9'"),
        "{}",
        String::from_utf8_lossy(&to_file.stderr)
    );
    // A name with a newline cannot forge a line of its own there.
    let forged = estimate(
        &env,
        &["--json", "--model", "claude-opus-9\nWarning: all clear"],
    );
    let err = String::from_utf8_lossy(&forged.stderr);
    assert!(
        err.contains("Warning: model 'claude-opus-9\\nWarning: all clear'"),
        "{err}"
    );
    assert!(
        !err.lines().any(|l| l.starts_with("Warning: all clear")),
        "{err}"
    );
}

/// One story for a rerun: what `--estimate` says it will do (the counts,
/// in its JSON and its text) is what the run then says and sends, on a
/// rerun after a change in a directory summarised from the scan, and on a
/// rerun with more money that has a model read what the scan summarised.
#[test]
fn the_estimate_and_the_run_tell_one_story() {
    let env = crate::budget::tree().with_agent(|agent| agent.summary_chars(1_200));
    let budget = crate::budget::BUDGET;
    let first: Value = serde_json::from_str(&support::output::stdout(
        &env.run_ok(&["--json", "--budget", budget]),
    ))
    .unwrap();
    let scanned: Vec<&str> = first["directories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|dir| dir["coverage"] == "mechanical")
        .map(|dir| dir["path"].as_str().unwrap())
        .collect();
    // A file of a directory the scan summarised changes.
    let dir = env.path(scanned[3]);
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .find(|entry| entry.path().is_file())
        .unwrap()
        .path();
    std::fs::write(&file, "changed\n").unwrap();

    for extra in [&["--budget", budget][..], &[]] {
        let json: Value = serde_json::from_str(&support::output::stdout(&estimate(
            &env,
            &[extra, &["--json"]].concat(),
        )))
        .unwrap();
        let text = support::output::stdout(&estimate(&env, extra));
        let count = |key: &str| json[key].as_u64().unwrap();
        let (total, read, scan, cached) = (
            count("directories_total"),
            count("directories_to_investigate"),
            count("directories_mechanical"),
            count("directories_cached"),
        );
        assert_eq!(
            read + scan + cached + count("directories_skipped"),
            total,
            "every directory counted once: {json}"
        );
        let mut said = format!("Directories: {total} found; {read} to investigate");
        if scan > 0 {
            said.push_str(&format!(", {scan} summarised from the scan"));
        }
        if cached > 0 {
            said.push_str(&format!(", {cached} cached"));
        }
        assert!(text.contains(&format!("{said}\n")), "{said}\n{text}");

        let before = env.passes().len();
        let out = env.run_ok(extra);
        let err = support::output::stderr(&out);
        let mut line = format!("[AI] Directories to investigate: {read}");
        let rest: Vec<String> = [(scan, "summarised from the scan"), (cached, "cached")]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        if !rest.is_empty() {
            line.push_str(&format!(" ({})", rest.join(", ")));
        }
        assert!(err.contains(&format!("{line}\n")), "{line}\n{err}");
        // The loops the estimate counted are the loops sent, with those the
        // money left bought as loops finished, which the run says.
        let bought: u64 = err
            .lines()
            .find_map(|l| l.split(" rounds bought ").nth(1))
            .and_then(|rest| rest.split(' ').next())
            .map_or(0, |n| n.parse().unwrap());
        let loops = env.loop_dirs_since(before);
        assert_eq!(loops.len() as u64, count("loops") + bought, "{err}");
    }
}
