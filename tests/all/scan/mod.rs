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
use support::TestEnv;
use support::fs::mkfifo;
use support::output::{SCAN_KEYS, keys};

mod classification;
mod disk_usage;
mod edges;
mod files;
mod ignore;
mod tree;

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

fn disk_tree(env: &TestEnv) {
    env.sized_files(&[
        ("a/one.bin", 5000),
        ("a/b/two.bin", 7000),
        ("a/b/c/three.bin", 11_000),
        ("a/b/c/d/four.bin", 13_000),
        (".git/objects/pack", 17_000),
        ("x/.cache/blob", 19_000),
        ("top.txt", 23),
        ("node_modules/dep/index.js", 29_000),
        ("a/node_modules", 31),
    ])
    .symlink("a/one.bin", "link")
    .dir("empty");
    // A hard link in the same directory is counted once.
    fs::hard_link(env.path("a/one.bin"), env.path("a/one_again.bin")).unwrap();
    mkfifo(&env.path("a/fifo"));
}
