//! [`Outlines`]: the definitions of source files, read lazily and within a
//! fixed budget, so that no tree, however large, makes the report slow.
//!
//! Two ways in:
//! - [`Outlines::outline`] reads one file (the files a citing entry covers);
//! - [`Outlines::search`] is the whole-scope pass, done once per report for
//!   every name still unresolved: each source file of a known language is
//!   read and outlined only if its bytes contain one of the names as a word.
//!   A file that never mentions a name cannot define it, so this finds every
//!   definition the scope holds while parsing only the files that matter.
//!
//! The budget (documented constants below) caps the bytes read, the files
//! parsed and the bytes parsed, across both ways in. Files over
//! [`MAX_FILE_BYTES`] (generated or minified code) are searched but not
//! parsed, as `parse_structure` refuses them; files over
//! [`MAX_SEARCHED_FILE_BYTES`] are data, not code, and are skipped; each parse
//! stops after [`PARSE_BUDGET`]. When the budget runs out, or a file holding a name could
//! not be outlined, [`Outlines::incomplete_for`] says so, and a symbol not
//! found by then is counted as unchecked rather than invented.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use regex::bytes::Regex;

use super::definitions::{FileDefs, definitions};
use super::scope::Scope;
use crate::ai::tools::structure::Language;

/// Most source files outlined for one report.
pub(crate) const MAX_OUTLINED_FILES: usize = 2_000;
/// Most source bytes parsed for one report: 32 MiB.
pub(crate) const MAX_OUTLINED_BYTES: u64 = 32 * 1024 * 1024;
/// Most source bytes read by the whole-scope search for one report: 128 MiB.
pub(crate) const MAX_SEARCHED_BYTES: u64 = 128 * 1024 * 1024;
/// Files larger than this are not outlined (as `parse_structure`).
pub(crate) const MAX_FILE_BYTES: u64 = crate::ai::tools::structure::MAX_FILE_BYTES;
/// Files larger than this are not even searched.
pub(crate) const MAX_SEARCHED_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// How long one file's parse may take.
pub(crate) const PARSE_BUDGET: Duration = Duration::from_secs(1);

/// The language of a path, by its extension, when it has a grammar.
pub(crate) fn language_of(path: &str) -> Option<Language> {
    let name = super::scope::split_last(path).1;
    let dot = name.rfind('.')?;
    Language::from_extension(&name[dot + 1..])
}

/// What the store holds for one file.
#[derive(Debug)]
enum Outlined {
    Read(FileDefs),
    /// Too large, unreadable, not parsed in time, or over the budget.
    Failed,
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

/// The lazily built definitions of the scope's source files.
pub(crate) struct Outlines<'s> {
    scope: &'s Scope,
    source: Source,
    files: HashMap<String, Outlined>,
    outlined_files: usize,
    outlined_bytes: u64,
    searched_bytes: u64,
    /// The budget stopped some work: any name may be in what was skipped.
    exhausted: bool,
    /// Names found in files that could not be outlined.
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

    /// The definitions of `rel`, read on first use; `None` when it has no
    /// grammar or could not be outlined.
    pub(crate) fn outline(&mut self, rel: &str) -> Option<&FileDefs> {
        if !self.files.contains_key(rel) {
            let language = language_of(rel)?;
            let outlined = match self.source.read(rel) {
                Some(bytes) => self.parse(language, &bytes),
                None => Outlined::Failed,
            };
            self.files.insert(rel.to_string(), outlined);
        }
        match self.files.get(rel) {
            Some(Outlined::Read(defs)) => Some(defs),
            _ => None,
        }
    }

    fn parse(&mut self, language: Language, bytes: &[u8]) -> Outlined {
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Outlined::Failed;
        }
        if self.outlined_files >= MAX_OUTLINED_FILES
            || self.outlined_bytes + bytes.len() as u64 > MAX_OUTLINED_BYTES
        {
            self.exhausted = true;
            return Outlined::Failed;
        }
        self.outlined_files += 1;
        self.outlined_bytes += bytes.len() as u64;
        match definitions(language, bytes, PARSE_BUDGET) {
            Ok(defs) => Outlined::Read(defs),
            Err(_) => Outlined::Failed,
        }
    }

    /// The whole-scope pass: outline every source file of the scope that
    /// mentions one of `names` as a word (see the module doc).
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
        let scope = self.scope;
        for rel in scope.files() {
            if self.files.contains_key(rel.as_str()) {
                continue;
            }
            let Some(language) = language_of(rel) else {
                continue;
            };
            if self.searched_bytes >= MAX_SEARCHED_BYTES {
                self.exhausted = true;
                return;
            }
            let Some(bytes) = self.source.read(rel) else {
                continue;
            };
            self.searched_bytes += bytes.len() as u64;
            let mentioned: HashSet<&[u8]> =
                pattern.find_iter(&bytes).map(|m| m.as_bytes()).collect();
            if mentioned.is_empty() {
                continue;
            }
            let outlined = self.parse(language, &bytes);
            if matches!(outlined, Outlined::Failed) {
                self.unreadable_names.extend(
                    mentioned
                        .iter()
                        .map(|name| String::from_utf8_lossy(name).into_owned()),
                );
            }
            self.files.insert(rel.clone(), outlined);
        }
    }

    /// Every file outlined so far, by path.
    pub(crate) fn read_files(&self) -> impl Iterator<Item = (&str, &FileDefs)> {
        self.files
            .iter()
            .filter_map(|(rel, outlined)| match outlined {
                Outlined::Read(defs) => Some((rel.as_str(), defs)),
                Outlined::Failed => None,
            })
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

    #[test]
    fn the_search_outlines_only_files_that_mention_a_name() {
        let (scope, bytes) = store(&[
            ("a.rs", "fn alpha() {}"),
            ("b.rs", "fn beta() {}"),
            ("c.py", "def gamma(): pass"),
            ("notes.md", "alpha beta gamma"),
        ]);
        let mut outlines = Outlines::new(&scope, Source::Memory(bytes));
        outlines.search(&HashSet::from(["beta".to_string(), "gamma".to_string()]));
        let mut read: Vec<&str> = outlines.read_files().map(|(rel, _)| rel).collect();
        read.sort_unstable();
        assert_eq!(read, ["b.rs", "c.py"]);
        assert_eq!(outlines.outlined_files(), 2);
        assert!(!outlines.incomplete_for("beta"));
    }

    #[test]
    fn a_word_inside_another_is_no_mention() {
        let (scope, bytes) = store(&[("a.rs", "fn alphabet() {}")]);
        let mut outlines = Outlines::new(&scope, Source::Memory(bytes));
        outlines.search(&HashSet::from(["alpha".to_string()]));
        assert_eq!(outlines.outlined_files(), 0);
    }

    #[test]
    fn outlines_are_read_once_and_only_for_known_languages() {
        let (scope, bytes) = store(&[("a.rs", "fn alpha() {}"), ("a.c", "int alpha;")]);
        let mut outlines = Outlines::new(&scope, Source::Memory(bytes));
        assert_eq!(outlines.outline("a.rs").unwrap().defs[0].name, "alpha");
        assert!(outlines.outline("a.rs").is_some());
        assert!(outlines.outline("a.c").is_none());
        assert!(outlines.outline("missing.rs").is_none());
        assert_eq!(outlines.outlined_files(), 1);
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
        outlines.search(&HashSet::from(["common".to_string()]));
        assert_eq!(outlines.outlined_files(), MAX_OUTLINED_FILES);
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
        outlines.search(&HashSet::from(["huge".to_string(), "small".to_string()]));
        // Too large to parse, as parse_structure: what it may define is
        // unknown, so a citation of `huge` is not called invented.
        assert!(outlines.incomplete_for("huge"));
        assert!(!outlines.incomplete_for("small"));
        assert_eq!(outlines.outlined_files(), 1);
    }
}
