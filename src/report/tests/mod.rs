//! Unit tests of the report: the data (`json`: the JSON shape of flags,
//! `investigation` and `directories`), the terminal text section by section
//! (`text`), Markdown and HTML (`formats`), each with insta snapshots of a
//! fixture report, and the escaping of hostile names and model text in
//! every format. The integration tests in `tests/all` run the binary.

use super::*;
use crate::scan::{ClassifiedFile, DiskEntry, NodeKind, TreeNode};
use indexmap::IndexMap;

mod agents;
mod formats;
mod json;
mod text;
mod text_size;

/// The report of `report` on `target` in `format`, at the default depth.
fn rendered(report: &Report, format: Format, target: &str) -> String {
    let mut out = Vec::new();
    render(
        report,
        format,
        &RenderOptions {
            target: target.to_string(),
            depth: 3,
            width: 100,
        },
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

/// Counts by name (file categories, lines by language), in the order given.
fn counts(pairs: &[(&str, u64)]) -> IndexMap<String, u64> {
    pairs
        .iter()
        .map(|(name, count)| (name.to_string(), *count))
        .collect()
}

fn flag(severity: &str, path: &str, finding: &str) -> Flag {
    Flag::new(path, finding, severity)
}

/// Each of `needles` stands in `text`.
#[track_caller]
fn assert_shows(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
}

/// A tree node under `/tmp/mydir` at `rel` (`""` for the root).
fn node(rel: &str, kind: NodeKind, size: Option<u64>, children: Option<Vec<TreeNode>>) -> TreeNode {
    let path = if rel.is_empty() {
        "/tmp/mydir".to_string()
    } else {
        format!("/tmp/mydir/{rel}")
    };
    TreeNode {
        name: rel
            .rsplit('/')
            .next()
            .filter(|n| !n.is_empty())
            .unwrap_or("mydir")
            .to_string(),
        path,
        kind,
        children,
        size,
        ..TreeNode::default()
    }
}

fn file_node(rel: &str, size: u64) -> TreeNode {
    node(rel, NodeKind::File, Some(size), None)
}

fn dir_node(rel: &str, children: Vec<TreeNode>) -> TreeNode {
    node(rel, NodeKind::Directory, None, Some(children))
}

/// A small investigated project at `/tmp/mydir`, as a run reports it: four
/// directories (each way of getting a summary), file summaries, flags of
/// every severity (one not found in the tree), a complete investigation
/// with its cost, and the scan's figures.
fn fixture() -> Report {
    let mut report = Report::default();
    let files = [
        ("Cargo.toml", 120, "config"),
        ("README.md", 2_400, "document"),
        ("docs/guide.md", 900, "document"),
        ("src/main.rs", 3_100, "source"),
        ("src/core/engine.rs", 14_000, "source"),
        ("src/core/model.rs", 5_200, "source"),
    ];
    report.scan.tree = dir_node(
        "",
        vec![
            file_node("Cargo.toml", 120),
            file_node("README.md", 2_400),
            dir_node("docs", vec![file_node("docs/guide.md", 900)]),
            dir_node(
                "src",
                vec![
                    dir_node(
                        "src/core",
                        vec![
                            file_node("src/core/engine.rs", 14_000),
                            file_node("src/core/model.rs", 5_200),
                        ],
                    ),
                    file_node("src/main.rs", 3_100),
                ],
            ),
        ],
    );
    report.scan.classified_files = files
        .iter()
        .map(|(rel, size, category)| ClassifiedFile {
            path: format!("/tmp/mydir/{rel}"),
            name: rel.rsplit('/').next().unwrap().to_string(),
            category: category.to_string(),
            size: *size,
            description: None,
        })
        .collect();
    report.scan.file_categories = counts(&[("source", 3), ("document", 2), ("config", 1)]);
    report.scan.languages = vec!["Rust".into()];
    report.scan.lines_of_code = [("Rust".to_string(), 812)].into_iter().collect();
    report.scan.disk_usage = [
        ("/tmp/mydir/docs", 4_996, false),
        ("/tmp/mydir/src/core", 23_296, false),
        ("/tmp/mydir/src", 30_492, false),
        ("/tmp/mydir/target/debug", 900_000_000, true),
        ("/tmp/mydir/target", 1_200_000_000, true),
        ("/tmp/mydir", 1_200_040_000, false),
    ]
    .iter()
    .map(|(path, size, ignored)| DiskEntry {
        path: path.to_string(),
        size_bytes: *size,
        size_human: crate::scan::human_size(*size),
        ignored: *ignored,
    })
    .collect();
    report.scan.top_directories = crate::scan::disk::top_directories(&report.scan.disk_usage, 5);
    report.ai_brief =
        "A small Rust command-line tool: a scan engine with a model of the results.".into();
    report.ai_detailed = "The engine walks the tree.\n\nThe model holds what it found.".into();
    let mut lowered = flag("info", "src/backdoor.py", "Opens a reverse shell.");
    lowered.verified = Some(false);
    lowered.original_severity = Some("critical".into());
    lowered.note = Some("Its path was not found in the tree; the agent rated it critical.".into());
    let mut at_line = flag(
        "concern",
        "src/core/engine.rs",
        "Unsafe block without a comment.",
    );
    at_line.verified = Some(true);
    at_line.line = Some(12);
    let mut key = flag("critical", "Cargo.toml", "A registry token in plain text.");
    key.verified = Some(true);
    let mut general = flag("info", "general", "No tests were found.");
    general.verified = Some(true);
    report.flags = vec![lowered, general, at_line, key];
    let dir = |path: &str, summary: Option<&str>, coverage: DirCoverage| DirectoryReport {
        path: path.into(),
        summary: summary.map(str::to_string),
        coverage,
        ..DirectoryReport::default()
    };
    let file = |path: &str, summary: &str| FileSummary {
        path: path.into(),
        summary: summary.into(),
    };
    let mut root = dir(
        ".",
        Some("The project root: a manifest and a README."),
        DirCoverage::Investigated,
    );
    root.completeness = Some(0.9);
    root.confidence = Some(0.85);
    root.notable_files = vec!["Cargo.toml".into()];
    root.files = vec![
        file("Cargo.toml", "The package manifest."),
        file("README.md", "How to build and run it."),
    ];
    let mut src = dir(
        "src",
        Some("The code: an entry point over the engine."),
        DirCoverage::Folded,
    );
    src.files = vec![file(
        "src/main.rs",
        "Parses the arguments and runs the engine.",
    )];
    let mut core = dir(
        "src/core",
        Some("2 files (19.2 KB): Rust (2). Largest: engine.rs."),
        DirCoverage::Mechanical,
    );
    core.confidence = Some(0.3);
    core.notable_files = vec!["engine.rs".into()];
    report.directories = vec![root, dir("docs", None, DirCoverage::None), src, core];
    report.investigation = Investigation {
        status: InvestigationStatus::Complete,
        summary: Some(InvestigationSummary {
            id: "abc".into(),
            model: "claude-sonnet-5-5".into(),
            directories_investigated: 3,
            coverage: Coverage {
                investigated: 1,
                folded: 1,
                mechanical: 1,
            },
            api_requests: 9,
            cost_usd: crate::money::Usd::new(0.4213),
            cache_savings_usd: crate::money::Usd::new(0.12),
            ..InvestigationSummary::default()
        }),
        ..Investigation::default()
    };
    report.grounding = Some(grounding::Grounding {
        citations: 12,
        resolved: 11,
        ..grounding::Grounding::default()
    });
    report.order_flags();
    report
}

/// The fixture, with every file name and piece of model text made hostile:
/// markup, script, link syntax, table pipes, Mermaid syntax and terminal
/// control sequences.
fn hostile() -> Report {
    const EVIL: &str = "<script>alert(1)</script>";
    let mut report = fixture();
    // Names as the scan could see them (a `/` in the middle is a path).
    let evil_dir = format!("{EVIL}|x](javascript:alert(2))");
    let mut evil_file = file_node(&format!("{evil_dir}/x"), 10);
    evil_file.name = format!("\"]-->n0[\"{EVIL}`.rs");
    let mut evil_node = dir_node(&evil_dir, vec![evil_file]);
    evil_node.name = evil_dir.clone();
    report.scan.tree.children.as_mut().unwrap().push(evil_node);
    report.scan.tree.name = format!("my{EVIL}dir");
    report.ai_brief = format!("Brief {EVIL} [link](javascript:alert(3)) | cell\n# heading\x1b[2J");
    report.ai_detailed = format!("<img src=x onerror=alert(4)> **bold** {EVIL}");
    report.flags.push(flag(
        "critical",
        &format!("{evil_dir}/a.rs"),
        &format!("{EVIL} | pipe"),
    ));
    report.directories.push(DirectoryReport {
        path: evil_dir.clone(),
        summary: Some(format!("Summary {EVIL} ```\n<!-- comment -->")),
        coverage: DirCoverage::Investigated,
        notable_files: vec![format!("{EVIL}.rs")],
        files: vec![FileSummary {
            path: format!("{evil_dir}/{EVIL}.rs"),
            summary: format!("{EVIL}\"'&"),
        }],
        ..DirectoryReport::default()
    });
    report.investigation.summary.as_mut().unwrap().model = format!("model{EVIL}\n");
    report.ai_sections = sections::Sections {
        architecture: Some(format!("{EVIL} [x](javascript:alert(5))")),
        components: vec![
            sections::Component {
                name: format!("\"]-->n9[\"{EVIL}"),
                path: Some(format!("{EVIL}/x")),
                role: "<img src=x onerror=alert(6)> | cell".to_string(),
                depends_on: vec!["core".into()],
                verified: None,
            },
            sections::Component {
                name: "core".into(),
                ..sections::Component::default()
            },
        ],
        concerns: vec![format!("- {EVIL}")],
        ..sections::Sections::default()
    };
    report.order_flags();
    report
}
