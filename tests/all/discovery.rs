//! The investigation's directories and their fingerprints come from the base
//! scan's one walk, not from a second walk of the tree. These tests hold them
//! to what the disk says on an odd tree ([`odd_tree`]: symlinks of every kind,
//! ignored and `-x` directories, hidden and skip-listed names, names that are
//! not UTF-8, a FIFO, a nested repository's `info/exclude`, a directory
//! nobody may read and one that may be listed but not searched):
//!
//! - in process, the discovered directories are the expected ones under
//!   every scope option, and every fingerprint the scan took equals the one
//!   a dir loop reads from the disk when it starts (`fingerprint`), also
//!   when the target is reached through a symlink and after a change;
//! - end to end, as an unprivileged user when the tests run as root (so
//!   permission bits bite), the binary investigates exactly the expected
//!   directories and an unchanged rerun makes no request: the fingerprints
//!   the scan took match those the dir loops recorded.

use crate::support;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use luminos::ai::rules::discover::{discover_directories, relative, sort_leaf_first};
use luminos::ai::rules::fingerprint::fingerprint;
use luminos::progress::Progress;
use luminos::scan::{ScanFilter, ScanOptions, scan_with_dirs};
use support::TestEnv;
use support::fs::{Unlock, mkfifo};

/// The directories discovered in [`odd_tree`] with `-x vendor` and the
/// default scope: not the hidden, ignored, excluded, skip-listed or
/// symlinked ones.
const DISCOVERED: &[&str] = &[
    ".",
    "bad\u{fffd}dir",
    "blind",
    "blind/sub",
    "empty",
    "locked",
    "repo",
    "src",
    "src/inner",
];

/// Build the odd tree in `env`'s target. `locked` (mode 000) and `blind`
/// (readable, not searchable) bite only when the reader is not root.
fn odd_tree(env: &TestEnv) {
    env.files(&[
        ("README.md", "# Odd\n"),
        (".gitignore", "out/\n*.log\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/inner/lib.rs", "pub fn f() {}\n"),
        ("src/.env", "HIDDEN=1\n"),
        ("src/app.log", "ignored\n"),
        ("src/vendor", "a file: -x names only directories\n"),
        ("out/gen.rs", "// ignored directory\n"),
        (".hidden/h.rs", "// hidden directory\n"),
        ("vendor/v.rs", "// -x directory\n"),
        ("node_modules/m/index.js", "// skip-listed\n"),
        ("pkg.egg-info/PKG-INFO", "skip-listed\n"),
        ("repo/code.py", "x = 1\n"),
        ("repo/.git/info/exclude", "generated/\n"),
        (
            "repo/generated/g.py",
            "# excluded by the nested repository\n",
        ),
        ("locked/l.py", "l = 1\n"),
        ("blind/b.py", "b = 1\n"),
        ("blind/sub/s.py", "s = 1\n"),
    ])
    .dir("empty");
    let target = env.target();
    let raw = |bytes: &[u8]| target.join(OsStr::from_bytes(bytes));
    std::fs::create_dir(raw(b"bad\xffdir")).unwrap();
    std::fs::write(raw(b"bad\xffdir/caf\xe9.py"), "c = 1\n").unwrap();
    std::fs::create_dir(raw(b"\xfe.egg-info")).unwrap();
    env.symlink("inner", "src/link_dir")
        .symlink("README.md", "link_file.md")
        .symlink("nowhere", "broken")
        .symlink("loop_b", "loop_a")
        .symlink("loop_a", "loop_b")
        .symlink("..", "src/up")
        .symlink(OsStr::from_bytes(b"\xfe-target"), "odd_link");
    mkfifo(&env.path("src/pipe"));
    set_mode(&env.path("locked"), 0o000);
    set_mode(&env.path("blind"), 0o644);
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn options(show_hidden: bool, exclude: &[&str], respect_ignore: bool) -> ScanOptions {
    ScanOptions {
        show_hidden,
        exclude: exclude.iter().map(|s| s.to_string()).collect(),
        respect_ignore,
        ..ScanOptions::default()
    }
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Scan `walked` (the target or a symlink to it), discover under the
/// canonical target, and check every fingerprint the scan took against the
/// disk. Returns the discovered directories, relative, and their
/// fingerprints.
fn check(walked: &Path, canonical: &Path, options: &ScanOptions) -> Vec<(String, String)> {
    let (_, scanned) = scan_with_dirs(walked, options, &Progress::silent());
    let scope = ScanFilter::new(canonical, options);
    // Every directory in scope, skip-listed ones included.
    for dir in scanned.iter() {
        let path = if dir.rel.as_os_str().is_empty() {
            canonical.to_path_buf()
        } else {
            canonical.join(&dir.rel)
        };
        match &dir.fingerprint {
            Some(taken) => assert_eq!(
                taken.to_string(),
                fingerprint(&path, Some(&scope)),
                "{}",
                path.display()
            ),
            // Only a directory the scan could not examine has none.
            None => assert!(
                std::fs::symlink_metadata(&path).is_err(),
                "{}",
                path.display()
            ),
        }
    }
    let discovery = discover_directories(canonical, &scanned);
    let mut leaf_first = discovery.dirs.clone();
    sort_leaf_first(&mut leaf_first);
    assert_eq!(leaf_first, discovery.dirs, "discovery is leaf-first");
    discovery
        .iter()
        .map(|(dir, taken)| {
            let current = match taken {
                Some(taken) => taken.to_string(),
                None => fingerprint(dir, Some(&scope)),
            };
            (relative(canonical, dir), current)
        })
        .collect()
}

fn names(found: &[(String, String)]) -> BTreeSet<String> {
    found.iter().map(|(rel, _)| rel.clone()).collect()
}

#[test]
fn scan_fed_discovery_and_fingerprints_match_the_disk_on_an_odd_tree() {
    let env = TestEnv::new();
    odd_tree(&env);
    let _unlock = Unlock(&env, &["locked", "blind"]);
    let canonical = std::fs::canonicalize(env.target()).unwrap();
    let via_link = env.root().join("via-link");
    std::os::unix::fs::symlink(env.target(), &via_link).unwrap();

    let base = set(DISCOVERED);
    let with = |extra: &[&str]| -> BTreeSet<String> {
        base.iter()
            .cloned()
            .chain(extra.iter().map(|s| s.to_string()))
            .collect()
    };
    let cases = [
        (options(false, &["vendor"], true), base.clone()),
        (options(false, &[], true), with(&["vendor"])),
        // `repo/.git` is hidden and skip-listed.
        (options(true, &["vendor"], true), with(&[".hidden"])),
        (
            options(false, &["vendor"], false),
            with(&["out", "repo/generated"]),
        ),
        (
            options(true, &[], false),
            with(&[".hidden", "out", "repo/generated", "vendor"]),
        ),
    ];
    for (options, expected) in &cases {
        for walked in [env.target(), via_link.as_path()] {
            let found = check(walked, &canonical, options);
            similar_asserts::assert_eq!(&names(&found), expected, "{options:?}");
        }
    }

    // A change shows in the scan's fingerprint exactly where it shows on the
    // disk: a file's new size in its directory, not in its parent; a hidden
    // file nowhere without -a.
    let scope = options(false, &["vendor"], true);
    let before = check(env.target(), &canonical, &scope);
    env.file("src/inner/lib.rs", "pub fn f() -> u32 { 1 }\n")
        .file("src/.secret", "hidden\n");
    let after = check(env.target(), &canonical, &scope);
    let changed: Vec<&str> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b != a)
        .map(|(b, _)| b.0.as_str())
        .collect();
    assert_eq!(changed, ["src/inner"]);
}

#[test]
fn an_unprivileged_rerun_of_an_odd_tree_investigates_nothing() {
    let env = TestEnv::new().with_mock();
    odd_tree(&env);
    let _unlock = Unlock(&env, &["locked", "blind"]);
    let run = || {
        let mut cmd = env.bare_cmd();
        cmd.env("ANTHROPIC_API_KEY", "test-key")
            .args(["--json", "-x", "vendor"])
            .arg(env.target());
        env.run_unprivileged(&mut cmd);
        let out = cmd.output().expect("run luminos");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
    };

    run();
    let investigated = env.loop_dirs_since(0);
    similar_asserts::assert_eq!(investigated, set(DISCOVERED));

    let requests = env.server.request_count();
    let again = run();
    assert_eq!(env.server.request_count(), requests, "{again}");
    assert!(
        again.contains("[AI] Directories to investigate: 0"),
        "{again}"
    );
}
