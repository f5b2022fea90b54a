use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::report::sections::{Component, Dataset, EntryPoint};

const FILES: &[(&str, &str)] = &[
    (
        "src/main.rs",
        "use std::collections::HashMap;\nfn main() { Engine::default().start(); }\n",
    ),
    (
        "src/core/engine.rs",
        "pub struct Engine;\nimpl Engine { pub fn start(&self) {} }\npub fn run() {}\n",
    ),
    ("src/core/mod.rs", "pub mod engine;\n"),
    ("app/views.py", "class App:\n    def render(self): pass\n"),
    ("docs/guide.md", "# Guide\n"),
    ("README.md", "# Demo\n"),
];

pub(super) fn scope() -> Scope {
    Scope::new(
        FILES.iter().map(|(p, _)| p.to_string()),
        vec![PathBuf::from("/work/demo")],
        None,
    )
}

pub(super) fn source() -> Source {
    Source::Memory(
        FILES
            .iter()
            .map(|(p, text)| (p.to_string(), text.as_bytes().to_vec()))
            .collect::<HashMap<_, _>>(),
    )
}

/// Ground the given entries and texts; returns the grounding, the brief,
/// the detailed analysis and the flags as the report shows them.
fn run(
    dirs: &[serde_json::Value],
    files: &[serde_json::Value],
    brief: &str,
    detailed: &str,
    flags: &[Flag],
) -> (Grounding, String, String, Vec<Flag>) {
    let (mut brief, mut detailed, mut flags) =
        (brief.to_string(), detailed.to_string(), flags.to_vec());
    let dirs: Vec<DirEntry> = dirs
        .iter()
        .map(|v| DirEntry::from_value(v.clone()).unwrap())
        .collect();
    let files: Vec<FileEntry> = files
        .iter()
        .map(|v| FileEntry::from_value(v.clone()).unwrap())
        .collect();
    let grounding = ground(
        &scope(),
        source(),
        Sources {
            dir_entries: &dirs,
            file_entries: &files,
        },
        &mut brief,
        &mut detailed,
        &mut flags,
        &mut Sections::default(),
    );
    (grounding, brief, detailed, flags)
}

/// `(citation, where it was cited, the entry citing it)` of each citation
/// that named nothing real.
fn unresolved(grounding: &Grounding) -> Vec<(&str, CitedIn, Option<&str>)> {
    grounding
        .unresolved
        .iter()
        .map(|u| (u.citation.as_str(), u.cited_in, u.entry.as_deref()))
        .collect()
}

#[test]
fn a_dir_summary_with_real_and_invented_citations() {
    let dir = json!({
        "path": "/work/demo/src",
        "relative_path": "src",
        "summary": "`main.rs` calls `Engine::start` in core/engine.rs; turbo.rs and \
                    `Engine::frobnicate` do not exist. main.rs again.",
        "notable_files": ["main.rs", "src/ghost.rs"],
    });
    let (grounding, ..) = run(&[dir], &[], "", "", &[]);
    assert_eq!(
        grounding.paths,
        crate::report::grounding::CitationCount {
            citations: 5,
            resolved: 3
        }
    );
    assert_eq!(
        grounding.symbols,
        crate::report::grounding::CitationCount {
            citations: 2,
            resolved: 1
        }
    );
    assert_eq!((grounding.citations, grounding.resolved), (7, 4));
    assert_eq!(
        unresolved(&grounding),
        [
            ("turbo.rs", CitedIn::DirSummary, Some("src")),
            ("Engine::frobnicate", CitedIn::DirSummary, Some("src")),
            ("src/ghost.rs", CitedIn::DirSummary, Some("src")),
        ]
    );
    assert_eq!(grounding.unresolved[1].kind, CitationKind::Symbol);
}

#[test]
fn file_summaries_resolve_next_to_their_file_and_stale_ones_are_skipped() {
    let files = [
        json!({"path": "/work/demo/src/core/engine.rs", "summary": "Used by mod.rs and `run()`; see `Engine::stop`."}),
        json!({"path": "src/gone.rs", "summary": "Mentions nowhere.rs."}),
    ];
    let (grounding, ..) = run(&[], &files, "", "", &[]);
    assert_eq!(
        unresolved(&grounding),
        [(
            "Engine::stop",
            CitedIn::FileSummary,
            Some("src/core/engine.rs")
        )]
    );
    assert_eq!((grounding.citations, grounding.resolved), (3, 2));
}

#[test]
fn symbols_count_only_where_the_language_is_known() {
    let dir = json!({"path": "docs", "summary": "Documents `Widget::spin` and `make_widget()`."});
    let (grounding, ..) = run(&[dir], &[], "", "", &[]);
    assert_eq!(
        grounding.citations, 0,
        "docs holds no source a grammar reads"
    );
}

#[test]
fn library_symbols_and_outside_paths_are_not_citations() {
    let (grounding, ..) = run(
        &[],
        &[],
        "Uses `HashMap::new`, `std::fs::read`, `unwrap()` and /etc/passwd.",
        "",
        &[],
    );
    assert_eq!(grounding.citations, 0);
}

#[test]
fn symbols_resolve_across_the_scope_and_languages() {
    let (grounding, ..) = run(
        &[],
        &[],
        "`App.render()` draws; `class App`; `engine::run`; `App.explode()`.",
        "",
        &[],
    );
    assert_eq!(
        unresolved(&grounding),
        [("App.explode()", CitedIn::AiBrief, None)]
    );
    assert_eq!(
        grounding.symbols,
        crate::report::grounding::CitationCount {
            citations: 4,
            resolved: 3
        }
    );
}

#[test]
fn the_synthesis_is_rewritten_to_target_relative_paths() {
    let (grounding, brief, detailed, _) = run(
        &[],
        &[],
        "Start at main.rs, then `./docs/guide.md:3` and src\\core\\engine.rs.",
        "The views (views.py) and turbo.rs; mod.rs is ambiguous? no: src/core/mod.rs.",
        &[],
    );
    assert_eq!(
        brief,
        "Start at src/main.rs, then `docs/guide.md:3` and src/core/engine.rs."
    );
    assert_eq!(
        detailed,
        "The views (app/views.py) and turbo.rs; src/core/mod.rs is ambiguous? no: src/core/mod.rs."
    );
    assert_eq!(
        unresolved(&grounding),
        [("turbo.rs", CitedIn::AiDetailed, None)]
    );
}

#[test]
fn flags_are_verified_rewritten_and_invented_ones_lowered() {
    let flags = [
        Flag::new(
            "main.rs",
            "Runs `Engine::start` from engine.rs.",
            "critical",
        ),
        Flag::new("src/core/engine.rs:2", "Starts things.", "concern"),
        Flag::new("src/backdoor.py", "Opens a reverse shell.", "critical"),
        Flag::new("general", "No tests at all.", "concern"),
        Flag::new(
            "src/x/[REDACTED:aws-access-key]",
            "possible secret in this name",
            "critical",
        ),
        Flag::new("multiple files", "Vague.", "info"),
        Flag::new(
            "src/core/mod.rs (grep output)",
            "possible secret on line 1",
            "critical",
        ),
    ];
    let (grounding, _, _, flags) = run(&[], &[], "", "", &flags);
    type Shown<'a> = (&'a str, &'a str, Option<bool>, Option<&'a str>, Option<u32>);
    let shown: Vec<Shown<'_>> = flags
        .iter()
        .map(|f| {
            (
                f.path.as_str(),
                f.severity.as_str(),
                f.verified,
                f.original_severity.as_deref(),
                f.line,
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("src/main.rs", "critical", Some(true), None, None),
            ("src/core/engine.rs", "concern", Some(true), None, Some(2)),
            (
                "src/backdoor.py",
                "info",
                Some(false),
                Some("critical"),
                None
            ),
            ("general", "concern", Some(true), None, None),
            (
                "src/x/[REDACTED:aws-access-key]",
                "critical",
                Some(true),
                None,
                None
            ),
            ("multiple files", "info", Some(false), None, None),
            (
                "src/core/mod.rs (grep output)",
                "critical",
                Some(true),
                None,
                None
            ),
        ]
    );
    assert_eq!(
        flags[0].finding,
        "Runs `Engine::start` from src/core/engine.rs."
    );
    assert!(
        flags[2]
            .note
            .as_deref()
            .unwrap()
            .contains("rated it critical")
    );
    assert!(flags[5].note.is_some() && flags[0].note.is_none());
    assert_eq!(
        unresolved(&grounding),
        [("src/backdoor.py", CitedIn::Flag, Some("src/backdoor.py"))]
    );
}

#[test]
fn flags_on_the_target_itself_are_verified() {
    let flags = [
        Flag::new(".", "possible secret in command output", "critical"),
        Flag::new("demo", "The project.", "info"),
    ];
    let (grounding, _, _, flags) = run(&[], &[], "", "", &flags);
    assert!(flags.iter().all(|f| f.verified == Some(true)));
    assert_eq!(grounding.citations, 0);
}

#[test]
fn a_citation_repeated_in_one_text_counts_once() {
    let (grounding, brief, ..) = run(&[], &[], "main.rs, main.rs:4 and ./main.rs", "main.rs", &[]);
    assert_eq!(
        (grounding.citations, grounding.resolved),
        (2, 2),
        "once per text"
    );
    assert_eq!(brief, "src/main.rs, src/main.rs:4 and src/main.rs");
}

#[test]
fn unparseable_or_missing_sources_leave_symbols_unchecked_not_invented() {
    let scope = Scope::new(["src/big.rs".to_string()], vec![], None);
    let big = format!("pub fn huge() {{}}\n{}", "//\n".repeat(2 * 1024 * 1024));
    let mut brief = "Calls `huge()` and `tiny()`.".to_string();
    let grounding = ground(
        &scope,
        Source::Memory(HashMap::from([(
            "src/big.rs".to_string(),
            big.into_bytes(),
        )])),
        Sources::default(),
        &mut brief,
        &mut String::new(),
        &mut [],
        &mut Sections::default(),
    );
    assert_eq!(
        grounding.unchecked, 1,
        "huge is named in a file too large to outline"
    );
    assert_eq!(unresolved(&grounding), [("tiny()", CitedIn::AiBrief, None)]);
}

#[test]
fn the_mechanical_synthesis_is_fully_grounded() {
    let entries = [
        json!({"relative_path": "src/core", "summary": "Holds engine.rs and mod.rs."}),
        json!({"relative_path": "src", "summary": "The entry point main.rs and core/."}),
        json!({"relative_path": ".", "summary": "A demo with README.md and docs/guide.md."}),
    ]
    .map(|value| DirEntry::from_value(value).unwrap());
    let (brief, detailed) = crate::ai::passes::synthesis::synthesize_from_cache(&entries);
    let (grounding, ..) = run(&[], &[], &brief, &detailed, &[]);
    assert!(grounding.citations >= 7, "{grounding:?}");
    assert_eq!(grounding.resolved, grounding.citations, "{grounding:?}");
}

#[test]
fn a_mechanical_entry_grounds_completely_against_its_own_directory() {
    use crate::ai::rules::dir_stats::DirStats;
    use crate::ai::rules::mechanical::{Child, MechanicalReason, mechanical_entry};
    use std::collections::BTreeMap;
    use std::path::Path;

    // Names the scan found, several of them in two directories, so only
    // the directory of the entry that quotes them says which one.
    let names = [
        "main.rs",
        "v1.2.3.tar.gz",
        "Makefile",
        "report (final).pdf",
        "my notes.txt",
        "data.2024-01-01.csv",
        "README",
    ];
    let files: Vec<String> = ["data", "other"]
        .iter()
        .flat_map(|dir| names.iter().map(move |name| format!("{dir}/{name}")))
        .chain(["data/sub/inner.rs".to_string()])
        .collect();
    let scope = Scope::new(files, vec![PathBuf::from("/work/demo")], None);
    let stats = DirStats {
        files: names.len() as u32,
        bytes: 70_000,
        largest: names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.to_string(), 10_000 - i as u64 * 100))
            .collect(),
        categories: BTreeMap::from([("source".into(), 1), ("data".into(), 6)]),
        languages: BTreeMap::from([("Rust".into(), 1)]),
        subtree_files: 8,
        subtree_dirs: 2,
        subtree_source: 2,
        subtree_languages: BTreeMap::from([("Rust".into(), 2)]),
        ..DirStats::default()
    };
    let child_stats = DirStats {
        files: 1,
        subtree_files: 1,
        subtree_dirs: 1,
        ..DirStats::default()
    };
    let newest: Vec<(String, String)> = names
        .iter()
        .map(|name| (name.to_string(), "2026-01-02 10:00:00".to_string()))
        .collect();
    let entry = mechanical_entry(
        Path::new("/work/demo"),
        Path::new("/work/demo/data"),
        &stats,
        &newest,
        &[Child {
            name: "sub".into(),
            stats: &child_stats,
            entry: DirEntry::from_value(
                json!({"summary": "Holds inner.rs, a helper. More.", "mechanical": false}),
            ),
        }],
        MechanicalReason::NotChosen,
    );
    let (mut brief, mut detailed, mut flags) = (String::new(), String::new(), Vec::new());
    let grounding = ground(
        &scope,
        Source::Memory(HashMap::new()),
        Sources {
            dir_entries: std::slice::from_ref(&entry),
            file_entries: &[],
        },
        &mut brief,
        &mut detailed,
        &mut flags,
        &mut Sections::default(),
    );
    assert_eq!(unresolved(&grounding), [], "{entry:#?}");
    assert_eq!(grounding.resolved, grounding.citations);
    // At least each name with an extension once in the summary and once as
    // a notable file, the child directory and the file its gist quotes.
    assert!(
        grounding.citations >= 2 * 5 + 2,
        "{grounding:?}\n{entry:#?}"
    );
}

/// The domain sections' paths are checked as what a model wrote: counted,
/// listed when not found, spelled target-relative when found, and marked.
#[test]
fn section_paths_are_checked_counted_and_marked() {
    let mut sections = Sections {
        components: vec![
            Component {
                name: "engine".into(),
                path: Some("core/engine.rs".into()),
                ..Component::default()
            },
            Component {
                name: "cli".into(),
                path: Some("src/cli".into()),
                ..Component::default()
            },
            Component {
                name: "docs".into(),
                ..Component::default()
            },
        ],
        entry_points: vec![EntryPoint {
            path: "./src/main.rs".into(),
            ..EntryPoint::default()
        }],
        datasets: vec![Dataset {
            name: "guide".into(),
            path: Some("docs".into()),
            ..Dataset::default()
        }],
        ..Sections::default()
    };
    let (mut brief, mut detailed) = (String::new(), String::new());
    let grounding = ground(
        &scope(),
        source(),
        Sources::default(),
        &mut brief,
        &mut detailed,
        &mut [],
        &mut sections,
    );
    assert_eq!(grounding.paths.citations, 4);
    assert_eq!(grounding.paths.resolved, 3);
    assert_eq!(
        unresolved(&grounding),
        [("src/cli", CitedIn::AiSections, Some("src/cli"))]
    );
    let [engine, cli, docs] = &sections.components[..] else {
        panic!("{sections:?}");
    };
    assert_eq!(engine.path.as_deref(), Some("src/core/engine.rs"));
    assert_eq!(engine.verified, Some(true));
    assert_eq!(cli.path.as_deref(), Some("src/cli"));
    assert_eq!(cli.verified, Some(false));
    assert_eq!((docs.path.as_deref(), docs.verified), (None, None));
    assert_eq!(sections.entry_points[0].path, "src/main.rs");
    assert_eq!(sections.entry_points[0].verified, Some(true));
    assert_eq!(sections.datasets[0].verified, Some(true));
}
