//! `directory {target, path}`: one directory of the cached investigation,
//! its summary, coverage, file summaries, flags and subdirectories, and
//! whether it changed since.

use std::path::Path;

use serde::Serialize;

use super::convert::{NotADirectory, ToolFailure};
use super::read::{TreeBlock, read, relative_path, shown, tree_block};
use super::tools::{Call, DirectoryArgs};
use crate::report::{DirCoverage, DirectoryReport, FileSummary, Flag};

/// The answer of `directory`.
#[derive(Debug, Serialize)]
pub(super) struct DirectoryAnswer {
    target: String,
    path: String,
    changed_since_investigated: bool,
    summary: Option<String>,
    coverage: DirCoverage,
    #[serde(skip_serializing_if = "Option::is_none")]
    completeness: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confidence: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial_reason: Option<String>,
    notable_files: Vec<String>,
    files: Vec<FileSummary>,
    flags: Vec<Flag>,
    subdirectories: Vec<Subdirectory>,
    tree: TreeBlock,
}

/// A directory right below the one asked for: where to look next.
#[derive(Debug, Serialize)]
struct Subdirectory {
    path: String,
    coverage: DirCoverage,
    flags: usize,
}

/// Answer `directory`.
pub(super) async fn directory(
    call: &Call,
    args: DirectoryArgs,
) -> Result<DirectoryAnswer, ToolFailure> {
    let (config, cached) = read(call, &args.target).await?;
    let path = relative_path(&config, &args.path)?;
    let report = &cached.report;
    let Some(row) = report.directories.iter().find(|dir| dir.path == path) else {
        return Err(not_a_directory(&config.target_canonical, &path, &config.target_arg).into());
    };
    Ok(DirectoryAnswer {
        target: shown(&config),
        path: row.path.clone(),
        changed_since_investigated: cached.changes.changed.contains(&row.path),
        summary: row.summary.clone(),
        coverage: row.coverage,
        completeness: row.completeness,
        confidence: row.confidence,
        partial_reason: row.partial_reason.clone(),
        notable_files: row.notable_files.clone(),
        files: row.files.clone(),
        flags: flags_of(row, &report.flags),
        subdirectories: subdirectories(row, &report.directories),
        tree: tree_block(&cached.changes),
    })
}

/// The flags raised in `row` (the report attached their paths), whole, in
/// report order.
fn flags_of(row: &DirectoryReport, flags: &[Flag]) -> Vec<Flag> {
    flags
        .iter()
        .filter(|flag| row.flags.contains(&flag.path))
        .cloned()
        .collect()
}

/// The directories right below `row`: where to look next.
fn subdirectories(row: &DirectoryReport, all: &[DirectoryReport]) -> Vec<Subdirectory> {
    all.iter()
        .filter(|dir| parent_of(&dir.path) == Some(row.path.as_str()))
        .map(|dir| Subdirectory {
            path: dir.path.clone(),
            coverage: dir.coverage,
            flags: dir.flags.len(),
        })
        .collect()
}

/// The report path of `path`'s parent (`.` for a top-level directory).
fn parent_of(path: &str) -> Option<&str> {
    if path == "." {
        return None;
    }
    Some(path.rsplit_once('/').map_or(".", |(parent, _)| parent))
}

/// Why `path` has no row: a file, a directory outside the scan's scope, or
/// nothing at all.
fn not_a_directory(target: &Path, path: &str, shown_target: &str) -> NotADirectory {
    let on_disk = target.join(path);
    let path = path.to_string();
    match std::fs::symlink_metadata(&on_disk) {
        Ok(meta) if meta.is_file() => NotADirectory::File {
            parent: parent_of(&path).unwrap_or(".").to_string(),
            path,
        },
        Ok(meta) if meta.is_dir() => NotADirectory::OutOfScope { path },
        _ => NotADirectory::Missing {
            path,
            target: shown_target.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_and_subdirectories() {
        assert_eq!(parent_of("."), None);
        assert_eq!(parent_of("src"), Some("."));
        assert_eq!(parent_of("src/core"), Some("src"));
        let dir = |path: &str| DirectoryReport {
            path: path.into(),
            ..DirectoryReport::default()
        };
        let all = [dir("."), dir("src"), dir("src/core"), dir("docs")];
        let below = subdirectories(&all[0], &all);
        let paths: Vec<&str> = below.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["src", "docs"]);
    }

    #[test]
    fn a_missing_row_says_what_the_path_is() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        std::fs::create_dir(dir.path().join(".hidden")).unwrap();
        let said = |path: &str| not_a_directory(dir.path(), path, "t").to_string();
        assert_eq!(
            said("a.rs"),
            "'a.rs' is a file, not a directory: the answer for '.' holds its summary"
        );
        assert!(said(".hidden").contains("outside the investigation's scope"));
        assert_eq!(said("nope"), "'nope' is not a directory of 't'");
    }
}
