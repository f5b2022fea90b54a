//! The base scan on real temp trees, called as a library: every rule of the
//! tree, classification, code, recency and disk usage, checked against the
//! original's behaviour (and against real `du` where it is installed).

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use luminos::progress::Progress;
use luminos::scan::ScanOptions;
use luminos::scan::{BaseScan, NodeKind, ScanFilter, TreeNode, scan};
use similar_asserts::assert_eq;
use support::TestEnv;
use support::fs::mkfifo;
use support::output::{SCAN_KEYS, keys};

fn options() -> ScanOptions {
    ScanOptions::default()
}

fn run(target: &Path, options: &ScanOptions) -> BaseScan {
    scan(target, options, &Progress::silent())
}

fn child<'a>(node: &'a TreeNode, name: &str) -> &'a TreeNode {
    node.children
        .as_ref()
        .and_then(|c| c.iter().find(|n| n.name == name))
        .unwrap_or_else(|| panic!("no child {name} in {}", node.name))
}

fn child_names(node: &TreeNode) -> Vec<&str> {
    node.children
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|n| n.name.as_str())
        .collect()
}

fn classified_names(scan: &BaseScan) -> Vec<&str> {
    scan.classified_files
        .iter()
        .map(|f| f.name.as_str())
        .collect()
}

fn set_mtime(path: &Path, secs: u64) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

// ---------------------------------------------------------------- tree

#[test]
fn tree_rendering_snapshot() {
    let env = TestEnv::new();
    env.file("src/main.py", "print('hi')\n")
        .file("src/lib/util.py", vec![b'x'; 1536])
        .file("src/lib/deep/deeper/gone.py", "x")
        .file("README.md", "# title\n")
        .file("data/big.csv", vec![b'1'; 3 * 1024 * 1024 + 1])
        .file(".hidden/secret", "s")
        .file(".env", "A=1")
        .dir("empty");
    let report = run(env.target(), &options());
    insta::assert_snapshot!(report.tree_rendered);
}

#[test]
fn tree_sorts_skips_hidden_and_excluded_names_and_truncates() {
    let env = TestEnv::new();
    env.files(&[
        ("b.py", "x"),
        ("A.py", "x"),
        ("a/b/c/deep.py", "x"),
        (".hidden", "x"),
        ("node_modules/pkg.js", "x"),
        ("keep/node_modules", "a file with an excluded name"),
    ]);
    let mut opts = options();
    opts.depth = 1;
    opts.exclude = vec!["node_modules".into()];
    let report = run(env.target(), &opts);
    let root = &report.tree;
    assert_eq!(root.path, env.target().to_string_lossy());
    assert_eq!(root.kind, NodeKind::Directory);
    // Byte order, like Python's sorted(): uppercase first.
    assert_eq!(child_names(root), ["A.py", "a", "b.py", "keep"]);
    let a = child(root, "a");
    let b = child(a, "b");
    assert_eq!(b.truncated, Some(true));
    assert_eq!(b.children, None);
    // The tree skips excluded names even for files.
    assert!(child_names(child(root, "keep")).is_empty());
    // Classification only prunes directories by name.
    assert!(classified_names(&report).contains(&"node_modules"));
    assert_eq!(child(root, "b.py").size, Some(1));

    opts.show_hidden = true;
    let report = run(env.target(), &opts);
    assert!(child_names(&report.tree).contains(&".hidden"));
}

#[test]
fn tree_follows_symlinked_directories_and_bounds_loops_by_depth() {
    let env = TestEnv::new();
    env.file("real/inner.txt", "abc")
        .symlink("real", "alias")
        .symlink(".", "real/loop")
        .symlink("nowhere", "broken")
        .symlink("real/inner.txt", "file_link");
    mkfifo(&env.path("pipe"));
    let report = run(env.target(), &options());
    let root = &report.tree;
    assert_eq!(child_names(root), ["alias", "file_link", "real"]);
    let alias = child(root, "alias");
    assert_eq!(alias.kind, NodeKind::Directory);
    assert_eq!(child(alias, "inner.txt").size, Some(3));
    assert_eq!(child(root, "file_link").size, Some(3));
    // real/loop -> real: depth 1, 2, 3 are listed, then truncated.
    let l1 = child(child(root, "real"), "loop");
    let l2 = child(l1, "loop");
    let l3 = child(l2, "loop");
    assert_eq!(l3.truncated, Some(true));
    // The walk itself never entered the symlinks.
    assert_eq!(classified_names(&report), ["file_link", "inner.txt"]);
}

#[test]
fn deep_trees_with_many_loops_still_finish() {
    let env = TestEnv::new();
    env.dir("d");
    for name in ["l1", "l2", "l3"] {
        env.symlink("..", &format!("d/{name}"));
    }
    let mut opts = options();
    opts.depth = 40;
    let report = run(env.target(), &opts);
    assert!(report.tree_rendered.lines().count() > 10);
}

// ------------------------------------------------------- classification

#[test]
fn classification_follows_the_reference() {
    let env = TestEnv::new();
    env.files(&[
        ("script.py", "print('hello')\n"),
        ("image.PNG", "not really"),
        ("data.json", "{\"key\": \"value\"}"),
        ("query.sql", "select 1;\n"),
        ("README", "plain words\n"),
        ("run", "#!/usr/bin/env python3\nprint(1)\n"),
    ])
    .file("blob", [0u8, 1, 2, 3, 255])
    .file("empty", "")
    .file("pic", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01")
    .file("archive", b"\x1f\x8b\x08\0\0\0\0\0\0\x03abc")
    .file("doc", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    .file("sub/.hidden.py", "x")
    .file(".hidden_dir/x.py", "x")
    .symlink("script.py", "link.py")
    .symlink("README", "README_link")
    .symlink("sub", "sub_link");
    mkfifo(&env.path("fifo"));
    let _socket = std::os::unix::net::UnixListener::bind(env.path("sock")).unwrap();
    let report = run(env.target(), &options());

    let paths: Vec<&str> = report
        .classified_files
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "sorted by path");

    let get = |name: &str| {
        report
            .classified_files
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("{name} not classified"))
    };
    let expect = |name: &str, category: &str, description: Option<&str>| {
        let f = get(name);
        assert_eq!(
            (f.category.as_str(), f.description.as_deref()),
            (category, description),
            "{name}"
        );
    };
    expect("script.py", "source", None);
    expect("image.PNG", "media", None);
    expect("data.json", "config", None);
    expect("query.sql", "data", None);
    expect("README", "source", Some("ASCII text"));
    expect(
        "run",
        "source",
        Some("Python script, ASCII text executable"),
    );
    expect("blob", "unknown", Some("data"));
    expect("empty", "unknown", Some("empty"));
    expect("pic", "media", Some("PNG image data"));
    expect("archive", "archive", Some("gzip compressed data"));
    expect("doc", "document", Some("PDF document, version 1.7"));
    expect("link.py", "source", None);
    // `file` does not follow symlinks, so the original saw only the link.
    expect("README_link", "unknown", Some("symbolic link to README"));
    assert_eq!(get("link.py").size, get("script.py").size);
    assert_eq!(
        get("script.py").path,
        env.path("script.py").to_string_lossy()
    );
    for absent in ["fifo", "sock", ".hidden.py", "x.py", "sub_link"] {
        assert!(!classified_names(&report).contains(&absent), "{absent}");
    }
    assert_eq!(report.survey_signals.total_files, 13);
    assert_eq!(report.file_categories.values().sum::<u64>(), 13);
    // First-seen order over the sorted list: README comes first.
    assert_eq!(report.file_categories.keys().next().unwrap(), "source");
    assert_eq!(report.survey_signals.file_descriptions["data"], 1);
}

/// Compiled Python, ELF objects, keystores, OpenPGP keys and SQLite
/// databases are described as `file` describes them (real bytes of each),
/// and those descriptions are what the survey sees (cut at 80 characters).
#[test]
fn common_binary_formats_are_described_as_file_does() {
    let env = TestEnv::new();
    let sqlite_header: Vec<u8> = (0..100)
        .map(|i| match i {
            0..=15 => b"SQLite format 3\0"[i],
            16 => 0x10,
            18 | 19 | 27 | 31 | 43 | 59 | 95 => 1,
            47 => 4,
            96 => 0x00,
            97 => 0x2e,
            98 => 0x63,
            99 => 0x01,
            _ => 0,
        })
        .collect();
    env.file(
        "__pycache__/m.cpython-311.pyc",
        b"\xa7\x0d\x0d\x0a\0\0\0\0\x1a\xbb\x04\x6b\x09\0\0\0\xe3\0\0\0",
    )
    .file(
        "bin/hello",
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sniff/hello-pie"),
        )
        .unwrap(),
    )
    .file("keys/store.jks", b"\xfe\xed\xfe\xed\0\0\0\x02\0\0\0\x01")
    .file(
        "keys/pub.gpg",
        b"\x98\x33\x04\x6b\x04\xbb\x23\x16\x09\x2b\x06\x01",
    )
    .file(
        "keys/pub.asc",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEawS7IxYJKwYBBAHaRw8BAQdA\n",
    )
    .file("state.sqlite3", sqlite_header);
    let report = run(env.target(), &options());
    let description = |name: &str| {
        report
            .classified_files
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.description.clone())
            .unwrap_or_else(|| panic!("{name} has no description"))
    };
    assert_eq!(
        description("m.cpython-311.pyc"),
        "Byte-compiled Python module for CPython 3.11, timestamp-based, \
         .py timestamp: Mon Nov 23 22:15:54 2026 UTC, .py size: 9 bytes"
    );
    assert_eq!(
        description("hello"),
        "ELF 64-bit LSB pie executable, x86-64, version 1 (SYSV), dynamically linked, \
         interpreter /lib64/ld-linux-x86-64.so.2"
    );
    assert_eq!(description("store.jks"), "Java KeyStore");
    assert_eq!(
        description("pub.gpg"),
        "OpenPGP Public Key Version 4, Created Mon Nov 23 22:16:03 2026, EdDSA"
    );
    assert_eq!(
        description("pub.asc"),
        "PGP public key block Public-Key (old)"
    );
    assert_eq!(
        description("state.sqlite3"),
        "SQLite 3.x database, last written using SQLite version 3040001, file counter 1, \
         database pages 1, cookie 0x1, schema 4, UTF-8, version-valid-for 1"
    );
    let signals = &report.survey_signals.file_descriptions;
    let elf = description("hello");
    assert_eq!(signals[&format!("{}...", &elf[..80])], 1, "{signals:?}");
    assert_eq!(signals["Java KeyStore"], 1);
}

#[test]
fn hidden_and_excluded_directories_are_pruned_from_classification() {
    let env = TestEnv::new();
    env.files(&[
        (".hidden.py", "x"),
        ("visible.py", "x"),
        ("node_modules/pkg.js", "x"),
        ("src/node_modules/dep.js", "x"),
    ]);
    let mut opts = options();
    opts.exclude = vec!["node_modules".into()];
    let report = run(env.target(), &opts);
    assert_eq!(classified_names(&report), ["visible.py"]);
    opts.show_hidden = true;
    let report = run(env.target(), &opts);
    assert_eq!(classified_names(&report), [".hidden.py", "visible.py"]);
}

// ---------------------------------------------------------------- code

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

// ------------------------------------------------------------- recency

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

// ---------------------------------------------------------------- disk

/// `du -b --max-depth=2 [--exclude=NAME]... TARGET`, or `None` without du.
fn real_du(target: &Path, exclude: &[&str]) -> Option<Vec<(String, u64)>> {
    let mut cmd = Command::new("du");
    cmd.arg("-b").arg("--max-depth=2");
    for name in exclude {
        cmd.arg(format!("--exclude={name}"));
    }
    let out = cmd.arg(target).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut rows: Vec<(String, u64)> = text
        .lines()
        .filter_map(|line| {
            let (size, path) = line.split_once('\t')?;
            Some((path.to_string(), size.parse().ok()?))
        })
        .collect();
    rows.sort();
    Some(rows)
}

fn disk_tree(env: &TestEnv) {
    env.file("a/one.bin", vec![1u8; 5000])
        .file("a/b/two.bin", vec![2u8; 7000])
        .file("a/b/c/three.bin", vec![3u8; 11_000])
        .file("a/b/c/d/four.bin", vec![4u8; 13_000])
        .file(".git/objects/pack", vec![5u8; 17_000])
        .file("x/.cache/blob", vec![6u8; 19_000])
        .file("top.txt", vec![7u8; 23])
        .file("node_modules/dep/index.js", vec![8u8; 29_000])
        .file("a/node_modules", vec![9u8; 31])
        .symlink("a/one.bin", "link")
        .dir("empty");
    // A hard link in the same directory is counted once.
    fs::hard_link(env.path("a/one.bin"), env.path("a/one_again.bin")).unwrap();
    mkfifo(&env.path("a/fifo"));
}

#[test]
fn disk_usage_matches_real_du() {
    let env = TestEnv::new();
    disk_tree(&env);
    for (exclude, hidden) in [
        (vec![], true),
        (vec!["node_modules"], true),
        (vec![], false),
    ] {
        let mut opts = options();
        opts.show_hidden = hidden;
        opts.exclude = exclude.iter().map(|s| s.to_string()).collect();
        let report = run(env.target(), &opts);
        let Some(mut du) = real_du(env.target(), &exclude) else {
            eprintln!("du is not installed; skipping the comparison");
            return;
        };
        if !hidden {
            du.retain(|(path, _)| !path[env.target().to_string_lossy().len()..].contains("/."));
        }
        let mut ours: Vec<(String, u64)> = report
            .disk_usage
            .iter()
            .map(|e| (e.path.clone(), e.size_bytes))
            .collect();
        ours.sort();
        assert_eq!(ours, du, "exclude {exclude:?}, hidden {hidden}");
    }
}

#[test]
fn disk_usage_is_post_order_with_sorted_siblings() {
    let env = TestEnv::new();
    disk_tree(&env);
    let report = run(env.target(), &options());
    let t = env.target().to_string_lossy().into_owned();
    let paths: Vec<String> = report
        .disk_usage
        .iter()
        .map(|e| e.path.strip_prefix(&t).unwrap().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "/a/b",
            "/a",
            "/empty",
            "/node_modules/dep",
            "/node_modules",
            "/x",
            ""
        ]
    );
    let root = report.disk_usage.last().unwrap();
    assert_eq!(report.top_directories[0], *root);
    assert_eq!(report.top_directories.len(), 5);
    let sizes: Vec<u64> = report
        .top_directories
        .iter()
        .map(|e| e.size_bytes)
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
}

// -------------------------------------------------------------- ignore

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
    assert!(
        report
            .disk_usage
            .iter()
            .all(|e| !e.path.starts_with(&inside))
    );
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
    assert!(size(&all) > size(&report) + 12_000);
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

// ---------------------------------------------------------- robustness

#[test]
fn non_utf8_names_are_lossy_but_present() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
    fs::write(env.target().join(name), "x\n").unwrap();
    let report = run(env.target(), &options());
    assert_eq!(classified_names(&report), ["caf\u{fffd}.py"]);
    assert_eq!(report.languages, ["Python"]);
    serde_json::to_string(&report).unwrap();
}

#[test]
fn a_symlinked_target_is_scanned_through() {
    let env = TestEnv::new();
    env.file("real/a.py", "x\n");
    let link = env.root().join("link");
    symlink(env.path("real"), &link).unwrap();
    let report = run(&link, &options());
    assert_eq!(report.tree.name, "link");
    assert_eq!(
        report.classified_files[0].path,
        link.join("a.py").to_string_lossy()
    );
    assert_eq!(report.recent_files.len(), 1);
    assert_eq!(
        report.disk_usage.last().unwrap().path,
        link.to_string_lossy()
    );
}

#[test]
fn files_changing_during_the_scan_do_not_break_it() {
    let env = TestEnv::new();
    for i in 0..200 {
        env.file(&format!("d{}/f{i}.py", i % 10), "x\n".repeat(i));
    }
    let target = env.target().to_path_buf();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let path = target.join(format!("d{}/f{}.py", i % 10, i % 200));
                let _ = fs::remove_file(&path);
                let _ = fs::write(&path, "y\n".repeat((i % 50) as usize));
                let _ = fs::remove_dir_all(target.join(format!("churn{}", i % 3)));
                let _ = fs::create_dir_all(target.join(format!("churn{}/x", (i + 1) % 3)));
                i += 1;
            }
        });
        for _ in 0..5 {
            let report = run(&target, &options());
            assert!(report.survey_signals.total_files <= 200);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}

#[test]
fn the_json_keys_are_the_references_in_order() {
    let env = TestEnv::new();
    env.file("a.py", "x\n");
    let report = run(env.target(), &options());
    let value = serde_json::to_value(&report).unwrap();
    assert_eq!(keys(&value), SCAN_KEYS);
    let file = &value["classified_files"][0];
    assert_eq!(
        keys(file),
        ["path", "name", "category", "size", "description"]
    );
    assert!(file["description"].is_null());
}
