//! Ignore rules: what `.gitignore`, `.ignore` and `.git/info/exclude` leave out.
//!
//! The original scanned everything; luminos respects ignore files by default
//! (a deliberate difference, `--no-ignore` restores the old behaviour). Only
//! the matching semantics come from the `ignore` crate (ripgrep's gitignore
//! matcher); which files are read, and where the scope stops, is decided here:
//!
//! - every directory under the target may hold `.gitignore` and `.ignore`;
//!   a directory holding `.git` (a repository root) also contributes its
//!   `info/exclude`;
//! - nothing above the target is read, so a target inside a repository does
//!   not inherit the repository's rules;
//! - precedence is ripgrep's: a `.ignore` match beats a `.gitignore` match,
//!   which beats `info/exclude`; within one kind the deepest directory wins;
//!   `.gitignore` and `info/exclude` rules stop at a nested repository root,
//!   as git's do.
//!
//! Ignore files are opened without blocking and only when they are regular
//! files, so a FIFO named `.gitignore` cannot hang the scan.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::ignore::Match;
use ::ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Ignore files larger than this are not read (nobody writes one by hand).
const MAX_RULE_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Which ignore-related names a directory listing contained, so rules are only
/// loaded where there is something to load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RuleFilesPresent {
    pub gitignore: bool,
    pub dot_ignore: bool,
    /// `.git` as a directory or as a `gitdir:` file.
    pub git: bool,
}

impl RuleFilesPresent {
    /// Note `name` if it is one of the names that carry rules.
    pub(crate) fn note(&mut self, name: &OsStr) {
        match name.as_encoded_bytes() {
            b".gitignore" => self.gitignore = true,
            b".ignore" => self.dot_ignore = true,
            b".git" => self.git = true,
            _ => {}
        }
    }

    /// Look the names up on disk (for callers without a listing).
    pub(crate) fn probe(dir: &Path) -> RuleFilesPresent {
        let exists = |name: &str| dir.join(name).symlink_metadata().is_ok();
        RuleFilesPresent {
            gitignore: exists(".gitignore"),
            dot_ignore: exists(".ignore"),
            git: exists(".git"),
        }
    }

    fn any(self) -> bool {
        self.gitignore || self.dot_ignore || self.git
    }
}

/// The rules one directory contributes.
struct DirRules {
    dot_ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    git_exclude: Option<Gitignore>,
    /// The directory is a repository root: outer `.gitignore` rules stop here.
    has_git: bool,
}

/// The rules in effect inside one directory: its own and its ancestors' up to
/// the target. Cheap to clone and shared between threads.
#[derive(Clone, Default)]
pub(crate) struct RuleStack(Option<Arc<Layer>>);

struct Layer {
    rules: DirRules,
    parent: RuleStack,
}

/// A rule file that was read and held at least one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleFile {
    /// Absolute path of the file.
    pub path: PathBuf,
}

impl RuleStack {
    /// No rules at all.
    pub(crate) fn empty() -> RuleStack {
        RuleStack(None)
    }

    /// The rules for the children of `dir`: these plus whatever `dir` itself
    /// holds. Returns the rule files read (those with at least one rule).
    pub(crate) fn enter(
        &self,
        dir: &Path,
        present: RuleFilesPresent,
    ) -> (RuleStack, Vec<RuleFile>) {
        if !present.any() {
            return (self.clone(), Vec::new());
        }
        let mut read = Vec::new();
        let mut load = |path: PathBuf| {
            let matcher = load_matcher(dir, &path)?;
            read.push(RuleFile { path });
            Some(matcher)
        };
        let dot_ignore = present
            .dot_ignore
            .then(|| load(dir.join(".ignore")))
            .flatten();
        let gitignore = present
            .gitignore
            .then(|| load(dir.join(".gitignore")))
            .flatten();
        let git_exclude = if present.git {
            git_dir(dir).and_then(|git| load(git.join("info").join("exclude")))
        } else {
            None
        };
        let rules = DirRules {
            dot_ignore,
            gitignore,
            git_exclude,
            has_git: present.git,
        };
        let adds_nothing = rules.dot_ignore.is_none()
            && rules.gitignore.is_none()
            && rules.git_exclude.is_none()
            // A bare repository root still fences off the outer .gitignore rules.
            && (!rules.has_git || self.0.is_none());
        if adds_nothing {
            return (self.clone(), read);
        }
        let stack = RuleStack(Some(Arc::new(Layer {
            rules,
            parent: self.clone(),
        })));
        (stack, read)
    }

    /// True when an ignore rule leaves `path` out. `path` must be built on the
    /// same base as the directories given to [`RuleStack::enter`].
    pub(crate) fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let mut m_ignore = Match::None;
        let mut m_git = Match::None;
        let mut m_exclude = Match::None;
        let mut past_repo_root = false;
        let mut layer = self.0.as_deref();
        while let Some(l) = layer {
            if m_ignore.is_none() {
                m_ignore = matched(&l.rules.dot_ignore, path, is_dir);
            }
            if !past_repo_root {
                if m_git.is_none() {
                    m_git = matched(&l.rules.gitignore, path, is_dir);
                }
                if m_exclude.is_none() {
                    m_exclude = matched(&l.rules.git_exclude, path, is_dir);
                }
            }
            past_repo_root |= l.rules.has_git;
            layer = l.parent.0.as_deref();
        }
        m_ignore.or(m_git).or(m_exclude).is_ignore()
    }

    /// True when no rule is in effect.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

fn matched(matcher: &Option<Gitignore>, path: &Path, is_dir: bool) -> Match<()> {
    match matcher {
        Some(m) => m.matched(path, is_dir).map(|_| ()),
        None => Match::None,
    }
}

/// Build a matcher rooted at `dir` from one ignore file; `None` when the file
/// cannot be read or holds no rule.
fn load_matcher(dir: &Path, file: &Path) -> Option<Gitignore> {
    let text = read_small_regular_file(file)?;
    let mut builder = GitignoreBuilder::new(dir);
    for (i, line) in text.lines().enumerate() {
        // git ignores a UTF-8 byte order mark at the start of the file.
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        // An invalid glob drops that line only, as git does.
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    let matcher = builder.build().ok()?;
    (matcher.num_ignores() + matcher.num_whitelists() > 0).then_some(matcher)
}

/// Read a regular file of modest size, never blocking on a FIFO or device.
pub(crate) fn read_small_regular_file(path: &Path) -> Option<String> {
    let file = super::inspect::open_nonblocking(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_RULE_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_RULE_FILE_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The git directory of a repository rooted at `dir`: `.git` itself, or the
/// common directory a `.git` file (worktree, submodule) points to.
fn git_dir(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    let meta = dot_git.metadata().ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    let pointer = read_small_regular_file(&dot_git)?;
    let target = pointer.lines().next()?.strip_prefix("gitdir: ")?.trim();
    let git = dir.join(target);
    // A linked worktree keeps its exclude file in the common directory.
    let git = match read_small_regular_file(&git.join("commondir")) {
        Some(common) => git.join(common.trim()),
        None => git,
    };
    // `worktrees/x/../..` reads better as the directory it names.
    Some(crate::paths::normalize_lexically(&git))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A temp tree holding `files` (`(path, contents)`; a path ending in `/`
    /// is a directory).
    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let path = tmp.path().join(rel);
            if rel.ends_with('/') {
                fs::create_dir_all(&path).unwrap();
            } else {
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(&path, text).unwrap();
            }
        }
        tmp
    }

    fn stack_for(root: &Path, rels: &[&str]) -> RuleStack {
        let mut stack = RuleStack::empty();
        for rel in rels {
            let dir = root.join(rel);
            stack = stack.enter(&dir, RuleFilesPresent::probe(&dir)).0;
        }
        stack
    }

    #[test]
    fn nested_gitignore_negation_overrides_the_parent() {
        let tmp = tree(&[
            (".gitignore", "*.log\nbuild/\n"),
            ("sub/.gitignore", "!keep.log\n"),
        ]);
        let root = tmp.path();
        let top = stack_for(root, &[""]);
        let sub = stack_for(root, &["", "sub"]);
        assert!(top.is_ignored(&root.join("a.log"), false));
        assert!(top.is_ignored(&root.join("build"), true));
        assert!(!top.is_ignored(&root.join("build"), false), "dir-only rule");
        assert!(sub.is_ignored(&root.join("sub/other.log"), false));
        assert!(!sub.is_ignored(&root.join("sub/keep.log"), false));
        assert!(!sub.is_ignored(&root.join("sub/main.rs"), false));
    }

    #[test]
    fn dot_ignore_beats_gitignore_and_exclude_is_read() {
        let tmp = tree(&[
            (".git/info/exclude", "# comment\nsecret.txt\n"),
            (".gitignore", "*.tmp\n"),
            (".ignore", "!wanted.tmp\n"),
        ]);
        let root = tmp.path();
        let (stack, read) = RuleStack::empty().enter(root, RuleFilesPresent::probe(root));
        let mut names: Vec<_> = read
            .iter()
            .map(|f| f.path.strip_prefix(root).unwrap().to_path_buf())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                PathBuf::from(".git/info/exclude"),
                PathBuf::from(".gitignore"),
                PathBuf::from(".ignore")
            ]
        );
        assert!(stack.is_ignored(&root.join("x.tmp"), false));
        assert!(!stack.is_ignored(&root.join("wanted.tmp"), false));
        assert!(stack.is_ignored(&root.join("secret.txt"), false));
    }

    #[test]
    fn outer_gitignore_stops_at_a_nested_repository() {
        let tmp = tree(&[
            ("vendor/.git/", ""),
            (".gitignore", "*.o\n"),
            (".ignore", "*.bak\n"),
        ]);
        let root = tmp.path();
        let inner = stack_for(root, &["", "vendor"]);
        assert!(!inner.is_ignored(&root.join("vendor/x.o"), false));
        // .ignore files are not git's and keep applying.
        assert!(inner.is_ignored(&root.join("vendor/x.bak"), false));
    }

    /// Entering `root` reads no rule file and adds no rule.
    #[track_caller]
    fn assert_no_rules_read(root: &Path) {
        let (stack, read) = RuleStack::empty().enter(root, RuleFilesPresent::probe(root));
        assert!(read.is_empty(), "{read:?}");
        assert!(stack.is_empty());
    }

    #[test]
    fn comment_only_files_are_not_rule_files() {
        let tmp = tree(&[(".gitignore", "# nothing here\n\n")]);
        assert_no_rules_read(tmp.path());
    }

    #[test]
    fn a_fifo_named_gitignore_is_skipped_without_blocking() {
        let tmp = tree(&[]);
        crate::testing::mkfifo(&tmp.path().join(".gitignore"));
        assert_no_rules_read(tmp.path());
    }

    #[test]
    fn a_worktree_git_file_points_at_the_common_exclude() {
        let tmp = tree(&[
            ("main.git/info/exclude", "local.cfg\n"),
            ("main.git/worktrees/wt/commondir", "../..\n"),
            ("wt/", ""),
        ]);
        let root = tmp.path();
        let common = root.join("main.git");
        let wt = root.join("wt");
        fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", common.join("worktrees/wt").display()),
        )
        .unwrap();
        let (stack, _) = RuleStack::empty().enter(&wt, RuleFilesPresent::probe(&wt));
        assert!(stack.is_ignored(&wt.join("local.cfg"), false));
    }
}
