//! The terminal report: its order (verdict, flags, directories, analysis,
//! then the scan), each section, the bounded tree, proportional bars, the
//! escaping of hostile text, and a snapshot of the fixture's report.

use super::super::shape::{Flagged, Sizes};
use super::super::text::format_flags;
use super::super::text_tree::{TREE_LINES, TreeContext, bounded_tree};
use super::*;
use crate::scan::{IgnoreSummary, LargeFile, RecentFile};
use grounding::Grounding;

/// The terminal report of `report` on `target`, at the default depth.
fn render_text(report: &Report, target: &str) -> String {
    rendered(report, Format::Text, target)
}

/// The original's minimal report, as its own tests build it.
fn minimal() -> Report {
    let mut report = Report::default();
    let scan = &mut report.scan;
    scan.tree = dir_node("", vec![file_node("file.py", 1024)]);
    scan.file_categories = [("source".to_string(), 2), ("config".to_string(), 1)]
        .into_iter()
        .collect();
    scan.languages = vec!["Python".into()];
    scan.lines_of_code = [("Python".to_string(), 150)].into_iter().collect();
    scan.recent_files = vec![RecentFile {
        path: "/tmp/mydir/main.py".into(),
        name: "main.py".into(),
        modified: 1.0,
        modified_human: "2026-04-06 10:00:00".into(),
    }];
    scan.top_directories = vec![DiskEntry {
        path: "/tmp/mydir".into(),
        size_bytes: 10240,
        size_human: "10.0 KB".into(),
        ignored: false,
    }];
    report
}

#[test]
fn no_flags_no_section() {
    assert_eq!(format_flags(&[]), "");
    assert!(!render_text(&minimal(), "/tmp").contains(">> FLAGS"));
}

#[test]
fn flags_are_grouped_by_file_most_severe_first() {
    let flags = [
        flag("info", "a.py", "note"),
        flag("critical", "b.py", "bad"),
        flag("weird", "w.py", "odd"),
        flag("concern", "c.py", "watch"),
        flag("critical", "d.py", "worse"),
        flag("concern", "a.py", "also"),
    ];
    let expected = "
>> FLAGS (6)
----------------------------------------
  b.py
    [CRITICAL] bad
  d.py
    [CRITICAL] worse
  a.py
    [CONCERN ] also
    [INFO    ] note
  c.py
    [CONCERN ] watch
  w.py
    [WEIRD   ] odd";
    similar_asserts::assert_eq!(format_flags(&flags), expected);
}

#[test]
fn a_flag_without_a_path_reads_general() {
    let parsed: Flag = serde_json::from_str(r#"{"finding": "general note"}"#).unwrap();
    assert_eq!(parsed.path, "general");
    assert_eq!(parsed.severity, "info");
    assert!(format_flags(&[parsed]).contains("  general\n    [INFO    ] general note"));
}

#[test]
fn sections_of_the_minimal_report() {
    let text = render_text(&minimal(), "/tmp/mydir");
    assert!(text.starts_with(&format!(
        "{}\n  LUMINOS — File System Intelligence Report\n  Target: /tmp/mydir\n",
        "=".repeat(60)
    )));
    assert_shows(
        &text,
        &[
            "mydir/\n└── file.py  (1.0 KB)",
            "  source          2  ########################################\n  config          1  ####################\n  TOTAL           3",
            "    Python                    150 lines\n    TOTAL                     150 lines",
            "   1. 2026-04-06 10:00:00  main.py\n",
            "     10.0 KB  ./",
        ],
    );
    assert!(text.ends_with(&format!("\n\n{0}\n  End of report.\n{0}", "=".repeat(60))));
    assert!(!text.contains("SUMMARY (AI)"));
    assert!(!text.contains("DETAILED AI ANALYSIS"));
}

#[test]
fn empty_sections_say_so() {
    let text = render_text(&Report::default(), "/tmp");
    assert_shows(
        &text,
        &[
            "  No files found.",
            "  No source code files detected.",
            "  No recent files found.",
            "  No usage data available.",
        ],
    );
}

/// The text of [`minimal`] with these file categories, in this order.
fn with_categories(categories: &[(&str, u64)]) -> String {
    let mut report = minimal();
    report.scan.file_categories = counts(categories);
    render_text(&report, "/tmp")
}

/// `media 56` is not drawn as long as `archive 1676`.
#[test]
fn bars_are_in_proportion_to_the_largest() {
    let text = with_categories(&[("archive", 1676), ("media", 56), ("source", 838)]);
    assert_shows(
        &text,
        &[
            &format!("  archive      1676  {}\n", "#".repeat(40)),
            &format!("  source        838  {}\n", "#".repeat(20)),
            "  media          56  #\n",
        ],
    );
}

#[test]
fn equal_counts_keep_first_seen_order() {
    let text = with_categories(&[("b", 1), ("a", 1), ("c", 2)]);
    let c = text.find("  c ").unwrap();
    let b = text.find("  b ").unwrap();
    let a = text.find("  a ").unwrap();
    assert!(c < b && b < a);
}

#[test]
fn ai_text_and_large_files_are_shown() {
    let mut report = minimal();
    report.ai_brief = "This is a Python project.\nSecond line.".into();
    report.ai_detailed = "Detailed breakdown here.".into();
    report.scan.large_files = vec![
        LargeFile {
            path: "/tmp/big.py".into(),
            name: "big.py".into(),
            reasons: vec!["size: 12.3 MB".into(), "lines: 5000".into()],
        },
        // Two files of one name are told apart by where they are.
        LargeFile {
            path: "/tmp/net/stream.rs".into(),
            name: "stream.rs".into(),
            reasons: vec!["lines: 1200".into()],
        },
        LargeFile {
            path: "/tmp/net/http/stream.rs".into(),
            name: "stream.rs".into(),
            reasons: vec!["lines: 1300".into()],
        },
    ];
    let text = render_text(&report, "/tmp");
    assert!(text.contains(">> SUMMARY (AI)\n----------------------------------------\n  This is a Python project.\n  Second line.\n"));
    assert!(
        text.contains(
            "  Unusually large files:\n    ! big.py  (size: 12.3 MB, lines: 5000)\n    \
             ! net/stream.rs  (lines: 1200)\n    ! net/http/stream.rs  (lines: 1300)"
        ),
        "{text}"
    );
    assert!(text.contains(">> DETAILED AI ANALYSIS\n----------------------------------------\n  Detailed breakdown here.\n"));
}

#[test]
fn hostile_names_and_model_text_are_escaped() {
    let mut report = minimal();
    report.scan.recent_files[0].path = "/tmp/\x1bdir/evil\n   2. fake\x1b[2J".into();
    report.ai_brief = "line\x1b]0;title\x07".into();
    report.flags = vec![flag("critical", "x\ny", "bad\rthing")];
    let text = render_text(&report, "/tmp/\x1bdir");
    for control in ['\x1b', '\x07', '\r'] {
        assert!(!text.contains(control), "{control:?} in {text}");
    }
    assert_shows(
        &text,
        &[
            "evil\\n   2. fake\\x1b[2J",
            "  Target: /tmp/\\x1bdir",
            "  x\\ny\n    [CRITICAL] bad",
        ],
    );
}

#[test]
fn the_ignore_line_appears_only_when_rules_were_read() {
    let mut report = minimal();
    report.scan.ignore = IgnoreSummary {
        enabled: true,
        ..IgnoreSummary::default()
    };
    assert!(!render_text(&report, "/tmp").contains("Ignored"));
    report.scan.ignore.rule_files = vec![".gitignore".into()];
    report.scan.ignore.files_removed = 1;
    report.scan.ignore.dirs_removed = 2;
    assert!(render_text(&report, "/tmp").contains(
        "  TOTAL           3\n  Ignored by .gitignore: 1 file, 2 directories (--no-ignore to include)\n"
    ));
    report.scan.ignore.enabled = false;
    assert!(!render_text(&report, "/tmp").contains("Ignored"));
}

#[test]
fn the_fixture_report_snapshot() {
    let mut report = fixture();
    report.scan.large_files = vec![LargeFile {
        path: "/tmp/mydir/src/core/engine.rs".into(),
        name: "engine.rs".into(),
        reasons: vec!["lines: 2300".into()],
    }];
    report.scan.ignore = IgnoreSummary {
        enabled: true,
        rule_files: vec![
            ".gitignore".into(),
            "a/.ignore".into(),
            "b/.gitignore".into(),
            "c/.gitignore".into(),
        ],
        files_removed: 1234,
        dirs_removed: 1,
    };
    insta::assert_snapshot!(render_text(&report, "/tmp/mydir"));
}

/// The verdict, then flags, the analysis, the directories, and the scan.
#[test]
fn sections_come_in_the_order_a_reader_needs_them() {
    let text = render_text(&fixture(), "/tmp/mydir");
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {text}"))
    };
    let order = [
        ">> SUMMARY (AI)",
        "  Investigation complete.",
        "  Coverage: 1 directory investigated",
        "  Cost: about $0.42 for 9 API requests with claude-sonnet-5-5; prompt caching saved $0.12.",
        ">> FLAGS (4)",
        ">> DETAILED AI ANALYSIS",
        ">> DIRECTORIES",
        ">> DIRECTORY TREE",
        ">> FILE TYPE INTELLIGENCE",
        ">> DISK USAGE",
        "  Grounding:",
    ];
    for pair in order.windows(2) {
        assert!(at(pair[0]) < at(pair[1]), "{} before {}", pair[0], pair[1]);
    }
    // Directories are indented by depth, with their coverage; one with no
    // summary is counted; paths are relative to the target.
    assert_shows(
        &text,
        &[
            "  ./  investigated · completeness 0.9 · confidence 0.85 · 1 flag\n      The project root",
            "      src/core/  mechanical · confidence 0.3 · 1 flag\n          2 files",
            "  1 directory without a summary.",
            "  1.1 GB  target/  (ignored)",
        ],
    );
    assert!(!text.contains("docs/  no summary"), "{text}");
}

/// The terminal report of `report` with `depth` and `width`.
fn text_at(report: &Report, depth: usize, width: usize) -> String {
    let mut out = Vec::new();
    let options = RenderOptions {
        target: "/tmp/mydir".into(),
        depth,
        width,
    };
    render(report, Format::Text, &options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// `--depth` bounds the directories section and says how many it left out.
#[test]
fn directories_stop_at_the_depth() {
    let mut report = fixture();
    let text = text_at(&report, 1, 100);
    assert!(text.contains("    src/  folded"));
    // Below the depth, a directory shows only for its flag.
    assert!(text.contains("src/core/  mechanical · confidence 0.3 · 1 flag"));
    // A directory a model read below the depth, with no flag, is counted.
    for dir in &mut report.directories {
        dir.flags.clear();
    }
    let text = text_at(&report, 0, 100);
    assert!(!text.contains("src/  folded"), "{text}");
    assert!(
        text.contains(
            "  1 directory a model read lie below --depth 0: -o report.html / --format markdown\n"
        ),
        "{text}"
    );
    assert!(text.contains(
        "  1 directory from the scan alone (no model read them): -o report.html / --format \
         markdown\n"
    ));
}

/// At 60 columns every line fits: prose and flags wrap under their text,
/// the tree is cut, never wrapped.
#[test]
fn the_fixture_report_at_60_columns_snapshot() {
    let text = text_at(&fixture(), 3, 60);
    for line in text.lines() {
        assert!(
            unicode_width::UnicodeWidthStr::width(line) <= 60,
            "{line:?}"
        );
    }
    insta::assert_snapshot!(text);
}

/// A directory of 5,000 files and 300 subdirectories draws within the
/// budget, the flagged and largest first, and says what it left out.
#[test]
fn the_tree_stays_within_its_budget_on_any_tree() {
    let mut children = Vec::new();
    for d in 0..300 {
        let files = (0..15)
            .map(|f| file_node(&format!("d{d:03}/f{f}.txt"), 10 + f))
            .collect();
        children.push(dir_node(&format!("d{d:03}"), files));
    }
    for f in 0..500 {
        children.push(file_node(&format!("top{f:03}.bin"), 1_000));
    }
    children.push(file_node("huge.iso", 9_000_000));
    let mut report = Report::default();
    report.scan.tree = dir_node("", children);
    report.scan.classified_files = vec![ClassifiedFile {
        path: "/tmp/mydir/d123/f1.txt".into(),
        name: "f1.txt".into(),
        category: "text".into(),
        size: 50_000,
        description: None,
    }];
    report.flags = vec![flag("critical", "d299/f14.txt", "x")];
    let sizes = Sizes::of(&report, "/tmp/mydir");
    let flagged = Flagged::of(&report);
    let context = TreeContext {
        target: "/tmp/mydir",
        sizes: &sizes,
        flagged: &flagged,
    };
    let tree = bounded_tree(&report.scan.tree, &context, TREE_LINES);
    let lines: Vec<&str> = tree.lines().collect();
    assert!(lines.len() <= TREE_LINES, "{} lines", lines.len());
    assert!(
        lines.len() >= TREE_LINES - 2,
        "the budget is used: {}",
        lines.len()
    );
    // The flagged directory and file come first, then the largest
    // directory, then the largest files.
    assert_eq!(lines[1], "├── d299/");
    assert_eq!(lines[2], "│   ├── f14.txt  (24 B)");
    assert_eq!(lines[3], "│   └── ... 14 more (231 B)");
    assert_eq!(lines[4], "├── d123/  (15 entries, 255 B)");
    assert_eq!(lines[5], "├── huge.iso  (8.6 MB)");
    assert_eq!(lines[6], "├── top000.bin  (1000 B)");
    assert!(tree.contains("... "), "elisions are said");
    assert!(lines.last().unwrap().starts_with("└── ... "), "{tree}");
    // Every entry of a listed directory is shown or counted once (the
    // root's 801, and the 15 of each of the two directories with a line).
    let shown = lines.iter().filter(|l| !l.contains("... ")).count() - 1;
    let count = |l: &&str| -> Option<usize> {
        let rest = l.split("... ").nth(1).or_else(|| l.split("/  (").nth(1))?;
        rest.split(' ').next()?.parse().ok()
    };
    let more: usize = lines.iter().filter_map(count).sum();
    assert_eq!(shown + more, 801 + 15 + 15);
    // A directory with no child shown takes one line, not two.
    assert!(!tree.contains("/\n│   └── ... 15 more"), "{tree}");
}

/// A small tree draws whole, with nothing elided.
#[test]
fn a_small_tree_draws_whole() {
    let report = fixture();
    let text = render_text(&report, "/tmp/mydir");
    assert!(!text.contains("more"), "{text}");
    assert_shows(
        &text,
        &["mydir/\n├── src/\n│   ├── core/\n│   │   ├── engine.rs  (13.7 KB)"],
    );
}

#[test]
fn the_grounding_line_closes_the_report_and_counts_unchecked_symbols() {
    let mut report = minimal();
    assert!(!render_text(&report, "/tmp").contains("Grounding"));
    report.grounding = Some(Grounding {
        citations: 1,
        resolved: 1,
        unchecked: 2,
        ..Grounding::default()
    });
    let text = render_text(&report, "/tmp");
    assert!(
        text.ends_with(&format!(
            "  Grounding: 1 of 1 citation found in the tree (2 symbols not checked: outline limit)\n\n{0}\n  End of report.\n{0}",
            "=".repeat(60)
        )),
        "{text}"
    );
}

#[test]
fn unverified_flags_say_so_and_keep_their_json_fields() {
    let mut flag = flag("info", "src/gone.py", "Bad.");
    flag.verified = Some(false);
    flag.original_severity = Some("critical".into());
    flag.note = Some("Lowered.".into());
    let shown = format_flags(std::slice::from_ref(&flag));
    assert!(
        shown.contains(
            "  src/gone.py  (not found in the tree)\n    [INFO    ] Bad.\n               Lowered."
        ),
        "{shown}"
    );
    let json = serde_json::to_value(&flag).unwrap();
    assert_eq!(json["severity"], "info");
    assert_eq!(json["original_severity"], "critical");
    assert_eq!(json["verified"], false);
    let plain = serde_json::to_value(Flag::new("a", "b", "info")).unwrap();
    assert_eq!(
        plain.as_object().unwrap().len(),
        3,
        "ungrounded flags keep the original shape"
    );
}

#[test]
fn a_hit_cost_cap_is_said_under_the_summary() {
    let mut report = Report {
        ai_brief: "Half a verdict.".into(),
        investigation: Investigation {
            status: InvestigationStatus::Partial,
            note: Some("3 directories left for a later run".into()),
            summary: Some(InvestigationSummary {
                directories_remaining: 3,
                cost_cap_hit: true,
                ..InvestigationSummary::default()
            }),
            error: None,
            spent: None,
            refinement: None,
            notes: Vec::new(),
        },
        ..Report::default()
    };
    let text = render_text(&report, "/tmp/mydir");
    let summary_at = text.find("Half a verdict.").unwrap();
    let note_at = text
        .find("  Note: the --max-cost cap was hit; 3 directories were left uninvestigated. Run again to resume.")
        .expect(&text);
    assert!(summary_at < note_at && note_at < text.find(">> DIRECTORY TREE").unwrap());
    report.investigation.summary.as_mut().unwrap().cost_cap_hit = false;
    assert!(!render_text(&report, "/tmp/mydir").contains("--max-cost"));
}

#[test]
fn the_report_says_in_one_line_what_happened_to_the_investigation() {
    let line_of = |investigation: Investigation| {
        let report = Report {
            ai_brief: "Verdict.".into(),
            investigation,
            ..Report::default()
        };
        let text = render_text(&report, "/t");
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("Investigation"))
            .collect();
        assert_eq!(lines.len(), 1, "{text}");
        let at = text.find(lines[0]).unwrap();
        assert!(text.find("Verdict.").unwrap() < at);
        assert!(at < text.find(">> DIRECTORY TREE").unwrap());
        lines[0].to_string()
    };
    let complete = Investigation {
        status: InvestigationStatus::Complete,
        ..Investigation::default()
    };
    assert_eq!(line_of(complete), "  Investigation complete.");
    assert_eq!(
        line_of(Investigation::failed(
            "the API at http://x could not be\nreached"
        )),
        "  Investigation failed: the API at http://x could not be\\nreached"
    );
    assert_eq!(
        line_of(Investigation::skipped("no API key")),
        "  Investigation skipped: no API key"
    );
}
