//! The base scan: a fast, native look at a directory tree.
//!
//! It answers the questions the reference answered by shelling out to `file`,
//! `wc`, `find` and `du`, with the same answers and without subprocesses:
//! structure ([`tree`]), file classes ([`filetypes`]), languages and line
//! counts ([`code`]), recent files ([`recency`]) and disk usage ([`disk`]). The
//! tree is walked once ([`walk`]), and each source file is read once.
//!
//! The scan never fails as a whole: unreadable entries are skipped or marked,
//! and it neither follows symlink loops nor opens FIFOs, sockets or devices.
//! Its output is [`BaseScan`], the first half of [`crate::report::Report`].

use std::path::Path;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::config::ScanOptions;
use crate::progress::Progress;

pub mod code;
pub mod disk;
pub mod filetypes;
pub mod recency;
pub mod tree;
pub mod walk;

/// What the base scan found. Field order is the reference's JSON key order.
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
    /// `directory` or `file`.
    #[serde(rename = "type")]
    pub kind: NodeKind,
    /// Present on directories that were listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<TreeNode>>,
    /// Present on files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// `true` on directories deeper than `--depth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// `permission denied` when a directory could not be listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The `type` of a [`TreeNode`].
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    #[default]
    Directory,
    File,
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
}

/// Which ignore rules applied to the scan and how much they removed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct IgnoreSummary {
    /// False with `--no-ignore`.
    pub enabled: bool,
    /// Ignore files that were read, relative to the target.
    pub rule_files: Vec<String>,
    /// Files left out because an ignore rule matched them or a parent.
    pub files_removed: u64,
    /// Directories left out because an ignore rule matched them.
    pub dirs_removed: u64,
}

/// Run the base scan on `target` (absolute, as given by the user).
pub fn scan(target: &Path, options: &ScanOptions, progress: &Progress) -> BaseScan {
    let _ = (target, options, progress);
    todo!("issue 2")
}

/// `1536` → `1.5 KB`, the reference's human size (used by the tree, disk
/// usage and reasons).
pub fn human_size(bytes: u64) -> String {
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
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1024), "1.0 KB");
        assert_eq!(human_size(1536), "1.5 KB");
        assert_eq!(human_size(10 * 1024 * 1024), "10.0 MB");
        assert_eq!(human_size(1024u64.pow(5)), "1.0 PB");
    }
}
