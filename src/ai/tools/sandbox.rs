//! The sandbox boundary: every path the model names is resolved here before
//! any tool touches it.
//!
//! A path is accepted only when, after joining it to the target (if relative)
//! and resolving every symlink, it is the target or lies below it. Anything
//! else — `..` escapes, absolute paths elsewhere, symlinks pointing out, paths
//! that do not exist — is refused with a message the model can read.
//!
//! The target itself is canonical (see [`crate::config::Config::target_canonical`]),
//! so the comparison is component-wise on canonical paths and cannot be fooled
//! by `/srv/app` vs `/srv/app-evil` prefixes.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxError {
    /// The path resolves outside the target.
    Outside { shown: String },
    /// The path does not exist (or a component is not readable).
    Missing { shown: String },
    /// The path was empty or contained a NUL byte.
    Invalid { shown: String },
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxError::Outside { shown } => {
                write!(f, "Error: path '{shown}' is outside the target directory.")
            }
            SandboxError::Missing { shown } => write!(f, "Error: path '{shown}' does not exist."),
            SandboxError::Invalid { shown } => write!(f, "Error: '{shown}' is not a valid path."),
        }
    }
}

impl std::error::Error for SandboxError {}

/// Resolve `raw` (absolute, or relative to the target) to a canonical path
/// inside `target`. `target` must already be canonical.
pub(crate) fn resolve(target: &Path, raw: &str) -> Result<PathBuf, SandboxError> {
    let shown = raw.to_string();
    if raw.is_empty() || raw.contains('\0') {
        return Err(SandboxError::Invalid { shown });
    }
    let joined = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        target.join(raw)
    };
    let real = std::fs::canonicalize(&joined).map_err(|_| {
        // Say "outside" rather than "missing" when the lexical path already
        // leaves the target, so probing for files outside learns nothing.
        if is_within(target, &crate::paths::normalize_lexically(&joined)) {
            SandboxError::Missing {
                shown: shown.clone(),
            }
        } else {
            SandboxError::Outside {
                shown: shown.clone(),
            }
        }
    })?;
    if is_within(target, &real) {
        Ok(real)
    } else {
        Err(SandboxError::Outside { shown })
    }
}

/// Whether `path` is `root` or below it, compared component by component.
pub(crate) fn is_within(root: &Path, path: &Path) -> bool {
    path.starts_with(root)
}

/// `path` relative to `target` for display (`.` for the target itself).
pub(crate) fn relative_display(target: &Path, path: &Path) -> String {
    match path.strip_prefix(target) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("app");
        std::fs::create_dir_all(target.join("src")).unwrap();
        std::fs::write(target.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::create_dir_all(dir.path().join("app-evil")).unwrap();
        std::fs::write(dir.path().join("app-evil/secret"), "x").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "x").unwrap();
        symlink(dir.path().join("outside.txt"), target.join("link-out")).unwrap();
        symlink(target.join("src/main.rs"), target.join("link-in")).unwrap();
        let target = std::fs::canonicalize(target).unwrap();
        (dir, target)
    }

    #[test]
    fn inside_paths_resolve() {
        let (_d, t) = tree();
        assert_eq!(resolve(&t, "src/main.rs").unwrap(), t.join("src/main.rs"));
        assert_eq!(resolve(&t, ".").unwrap(), t);
        assert_eq!(
            resolve(&t, "src/../src/main.rs").unwrap(),
            t.join("src/main.rs")
        );
        let abs = t.join("src/main.rs");
        assert_eq!(resolve(&t, abs.to_str().unwrap()).unwrap(), abs);
        assert_eq!(resolve(&t, "link-in").unwrap(), t.join("src/main.rs"));
    }

    #[test]
    fn escapes_are_refused() {
        let (_d, t) = tree();
        for raw in [
            "..",
            "../outside.txt",
            "/etc/passwd",
            "link-out",
            "../app-evil/secret",
            "src/../../outside.txt",
        ] {
            let err = resolve(&t, raw).unwrap_err();
            assert!(
                matches!(err, SandboxError::Outside { .. }),
                "{raw}: {err:?}"
            );
        }
        let sibling = t.parent().unwrap().join("app-evil/secret");
        assert!(resolve(&t, sibling.to_str().unwrap()).is_err());
    }

    #[test]
    fn missing_and_invalid_paths() {
        let (_d, t) = tree();
        assert!(matches!(
            resolve(&t, "nope.txt"),
            Err(SandboxError::Missing { .. })
        ));
        assert!(matches!(
            resolve(&t, "../nope.txt"),
            Err(SandboxError::Outside { .. })
        ));
        assert!(matches!(resolve(&t, ""), Err(SandboxError::Invalid { .. })));
        assert!(matches!(
            resolve(&t, "a\0b"),
            Err(SandboxError::Invalid { .. })
        ));
    }

    #[test]
    fn relative_display_of_the_root_is_dot() {
        let (_d, t) = tree();
        assert_eq!(relative_display(&t, &t), ".");
        assert_eq!(relative_display(&t, &t.join("src")), "src");
    }
}
