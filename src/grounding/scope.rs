//! [`Scope`]: the tree citations are checked against, indexed once per run.
//!
//! Its truth is the base scan's complete file list (`classified_files`):
//! every regular file in scope, as target-relative paths, with the
//! directories above them and an index by file name. A file the scan left
//! out on purpose (a hidden `.env`, an ignored build directory) still exists,
//! so a path not in the list is also looked up on disk under the target
//! (`symlink_metadata`, nothing is read); only the unique-name search is
//! limited to the list, since walking the disk for a name would be slow.
//!
//! Building it costs one pass over the file list; every lookup after that is
//! a hash lookup or one `stat`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::extract::Vocabulary;
use crate::scan::BaseScan;

/// The files and directories of the tree, by target-relative path.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    /// Every file in scope, sorted.
    files: Vec<String>,
    file_set: HashSet<String>,
    /// Every directory above a file, `.` (the target) included.
    dirs: HashSet<String>,
    /// File name → indexes into `files`.
    files_by_name: HashMap<String, Vec<usize>>,
    /// Directory name → directory paths.
    dirs_by_name: HashMap<String, Vec<String>>,
    vocabulary: Vocabulary,
    /// The absolute spellings of the target (as given, canonical), so an
    /// absolute citation inside it can be made relative.
    roots: Vec<PathBuf>,
    /// Where to look on disk for what the file list does not hold.
    disk: Option<PathBuf>,
}

impl Scope {
    /// The scope of a base scan of `target` (as given), with the disk probe
    /// rooted at `target_canonical`.
    pub(crate) fn from_scan(scan: &BaseScan, target: &Path, target_canonical: &Path) -> Scope {
        let files = scan.classified_files.iter().filter_map(|file| {
            let rel = Path::new(&file.path).strip_prefix(target).ok()?;
            Some(rel.to_string_lossy().into_owned())
        });
        let mut roots = vec![target.to_path_buf()];
        if target_canonical != target {
            roots.push(target_canonical.to_path_buf());
        }
        Scope::new(files, roots, Some(target_canonical.to_path_buf()))
    }

    /// A scope of `files` (target-relative), with `roots` the target's
    /// absolute spellings and `disk` the directory probed for files not in
    /// the list (`None`: the list is the whole truth).
    pub(crate) fn new(
        files: impl IntoIterator<Item = String>,
        roots: Vec<PathBuf>,
        disk: Option<PathBuf>,
    ) -> Scope {
        let mut files: Vec<String> = files.into_iter().filter(|f| !f.is_empty()).collect();
        files.sort_unstable();
        files.dedup();
        let mut dirs: HashSet<String> = HashSet::from([".".to_string()]);
        let mut files_by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, file) in files.iter().enumerate() {
            let (parent, name) = split_last(file);
            files_by_name
                .entry(name.to_string())
                .or_default()
                .push(index);
            let mut dir = parent;
            while let Some(d) = dir {
                if !dirs.insert(d.to_string()) {
                    break;
                }
                dir = split_last(d).0;
            }
        }
        let mut dirs_by_name: HashMap<String, Vec<String>> = HashMap::new();
        for dir in dirs.iter().filter(|d| *d != ".") {
            let name = split_last(dir).1;
            dirs_by_name
                .entry(name.to_string())
                .or_default()
                .push(dir.clone());
        }
        for paths in dirs_by_name.values_mut() {
            paths.sort_unstable();
        }
        let vocabulary = Vocabulary::new(
            files_by_name.keys().map(String::as_str),
            dirs_by_name.keys().map(String::as_str),
        )
        .with_paths(files.iter().chain(&dirs).map(String::as_str));
        Scope {
            file_set: files.iter().cloned().collect(),
            files,
            dirs,
            files_by_name,
            dirs_by_name,
            vocabulary,
            roots,
            disk,
        }
    }

    /// What extraction needs to know about this tree.
    pub(crate) fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }

    /// Every file in scope, sorted.
    pub(crate) fn files(&self) -> &[String] {
        &self.files
    }

    /// Whether `rel` is a file in the list.
    pub(crate) fn has_file(&self, rel: &str) -> bool {
        self.file_set.contains(rel)
    }

    /// Whether `rel` is a directory above some file in the list.
    pub(crate) fn has_dir(&self, rel: &str) -> bool {
        self.dirs.contains(rel)
    }

    /// Whether `rel` exists on disk under the target, and whether it is a
    /// directory. `None` when it does not or there is no disk to probe.
    pub(crate) fn probe(&self, rel: &str) -> Option<bool> {
        let path = self.disk.as_ref()?.join(rel);
        match std::fs::metadata(&path) {
            Ok(meta) => Some(meta.is_dir()),
            // A dangling symlink still exists as a name in the tree.
            Err(_) => std::fs::symlink_metadata(&path).ok().map(|_| false),
        }
    }

    /// The files named `name`, as paths.
    pub(crate) fn files_named(&self, name: &str) -> impl Iterator<Item = &str> {
        self.files_by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|&index| self.files[index].as_str())
    }

    /// The directories named `name`, as paths.
    pub(crate) fn dirs_named(&self, name: &str) -> impl Iterator<Item = &str> {
        self.dirs_by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// Whether some directory of the tree has this name.
    pub(crate) fn is_dir_name(&self, name: &str) -> bool {
        self.dirs_by_name.contains_key(name)
    }

    /// `absolute` made relative to the target (`.` for the target itself),
    /// or `None` when it lies outside.
    pub(crate) fn relative_to_target(&self, absolute: &str) -> Option<String> {
        let path = Path::new(absolute);
        self.roots.iter().find_map(|root| {
            let rel = path.strip_prefix(root).ok()?;
            let rel = rel.to_string_lossy();
            Some(if rel.is_empty() {
                ".".to_string()
            } else {
                rel.into_owned()
            })
        })
    }

    /// Whether `name` is the target's own name (how prompts show the
    /// target directory), which an agent may use for the target itself.
    pub(crate) fn is_target_name(&self, name: &str) -> bool {
        self.roots
            .iter()
            .any(|root| root.file_name().is_some_and(|n| n == name))
    }

    /// The files directly in `dir` (`.` for the target).
    pub(crate) fn files_in(&self, dir: &str) -> Vec<&str> {
        let prefix = if dir == "." {
            String::new()
        } else {
            format!("{dir}/")
        };
        let start = self.files.partition_point(|f| f.as_str() < prefix.as_str());
        self.files[start..]
            .iter()
            .take_while(|f| f.starts_with(&prefix))
            .filter(|f| !f[prefix.len()..].contains('/'))
            .map(String::as_str)
            .collect()
    }

    /// Whether some file at or below `dir` satisfies `wanted`.
    pub(crate) fn any_file_below(&self, dir: &str, wanted: impl Fn(&str) -> bool) -> bool {
        if dir == "." {
            return self.files.iter().any(|f| wanted(f));
        }
        let prefix = format!("{dir}/");
        let start = self.files.partition_point(|f| f.as_str() < prefix.as_str());
        self.files[start..]
            .iter()
            .take_while(|f| f.starts_with(&prefix))
            .any(|f| wanted(f))
    }
}

/// `a/b/c` → (`Some("a/b")`, `c`); `c` → (`None`, `c`).
pub(crate) fn split_last(path: &str) -> (Option<&str>, &str) {
    match path.rfind('/') {
        Some(at) => (Some(&path[..at]), &path[at + 1..]),
        None => (None, path),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A scope of `files` under the root /work/app, with no target to probe
    /// (shared with the resolver's tests).
    pub(in crate::grounding) fn scope_of(files: &[&str]) -> Scope {
        Scope::new(
            files.iter().map(|file| file.to_string()),
            vec![PathBuf::from("/work/app")],
            None,
        )
    }

    fn scope() -> Scope {
        scope_of(&[
            "src/main.rs",
            "src/core/engine.rs",
            "README.md",
            "docs/guide.md",
        ])
    }

    #[test]
    fn directories_come_from_the_files_above_them() {
        let scope = scope();
        for dir in [".", "src", "src/core", "docs"] {
            assert!(scope.has_dir(dir), "{dir}");
        }
        assert!(!scope.has_dir("src/main.rs"));
        assert!(scope.has_file("src/core/engine.rs"));
        assert!(scope.is_dir_name("core"));
        assert_eq!(scope.dirs_named("core").collect::<Vec<_>>(), ["src/core"]);
        assert_eq!(
            scope.files_named("engine.rs").collect::<Vec<_>>(),
            ["src/core/engine.rs"]
        );
    }

    #[test]
    fn files_in_a_directory_are_its_direct_children() {
        let scope = scope();
        assert_eq!(scope.files_in("src"), ["src/main.rs"]);
        assert_eq!(scope.files_in("."), ["README.md"]);
        assert!(scope.any_file_below("src", |f| f.ends_with("engine.rs")));
        assert!(!scope.any_file_below("docs", |f| f.ends_with(".rs")));
    }

    #[test]
    fn absolute_paths_inside_the_target_become_relative() {
        let scope = scope();
        assert_eq!(
            scope.relative_to_target("/work/app/src/main.rs").as_deref(),
            Some("src/main.rs")
        );
        assert_eq!(scope.relative_to_target("/work/app").as_deref(), Some("."));
        assert_eq!(scope.relative_to_target("/work/application/x"), None);
        assert_eq!(scope.relative_to_target("/etc/passwd"), None);
    }

    #[test]
    fn the_disk_probe_finds_what_the_list_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(".env"), "X=1\n").unwrap();
        std::fs::create_dir(tmp.path().join("build")).unwrap();
        let scope = Scope::new(Vec::new(), vec![], Some(tmp.path().to_path_buf()));
        assert_eq!(scope.probe(".env"), Some(false));
        assert_eq!(scope.probe("build"), Some(true));
        assert_eq!(scope.probe("missing.rs"), None);
        assert_eq!(Scope::new(Vec::new(), vec![], None).probe(".env"), None);
    }
}
