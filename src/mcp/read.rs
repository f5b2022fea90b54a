//! What `overview`, `directory` and `flags` share: reading the target's
//! investigation back from the cache (after a silent base scan of the tree
//! as it is now, off the async threads), and the `tree` block each answer
//! carries to say what changed since the investigation.

use std::path::Path;

use serde::Serialize;

use super::convert::ToolFailure;
use super::target;
use super::tools::Call;
use crate::ai::orchestrator::{CachedInvestigation, TreeChanges, read_cached};
use crate::config::Config;
use crate::progress::Progress;
use crate::scan;

/// The most directories an answer names in each list of [`tree_block`];
/// the counts are always whole.
const LISTED: usize = 50;

/// `target`'s configuration and its investigation as the cache holds it.
pub(super) async fn read(
    call: &Call,
    target: &str,
) -> Result<(Config, CachedInvestigation), ToolFailure> {
    let config = target::resolve(&call.env, target::NO_FLAGS, target)?;
    let reading = config.clone();
    // The scan and the cache are read with blocking calls.
    let cached = tokio::task::spawn_blocking(move || {
        let (scan, dirs) =
            scan::scan_with_dirs(&reading.target, &reading.scan, &Progress::silent());
        read_cached(&reading, scan, &dirs)
    })
    .await
    .map_err(|source| ToolFailure::Stopped {
        step: "reading the investigation",
        source,
    })??;
    Ok((config, cached))
}

/// The target as answers name it: its canonical path.
pub(super) fn shown(config: &Config) -> String {
    config.target_canonical.to_string_lossy().into_owned()
}

/// What changed in the tree since its investigation, as every answer
/// carries it.
#[derive(Debug, Serialize)]
pub(super) struct TreeBlock {
    changed_since_investigated: bool,
    #[serde(flatten)]
    moved: Option<Moved>,
}

/// The directories that moved, listed up to [`LISTED`] and counted whole,
/// with one line saying what follows from it.
#[derive(Debug, Serialize)]
struct Moved {
    directories_changed: Vec<String>,
    directories_changed_count: usize,
    directories_removed: Vec<String>,
    directories_removed_count: usize,
    note: String,
}

/// What changed in the tree since its investigation.
pub(super) fn tree_block(changes: &TreeChanges) -> TreeBlock {
    if changes.is_empty() {
        return TreeBlock {
            changed_since_investigated: false,
            moved: None,
        };
    }
    let listed = |dirs: &[String]| dirs.iter().take(LISTED).cloned().collect::<Vec<String>>();
    let count = |n: usize, what: &str| match n {
        0 => None,
        1 => Some(format!("1 directory {what}")),
        n => Some(format!("{n} directories {what}")),
    };
    let parts: Vec<String> = [
        count(changes.changed.len(), "changed"),
        count(changes.removed.len(), "removed"),
    ]
    .into_iter()
    .flatten()
    .collect();
    TreeBlock {
        changed_since_investigated: true,
        moved: Some(Moved {
            directories_changed: listed(&changes.changed),
            directories_changed_count: changes.changed.len(),
            directories_removed: listed(&changes.removed),
            directories_removed_count: changes.removed.len(),
            note: format!(
                "The tree has changed since it was investigated ({}): what is said of those \
                 directories may be out of date. Call investigate to bring it up to date (only \
                 what changed is read again).",
                parts.join(", ")
            ),
        }),
    }
}

/// `path` (as a tool argument names a directory of `config.target`) as the
/// report names it: relative, normalized, `.` for the target.
pub(super) fn relative_path(config: &Config, path: &str) -> Result<String, ToolFailure> {
    let raw = Path::new(path.trim());
    let outside = || ToolFailure::Outside {
        path: path.to_string(),
        target: config.target_arg.clone(),
    };
    let absolute = if raw.is_absolute() {
        crate::paths::normalize_lexically(raw)
    } else {
        crate::paths::normalize_lexically(&config.target_canonical.join(raw))
    };
    let relative = [&config.target_canonical, &config.target]
        .into_iter()
        .find_map(|root| absolute.strip_prefix(root).ok())
        .ok_or_else(outside)?;
    let shown = relative.to_string_lossy();
    Ok(if shown.is_empty() {
        ".".to_string()
    } else {
        shown.into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Env, Invocation};

    fn config_of(dir: &Path) -> Config {
        let args = <crate::cli::Args as clap::Parser>::try_parse_from([
            "luminos",
            "--",
            &dir.to_string_lossy(),
        ])
        .unwrap();
        match Invocation::resolve(args, &Env::default()).unwrap() {
            Invocation::Run { config, .. } => *config,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn paths_are_taken_relative_and_kept_inside() {
        let dir = tempfile::tempdir().unwrap();
        let config = config_of(dir.path());
        let rel = |path: &str| relative_path(&config, path);
        assert_eq!(rel(".").unwrap(), ".");
        assert_eq!(rel("").unwrap(), ".");
        assert_eq!(rel("src/").unwrap(), "src");
        assert_eq!(rel("./src/core/../core").unwrap(), "src/core");
        let inside = config.target_canonical.join("docs");
        assert_eq!(rel(&inside.to_string_lossy()).unwrap(), "docs");
        for escape in ["..", "../elsewhere", "/etc"] {
            assert!(
                rel(escape)
                    .unwrap_err()
                    .to_string()
                    .contains("is not inside the target"),
                "{escape}"
            );
        }
    }

    #[test]
    fn the_tree_block_counts_and_names_what_moved() {
        let block = |changes: &TreeChanges| serde_json::to_value(tree_block(changes)).unwrap();
        assert_eq!(
            block(&TreeChanges::default()),
            serde_json::json!({"changed_since_investigated": false})
        );
        let block = block(&TreeChanges {
            changed: (0..60).map(|n| format!("d{n}")).collect(),
            removed: vec!["old".to_string()],
        });
        assert_eq!(
            block["directories_changed"].as_array().unwrap().len(),
            LISTED
        );
        assert_eq!(block["directories_changed_count"], 60);
        let note = block["note"].as_str().unwrap();
        assert!(
            note.contains("(60 directories changed, 1 directory removed)"),
            "{note}"
        );
    }
}
