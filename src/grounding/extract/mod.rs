//! Citation extraction: the paths and symbols a piece of model text names.
//!
//! Pure and deterministic: text in, [`Citation`]s out, each with the byte
//! range it occupies so a resolved path can be rewritten in place. Nothing
//! here knows whether a citation exists; [`super::resolve`] and
//! [`super::symbols`] decide that.
//!
//! What counts as a **path**, in prose or inside backticks:
//! - a name with a known file extension (`main.rs`, `src/app.py`), where
//!   "known" is a fixed list plus every extension present in the tree, so
//!   `e.g.`, `v2.0`, `1.2.3` and `3.11` are not paths;
//! - a dotfile (`.env`, `.gitignore`), but not an extension mentioned on its
//!   own (`.rs files`);
//! - anything written `./x` or `../x`, or ending with a separator (`src/`);
//! - a separated path whose first component names a directory of the tree
//!   (`src/ai`), so `and/or` and `application/json` are not paths;
//! - an absolute path (resolution keeps only those inside the target).
//!
//! A name of the tree that has spaces in it (`my notes.txt`) is read whole
//! where the text spells it out (`spaced`).
//!
//! Backslashes are read as separators (`src\main.rs`), a trailing `:line`,
//! `:line:col`, `:a-b` or `#La-Lb` is split off as the line, and sentence
//! punctuation around a path is not part of it. URLs, e-mail addresses,
//! globs, command-line options and Rust paths (`a::b`) are never paths, nor is
//! a `*.js` product name (`Node.js`) unless the tree has such a file.
//!
//! A **symbol** is only ever written as code, in backticks: a qualified name
//! (`Engine::start`), a call (`parse_args()`, `app.run(port)`) or a
//! declaration (`class App`, `fn start`, `func (b *Bucket) Describe()`).
//! A bare identifier in backticks (`config`, `MAX`) is not a citation: it is
//! as likely a variable, a flag or a word.
//!
//! The parts: `tokens` finds code spans and words and knows the punctuation
//! around them; `paths` judges a candidate as a path; `symbol` reads a code
//! span as a symbol; `words` holds the lists they judge by, and `spaced`
//! joins names with spaces in them. This module holds the vocabulary and
//! citation types and the two entry points, [`extract`] and [`path_field`],
//! which decide where prose ends and code begins.

use std::collections::HashSet;
use std::ops::Range;

mod odd;
mod paths;
mod spaced;
mod symbol;
#[cfg(test)]
mod tests;
mod tokens;
mod words;

use paths::{extension, path_in_piece, plausible_extension, prose_paths};
use symbol::symbol_in_code;
use tokens::code_spans;
use words::KNOWN_EXTENSIONS;

// For `spaced`, which reads a spaced name's edges by the same rules.
use paths::split_line_suffix;
use tokens::{is_delimiter, is_trailing_punctuation};

/// What the tree teaches extraction: which extensions, directory names and
/// file names exist, so that `src/ai` is a path in this tree and `and/or`
/// is not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vocabulary {
    extensions: HashSet<String>,
    dir_names: HashSet<String>,
    file_names: HashSet<String>,
    /// Names with spaces, which prose would otherwise split.
    spaced: spaced::SpacedNames,
    /// Paths with characters prose splits or rejects, found literally.
    odd: odd::OddPaths,
}

impl Vocabulary {
    /// The vocabulary of a tree with these file and directory names (names,
    /// not paths).
    pub(crate) fn new<'a>(
        file_names: impl IntoIterator<Item = &'a str>,
        dir_names: impl IntoIterator<Item = &'a str>,
    ) -> Vocabulary {
        let mut vocabulary = Vocabulary {
            extensions: KNOWN_EXTENSIONS.iter().map(|e| e.to_string()).collect(),
            dir_names: dir_names.into_iter().map(str::to_string).collect(),
            file_names: HashSet::new(),
            spaced: spaced::SpacedNames::default(),
            odd: odd::OddPaths::default(),
        };
        for name in &vocabulary.dir_names {
            vocabulary.spaced.add(name);
        }
        for name in file_names {
            vocabulary.spaced.add(name);
            if let Some(ext) = extension(name).filter(|ext| plausible_extension(ext)) {
                vocabulary.extensions.insert(ext.to_ascii_lowercase());
            }
            vocabulary.file_names.insert(name.to_string());
        }
        vocabulary
    }

    /// This vocabulary, also knowing the tree's `paths` (target-relative,
    /// files and directories): those whose names hold characters prose
    /// splits or rejects are found wherever a text spells them out.
    pub(crate) fn with_paths<'a>(mut self, paths: impl IntoIterator<Item = &'a str>) -> Vocabulary {
        self.odd = odd::OddPaths::new(paths);
        self
    }

    fn is_extension(&self, ext: &str) -> bool {
        self.extensions.contains(&ext.to_ascii_lowercase())
    }

    fn is_dir_name(&self, name: &str) -> bool {
        self.dir_names.contains(name)
    }

    fn is_file_name(&self, name: &str) -> bool {
        self.file_names.contains(name)
    }
}

/// One citation and where it sits in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Citation {
    /// Byte range of the path as written (its `./` included, its line
    /// suffix not), or of the whole code span for a symbol.
    pub span: Range<usize>,
    pub cited: Cited,
}

/// What a citation names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Cited {
    Path(PathRef),
    Symbol(SymbolRef),
}

/// A cited path, normalized: `/` separators, no leading `./`, no trailing
/// separator.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PathRef {
    pub path: String,
    /// Written as an absolute path.
    pub absolute: bool,
    /// Written with a trailing separator: a directory.
    pub dir: bool,
    /// The line it was cited at, when a suffix gave one.
    pub line: Option<u32>,
}

impl PathRef {
    /// The reference to `rest` (normalized, without its leading `/`): an
    /// absolute one gets its `/` back.
    pub(crate) fn new(rest: &str, absolute: bool, dir: bool, line: Option<u32>) -> PathRef {
        PathRef {
            path: if absolute {
                format!("/{rest}")
            } else {
                rest.to_string()
            },
            absolute,
            dir,
            line,
        }
    }

    /// The path as the report shows it: `src/`, `main.rs`.
    pub(crate) fn shown(&self) -> String {
        if self.dir {
            format!("{}/", self.path)
        } else {
            self.path.clone()
        }
    }
}

/// A cited symbol.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SymbolRef {
    /// The code span as written.
    pub text: String,
    /// The name's segments, outermost first, without `crate`/`self`-style
    /// roots (`Engine::start` → `[Engine, start]`).
    pub segments: Vec<String>,
}

impl SymbolRef {
    /// The name defined: the last segment.
    pub(crate) fn member(&self) -> &str {
        self.segments.last().map(String::as_str).unwrap_or_default()
    }

    /// The segment before the member, when the name is qualified.
    pub(crate) fn owner(&self) -> Option<&str> {
        let n = self.segments.len();
        (n >= 2).then(|| self.segments[n - 2].as_str())
    }

    /// The first segment.
    pub(crate) fn root(&self) -> &str {
        self.segments
            .first()
            .map(String::as_str)
            .unwrap_or_default()
    }
}

/// Every citation in `text`, in order of appearance: the tree's paths
/// with odd names first (`odd`), then the rest of the text read around
/// them.
pub(crate) fn extract(text: &str, vocabulary: &Vocabulary) -> Vec<Citation> {
    let odd = vocabulary.odd.citations(text);
    if odd.is_empty() {
        return extract_plain(text, vocabulary);
    }
    let spans: Vec<Range<usize>> = odd.iter().map(|c| c.span.clone()).collect();
    let mut citations = extract_plain(&odd::blank(text, &spans), vocabulary);
    citations.extend(odd);
    citations.sort_by_key(|c| c.span.start);
    citations
}

/// [`extract`] of text without odd paths.
fn extract_plain(text: &str, vocabulary: &Vocabulary) -> Vec<Citation> {
    let mut citations = Vec::new();
    let mut prose_from = 0;
    for span in code_spans(text) {
        prose_paths(
            text,
            prose_from..span.outer.start,
            vocabulary,
            &mut citations,
        );
        code_citations(text, span.inner, vocabulary, &mut citations);
        prose_from = span.outer.end;
    }
    prose_paths(text, prose_from..text.len(), vocabulary, &mut citations);
    citations
}

/// The paths a field meant to hold one path names (a flag's `path`, a
/// `notable_files` item). A single word is taken as a path whatever it
/// looks like (`Makefile`, `bin`); `general` and an empty field name none;
/// anything longer is read as prose (`src/app.py (grep output)`).
pub(crate) fn path_field(field: &str, vocabulary: &Vocabulary) -> Vec<Citation> {
    let trimmed = field.trim();
    if trimmed.is_empty() || trimmed.eq_ignore_ascii_case("general") {
        return Vec::new();
    }
    let start = field.len() - field.trim_start().len();
    // A field that is one odd path (`a|b/f.py`, `my notes/x.md:3`).
    if let Some(citation) = vocabulary.odd.citations(field).into_iter().find(|c| {
        let from = if field[start..].starts_with("./") {
            start + 2
        } else {
            start
        };
        let (len, _) = split_line_suffix(trimmed);
        c.span.start == from && c.span.end == start + len
    }) {
        return vec![citation];
    }
    if !trimmed.contains(char::is_whitespace) {
        let word = start..start + trimmed.len();
        if let Some(citation) = path_in_piece(field, word, vocabulary, true) {
            return vec![citation];
        }
        return Vec::new();
    }
    extract(field, vocabulary)
        .into_iter()
        .filter(|c| matches!(c.cited, Cited::Path(_)))
        .collect()
}

/// The citations of one code span: the paths among its words, then the
/// span itself as a symbol when it is written like one.
fn code_citations(
    text: &str,
    inner: Range<usize>,
    vocabulary: &Vocabulary,
    out: &mut Vec<Citation>,
) {
    let before = out.len();
    prose_paths(text, inner.clone(), vocabulary, out);
    let content = &text[inner.clone()];
    // A span that is one path (`main.rs:42`) is not also a symbol.
    let starts_at = inner.start + (content.len() - content.trim_start().len());
    let one_word = !content.trim().contains(char::is_whitespace);
    if one_word && out[before..].iter().any(|c| c.span.start == starts_at) {
        return;
    }
    if let Some(symbol) = symbol_in_code(content) {
        out.push(Citation {
            span: inner,
            cited: Cited::Symbol(symbol),
        });
    }
}
