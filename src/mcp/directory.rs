//! `directory {target, path}`: one directory of the cached investigation,
//! its summary, coverage, file summaries, flags and subdirectories, and
//! whether it changed since.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::convert::ToolFailure;
use super::read::{read, relative_path, shown, tree_block};
use super::tools::{Call, DirectoryArgs};
use crate::report::{DirectoryReport, Flag};

/// Answer `directory`.
pub(super) async fn directory(call: &Call, args: DirectoryArgs) -> Result<Value, ToolFailure> {
    let (config, cached) = read(call, &args.target).await?;
    let path = relative_path(&config, &args.path)?;
    let report = &cached.report;
    let Some(row) = report.directories.iter().find(|dir| dir.path == path) else {
        return Err(not_a_directory(
            &config.target_canonical,
            &path,
            &config.target_arg,
        ));
    };
    let mut answer = Map::new();
    answer.insert("target".into(), json!(shown(&config)));
    answer.insert("path".into(), json!(row.path));
    answer.insert(
        "changed_since_investigated".into(),
        json!(cached.changes.changed.contains(&row.path)),
    );
    answer.insert("summary".into(), json!(row.summary));
    answer.insert("coverage".into(), json!(row.coverage));
    for (key, value) in [
        ("completeness", json!(row.completeness)),
        ("confidence", json!(row.confidence)),
        ("partial_reason", json!(row.partial_reason)),
    ] {
        if !value.is_null() {
            answer.insert(key.into(), value);
        }
    }
    answer.insert("notable_files".into(), json!(row.notable_files));
    answer.insert("files".into(), json!(row.files));
    answer.insert("flags".into(), json!(flags_of(row, &report.flags)));
    answer.insert(
        "subdirectories".into(),
        json!(subdirectories(row, &report.directories)),
    );
    answer.insert("tree".into(), tree_block(&cached.changes));
    Ok(Value::Object(answer))
}

/// The flags raised in `row` (the report attached their paths), whole, in
/// report order.
fn flags_of<'a>(row: &DirectoryReport, flags: &'a [Flag]) -> Vec<&'a Flag> {
    flags
        .iter()
        .filter(|flag| row.flags.contains(&flag.path))
        .collect()
}

/// The directories right below `row`: where to look next.
fn subdirectories(row: &DirectoryReport, all: &[DirectoryReport]) -> Vec<Value> {
    all.iter()
        .filter(|dir| parent_of(&dir.path) == Some(row.path.as_str()))
        .map(|dir| {
            json!({
                "path": dir.path,
                "coverage": dir.coverage,
                "flags": dir.flags.len(),
            })
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
fn not_a_directory(target: &Path, path: &str, shown_target: &str) -> ToolFailure {
    let on_disk = target.join(path);
    match std::fs::symlink_metadata(&on_disk) {
        Ok(meta) if meta.is_file() => {
            let parent = parent_of(path).unwrap_or(".");
            ToolFailure::new(format!(
                "'{path}' is a file, not a directory: the answer for '{parent}' holds its summary"
            ))
        }
        Ok(meta) if meta.is_dir() => ToolFailure::new(format!(
            "'{path}' is outside the investigation's scope (hidden, ignored or excluded)"
        )),
        _ => ToolFailure::new(format!("'{path}' is not a directory of '{shown_target}'")),
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
        let below: Vec<Value> = subdirectories(&all[0], &all);
        let paths: Vec<&str> = below.iter().map(|d| d["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["src", "docs"]);
    }

    #[test]
    fn a_missing_row_says_what_the_path_is() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        std::fs::create_dir(dir.path().join(".hidden")).unwrap();
        let said = |path: &str| not_a_directory(dir.path(), path, "t").0;
        assert_eq!(
            said("a.rs"),
            "'a.rs' is a file, not a directory: the answer for '.' holds its summary"
        );
        assert!(said(".hidden").contains("outside the investigation's scope"));
        assert_eq!(said("nope"), "'nope' is not a directory of 't'");
    }
}
