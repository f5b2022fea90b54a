//! Directory fingerprints, and which directories a resumed run must
//! investigate again.
//!
//! The original trusted any cached summary forever, so an edited file never
//! reached the report until the user threw the whole cache away. Here every
//! dir entry records a fingerprint of the directory's *direct* contents
//! (names, sizes and modification times of its files, names of its
//! subdirectories; [`crate::scan::Fingerprint`] defines it). On the next run
//! a directory is investigated again when it has no entry, when its
//! fingerprint differs, or when any directory below it is investigated
//! again: parents embed their children's summaries, so a change travels up
//! to the root.
//!
//! The run compares the fingerprints the base scan's walk took (they come
//! with discovery); a dir loop records the one it reads from the disk with
//! [`fingerprint`] when it starts. Deciding is the pure [`classify`].
//!
//! A summary is also stale when the model wrote it in another language
//! than the run asks for (`--language`, recorded as [`LANGUAGE_FIELD`]):
//! the report would mix languages, so the directory is investigated again
//! in the new one. A mechanical entry is luminos's own text, the same
//! whatever the language, so it never goes stale that way.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::cache::DirEntry;
use crate::scan::{FingerprintBuilder, ScanFilter};

/// A language as runs compare it: `French`, ` french ` and `FRENCH` are one.
pub(crate) fn language_key(language: &str) -> String {
    language.trim().to_lowercase()
}

/// The fingerprint of `dir`'s direct contents as they are on the disk now,
/// within `scope` when given (a build output the scan ignores must not make
/// its parent look changed). Symlinks are described by their target, not
/// followed. An unreadable directory has a fingerprint too, so it is not
/// investigated forever.
pub fn fingerprint(dir: &Path, scope: Option<&ScanFilter>) -> String {
    let mut entries: Vec<(OsString, Described)> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter_map(|entry| describe(&entry.path(), scope))
            .collect(),
        Err(err) => return FingerprintBuilder::unreadable(err.kind()).to_string(),
    };
    entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut builder = FingerprintBuilder::new();
    for (name, described) in &entries {
        match described {
            Described::Dir => builder.dir(name),
            Described::Link(target) => builder.link(name, target),
            Described::File { size, secs, nanos } => builder.file(name, *size, *secs, *nanos),
        }
    }
    builder.finish().to_string()
}

/// What a fingerprint records of one entry.
enum Described {
    Dir,
    Link(PathBuf),
    File { size: u64, secs: i64, nanos: i64 },
}

/// The entry at `path`, unless it is out of scope or cannot be examined.
fn describe(path: &Path, scope: Option<&ScanFilter>) -> Option<(OsString, Described)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let kind = meta.file_type();
    if let Some(scope) = scope {
        let in_scope = if kind.is_dir() {
            scope.allows_dir(path)
        } else {
            scope.allows_file(path)
        };
        if !in_scope {
            return None;
        }
    }
    let described = if kind.is_dir() {
        Described::Dir
    } else if kind.is_symlink() {
        Described::Link(std::fs::read_link(path).unwrap_or_default())
    } else {
        Described::File {
            size: meta.len(),
            secs: meta.mtime(),
            nanos: meta.mtime_nsec(),
        }
    };
    Some((path.file_name()?.to_os_string(), described))
}

/// What the cache knows about one directory, compared with the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirState {
    /// No readable dir entry.
    Missing,
    /// An entry whose fingerprint differs from the disk (or that has none).
    Changed,
    /// An entry whose fingerprint matches, written in another language
    /// than the run's.
    OtherLanguage,
    /// An entry whose fingerprint matches.
    Unchanged,
}

impl DirState {
    /// Compare a dir entry (if any) with the directory's current fingerprint
    /// and the run's `language`.
    pub(crate) fn of(entry: Option<&DirEntry>, current: &str, language: Option<&str>) -> DirState {
        let Some(entry) = entry else {
            return DirState::Missing;
        };
        if entry.fingerprint.as_deref() != Some(current) {
            return DirState::Changed;
        }
        let written_in = entry.language.as_deref();
        if entry.mechanical || written_in.map(language_key) == language.map(language_key) {
            DirState::Unchanged
        } else {
            DirState::OtherLanguage
        }
    }
}

/// Why a directory is investigated (again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// Never summarized (new, or an earlier run did not get to it).
    New,
    /// Its own contents changed since its summary.
    Changed,
    /// Its summary is in another language than the run asks for.
    Language,
    /// A directory below it is investigated again.
    ChildChanged,
}

/// `all_dirs` (leaf-first) split into directories whose summaries still hold
/// and directories to investigate, each with its reason; both keep
/// `all_dirs`' order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Freshness {
    pub fresh: Vec<PathBuf>,
    pub stale: Vec<(PathBuf, Reason)>,
}

impl Freshness {
    /// The directories to investigate, in order.
    pub(crate) fn stale_dirs(&self) -> Vec<PathBuf> {
        self.stale.iter().map(|(dir, _)| dir.clone()).collect()
    }

    /// How many directories are stale for `reason`.
    #[cfg(test)]
    pub(crate) fn count(&self, reason: Reason) -> usize {
        self.stale.iter().filter(|(_, r)| *r == reason).count()
    }
}

/// Decide which directories must be investigated: those not
/// [`DirState::Unchanged`], and every discovered ancestor of one.
pub(crate) fn classify(all_dirs: &[PathBuf], states: &HashMap<PathBuf, DirState>) -> Freshness {
    let discovered: HashSet<&Path> = all_dirs.iter().map(PathBuf::as_path).collect();
    let state = |dir: &Path| states.get(dir).copied().unwrap_or(DirState::Missing);
    let mut child_changed: HashSet<&Path> = HashSet::new();
    for dir in all_dirs {
        if state(dir) != DirState::Unchanged {
            for ancestor in dir.ancestors().skip(1) {
                if discovered.contains(ancestor) && !child_changed.insert(ancestor) {
                    break;
                }
            }
        }
    }
    let mut freshness = Freshness::default();
    for dir in all_dirs {
        let reason = match state(dir) {
            DirState::Missing => Some(Reason::New),
            DirState::Changed => Some(Reason::Changed),
            DirState::OtherLanguage => Some(Reason::Language),
            DirState::Unchanged if child_changed.contains(dir.as_path()) => {
                Some(Reason::ChildChanged)
            }
            DirState::Unchanged => None,
        };
        match reason {
            Some(reason) => freshness.stale.push((dir.clone(), reason)),
            None => freshness.fresh.push(dir.clone()),
        }
    }
    freshness
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_entry(value: serde_json::Value) -> DirEntry {
        DirEntry::from_value(value).unwrap()
    }
    use serde_json::json;
    use std::time::{Duration, SystemTime};

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    fn states(list: &[(&str, DirState)]) -> HashMap<PathBuf, DirState> {
        list.iter().map(|(p, s)| (PathBuf::from(p), *s)).collect()
    }

    #[test]
    fn unchanged_tree_is_all_fresh() {
        let dirs = paths(&["/t/a/b", "/t/a", "/t"]);
        let all = states(&[
            ("/t/a/b", DirState::Unchanged),
            ("/t/a", DirState::Unchanged),
            ("/t", DirState::Unchanged),
        ]);
        let freshness = classify(&dirs, &all);
        assert_eq!(freshness.fresh, dirs);
        assert!(freshness.stale.is_empty());
    }

    #[test]
    fn a_change_travels_to_every_ancestor_and_nowhere_else() {
        let dirs = paths(&["/t/a/b", "/t/c/d", "/t/a", "/t/c", "/t"]);
        let all = states(&[
            ("/t/a/b", DirState::Changed),
            ("/t/c/d", DirState::Unchanged),
            ("/t/a", DirState::Unchanged),
            ("/t/c", DirState::Unchanged),
            ("/t", DirState::Unchanged),
        ]);
        let freshness = classify(&dirs, &all);
        assert_eq!(freshness.fresh, paths(&["/t/c/d", "/t/c"]));
        assert_eq!(
            freshness.stale,
            vec![
                (PathBuf::from("/t/a/b"), Reason::Changed),
                (PathBuf::from("/t/a"), Reason::ChildChanged),
                (PathBuf::from("/t"), Reason::ChildChanged),
            ]
        );
    }

    #[test]
    fn missing_entries_are_new_and_unknown_dirs_count_as_missing() {
        let dirs = paths(&["/t/x", "/t"]);
        let freshness = classify(&dirs, &states(&[("/t", DirState::Unchanged)]));
        assert_eq!(
            freshness.stale,
            vec![
                (PathBuf::from("/t/x"), Reason::New),
                (PathBuf::from("/t"), Reason::ChildChanged),
            ]
        );
        assert_eq!(freshness.count(Reason::New), 1);
        assert_eq!(freshness.stale_dirs(), dirs);
    }

    #[test]
    fn undiscovered_ancestors_do_not_stop_the_walk_up() {
        // `/t/skipped` is not discovered (excluded); its parent still follows
        // its discovered grandchild.
        let dirs = paths(&["/t/skipped/x", "/t"]);
        let all = states(&[
            ("/t/skipped/x", DirState::Changed),
            ("/t", DirState::Unchanged),
        ]);
        let stale = classify(&dirs, &all).stale_dirs();
        assert_eq!(stale, dirs);
    }

    #[test]
    fn state_compares_the_recorded_fingerprint() {
        assert_eq!(DirState::of(None, "v1:a", None), DirState::Missing);
        let entry = dir_entry(json!({"summary": "s", "fingerprint": "v1:a"}));
        assert_eq!(
            DirState::of(Some(&entry), "v1:a", None),
            DirState::Unchanged
        );
        assert_eq!(DirState::of(Some(&entry), "v1:b", None), DirState::Changed);
        // Entries written before fingerprints existed cannot be trusted.
        let old = dir_entry(json!({"summary": "s"}));
        assert_eq!(DirState::of(Some(&old), "v1:a", None), DirState::Changed);
    }

    #[test]
    fn a_summary_in_another_language_is_stale() {
        let english = dir_entry(json!({"summary": "s", "fingerprint": "v1:a"}));
        let french =
            dir_entry(json!({"summary": "s", "fingerprint": "v1:a", "language": "French"}));
        let state = |entry: &DirEntry, language| DirState::of(Some(entry), "v1:a", language);
        assert_eq!(state(&english, Some("French")), DirState::OtherLanguage);
        assert_eq!(state(&french, None), DirState::OtherLanguage);
        assert_eq!(state(&french, Some("German")), DirState::OtherLanguage);
        assert_eq!(state(&french, Some(" french ")), DirState::Unchanged);
        // A changed directory is changed, whatever its language.
        assert_eq!(
            DirState::of(Some(&french), "v1:b", Some("French")),
            DirState::Changed
        );
        // luminos's own summaries have no language to change.
        let mechanical =
            dir_entry(json!({"summary": "s", "fingerprint": "v1:a", "mechanical": true}));
        assert_eq!(state(&mechanical, Some("French")), DirState::Unchanged);
        let freshness = classify(
            &paths(&["/t/a", "/t"]),
            &[
                (PathBuf::from("/t/a"), DirState::OtherLanguage),
                (PathBuf::from("/t"), DirState::Unchanged),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(
            freshness.stale,
            vec![
                (PathBuf::from("/t/a"), Reason::Language),
                (PathBuf::from("/t"), Reason::ChildChanged),
            ]
        );
    }

    #[test]
    fn fingerprint_follows_names_sizes_and_mtimes_of_direct_contents() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("a.txt"), "one").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        let first = fingerprint(dir, None);
        assert!(first.starts_with("v1:"));
        assert_eq!(fingerprint(dir, None), first, "stable when nothing changed");

        // Contents of a subdirectory are its own business.
        std::fs::write(dir.join("sub/inner.txt"), "x").unwrap();
        assert_eq!(fingerprint(dir, None), first);

        // Same size, new mtime.
        let file = std::fs::File::options()
            .write(true)
            .open(dir.join("a.txt"))
            .unwrap();
        file.set_modified(SystemTime::now() + Duration::from_secs(5))
            .unwrap();
        let touched = fingerprint(dir, None);
        assert_ne!(touched, first);

        std::fs::write(dir.join("a.txt"), "longer").unwrap();
        assert_ne!(fingerprint(dir, None), touched);

        let before_rename = fingerprint(dir, None);
        std::fs::rename(dir.join("sub"), dir.join("sub2")).unwrap();
        assert_ne!(fingerprint(dir, None), before_rename);
    }

    #[test]
    fn out_of_scope_names_do_not_count() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("kept.rs"), "fn main() {}").unwrap();
        std::fs::write(dir.join(".gitignore"), "*.log\n").unwrap();
        let scope = ScanFilter::new(dir, &crate::scan::ScanOptions::default());
        let before = fingerprint(dir, Some(&scope));
        std::fs::write(dir.join("build.log"), "noise").unwrap();
        std::fs::write(dir.join(".hidden"), "noise").unwrap();
        assert_eq!(fingerprint(dir, Some(&scope)), before);
        assert_ne!(fingerprint(dir, None), before);
    }
}
