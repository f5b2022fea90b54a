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

use serde_json::Value;

use super::finish::coverage_of_entry;
use crate::ai::rules::discover::relative;
use crate::report::{DirCoverage, DirectoryReport, FileSummary, tree_order};

/// One row per directory of `all_dirs` (absolute, under `target`), in tree
/// order, filled from `dir_entries` and `file_entries` (matched by their
/// `relative_path`). A directory without an entry has coverage `none`.
pub(super) fn directories(
    target: &Path,
    all_dirs: &[PathBuf],
    dir_entries: &[Value],
    file_entries: &[Value],
) -> Vec<DirectoryReport> {
    let text =
        |entry: &Value, key: &str| entry.get(key).and_then(Value::as_str).map(str::to_string);
    let by_path: HashMap<&str, &Value> = dir_entries
        .iter()
        .filter_map(|entry| Some((entry.get("relative_path")?.as_str()?, entry)))
        .collect();
    let mut files: HashMap<String, Vec<FileSummary>> = HashMap::new();
    for entry in file_entries {
        let Some(path) = text(entry, "relative_path") else {
            continue;
        };
        let parent = match Path::new(&path).parent().map(|p| p.to_string_lossy()) {
            Some(parent) if !parent.is_empty() => parent.into_owned(),
            _ => ".".to_string(),
        };
        let summary = text(entry, "summary").unwrap_or_default();
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
                row.summary = Some(text(entry, "summary").unwrap_or_default());
                row.coverage = coverage_of_entry(entry);
                row.completeness = entry.get("completeness").and_then(Value::as_f64);
                row.confidence = entry.get("confidence").and_then(Value::as_f64);
                row.partial_reason = text(entry, "partial_reason");
                row.notable_files = entry
                    .get("notable_files")
                    .and_then(Value::as_array)
                    .map(|names| {
                        names
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
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
            json!({"relative_path": ".", "summary": "Root.", "completeness": 0.8,
                   "notable_files": ["Cargo.toml"]}),
            json!({"relative_path": "src", "summary": "Code.", "unit": "src", "confidence": 0.7}),
            json!({"relative_path": "src/core", "summary": "Scan.", "mechanical": true,
                   "partial_reason": "x"}),
        ];
        let file_entries = [
            json!({"relative_path": "src/core/b.rs", "summary": "B."}),
            json!({"relative_path": "src/core/a.rs", "summary": "A."}),
            json!({"relative_path": "README.md", "summary": "Readme."}),
            json!({"summary": "no location"}),
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
