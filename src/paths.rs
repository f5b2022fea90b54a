//! Lexical path helpers: the absolute form of the target as the original
//! computes it, and `.`/`..` removal without touching the file system (the
//! cache and the tool sandbox use it too). Nothing here resolves symlinks.

use std::path::{Path, PathBuf};

/// The absolute form of `path` without resolving symlinks, like Python's
/// `os.path.abspath`: joined to the working directory, then `.` and `..`
/// removed lexically.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    normalize_lexically(&joined)
}

/// Remove `.` and `..` components and duplicate separators without touching
/// the file system. `..` at the root stays at the root.
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            Component::Normal(name) => out.push(name),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalization() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c/")),
            PathBuf::from("/a/c")
        );
        assert_eq!(normalize_lexically(Path::new("/../a")), PathBuf::from("/a"));
        assert_eq!(normalize_lexically(Path::new("a/..")), PathBuf::from("."));
    }
}
