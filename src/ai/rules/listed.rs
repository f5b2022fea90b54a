//! Where a directory stands in a list of directories: its index, and the
//! listed directories above it. The plan's children-first order
//! ([`super::plan::children_first`]) and the scheduler's dependency graph
//! both ask it, so "a listed directory above this one" means the same in
//! both. Pure: paths and indexes only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The index of each directory of a list.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListedDirs {
    index: HashMap<PathBuf, usize>,
}

impl ListedDirs {
    /// The index of each of `dirs` (the last one, for a directory listed
    /// twice).
    pub(crate) fn new(dirs: &[PathBuf]) -> ListedDirs {
        ListedDirs {
            index: dirs.iter().cloned().zip(0..).collect(),
        }
    }

    /// Where `dir` is listed.
    pub(crate) fn get(&self, dir: &Path) -> Option<usize> {
        self.index.get(dir).copied()
    }

    /// List `dir` at `i`.
    pub(crate) fn insert(&mut self, dir: PathBuf, i: usize) {
        self.index.insert(dir, i);
    }

    /// The indexes of `dir`'s listed proper ancestors, nearest first.
    pub(crate) fn ancestors<'a>(&'a self, dir: &'a Path) -> impl Iterator<Item = usize> + 'a {
        dir.ancestors().skip(1).filter_map(|a| self.get(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_are_the_listed_ones_above_nearest_first() {
        let dirs: Vec<PathBuf> = ["/t", "/t/a/b", "/t/a/b/c/d", "/t/x", "/t/a/bc"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let listed = ListedDirs::new(&dirs);
        let above = |dir: &str| listed.ancestors(Path::new(dir)).collect::<Vec<_>>();
        assert_eq!(above("/t/a/b/c/d"), [1, 0]);
        assert_eq!(above("/t/a/bc"), [0]);
        assert_eq!(above("/t"), Vec::<usize>::new());
        assert_eq!(above("/elsewhere/t/x"), Vec::<usize>::new());
        assert_eq!(listed.get(Path::new("/t/x")), Some(3));
        assert_eq!(listed.get(Path::new("/t/a")), None);
    }
}
