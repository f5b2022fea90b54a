//! Languages, line counts and large files; the ten newest regular files.

use super::*;
use similar_asserts::assert_eq;

#[test]
fn languages_lines_and_large_files() {
    let env = TestEnv::new();
    let many = "x\n".repeat(1500);
    env.file("big.rs", &many).files(&[
        ("a.py", "1\n2\n3"),
        ("b.py", "1\n"),
        ("tool", "#!/bin/sh\necho 1\necho 2\n"),
        ("notes.md", "not counted\n"),
        ("Main.JAVA", "class A {}\n"),
    ]);
    let huge = env.path("huge.c");
    fs::File::create(&huge)
        .unwrap()
        .set_len(12 * 1024 * 1024 + 300_000)
        .unwrap();
    let report = run(env.target(), &options());
    assert_eq!(report.languages, ["C", "Java", "Other", "Python", "Rust"]);
    let loc: Vec<(&str, u64)> = report
        .lines_of_code
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    // First-seen order over the classified files, which are sorted by path.
    assert_eq!(
        loc,
        [
            ("Java", 1),
            ("Python", 3),
            ("Rust", 1500),
            ("C", 0),
            ("Other", 3)
        ]
    );
    let large: Vec<(&str, Vec<&str>)> = report
        .large_files
        .iter()
        .map(|f| {
            (
                f.name.as_str(),
                f.reasons.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        large,
        [
            ("big.rs", vec!["lines: 1500"]),
            ("huge.c", vec!["size: 12.3 MB"])
        ]
    );
}

#[test]
fn recent_files_are_the_ten_newest_regular_files() {
    let env = TestEnv::new();
    for i in 0..15u64 {
        let rel = format!("d{}/f{i:02}.txt", i % 3);
        env.file(&rel, "x");
        set_mtime(&env.path(&rel), 1_700_000_000 + i * 60);
    }
    env.file(".hidden/newest.txt", "x");
    set_mtime(&env.path(".hidden/newest.txt"), 1_800_000_000);
    env.file("skip/newer.txt", "x");
    set_mtime(&env.path("skip/newer.txt"), 1_800_000_000);
    env.file("d0/skip", "a file named like an excluded directory");
    set_mtime(&env.path("d0/skip"), 1_800_000_000);
    env.symlink("d0/f00.txt", "newest_link");

    let mut opts = options();
    opts.exclude = vec!["skip".into()];
    let report = run(env.target(), &opts);
    let names: Vec<&str> = report
        .recent_files
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    let expected: Vec<String> = (5..15).rev().map(|i| format!("f{i:02}.txt")).collect();
    assert_eq!(names, expected);
    let first = &report.recent_files[0];
    assert_eq!(first.modified, 1_700_000_000.0 + 14.0 * 60.0);
    assert_eq!(first.path, env.path("d2/f14.txt").to_string_lossy());
    assert_eq!(first.modified_human.len(), "2023-11-14 22:13:20".len());

    opts.show_hidden = true;
    let report = run(env.target(), &opts);
    assert_eq!(report.recent_files[0].name, "newest.txt");
}

#[test]
fn a_dotted_target_path_still_has_recent_files() {
    // The original's `*/.*` pattern dropped everything here.
    let env = TestEnv::new();
    env.file(".config/app/settings.toml", "a = 1\n");
    let report = run(&env.path(".config/app"), &options());
    assert_eq!(report.recent_files.len(), 1);
    assert_eq!(report.recent_files[0].name, "settings.toml");
    assert_eq!(report.classified_files.len(), 1);
}
