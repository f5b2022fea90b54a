//! `AGENTS.md`: a snapshot of the fixture's, what it must hold (each part,
//! each command with its source), what it must not (a command or a path not
//! found in the tree, model text as markup), its length, and the short file
//! of a tree that is not code.

use super::*;
use crate::report::sections::{DevCommand, EntryPoint};

fn agents(report: &Report) -> String {
    rendered(report, Format::Agents, "/tmp/mydir")
}

/// The fixture as a code project: commands (one whose source was not
/// found), a stack, an entry point and an architecture.
fn project() -> Report {
    let mut report = fixture();
    let command = |command: &str, purpose: &str, source: &str, found: bool| DevCommand {
        command: command.into(),
        purpose: purpose.into(),
        source: source.into(),
        verified: Some(found),
    };
    report.ai_sections.commands = vec![
        command("cargo build --release", "build", "Cargo.toml", true),
        command("cargo test", "test", "README.md", true),
        command("make deploy", "deploy", "Makefile", false),
    ];
    report.ai_sections.tech_stack = vec!["Rust".into(), "clap".into()];
    report.ai_sections.entry_points = vec![EntryPoint {
        path: "src/main.rs".into(),
        role: "The binary: parses the arguments. Then runs the engine.".into(),
        verified: Some(true),
    }];
    report.ai_sections.architecture =
        Some("The CLI calls the engine, which fills the model. Nothing else.".into());
    report
}

#[test]
fn the_fixture_agents_snapshot() {
    insta::assert_snapshot!(agents(&project()));
}

/// The backticked spans outside code blocks, in order.
fn code_spans(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // An escaped backtick opens no span.
        let line = line.replace("\\`", "");
        let mut parts = line.split('`');
        parts.next();
        while let (Some(span), Some(_)) = (parts.next(), parts.next()) {
            spans.push(span.to_string());
        }
    }
    spans
}

#[test]
fn every_part_is_there_and_every_shown_path_is_in_the_tree() {
    let report = project();
    let text = agents(&report);
    assert_shows(
        &text,
        &[
            "## What this is\n\nA small Rust command-line tool",
            "## Layout\n\n- `docs/`\n- `src/`: The code: an entry point over the engine.\n",
            "## Build, test and run\n",
            "```sh\ncargo build --release  # build; from Cargo.toml\ncargo test  # test; from README.md\n```",
            "## Conventions\n",
            "- Work in the stack the project uses: Rust, clap.",
            "- Execution starts at `src/main.rs`: The binary: parses the arguments.",
            "## Hazards\n\n- critical `Cargo.toml`: A registry token in plain text.\n\
             - concern `src/core/engine.rs`: Unsafe block without a comment.",
        ],
    );
    // The command whose source was not found, and the info flags, are not.
    assert!(
        !text.contains("make deploy") && !text.contains("backdoor"),
        "{text}"
    );
    assert!(!text.contains("No tests were found"), "{text}");
    // Every path shown as code is in the fixture's tree.
    let tree = [
        "docs/",
        "src/",
        "Cargo.toml",
        "src/main.rs",
        "src/core/engine.rs",
    ];
    for span in code_spans(&text) {
        assert!(
            tree.contains(&span.as_str()),
            "`{span}` is not in the tree: {text}"
        );
    }
    assert!(text.lines().count() <= crate::report::agents::MAX_LINES);
}

#[test]
fn model_text_never_becomes_markup_or_a_code_span() {
    let mut report = project();
    report.ai_brief = "Uses `rm -rf /` and [a link](http://x) and # heading.".into();
    report.ai_sections.commands[0].command = "make ```evil``` all".into();
    report.ai_sections.commands[0].purpose = "line\nbreak".into();
    report.directories[2].summary = Some("Holds `secret.txt`.".into());
    let text = agents(&report);
    assert!(
        !code_spans(&text)
            .iter()
            .any(|s| s.contains("rm -rf") || s == "secret.txt"),
        "{text}"
    );
    assert!(text.contains("\\[a link\\]"), "{text}");
    // The command's block is fenced longer than the backticks inside.
    assert!(
        text.contains("````sh\nmake ```evil``` all  # line\\nbreak; from Cargo.toml"),
        "{text}"
    );
}

#[test]
fn a_tree_that_is_not_code_gets_a_short_file() {
    let mut report = fixture();
    report.ai_brief = "A collection of scanned letters, 1998 to 2004.".into();
    report.flags.clear();
    let text = agents(&report);
    assert_shows(
        &text,
        &[
            "A collection of scanned letters",
            "This tree is not a code project as far as luminos could tell",
        ],
    );
    assert!(
        !text.contains("## Conventions") && !text.contains("```"),
        "{text}"
    );
    assert!(text.lines().count() < 20, "{text}");
}

#[test]
fn a_huge_investigation_stays_within_the_line_limit() {
    let mut report = project();
    let many: Vec<TreeNode> = (0..200)
        .map(|i| dir_node(&format!("d{i:03}"), Vec::new()))
        .collect();
    report.scan.tree.children = Some(many);
    report.ai_sections.commands = (0..100)
        .map(|i| DevCommand {
            command: format!("make t{i}"),
            purpose: "test".into(),
            source: "Cargo.toml".into(),
            verified: Some(true),
        })
        .collect();
    for i in 0..100 {
        let mut hazard = flag("concern", "Cargo.toml", &format!("Problem {i}."));
        hazard.verified = Some(true);
        report.flags.push(hazard);
    }
    let text = agents(&report);
    assert!(
        text.lines().count() <= crate::report::agents::MAX_LINES,
        "{}",
        text.lines().count()
    );
    assert!(text.contains("- and 170 more directories"), "{text}");
    assert_eq!(text.matches("```").count() % 2, 0);
}

#[test]
fn without_an_investigation_it_says_so() {
    let mut report = fixture();
    report.ai_brief.clear();
    report.ai_sections = Sections::default();
    report.directories.clear();
    report.flags.clear();
    report.investigation = Investigation::skipped("no API key");
    let text = agents(&report);
    assert!(text.contains("No investigation wrote a verdict"), "{text}");
    assert!(text.contains("- `src/`\n"), "{text}");
}
