//! Ignore files in every module, `-a` and excludes, a target inside a
//! repository, trees without ignore files, and the scan filter's agreement.

use super::*;
use similar_asserts::assert_eq;

fn ignore_tree(env: &TestEnv) {
    env.files(&[
        (".gitignore", "target/\n*.log\n!keep.log\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/debug.log", "noise\n"),
        ("src/keep.log", "kept\n"),
        ("src/gen/.gitignore", "*\n!.gitignore\n!wanted.rs\n"),
        ("src/gen/out.rs", "// generated\n"),
        ("src/gen/wanted.rs", "// kept\n"),
    ])
    .file("target/debug/app", vec![0u8; 4096])
    .file("target/debug/deps/lib.rlib", vec![0u8; 8192])
    .files(&[
        ("target/.fingerprint/x", "hidden inside an ignored dir"),
        ("docs/.ignore", "draft.md\n"),
        ("docs/draft.md", "wip\n"),
        ("docs/final.md", "done\n"),
        (".git/info/exclude", "local.txt\n"),
        ("local.txt", "mine\n"),
    ]);
}

#[test]
fn ignore_files_apply_to_every_module() {
    let env = TestEnv::new();
    ignore_tree(&env);
    let report = run(env.target(), &options());
    assert_eq!(
        classified_names(&report),
        ["final.md", "wanted.rs", "keep.log", "main.rs"]
    );
    assert_eq!(child_names(&report.tree), ["docs", "src"]);
    // (The test tree's own root is called `target` too.)
    let inside = env.path("target").to_string_lossy().into_owned();
    assert!(!report.tree_rendered.contains("── target/"));
    assert!(
        report
            .recent_files
            .iter()
            .all(|f| !f.path.starts_with(&inside))
    );
    // Disk usage is the disk's: the ignored directory takes space, and its
    // rows say it was ignored.
    assert!(
        report
            .disk_usage
            .iter()
            .filter(|e| e.path.starts_with(&inside))
            .all(|e| e.ignored)
    );
    assert!(report.disk_usage.iter().any(|e| e.path == inside));
    let ignore = &report.ignore;
    assert!(ignore.enabled);
    assert_eq!(
        ignore.rule_files,
        [
            ".git/info/exclude",
            ".gitignore",
            "docs/.ignore",
            "src/gen/.gitignore"
        ]
    );
    // debug.log, local.txt, draft.md, out.rs, and two files inside target/.
    assert_eq!(ignore.files_removed, 6);
    assert_eq!(ignore.dirs_removed, 1);

    // --no-ignore brings back exactly what was removed.
    let mut opts = options();
    opts.respect_ignore = false;
    let all = run(env.target(), &opts);
    assert_eq!(
        all.classified_files.len() as u64,
        report.classified_files.len() as u64 + ignore.files_removed
    );
    assert!(all.tree_rendered.contains("── target/"));
    assert!(!all.ignore.enabled);
    assert!(all.ignore.rule_files.is_empty());
    let size = |s: &BaseScan| s.disk_usage.last().unwrap().size_bytes;
    assert_eq!(size(&all), size(&report));
    assert!(all.disk_usage.iter().all(|e| !e.ignored));
}

#[test]
fn hidden_stays_governed_by_all_and_excludes_still_apply() {
    let env = TestEnv::new();
    ignore_tree(&env);
    let mut opts = options();
    opts.show_hidden = true;
    opts.exclude = vec!["docs".into()];
    let report = run(env.target(), &opts);
    let names = classified_names(&report);
    assert!(names.contains(&".gitignore"));
    assert!(names.contains(&"exclude"), "-a shows .git");
    assert!(!names.contains(&"x"), "still ignored with -a");
    assert!(!names.contains(&"final.md"), "-x still applies");
    // debug.log, local.txt, out.rs, and with -a all three files in target/
    // (draft.md sits in an excluded directory, so it was never in scope).
    assert_eq!(report.ignore.files_removed, 6);
}

#[test]
fn a_target_inside_a_repository_does_not_read_its_parents_rules() {
    let env = TestEnv::new();
    env.file(".gitignore", "*.txt\nsub/\n")
        .file("sub/notes.txt", "kept\n");
    let report = run(&env.path("sub"), &options());
    assert_eq!(classified_names(&report), ["notes.txt"]);
    assert!(report.ignore.rule_files.is_empty());
}

#[test]
fn a_tree_without_ignore_files_scans_as_with_no_ignore() {
    let env = TestEnv::new();
    disk_tree(&env);
    let with = run(env.target(), &options());
    let mut opts = options();
    opts.respect_ignore = false;
    let mut without = run(env.target(), &opts);
    without.ignore.enabled = true;
    assert_eq!(with, without);
}

#[test]
fn scan_filter_agrees_with_the_scan() {
    let env = TestEnv::new();
    ignore_tree(&env);
    let report = run(env.target(), &options());
    let filter = ScanFilter::new(env.target(), &options());
    for file in &report.classified_files {
        assert!(filter.allows_file(Path::new(&file.path)), "{}", file.path);
    }
    for rel in ["target", "src/gen"] {
        assert_eq!(filter.allows_dir(&env.path(rel)), rel == "src/gen", "{rel}");
    }
    for rel in [
        "src/debug.log",
        "local.txt",
        "docs/draft.md",
        "src/gen/out.rs",
    ] {
        assert!(!filter.allows_file(&env.path(rel)), "{rel}");
    }
}
