//! The report through the real binary: every format after an investigation
//! against the mock (with snapshots of what users see), the format chosen
//! by flag or file name, contradictory flags, hostile names and model text
//! in Markdown and HTML, flag order, and the tree section's line budget on
//! a generated large tree.

use crate::support;

use serde_json::{Value, json};
use similar_asserts::assert_eq;
use support::TestEnv;
use support::agent::{AgentEnv, Pass};
use support::output::{assert_contains, assert_contains_all, field_pairs, fields, stderr, stdout};

/// Run `luminos [extra] TARGET` one loop at a time (a stable order) and
/// insist that it succeeds.
fn run(env: &TestEnv, extra: &[&str]) -> String {
    stdout(&env.run_ok(&[&["--jobs=1"], extra].concat()))
}

/// The flags [`investigated`] raises, `(dir, path, severity, finding)`: one
/// per file, every severity.
const FLAGS: [(&str, &str, &str, &str); 4] = [
    ("docs", "docs/guide.md", "info", "A guide."),
    ("src", "src/main.rs", "critical", "Deletes the disk."),
    ("src/core", "src/core/model.rs", "concern", "No tests."),
    (
        "src/core",
        "src/core/engine.rs",
        "concern",
        "No tests either.",
    ),
];

/// The small project, investigated once by the default agent (flags of
/// every severity included); later runs read it all from the cache.
fn investigated() -> AgentEnv {
    let env = TestEnv::with_small_project().with_agent(|a| a.flags(&FLAGS));
    run(&env, &["--json"]);
    env
}

/// `text` with what changes from run to run (the temporary path, costs,
/// token counts) replaced, for snapshots.
fn stable(env: &TestEnv, text: &str) -> String {
    let root = env.root().to_string_lossy().into_owned();
    let canonical = std::fs::canonicalize(env.root()).unwrap();
    let text = text
        .replace(&canonical.to_string_lossy().into_owned(), "[ROOT]")
        .replace(&root, "[ROOT]");
    let cost = regex::Regex::new(r"\$\d+\.\d\d").unwrap();
    let text = cost.replace_all(&text, "$[COST]");
    // When the investigation was paid for, and by which luminos.
    let date = regex::Regex::new(r"\d{4}-\d\d-\d\d").unwrap();
    let text = date.replace_all(&text, "[DATE]");
    text.replace(
        &format!("luminos {}", env!("CARGO_PKG_VERSION")),
        "luminos [VERSION]",
    )
}

/// What the text report says before the scan's sections (those hold
/// modification times and directory sizes that vary by file system).
fn investigation_part(text: &str) -> &str {
    &text[..text.find(">> FILE TYPE INTELLIGENCE").unwrap()]
}

/// Each format holds every directory's summary, from one investigation;
/// the later runs make no request.
#[test]
fn every_format_shows_every_directory_summary() {
    let env = investigated();
    let requests = env.server.request_count();
    let json: Value = serde_json::from_str(&run(&env, &["--format", "json"])).unwrap();
    let dirs = json["directories"].as_array().unwrap();
    assert_eq!(
        fields(&json["directories"], "path"),
        [".", "docs", "src", "src/core"]
    );
    let text = run(&env, &[]);
    let markdown = run(&env, &["--format", "markdown"]);
    let html = run(&env, &["--format", "html"]);
    assert_eq!(env.server.request_count(), requests, "the cache answered");
    for dir in dirs {
        let summary = dir["summary"].as_str().unwrap();
        assert!(summary.starts_with("Directory "), "{dir}");
        assert_eq!(dir["coverage"], "investigated");
        assert!(text.contains(summary), "{summary} in the text");
        assert!(
            markdown.contains(&summary.replace('[', "\\[").replace(']', "\\]")),
            "{summary}"
        );
        assert!(
            html.contains(summary.split(" [").next().unwrap()),
            "{summary}"
        );
    }
    let core = &dirs[3];
    assert_eq!(
        core["files"],
        json!([
            {"path": "src/core/engine.rs", "summary": "File engine.rs of directory src/core."},
            {"path": "src/core/model.rs", "summary": "File model.rs of directory src/core."}
        ])
    );
    assert_eq!(
        core["flags"],
        json!(["src/core/engine.rs", "src/core/model.rs"])
    );
    assert_eq!(core["completeness"], 0.8);
}

/// Snapshots of what users see, in each format, after the investigation
/// of the small project.
#[test]
fn each_format_snapshot() {
    let env = investigated();
    let text = run(&env, &[]);
    insta::assert_snapshot!("text", stable(&env, investigation_part(&text)));
    let markdown = run(&env, &["--format", "markdown"]);
    let markdown = &markdown[..markdown.find("\n## Scan").unwrap()];
    insta::assert_snapshot!("markdown", stable(&env, markdown));
    let json: Value = serde_json::from_str(&run(&env, &["--json"])).unwrap();
    insta::assert_json_snapshot!("json_directories", json["directories"]);
    let html = run(&env, &["--format", "html"]);
    let html = &html[html.find("<body>").unwrap()..html.find("<section id=\"scan\">").unwrap()];
    insta::assert_snapshot!("html_body", stable(&env, html));
}

/// JSON flags come most severe first, then by path; the text groups them
/// by file. Raised in another order, they come out the same.
#[test]
fn flags_come_in_one_order_whatever_order_they_were_raised_in() {
    let env = investigated();
    let json: Value = serde_json::from_str(&run(&env, &["--json"])).unwrap();
    let flags = field_pairs(&json["flags"], "severity", "path");
    assert_eq!(
        flags,
        [
            ("critical", "src/main.rs"),
            ("concern", "src/core/engine.rs"),
            ("concern", "src/core/model.rs"),
            ("info", "docs/guide.md"),
        ]
    );
    // The same flags raised in the opposite order, four loops at a time.
    let mut reversed = FLAGS;
    reversed.reverse();
    let again = TestEnv::with_small_project().with_agent(|a| a.flags(&reversed));
    let other: Value =
        serde_json::from_slice(&again.run_ok(&["--jobs=4", "--json"]).stdout).unwrap();
    assert_eq!(other["flags"], json["flags"]);
    let text = run(&env, &[]);
    assert_contains_all(
        &text,
        &[
            ">> FLAGS (4)\n----------------------------------------\n  src/main.rs\n    [CRITICAL] Deletes the disk.\n  src/core/engine.rs\n",
        ],
    );
}

/// `-o` picks the format from the file's name unless a flag says
/// otherwise; contradictory flags are a usage error.
#[test]
fn the_output_file_name_picks_the_format() {
    let env = TestEnv::with_small_project();
    for (name, starts) in [
        ("LUMINOS.md", "# luminos: `target/`"),
        ("report.html", "<!DOCTYPE html>"),
        ("report.json", "{"),
        ("report.txt", "====="),
    ] {
        let file = env.root().join(name);
        let out = env.output(&["--scan-only", "-o", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let written = std::fs::read_to_string(&file).unwrap();
        assert!(written.starts_with(starts), "{name}: {written}");
    }
    let file = env.root().join("forced.md");
    env.run_ok(&[
        "--scan-only",
        "--format",
        "text",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("====="));

    for (flags, says) in [
        (
            &["--json", "--format", "html"][..],
            "--json is short for --format json",
        ),
        (
            &["--estimate", "--format", "markdown"],
            "--estimate writes text or JSON",
        ),
        (&["--format", "pdf"], "pdf"),
    ] {
        let out = env.output(flags);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(out.stdout.is_empty());
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
    }
    let out = env.output(&["--json", "--format", "html"]);
    assert_eq!(
        stderr(&out),
        "Error: --json is short for --format json; it cannot go with --format html\n"
    );
}

/// A file named `<script>alert(1)</script>` (a directory `<script>alert(1)<`
/// holding `script>`) and a model that writes markup stay text in Markdown
/// and HTML.
#[test]
fn hostile_names_and_model_text_stay_text() {
    let env = TestEnv::new();
    env.file("<script>alert(1)</script>", "x\n")
        .file("src/a|b](javascript:alert(2)).rs", "fn a() {}\n")
        .file("src/main.rs", "fn main() {}\n");
    let evil = "<img src=x onerror=alert(3)> [click](javascript:alert(4)) | <script>bad()</script>";
    let env = env.with_agent(|a| {
        a.submits(
            Pass::Synthesis,
            json!({"brief": evil, "detailed": format!("# {evil}")}),
        )
        .flag("src", "src/a|b](javascript:alert(2)).rs", "critical", evil)
    });
    let html = run(&env, &["--format", "html"]);
    let markdown = run(&env, &["--format", "markdown"]);
    for forbidden in ["<script", "<img", "onerror=alert(3)>"] {
        assert!(!html.contains(forbidden), "{forbidden} in the HTML");
    }
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;"),
        "the name shows as text"
    );
    assert!(html.contains("&lt;img src=x onerror=alert(3)&gt;"));
    // Names in code spans show as written; nothing outside them is markup.
    let spans = regex::Regex::new(r"``.*?``|`[^`\n]*`").unwrap();
    let outside = spans.replace_all(&markdown, "CODE");
    assert!(
        !outside.contains("<img") && !outside.contains("<script"),
        "{outside}"
    );
    assert_contains(&markdown, "`<script>alert(1)</script>`");
    let link = regex::Regex::new(r"(^|[^\\])\]\(javascript").unwrap();
    assert!(!link.is_match(&outside), "{outside}");
    assert!(!markdown.contains("\n# &lt;img"), "{markdown}");
}

/// A right-to-left override in a file name (`invoice\u{202e}exe.txt`
/// would show as `invoicetxt.exe`) and bidirectional isolates in model text
/// reach no format raw: text, Markdown and HTML show them escaped, and
/// JSON writes them as `\uXXXX` escapes that read back to the same name.
#[test]
fn bidirectional_controls_reach_no_report_raw() {
    let name = "invoice\u{202e}exe.txt";
    let env = TestEnv::new();
    env.file(&format!("docs/{name}"), "an invoice\n")
        .file("docs/guide.md", "# Guide\n");
    let model = "Pay \u{2067}now\u{2069} and \u{202b}open\u{202c} it";
    let env = env.with_agent(|a| {
        a.submits(
            Pass::Synthesis,
            json!({"brief": model, "detailed": format!("{model} ({name})")}),
        )
        .flag("docs", &format!("docs/{name}"), "concern", model)
    });
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    for format in ["text", "markdown", "html", "json"] {
        let out = run(&env, &["--format", format]);
        assert!(
            !out.chars().any(bidi),
            "a raw bidirectional control in the {format} report"
        );
        if format == "json" {
            let report: Value = serde_json::from_str(&out).unwrap();
            let flag = &report["flags"][0];
            assert_eq!(flag["path"], format!("docs/{name}"), "{flag}");
            assert_eq!(flag["finding"], model, "{flag}");
        } else {
            assert_contains(&out, "invoice\\u{202e}exe.txt");
        }
    }
}

/// The tree section stays within 40 lines on a tree of 4,000 files in
/// 400 directories (it drew 4,400 before), and says what it left out.
#[test]
fn the_tree_section_stays_within_its_budget_on_a_large_tree() {
    let env = TestEnv::new();
    for d in 0..40 {
        for s in 0..10 {
            for f in 0..10 {
                env.file(
                    &format!("pkg{d:02}/mod{s}/file{f}.txt"),
                    "x".repeat(d * 10 + f),
                );
            }
        }
    }
    let text = run(&env, &["--scan-only"]);
    let tree = &text[text.find(">> DIRECTORY TREE").unwrap()..text.find(">> FILE TYPE").unwrap()];
    let lines: Vec<&str> = tree.lines().skip(2).filter(|l| !l.is_empty()).collect();
    assert!(lines.len() <= 40, "{} lines", lines.len());
    assert!(
        lines.len() >= 36,
        "the budget is used: {} lines",
        lines.len()
    );
    // The largest package comes first.
    assert_eq!(lines[1], "├── pkg39/", "{tree}");
    assert!(
        lines[lines.len() - 1].starts_with("└── ... 4 more ("),
        "{tree}"
    );
    // The JSON keeps the whole tree.
    let json: Value = serde_json::from_str(&run(&env, &["--scan-only", "--json"])).unwrap();
    assert!(json["tree_rendered"].as_str().unwrap().lines().count() > 4_000);
}
