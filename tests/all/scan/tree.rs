//! The rendered tree: its snapshot, sorting, hidden and excluded names,
//! truncation, symlinked directories and loops.

use super::*;
use similar_asserts::assert_eq;

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

/// A symlink that leads out of the target is shown as a link, never
/// followed: not by the tree, the classification, disk usage or the recent
/// files (the report's tree once listed all of `/etc` through one).
#[test]
fn symlinks_out_of_the_target_are_shown_as_links_and_never_followed() {
    let env = TestEnv::new();
    let outside = env.root().join("outside");
    fs::create_dir_all(outside.join("deep")).unwrap();
    fs::write(outside.join("deep/secret.conf"), "x".repeat(100_000)).unwrap();
    fs::write(outside.join("passwd"), "root:x:0:0\n").unwrap();
    env.file("src/app.py", "print(1)\n")
        .symlink(&outside, "etc")
        .symlink(outside.join("passwd"), "pw.py")
        .symlink("../../outside", "src/up");
    let report = run(env.target(), &options());
    let rendered = &report.tree_rendered;
    assert!(
        rendered.contains(&format!("├── etc -> {}\n", outside.display())),
        "{rendered}"
    );
    assert!(
        rendered.contains("    └── up -> ../../outside"),
        "{rendered}"
    );
    for name in ["secret.conf", "deep", "passwd  ("] {
        assert!(!rendered.contains(name), "{name} from outside:\n{rendered}");
    }
    let etc = child(&report.tree, "etc");
    assert_eq!(etc.kind, NodeKind::Symlink);
    assert_eq!(etc.target.as_deref(), Some(outside.to_str().unwrap()));
    assert!(etc.children.is_none() && etc.size.is_none());
    let json = serde_json::to_value(etc).unwrap();
    assert_eq!(json["type"], "symlink", "{json}");
    // Nothing from outside anywhere else in the report.
    assert_eq!(classified_names(&report), ["app.py"]);
    assert!(report.recent_files.iter().all(|f| f.name == "app.py"));
    let total = report.disk_usage.last().unwrap().size_bytes;
    assert!(
        total < 100_000,
        "{total} bytes: the linked directory was counted"
    );
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
