//! `--format agents` through the real binary: an `AGENTS.md` for the
//! target, written from an investigation against the mock whose root loop
//! records the commands its files give and whose synthesis collects them
//! (as a model does, from the summaries it is shown), picked by `-o
//! AGENTS.md`; at most 150 lines, every path in backticks in the tree, each
//! command naming the file it came from; and the short file of a tree that
//! is not code.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::agent::{AgentEnv, Pass, system_text, tool_use};
use crate::support::mock::Reply;
use crate::support::output::stderr;

/// The small project, with the files a project gives its commands in.
fn project() -> TestEnv {
    let env = TestEnv::with_small_project();
    env.file("Makefile", "test:\n\tcargo test\n");
    env.file(
        "README.md",
        "# Demo\n\nBuild with `cargo build --release`; run `cargo run -- --help`.\n",
    );
    env
}

/// The commands a summary line of the synthesis's prompt lists:
/// `Commands: make test (test; from Makefile) | ...`.
fn listed_commands(system: &str) -> Vec<Value> {
    system
        .lines()
        .filter_map(|line| line.strip_prefix("Commands: "))
        .flat_map(|line| line.split(" | "))
        .filter_map(|item| {
            let (command, rest) = item.rsplit_once(" (")?;
            let rest = rest.strip_suffix(')')?;
            let (purpose, source) = match rest.split_once("; from ") {
                Some((purpose, source)) => (purpose, source),
                None => ("", rest.strip_prefix("from ")?),
            };
            Some(json!({"command": command, "purpose": purpose, "source": source}))
        })
        .collect()
}

/// The project investigated by an agent whose root loop records the
/// commands of the Makefile and the README, and whose synthesis collects
/// them (with one whose file does not exist, which the report must drop).
fn investigated() -> AgentEnv {
    project().with_agent(|agent| {
        agent
            .flags(&[
                ("src", "src/main.rs", "critical", "Deletes the disk."),
                ("src/core", "src/core/model.rs", "concern", "No tests."),
                ("docs", "docs/guide.md", "info", "A guide."),
            ])
            .dir_script(".", |turn| match turn.turn {
                1 => {
                    let root = turn.target;
                    Reply::blocks(vec![tool_use(
                        "write_cache",
                        json!({"cache_type": "dir", "path": root.to_string_lossy(), "data": {
                            "relative_path": ".", "child_count": 6,
                            "summary": "The root: a Rust crate with a Makefile.",
                            "dominant_category": "source", "confidence": 0.9,
                            "cached_at": "2026-01-01T00:00:00+00:00",
                            "commands": [
                                {"command": "make test", "purpose": "test", "source": "Makefile"},
                                {"command": "cargo build --release", "purpose": "build",
                                 "source": "README.md"},
                                {"command": "cargo run -- --help", "purpose": "run",
                                 "source": "README.md"}
                            ]}}),
                    )])
                }
                _ => Reply::tool_use(
                    "submit_report",
                    json!({"summary": "The root: a Rust crate with a Makefile.", "completeness": 0.9}),
                ),
            })
            .pass_script(Pass::Synthesis, |turn| {
                let mut commands = listed_commands(&system_text(turn.body));
                commands.push(json!({"command": "./deploy.sh prod", "purpose": "deploy",
                                     "source": "scripts/deploy.sh"}));
                Reply::tool_use(
                    "submit_report",
                    json!({
                        "brief": "A small Rust command-line tool with an engine and a model.",
                        "detailed": "The binary in src/main.rs runs the engine.",
                        "tech_stack": ["Rust", "Cargo"],
                        "entry_points": [{"path": "src/main.rs", "role": "The binary."}],
                        "architecture": "The binary calls the engine, which fills the model.",
                        "commands": commands,
                    }),
                )
            })
    })
}

/// The backticked spans of `text` outside its code blocks.
fn code_spans(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let line = line.replace("\\`", "");
            spans.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
        }
    }
    spans
}

/// The lines of `text`'s code blocks.
fn command_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            lines.push(line);
        }
    }
    lines
}

#[test]
fn agents_md_for_the_fixture() {
    let env = investigated();
    let out = env.run_ok(&["--jobs=1", "-o", "AGENTS.md"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("Report written to AGENTS.md"),
        "{}",
        stderr(&out)
    );
    let written = env.root().join("AGENTS.md");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.lines().count() <= 150, "{text}");
    // Every path in backticks is in the tree.
    let target: &Path = env.target();
    for span in code_spans(&text) {
        assert!(
            target.join(span.trim_end_matches('/')).exists(),
            "`{span}` is not in the tree:\n{text}"
        );
    }
    // Each command names the file it came from, which is in the tree; the
    // one whose file is not was left out.
    let commands = command_lines(&text);
    assert_eq!(commands.len(), 3, "{text}");
    for line in &commands {
        let source = line.rsplit("from ").next().unwrap();
        assert!(target.join(source).is_file(), "{line}");
    }
    assert!(!text.contains("deploy"), "{text}");
    assert!(
        text.contains("## Hazards\n\n- critical `src/main.rs`: Deletes the disk."),
        "{text}"
    );
    insta::assert_snapshot!("agents_md", text);
    // The same from --format, to stdout, with nothing sent.
    let requests = env.server.request_count();
    let out = env.run_ok(&["--format", "agents"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        text.trim_end()
    );
    assert_eq!(env.server.request_count(), requests, "the cache answered");
}

#[test]
fn a_tree_that_is_not_code_gets_a_short_file() {
    let env = TestEnv::new();
    for year in 1998..2004 {
        env.file(&format!("letters/{year}/march.txt"), "Dear Ann,\n");
        env.file(&format!("letters/{year}/june.txt"), "Dear Tom,\n");
    }
    let env = env.with_mock();
    let out = env.run_ok(&["--format", "agents"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("## What this is\n\nScripted brief"), "{text}");
    assert!(
        text.contains("not a code project as far as luminos could tell"),
        "{text}"
    );
    assert!(
        !text.contains("```") && !text.contains("## Conventions"),
        "{text}"
    );
    assert!(text.lines().count() < 25, "{text}");
    // --estimate writes no AGENTS.md.
    let out = env.output(&["--estimate", "-o", "AGENTS.md"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
