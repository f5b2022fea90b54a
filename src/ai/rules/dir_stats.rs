//! What the base scan says about each discovered directory, indexed once:
//! its own files (count, bytes, what reading them costs, categories,
//! languages, the largest) and the totals of its subtree.
//!
//! The investigation decides from these figures where loops go (how big a
//! unit is, what a loop will cost) and builds mechanical summaries from
//! them, so both read the scan's one walk instead of walking the tree again.
//! Pure: the scan's files and the discovered directories in, figures out.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::ai::tools::fs::DEFAULT_MAX_BYTES;
use crate::scan::ClassifiedFile;
use crate::scan::code::language_of;
use crate::scan::filetypes::extension_of;

/// How many of a directory's largest files are kept.
pub(crate) const LARGEST_KEPT: usize = 3;

/// Bytes a listing line costs beyond the name: `  name  (N bytes)  [type]`.
const LISTING_LINE_BYTES: u64 = 32;

/// The scan's figures for one directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DirStats {
    /// Files directly in it (within the scan's scope).
    pub files: u32,
    /// Their bytes.
    pub bytes: u64,
    /// What reading each of them once costs: its bytes up to `read_file`'s
    /// default cut.
    pub read_bytes: u64,
    /// Files per category.
    pub categories: BTreeMap<String, u32>,
    /// Source files per language.
    pub languages: BTreeMap<String, u32>,
    /// The largest files, largest first: (name, bytes).
    pub largest: Vec<(String, u64)>,
    /// Bytes of its listing as a prompt shows it.
    pub listing_bytes: u64,
    /// Discovered subdirectories directly in it.
    pub subdirs: u32,
    /// Files in its whole subtree (itself included).
    pub subtree_files: u64,
    /// Bytes in its whole subtree.
    pub subtree_bytes: u64,
    /// Discovered directories in its subtree, itself included.
    pub subtree_dirs: u32,
    /// Source files in its subtree.
    pub subtree_source: u64,
    /// Source files per language in its subtree.
    pub subtree_languages: BTreeMap<String, u64>,
}

impl DirStats {
    /// Source files directly in it.
    pub(crate) fn source_files(&self) -> u32 {
        self.categories.get("source").copied().unwrap_or(0)
    }

    /// Counts `file`, one of its own files.
    fn add_file(&mut self, file: &ClassifiedFile) {
        self.files += 1;
        self.bytes += file.size;
        self.read_bytes += file.size.min(DEFAULT_MAX_BYTES);
        self.listing_bytes += file.name.len() as u64 + LISTING_LINE_BYTES;
        count(&mut self.categories, &file.category);
        if file.category == "source" {
            let language = language_of(&extension_of(&file.name)).unwrap_or("Other");
            count(&mut self.languages, language);
        }
        self.keep_if_largest(&file.name, file.size);
    }

    /// Keeps the file `name` of `size` among the [`LARGEST_KEPT`] largest,
    /// largest first (by name among equals), when it is one of them: only
    /// those are ever copied.
    fn keep_if_largest(&mut self, name: &str, size: u64) {
        let before = |a: (&str, u64), b: (&str, u64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0));
        let full = self.largest.len() >= LARGEST_KEPT;
        if full
            && self.largest.last().is_some_and(|(last, last_size)| {
                before((name, size), (last, *last_size)) != std::cmp::Ordering::Less
            })
        {
            return;
        }
        let at = self
            .largest
            .partition_point(|(kept, kept_size)| before((kept, *kept_size), (name, size)).is_lt());
        self.largest.insert(at, (name.to_string(), size));
        self.largest.truncate(LARGEST_KEPT);
    }

    /// Adds its own files and itself to its subtree's totals.
    fn add_own_to_subtree(&mut self) {
        self.subtree_files += u64::from(self.files);
        self.subtree_bytes += self.bytes;
        self.subtree_dirs += 1;
        self.subtree_source += u64::from(self.source_files());
        for (language, count) in &self.languages {
            *self.subtree_languages.entry(language.clone()).or_insert(0) += u64::from(*count);
        }
    }

    /// Adds `child`, the complete figures of the subdirectory at `dir`: a
    /// line of its listing, and its subtree to this one's.
    fn add_subdir(&mut self, dir: &Path, child: &DirStats) {
        self.subdirs += 1;
        self.listing_bytes += dir
            .file_name()
            .map_or(0, |n| n.len() as u64 + LISTING_LINE_BYTES / 2);
        self.subtree_files += child.subtree_files;
        self.subtree_bytes += child.subtree_bytes;
        self.subtree_dirs += child.subtree_dirs;
        self.subtree_source += child.subtree_source;
        for (language, count) in &child.subtree_languages {
            *self.subtree_languages.entry(language.clone()).or_insert(0) += count;
        }
    }
}

/// Counts one more `key` in `counts`, copying the key only the first time.
fn count<N: std::ops::AddAssign + From<u8>>(counts: &mut BTreeMap<String, N>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += N::from(1),
        None => {
            counts.insert(key.to_string(), N::from(1));
        }
    }
}

/// [`DirStats`] of every discovered directory.
#[derive(Debug, Clone, Default)]
pub(crate) struct TreeStats {
    by_dir: HashMap<PathBuf, DirStats>,
}

impl TreeStats {
    /// Index `files` (as the scan names them, under `scanned_root`) by the
    /// discovered directory (under `canonical_root`) that holds them.
    /// Files in directories discovery left out count for no directory.
    pub(crate) fn new(
        canonical_root: &Path,
        scanned_root: &Path,
        files: &[ClassifiedFile],
        dirs: &[PathBuf],
    ) -> TreeStats {
        let mut by_dir: HashMap<PathBuf, DirStats> = dirs
            .iter()
            .map(|dir| (dir.clone(), DirStats::default()))
            .collect();
        // The scan lists files by path, so a directory's files come
        // together: its key is worked out once, not once a file.
        let mut current: Option<(&Path, Option<PathBuf>)> = None;
        for file in files {
            let Some(parent) = Path::new(&file.path).parent() else {
                continue;
            };
            if current.as_ref().is_none_or(|(seen, _)| *seen != parent) {
                let key = parent
                    .strip_prefix(scanned_root)
                    .ok()
                    .map(|rel| canonical_root.join(rel));
                current = Some((parent, key));
            }
            let key = current.as_ref().and_then(|(_, key)| key.as_ref());
            if let Some(stats) = key.and_then(|key| by_dir.get_mut(key)) {
                stats.add_file(file);
            }
        }
        add_subtrees(&mut by_dir, canonical_root, dirs);
        TreeStats { by_dir }
    }

    /// The figures of `dir` (all zero for a directory not indexed).
    pub(crate) fn of(&self, dir: &Path) -> &DirStats {
        static EMPTY: std::sync::OnceLock<DirStats> = std::sync::OnceLock::new();
        self.by_dir
            .get(dir)
            .unwrap_or_else(|| EMPTY.get_or_init(DirStats::default))
    }
}

/// Fills in every subtree total of `by_dir`. `dirs` come leaf-first, so
/// every child is complete before its parent adds it; the root adds itself
/// to no parent.
fn add_subtrees(by_dir: &mut HashMap<PathBuf, DirStats>, canonical_root: &Path, dirs: &[PathBuf]) {
    for dir in dirs {
        let Some(stats) = by_dir.get(dir) else {
            continue;
        };
        let mut own = stats.clone();
        own.add_own_to_subtree();
        by_dir.insert(dir.clone(), own.clone());
        if dir == canonical_root {
            continue;
        }
        if let Some(parent) = dir.parent().and_then(|p| by_dir.get_mut(p)) {
            parent.add_subdir(dir, &own);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, category: &str, size: u64) -> ClassifiedFile {
        ClassifiedFile {
            path: path.to_string(),
            name: Path::new(path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            category: category.to_string(),
            size,
            description: None,
        }
    }

    #[test]
    fn figures_per_directory_and_per_subtree() {
        let canonical = Path::new("/real/proj");
        let mut dirs = ["src/core", "src"].map(|rel| canonical.join(rel)).to_vec();
        dirs.push(canonical.to_path_buf());
        let files = vec![
            file("/link/proj/README.md", "document", 100),
            file("/link/proj/src/main.rs", "source", 10_000),
            file("/link/proj/src/core/a.py", "source", 30),
            file("/link/proj/src/core/b.rs", "source", 20),
            file("/link/proj/src/core/data.csv", "data", 40),
            // Under a directory discovery left out (node_modules).
            file("/link/proj/node_modules/x.js", "source", 5),
        ];
        let stats = TreeStats::new(canonical, Path::new("/link/proj"), &files, &dirs);
        let core = stats.of(&canonical.join("src/core"));
        assert_eq!((core.files, core.bytes, core.read_bytes), (3, 90, 90));
        assert_eq!(core.source_files(), 2);
        assert_eq!(
            core.languages,
            BTreeMap::from([("Python".into(), 1), ("Rust".into(), 1)])
        );
        assert_eq!(core.largest[0], ("data.csv".into(), 40));
        let src = stats.of(&canonical.join("src"));
        // main.rs is read up to 4 KiB.
        assert_eq!((src.files, src.read_bytes), (1, DEFAULT_MAX_BYTES));
        assert_eq!(
            (src.subtree_files, src.subtree_dirs, src.subdirs),
            (4, 2, 1)
        );
        let root = stats.of(canonical);
        assert_eq!(
            (root.files, root.subtree_files, root.subtree_dirs),
            (1, 5, 3)
        );
        assert_eq!(root.subtree_bytes, 10_190);
        assert_eq!(root.subtree_source, 3);
        assert_eq!(root.subtree_languages["Rust"], 2);
        assert!(root.listing_bytes > 0);
        assert_eq!(stats.of(Path::new("/elsewhere")), &DirStats::default());
    }

    #[test]
    fn the_largest_files_are_kept_largest_first_by_name_among_equals() {
        let mut stats = DirStats::default();
        for (name, size) in [("e", 5), ("b", 9), ("a", 1), ("d", 9), ("c", 7), ("f", 9)] {
            stats.keep_if_largest(name, size);
        }
        assert_eq!(
            stats.largest,
            [
                ("b".to_string(), 9),
                ("d".to_string(), 9),
                ("f".to_string(), 9)
            ]
        );
        let mut few = DirStats::default();
        few.keep_if_largest("x", 1);
        few.keep_if_largest("y", 3);
        assert_eq!(few.largest, [("y".to_string(), 3), ("x".to_string(), 1)]);
    }
}
