//! Paths whose names hold characters prose splits or rejects: `a|b/f.py`,
//! `` core`x`/f.py ``, `end]-->B/f.py`, `it's "quoted"/f.py`, `«café»/f.py`.
//!
//! Extraction reads a path as words of letters, digits and `_-.+~`, split
//! at punctuation (`|`, `]`, quotes, backticks start and end code spans),
//! so such a name was read as pieces that name nothing, and a flag on a
//! file that exists was marked "not found" and shown as `info`. The tree
//! says which paths have such names, so they are found first, literally,
//! wherever the text spells one out (each path with an odd component, and
//! each of its tails from a component on, so `end]-->B/f.py` is found
//! inside `docs/end]-->B/f.py` too); the rest of the text is then read as
//! before, with those stretches left out. Only names the tree has are read
//! this way: any other punctuation stays prose.

use std::ops::Range;

use aho_corasick::{AhoCorasick, MatchKind};

use super::paths::split_line_suffix;
use super::{Citation, Cited, PathRef};

/// Patterns at most: a tree with this many tails of odd paths is read with
/// the first of them (deep trees under one odd directory).
const MOST_PATTERNS: usize = 100_000;

/// The tree's paths that hold a character a path word cannot.
#[derive(Debug, Clone, Default)]
pub(super) struct OddPaths {
    finder: Option<AhoCorasick>,
}

/// Whether prose would read `c` as part of a path word.
fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '~')
}

impl OddPaths {
    /// The odd paths among `paths` (target-relative, `/`-separated) and
    /// their tails from an odd component on.
    pub(super) fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> OddPaths {
        let mut patterns: Vec<String> = Vec::new();
        for path in paths {
            let components: Vec<&str> = path.split('/').collect();
            let Some(last_odd) = components
                .iter()
                .rposition(|c| !c.chars().all(is_path_char))
            else {
                continue;
            };
            for start in 0..=last_odd {
                patterns.push(components[start..].join("/"));
            }
            if patterns.len() >= MOST_PATTERNS {
                break;
            }
        }
        patterns.sort_unstable();
        patterns.dedup();
        let finder = (!patterns.is_empty())
            .then(|| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&patterns)
                    .ok()
            })
            .flatten();
        OddPaths { finder }
    }

    /// The citations of odd paths in `text`, in order, apart. A match
    /// must not be the middle of a longer word or path, runs on over the
    /// path below it (`a|b/` then `g.py`), and has its line suffix split
    /// off.
    pub(super) fn citations(&self, text: &str) -> Vec<Citation> {
        let Some(finder) = &self.finder else {
            return Vec::new();
        };
        let mut out: Vec<Citation> = Vec::new();
        for found in finder.find_iter(text) {
            let start = found.start();
            let before = text[..start].chars().next_back();
            if before.is_some_and(|c| is_path_char(c) || c == '/' || c == '\\') {
                let dot_slash = text[..start].ends_with("./")
                    && !text[..start - 2]
                        .chars()
                        .next_back()
                        .is_some_and(|c| is_path_char(c) || c == '/');
                if !dot_slash {
                    continue;
                }
            }
            let end = extend_over_path(text, found.end());
            let (path_len, line) = split_line_suffix(&text[start..end]);
            let written = text[start..start + path_len].trim_end_matches(['.', ',']);
            let dir = written.ends_with('/');
            let rest = written.trim_end_matches('/');
            out.push(Citation {
                span: start..start + written.len(),
                cited: Cited::Path(PathRef::new(rest, false, dir, line)),
            });
        }
        out
    }

    /// Whether the tree has no odd path.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.finder.is_none()
    }
}

/// The end of the path that continues at `at` (`/` and path characters,
/// a line suffix's `:` and digits), so an odd directory cited with a file
/// below it is one citation.
fn extend_over_path(text: &str, at: usize) -> usize {
    let mut end = at;
    for (i, c) in text[at..].char_indices() {
        if is_path_char(c)
            || c == '/'
            || (c == ':' && text[at + i + 1..].starts_with(|d: char| d.is_ascii_digit()))
        {
            end = at + i + c.len_utf8();
        } else {
            break;
        }
    }
    end
}

/// `text` with the bytes of `spans` made spaces (same length, so every
/// other offset holds), for the rest of extraction to read around them.
pub(super) fn blank(text: &str, spans: &[Range<usize>]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for span in spans {
        bytes[span.clone()].iter_mut().for_each(|b| *b = b' ');
    }
    // Every span starts and ends on a character boundary (a match of a
    // whole path), so only whole characters became spaces.
    String::from_utf8(bytes).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cited(odd: &OddPaths, text: &str) -> Vec<(String, Option<u32>, String)> {
        odd.citations(text)
            .into_iter()
            .map(|c| match c.cited {
                Cited::Path(p) => (p.shown(), p.line, text[c.span].to_string()),
                Cited::Symbol(_) => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn odd_paths_are_found_whole_with_their_tails_and_lines() {
        let odd = OddPaths::new([
            "a|b",
            "a|b/f.py",
            "docs/end]-->B/f.py",
            "core`x`/f.py",
            "src/plain.rs",
        ]);
        assert!(!odd.is_empty());
        assert_eq!(
            cited(
                &odd,
                "See a|b/f.py:12, `core`x`/f.py` and docs/end]-->B/f.py."
            ),
            [
                ("a|b/f.py".into(), Some(12), "a|b/f.py".into()),
                ("core`x`/f.py".into(), None, "core`x`/f.py".into()),
                (
                    "docs/end]-->B/f.py".into(),
                    None,
                    "docs/end]-->B/f.py".into()
                ),
            ]
        );
        // A tail from the odd component on, a directory, a file below it
        // the tree may not have, and ./ in front.
        assert_eq!(
            cited(
                &odd,
                "in end]-->B/f.py, under a|b/ and a|b/g.py, ./a|b/f.py"
            ),
            [
                ("end]-->B/f.py".into(), None, "end]-->B/f.py".into()),
                ("a|b/".into(), None, "a|b/".into()),
                ("a|b/g.py".into(), None, "a|b/g.py".into()),
                ("a|b/f.py".into(), None, "a|b/f.py".into()),
            ]
        );
        // Not inside another word or path; a longer name is its own
        // citation (which the tree does not have).
        assert!(cited(&odd, "xa|b/f.py and /etc/a|b/f.py").is_empty());
        assert_eq!(
            cited(&odd, "a|b/f.pyc"),
            [("a|b/f.pyc".into(), None, "a|b/f.pyc".into())]
        );
        assert!(OddPaths::new(["src/plain.rs", "naïve/é.txt"]).is_empty());
    }

    #[test]
    fn extraction_reads_odd_paths_and_the_rest_around_them() {
        let vocabulary = super::super::Vocabulary::new(["f.py", "main.rs"], ["a|b", "src"])
            .with_paths(["a|b", "a|b/f.py", "src", "src/main.rs"]);
        let text = "`a|b/f.py` calls src/main.rs; see a|b/f.py:3 (and `run()`).";
        let found: Vec<String> = super::super::extract(text, &vocabulary)
            .into_iter()
            .map(|c| match c.cited {
                Cited::Path(p) => format!("path {}", p.shown()),
                Cited::Symbol(s) => format!("symbol {}", s.text),
            })
            .collect();
        assert_eq!(
            found,
            [
                "path a|b/f.py",
                "path src/main.rs",
                "path a|b/f.py",
                "symbol run()"
            ]
        );
        let field = super::super::path_field("a|b/f.py:7", &vocabulary);
        assert_eq!(field.len(), 1);
        assert!(
            matches!(&field[0].cited, Cited::Path(p) if p.path == "a|b/f.py" && p.line == Some(7))
        );
    }

    #[test]
    fn blanking_keeps_every_offset() {
        let text = "é a|b/f.py ü x";
        let blanked = blank(text, &[3..11, 15..16]);
        assert_eq!(blanked.len(), text.len());
        assert_eq!(blanked, "é          ü  ");
    }
}
