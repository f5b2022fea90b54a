//! The terminal report stays sized for a person on a large tree: a report
//! shaped like a finished run on the benchmarks' generated tree (1,021
//! directories: 20 packages of 10 modules of 4 parts, about 20 files
//! each; 239 read by a model, the rest summarised from the scan, every
//! summary 1,200 characters, 30 flags, filled sections) prints at most
//! [`MAX_LINES`] lines at 100 columns and at 80, and a snapshot pins its
//! layout. (`tests/bench/report.rs` measures the binary on the real tree.)

use super::*;
use crate::report::sections::Component;
use crate::scan::RecentFile;

/// The bound for a finished run on a tree of about 1,000
/// directories.
const MAX_LINES: usize = 300;

/// 1,200 characters of summary for `path`.
fn long_summary(path: &str) -> String {
    let sentence = format!("Directory {path} holds generated modules that compute values. ");
    sentence.repeat(1_200 / sentence.len() + 1)[..1_200]
        .trim()
        .to_string()
}

/// The relative paths of the generated tree's directories, the target
/// first, each before what is below it.
fn generated_dirs() -> Vec<String> {
    let mut dirs = vec![".".to_string()];
    for pkg in 0..20 {
        dirs.push(format!("pkg{pkg:02}"));
        for module in 0..10 {
            dirs.push(format!("pkg{pkg:02}/mod{module}"));
            for sub in 0..4 {
                dirs.push(format!("pkg{pkg:02}/mod{module}/sub{sub}"));
            }
        }
    }
    dirs
}

/// The report a finished run of the generated tree prints.
fn large_report() -> Report {
    let mut report = fixture();
    report.directories.clear();
    let dirs = generated_dirs();
    assert_eq!(dirs.len(), 1_021);
    let mut children = Vec::new();
    report.directories.push(DirectoryReport {
        path: ".".into(),
        summary: Some(long_summary("the target")),
        coverage: DirCoverage::Investigated,
        ..DirectoryReport::default()
    });
    for (i, rel) in dirs.iter().enumerate().skip(1) {
        // What a $5 run buys: the packages, the modules of the first half
        // and a few parts get a model; the rest come from the scan.
        let depth = rel.split('/').count();
        let read = depth == 1 || (depth == 2 && i % 2 == 0) || (depth == 3 && i % 40 == 0);
        let mut dir = DirectoryReport {
            path: rel.clone(),
            summary: Some(long_summary(rel)),
            coverage: if read {
                DirCoverage::Investigated
            } else {
                DirCoverage::Mechanical
            },
            completeness: Some(0.7),
            confidence: Some(0.8),
            ..DirectoryReport::default()
        };
        if i % 34 == 0 {
            dir.flags.push(format!("{rel}/f{i}.rs"));
        }
        report.directories.push(dir);
        if depth == 1 {
            let files = (0..20)
                .map(|f| file_node(&format!("{rel}/f{f}.rs"), 1_000 + f))
                .collect();
            children.push(dir_node(rel, files));
        }
    }
    report.scan.tree = dir_node("", children);
    report.flags = (0..30)
        .map(|i| {
            let severity = ["critical", "concern", "info"][i % 3];
            flag(
                severity,
                &format!("pkg{:02}/mod{}/f{i}.rs", i % 20, i % 10),
                "A value is computed twice from the same input, and the second result is \
                 discarded without a word.",
            )
        })
        .collect();
    report.ai_detailed = "The tree is a generated workload of packages and modules. ".repeat(30);
    report.ai_sections.architecture = Some("Twenty packages of ten modules each. ".repeat(10));
    report.ai_sections.components = (0..20)
        .map(|pkg| Component {
            name: format!("pkg{pkg:02}"),
            path: Some(format!("pkg{pkg:02}")),
            role: "One package of generated modules.".into(),
            depends_on: Vec::new(),
            verified: None,
        })
        .collect();
    report.scan.recent_files = (0..10)
        .map(|i| RecentFile {
            path: format!("/tmp/mydir/pkg{i:02}/mod{i}/sub{}/f{i}.rs", i % 4),
            name: format!("f{i}.rs"),
            modified: 1.0,
            modified_human: "2026-11-28 10:00:00".into(),
        })
        .collect();
    report
}

fn line_count(width: usize) -> usize {
    let options = RenderOptions {
        target: "/tmp/mydir".into(),
        depth: 3,
        width,
    };
    let mut out = Vec::new();
    render(&large_report(), Format::Text, &options, &mut out).unwrap();
    String::from_utf8(out).unwrap().lines().count()
}

#[test]
fn a_large_tree_prints_at_most_300_lines() {
    for width in [100, 80] {
        let lines = line_count(width);
        assert!(lines <= MAX_LINES, "{lines} lines at {width} columns");
    }
}

#[test]
fn the_large_tree_report_snapshot() {
    let text = rendered(&large_report(), Format::Text, "/tmp/mydir");
    // What the directories section says it left out.
    assert!(text.contains("directories from the scan alone (no model read them)"));
    insta::assert_snapshot!(text);
}
