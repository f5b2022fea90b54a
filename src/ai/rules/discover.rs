//! Directory discovery: which directories get a dir loop, in leaf-first order.
//!
//! The base scan's walk already found every directory in its scope (hidden
//! names without `-a`, `--exclude` names and ignore files leave a directory
//! out, symlinks are not followed: [`ScannedDirs`]), so the investigation
//! never looks at what the scan left out and never walks the tree again.
//! Discovery only prunes what the walk marked as skipped (the skip list,
//! `*.egg-info`, a directory holding `CACHEDIR.TAG`: [`crate::scan::skip`]),
//! with everything below it, and orders what is left; it is a pure
//! function.
//!
//! The order is load-bearing: a parent's prompt carries its children's
//! summaries, so children must be investigated first. Deepest first, then by
//! the path compared as a *string* (so `/a/b-c` sorts before `/a/b/c`, unlike
//! `Path`'s component order).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::scan::{Fingerprint, ScannedDirs};

/// Leaf-first: more path separators first, then the path's bytes.
pub(crate) fn leaf_first_cmp(a: &Path, b: &Path) -> Ordering {
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    let depth = |bytes: &[u8]| bytes.iter().filter(|&&c| c == b'/').count();
    depth(b).cmp(&depth(a)).then_with(|| a.cmp(b))
}

/// Sort directories leaf-first (see [`leaf_first_cmp`]).
pub fn sort_leaf_first(dirs: &mut [PathBuf]) {
    dirs.sort_by(|a, b| leaf_first_cmp(a, b));
}

/// The directories to investigate, leaf-first, with the fingerprint the
/// scan took of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Absolute (under the canonical target), leaf-first.
    pub dirs: Vec<PathBuf>,
    /// `dirs[i]`'s fingerprint from the scan's walk; `None` when the walk
    /// could not examine it and the disk must be asked.
    pub fingerprints: Vec<Option<Fingerprint>>,
}

impl Discovery {
    /// Each directory with its fingerprint from the scan, leaf-first.
    pub fn iter(&self) -> impl Iterator<Item = (&PathBuf, Option<&Fingerprint>)> {
        self.dirs
            .iter()
            .zip(self.fingerprints.iter().map(Option::as_ref))
    }
}

/// Every directory to investigate under `target` (the canonical target), the
/// root included, leaf-first: the directories in the scan's scope
/// (`scanned`, relative to the target the scan walked, which is this one or
/// a symlink to it) except those the walk marked as skipped, and all below
/// them.
pub fn discover_directories(target: &Path, scanned: &ScannedDirs) -> Discovery {
    let mut found: Vec<(PathBuf, Option<Fingerprint>)> = scanned
        .iter()
        .filter(|dir| !dir.skipped)
        .map(|dir| {
            let path = if dir.rel.as_os_str().is_empty() {
                target.to_path_buf()
            } else {
                target.join(&dir.rel)
            };
            (path, dir.fingerprint)
        })
        .collect();
    found.sort_by(|a, b| leaf_first_cmp(&a.0, &b.0));
    let (dirs, fingerprints) = found.into_iter().unzip();
    Discovery { dirs, fingerprints }
}

/// Each discovered directory's discovered subdirectories, sorted, indexed
/// once: asking the whole list for every directory's children is quadratic,
/// which a tree of ten thousand directories notices.
#[derive(Debug, Default)]
pub(crate) struct ChildIndex(HashMap<PathBuf, Vec<PathBuf>>);

impl ChildIndex {
    pub(crate) fn new(all: &[PathBuf]) -> ChildIndex {
        let mut map: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
        for dir in all {
            if let Some(parent) = dir.parent() {
                map.entry(parent.to_path_buf())
                    .or_default()
                    .push(dir.clone());
            }
        }
        for children in map.values_mut() {
            children.sort();
        }
        ChildIndex(map)
    }

    /// The subdirectories of `dir` among those indexed, sorted.
    pub(crate) fn of(&self, dir: &Path) -> &[PathBuf] {
        self.0.get(dir).map_or(&[], Vec::as_slice)
    }
}

/// `dir` relative to `target`: `.` for the target itself.
pub fn relative(target: &Path, dir: &Path) -> String {
    match dir.strip_prefix(target) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => dir.to_string_lossy().into_owned(),
    }
}

/// How a directory is named on stderr and in prompts: relative, with the
/// target's own name instead of `.`.
pub(crate) fn display_name(target: &Path, dir: &Path) -> String {
    match relative(target, dir).as_str() {
        "." => target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| ".".to_string()),
        rel => rel.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Progress;
    use crate::scan::{ScanOptions, scan_with_dirs};

    /// Discovery over the scan of `target`, as a run does it.
    fn discover(target: &Path, options: &ScanOptions) -> Vec<PathBuf> {
        let (_, scanned) = scan_with_dirs(target, options, &Progress::silent());
        discover_directories(target, &scanned).dirs
    }

    fn options() -> ScanOptions {
        ScanOptions::default()
    }

    fn rels(target: &Path, dirs: &[PathBuf]) -> Vec<String> {
        dirs.iter().map(|d| relative(target, d)).collect()
    }

    fn tree(dirs: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let target = std::fs::canonicalize(tmp.path()).unwrap();
        for dir in dirs {
            std::fs::create_dir_all(target.join(dir)).unwrap();
        }
        (tmp, target)
    }

    #[test]
    fn string_order_not_component_order() {
        let mut dirs = vec![
            PathBuf::from("/a/b/c"),
            PathBuf::from("/a/b-c/d"),
            PathBuf::from("/a"),
            PathBuf::from("/a/b"),
            PathBuf::from("/a/b-c"),
        ];
        sort_leaf_first(&mut dirs);
        let shown: Vec<_> = dirs.iter().map(|d| d.to_str().unwrap()).collect();
        assert_eq!(shown, ["/a/b-c/d", "/a/b/c", "/a/b", "/a/b-c", "/a"]);
        // Path's own ordering would put /a/b/c first.
        assert!(Path::new("/a/b/c") < Path::new("/a/b-c/d"));
    }

    #[test]
    fn empty_target_is_just_the_target() {
        let (_tmp, target) = tree(&[]);
        assert_eq!(discover(&target, &options()), vec![target]);
    }

    #[test]
    fn leaves_first_with_every_directory() {
        let (_tmp, target) = tree(&["a/b/c", "a/d", "a/b/e", "a-b"]);
        let found = discover(&target, &options());
        assert_eq!(
            rels(&target, &found),
            ["a/b/c", "a/b/e", "a/b", "a/d", "a", "a-b", "."]
        );
    }

    #[test]
    fn pruning() {
        let (_tmp, target) = tree(&[
            ".git/objects",
            "__pycache__",
            "node_modules/x",
            "pkg.egg-info",
            "vendor",
            ".hidden",
            "src/build",
            "src/.cache",
            "target/debug",
        ]);
        let custom = ScanOptions {
            exclude: vec!["vendor".into()],
            ..options()
        };
        let hidden = ScanOptions {
            show_hidden: true,
            ..options()
        };
        for (scan, expected) in [
            (options(), &["src", "vendor", "."][..]),
            (custom, &["src", "."]),
            (hidden, &["src/.cache", ".hidden", "src", "vendor", "."]),
        ] {
            assert_eq!(rels(&target, &discover(&target, &scan)), expected);
        }
    }

    #[test]
    fn ignore_files_are_the_scans_scope() {
        let (_tmp, target) = tree(&["out/debug", "src", "generated"]);
        std::fs::write(target.join(".gitignore"), "out/\n").unwrap();
        std::fs::write(target.join("src/.ignore"), "*\n").unwrap();
        assert_eq!(
            rels(&target, &discover(&target, &options())),
            ["generated", "src", "."]
        );
        let everything = ScanOptions {
            respect_ignore: false,
            ..options()
        };
        assert_eq!(
            rels(&target, &discover(&target, &everything)),
            ["out/debug", "generated", "out", "src", "."]
        );
    }

    #[test]
    fn children_and_names() {
        let t = Path::new("/w/proj");
        let all = vec![t.join("a/x"), t.join("a"), t.join("b"), t.to_path_buf()];
        let children = ChildIndex::new(&all);
        assert_eq!(children.of(t), [t.join("a"), t.join("b")]);
        assert_eq!(children.of(&t.join("a")), [t.join("a/x")]);
        assert!(children.of(&t.join("b")).is_empty());
        assert_eq!(relative(t, t), ".");
        assert_eq!(relative(t, &t.join("a/x")), "a/x");
        assert_eq!(display_name(t, t), "proj");
        assert_eq!(display_name(t, &t.join("a")), "a");
    }
}
