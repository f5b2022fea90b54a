//! Mechanical dir entries: the summary of a directory no loop investigates,
//! built without the model from what the scan measured (file counts,
//! categories, languages, the largest and newest files) and from its
//! children's summaries.
//!
//! Such an entry is marked `"mechanical": true` (with `mechanical_reason`,
//! and the scan's figures it was built from in fields of their own), so the
//! report, a parent's prompt and the synthesis know it was not read by a
//! model. It is deterministic: the same directory and children give
//! the same entry, so a rerun over an unchanged tree writes nothing and the
//! synthesis digest holds. Pure: figures and child entries in, the entry
//! out (without `cached_at`, which the writer adds).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::dir_stats::DirStats;
use super::discover::relative;
use crate::cache::DirEntry;
use crate::scan::human_size;
/// A child's summary is quoted up to this many characters.
pub(crate) const CHILD_GIST_CHARS: usize = 160;
/// At most this many children are named, the largest first.
pub(crate) const CHILDREN_NAMED: usize = 12;

/// Why no loop investigated a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MechanicalReason {
    /// The plan gave the budget to other directories.
    NotChosen,
    /// Its loop was planned, but the budget ran out before it started.
    BudgetSpent,
}

impl MechanicalReason {
    /// The `mechanical_reason` value.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MechanicalReason::NotChosen => "the budget bought no loop for this directory",
            MechanicalReason::BudgetSpent => "the budget ran out before this directory's loop",
        }
    }
}

/// One child as the entry mentions it: its name, its subtree's figures and
/// its cached entry, if any.
#[derive(Debug, Clone)]
pub(crate) struct Child<'a> {
    pub name: String,
    pub stats: &'a DirStats,
    pub entry: Option<DirEntry>,
}

/// The scan's figures a mechanical entry keeps, in fields of their own.
#[derive(Serialize)]
struct Figures<'a> {
    file_count: u32,
    categories: &'a BTreeMap<String, u32>,
    languages: &'a BTreeMap<String, u32>,
    largest_files: Vec<NamedFile<'a>>,
    newest_files: Vec<NamedFile<'a>>,
    subtree: Subtree,
}

/// A file the entry names, with its size or its date.
#[derive(Serialize)]
struct NamedFile<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    modified: Option<&'a str>,
}

/// What lies at and below the directory.
#[derive(Serialize)]
struct Subtree {
    directories: u64,
    files: u64,
    bytes: u64,
}

/// The mechanical entry of `dir` (under `target`): `stats` are its scan
/// figures, `newest` its most recently modified files as (name, date),
/// newest first, and `children` its discovered subdirectories.
pub(crate) fn mechanical_entry(
    target: &std::path::Path,
    dir: &std::path::Path,
    stats: &DirStats,
    newest: &[(String, String)],
    children: &[Child<'_>],
    reason: MechanicalReason,
) -> DirEntry {
    let figures = Figures {
        file_count: stats.files,
        categories: &stats.categories,
        languages: &stats.languages,
        largest_files: stats
            .largest
            .iter()
            .map(|(name, size)| NamedFile {
                name: name.as_str(),
                size_bytes: Some(*size),
                modified: None,
            })
            .collect(),
        newest_files: newest
            .iter()
            .map(|(name, date)| NamedFile {
                name: name.as_str(),
                size_bytes: None,
                modified: Some(date.as_str()),
            })
            .collect(),
        subtree: Subtree {
            directories: u64::from(stats.subtree_dirs),
            files: stats.subtree_files,
            bytes: stats.subtree_bytes,
        },
    };
    DirEntry {
        path: dir.to_string_lossy().into_owned(),
        relative_path: relative(target, dir),
        child_count: u64::from(stats.files) + children.len() as u64,
        summary: summary(stats, newest, children),
        dominant_category: dominant_category(stats),
        notable_files: stats.largest.iter().map(|(name, _)| name.clone()).collect(),
        confidence: Some(0.3),
        confidence_reason: Some("built from file names and sizes; no file was read".into()),
        mechanical: true,
        mechanical_reason: Some(reason.as_str().to_string()),
        extra: match serde_json::to_value(figures) {
            Ok(Value::Object(fields)) => fields,
            _ => Map::new(),
        },
        ..DirEntry::default()
    }
}

/// The category with the most files (ties by name), or `unknown`.
fn dominant_category(stats: &DirStats) -> String {
    stats
        .categories
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map_or_else(|| "unknown".to_string(), |(name, _)| name.clone())
}

/// `Rust (6), Python (3)`: the most frequent first, ties by name.
fn languages_text<'a>(languages: impl Iterator<Item = (&'a String, u64)>) -> String {
    let mut list: Vec<(&String, u64)> = languages.collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    list.iter()
        .map(|(name, n)| format!("{name} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The entry's summary: that no model read it, what its own files are,
/// then (when it has subdirectories) what lies below it and its children.
fn summary(stats: &DirStats, newest: &[(String, String)], children: &[Child<'_>]) -> String {
    let mut parts = vec!["Summarised from the scan; no file here was read by a model.".to_string()];
    if stats.files == 0 {
        parts.push("No files of its own.".to_string());
    } else {
        parts.extend(own_files_sentences(stats, newest));
    }
    if !children.is_empty() {
        parts.push(below_sentence(stats));
        let text = children_text(children);
        let stop = if text.ends_with('.') { "" } else { "." };
        parts.push(format!("Subdirectories: {text}{stop}"));
    }
    parts.join(" ")
}

/// The sentences on the directory's own files: how many and their size by
/// category, their languages, the largest and the newest.
fn own_files_sentences(stats: &DirStats, newest: &[(String, String)]) -> Vec<String> {
    let mut parts = Vec::new();
    let mut categories: Vec<(&String, &u32)> = stats.categories.iter().collect();
    categories.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let categories = categories
        .iter()
        .map(|(name, n)| format!("{n} {name}"))
        .collect::<Vec<_>>()
        .join(", ");
    parts.push(format!(
        "{} files, {}: {categories}.",
        stats.files,
        human_size(stats.bytes)
    ));
    if !stats.languages.is_empty() {
        parts.push(format!(
            "Languages: {}.",
            languages_text(stats.languages.iter().map(|(k, v)| (k, u64::from(*v))))
        ));
    }
    let largest = stats
        .largest
        .iter()
        .map(|(name, size)| format!("{name} ({})", human_size(*size)))
        .collect::<Vec<_>>()
        .join(", ");
    parts.push(format!("Largest: {largest}."));
    if !newest.is_empty() {
        let newest = newest
            .iter()
            .map(|(name, date)| format!("{name} ({date})"))
            .collect::<Vec<_>>()
            .join(", ");
        parts.push(format!("Newest: {newest}."));
    }
    parts
}

/// The sentence on what lies below the directory: its subtree's figures
/// without its own files.
fn below_sentence(stats: &DirStats) -> String {
    let below_files = stats.subtree_files - u64::from(stats.files);
    let below_source = stats.subtree_source - u64::from(stats.source_files());
    let mut below = format!(
        "Below it: {} directories holding {below_files} files ({below_source} source",
        stats.subtree_dirs.saturating_sub(1),
    );
    let languages: Vec<(&String, u64)> = stats
        .subtree_languages
        .iter()
        .map(|(k, v)| {
            let own = u64::from(stats.languages.get(k).copied().unwrap_or(0));
            (k, v - own)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    if !languages.is_empty() {
        below.push_str(&format!(": {}", languages_text(languages.into_iter())));
    }
    below.push_str(").");
    below
}

/// The children, the largest subtrees first: a model-written summary is
/// quoted up to its first sentence; a mechanical one by its figures.
fn children_text(children: &[Child<'_>]) -> String {
    let mut sorted: Vec<&Child<'_>> = children.iter().collect();
    sorted.sort_by(|a, b| {
        b.stats
            .subtree_files
            .cmp(&a.stats.subtree_files)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut shown: Vec<String> = sorted
        .iter()
        .take(CHILDREN_NAMED)
        .map(|child| {
            let dirs = child.stats.subtree_dirs;
            let figures = format!(
                "{} files in {dirs} director{}",
                child.stats.subtree_files,
                if dirs == 1 { "y" } else { "ies" }
            );
            match &child.entry {
                Some(entry) if !entry.mechanical => {
                    format!("{}/ ({figures}): {}", child.name, gist(&entry.summary))
                }
                Some(_) | None => format!("{}/ ({figures})", child.name),
            }
        })
        .collect();
    if sorted.len() > CHILDREN_NAMED {
        shown.push(format!("and {} more", sorted.len() - CHILDREN_NAMED));
    }
    shown.join("; ")
}

/// The first sentence of `summary`, at most [`CHILD_GIST_CHARS`] characters.
pub(crate) fn gist(summary: &str) -> String {
    let summary = summary.trim();
    let sentence = match summary.find(". ") {
        Some(end) => &summary[..=end],
        None => summary,
    };
    match sentence.char_indices().nth(CHILD_GIST_CHARS) {
        Some((cut, _)) => format!("{}...", &sentence[..cut]),
        None => sentence.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn stats() -> DirStats {
        DirStats {
            files: 5,
            bytes: 20_000,
            read_bytes: 12_000,
            categories: BTreeMap::from([("source".into(), 3), ("data".into(), 2)]),
            languages: BTreeMap::from([("Rust".into(), 2), ("Python".into(), 1)]),
            largest: vec![("big.csv".into(), 9_000), ("main.rs".into(), 6_000)],
            listing_bytes: 200,
            subdirs: 2,
            subtree_files: 25,
            subtree_bytes: 90_000,
            subtree_dirs: 4,
            subtree_source: 13,
            subtree_languages: BTreeMap::from([("Rust".into(), 12), ("Python".into(), 1)]),
        }
    }

    #[test]
    fn an_entry_from_the_scan_and_the_children() {
        let child = DirStats {
            subtree_files: 15,
            subtree_dirs: 2,
            ..DirStats::default()
        };
        let small = DirStats {
            subtree_files: 5,
            subtree_dirs: 1,
            ..DirStats::default()
        };
        let children = [
            Child {
                name: "api".into(),
                stats: &small,
                entry: Some(DirEntry {
                    summary: "HTTP handlers. They call the core.".into(),
                    ..DirEntry::default()
                }),
            },
            Child {
                name: "core".into(),
                stats: &child,
                entry: Some(DirEntry {
                    summary: "Summarised from the scan.".into(),
                    mechanical: true,
                    ..DirEntry::default()
                }),
            },
        ];
        let newest = [("main.rs".to_string(), "2026-01-02".to_string())];
        let entry = mechanical_entry(
            Path::new("/t"),
            Path::new("/t/src"),
            &stats(),
            &newest,
            &children,
            MechanicalReason::NotChosen,
        );
        assert!(entry.mechanical);
        assert_eq!(entry.relative_path, "src");
        assert_eq!(entry.child_count, 7);
        assert_eq!(entry.dominant_category, "source");
        assert_eq!(entry.notable_files, ["big.csv", "main.rs"]);
        assert_eq!(entry.extra["subtree"]["files"], 25);
        assert_eq!(
            entry.summary,
            "Summarised from the scan; no file here was read by a model. 5 files, 19.5 KB: \
             3 source, 2 data. Languages: Rust (2), Python (1). Largest: big.csv (8.8 KB), \
             main.rs (5.9 KB). Newest: main.rs (2026-01-02). Below it: 3 directories holding \
             20 files (10 source: Rust (10)). Subdirectories: core/ (15 files in 2 \
             directories); api/ (5 files in 1 directory): HTTP handlers."
        );
        // The same inputs, the same entry.
        assert_eq!(
            entry,
            mechanical_entry(
                Path::new("/t"),
                Path::new("/t/src"),
                &stats(),
                &newest,
                &children,
                MechanicalReason::NotChosen
            )
        );
    }

    #[test]
    fn an_empty_leaf_says_so() {
        let entry = mechanical_entry(
            Path::new("/t"),
            Path::new("/t"),
            &DirStats::default(),
            &[],
            &[],
            MechanicalReason::BudgetSpent,
        );
        assert_eq!(entry.relative_path, ".");
        assert_eq!(entry.dominant_category, "unknown");
        assert_eq!(
            entry.summary,
            "Summarised from the scan; no file here was read by a model. No files of its own."
        );
        assert_eq!(
            entry.mechanical_reason.as_deref(),
            Some(MechanicalReason::BudgetSpent.as_str())
        );
    }

    #[test]
    fn gists_stop_at_the_first_sentence_and_the_limit() {
        assert_eq!(gist("One. Two."), "One.");
        assert_eq!(gist("  no full stop  "), "no full stop");
        let long = "x".repeat(400);
        assert_eq!(gist(&long).chars().count(), CHILD_GIST_CHARS + 3);
    }
}
