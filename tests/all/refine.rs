//! `--refine` and `--refine-depth` against the mock Messages API: what a
//! round is sent (the report, the uncertain summaries, the flags whose path
//! was not found, the summaries at odds with a finding), when the rounds
//! stop (the depth, a round that read nothing, nothing to settle, the
//! budget), what the report says changed, and a resumed run that pays for
//! no round twice.

use luminos::ai::api::cost::Pricing;
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::agent::{AgentEnv, MockAgent, Pass, Turn, worst_case_usage};
use crate::support::mock::{RecordedRequest, Reply};
use crate::support::output::{assert_contains, assert_contains_all, stderr, stdout};

/// The small project, investigated by agents that leave something to
/// settle: `docs` half read (completeness 0.5), a flag on a file that does
/// not exist, and a critical finding in `src/core` that the summary of
/// `src` does not mention.
fn unsure(agent: MockAgent) -> MockAgent {
    agent
        .dir_script("docs", |_turn: &Turn<'_>| {
            Reply::tool_use(
                "submit_report",
                json!({"summary": "A guide, skimmed.", "completeness": 0.5}),
            )
        })
        .flag(
            "src/core",
            "src/core/ghost.rs",
            "concern",
            "Ghost code runs at startup.",
        )
        .flag(
            "src/core",
            "src/core/engine.rs",
            "critical",
            "run() ignores every error.",
        )
}

/// A refinement that reads engine.rs, then hands in `report` (with the
/// flag lists given).
fn reads_then_reports(report: Value) -> impl Fn(&Turn<'_>) -> Reply + Send + Sync {
    move |turn: &Turn<'_>| match turn.turn {
        1 => Reply::tool_use("read_file", json!({"path": "src/core/engine.rs"})),
        _ => Reply::tool_use("submit_report", report.clone()),
    }
}

fn refined_report() -> Value {
    json!({
        "brief": "Refined: a demo whose engine swallows errors.",
        "detailed": "Refined: src/core/engine.rs holds run(); ghost.rs does not exist.",
        "flags_added": [{"path": "src/core/engine.rs", "finding": "run() returns nothing to check.",
                         "severity": "concern"}],
        "flags_withdrawn": ["F1"]
    })
}

fn env_with(build: impl FnOnce(MockAgent) -> MockAgent) -> AgentEnv {
    TestEnv::with_small_project().with_agent(build)
}

/// `luminos --jobs=1 --json [extra] TARGET`, which must succeed; its report.
fn report(env: &AgentEnv, extra: &[&str]) -> Value {
    let out = env.run_ok(&[&["--jobs=1", "--json"], extra].concat());
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn rounds(env: &AgentEnv) -> Vec<RecordedRequest> {
    env.requests_of(&Pass::Refine)
}

/// The brief the scripted synthesis writes: the report before refinement.
const SYNTHESIS_BRIEF: &str = "Scripted brief over 4 directory summaries.";

/// No round was kept, the refinement stopped for `why`, and the report
/// stands as the synthesis wrote it.
#[track_caller]
fn assert_no_round(report: &Value, why: &str) {
    let refinement = &report["investigation"]["refinement"];
    assert_eq!(refinement["rounds"], 0);
    assert_eq!(refinement["stopped"], why);
    assert_eq!(report["ai_brief"], SYNTHESIS_BRIEF);
}

#[test]
fn a_round_is_sent_what_is_unsure_and_the_report_shows_what_changed() {
    let env = env_with(|agent| {
        unsure(agent).pass_script(Pass::Refine, reads_then_reports(refined_report()))
    });
    let report = report(&env, &["--refine"]);

    let requests = rounds(&env);
    assert_eq!(requests.len(), 2, "one round: a read, then the report");
    let system = requests[0].system_text();
    for sent in [
        // The report being refined.
        SYNTHESIS_BRIEF,
        "<untrusted-data source=\"the report being refined\"",
        // The summary its author was unsure of.
        "- docs/ (completeness 0.50): A guide, skimmed.",
        // The flag whose path was not found, by id.
        "F1 [concern] src/core/ghost.rs: Ghost code runs at startup.",
        "<untrusted-data source=\"flags whose path was not found\"",
        // The summary at odds with a finding.
        "- The summary of src/ does not mention src/core/, where a critical finding was raised \
         (src/core/engine.rs: run() ignores every error.)",
        "## Untrusted data",
        "round 1",
    ] {
        assert!(system.contains(sent), "no {sent:?} in\n{system}");
    }
    assert_eq!(
        requests[0].tool_names(),
        luminos::ai::tools::names(luminos::ai::tools::Toolbox::Refine)
    );
    let read = &requests[1].tool_results()[0];
    assert!(!read.is_error && read.content.contains("pub fn run() {}"));

    // The report is the refined one, with the flags changed.
    assert_eq!(
        report["ai_brief"],
        "Refined: a demo whose engine swallows errors."
    );
    let flags = report["flags"].as_array().unwrap();
    let findings: Vec<&str> = flags
        .iter()
        .map(|f| f["finding"].as_str().unwrap())
        .collect();
    assert!(
        !findings.contains(&"Ghost code runs at startup."),
        "{findings:?}"
    );
    assert!(
        findings.contains(&"run() returns nothing to check."),
        "{findings:?}"
    );
    assert!(
        findings.contains(&"run() ignores every error."),
        "{findings:?}"
    );
    let added = flags
        .iter()
        .find(|f| f["finding"] == "run() returns nothing to check.")
        .unwrap();
    assert_eq!(added["verified"], true);

    let refinement = &report["investigation"]["refinement"];
    assert_eq!(refinement["rounds"], 1);
    assert_eq!(refinement["rounds_reused"], 0);
    assert_eq!(refinement["stopped"], "depth");
    assert_eq!(refinement["brief_changed"], true);
    assert_eq!(refinement["detailed_changed"], true);
    assert_eq!(refinement["flags_added"][0]["path"], "src/core/engine.rs");
    assert_eq!(
        refinement["flags_withdrawn"][0]["path"],
        "src/core/ghost.rs"
    );
    let cost = refinement["cost_usd"].as_f64().unwrap();
    let pricing = Pricing::for_model("claude-sonnet-5-5");
    let billed: f64 = requests
        .iter()
        .map(|r| pricing.cost(&r.reported_usage.unwrap()))
        .sum();
    assert!(
        cost > 0.0 && (cost - billed).abs() < 1e-9,
        "{cost} {billed}"
    );
    // And the run's cost includes it.
    assert!(report["investigation"]["cost_usd"].as_f64().unwrap() >= cost);
    // flags.jsonl keeps what the agents said.
    let recorded = std::fs::read_dir(env.cache())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path().join("flags.jsonl"))
        .find(|p| p.exists())
        .unwrap();
    let recorded = std::fs::read_to_string(recorded).unwrap();
    assert!(recorded.contains("Ghost code runs at startup."));
    assert!(!recorded.contains("run() returns nothing to check."));
    env.server.assert_no_violations();
}

#[test]
fn a_resumed_run_pays_for_no_round_twice_and_says_what_changed() {
    let env = env_with(|agent| {
        unsure(agent).pass_script(Pass::Refine, reads_then_reports(refined_report()))
    });
    report(&env, &["--refine"]);
    let before = env.server.request_count();

    let out = env.run_ok(&["--jobs=1", "--refine"]);
    assert_eq!(
        env.server.request_count(),
        before,
        "a request was sent again"
    );
    let text = crate::support::output::squashed(&stdout(&out));
    assert_contains_all(
        &text,
        &[
            "Refined: a demo whose engine swallows errors.",
            "Refinement: 1 round, from the cache (the rounds asked for were done); the brief \
             and the detailed analysis changed; 1 flag added, 1 withdrawn; $0.0000.",
        ],
    );
    assert!(stderr(&out).contains("Refinement: 1 round loaded from cache."));

    // Without --refine, the report is the synthesis's, and says nothing of it.
    let plain = report(&env, &[]);
    assert_eq!(plain["ai_brief"], SYNTHESIS_BRIEF);
    assert!(plain["investigation"].get("refinement").is_none());
    assert_eq!(env.server.request_count(), before);
}

#[test]
fn a_round_that_reads_nothing_ends_the_refinement() {
    let env = env_with(|agent| {
        unsure(agent).pass_script(Pass::Refine, |_turn: &Turn<'_>| {
            Reply::tool_use(
                "submit_report",
                json!({"brief": "Same.", "detailed": "Same, in detail.", "flags_added": [],
                       "flags_withdrawn": []}),
            )
        })
    });
    let report = report(&env, &["--refine-depth", "3"]);
    assert_eq!(rounds(&env).len(), 1);
    let refinement = &report["investigation"]["refinement"];
    assert_eq!(refinement["rounds"], 1);
    assert_eq!(refinement["stopped"], "no_new_reads");
    assert_eq!(report["ai_brief"], "Same.");
}

#[test]
fn refine_depth_bounds_the_rounds_and_each_round_starts_from_the_last() {
    let env = env_with(|agent| {
        unsure(agent).pass_script(Pass::Refine, |turn: &Turn<'_>| {
            let round = if turn.body["system"].to_string().contains("(round 2)") {
                2
            } else {
                1
            };
            match turn.turn {
                1 => Reply::tool_use("read_file", json!({"path": "README.md"})),
                _ => Reply::tool_use(
                    "submit_report",
                    json!({"brief": format!("Brief of round {round}."),
                           "detailed": format!("Detail of round {round}."),
                           "flags_added": [], "flags_withdrawn": []}),
                ),
            }
        })
    });
    let report = report(&env, &["--refine-depth", "2"]);
    let requests = rounds(&env);
    assert_eq!(requests.len(), 4, "two rounds of two turns");
    assert!(requests[2].system_text().contains("(round 2)"));
    assert!(requests[2].system_text().contains("Brief of round 1."));
    assert_eq!(report["ai_brief"], "Brief of round 2.");
    let refinement = &report["investigation"]["refinement"];
    assert_eq!(refinement["rounds"], 2);
    assert_eq!(refinement["stopped"], "depth");

    // Asking for a third round later pays for that one only.
    let before = env.server.request_count();
    let report = self::report(&env, &["--refine-depth", "3"]);
    assert_eq!(env.server.request_count(), before + 2);
    let refinement = &report["investigation"]["refinement"];
    assert_eq!(
        (
            refinement["rounds"].as_u64(),
            refinement["rounds_reused"].as_u64()
        ),
        (Some(3), Some(2))
    );
}

#[test]
fn nothing_to_settle_sends_nothing() {
    let env = TestEnv::with_small_project().with_mock();
    let report = report(&env, &["--refine"]);
    assert!(rounds(&env).is_empty());
    assert_no_round(&report, "nothing_to_settle");
}

/// Each refinement reply costs its worst case and never hands in a report:
/// the refinement ends when the budget does, and the run's bill stays
/// within it.
#[test]
fn the_refinement_never_takes_the_run_past_its_budget() {
    let env = env_with(|agent| {
        unsure(agent).pass_script(Pass::Refine, |turn: &Turn<'_>| {
            Reply::tool_use("read_file", json!({"path": "README.md"}))
                .with_usage(worst_case_usage(turn.body))
        })
    });
    let report = report(&env, &["--refine", "--budget", "1"]);
    let pricing = Pricing::for_model("claude-sonnet-5-5");
    let billed: f64 = env
        .server
        .requests()
        .iter()
        .map(|r| pricing.cost(&r.reported_usage.unwrap()))
        .sum();
    assert!(billed <= 1.0, "billed ${billed}");
    assert!(rounds(&env).len() >= 2);
    assert_no_round(&report, "budget");
    assert_eq!(report["investigation"]["status"], "complete");
}

#[test]
fn without_money_left_the_refinement_is_skipped_with_a_note() {
    // The synthesis reports a bill that leaves less than one request of
    // the refinement could cost.
    let env = env_with(|agent| {
        unsure(agent).usage(
            Pass::Synthesis,
            luminos::ai::api::Usage {
                input_tokens: 245_000,
                output_tokens: 0,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 0,
                cache_creation_1h_input_tokens: None,
            },
        )
    });
    let out = env.run_ok(&["--jobs=1", "--refine", "--budget", "0.5"]);
    assert!(rounds(&env).is_empty());
    let text = stdout(&out);
    assert_contains(
        &text,
        "  Refinement: none (the budget could not pay for more).",
    );
}

/// With `--batch` the rounds go through the Message Batches API like every
/// other request, at batch prices.
#[test]
fn with_batch_the_rounds_go_in_batches() {
    let env = env_with(|agent| {
        unsure(agent).pass_script(Pass::Refine, reads_then_reports(refined_report()))
    });
    let out = env
        .cmd()
        .env("LUMINOS_BATCH_POLL_MS", "5")
        .args(["--json", "--batch", "--refine"])
        .arg(env.target())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let requests = rounds(&env);
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.batch.is_some()), "not batched");
    assert_eq!(
        report["ai_brief"],
        "Refined: a demo whose engine swallows errors."
    );
    let refinement = &report["investigation"]["refinement"];
    assert_eq!(refinement["rounds"], 1);
    // At batch prices: half of every rate, cache writes at the 1-hour one.
    let billed = crate::batch::priced(&requests, "claude-sonnet-5-5", true);
    let cost = refinement["cost_usd"].as_f64().unwrap();
    assert!((cost - billed).abs() < 1e-9, "{cost} {billed}");
}

/// The domain sections the synthesis filled are part of the report a round
/// refines: it sees them, may rewrite them, and the report says so; and a
/// round writes in `--language`, as the synthesis does.
#[test]
fn the_sections_are_refined_with_the_report_in_its_language() {
    let env = env_with(|agent| {
        unsure(agent)
            .submits(
                Pass::Synthesis,
                json!({"brief": "Tax papers.", "detailed": "Returns by year.",
                       "themes": ["Tax returns"]}),
            )
            .pass_script(
                Pass::Refine,
                reads_then_reports(json!({
                    "brief": "Tax papers.", "detailed": "Returns by year.",
                    "themes": ["Tax returns", "Invoices"],
                    "flags_added": [], "flags_withdrawn": []
                })),
            )
    });
    let report = report(&env, &["--refine", "--language", "Français"]);
    let system = rounds(&env)[0].system_text();
    assert_contains(&system, "Sections:\nThemes: Tax returns");
    assert!(
        system
            .contains("## Language\nWrite every text you hand in for people to read in Français:"),
        "{system}"
    );
    assert_eq!(report["investigation"]["language"], "Français");
    assert_eq!(
        report["ai_sections"]["themes"],
        json!(["Tax returns", "Invoices"])
    );
    let refinement = &report["investigation"]["refinement"];
    assert_eq!(refinement["sections_changed"], true);
    assert_eq!(refinement["brief_changed"], false);
}
