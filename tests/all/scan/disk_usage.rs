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
