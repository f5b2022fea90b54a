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
        .file("src/main.rs", vec![1u8; 3000])
        .file("src/trace.log", vec![2u8; 700])
        .file("target/debug/app", vec![3u8; 40_000])
        .file("target/debug/deps/lib.rlib", vec![4u8; 90_000])
        .file("target/release/.fingerprint/f", vec![5u8; 1_100])
        .file("target/CACHEDIR.TAG", vec![6u8; 177])
        .file("node_modules/dep/index.js", vec![7u8; 29_000])
        .file("node_modules/dep/skip/x.js", vec![8u8; 5_000])
        .file("a/b/node_modules/x/y/z.js", vec![9u8; 12_345])
        .file(".venv/lib/site.py", vec![10u8; 2_222]);
    // A hard link inside an ignored tree to a file outside it counts once.
    fs::hard_link(
        env.path("src/main.rs"),
        env.path("target/debug/main_copy.rs"),
    )
    .unwrap();
    for (exclude, hidden) in [(vec![], true), (vec!["skip"], true), (vec![], false)] {
        let mut opts = options();
        opts.show_hidden = hidden;
        opts.exclude = exclude.iter().map(|s| s.to_string()).collect();
        let report = run(env.target(), &opts);
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
        let Some(mut du) = real_du(env.target(), &exclude) else {
            eprintln!("du is not installed; skipping the comparison");
            return;
        };
        if !hidden {
            du.retain(|(path, _)| !path[t.len()..].contains("/."));
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
