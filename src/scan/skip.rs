//! The directories no model is sent into: the built-in skip list (the
//! original's names of tool caches, dependencies and build output, plus
//! `target`, cargo's build output) and any directory that marks itself as
//! a cache or build output with a `CACHEDIR.TAG` file (the Cache Directory
//! Tagging Specification, bford.info/cachedir: cargo, pip, restic and
//! others write one). `--include NAME` takes a name back from both rules.
//!
//! The scan still counts what they hold (file types, lines, disk usage),
//! as the original did for its skip list; the walk marks each skipped
//! directory ([`Skipped`]), discovery leaves it and everything below it
//! out of the investigation, and the terminal report's tree shows it as
//! one marked line instead of its contents.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::walk::{Kind, Listing};

/// Directory names never investigated: the original's list, and `target`.
pub(crate) const SKIP_DIRS: &[&str] = &[
    ".git",
    "__pycache__",
    "node_modules",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".venv",
    "venv",
    ".env",
    "dist",
    "build",
    "target",
    ".eggs",
    ".svn",
    ".hg",
];

/// Directory-name suffixes never investigated.
pub(crate) const SKIP_SUFFIXES: &[&str] = &[".egg-info"];

/// The file a cache or build directory holds to say it is one.
pub(crate) const CACHEDIR_TAG: &str = "CACHEDIR.TAG";

/// How a `CACHEDIR.TAG` file must begin (the specification's header, which
/// tools check so a file of that name that says something else is not
/// taken for a tag).
const SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// Why a directory is not investigated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Skipped {
    /// Its name is on the built-in skip list.
    #[serde(rename = "skip list")]
    ByName,
    /// It holds a `CACHEDIR.TAG` file.
    #[serde(rename = "CACHEDIR.TAG")]
    CacheDirTag,
}

impl Skipped {
    /// What the terminal report's tree says of it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Skipped::ByName => "skipped: on the skip list",
            Skipped::CacheDirTag => "skipped: holds CACHEDIR.TAG",
        }
    }
}

/// Whether the skip list names `name` (a name or suffix on it).
pub(crate) fn is_skipped_name(name: &str) -> bool {
    SKIP_DIRS.contains(&name) || SKIP_SUFFIXES.iter().any(|suffix| name.ends_with(suffix))
}

/// Why the directory `dir`, named `name` and listed as `listing` (when it
/// could be), is skipped, unless `include` takes its name back. The target
/// itself is never skipped: the caller does not ask for it.
pub(crate) fn skip_reason(
    dir: &Path,
    name: &OsStr,
    listing: Option<&Listing>,
    include: &HashSet<OsString>,
) -> Option<Skipped> {
    if include.contains(name) {
        return None;
    }
    if is_skipped_name(&name.to_string_lossy()) {
        return Some(Skipped::ByName);
    }
    listing
        .is_some_and(|listing| holds_tag(dir, listing))
        .then_some(Skipped::CacheDirTag)
}

/// Whether `listing` (of `dir`) has a regular file `CACHEDIR.TAG` that
/// begins with the signature: one small read, only in a directory that
/// has a file of that name.
fn holds_tag(dir: &Path, listing: &Listing) -> bool {
    let present = listing
        .entries
        .iter()
        .any(|entry| entry.kind == Kind::File && entry.name == CACHEDIR_TAG);
    present && starts_with_signature(&dir.join(CACHEDIR_TAG))
}

fn starts_with_signature(file: &Path) -> bool {
    let mut head = [0u8; SIGNATURE.len()];
    std::fs::File::open(file)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == SIGNATURE)
}

/// The `--help` text of `--include`, naming the list from its one constant.
pub(crate) fn include_help() -> String {
    format!(
        "Investigate directories named NAME although the built-in skip list, or a \
         CACHEDIR.TAG file in them, would skip them (repeatable). The list: {}, and names \
         ending in {}",
        SKIP_DIRS.join(", "),
        SKIP_SUFFIXES.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_names() {
        for name in [
            ".git",
            "__pycache__",
            "node_modules",
            "dist",
            "target",
            "luminos.egg-info",
            "foo.egg-info",
        ] {
            assert!(is_skipped_name(name), "{name}");
        }
        for name in ["src", "tests", "egg-info", "", "distro", "targets"] {
            assert!(!is_skipped_name(name), "{name}");
        }
    }

    fn listing_of(dir: &Path) -> Listing {
        super::super::walk::list_dir(
            &super::super::walk::WalkRules::new(&super::super::ScanOptions::default()),
            dir,
            &super::super::ignore_files::RuleStack::empty(),
            true,
            &mut Vec::new(),
            &mut super::super::walk::IgnoredCount::default(),
        )
    }

    /// A tag is a file of that name that begins with the signature; a file
    /// that says something else, or a directory of that name, is not one;
    /// `--include` takes a name back from both rules.
    #[test]
    fn a_cachedir_tag_marks_a_directory_when_it_is_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = |name: &str| {
            let path = tmp.path().join(name);
            std::fs::create_dir_all(&path).unwrap();
            path
        };
        let (tagged, fake, dir_named, plain) = (dir("out"), dir("fake"), dir("odd"), dir("src"));
        std::fs::write(
            tagged.join(CACHEDIR_TAG),
            "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag.\n",
        )
        .unwrap();
        std::fs::write(fake.join(CACHEDIR_TAG), "not a tag\n").unwrap();
        std::fs::create_dir(dir_named.join(CACHEDIR_TAG)).unwrap();
        let none = HashSet::new();
        let reason = |path: &Path, include: &HashSet<OsString>| {
            skip_reason(
                path,
                path.file_name().unwrap(),
                Some(&listing_of(path)),
                include,
            )
        };
        assert_eq!(reason(&tagged, &none), Some(Skipped::CacheDirTag));
        assert_eq!(reason(&fake, &none), None);
        assert_eq!(reason(&dir_named, &none), None);
        assert_eq!(reason(&plain, &none), None);
        let target = dir("target");
        assert_eq!(reason(&target, &none), Some(Skipped::ByName));
        let include: HashSet<OsString> = ["target", "out"].map(OsString::from).into();
        assert_eq!(reason(&target, &include), None);
        assert_eq!(reason(&tagged, &include), None);
    }
}
