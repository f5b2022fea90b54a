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

use std::collections::HashSet;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

mod spaced;
#[cfg(test)]
mod tests;
mod words;

use words::{
    DECLARATION_KEYWORDS, DOMAINS, DOTFILES, JS_PRODUCTS, KNOWN_EXTENSIONS, MODIFIERS,
    RELATIVE_ROOTS,
};

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

/// Every citation in `text`, in order of appearance.
pub(crate) fn extract(text: &str, vocabulary: &Vocabulary) -> Vec<Citation> {
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
    if !trimmed.contains(char::is_whitespace) {
        let start = field.len() - field.trim_start().len();
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

/// A code span: the backticks included (`outer`) and the text between them.
struct CodeSpan {
    outer: Range<usize>,
    inner: Range<usize>,
}

/// Code spans as Markdown reads them: a run of N backticks up to the next
/// run of exactly N. An unmatched run is literal text.
fn code_spans(text: &str) -> Vec<CodeSpan> {
    let bytes = text.as_bytes();
    let run_at = |at: usize| bytes[at..].iter().take_while(|&&b| b == b'`').count();
    let mut spans = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'`' {
            at += 1;
            continue;
        }
        let open = run_at(at);
        let mut probe = at + open;
        let mut close = None;
        while probe < bytes.len() {
            if bytes[probe] == b'`' {
                let run = run_at(probe);
                if run == open {
                    close = Some(probe);
                    break;
                }
                probe += run;
            } else {
                probe += 1;
            }
        }
        match close {
            Some(close) => {
                spans.push(CodeSpan {
                    outer: at..close + open,
                    inner: at + open..close,
                });
                at = close + open;
            }
            None => at += open,
        }
    }
    spans
}

/// Characters that separate candidate paths inside one word.
fn is_delimiter(c: char) -> bool {
    matches!(
        c,
        '(' | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | '<'
            | '>'
            | '"'
            | '\''
            | '|'
            | ','
            | ';'
            | '`'
            | '“'
            | '”'
            | '‘'
            | '’'
            | '«'
            | '»'
    )
}

/// Punctuation that may end a sentence or a clause after a path.
fn is_trailing_punctuation(c: char) -> bool {
    matches!(c, '.' | ',' | ':' | ';' | '!' | '?' | '*' | '…')
}

/// The words of `range` (split on whitespace), as byte ranges of `text`.
fn words(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut words = Vec::new();
    let mut start = None;
    for (offset, c) in text[range.clone()].char_indices() {
        let at = range.start + offset;
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                words.push(s..at);
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push(s..range.end);
    }
    words
}

/// The paths in a stretch of prose (or in the words of a code span).
fn prose_paths(text: &str, range: Range<usize>, vocabulary: &Vocabulary, out: &mut Vec<Citation>) {
    let floor = range.start;
    for word in words(text, range) {
        // A name of the tree with spaces in it replaces what its first
        // words were read as.
        if let Some(citation) = vocabulary.spaced.citation_at(text, floor, word.clone()) {
            while out
                .last()
                .is_some_and(|c| c.span.start >= citation.span.start)
            {
                out.pop();
            }
            out.push(citation);
            continue;
        }
        let raw = &text[word.clone()];
        // A URL or an e-mail address is one thing, whatever it contains.
        if raw.contains("://") || raw.contains('@') || raw.starts_with("www.") {
            continue;
        }
        let mut start = word.start;
        for (offset, c) in raw.char_indices() {
            if is_delimiter(c) {
                let piece = start..word.start + offset;
                out.extend(path_in_piece(text, piece, vocabulary, false));
                start = word.start + offset + c.len_utf8();
            }
        }
        out.extend(path_in_piece(text, start..word.end, vocabulary, false));
    }
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

/// The path `piece` of `text` cites, if it is one. `lenient` takes any
/// well-formed path (a field meant to hold one); otherwise the rules of the
/// module doc decide.
fn path_in_piece(
    text: &str,
    piece: Range<usize>,
    vocabulary: &Vocabulary,
    lenient: bool,
) -> Option<Citation> {
    let mut start = piece.start;
    let mut end = piece.end;
    // Emphasis and quoting marks around a path are not part of it.
    while start < end
        && text[start..end].starts_with(['*', '_'])
        && !text[start..end].starts_with("__")
    {
        start += 1;
    }
    while let Some(c) = text[start..end].chars().next_back() {
        if is_trailing_punctuation(c) {
            end -= c.len_utf8();
        } else {
            break;
        }
    }
    let (path_end, line) = split_line_suffix(&text[start..end]);
    let end = start + path_end;
    let written = &text[start..end];
    let path = parse_path(written, vocabulary, lenient)?;
    Some(Citation {
        span: start..end,
        cited: Cited::Path(PathRef { line, ..path }),
    })
}

/// `:12`, `:12:5`, `:12-20`, `#L12` or `#L12-L20` at the end of a path.
static LINE_SUFFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?::(\d+)(?:[-:]\d+)?|#L(\d+)(?:-L?\d+)?)$")
        .expect("the line suffix pattern is valid")
});

/// Split a line suffix off `written`: the length of the path before it, and
/// the (first) line it names.
fn split_line_suffix(written: &str) -> (usize, Option<u32>) {
    match LINE_SUFFIX.captures(written) {
        Some(found) => {
            let suffix = found.get(0).map_or(0..0, |m| m.range());
            if suffix.start == 0 {
                return (written.len(), None);
            }
            let line = found
                .get(1)
                .or_else(|| found.get(2))
                .and_then(|m| m.as_str().parse().ok());
            (suffix.start, line)
        }
        None => (written.len(), None),
    }
}

/// Normalize and judge one candidate path (see the module doc).
fn parse_path(written: &str, vocabulary: &Vocabulary, lenient: bool) -> Option<PathRef> {
    if written.is_empty()
        || written.starts_with(['-', '~', '$', '#'])
        || written.contains("::")
        || written.contains("...")
        || written.contains('…')
        || written.contains(['*', '?', '=', '%', '&', '!', '^', '\0'])
        || is_drive_path(written)
        || is_version(written)
    {
        return None;
    }
    let normalized = written.replace('\\', "/");
    if normalized.starts_with("//") {
        return None;
    }
    let absolute = normalized.starts_with('/');
    let mut rest = normalized.trim_start_matches('/');
    let mut explicit = false;
    while let Some(after) = rest.strip_prefix("./") {
        rest = after;
        explicit = true;
    }
    explicit |= rest.starts_with("../");
    let dir = rest.ends_with('/');
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest == "." {
        return None;
    }
    let segments: Vec<&str> = rest.split('/').collect();
    if !segments.iter().all(|s| valid_segment(s)) {
        return None;
    }
    let last = segments[segments.len() - 1];
    let separated = segments.len() > 1 || absolute;
    let first = segments[0];
    let looks_like_host = separated
        && !absolute
        && extension(first).is_some_and(|tld| DOMAINS.contains(&tld))
        && !vocabulary.is_dir_name(first);
    if looks_like_host {
        return None;
    }
    let is_path = lenient
        || absolute
        || explicit
        || dir
        || names_a_file(last, separated, vocabulary)
        || (separated && (vocabulary.is_dir_name(first) || first == ".."));
    is_path.then(|| PathRef {
        path: if absolute {
            format!("/{rest}")
        } else {
            rest.to_string()
        },
        absolute,
        dir,
        line: None,
    })
}

/// Whether the last component reads as a file name: a known extension, or
/// a dotfile that is not an extension mentioned on its own.
fn names_a_file(last: &str, separated: bool, vocabulary: &Vocabulary) -> bool {
    if let Some(name) = last.strip_prefix('.') {
        let dotfile = name.len() >= 2
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && !name.starts_with('.');
        return dotfile
            && (separated
                || DOTFILES.contains(&name)
                || !vocabulary.is_extension(name)
                || vocabulary.is_file_name(last));
    }
    let Some(ext) = extension(last) else {
        return false;
    };
    let stem = &last[..last.len() - ext.len() - 1];
    if !plausible_extension(ext)
        || !vocabulary.is_extension(ext)
        || !stem.chars().any(char::is_alphanumeric)
    {
        return false;
    }
    let product =
        ext.eq_ignore_ascii_case("js") && JS_PRODUCTS.contains(&stem.to_ascii_lowercase().as_str());
    !product || vocabulary.is_file_name(last)
}

/// The text after the last dot of a name that does not start with one.
fn extension(name: &str) -> Option<&str> {
    let dot = name.rfind('.')?;
    (dot > 0 && dot + 1 < name.len()).then(|| &name[dot + 1..])
}

/// Extensions start with a letter and are short (`rs`, `json5`, `woff2`;
/// not `0` in `v2.0` nor `11` in `3.11`).
fn plausible_extension(ext: &str) -> bool {
    ext.len() <= 10
        && ext.starts_with(|c: char| c.is_ascii_alphabetic())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
}

/// A path component: letters, digits and `_-.+~`, not empty.
fn valid_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '~'))
}

/// `C:\x` or `C:/x`: a Windows absolute path, never inside the target.
fn is_drive_path(written: &str) -> bool {
    let bytes = written.as_bytes();
    bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/')
}

/// `1.2.3`, `v2.0`, `2.0.0-rc1`: a version, not a path.
fn is_version(written: &str) -> bool {
    let body = written.strip_prefix(['v', 'V']).unwrap_or(written);
    let core = body.split(['-', '+']).next().unwrap_or(body);
    core.contains('.')
        && core
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
}

/// The symbol a code span names, if it is written like one (see the module
/// doc): a declaration, a call or a `::`-qualified name.
fn symbol_in_code(content: &str) -> Option<SymbolRef> {
    let mut rest = content.trim().trim_end_matches(';').trim_end();
    while let Some(modifier) = MODIFIERS.iter().find(|m| {
        rest.strip_prefix(**m)
            .is_some_and(|after| after.starts_with(char::is_whitespace))
    }) {
        rest = rest[modifier.len()..].trim_start();
    }
    let keyword = DECLARATION_KEYWORDS.iter().find(|k| {
        rest.strip_prefix(**k)
            .is_some_and(|after| after.starts_with(char::is_whitespace))
    });
    let mut receiver = None;
    if let Some(keyword) = keyword {
        rest = rest[keyword.len()..].trim_start();
        // Go: `func (b *Bucket) Describe()`.
        if *keyword == "func" && rest.starts_with('(') {
            let close = rest.find(')')?;
            receiver = rest[1..close]
                .split(|c: char| !is_identifier_char(c))
                .rfind(|word| !word.is_empty())
                .map(str::to_string);
            rest = rest[close + 1..].trim_start();
        }
    }
    let name_len = rest
        .char_indices()
        .find(|&(_, c)| !(is_identifier_char(c) || c == ':' || c == '.'))
        .map_or(rest.len(), |(at, _)| at);
    let name = &rest[..name_len];
    let tail = rest[name_len..].trim_start();
    let call = tail.starts_with('(') && tail.contains(')');
    if keyword.is_none() && !(tail.is_empty() || call) {
        return None;
    }
    let mut segments = split_qualified(name)?;
    if keyword.is_none() && !call && !name.contains("::") {
        return None;
    }
    if let Some(receiver) = receiver {
        segments.insert(0, receiver);
    }
    while segments.len() > 1 && RELATIVE_ROOTS.contains(&segments[0].as_str()) {
        segments.remove(0);
    }
    if RELATIVE_ROOTS.contains(&segments[0].as_str()) {
        return None;
    }
    Some(SymbolRef {
        text: content.trim().to_string(),
        segments,
    })
}

/// `a::b.c` → `[a, b, c]`, each an identifier; `None` when malformed.
fn split_qualified(name: &str) -> Option<Vec<String>> {
    let segments: Vec<String> = name
        .split("::")
        .flat_map(|part| part.split('.'))
        .map(str::to_string)
        .collect();
    let well_formed = segments.iter().all(|s| {
        s.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$')
            && s.chars().all(is_identifier_char)
    });
    well_formed.then_some(segments)
}

fn is_identifier_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}
