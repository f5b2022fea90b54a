//! Grounding end to end: agents that cite real files (by bare name and by
//! full path), correct one wrong path when told, and invent a file and a
//! symbol. The real citations are verified and rewritten, the invented ones
//! marked, an invented critical flag shown as info, and the agents were told
//! about the missing paths in their tool results.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{AgentEnv, Pass, Turn, file_entry_call, tool_use};
use support::mock::{MockBlock, Reply};
use support::output::{assert_contains, item_where, rows};

/// A small Rust project whose engine defines `Engine::start`.
fn project() -> TestEnv {
    let env = TestEnv::new();
    env.files(&[
        ("README.md", "# Demo\n"),
        ("Cargo.toml", "[package]\nname = \"demo\"\n"),
        (
            "src/main.rs",
            "mod core;\nfn main() { core::engine::Engine.start(); }\n",
        ),
        (
            "src/core/engine.rs",
            "pub struct Engine;\nimpl Engine {\n    pub fn start(&self) {}\n}\n",
        ),
        ("src/core/model.rs", "pub struct Model;\n"),
        ("docs/guide.md", "# Guide\n"),
    ]);
    env
}

/// A file entry for `rel` (under `target`) with `summary`.
fn file_entry(target: &Path, rel: &str, summary: &str) -> MockBlock {
    file_entry_call(&target.join(rel), rel, 10, summary)
}

const FLAG_FINDING: &str = "start() runs without a guard.";
const CORE_SUMMARY: &str = "Holds engine.rs, model.rs and turbo.rs.";

/// `src/core`: caches its two files (citing each other by bare name and
/// by full path) and flags a mistyped path; told it is missing, flags the
/// right one and submits a report naming an invented file; told again,
/// submits the same report.
fn core_loop(turn: &Turn<'_>) -> Reply {
    match turn.turn {
        1 => Reply::blocks(vec![
            file_entry(
                turn.target,
                "src/core/engine.rs",
                "Defines `Engine::start`, which main.rs calls.",
            ),
            file_entry(
                turn.target,
                "src/core/model.rs",
                "Holds `Model`, next to src/core/engine.rs.",
            ),
            tool_use(
                "flag",
                json!({"path": "src/core/engin.rs", "finding": FLAG_FINDING, "severity": "concern"}),
            ),
        ]),
        2 => Reply::blocks(vec![
            tool_use(
                "flag",
                json!({"path": "src/core/engine.rs:3", "finding": FLAG_FINDING, "severity": "concern"}),
            ),
            tool_use(
                "submit_report",
                json!({"summary": CORE_SUMMARY, "completeness": 0.9}),
            ),
        ]),
        _ => Reply::tool_use(
            "submit_report",
            json!({"summary": CORE_SUMMARY, "completeness": 0.9}),
        ),
    }
}

fn agent_env() -> AgentEnv {
    project().with_agent(|agent| {
        agent
            .dir_script("src/core", core_loop)
            .flag("src", "src/backdoor.py", "critical", "Opens a reverse shell.")
            .flag("src", "main.rs", "info", "The entry point.")
            .submits(Pass::Synthesis, json!({
                "brief": "Start at main.rs; the engine in `./src/core/engine.rs:2` calls `Engine::start`.",
                "detailed": "See src\\core\\model.rs. turbo.rs and `Engine::frobnicate` do the heavy lifting.",
            }))
    })
}

fn json_report(env: &TestEnv) -> Value {
    let out = env.run_ok(&["--jobs=1", "--json"]);
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn canonical(env: &TestEnv) -> PathBuf {
    std::fs::canonicalize(env.target()).unwrap()
}

/// The tool results a dir loop's requests carried, in order.
fn results_in(env: &AgentEnv, rel: &str) -> Vec<(String, bool)> {
    env.passes()
        .into_iter()
        .filter(|(pass, _)| *pass == Pass::Dir(rel.to_string()))
        .flat_map(|(_, request)| request.tool_results())
        .map(|result| (result.content, result.is_error))
        .collect()
}

#[test]
fn real_citations_are_verified_and_invented_ones_marked() {
    let env = agent_env();
    let report = json_report(&env);
    let grounding = &report["grounding"];

    assert_eq!(
        rows(
            &grounding["unresolved"],
            &["citation", "kind", "cited_in", "entry"]
        ),
        [
            json!(["turbo.rs", "path", "dir_summary", "src/core"]),
            json!(["src/backdoor.py", "path", "flag", "src/backdoor.py"]),
            json!(["turbo.rs", "path", "ai_detailed", null]),
            json!(["Engine::frobnicate", "symbol", "ai_detailed", null]),
        ],
        "{grounding:#}"
    );
    let citations = grounding["citations"].as_u64().unwrap();
    assert_eq!(grounding["resolved"].as_u64().unwrap(), citations - 4);
    assert!(citations >= 15, "{grounding:#}");
    assert_eq!(grounding["symbols"], json!({"citations": 3, "resolved": 2}));
    assert_eq!(grounding["unchecked"], 0);

    // The synthesis names real files by bare name, `./` path with a line
    // and Windows separators: each is rewritten to its place in the tree.
    assert_eq!(
        report["ai_brief"],
        "Start at src/main.rs; the engine in `src/core/engine.rs:2` calls `Engine::start`."
    );
    assert_eq!(
        report["ai_detailed"],
        "See src/core/model.rs. turbo.rs and `Engine::frobnicate` do the heavy lifting."
    );
}

#[test]
fn flags_are_verified_rewritten_and_an_invented_critical_one_is_info() {
    let env = agent_env();
    let report = json_report(&env);
    let flags = report["flags"].as_array().unwrap();
    let by_finding = |finding: &str| item_where(&report["flags"], "finding", finding);

    let invented = by_finding("Opens a reverse shell.");
    assert_eq!(invented["path"], "src/backdoor.py");
    assert_eq!(invented["severity"], "info");
    assert_eq!(invented["original_severity"], "critical");
    assert_eq!(invented["verified"], false);
    assert_contains(invented["note"].as_str().unwrap(), "not found in the tree");

    let bare = by_finding("The entry point.");
    assert_eq!(bare["path"], "src/main.rs", "a bare name is rewritten");
    assert_eq!(bare["verified"], true);

    // The mistyped path was corrected in the loop: one flag, on the real
    // file, its line split off.
    let guarded: Vec<&Value> = flags
        .iter()
        .filter(|f| f["finding"] == FLAG_FINDING)
        .collect();
    assert_eq!(guarded.len(), 1, "{flags:#?}");
    assert_eq!(guarded[0]["path"], "src/core/engine.rs");
    assert_eq!(guarded[0]["line"], 3);
    assert_eq!(guarded[0]["severity"], "concern");
    assert_eq!(guarded[0]["verified"], true);
    assert!(flags.iter().all(|f| f["severity"] != "critical"));
}

#[test]
fn the_agents_are_told_about_missing_paths_once_per_loop() {
    let env = agent_env();
    json_report(&env);

    let core = results_in(&env, "src/core");
    let held: Vec<&(String, bool)> = core
        .iter()
        .filter(|(content, _)| content.starts_with("Not "))
        .collect();
    assert_eq!(held.len(), 2, "{core:#?}");
    assert!(
        held[0].1
            && held[0].0.contains("Not recorded yet")
            && held[0].0.contains("'src/core/engin.rs'")
    );
    assert!(
        held[1].1 && held[1].0.contains("Not accepted yet") && held[1].0.contains("'turbo.rs'")
    );
    assert!(
        !held[1].0.contains("engine.rs'"),
        "real files are not named"
    );
    // The third submit_report was accepted: the loop ended after 3 turns.
    let core_requests = env
        .passes()
        .into_iter()
        .filter(|(pass, _)| *pass == Pass::Dir("src/core".into()))
        .count();
    assert_eq!(core_requests, 3);

    let src = results_in(&env, "src");
    assert!(
        src.iter()
            .any(|(content, error)| *error && content.contains("'src/backdoor.py'")),
        "{src:#?}"
    );
    // Loops whose citations all exist are never held up.
    for rel in [".", "docs"] {
        assert!(
            results_in(&env, rel)
                .iter()
                .all(|(c, e)| !e && !c.starts_with("Not ")),
            "{rel}"
        );
    }
}

#[test]
fn the_terminal_report_marks_flags_and_closes_with_the_grounding_line() {
    let env = agent_env();
    let first = json_report(&env);

    // A resumed run makes no request and is grounded all the same.
    let out = env.run_ok_from_cache(&["--jobs=1"], "a directory");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        support::output::squashed(&text).contains(
            "src/backdoor.py (not found in the tree) [INFO ] Opens a reverse shell. Its path was \
             not found in the tree, so it is shown as info; the agent rated it critical."
        ),
        "{text}"
    );
    assert!(
        text.contains("  src/core/engine.rs\n    [CONCERN ] line 3: "),
        "{text}"
    );
    let line = format!(
        "  Grounding: {} of {} citations found in the tree",
        first["grounding"]["resolved"], first["grounding"]["citations"]
    );
    assert!(
        text.trim_end().ends_with(&format!(
            "{line}\n\n{0}\n  End of report.\n{0}",
            "=".repeat(60)
        )),
        "{text}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(line.trim()), "{err}");

    // The cache keeps what the agents wrote: grounding caches nothing.
    let flags = std::fs::read_to_string(flags_file(&env)).unwrap();
    assert!(flags.contains("\"severity\":\"critical\""), "{flags}");
    assert!(!flags.contains("verified"), "{flags}");
}

/// The investigation's `flags.jsonl`.
fn flags_file(env: &TestEnv) -> PathBuf {
    let root = luminos::cache::CacheRoot::open(env.cache()).unwrap();
    let id = root.investigation_id(&canonical(env), false).unwrap();
    root.path().join(id.id).join("flags.jsonl")
}

#[test]
fn the_default_agents_are_fully_grounded() {
    // The parity fixture with the scripted agents' plain summaries: every
    // citation they make is a real file.
    let env = TestEnv::with_small_project();
    let env = env.with_mock();
    let report = json_report(&env);
    let grounding = &report["grounding"];
    assert!(
        grounding["citations"].as_u64().unwrap() > 0,
        "{grounding:#}"
    );
    assert_eq!(
        grounding["resolved"], grounding["citations"],
        "{grounding:#}"
    );
    assert_eq!(grounding["unresolved"], json!([]));
}

/// A bare file name that three files of the tree have: flagged in the loop
/// of one of their directories, it is that directory's file (written from
/// the root when recorded, as `write_cache` reads it) and verified; flagged
/// by the synthesis, which has no directory, it names no one file, so it
/// is not verified and is shown as info.
#[test]
fn an_ambiguous_bare_name_is_not_verified() {
    let env = TestEnv::new();
    env.files(&[
        ("README.md", "# Three serdes\n"),
        ("a/serde.rs", "pub fn a() {}\n"),
        ("b/serde.rs", "pub fn b() {}\n"),
        ("c/serde.rs", "pub fn c() {}\n"),
    ]);
    // The synthesis flags the bare name too (it has no directory).
    let env = env.with_agent(|agent| {
        agent
            .flag("b", "serde.rs:1", "concern", "Serializes without a schema.")
            .flag("b", "README.md", "info", "Names three crates.")
            .pass_script(Pass::Synthesis, |turn| match turn.turn {
                1 => Reply::blocks(vec![tool_use(
                    "flag",
                    json!({"path": "serde.rs", "finding": "Unsafe deserialization.", "severity": "critical"}),
                )]),
                _ => Reply::tool_use(
                    "submit_report",
                    json!({"brief": "Three small crates.", "detailed": "Each has a serde.rs."}),
                ),
            })
    });
    let report = json_report(&env);
    let by_finding = |finding: &str| item_where(&report["flags"], "finding", finding);
    let in_b = by_finding("Serializes without a schema.");
    assert_eq!(in_b["path"], "b/serde.rs", "{in_b}");
    assert_eq!(in_b["line"], 1);
    assert_eq!(in_b["verified"], true);
    assert_eq!(in_b["severity"], "concern");
    // A name the root has is the root's.
    let readme = by_finding("Names three crates.");
    assert_eq!(readme["path"], "README.md");
    assert_eq!(readme["verified"], true);
    let bare = by_finding("Unsafe deserialization.");
    assert_eq!(bare["path"], "serde.rs", "{bare}");
    assert_eq!(bare["verified"], false, "{bare}");
    assert_eq!(bare["severity"], "info");
    assert_eq!(bare["original_severity"], "critical");
    assert!(
        bare["note"]
            .as_str()
            .unwrap()
            .contains("names 3 places in the tree"),
        "{bare}"
    );
}

/// Directory names that prose would split or reject (`|`, a backtick, `]`,
/// `-->`, spaces, quotes, unicode punctuation): flags on files that exist
/// under them are verified and keep their severity, in the flag's path
/// and in the synthesis's text alike; a file that does not exist under
/// such a directory is still not found.
#[test]
fn paths_whose_directories_hold_any_characters_are_found() {
    let dirs = [
        "a|b",
        "core`x`",
        "end]-->B",
        "my notes",
        "it's \"quoted\"",
        "naïve «café» ✓",
    ];
    let env = TestEnv::new();
    env.file("README.md", "# Odd names\n");
    for dir in dirs {
        env.file(&format!("{dir}/f.py"), "def f():\n    return 1\n");
    }
    let detailed = format!(
        "See {}/f.py and `{}/f.py` for the two halves; {}/f.py:2 returns one.",
        dirs[0], dirs[3], dirs[5]
    );
    let env = env.with_agent(move |agent| {
        let agent = dirs.iter().fold(agent, |agent, dir| {
            agent.flag(
                ".",
                &format!("{dir}/f.py"),
                "critical",
                &format!("Odd {dir}."),
            )
        });
        agent
            .flag(".", "a|b/missing.py", "critical", "Not there.")
            .submits(
                Pass::Synthesis,
                json!({"brief": "Odd names.", "detailed": detailed}),
            )
    });
    let report = json_report(&env);
    for dir in dirs {
        let flag = item_where(&report["flags"], "finding", &format!("Odd {dir}."));
        assert_eq!(flag["path"], format!("{dir}/f.py"), "{flag}");
        assert_eq!(flag["verified"], true, "{flag}");
        assert_eq!(flag["severity"], "critical", "{flag}");
    }
    let missing = item_where(&report["flags"], "finding", "Not there.");
    assert_eq!(missing["verified"], false, "{missing}");
    assert_eq!(missing["severity"], "info", "{missing}");
    let grounding = &report["grounding"];
    let unresolved = grounding["unresolved"].to_string();
    for dir in dirs {
        assert!(!unresolved.contains(&format!("{dir}/f.py")), "{grounding}");
    }
}
