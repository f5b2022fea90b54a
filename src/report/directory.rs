//! The report's `directories`: what the investigation learned about each
//! directory in scope (its summary, how it got it, the file summaries under
//! it and the flags raised in it), and the order flags are reported in.
//!
//! The investigation fills the directories from its cache entries (it knows
//! their fields); this module only holds the shape every format renders,
//! puts the flags in order and says which directory each flag belongs to.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Flag;

/// One directory in scope and what the investigation said about it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DirectoryReport {
    /// Relative to the target; `.` for the target itself.
    pub path: String,
    /// `null` when the directory has no summary (left for a later run, or
    /// skipped by the plan).
    pub summary: Option<String>,
    pub coverage: DirCoverage,
    /// How much of the directory the agent says it covered (0 to 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completeness: Option<f64>,
    /// How sure the agent was of its summary (0 to 1), when it said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Why the summary is partial (a loop that ran out of turns or
    /// context, or a model that declined).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_reason: Option<String>,
    /// The files the summary singles out, as the entry names them.
    #[serde(default)]
    pub notable_files: Vec<String>,
    /// The file summaries directly in this directory, by path.
    #[serde(default)]
    pub files: Vec<FileSummary>,
    /// The paths of the flags raised in this directory (on it, or on a
    /// file or ignored directory below it that no other directory in scope
    /// holds), in flag order.
    #[serde(default)]
    pub flags: Vec<String>,
}

/// How a directory got its summary.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum DirCoverage {
    /// A loop of its own read it.
    Investigated,
    /// It was read in the loop of a directory above it.
    Folded,
    /// Summarised from the scan; no model read it.
    Mechanical,
    /// No summary.
    #[default]
    None,
}

impl DirCoverage {
    /// The word every format shows.
    pub fn as_str(self) -> &'static str {
        match self {
            DirCoverage::Investigated => "investigated",
            DirCoverage::Folded => "folded",
            DirCoverage::Mechanical => "mechanical",
            DirCoverage::None => "none",
        }
    }
}

/// A file's summary.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileSummary {
    /// Relative to the target.
    pub path: String,
    pub summary: String,
}

impl DirectoryReport {
    /// How many levels below the target (the target is 0).
    pub(crate) fn depth(&self) -> usize {
        if self.path == "." {
            0
        } else {
            self.path.split('/').count()
        }
    }

    /// The last component (`.` for the target).
    pub(crate) fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// Tree order: the target first, then each directory before what is
/// below it, siblings by name (bytes), as the tree is drawn.
pub(crate) fn tree_order(a: &str, b: &str) -> Ordering {
    let parts = |p: &str| -> Vec<Vec<u8>> {
        if p == "." {
            Vec::new()
        } else {
            p.split('/').map(|c| c.as_bytes().to_vec()).collect()
        }
    };
    parts(a).cmp(&parts(b))
}

/// The report's flag order: most severe first, then by path and line, then
/// by finding, so flags of equal severity come in the same order whatever
/// order the loops raised them in.
pub(crate) fn flag_order(a: &Flag, b: &Flag) -> Ordering {
    a.severity
        .cmp(&b.severity)
        .then_with(|| a.path.cmp(&b.path))
        .then_with(|| a.line.cmp(&b.line))
        .then_with(|| a.finding.cmp(&b.finding))
        .then_with(|| a.verified.cmp(&b.verified))
        .then_with(|| a.original_severity.cmp(&b.original_severity))
        .then_with(|| a.note.cmp(&b.note))
}

/// Give each directory the paths of the flags raised in it: a flag on a
/// directory in scope is that directory's, a flag on anything else belongs
/// to the nearest directory in scope above it. `general` and paths outside
/// the target belong to none.
pub(crate) fn attach_flags(directories: &mut [DirectoryReport], flags: &[Flag]) {
    let index: HashMap<String, usize> = directories
        .iter()
        .enumerate()
        .map(|(i, d)| (d.path.clone(), i))
        .collect();
    for dir in directories.iter_mut() {
        dir.flags.clear();
    }
    for flag in flags {
        let Some(at) = holder(&index, &flag.path) else {
            continue;
        };
        let list = &mut directories[at].flags;
        if !list.contains(&flag.path) {
            list.push(flag.path.clone());
        }
    }
}

/// The directory in `index` that holds `path`, if any.
fn holder(index: &HashMap<String, usize>, path: &str) -> Option<usize> {
    if path == "general" || path.is_empty() {
        return None;
    }
    let path = path.trim_end_matches('/');
    let mut at = Some(Path::new(path));
    while let Some(candidate) = at {
        let key = candidate.to_string_lossy();
        let key = if key.is_empty() { "." } else { key.as_ref() };
        if let Some(i) = index.get(key) {
            return Some(*i);
        }
        at = candidate.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(path: &str) -> DirectoryReport {
        DirectoryReport {
            path: path.into(),
            ..DirectoryReport::default()
        }
    }

    #[test]
    fn tree_order_puts_parents_before_children_and_siblings_by_name() {
        let mut paths = vec!["src/core", "a-b", ".", "src", "a", "a/z", "src/core/x", "b"];
        paths.sort_by(|a, b| tree_order(a, b));
        assert_eq!(
            paths,
            [".", "a", "a/z", "a-b", "b", "src", "src/core", "src/core/x"]
        );
    }

    #[test]
    fn flags_go_to_the_nearest_directory_in_scope() {
        let mut dirs = vec![dir("."), dir("src"), dir("src/core")];
        let flags = [
            Flag::new("src/core/a.rs", "x", "info"),
            Flag::new("src/core", "x", "info"),
            Flag::new("src/node_modules/x/y.js", "x", "info"),
            Flag::new(".env", "x", "critical"),
            Flag::new("general", "x", "info"),
            Flag::new("/etc/passwd", "x", "info"),
            Flag::new("src/core/a.rs", "again", "concern"),
        ];
        attach_flags(&mut dirs, &flags);
        assert_eq!(dirs[0].flags, [".env"]);
        assert_eq!(dirs[1].flags, ["src/node_modules/x/y.js"]);
        assert_eq!(dirs[2].flags, ["src/core/a.rs", "src/core"]);
    }

    #[test]
    fn flag_order_is_severity_then_path_then_line_then_finding() {
        let at = |path: &str, line: Option<u32>, finding: &str, severity: &str| {
            let mut flag = Flag::new(path, finding, severity);
            flag.line = line;
            flag
        };
        let mut flags = [
            at("b.rs", None, "z", "info"),
            at("a.rs", Some(9), "y", "concern"),
            at("a.rs", Some(2), "y", "concern"),
            at("z.rs", None, "w", "critical"),
            at("a.rs", None, "b", "info"),
            at("a.rs", None, "a", "info"),
            at("q.rs", None, "odd", "weird"),
        ];
        flags.sort_by(flag_order);
        let shown: Vec<String> = flags
            .iter()
            .map(|f| format!("{} {}:{:?} {}", f.severity, f.path, f.line, f.finding))
            .collect();
        assert_eq!(
            shown,
            [
                "critical z.rs:None w",
                "concern a.rs:Some(2) y",
                "concern a.rs:Some(9) y",
                "info a.rs:None a",
                "info a.rs:None b",
                "info b.rs:None z",
                "weird q.rs:None odd",
            ]
        );
    }
}
