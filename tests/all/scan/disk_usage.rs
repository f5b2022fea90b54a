//! Disk usage against the real `du`, in post order with sorted siblings.

use super::*;
use similar_asserts::assert_eq;

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

/// The scan with these `-x` names, hidden entries shown or not.
fn run_with(target: &Path, exclude: &[&str], hidden: bool) -> BaseScan {
    let mut opts = options();
    opts.show_hidden = hidden;
    opts.exclude = exclude.iter().map(|s| s.to_string()).collect();
    run(target, &opts)
}

/// Every disk usage row of `report` (a scan of `target` with these `-x`
/// names) is what the real `du` says, hidden rows left out when the scan
/// hides them; `false` when du is not installed (nothing compared).
fn matches_real_du(target: &Path, report: &BaseScan, exclude: &[&str], hidden: bool) -> bool {
    let Some(mut du) = real_du(target, exclude) else {
        eprintln!("du is not installed; skipping the comparison");
        return false;
    };
    if !hidden {
        let t = target.to_string_lossy().len();
        du.retain(|(path, _)| !path[t..].contains("/."));
    }
    let mut ours: Vec<(String, u64)> = report
        .disk_usage
        .iter()
        .map(|e| (e.path.clone(), e.size_bytes))
        .collect();
    ours.sort();
    assert_eq!(ours, du, "exclude {exclude:?}, hidden {hidden}");
    true
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
        let report = run_with(env.target(), &exclude, hidden);
        if !matches_real_du(env.target(), &report, &exclude, hidden) {
            return;
        }
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

/// Ignored directories take space: disk usage counts them as `du -b`
/// does (the README says it is what du reports), gives the listed ones
/// their rows marked `ignored`, and leaves the rest of the scan without
/// them. Hard links, hidden and deep ignored directories, ignored files and
/// `-x` names inside an ignored tree all count as du counts them.
#[test]
fn disk_usage_counts_ignored_directories_and_marks_them() {
    // du gives a hard-linked file's bytes to the directory it meets first,
    // in the order the file system lists them. In memory that is newest
    // first (`target` before `src`); this comparison was written against a
    // disk file system, so its tree stays there.
    let env = TestEnv::on_disk();
    env.file(".gitignore", "target/\nnode_modules/\n*.log\n.venv/\n")
        .sized_files(&[
            ("src/main.rs", 3000),
            ("src/trace.log", 700),
            ("target/debug/app", 40_000),
            ("target/debug/deps/lib.rlib", 90_000),
            ("target/release/.fingerprint/f", 1_100),
            ("target/CACHEDIR.TAG", 177),
            ("node_modules/dep/index.js", 29_000),
            ("node_modules/dep/skip/x.js", 5_000),
            ("a/b/node_modules/x/y/z.js", 12_345),
            (".venv/lib/site.py", 2_222),
        ]);
    // A hard link inside an ignored tree to a file outside it counts once.
    fs::hard_link(
        env.path("src/main.rs"),
        env.path("target/debug/main_copy.rs"),
    )
    .unwrap();
    for (exclude, hidden) in [(vec![], true), (vec!["skip"], true), (vec![], false)] {
        let report = run_with(env.target(), &exclude, hidden);
        let t = env.target().to_string_lossy().into_owned();
        // The rest of the scan leaves them out.
        let classified: Vec<&str> = report
            .classified_files
            .iter()
            .map(|f| &f.path[t.len()..])
            .filter(|p| *p != "/.gitignore")
            .collect();
        assert_eq!(classified, ["/src/main.rs"], "{exclude:?}");
        let ignored: Vec<&str> = report
            .disk_usage
            .iter()
            .filter(|e| e.ignored)
            .map(|e| &e.path[t.len()..])
            .collect();
        // (`a/b/node_modules` is below the listed depth: its bytes are in
        // `a/b`'s row.)
        let mut expected = vec![
            "/node_modules/dep",
            "/node_modules",
            "/target/debug",
            "/target/release",
            "/target",
        ];
        if hidden {
            expected.insert(0, "/.venv/lib");
            expected.insert(1, "/.venv");
        }
        assert_eq!(ignored, expected, "{exclude:?} hidden {hidden}");
        if !matches_real_du(env.target(), &report, &exclude, hidden) {
            return;
        }
    }
}
