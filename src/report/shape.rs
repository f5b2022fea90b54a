//! Facts about the tree that several formats draw from, computed from the
//! report alone: how many bytes each directory holds ([`Sizes`]), which
//! paths lead to a flag ([`Flagged`]), paths relative to the target
//! ([`relative_to`]), and bar lengths in proportion ([`bar_length`]).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::Report;

/// Bytes of the classified files under each directory (the files the scan
/// saw, so ignored trees are not in it), keyed by the directory's path as
/// the scan wrote it (absolute, under the target as given).
pub(crate) struct Sizes<'a>(HashMap<&'a str, u64>);

impl<'a> Sizes<'a> {
    /// Sum every classified file into each of its ancestors up to `target`.
    /// The keys borrow the files' own paths, so nothing is allocated per
    /// file.
    pub(crate) fn of(report: &'a Report, target: &str) -> Sizes<'a> {
        let target = Path::new(target);
        let mut sizes: HashMap<&'a str, u64> = HashMap::new();
        for file in &report.scan.classified_files {
            for dir in Path::new(&file.path).ancestors().skip(1) {
                let Some(key) = dir.to_str() else { break };
                *sizes.entry(key).or_default() += file.size;
                if dir == target || dir.as_os_str().is_empty() {
                    break;
                }
            }
        }
        Sizes(sizes)
    }

    /// The bytes under the directory at `path` (0 when none were seen).
    pub(crate) fn get(&self, path: &str) -> u64 {
        self.0.get(path).copied().unwrap_or(0)
    }
}

/// The relative paths that hold a flag: each flag's path and every
/// directory above it.
pub(crate) struct Flagged(HashSet<String>);

impl Flagged {
    pub(crate) fn of(report: &Report) -> Flagged {
        let mut paths = HashSet::new();
        for flag in &report.flags {
            if flag.path == "general" {
                continue;
            }
            let mut at = Some(Path::new(flag.path.trim_end_matches('/')));
            while let Some(path) = at {
                let key = path.to_string_lossy();
                if key.is_empty() || !paths.insert(key.into_owned()) {
                    break;
                }
                at = path.parent();
            }
        }
        Flagged(paths)
    }

    /// Whether a flag was raised on `rel` or below it.
    pub(crate) fn holds(&self, rel: &str) -> bool {
        self.0.contains(rel)
    }
}

/// `path` relative to `target`: `.` for the target itself, `path` as it is
/// when it lies outside.
pub(crate) fn relative_to(target: &str, path: &str) -> String {
    match Path::new(path).strip_prefix(target) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string(),
    }
}

/// The length of a bar for `value` when `max` gets `width`: in proportion,
/// at least 1 for any value above zero.
pub(crate) fn bar_length(value: u64, max: u64, width: usize) -> usize {
    if value == 0 || max == 0 {
        return 0;
    }
    let scaled = (value as f64 / max as f64 * width as f64).round() as usize;
    scaled.clamp(1, width)
}

/// `n` with the word for one or for many.
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A figure from 0 to 1 as the reports show it: `0.85`, `0.9`, `1`.
pub(crate) fn fraction(value: f64) -> String {
    let shown = format!("{value:.2}");
    let shown = shown.trim_end_matches('0').trim_end_matches('.');
    if shown.is_empty() || shown == "-" {
        "0".to_string()
    } else {
        shown.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Flag;
    use crate::scan::ClassifiedFile;

    #[test]
    fn fractions_show_what_they_need() {
        assert_eq!(fraction(0.85), "0.85");
        assert_eq!(fraction(0.9), "0.9");
        assert_eq!(fraction(1.0), "1");
        assert_eq!(fraction(0.0), "0");
        assert_eq!(fraction(0.333), "0.33");
    }

    #[test]
    fn bars_are_in_proportion() {
        assert_eq!(bar_length(1676, 1676, 40), 40);
        assert_eq!(bar_length(56, 1676, 40), 1);
        assert_eq!(bar_length(838, 1676, 40), 20);
        assert_eq!(bar_length(0, 1676, 40), 0);
        assert_eq!(bar_length(5, 0, 40), 0);
    }

    #[test]
    fn sizes_add_up_to_the_target_and_flags_mark_their_ancestors() {
        let mut report = Report::default();
        for (path, size) in [("/t/a/b/x", 5), ("/t/a/y", 7), ("/t/z", 1)] {
            report.scan.classified_files.push(ClassifiedFile {
                path: path.into(),
                name: String::new(),
                category: String::new(),
                size,
                description: None,
            });
        }
        let sizes = Sizes::of(&report, "/t");
        assert_eq!(sizes.get("/t"), 13);
        assert_eq!(sizes.get("/t/a"), 12);
        assert_eq!(sizes.get("/t/a/b"), 5);
        assert_eq!(sizes.get("/"), 0);
        report.flags = vec![
            Flag::new("a/b/x", "f", "info"),
            Flag::new("general", "g", "info"),
        ];
        let flagged = Flagged::of(&report);
        assert!(flagged.holds("a") && flagged.holds("a/b") && flagged.holds("a/b/x"));
        assert!(!flagged.holds("z") && !flagged.holds("general"));
        assert_eq!(relative_to("/t", "/t"), ".");
        assert_eq!(relative_to("/t", "/t/a/b"), "a/b");
        assert_eq!(relative_to("/t", "/u/v"), "/u/v");
    }
}
