//! The report's `directories`, from the dir and file entries the grounding
//! phase has already read: one [`DirectoryReport`] per directory in scope,
//! in tree order, with its summary, how it got it (its own loop, a unit's,
//! or the scan), its figures and the file summaries directly in it.
//!
//! Pure: entries in, report rows out. Which entry fields mean what is the
//! investigation's knowledge (`finish::coverage_of_entry`, the partial and
//! mechanical fields), so it lives here and not in the report. The flags of
//! each directory are the report's to attach, once they are in order.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::finish::coverage_of_entry;
use crate::ai::rules::discover::relative;
use crate::cache::{DirEntry, FileEntry};
use crate::report::{DirCoverage, DirectoryReport, FileSummary, tree_order};

/// One row per directory of `all_dirs` (absolute, under `target`), in tree
/// order, filled from `dir_entries` and `file_entries` (matched by their
/// `relative_path`). A directory without an entry has coverage `none`.
pub(super) fn directories(
    target: &Path,
    all_dirs: &[PathBuf],
    dir_entries: &[DirEntry],
    file_entries: &[FileEntry],
) -> Vec<DirectoryReport> {
    let by_path: HashMap<&str, &DirEntry> = dir_entries
        .iter()
        .filter(|entry| !entry.relative_path.is_empty())
        .map(|entry| (entry.relative_path.as_str(), entry))
        .collect();
    let mut files: HashMap<String, Vec<FileSummary>> = HashMap::new();
    for entry in file_entries.iter().filter(|e| !e.relative_path.is_empty()) {
        let path = entry.relative_path.clone();
        let parent = match Path::new(&path).parent().map(|p| p.to_string_lossy()) {
            Some(parent) if !parent.is_empty() => parent.into_owned(),
            _ => ".".to_string(),
        };
        let summary = entry.summary.clone();
        files
            .entry(parent)
            .or_default()
            .push(FileSummary { path, summary });
    }
    let mut rows: Vec<DirectoryReport> = all_dirs
        .iter()
        .map(|dir| {
            let path = relative(target, dir);
            let mut row = DirectoryReport {
                files: files.remove(&path).unwrap_or_default(),
                ..DirectoryReport::default()
            };
            row.files.sort_by(|a, b| a.path.cmp(&b.path));
            if let Some(entry) = by_path.get(path.as_str()) {
                row.summary = Some(entry.summary.clone());
                row.coverage = coverage_of_entry(entry);
                row.completeness = entry.completeness;
                row.confidence = entry.confidence;
                row.partial_reason = entry.partial_reason.clone();
                row.notable_files = entry.notable_files.clone();
            } else {
                row.coverage = DirCoverage::None;
            }
            row.path = path;
            row
        })
        .collect();
    rows.sort_by(|a, b| tree_order(&a.path, &b.path));
    rows
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rows_come_in_tree_order_with_their_files_and_coverage() {
        let t = Path::new("/t");
        let dirs: Vec<PathBuf> = ["/t/src/core", "/t/src", "/t/docs", "/t"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let dir_entries = [
            DirEntry::from_value(json!({"relative_path": ".", "summary": "Root.", "completeness": 0.8,
                   "notable_files": ["Cargo.toml"]})).unwrap(),
            DirEntry::from_value(json!({"relative_path": "src", "summary": "Code.", "unit": "src", "confidence": 0.7})).unwrap(),
            DirEntry::from_value(json!({"relative_path": "src/core", "summary": "Scan.", "mechanical": true,
                   "partial_reason": "x"})).unwrap(),
        ];
        let file_entries = [
            FileEntry::from_value(json!({"relative_path": "src/core/b.rs", "summary": "B."}))
                .unwrap(),
            FileEntry::from_value(json!({"relative_path": "src/core/a.rs", "summary": "A."}))
                .unwrap(),
            FileEntry::from_value(json!({"relative_path": "README.md", "summary": "Readme."}))
                .unwrap(),
            FileEntry::from_value(json!({"summary": "no location"})).unwrap(),
        ];
        let rows = directories(t, &dirs, &dir_entries, &file_entries);
        let paths: Vec<&str> = rows.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, [".", "docs", "src", "src/core"]);
        assert_eq!(rows[0].coverage, DirCoverage::Investigated);
        assert_eq!(rows[0].completeness, Some(0.8));
        assert_eq!(rows[0].notable_files, ["Cargo.toml"]);
        assert_eq!(rows[0].files[0].path, "README.md");
        assert_eq!(rows[1].coverage, DirCoverage::None);
        assert_eq!(rows[1].summary, None);
        assert_eq!(rows[2].coverage, DirCoverage::Folded);
        assert_eq!(rows[2].confidence, Some(0.7));
        assert_eq!(rows[3].coverage, DirCoverage::Mechanical);
        assert_eq!(rows[3].partial_reason.as_deref(), Some("x"));
        let files: Vec<&str> = rows[3].files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(files, ["src/core/a.rs", "src/core/b.rs"]);
    }
}
