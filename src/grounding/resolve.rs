//! Path resolution: where in the tree a cited path is, if anywhere.
//!
//! A citation is tried, in order:
//! 1. against the target (`src/main.rs` as written);
//! 2. against the directory of the entry that cites it (`main.rs` in the
//!    summary of `src`), or without a leading component that is the
//!    target's own name (`app/src/main.rs` for the target `app`);
//! 3. by its name anywhere in scope: a citation whose last components match
//!    exactly one path of the file list (`engine.rs`, `core/engine.rs` for
//!    `src/core/engine.rs`) resolves to it. When several match, the one
//!    under the citing entry's directory wins if it alone is there; otherwise
//!    the citation is [`Resolution::Ambiguous`]: it exists, but it cannot be
//!    rewritten to one path.
//!
//! Steps 1 and 2 look in the file list first, then on disk (see
//! [`super::scope`]). An absolute path outside the target, or a relative one
//! that climbs out of it, is [`Resolution::Outside`]: not a citation of the
//! tree at all, so it is neither counted nor marked.

use super::extract::PathRef;
use super::scope::Scope;

/// Where a cited path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// One path of the tree, target-relative (`.` for the target).
    Found { path: String, dir: bool },
    /// It exists, as this many paths of the tree.
    Ambiguous(usize),
    /// Nothing in the tree fits.
    Missing,
    /// Not a path inside the target.
    Outside,
}

impl Resolution {
    /// Whether the citation names something that exists.
    pub(crate) fn exists(&self) -> bool {
        matches!(self, Resolution::Found { .. } | Resolution::Ambiguous(_))
    }
}

/// Resolve `cited`, written in an entry about the directory `entry_dir`
/// (target-relative, `.` for the target).
pub(crate) fn resolve(scope: &Scope, cited: &PathRef, entry_dir: &str) -> Resolution {
    let candidates: Vec<String> = if cited.absolute {
        match scope
            .relative_to_target(&cited.path)
            .and_then(|rel| normalize(&rel))
        {
            Some(rel) => vec![rel],
            None => return Resolution::Outside,
        }
    } else {
        let mut candidates: Vec<String> = normalize(&cited.path).into_iter().collect();
        // `app/src/x.rs` for the target `app`: written from the directory
        // above, as an agent told the target's name may do.
        if let Some((first, rest)) = cited.path.split_once('/')
            && scope.is_target_name(first)
            && let Some(inside) = normalize(rest)
        {
            candidates.push(inside);
        }
        if entry_dir != "."
            && let Some(joined) = normalize(&format!("{entry_dir}/{}", cited.path))
            && !candidates.contains(&joined)
        {
            candidates.push(joined);
        }
        candidates
    };
    if candidates.is_empty() {
        return Resolution::Outside;
    }
    for candidate in &candidates {
        if let Some(dir) = listed(scope, candidate, cited.dir) {
            return Resolution::Found {
                path: candidate.clone(),
                dir,
            };
        }
    }
    for candidate in &candidates {
        if let Some(dir) = scope.probe(candidate).filter(|&dir| dir || !cited.dir) {
            return Resolution::Found {
                path: candidate.clone(),
                dir,
            };
        }
    }
    if cited.absolute || cited.path.split('/').any(|part| part == "..") {
        return Resolution::Missing;
    }
    by_name(scope, &candidates[0], cited.dir, entry_dir)
}

/// Whether `rel` is in the file list (as a file, or as a directory); `Some`
/// of whether it is a directory.
fn listed(scope: &Scope, rel: &str, want_dir: bool) -> Option<bool> {
    if !want_dir && scope.has_file(rel) {
        return Some(false);
    }
    scope.has_dir(rel).then_some(true)
}

/// Step 3: the paths of the tree whose last components are `rel`.
fn by_name(scope: &Scope, rel: &str, want_dir: bool, entry_dir: &str) -> Resolution {
    let name = super::scope::split_last(rel).1;
    let suffix = format!("/{rel}");
    let fits = |path: &&str| *path == rel || path.ends_with(&suffix);
    let mut matches: Vec<(&str, bool)> = scope
        .dirs_named(name)
        .filter(fits)
        .map(|path| (path, true))
        .collect();
    if !want_dir {
        matches.extend(
            scope
                .files_named(name)
                .filter(fits)
                .map(|path| (path, false)),
        );
    }
    if matches.len() > 1 && entry_dir != "." {
        let below = format!("{entry_dir}/");
        let inside: Vec<(&str, bool)> = matches
            .iter()
            .copied()
            .filter(|(path, _)| path.starts_with(&below))
            .collect();
        if inside.len() == 1 {
            matches = inside;
        }
    }
    match matches.as_slice() {
        [] => Resolution::Missing,
        [(path, dir)] => Resolution::Found {
            path: path.to_string(),
            dir: *dir,
        },
        many => Resolution::Ambiguous(many.len()),
    }
}

/// `a/./b/../c` → `a/c`; `.` for the target; `None` when it climbs out.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grounding::extract::{Cited, extract, path_field};
    use crate::grounding::scope::tests::scope_of;

    fn scope() -> Scope {
        scope_of(&[
            "src/main.rs",
            "src/core/engine.rs",
            "src/core/mod.rs",
            "src/net/mod.rs",
            "README.md",
            "docs/guide.md",
        ])
    }

    /// Resolve the first path `text` cites, written in `entry_dir`.
    fn resolve_in(text: &str, entry_dir: &str) -> Resolution {
        let scope = scope();
        let citations = extract(text, scope.vocabulary());
        let Some(Cited::Path(path)) = citations.first().map(|c| c.cited.clone()) else {
            panic!("no path in {text:?}");
        };
        resolve(&scope, &path, entry_dir)
    }

    fn found(path: &str, dir: bool) -> Resolution {
        Resolution::Found {
            path: path.into(),
            dir,
        }
    }

    #[test]
    fn against_the_target_first() {
        assert_eq!(
            resolve_in("see src/main.rs.", "docs"),
            found("src/main.rs", false)
        );
        assert_eq!(
            resolve_in("`./src/main.rs:3`", "."),
            found("src/main.rs", false)
        );
        assert_eq!(
            resolve_in("src\\core\\engine.rs", "."),
            found("src/core/engine.rs", false)
        );
        assert_eq!(resolve_in("src/core/", "."), found("src/core", true));
    }

    #[test]
    fn then_against_the_citing_entry() {
        assert_eq!(
            resolve_in("core/engine.rs", "src"),
            found("src/core/engine.rs", false)
        );
        assert_eq!(
            resolve_in("../main.rs", "src/core"),
            found("src/main.rs", false)
        );
    }

    #[test]
    fn then_by_a_unique_name() {
        assert_eq!(
            resolve_in("engine.rs", "docs"),
            found("src/core/engine.rs", false)
        );
        assert_eq!(resolve_in("guide.md", "."), found("docs/guide.md", false));
        assert_eq!(
            resolve_in("core/engine.rs", "."),
            found("src/core/engine.rs", false)
        );
    }

    #[test]
    fn a_name_found_twice_exists_but_is_ambiguous() {
        assert_eq!(resolve_in("mod.rs", "."), Resolution::Ambiguous(2));
        assert!(resolve_in("mod.rs", ".").exists());
        assert_eq!(
            resolve_in("mod.rs", "src/net"),
            found("src/net/mod.rs", false)
        );
        assert_eq!(
            resolve_in("net/mod.rs", "."),
            found("src/net/mod.rs", false)
        );
    }

    #[test]
    fn a_path_from_above_the_target_names_its_own_directory() {
        assert_eq!(
            resolve_in("app/src/main.rs", "."),
            found("src/main.rs", false)
        );
        assert_eq!(resolve_in("app/src/gone.rs", "."), Resolution::Missing);
    }

    #[test]
    fn invented_paths_are_missing() {
        assert_eq!(resolve_in("src/turbo.rs", "."), Resolution::Missing);
        assert_eq!(resolve_in("turbo.rs", "src"), Resolution::Missing);
        assert_eq!(resolve_in("docs/engine.rs", "."), Resolution::Missing);
        assert_eq!(
            resolve_in("src/main.rs/", "."),
            Resolution::Missing,
            "not a dir"
        );
    }

    #[test]
    fn paths_outside_the_target_are_not_citations() {
        assert_eq!(resolve_in("/etc/passwd", "."), Resolution::Outside);
        assert_eq!(
            resolve_in("../../elsewhere/x.rs", "src"),
            Resolution::Outside
        );
        assert_eq!(
            resolve_in("/work/app/src/main.rs", "."),
            found("src/main.rs", false)
        );
        assert_eq!(
            resolve_in("/work/app/src/nope.rs", "."),
            Resolution::Missing
        );
    }

    #[test]
    fn a_field_names_the_target_itself() {
        let scope = scope();
        let citation = path_field(".", scope.vocabulary());
        assert!(citation.is_empty(), "`.` alone is no path");
        let citation = path_field("./", scope.vocabulary());
        assert!(citation.is_empty());
    }
}
