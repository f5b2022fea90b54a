//! The JSON report's shape: `investigation` always, flags in report order,
//! and `directories` with every field the README promises.

use super::*;
use serde_json::{Value, json};

fn to_json(report: &Report) -> Value {
    serde_json::from_str(&rendered(report, Format::Json, "/tmp/mydir")).unwrap()
}

/// Flags come most severe first, then by path; each directory lists the
/// paths of the flags raised in it.
#[test]
fn flags_are_sorted_and_directories_carry_theirs() {
    let value = to_json(&fixture());
    let flags: Vec<(&str, &str)> = value["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["severity"].as_str().unwrap(), f["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        flags,
        [
            ("critical", "Cargo.toml"),
            ("concern", "src/core/engine.rs"),
            ("info", "general"),
            ("info", "src/backdoor.py"),
        ]
    );
    let dirs = value["directories"].as_array().unwrap();
    let paths: Vec<&str> = dirs.iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, [".", "docs", "src", "src/core"]);
    assert_eq!(dirs[0]["flags"], json!(["Cargo.toml"]));
    assert_eq!(dirs[2]["flags"], json!(["src/backdoor.py"]));
    assert_eq!(dirs[3]["flags"], json!(["src/core/engine.rs"]));
}

/// Every key of a directory, and `null`/absent where there is nothing.
#[test]
fn directories_have_the_documented_shape() {
    let value = to_json(&fixture());
    let dirs = &value["directories"];
    assert_eq!(
        dirs[0],
        json!({
            "path": ".",
            "summary": "The project root: a manifest and a README.",
            "coverage": "investigated",
            "completeness": 0.9,
            "confidence": 0.85,
            "notable_files": ["Cargo.toml"],
            "files": [
                {"path": "Cargo.toml", "summary": "The package manifest."},
                {"path": "README.md", "summary": "How to build and run it."}
            ],
            "flags": ["Cargo.toml"]
        })
    );
    assert_eq!(
        dirs[1],
        json!({"path": "docs", "summary": null, "coverage": "none",
               "notable_files": [], "files": [], "flags": []})
    );
    assert_eq!(dirs[2]["coverage"], "folded");
    assert_eq!(dirs[3]["coverage"], "mechanical");
    // It reads back.
    let parsed: Report = serde_json::from_value(value).unwrap();
    assert_eq!(parsed.directories, fixture().directories);
    // Without an investigation there are none, but the key is there.
    assert_eq!(to_json(&Report::default())["directories"], json!([]));
}

/// The JSON of hostile text is JSON: it parses back to the same text.
#[test]
fn hostile_text_round_trips() {
    let report = hostile();
    let value = to_json(&report);
    assert_eq!(value["ai_brief"], json!(report.ai_brief));
    let parsed: Report = serde_json::from_value(value).unwrap();
    assert_eq!(parsed.directories, report.directories);
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
