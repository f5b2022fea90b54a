//! Path extraction: which words of prose (or of a code span) cite a path,
//! by the rules in the module docs of [`super`]. Candidates are trimmed of
//! emphasis and sentence punctuation, a line suffix is split off, and what
//! is left is normalized and judged against the tree's [`Vocabulary`].
//! Whether the path exists is not decided here.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::tokens::{is_delimiter, is_trailing_punctuation, words};
use super::words::{DOMAINS, DOTFILES, JS_PRODUCTS};
use super::{Citation, Cited, PathRef, Vocabulary};

/// The paths in a stretch of prose (or in the words of a code span).
pub(super) fn prose_paths(
    text: &str,
    range: Range<usize>,
    vocabulary: &Vocabulary,
    out: &mut Vec<Citation>,
) {
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

/// The path `piece` of `text` cites, if it is one. `lenient` takes any
/// well-formed path (a field meant to hold one); otherwise the rules of the
/// module doc decide.
pub(super) fn path_in_piece(
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
static LINE_SUFFIX: LazyLock<Regex> =
    LazyLock::new(|| crate::text::constant_regex(r"(?::(\d+)(?:[-:]\d+)?|#L(\d+)(?:-L?\d+)?)$"));

/// Split a line suffix off `written`: the length of the path before it, and
/// the (first) line it names.
pub(super) fn split_line_suffix(written: &str) -> (usize, Option<u32>) {
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
    is_path.then(|| PathRef::new(rest, absolute, dir, None))
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
pub(super) fn extension(name: &str) -> Option<&str> {
    let dot = name.rfind('.')?;
    (dot > 0 && dot + 1 < name.len()).then(|| &name[dot + 1..])
}

/// Extensions start with a letter and are short (`rs`, `json5`, `woff2`;
/// not `0` in `v2.0` nor `11` in `3.11`).
pub(super) fn plausible_extension(ext: &str) -> bool {
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
