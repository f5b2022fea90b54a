//! The base scan: a fast, native look at a directory tree.
//!
//! It answers the questions the original answered by shelling out to `file`,
//! `wc`, `find` and `du`, with the same answers and without subprocesses:
//! structure ([`tree`]), file classes ([`filetypes`], `sniff`), languages
//! and line counts ([`code`]), recent files ([`recency`]) and disk usage
//! ([`disk`]).
//!
//! The tree is walked once, in parallel ([`walk`]); then every file that needs
//! reading is read once, in parallel (`inspect`), classifying it and
//! counting its lines in the same pass. Everything else is computed from what
//! the walk kept. Results are sorted, so the report does not depend on thread
//! timing or directory order.
//!
//! The same walk also yields what the investigation needs before its first
//! request: every directory in scope with its [`Fingerprint`]
//! ([`ScannedDirs`], from [`scan_with_dirs`]), so a run reads the tree once.
//!
//! By default the scan respects `.gitignore`, `.ignore` and
//! `.git/info/exclude` (`rules`). [`ScanFilter`] exposes the same scope to
//! code that looks at the target on its own: `allows_dir`/`allows_file` for
//! any path under the root.
//!
//! The scan never fails as a whole: unreadable entries are skipped or marked,
//! and it neither follows symlink loops nor opens FIFOs, sockets or devices.
//! Its output is [`BaseScan`], the first half of [`crate::report::Report`].

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::progress::Progress;

pub(crate) mod code;
mod dirs;
pub(crate) mod disk;
pub(crate) mod filetypes;
mod filter;
mod fingerprint;
mod ignore_files;
mod ignored;
mod inspect;
mod options;
pub(crate) mod recency;
pub(crate) mod skip;
mod sniff;
pub(crate) mod tree;
pub(crate) mod walk;

pub(crate) use dirs::{FilesByDir, ScannedDirs, file_paths};
pub use filter::ScanFilter;
pub(crate) use fingerprint::Fingerprint;
pub(crate) use fingerprint::FingerprintBuilder;
pub use options::ScanOptions;
pub use skip::Skipped;
pub(crate) use tree::render_tree;

/// What the base scan found. Field order is the original's JSON key order.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BaseScan {
    pub tree: TreeNode,
    pub tree_rendered: String,
    /// Count per category, in first-seen order.
    pub file_categories: IndexMap<String, u64>,
    /// Every regular file, sorted by path.
    pub classified_files: Vec<ClassifiedFile>,
    pub survey_signals: SurveySignals,
    /// Sorted language names.
    pub languages: Vec<String>,
    /// Lines per language, in first-seen order.
    pub lines_of_code: IndexMap<String, u64>,
    pub large_files: Vec<LargeFile>,
    pub recent_files: Vec<RecentFile>,
    pub disk_usage: Vec<DiskEntry>,
    pub top_directories: Vec<DiskEntry>,
    /// Which ignore rules were in effect and what they removed.
    pub ignore: IgnoreSummary,
}

/// A node of the rendered tree: a directory, a file, or a truncated directory.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct TreeNode {
    pub name: String,
    pub path: String,
    /// `directory`, `file` or `symlink`.
    #[serde(rename = "type")]
    pub kind: NodeKind,
    /// Present on directories that were listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<TreeNode>>,
    /// Present on files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// `true` on directories deeper than `--depth`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// `permission denied` (or `unreadable`) when a directory could not be
    /// listed, or its entries could not be examined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What a symlink shown as a link (one that leads out of the target)
    /// points to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Why no model is sent into this directory (the skip list, or a
    /// `CACHEDIR.TAG` in it); luminos's key, absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Skipped>,
}

// The scan's tree and the planner's tree view build the same kinds of node.
impl TreeNode {
    fn new(name: String, path: &Path, kind: NodeKind) -> TreeNode {
        TreeNode {
            name,
            path: path.to_string_lossy().into_owned(),
            kind,
            ..TreeNode::default()
        }
    }

    /// A listed directory, its children still to add.
    pub(crate) fn listed_dir(name: String, path: &Path) -> TreeNode {
        let mut node = TreeNode::new(name, path, NodeKind::Directory);
        node.children = Some(Vec::new());
        node
    }

    /// A directory shown but not entered (past the depth, or a link).
    pub(crate) fn truncated_dir(name: String, path: &Path) -> TreeNode {
        let mut node = TreeNode::new(name, path, NodeKind::Directory);
        node.truncated = Some(true);
        node
    }

    /// A file of `size` bytes.
    pub(crate) fn file(name: String, path: &Path, size: u64) -> TreeNode {
        let mut node = TreeNode::new(name, path, NodeKind::File);
        node.size = Some(size);
        node
    }

    /// A symlink shown as such, pointing to `target` (not followed).
    pub(crate) fn link(name: String, path: &Path, target: String) -> TreeNode {
        let mut node = TreeNode::new(name, path, NodeKind::Symlink);
        node.target = Some(target);
        node
    }
}

/// The `type` of a [`TreeNode`].
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    #[default]
    Directory,
    File,
    /// A symlink leading out of the target, shown as a link.
    Symlink,
}

/// One regular file and its class.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClassifiedFile {
    pub path: String,
    pub name: String,
    pub category: String,
    pub size: u64,
    /// libmagic-like description; `None` when the extension decided.
    pub description: Option<String>,
}

/// Raw signals for the survey pass.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct SurveySignals {
    pub total_files: u64,
    pub extension_histogram: IndexMap<String, u64>,
    pub file_descriptions: IndexMap<String, u64>,
    pub filename_samples: Vec<String>,
}

/// A source file over 1000 lines or 10 MiB.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LargeFile {
    pub path: String,
    pub name: String,
    pub reasons: Vec<String>,
}

/// One of the most recently modified files.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecentFile {
    pub path: String,
    pub name: String,
    /// Seconds since the epoch, with the fraction.
    pub modified: f64,
    /// Local time, `%Y-%m-%d %H:%M:%S`.
    pub modified_human: String,
}

/// Apparent size of a directory, as `du -b`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DiskEntry {
    pub path: String,
    pub size_bytes: u64,
    pub size_human: String,
    /// `true` on a directory the ignore rules left out of the rest of the
    /// scan (it still takes space); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignored: bool,
}

/// Which ignore rules applied to the scan and how much they removed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct IgnoreSummary {
    /// False with `--no-ignore`.
    pub enabled: bool,
    /// Ignore files that held rules, relative to the target (absolute when
    /// outside it, like a linked worktree's `info/exclude`), sorted.
    pub rule_files: Vec<String>,
    /// Files left out because an ignore rule matched them or a parent.
    pub files_removed: u64,
    /// Directories left out because an ignore rule matched them.
    pub dirs_removed: u64,
}

/// Run the base scan on `target` (absolute, as given by the user).
pub fn scan(target: &Path, options: &ScanOptions, progress: &Progress) -> BaseScan {
    scan_with_dirs(target, options, progress).0
}

/// The base scan, and every directory in its scope with its fingerprint
/// (for the investigation, which would otherwise walk the tree again).
pub fn scan_with_dirs(
    target: &Path,
    options: &ScanOptions,
    progress: &Progress,
) -> (BaseScan, ScannedDirs) {
    let rules = walk::WalkRules::new(options).within(target);
    let threads = walk::thread_count();

    let counter = progress.counter(
        "scan",
        &format!("Building directory tree (depth={})", options.depth),
    );
    let walked = walk::walk(target, options, threads, &counter);
    let tree = tree::build_tree(target, &walked, &rules, options.depth);
    let tree_rendered = tree::render_tree(&tree);
    counter.finish();

    let (classified, inspected) = classify(target, &walked, &rules, threads, progress);
    let file_categories = filetypes::summarize_categories(&classified);
    let survey_signals = filetypes::survey_signals(&classified);

    let (languages, lines_of_code, large_files) = count_code(&classified, &inspected, progress);

    progress.scan("Finding recently modified files...");
    let recent_files = recency::find_recent_files(target, &walked, &rules, recency::RECENT_COUNT);

    progress.scan("Calculating disk usage...");
    let disk_usage = disk::disk_usage(target, &walked, &rules);
    let top_directories = disk::top_directories(&disk_usage, 5);

    let dirs = ScannedDirs::from_walk(walked.dirs, &rules);

    progress.scan("Base scan complete.");
    let base = BaseScan {
        tree,
        tree_rendered,
        file_categories,
        classified_files: classified,
        survey_signals,
        languages,
        lines_of_code,
        large_files,
        recent_files,
        disk_usage,
        top_directories,
        ignore: walked.ignore,
    };
    (base, dirs)
}

/// Classify the files of the walk (see [`files_to_classify`]), `threads`
/// at a time: each file as the report lists it, and what inspecting it
/// found.
fn classify(
    target: &Path,
    walked: &walk::Walk,
    rules: &walk::WalkRules,
    threads: usize,
    progress: &Progress,
) -> (Vec<ClassifiedFile>, Vec<inspect::Inspection>) {
    let counter = progress.counter("scan", "Classifying files");
    let files = files_to_classify(target, walked, rules);
    let inspected = inspect::inspect_all(&files, threads, &counter);
    counter.finish();
    let classified: Vec<ClassifiedFile> = files
        .into_iter()
        .zip(&inspected)
        .map(|(file, inspected)| ClassifiedFile {
            path: file.path.to_string_lossy().into_owned(),
            name: file.name,
            category: inspected.category.to_string(),
            size: file.size,
            description: inspected.description.clone(),
        })
        .collect();
    (classified, inspected)
}

/// What the source files among `classified` hold, from the lines
/// `inspected` counted: the languages, the lines of code by language, and
/// the large files.
fn count_code(
    classified: &[ClassifiedFile],
    inspected: &[inspect::Inspection],
    progress: &Progress,
) -> (Vec<String>, IndexMap<String, u64>, Vec<LargeFile>) {
    let counted: Vec<code::Counted> = classified
        .iter()
        .zip(inspected)
        .map(|(file, inspected)| code::Counted {
            file,
            lines: inspected.lines,
        })
        .collect();
    let sources = classified.iter().filter(|f| f.category == "source").count() as u64;
    let counter = progress.counter("scan", "Counting lines");
    let (languages, lines_of_code) = code::detect_languages(&counted);
    counter.add(sources);
    counter.finish();
    let counter = progress.counter("scan", "Checking for large files");
    let large_files = code::find_large_files(&counted);
    counter.add(sources);
    counter.finish();
    (languages, lines_of_code, large_files)
}

/// The files classification looks at, sorted by path: regular files and
/// symlinks to them, in visible directories, with visible names. `-x` names
/// only prune directories here, as in the original.
fn files_to_classify(
    target: &Path,
    walked: &walk::Walk,
    rules: &walk::WalkRules,
) -> Vec<inspect::FileToInspect> {
    let mut files = Vec::new();
    for (rel, record) in &walked.dirs {
        if !record.visible {
            continue;
        }
        let dir = join_rel(target, rel);
        for entry in &record.listing.entries {
            if !rules.show_hidden && entry.is_hidden() {
                continue;
            }
            let Some(size) = entry.file_size_followed() else {
                continue;
            };
            let name = entry.name.to_string_lossy().into_owned();
            let by_extension = filetypes::extension_category(&filetypes::extension_of(&name));
            files.push(inspect::FileToInspect {
                path: dir.join(&entry.name),
                name,
                size,
                by_extension,
                is_symlink: entry.kind == walk::Kind::Symlink,
            });
        }
    }
    files.sort_unstable_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
    files
}

/// `target/rel`, without the trailing separator `Path::join("")` would add.
pub(crate) fn join_rel(target: &Path, rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        target.to_path_buf()
    } else {
        target.join(rel)
    }
}

/// `1536` → `1.5 KB`, the original's human size (used by the tree, disk
/// usage and reasons).
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    for unit in UNITS {
        if value < 1024.0 {
            return format!("{value:.1} {unit}");
        }
        value /= 1024.0;
    }
    format!("{value:.1} PB")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_match_the_reference() {
        for (bytes, shown) in [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.0 KB"),
            (1536, "1.5 KB"),
            (10 * 1024 * 1024, "10.0 MB"),
            (1024u64.pow(5), "1.0 PB"),
        ] {
            assert_eq!(human_size(bytes), shown, "{bytes}");
        }
    }
}
