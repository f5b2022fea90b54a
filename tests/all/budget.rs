//! The budget end to end, at small scale: sixty cents on a 107-directory
//! tree folds small directories into a unit, summarises most
//! of the rest from the scan, and lays the synthesis out in levels; every
//! directory still ends with an entry, and resumes stay exact.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use luminos::ai::api::DEFAULT_MODEL;
use luminos::ai::api::catalog::ModelFacts;
use luminos::ai::passes::dir_loop::UNIT_FRAME;
use luminos::cache::{Cache, CacheRoot, EntryKind};
use serde_json::Value;
use support::TestEnv;
use support::agent::{AgentEnv, Pass};
use support::mock::RecordedRequest;
use support::output::{assert_contains_all, stderr};

/// The root with 2 files, 6 small directories (2 files each, folded into
/// the root's unit) and [`BIG`] larger ones (15 files each): [`DIRS`]
/// directories.
pub(crate) fn tree() -> TestEnv {
    let env = TestEnv::new();
    env.file("README.md", "# A tree\n")
        .file("Makefile", "all:\n");
    for i in 0..6 {
        env.file(&format!("small{i}/a.txt"), "a\n")
            .file(&format!("small{i}/b.txt"), "b\n");
    }
    for i in 0..BIG {
        for f in 0..15 {
            env.file(
                &format!("big{i:02}/f{f:02}.rs"),
                format!("pub fn f{f}() {{}}\n"),
            );
        }
    }
    env
}

/// Buys the root's unit and a few more loops on [`tree`] (after the survey
/// and the plan, which think), with a synthesis whose calls may carry
/// little enough that it takes levels: a call carries at most a twentieth
/// of the budget's worth of input, and a hundred sections need more.
pub(crate) const BUDGET: &str = "0.6";

/// The larger directories of [`tree`].
const BIG: usize = 100;

/// Every directory of [`tree`].
pub(crate) const DIRS: usize = BIG + 7;

fn run(env: &TestEnv, extra: &[&str]) -> Output {
    env.run_ok(&[&["--jobs=1", "--json", "--budget", BUDGET], extra].concat())
}

fn report(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("the report is JSON")
}

fn canonical(env: &TestEnv) -> PathBuf {
    std::fs::canonicalize(env.target()).unwrap()
}

fn cache(env: &TestEnv) -> Cache {
    let root = CacheRoot::open(env.cache()).unwrap();
    let id = root.investigation_id(&canonical(env), false).unwrap();
    Cache::open(&root, &id.id, &canonical(env)).unwrap()
}

/// Every directory of the tree, relative (`.` for the root).
fn rel_dirs(target: &Path) -> Vec<String> {
    let mut dirs: Vec<String> = walkdir::WalkDir::new(target)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(target)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.is_empty() { ".".to_string() } else { rel }
        })
        .collect();
    dirs.sort();
    dirs
}

/// Each directory's entry, by relative path.
fn entries(env: &TestEnv) -> BTreeMap<String, Value> {
    let cache = cache(env);
    let target = canonical(env);
    rel_dirs(&target)
        .into_iter()
        .filter_map(|rel| {
            let entry = cache.read_entry(EntryKind::Dir, &target.join(&rel).to_string_lossy())?;
            Some((rel, entry))
        })
        .collect()
}

pub(crate) fn agent(env: TestEnv) -> AgentEnv {
    env.with_agent(|a| a.summary_chars(1_200))
}

pub(crate) fn is_group(request: &RecordedRequest) -> bool {
    request.system_text().contains("\n## This part\n")
}

fn synthesis_requests(env: &AgentEnv, from: usize) -> Vec<RecordedRequest> {
    let target = canonical(env);
    env.server.requests()[from..]
        .iter()
        .filter(|r| Pass::of(&r.body, &target) == Pass::Synthesis)
        .cloned()
        .collect()
}

#[test]
fn a_small_budget_folds_a_unit_summarises_the_rest_and_synthesizes_in_levels() {
    let env = agent(tree());
    let out = run(&env, &[]);
    let err = stderr(&out);
    let report = report(&out);
    let investigation = &report["investigation"];

    // Every directory has an entry: the root's unit, its folded six, the
    // loops the budget bought, and the scan's summaries for the rest.
    let entries = entries(&env);
    assert_eq!(entries.len(), DIRS, "{:?}", entries.keys());
    let coverage = &investigation["coverage"];
    assert_eq!(coverage["folded"], 6, "{investigation}");
    let looped = coverage["investigated"].as_u64().unwrap();
    let mechanical = coverage["mechanical"].as_u64().unwrap();
    assert!(looped >= 2 && mechanical >= 10, "{investigation}");
    assert_eq!(looped + 6 + mechanical, DIRS as u64);
    // A model read the loops' and the unit's directories, not the rest.
    assert_eq!(investigation["directories_investigated"], looped + 6);
    assert_eq!(investigation["status"], "partial");
    let note = investigation["note"].as_str().unwrap();
    assert!(note.starts_with(&scan_note(mechanical)), "{note}");
    assert_eq!(investigation["budget_usd"], 0.6);
    assert!(
        investigation["cost_usd"].as_f64().unwrap() <= 0.6,
        "{investigation}"
    );
    for i in 0..6 {
        let small = &entries[&format!("small{i}")];
        assert_eq!(small["unit"], ".", "{small}");
        assert!(small.get("mechanical").is_none());
        assert!(small["fingerprint"].is_string());
    }
    let scanned: Vec<&Value> = entries
        .values()
        .filter(|e| e["mechanical"] == true)
        .collect();
    assert_eq!(scanned.len() as u64, mechanical);
    for entry in &scanned {
        let summary = entry["summary"].as_str().unwrap();
        assert!(summary.starts_with("Summarised from the scan"), "{summary}");
        assert!(summary.contains("15 files"), "{summary}");
        assert_eq!(entry["file_count"], 15);
        assert!(entry["fingerprint"].is_string());
        assert!(entry["mechanical_reason"].is_string());
    }

    // Every citation is found: the unit's entries quote the names of its
    // folded directories, and the levels' verdict its directories. The
    // scan's summaries quote the scan's own names, which a model did not
    // write: they are not counted.
    let grounding = &report["grounding"];
    assert_eq!(
        grounding["unresolved"],
        serde_json::json!([]),
        "{grounding}"
    );
    assert_eq!(grounding["resolved"], grounding["citations"], "{grounding}");
    assert!(
        grounding["citations"].as_u64().unwrap() < 4 * mechanical,
        "{grounding}"
    );
    // The planner was told what the money buys.
    let planning = env.requests_of(&Pass::Planning).into_iter().next();
    let planning = planning.expect("a planning call");
    let prompt = planning.system_text();
    assert!(
        prompt.contains("Money is tighter than turns. The run's $0.60 buys about"),
        "{prompt}"
    );

    // The root's unit was one loop that was told its six directories.
    let target = canonical(&env);
    let root_first = env
        .server
        .requests()
        .into_iter()
        .find(|r| Pass::of(&r.body, &target) == Pass::Dir(".".into()) && r.turn() == 0)
        .expect("the root's loop");
    let prompt = root_first.prompt_text();
    assert!(prompt.contains(UNIT_FRAME), "{prompt}");
    assert!(prompt.contains("\nsmall0\n") && prompt.contains("\nsmall5\n"));

    // The synthesis summarised parts first, then wrote the verdict.
    let synthesis = synthesis_requests(&env, 0);
    let groups = synthesis.iter().filter(|r| is_group(r)).count();
    assert!(groups >= 2, "{groups} group calls");
    assert_eq!(synthesis.len(), groups + 1);
    assert!(
        report["ai_brief"]
            .as_str()
            .unwrap()
            .starts_with("Scripted brief")
    );
    let saved = cache(&env).read_json("synthesis_groups.json").unwrap();
    assert_eq!(saved["groups"].as_object().unwrap().len(), groups);

    // No request came near the window.
    let window = ModelFacts::of(DEFAULT_MODEL).model.context_window;
    for request in env.server.requests() {
        let usage = request.reported_usage.unwrap();
        assert!(usage.context_tokens() < window / 4, "{usage:?}");
    }

    assert_contains_all(
        &err,
        &[
            "[AI] Budget $0.60: ",
            "6 directories folded into them",
            "[AI] Synthesis level 1: ",
            "[AI] Coverage: ",
        ],
    );
    // The terminal report says it too.
    let text = env.run_ok(&["--jobs=1", "--budget", BUDGET]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("  Coverage: "), "{text}");
}

#[test]
fn an_unchanged_tree_costs_nothing_and_a_change_reruns_only_its_groups() {
    let env = agent(tree());
    let first = report(&run(&env, &[]));
    let before = entries(&env);
    let groups_before = synthesis_requests(&env, 0)
        .iter()
        .filter(|r| is_group(r))
        .count();

    // Unchanged: no request at all, the same entries and report.
    let requests = env.server.request_count();
    let again = run(&env, &[]);
    assert_eq!(env.server.request_count(), requests, "{}", stderr(&again));
    assert_eq!(entries(&env), before);
    let again = report(&again);
    assert_eq!(again["ai_brief"], first["ai_brief"]);
    assert_eq!(
        again["investigation"]["coverage"],
        first["investigation"]["coverage"]
    );

    // A file changes in a directory the scan summarised: the saved work
    // carries on, the root's unit (which embeds its summary) is
    // investigated again, and only the synthesis parts whose input changed
    // are asked for again. The rerun has its whole budget for that, so
    // what is left over deepens: loops for directories the first run left
    // to the scan, before the root's.
    let changed = before
        .iter()
        .find(|(rel, e)| e["mechanical"] == true && rel.starts_with("big1"))
        .map(|(rel, _)| rel.clone())
        .expect("a mechanical directory");
    env.file(
        &format!("{changed}/f00.rs"),
        "pub fn changed() { todo!() }\n",
    );
    let out = run(&env, &[]);
    let err = stderr(&out);
    let target = canonical(&env);
    let dirs: Vec<String> = env.server.requests()[requests..]
        .iter()
        .filter_map(|r| match Pass::of(&r.body, &target) {
            Pass::Dir(rel) => Some(rel),
            _ => None,
        })
        .fold(Vec::new(), |mut acc, rel| {
            if !acc.contains(&rel) {
                acc.push(rel);
            }
            acc
        });
    let (root, deepened) = dirs.split_last().expect("a loop");
    assert_eq!(root, ".", "{err}");
    for rel in deepened {
        assert_eq!(before[rel]["mechanical"], true, "{rel}: {err}");
    }
    assert!(err.contains("Plan loaded from cache."), "{err}");
    assert!(err.contains("Work plan loaded from cache."), "{err}");
    let after = entries(&env);
    assert_ne!(
        after[&changed]["fingerprint"],
        before[&changed]["fingerprint"]
    );
    // Entries of directories that did not change and were not deepened
    // are untouched.
    for (rel, entry) in &before {
        if rel != &changed && !dirs.contains(rel) {
            assert_eq!(&after[rel], entry, "{rel}");
        }
    }
    let coverage = &report(&out)["investigation"]["coverage"];
    let was = &first["investigation"]["coverage"];
    assert_eq!(
        coverage["investigated"].as_u64().unwrap(),
        was["investigated"].as_u64().unwrap() + deepened.len() as u64,
        "{coverage} {was}"
    );
    let groups_now = synthesis_requests(&env, requests)
        .iter()
        .filter(|r| is_group(r))
        .count();
    assert!(
        groups_now < groups_before,
        "{groups_now} of {groups_before}: {err}"
    );
    assert!(err.contains("(cached)"), "{err}");
}

/// A tool result too large for the model's window is cut before it is
/// sent: on a 200,000-token model, reading a 1.5 MB file whole would make
/// a request of some 400,000 tokens.
#[test]
fn no_request_outgrows_the_window() {
    let env = TestEnv::with_small_project();
    let line = "All work and no play makes a dull log line, number 0000000.\n";
    env.file("docs/huge.log", line.repeat(1_500_000 / line.len()));
    let env = env.with_agent(|a| {
        a.dir_script("docs", |turn| match turn.turn {
            1 => support::mock::Reply::tool_use(
                "read_file",
                serde_json::json!({"path": "docs/huge.log", "max_bytes": 1_048_576}),
            ),
            _ => support::mock::Reply::tool_use(
                "submit_report",
                serde_json::json!({"summary": "A huge log.", "completeness": 0.5}),
            ),
        })
    });
    let model = "claude-haiku-4-5";
    let out = env.run_ok(&["--jobs=1", "--model", model]);
    let window = ModelFacts::of(model).model.context_window;
    let docs = env.requests_of(&Pass::Dir("docs".into()));
    assert_eq!(docs.len(), 2);
    let result = &docs[1].tool_results()[0];
    assert!(
        result
            .content
            .contains("[luminos: the rest of this result was cut")
    );
    for request in env.server.requests() {
        let tokens = request.body.to_string().len() as u64 / 4;
        assert!(
            tokens < window,
            "{tokens} tokens sent to a {window}-token model"
        );
    }
    assert!(
        stderr(&out).contains("A tool result was cut"),
        "{}",
        stderr(&out)
    );
}

/// The cache a whole run under [`BUDGET`] leaves, with `extra` arguments,
/// in a cache root of its own.
/// The directory entries in `env`'s cache are those of the clean run.
#[track_caller]
fn clean_run(env: &AgentEnv, name: &str, extra: &[&str]) -> support::entries::Entries {
    let root = env.root().join(name);
    let out = env
        .cmd()
        .env("LUMINOS_CACHE_DIR", &root)
        .args(["--json", "--budget", BUDGET])
        .args(extra)
        .arg(env.target())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    support::entries::cache_entries(&root)
}

/// Four jobs and one leave every directory an entry, none partial, with the
/// root's unit. (What the rounds buy follows the order in which loops
/// hand off, which four jobs do not fix.)
#[test]
fn four_jobs_and_one_job_leave_every_directory_an_entry_and_the_unit() {
    let env = agent(tree());
    let serial = clean_run(&env, "cache-j1", &["--jobs", "1"]);
    let parallel = clean_run(&env, "cache-j4", &["--jobs", "4"]);
    for entries in [&serial, &parallel] {
        assert_eq!(entries.dirs.len(), DIRS);
        assert!(entries.dirs.values().any(|e| e["mechanical"] == true));
        assert!(entries.dirs.values().any(|e| e["unit"] == "."));
        assert!(entries.dirs.values().all(|e| e["partial"] != true));
    }
    assert_eq!(serial.dir_paths(), parallel.dir_paths());
}

#[test]
fn max_cost_stops_units_and_the_next_run_finishes_the_same_work() {
    let env = agent(tree());
    let clean = clean_run(&env, "cache-clean", &["--jobs", "1"]);
    // The cap stops the loops after the first; what depends on them waits.
    let capped = run(&env, &["--max-cost", "0.0001"]);
    let report = report(&capped);
    let investigation = &report["investigation"];
    assert_eq!(investigation["cost_cap_hit"], true, "{investigation}");
    let remaining = investigation["directories_remaining"].as_u64().unwrap();
    assert!(remaining > 0, "{investigation}");
    let partial = support::entries::cache_entries(env.cache());
    assert_eq!(partial.dirs.len() as u64, DIRS as u64 - remaining);
    // The next run carries on with the same work and ends where a run
    // without the cap ends.
    let finished = run(&env, &[]);
    let err = stderr(&finished);
    assert!(err.contains("Work plan loaded from cache."), "{err}");
    let report = self::report(&finished);
    assert_eq!(report["investigation"]["directories_remaining"], 0);
    // Every directory has its entry, none partial. (Which directories the
    // rounds bought follows when loops handed off, which the cap moves.)
    let finished = support::entries::cache_entries(env.cache());
    assert_eq!(finished.dir_paths(), clean.dir_paths());
    assert!(finished.dirs.values().all(|e| e["partial"] != true));
}

#[test]
fn ctrl_c_in_a_unit_and_the_next_run_resumes_the_same_work() {
    let env = agent(tree());
    let clean = clean_run(&env, "cache-clean", &["--jobs", "2"]);
    // Survey and planning answered; Ctrl-C while the first turns of the
    // first loops wait on the API.
    let extra = ["--jobs", "2", "--budget", BUDGET];
    let out = env.interrupt_while_waiting(&extra, 2, 2, std::time::Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let done = support::entries::cache_entries(env.cache()).dirs.len();
    assert!(done < DIRS, "interrupted before the end");

    let resumed = run(&env, &[]);
    assert!(stderr(&resumed).contains("Work plan loaded from cache."));
    support::entries::cache_entries(env.cache()).assert_carries_on(&clean);
}

/// `--estimate` takes the run's own decision: what it projects is what the
/// run decides first; the run's rounds then buy more with what is left.
#[test]
fn the_estimate_projects_what_the_run_does() {
    let env = agent(tree());
    let estimate = env
        .bare_cmd()
        .args(["--estimate", "--json", "--budget", BUDGET])
        .arg(env.target())
        .output()
        .unwrap();
    assert!(estimate.status.success(), "{}", stderr(&estimate));
    let estimate: Value = serde_json::from_slice(&estimate.stdout).unwrap();
    assert_eq!(estimate["budget_usd"], 0.6);
    assert_eq!(estimate["budget_binding"], true);
    assert_eq!(estimate["directories_folded"], 6);
    assert!(estimate["synthesis_levels"].is_u64(), "{estimate}");
    let text = env
        .bare_cmd()
        .args(["--estimate", "--budget", BUDGET])
        .arg(env.target())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Budget: $0.60 buys "), "{text}");
    assert!(text.contains("6 directories folded into them"), "{text}");
    // The text counts the synthesis's levels as the JSON does.
    let said = match estimate["synthesis_levels"].as_u64().unwrap() {
        0 => "synthesis)".to_string(),
        1 => "synthesis: 1 level of parts, then the verdict".to_string(),
        levels => format!("synthesis: {levels} levels of parts, then the verdict"),
    };
    assert!(text.contains(&said), "{said:?} not in {text}");
    // The high figure never passes the budget, nor --max-cost.
    let high = estimate["cost_usd"]["high"].as_f64().unwrap();
    assert!(high <= 0.6, "{estimate}");
    let capped = env
        .bare_cmd()
        .args([
            "--estimate",
            "--json",
            "--budget",
            BUDGET,
            "--max-cost",
            "0.25",
        ])
        .arg(env.target())
        .output()
        .unwrap();
    let capped: Value = serde_json::from_slice(&capped.stdout).unwrap();
    assert_eq!(capped["max_cost_usd"], 0.25);
    assert!(
        capped["cost_usd"]["high"].as_f64().unwrap() <= 0.25,
        "{capped}"
    );
    assert_eq!(capped["cost_held_by_budget"], true);

    let out = run(&env, &[]);
    let err = stderr(&out);
    let first = [
        format!("[AI] Budget $0.60: {} loops for ", estimate["loops"]),
        format!(
            "({} directories folded into them), {} directories summarised from the scan",
            estimate["directories_folded"], estimate["directories_mechanical"],
        ),
    ];
    assert_contains_all(&err, &[&first[0], &first[1]]);
    let report = report(&out);
    let coverage = &report["investigation"]["coverage"];
    let looped = coverage["investigated"].as_u64().unwrap();
    assert!(looped > estimate["loops"].as_u64().unwrap(), "{coverage}");
    assert_eq!(coverage["folded"], 6);
    assert_eq!(
        looped + 6 + coverage["mechanical"].as_u64().unwrap(),
        DIRS as u64
    );
    let cost = report["investigation"]["cost_usd"].as_f64().unwrap();
    assert!(cost <= 0.6, "{cost}");
    // Without a ceiling every directory gets its loop.
    let unbounded = env
        .bare_cmd()
        .args(["--estimate", "--json", "--fresh", "--budget", "none"])
        .arg(env.target())
        .output()
        .unwrap();
    let unbounded: Value = serde_json::from_slice(&unbounded.stdout).unwrap();
    assert_eq!(unbounded["budget_binding"], false);
    assert_eq!(unbounded["loops"], DIRS);
    assert_eq!(unbounded["directories_mechanical"], 0);
}

/// A tree too large for a tree view reaches the planner as a map of its
/// subtrees' figures, not as file names.
#[test]
fn the_planner_sees_a_large_tree_as_a_map() {
    let env = TestEnv::new();
    for d in 0..60 {
        for f in 0..40 {
            env.file(&format!("area{}/part{d:02}/f{f:02}.py", d % 3), "x = 1\n");
        }
    }
    let env = env.with_mock();
    let out = env.run_ok(&["--jobs=4", "--budget", "0.3"]);
    let planning = env.requests_of(&Pass::Planning).into_iter().next();
    let planning = planning.expect("a planning call");
    let prompt = planning.system_text();
    let tree =
        &prompt[prompt.find("## The whole tree").unwrap()..prompt.find("## File signals").unwrap()];
    assert!(tree.contains("├── area0/  [21 dirs, 800 files, "), "{tree}");
    assert!(tree.contains("Python 800]"), "{tree}");
    assert!(tree.contains("more directories  ["), "{tree}");
    assert!(!tree.contains(".py"), "no file names in a map: {tree}");
    assert!(stderr(&out).contains("[AI] Coverage: "));
}

/// A budget too small for any loop sends nothing and names the smallest
/// that buys one. That one buys a loop and leaves the rest to the scan: no
/// model read those, so the run is not `complete`, counts only what a model
/// read as investigated, and says how many were summarised from the scan
/// and what budget has a model read them; the grounding line counts no
/// summary built from the scan; an unchanged rerun says the same; the
/// rerun the note names has a model read every directory.
#[test]
fn summaries_from_the_scan_make_the_run_partial_and_say_how_to_deepen() {
    let env = agent(tree());
    let broke = report(&env.run_ok(&["--jobs=1", "--json", "--budget", "0.002"]));
    assert_eq!(env.server.request_count(), 0, "{broke}");
    assert_eq!(broke["investigation"]["status"], "partial", "{broke}");
    let note = broke["investigation"]["note"].as_str().unwrap();
    let smallest = note
        .split("(--budget ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(')'))
        .expect("the smallest budget named")
        .to_string();

    let out = env.run_ok(&["--jobs=1", "--json", "--budget", &smallest]);
    let report = self::report(&out);
    let investigation = &report["investigation"];
    assert_eq!(investigation["status"], "partial", "{investigation}");
    let coverage = &investigation["coverage"];
    let read = coverage["investigated"].as_u64().unwrap() + coverage["folded"].as_u64().unwrap();
    let mechanical = coverage["mechanical"].as_u64().unwrap();
    assert!(read >= 1 && mechanical > 0, "{investigation}");
    assert_eq!(read + mechanical, DIRS as u64);
    assert_eq!(investigation["directories_investigated"], read);
    let note = investigation["note"].as_str().unwrap();
    assert!(note.contains(&scan_note(mechanical)), "{note}");
    // The budget named is the least that buys what it says, priced as a
    // run prices it: even a fresh run has a model read every directory (on
    // a loop of its own or folded into a unit), and a cent less leaves some
    // to the scan.
    let named: f64 = note
        .split("--budget ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    let estimate_at = |budget: f64| -> Value {
        let out = env.run_ok(&[
            "--estimate",
            "--json",
            "--fresh",
            "--budget",
            &format!("{budget:.2}"),
        ]);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let estimate = estimate_at(named);
    assert_eq!(estimate["directories_mechanical"], 0, "{estimate}");
    let less = estimate_at(named - 0.01);
    assert!(
        less["directories_mechanical"].as_u64().unwrap() > 0,
        "{less}"
    );
    // Only what a model wrote is counted by the grounding.
    let grounding = &report["grounding"];
    assert!(
        grounding["citations"].as_u64().unwrap() < DIRS as u64,
        "{grounding}"
    );

    let before = env.server.request_count();
    let again = report_of(&env.run_ok(&["--jobs=1", "--json", "--budget", &smallest]));
    assert_eq!(
        env.server.request_count(),
        before,
        "an unchanged tree costs nothing"
    );
    assert_eq!(again["investigation"]["status"], "partial");
    assert_eq!(again["investigation"]["note"], investigation["note"]);

    // The rerun the note names, as written (no --fresh), keeps what was
    // paid for and has a model read the rest.
    let deeper = report_of(&env.run_ok(&["--jobs=1", "--json", "--budget", &named.to_string()]));
    let deeper = &deeper["investigation"];
    assert_eq!(deeper["coverage"]["mechanical"], 0, "{deeper}");
    assert_eq!(deeper["directories_investigated"], DIRS as u64, "{deeper}");
    assert!(deeper["cost_usd"].as_f64().unwrap() <= named, "{deeper}");
}

/// How a partial run's note begins when `mechanical` directories were
/// summarised from the scan.
fn scan_note(mechanical: u64) -> String {
    format!(
        "{mechanical} directories summarised from the scan, not read by a model; rerun with \
         --budget "
    )
}

fn report_of(output: &Output) -> Value {
    report(output)
}
