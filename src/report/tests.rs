//! Unit tests of the report: the terminal text section by section (with an
//! insta snapshot of a full report) and the JSON shape of flags and of
//! `investigation`. The integration tests in `tests/all` run the binary.

use super::terminal::format_flags;
use super::*;
use crate::scan::{DiskEntry, IgnoreSummary, LargeFile, RecentFile};

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

/// The original's minimal report, as its own tests build it.
fn minimal() -> Report {
    let mut report = Report::default();
    let scan = &mut report.scan;
    scan.tree_rendered = "mydir/\n  file.py".into();
    scan.file_categories = [("source".to_string(), 2), ("config".to_string(), 1)]
        .into_iter()
        .collect();
    scan.languages = vec!["Python".into()];
    scan.lines_of_code = [("Python".to_string(), 150)].into_iter().collect();
    scan.recent_files = vec![RecentFile {
        path: "/tmp/main.py".into(),
        name: "main.py".into(),
        modified: 1.0,
        modified_human: "2026-04-06 10:00:00".into(),
    }];
    scan.top_directories = vec![DiskEntry {
        path: "/tmp/mydir".into(),
        size_bytes: 10240,
        size_human: "10.0 KB".into(),
    }];
    report
}

#[test]
fn no_flags_no_section() {
    assert_eq!(format_flags(&[]), "");
    assert!(!format_report(&minimal(), "/tmp").contains(">> FLAGS"));
}

#[test]
fn flags_sort_by_severity_and_keep_order_within_one() {
    let flags = [
        flag("info", "a.py", "note"),
        flag("critical", "b.py", "bad"),
        flag("weird", "w.py", "odd"),
        flag("concern", "c.py", "watch"),
        flag("critical", "d.py", "worse"),
    ];
    let expected = "
>> FLAGS
----------------------------------------
  [CRITICAL] b.py
             bad
  [CRITICAL] d.py
             worse
  [CONCERN ] c.py
             watch
  [INFO    ] a.py
             note
  [WEIRD   ] w.py
             odd";
    similar_asserts::assert_eq!(format_flags(&flags), expected);
}

#[test]
fn a_flag_without_a_path_reads_general() {
    let parsed: Flag = serde_json::from_str(r#"{"finding": "general note"}"#).unwrap();
    assert_eq!(parsed.path, "general");
    assert_eq!(parsed.severity, "info");
    assert!(format_flags(&[parsed]).contains("[INFO    ] general"));
}

#[test]
fn sections_of_the_minimal_report() {
    let text = format_report(&minimal(), "/tmp/mydir");
    assert!(text.starts_with(&format!(
        "{}\n  LUMINOS — File System Intelligence Report\n  Target: /tmp/mydir\n",
        "=".repeat(60)
    )));
    assert_shows(
        &text,
        &[
            "  source          2  ##\n  config          1  #\n  TOTAL           3",
            "    Python                    150 lines\n    TOTAL                     150 lines",
            "   1. 2026-04-06 10:00:00  main.py\n      /tmp/main.py",
            "     10.0 KB  /tmp/mydir",
        ],
    );
    assert!(text.ends_with(&format!("\n\n{0}\n  End of report.\n{0}", "=".repeat(60))));
    assert!(!text.contains("SUMMARY (AI)"));
    assert!(!text.contains("DETAILED AI ANALYSIS"));
}

#[test]
fn empty_sections_say_so() {
    let text = format_report(&Report::default(), "/tmp");
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

#[test]
fn bars_are_capped_at_forty() {
    let mut report = minimal();
    report.scan.file_categories = [("source".to_string(), 95)].into_iter().collect();
    let text = format_report(&report, "/tmp");
    assert!(text.contains(&format!("  source         95  {}\n", "#".repeat(40))));
}

#[test]
fn equal_counts_keep_first_seen_order() {
    let mut report = minimal();
    report.scan.file_categories = [
        ("b".to_string(), 1),
        ("a".to_string(), 1),
        ("c".to_string(), 2),
    ]
    .into_iter()
    .collect();
    let text = format_report(&report, "/tmp");
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
    let text = format_report(&report, "/tmp");
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
    report.scan.recent_files[0].name = "evil\n   2. fake\x1b[2J".into();
    report.ai_brief = "line\x1b]0;title\x07".into();
    report.flags = vec![flag("critical", "x\ny", "bad\rthing")];
    let text = format_report(&report, "/tmp/\x1bdir");
    for control in ['\x1b', '\x07', '\r'] {
        assert!(!text.contains(control), "{control:?} in {text}");
    }
    assert_shows(
        &text,
        &[
            "evil\\n   2. fake\\x1b[2J",
            "  Target: /tmp/\\x1bdir",
            "  [CRITICAL] x\\ny",
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
    assert!(!format_report(&report, "/tmp").contains("Ignored"));
    report.scan.ignore.rule_files = vec![".gitignore".into()];
    report.scan.ignore.files_removed = 1;
    report.scan.ignore.dirs_removed = 2;
    assert!(format_report(&report, "/tmp").contains(
        "  TOTAL           3\n  Ignored by .gitignore: 1 file, 2 directories (--no-ignore to include)\n"
    ));
    report.scan.ignore.enabled = false;
    assert!(!format_report(&report, "/tmp").contains("Ignored"));
}

#[test]
fn full_report_snapshot() {
    let mut report = minimal();
    report.scan.tree_rendered =
        "mydir/\n├── file.py  (1.0 KB)\n└── src/\n    └── lib.rs  (2.0 KB)".into();
    report.scan.file_categories = [
        ("source".to_string(), 12),
        ("config".to_string(), 3),
        ("unknown".to_string(), 3),
        ("document".to_string(), 55),
    ]
    .into_iter()
    .collect();
    report.scan.languages = vec!["Python".into(), "Rust".into()];
    report.scan.lines_of_code = [("Python".to_string(), 150), ("Rust".to_string(), 2300)]
        .into_iter()
        .collect();
    report.scan.large_files = vec![LargeFile {
        path: "/tmp/mydir/src/lib.rs".into(),
        name: "lib.rs".into(),
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
    report.scan.top_directories.push(DiskEntry {
        path: "/tmp/mydir/src".into(),
        size_bytes: 2048,
        size_human: "2.0 KB".into(),
    });
    report.ai_brief = "A small Python and Rust project.".into();
    report.ai_detailed = "It has two parts.\n\nNothing alarming.".into();
    let mut invented = flag("info", "src/backdoor.py", "Opens a reverse shell.");
    invented.verified = Some(false);
    invented.original_severity = Some("critical".into());
    invented.note = Some(
        "Its path was not found in the tree, so it is shown as info; the agent rated it critical."
            .into(),
    );
    let mut at_line = flag("concern", "src/lib.rs", "Unsafe block without a comment.");
    at_line.verified = Some(true);
    at_line.line = Some(12);
    report.flags = vec![
        flag("info", "src/lib.rs", "Large generated file."),
        flag("critical", ".env", "Live API key in plain text."),
        invented,
        at_line,
    ];
    report.grounding = Some(Grounding {
        citations: 59,
        resolved: 57,
        ..Grounding::default()
    });
    report.investigation.status = InvestigationStatus::Complete;
    insta::assert_snapshot!(format_report(&report, "/tmp/mydir"));
}

#[test]
fn the_grounding_line_closes_the_report_and_counts_unchecked_symbols() {
    let mut report = minimal();
    assert!(!format_report(&report, "/tmp").contains("Grounding"));
    report.grounding = Some(Grounding {
        citations: 1,
        resolved: 1,
        unchecked: 2,
        ..Grounding::default()
    });
    let text = format_report(&report, "/tmp");
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
    assert!(shown.contains("  [INFO    ] src/gone.py (not found in the tree)\n             Bad.\n             Lowered."), "{shown}");
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
        },
        ..Report::default()
    };
    let text = format_report(&report, "/tmp/mydir");
    let summary_at = text.find("Half a verdict.").unwrap();
    let note_at = text
        .find("  Note: the --max-cost cap was hit; 3 directories were left uninvestigated. Run again to resume.")
        .expect(&text);
    assert!(summary_at < note_at && note_at < text.find(">> DIRECTORY TREE").unwrap());
    report.investigation.summary.as_mut().unwrap().cost_cap_hit = false;
    assert!(!format_report(&report, "/tmp/mydir").contains("--max-cost"));
}

#[test]
fn the_report_says_in_one_line_what_happened_to_the_investigation() {
    let line_of = |investigation: Investigation| {
        let report = Report {
            ai_brief: "Verdict.".into(),
            investigation,
            ..Report::default()
        };
        let text = format_report(&report, "/t");
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

#[test]
fn the_json_always_carries_the_investigation_status() {
    let value = |investigation| {
        serde_json::to_value(Report {
            investigation,
            ..Report::default()
        })
        .unwrap()["investigation"]
            .clone()
    };
    assert_eq!(
        value(Investigation::skipped("--scan-only")),
        serde_json::json!({"status": "skipped", "note": "--scan-only"})
    );
    assert_eq!(
        value(Investigation::failed("boom")),
        serde_json::json!({"status": "failed", "error": "boom"})
    );
    let ran = value(Investigation {
        status: InvestigationStatus::Complete,
        summary: Some(InvestigationSummary {
            id: "abc".into(),
            ..InvestigationSummary::default()
        }),
        ..Investigation::default()
    });
    assert_eq!(ran["status"], "complete");
    assert_eq!(ran["id"], "abc");
    assert_eq!(ran["tokens"]["input"], 0);
    // And it reads back.
    let parsed: Investigation = serde_json::from_value(ran).unwrap();
    assert_eq!(parsed.summary.unwrap().id, "abc");
}
