//! Names with spaces: `my notes.txt`, `Meeting Minutes/2024.md`.
//!
//! Prose is split into words on whitespace, so such a name would be read
//! as its last word alone (`notes.txt`), which names nothing in the tree:
//! a false "not found", even in a summary built from the scan's own file
//! names. The tree says which names have spaces, so a word that ends one
//! of them (or whose first component does) is joined with the words
//! before it when the text spells the rest of the name there. Only names
//! the tree has are joined; any other spaced phrase stays prose.

use std::collections::HashMap;
use std::ops::Range;

use super::{Citation, Cited, PathRef, is_delimiter, is_trailing_punctuation, split_line_suffix};

/// The tree's names that contain whitespace, by their last
/// whitespace-separated word (`notes.txt` → `my notes.txt`).
#[derive(Debug, Clone, Default)]
pub(super) struct SpacedNames {
    by_last_word: HashMap<String, Vec<String>>,
}

impl SpacedNames {
    /// Record `name` if it has whitespace inside it.
    pub(super) fn add(&mut self, name: &str) {
        let trimmed = name.trim();
        if trimmed.len() != name.len() || !name.contains(char::is_whitespace) {
            return;
        }
        if let Some(last) = name.split_whitespace().next_back() {
            let names = self.by_last_word.entry(last.to_string()).or_default();
            if !names.iter().any(|known| known == name) {
                names.push(name.to_string());
                // The longest name first: it is the most specific match.
                names.sort_by_key(|known| std::cmp::Reverse(known.len()));
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.by_last_word.is_empty()
    }

    /// The path citation that ends with `word` of `text`, when the word ends
    /// a spaced name of the tree (or starts the rest of a path after one)
    /// and the text before it, no earlier than `floor`, spells the rest of
    /// that name.
    pub(super) fn citation_at(
        &self,
        text: &str,
        floor: usize,
        word: Range<usize>,
    ) -> Option<Citation> {
        if self.is_empty() {
            return None;
        }
        // The word without what may follow a path in a sentence.
        let mut end = word.end;
        while let Some(c) = text[word.start..end].chars().next_back() {
            if is_trailing_punctuation(c) || matches!(c, ')' | ']' | '"' | '\'' | '’' | '”' | '»')
            {
                end -= c.len_utf8();
            } else {
                break;
            }
        }
        let (path_len, line) = split_line_suffix(&text[word.start..end]);
        let token = &text[word.start..word.start + path_len];
        let first = token.split(['/', '\\']).next().unwrap_or(token);
        let candidates = self.by_last_word.get(first)?;
        let before = &text[floor..word.start];
        let name = candidates.iter().find(|name| {
            let rest = &name[..name.len() - first.len()];
            before.ends_with(rest)
        })?;
        let mut start = word.start - (name.len() - first.len());
        // What the name is written under (`docs/`, `./`), up to the start
        // of its word.
        while let Some(c) = text[floor..start].chars().next_back() {
            if c.is_whitespace() || is_delimiter(c) {
                break;
            }
            start -= c.len_utf8();
        }
        let written = &text[start..word.start + path_len];
        path_ref(written, line).map(|path| Citation {
            span: start..word.start + path_len,
            cited: Cited::Path(path),
        })
    }
}

/// `written` as a path: separators normalized, a leading `./` dropped.
fn path_ref(written: &str, line: Option<u32>) -> Option<PathRef> {
    let normalized = written.replace('\\', "/");
    if normalized.starts_with("//") || normalized.contains("://") {
        return None;
    }
    let absolute = normalized.starts_with('/');
    let mut rest = normalized.trim_start_matches('/');
    while let Some(after) = rest.strip_prefix("./") {
        rest = after;
    }
    let dir = rest.ends_with('/');
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.split('/').any(str::is_empty) {
        return None;
    }
    Some(PathRef {
        path: if absolute {
            format!("/{rest}")
        } else {
            rest.to_string()
        },
        absolute,
        dir,
        line,
    })
}
