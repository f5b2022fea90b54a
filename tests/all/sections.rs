//! The synthesis's domain sections end to end: the schema offers them, what
//! the model fills reaches the JSON (`ai_sections`) and the terminal text
//! normalised, and a synthesis in levels carries its parts' sections up to
//! the report.

use crate::support;

use serde_json::{Value, json};
use support::TestEnv;
use support::agent::{Pass, Turn, system_text};
use support::mock::Reply;
use support::output::{assert_contains, assert_contains_all, stdout};

/// Every optional section, in the order the schema offers them.
const SECTION_KEYS: [&str; 12] = [
    "overall_purpose",
    "architecture",
    "components",
    "entry_points",
    "commands",
    "tech_stack",
    "datasets",
    "schema_summary",
    "period_covered",
    "themes",
    "data_quality",
    "concerns",
];

fn json_run(env: &TestEnv, extra: &[&str]) -> Value {
    let out = env.run_ok(&[&["--jobs=1", "--json"], extra].concat());
    serde_json::from_slice(&out.stdout).expect("the report is JSON")
}

/// A verdict that fills some sections, with what normalising removes: a
/// blank section, a duplicate, an empty item, a dependency on something
/// that is not a component, a `./` before a path.
fn verdict_with_sections() -> Value {
    json!({
        "brief": "A small Rust command-line tool with its guide.",
        "detailed": "The hypothesis: a CLI. Evidence: src/main.rs and Cargo.toml. \
                     Alternative: a library; set aside, there is no lib.rs.",
        "architecture": "A binary in src/ calls the engine in src/core/.",
        "overall_purpose": "   ",
        "components": [
            {"name": "cli", "path": "./src", "role": "Parses the command line.",
             "depends_on": ["core", "clap"]},
            {"name": "core", "path": "src/core/", "role": "Runs the work."},
            {"name": "Core", "role": "The same again."}
        ],
        "entry_points": [{"path": "src/main.rs", "role": "The binary."}],
        "tech_stack": ["Rust", "", "rust", "Cargo"],
        "concerns": ["The engine has no tests."]
    })
}

#[test]
fn the_synthesis_is_offered_the_sections_and_asked_to_reason() {
    let env = TestEnv::with_small_project().with_mock();
    json_run(&env, &[]);
    let synthesis = env.requests_of(&Pass::Synthesis);
    let request = synthesis.last().expect("a synthesis request");
    let submit = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "submit_report")
        .unwrap();
    let schema = &submit["input_schema"];
    let offered: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(offered[..2], ["brief", "detailed"]);
    assert_eq!(offered[2..], SECTION_KEYS);
    assert_eq!(schema["required"], json!(["brief", "detailed"]));
    let component = &schema["properties"]["components"]["items"];
    assert_eq!(
        component["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name", "path", "role", "depends_on"]
    );
    let system = system_text(&request.body);
    assert_contains_all(
        &system,
        &[
            "Form a hypothesis",
            "does anything",
            "Weigh at least one other reading",
            "not directory by directory",
        ],
    );
}

#[test]
fn the_sections_the_model_filled_reach_the_json_and_the_text() {
    let env = TestEnv::with_small_project()
        .with_agent(|a| a.submits(Pass::Synthesis, verdict_with_sections()));
    let report = json_run(&env, &[]);
    assert_eq!(
        report["ai_sections"],
        json!({
            "architecture": "A binary in src/ calls the engine in src/core/.",
            "components": [
                {"name": "cli", "path": "src", "role": "Parses the command line.",
                 "depends_on": ["core"], "verified": true},
                {"name": "core", "path": "src/core", "role": "Runs the work.",
                 "verified": true}
            ],
            "entry_points": [{"path": "src/main.rs", "role": "The binary.", "verified": true}],
            "tech_stack": ["Rust", "Cargo"],
            "concerns": ["The engine has no tests."]
        })
    );
    // The saved synthesis is reused by the next run, sections and all.
    let text = stdout(&env.run_ok_from_cache(&["--jobs=1"], "the synthesis"));
    insta::assert_snapshot!(sections_in(&text));
}

/// The paths of the domain sections are checked against the tree like any
/// a model wrote: each gets `verified`, a found one its target-relative
/// spelling, the grounding counts them and lists those not found, and the
/// Markdown report links only the found ones.
#[test]
fn section_paths_are_grounded_and_only_found_ones_linked() {
    let env = TestEnv::with_small_project().with_agent(|a| {
        a.submits(
            Pass::Synthesis,
            json!({
                "brief": "A small Rust tool.",
                "detailed": "A binary and its engine.",
                "components": [
                    {"name": "engine", "path": "core/engine.rs", "role": "Runs."},
                    {"name": "plugins", "path": "src/plugins", "role": "Invented."}
                ],
                "entry_points": [{"path": "bin/ghost.rs", "role": "Invented too."}],
                "datasets": [{"name": "guide", "path": "docs", "description": "Prose."}]
            }),
        )
    });
    let report = json_run(&env, &[]);
    let sections = &report["ai_sections"];
    let components = sections["components"].as_array().unwrap();
    assert_eq!(components[0]["path"], "src/core/engine.rs");
    assert_eq!(components[0]["verified"], true);
    assert_eq!(components[1]["path"], "src/plugins");
    assert_eq!(components[1]["verified"], false);
    assert_eq!(sections["entry_points"][0]["verified"], false);
    assert_eq!(sections["datasets"][0]["verified"], true);
    let unresolved: Vec<(&str, &str)> = report["grounding"]["unresolved"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["cited_in"] == "ai_sections")
        .map(|u| (u["citation"].as_str().unwrap(), u["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        unresolved,
        [("src/plugins", "path"), ("bin/ghost.rs", "path")]
    );

    let markdown = stdout(&env.run_ok(&["--jobs=1", "--format", "markdown"]));
    assert_contains_all(
        &markdown,
        &[
            "**engine** ([`src/core/engine.rs`](src/core/engine.rs))",
            "**guide** ([`docs`](docs))",
            "**plugins** (`src/plugins`, not found in the tree)",
        ],
    );
    assert!(!markdown.contains("](src/plugins)"), "{markdown}");
    assert_contains(&markdown, "**bin/ghost.rs** (not found in the tree)");
    let html = stdout(&env.run_ok(&["--jobs=1", "--format", "html"]));
    assert_eq!(html.matches("not found in the tree").count(), 2, "{html}");
}

/// The domain sections of a terminal report: each `>> TITLE (AI)` block of
/// a section title, with its rule and indented lines, wherever the layout
/// puts them.
fn sections_in(report: &str) -> String {
    let titles: Vec<String> = [
        "OVERALL PURPOSE",
        "ARCHITECTURE",
        "COMPONENTS",
        "ENTRY POINTS",
        "TECH STACK",
        "DATASETS",
        "SCHEMA",
        "PERIOD COVERED",
        "THEMES",
        "DATA QUALITY",
        "CONCERNS",
    ]
    .iter()
    .map(|title| format!(">> {title} (AI)"))
    .collect();
    let mut blocks = Vec::new();
    let mut lines = report.lines();
    while let Some(line) = lines.next() {
        if !titles.iter().any(|title| title == line) {
            continue;
        }
        let mut block = vec![line.to_string()];
        for body in lines.by_ref() {
            if !(body.starts_with("---") || body.starts_with("  ")) {
                break;
            }
            block.push(body.to_string());
        }
        blocks.push(block.join("\n"));
    }
    blocks.join("\n\n")
}

#[test]
fn a_report_without_sections_has_an_empty_object_and_no_section_text() {
    let env = TestEnv::with_small_project().with_mock();
    let report = json_run(&env, &[]);
    assert_eq!(report["ai_sections"], json!({}));
    let text = stdout(&env.run_ok(&["--jobs=1"]));
    // The brief's section is the only one written by the model.
    assert_eq!(text.matches(" (AI)\n").count(), 1, "{text}");
    assert_contains(&text, ">> SUMMARY (AI)\n");
}

/// In levels, each part fills its own components and tech stack; the
/// verdict fills none. The verdict is shown the parts' sections, and the
/// report carries them. (`--language` reaches each part's prompt too.)
#[test]
fn a_synthesis_in_levels_carries_the_parts_sections_to_the_report() {
    let env = crate::budget::tree().with_agent(|a| {
        a.summary_chars(1_200)
            .script(Pass::Synthesis, |turn: &Turn<'_>| {
                let system = system_text(turn.body);
                let input = match part_of(&system) {
                    Some(part) => {
                        let name = format!("part {}", part.split(',').next().unwrap());
                        json!({
                            "brief": format!("Part {part}."),
                            "detailed": "Rust sources.",
                            "components": [
                                {"name": name, "role": "Some of the sources.",
                                 "depends_on": ["shared"]},
                                {"name": "shared", "role": "Used by every part."}
                            ],
                            "tech_stack": ["Rust"]
                        })
                    }
                    None => json!({"brief": "The verdict.", "detailed": "From the parts."}),
                };
                Reply::tool_use("submit_report", input)
            })
    });
    let report = json_run(
        &env,
        &["--budget", crate::budget::BUDGET, "--language", "Deutsch"],
    );
    let synthesis = env.requests_of(&Pass::Synthesis);
    let groups = synthesis
        .iter()
        .filter(|r| crate::budget::is_group(r))
        .count();
    assert!(groups >= 2, "no synthesis in levels: {groups} groups");
    // Each part, and the verdict, is written in the run's language.
    let rule = "## Language\nWrite every text you hand in for people to read in Deutsch:";
    for request in &synthesis {
        assert!(
            request.system_text().contains(rule),
            "{}",
            request.system_text()
        );
    }
    let verdict = synthesis.last().unwrap();
    assert!(!crate::budget::is_group(verdict));
    assert!(
        verdict
            .system_text()
            .contains("Components: {\"name\":\"part "),
        "the verdict is shown the parts' sections:\n{}",
        verdict.system_text()
    );

    let sections = &report["ai_sections"];
    assert_eq!(report["ai_brief"], "The verdict.");
    assert_eq!(sections["tech_stack"], json!(["Rust"]));
    let components = sections["components"].as_array().unwrap();
    let names: Vec<&str> = components
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"shared"), "{names:?}");
    assert_eq!(names.iter().filter(|n| **n == "shared").count(), 1);
    assert!(
        names.iter().filter(|n| n.starts_with("part ")).count() >= 2,
        "{names:?}"
    );
    for component in components.iter().filter(|c| c["name"] != "shared") {
        assert_eq!(component["depends_on"], json!(["shared"]), "{component}");
    }
}

/// The part a synthesis group's prompt is about; `None` for the verdict.
fn part_of(system: &str) -> Option<String> {
    let at = system.find("\n## This part\n")? + "\n## This part\n".len();
    Some(system[at..].lines().next()?.to_string())
}
