//! [`ScanFilter`]: the base scan's idea of which paths are in scope, for code
//! that looks at the target on its own after the scan (a dir loop's
//! fingerprint, the prompts' trees, tools that list directories). The
//! directories themselves come from the scan's walk ([`super::ScannedDirs`]).
//!
//! It applies the same three rules as the scan:
//! - hidden names (a dot component below the root) are out unless `-a`;
//! - directories named by `-x` are out, everywhere below the root;
//! - with ignore files respected (the default), whatever `.gitignore`,
//!   `.ignore` and `.git/info/exclude` files under the root exclude is out,
//!   with the precedence described in [`super::ignore_files`]. Nothing above the
//!   root is read.
//!
//! Each directory's ignore files are read once and cached, so asking about
//! every directory of a tree costs about as much as walking it.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use crate::scan::ScanOptions;

use super::ignore_files::{RuleFilesPresent, RuleStack};
use super::walk::{WalkRules, is_hidden_name};

/// Which paths under a root the base scan looks at. Thread-safe.
pub struct ScanFilter {
    root: PathBuf,
    rules: WalkRules,
    /// Rules in effect for the entries of each directory, by relative path.
    stacks: Mutex<HashMap<PathBuf, RuleStack>>,
}

/// Where a path is relative to the target, for judging it as an entry.
enum Place<'p> {
    /// Not inside the target (or not a plain relative path).
    Outside,
    /// The target itself.
    Root,
    /// The entry `name` of the directory `parent` (relative).
    Entry(PathBuf, &'p OsStr),
}

impl ScanFilter {
    /// A filter for the tree under `root` (absolute; canonical or not, as
    /// long as the paths asked about are built on the same form).
    pub fn new(root: &Path, options: &ScanOptions) -> ScanFilter {
        ScanFilter {
            root: root.to_path_buf(),
            rules: WalkRules::new(options),
            stacks: Mutex::new(HashMap::new()),
        }
    }

    /// The root this filter was built for.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when the scan would enter the directory `path` (the root itself
    /// always). Paths outside the root are not in scope.
    pub fn allows_dir(&self, path: &Path) -> bool {
        self.allows(path, true)
    }

    /// True when the scan would list the file `path`. As in the original's
    /// classification, `-x` names exclude directories, not files.
    pub fn allows_file(&self, path: &Path) -> bool {
        self.allows(path, false)
    }

    /// [`ScanFilter::allows_dir`] (`is_dir`) or [`ScanFilter::allows_file`]
    /// for an entry of a directory already known to be in scope: only the
    /// entry's own name is judged, so listing a directory does not judge its
    /// ancestors again for every entry.
    pub(crate) fn allows_entry(&self, path: &Path, is_dir: bool) -> bool {
        match self.place_of(path) {
            Place::Outside => false,
            Place::Root => is_dir,
            Place::Entry(parent, name) => self.entry_allowed(&parent, name, is_dir),
        }
    }

    /// True when `-x` or an ignore rule excludes `path` itself, whatever the
    /// hidden-name rule says: for listings that show hidden names on request
    /// but must still leave out what ignore files exclude (`.env`, say).
    /// Only the last component is checked; its parent is taken as in scope.
    pub(crate) fn rules_exclude(&self, path: &Path, is_dir: bool) -> bool {
        match self.place_of(path) {
            Place::Outside => true,
            Place::Root => false,
            Place::Entry(parent, name) => self.excluded_by_rules(&parent, name, is_dir),
        }
    }

    /// Where `path` is, for judging it as one entry of its directory.
    fn place_of<'p>(&self, path: &'p Path) -> Place<'p> {
        let Some(names) = self.relative_names(path) else {
            return Place::Outside;
        };
        match names.split_last() {
            None => Place::Root,
            Some((last, parents)) => Place::Entry(parents.iter().collect(), last),
        }
    }

    fn allows(&self, path: &Path, is_dir: bool) -> bool {
        let Some(names) = self.relative_names(path) else {
            return false;
        };
        let Some((last, parents)) = names.split_last() else {
            return is_dir;
        };
        let mut rel = PathBuf::new();
        for name in parents {
            if !self.entry_allowed(&rel, name, true) {
                return false;
            }
            rel.push(name);
        }
        self.entry_allowed(&rel, last, is_dir)
    }

    /// The normal components of `path` below the root; `None` if outside.
    fn relative_names<'p>(&self, path: &'p Path) -> Option<Vec<&'p OsStr>> {
        let rel = path.strip_prefix(&self.root).ok()?;
        rel.components()
            .map(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect()
    }

    /// Whether `name` inside the directory `parent` (relative) is in scope.
    fn entry_allowed(&self, parent: &Path, name: &OsStr, is_dir: bool) -> bool {
        if !self.rules.show_hidden && is_hidden_name(name) {
            return false;
        }
        !self.excluded_by_rules(parent, name, is_dir)
    }

    /// Whether `-x`, the ignore files in effect or being luminos's own
    /// output exclude `name` inside `parent` (relative).
    fn excluded_by_rules(&self, parent: &Path, name: &OsStr, is_dir: bool) -> bool {
        if (is_dir && self.rules.exclude.contains(name)) || self.rules.is_own_output(parent, name) {
            return true;
        }
        if !self.rules.respect_ignore {
            return false;
        }
        let stack = self.stack_for(parent);
        !stack.is_empty() && stack.is_ignored(&self.root.join(parent).join(name), is_dir)
    }

    /// The rules in effect for the entries of `rel`, loading ignore files of
    /// it and its ancestors on first use.
    fn stack_for(&self, rel: &Path) -> RuleStack {
        let mut stacks = self.stacks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(stack) = stacks.get(rel) {
            return stack.clone();
        }
        let parent_stack = match rel.parent() {
            Some(parent) => {
                drop(stacks);
                let stack = self.stack_for(parent);
                stacks = self.stacks.lock().unwrap_or_else(|e| e.into_inner());
                stack
            }
            None => RuleStack::empty(),
        };
        let dir = super::join_rel(&self.root, rel);
        let (stack, _) = parent_stack.enter(&dir, RuleFilesPresent::probe(&dir));
        stacks.insert(rel.to_path_buf(), stack.clone());
        stack
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn options(hidden: bool, exclude: &[&str], ignore: bool) -> ScanOptions {
        ScanOptions {
            depth: 3,
            show_hidden: hidden,
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            respect_ignore: ignore,
            ..ScanOptions::default()
        }
    }

    #[test]
    fn applies_hidden_exclude_and_ignore_rules() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("src/gen")).unwrap();
        fs::create_dir_all(root.join("build")).unwrap();
        fs::create_dir_all(root.join("node_modules/x")).unwrap();
        fs::create_dir_all(root.join(".cache")).unwrap();
        fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        fs::write(root.join("src/.gitignore"), "gen/\n").unwrap();

        let f = ScanFilter::new(root, &options(false, &["node_modules"], true));
        assert!(f.allows_dir(root));
        assert!(f.allows_dir(&root.join("src")));
        assert!(!f.allows_dir(&root.join("src/gen")));
        assert!(!f.allows_dir(&root.join("build")));
        assert!(!f.allows_dir(&root.join("node_modules")));
        assert!(!f.allows_dir(&root.join("node_modules/x")));
        assert!(!f.allows_dir(&root.join(".cache")));
        assert!(!f.allows_file(&root.join("src/app.log")));
        assert!(f.allows_file(&root.join("src/app.rs")));
        assert!(
            f.allows_file(&root.join("node_modules")),
            "-x names only directories"
        );
        assert!(!f.allows_dir(Path::new("/elsewhere")));
        assert!(!f.allows_entry(Path::new("/elsewhere"), true));

        // Inside a directory in scope, judging the last name is the same as
        // judging the whole path.
        for rel in [
            "src",
            "src/gen",
            "build",
            "node_modules",
            ".cache",
            "src/a.rs",
        ] {
            for is_dir in [true, false] {
                let path = root.join(rel);
                let whole = if is_dir {
                    f.allows_dir(&path)
                } else {
                    f.allows_file(&path)
                };
                assert_eq!(f.allows_entry(&path, is_dir), whole, "{rel} {is_dir}");
            }
        }
        assert!(f.allows_entry(root, true));

        let all = ScanFilter::new(root, &options(true, &[], false));
        assert!(all.allows_dir(&root.join("build")));
        assert!(all.allows_dir(&root.join(".cache")));
        assert!(all.allows_dir(&root.join("src/gen")));
    }
}
