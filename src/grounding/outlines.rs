//! [`Outlines`]: the definitions of the source files that matter, read
//! within a fixed budget, so that no tree, however large, makes the report
//! slow.
//!
//! One pass, [`Outlines::search`], done once per report with every name the
//! report's symbols use: each source file of a known language is read, and
//! outlined only if its bytes contain one of the names as a word. A file that
//! never mentions a name cannot define it, so this finds every definition the
//! scope holds while parsing only the files that matter (tree-sitter parsing,
//! not reading, is what costs). Files are read and matched in path order; the
//! chosen ones are parsed on every core.
//!
//! The budget (documented constants below) caps the bytes read, the files
//! parsed and the bytes parsed. Files over [`MAX_FILE_BYTES`] (generated or
//! minified code) are searched but not parsed, as `parse_structure` refuses
//! them; files over [`MAX_SEARCHED_FILE_BYTES`] are data, not code, and are
//! skipped; each parse stops after [`PARSE_BUDGET`]. When the budget runs
//! out, or a file mentioning a name could not be outlined,
//! [`Outlines::incomplete_for`] says so, and a symbol not found by then is
//! counted as unchecked rather than invented.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use regex::bytes::Regex;

use super::definitions::{FileDefs, definitions};
use super::scope::Scope;
use crate::outline::Language;

/// Most source files outlined for one report.
pub(crate) const MAX_OUTLINED_FILES: usize = 2_000;
/// Most source bytes parsed for one report: 16 MiB (a few seconds on one
/// slow core; this repository's own `src/` is about 1.2 MiB).
pub(crate) const MAX_OUTLINED_BYTES: u64 = 16 * 1024 * 1024;
/// Most source bytes read by the search for one report: 128 MiB.
pub(crate) const MAX_SEARCHED_BYTES: u64 = 128 * 1024 * 1024;
/// Files larger than this are not outlined (as `parse_structure`).
pub(crate) const MAX_FILE_BYTES: u64 = crate::outline::MAX_FILE_BYTES;
/// Files larger than this are not even searched.
pub(crate) const MAX_SEARCHED_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// How long one file's parse may take.
pub(crate) const PARSE_BUDGET: Duration = Duration::from_secs(1);
/// Most threads that parse at once.
const MAX_PARSERS: usize = 8;

/// The language of a path, by its extension, when it has a grammar.
pub(crate) fn language_of(path: &str) -> Option<Language> {
    let name = super::scope::split_last(path).1;
    let dot = name.rfind('.')?;
    Language::from_extension(&name[dot + 1..])
}

/// How a file's bytes are fetched: from disk under the target, or (in
/// tests) from memory.
pub(crate) enum Source {
    Disk(PathBuf),
    #[cfg(test)]
    Memory(HashMap<String, Vec<u8>>),
}

impl Source {
    /// The file's bytes, or `None` when it is missing, unreadable or over
    /// [`MAX_SEARCHED_FILE_BYTES`].
    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        match self {
            Source::Disk(root) => {
                let path = root.join(rel);
                let meta = std::fs::metadata(&path).ok()?;
                if !meta.is_file() || meta.len() > MAX_SEARCHED_FILE_BYTES {
                    return None;
                }
                std::fs::read(&path).ok()
            }
            #[cfg(test)]
            Source::Memory(files) => files
                .get(rel)
                .filter(|bytes| bytes.len() as u64 <= MAX_SEARCHED_FILE_BYTES)
                .cloned(),
        }
    }
}

/// The definitions of the scope's source files that mention the names
/// searched for.
pub(crate) struct Outlines<'s> {
    scope: &'s Scope,
    source: Source,
    /// Files outlined, by path.
    files: HashMap<String, FileDefs>,
    outlined_files: usize,
    outlined_bytes: u64,
    searched_bytes: u64,
    /// The budget stopped some work: any name may be in what was skipped.
    exhausted: bool,
    /// Names mentioned in files that could not be outlined.
    unreadable_names: HashSet<String>,
}

impl<'s> Outlines<'s> {
    pub(crate) fn new(scope: &'s Scope, source: Source) -> Outlines<'s> {
        Outlines {
            scope,
            source,
            files: HashMap::new(),
            outlined_files: 0,
            outlined_bytes: 0,
            searched_bytes: 0,
            exhausted: false,
            unreadable_names: HashSet::new(),
        }
    }

    /// Outline every source file of the scope that mentions one of `names`
    /// as a word (see the module doc).
    pub(crate) fn search(&mut self, names: &HashSet<String>) {
        if names.is_empty() {
            return;
        }
        let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        let alternatives: Vec<String> = sorted.iter().map(|n| regex::escape(n)).collect();
        let Ok(pattern) = Regex::new(&format!(r"\b(?:{})\b", alternatives.join("|"))) else {
            self.exhausted = true;
            return;
        };
        let mut chosen: Vec<(String, Language, Vec<u8>)> = Vec::new();
        for rel in self.scope.files() {
            let Some(language) = language_of(rel) else {
                continue;
            };
            if self.files.contains_key(rel.as_str()) {
                continue;
            }
            if self.searched_bytes >= MAX_SEARCHED_BYTES {
                self.exhausted = true;
                break;
            }
            let Some(bytes) = self.source.read(rel) else {
                continue;
            };
            self.searched_bytes += bytes.len() as u64;
            if !pattern.is_match(&bytes) {
                continue;
            }
            if self.admit(bytes.len() as u64) {
                chosen.push((rel.clone(), language, bytes));
            } else {
                self.unreadable_names.extend(mentions(&pattern, &bytes));
            }
        }
        for (rel, outlined) in parse_all(&chosen, &pattern) {
            match outlined {
                Ok(defs) => {
                    self.files.insert(rel, defs);
                }
                Err(names) => self.unreadable_names.extend(names),
            }
        }
    }

    /// Whether a file of `len` bytes may still be parsed, counting it if so.
    fn admit(&mut self, len: u64) -> bool {
        if len > MAX_FILE_BYTES {
            return false;
        }
        if self.outlined_files >= MAX_OUTLINED_FILES
            || self.outlined_bytes + len > MAX_OUTLINED_BYTES
        {
            self.exhausted = true;
            return false;
        }
        self.outlined_files += 1;
        self.outlined_bytes += len;
        true
    }

    /// The definitions of `rel`, if the search outlined it.
    pub(crate) fn defs_of(&self, rel: &str) -> Option<&FileDefs> {
        self.files.get(rel)
    }

    /// Every file outlined, by path.
    pub(crate) fn read_files(&self) -> impl Iterator<Item = (&str, &FileDefs)> {
        self.files.iter().map(|(rel, defs)| (rel.as_str(), defs))
    }

    /// Whether a definition of `name` could have been missed: the budget ran
    /// out, or a file mentioning it could not be outlined.
    pub(crate) fn incomplete_for(&self, name: &str) -> bool {
        self.exhausted || self.unreadable_names.contains(name)
    }

    /// Files parsed so far.
    #[cfg(test)]
    pub(crate) fn outlined_files(&self) -> usize {
        self.outlined_files
    }
}

/// The distinct names of `pattern` that `bytes` mentions.
fn mentions(pattern: &Regex, bytes: &[u8]) -> HashSet<String> {
    pattern
        .find_iter(bytes)
        .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
        .collect()
}

/// Outline `files` on every core (at most [`MAX_PARSERS`]), in their order.
/// A file that could not be parsed in time yields the names it mentions.
fn parse_all(
    files: &[(String, Language, Vec<u8>)],
    pattern: &Regex,
) -> Vec<(String, Result<FileDefs, HashSet<String>>)> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_PARSERS)
        .min(files.len().max(1));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        while let Some((rel, language, bytes)) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
            let outlined =
                definitions(*language, bytes, PARSE_BUDGET).map_err(|_| mentions(pattern, bytes));
            done.push((rel.clone(), outlined));
        }
        done
    };
    let mut results: Vec<(String, Result<FileDefs, HashSet<String>>)> =
        std::thread::scope(|threads| {
            // Every worker is spawned before the first is joined.
            #[allow(
                clippy::needless_collect,
                reason = "joining as they are spawned would run the workers one at a time"
            )]
            let handles: Vec<_> = (0..workers).map(|_| threads.spawn(work)).collect();
            handles
                .into_iter()
                .flat_map(|handle| handle.join().unwrap_or_default())
                .collect()
        });
    results.sort_by(|a, b| a.0.cmp(&b.0));
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(files: &[(&str, &str)]) -> (Scope, HashMap<String, Vec<u8>>) {
        let scope = Scope::new(files.iter().map(|(p, _)| p.to_string()), vec![], None);
        let bytes = files
            .iter()
            .map(|(p, text)| (p.to_string(), text.as_bytes().to_vec()))
            .collect();
        (scope, bytes)
    }

    fn names(list: &[&str]) -> HashSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_search_outlines_only_files_that_mention_a_name() {
        let (scope, bytes) = store(&[
            ("a.rs", "fn alpha() {}"),
            ("b.rs", "fn beta() {}"),
            ("c.py", "def gamma(): pass"),
            ("d.c", "int beta;"),
            ("notes.md", "alpha beta gamma"),
        ]);
        let mut outlines = Outlines::new(&scope, Source::Memory(bytes));
        outlines.search(&names(&["beta", "gamma"]));
        let mut read: Vec<&str> = outlines.read_files().map(|(rel, _)| rel).collect();
        read.sort_unstable();
        assert_eq!(read, ["b.rs", "c.py"]);
        assert_eq!(outlines.outlined_files(), 2);
        assert_eq!(outlines.defs_of("b.rs").unwrap().defs[0].name, "beta");
        assert!(outlines.defs_of("a.rs").is_none());
        assert!(!outlines.incomplete_for("beta"));
    }

    #[test]
    fn a_word_inside_another_is_no_mention() {
        let (scope, bytes) = store(&[("a.rs", "fn alphabet() {}")]);
        let mut outlines = Outlines::new(&scope, Source::Memory(bytes));
        outlines.search(&names(&["alpha"]));
        assert_eq!(outlines.outlined_files(), 0);
    }

    #[test]
    fn the_budget_bounds_the_work_and_says_so() {
        let files: Vec<(String, String)> = (0..MAX_OUTLINED_FILES + 5)
            .map(|i| {
                (
                    format!("f{i:05}.py"),
                    format!("def name{i}(): pass  # common\n"),
                )
            })
            .collect();
        let pairs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let (scope, bytes) = store(&pairs);
        let mut outlines = Outlines::new(&scope, Source::Memory(bytes));
        outlines.search(&names(&["common"]));
        assert_eq!(outlines.outlined_files(), MAX_OUTLINED_FILES);
        assert_eq!(outlines.read_files().count(), MAX_OUTLINED_FILES);
        assert!(outlines.incomplete_for("anything"));
    }

    #[test]
    fn a_file_too_large_to_outline_leaves_its_names_unchecked() {
        let big = format!(
            "def huge(): pass\n{}",
            "#\n".repeat(MAX_FILE_BYTES as usize)
        );
        let (scope, bytes) = store(&[("big.py", big.as_str()), ("ok.py", "def small(): pass")]);
        let mut outlines = Outlines::new(&scope, Source::Memory(bytes));
        outlines.search(&names(&["huge", "small"]));
        // Too large to parse, as parse_structure: what it may define is
        // unknown, so a citation of `huge` is not called invented.
        assert!(outlines.incomplete_for("huge"));
        assert!(!outlines.incomplete_for("small"));
        assert_eq!(outlines.outlined_files(), 1);
    }
}
