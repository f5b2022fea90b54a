//! The shared token helpers of extraction: Markdown code spans, the words
//! of a stretch of text, and the punctuation that separates or ends a
//! candidate. They know nothing of paths or symbols; [`super::paths`],
//! [`super::symbol`] and `spaced` build on them.

use std::ops::Range;

/// A code span: the backticks included (`outer`) and the text between them.
pub(super) struct CodeSpan {
    pub(super) outer: Range<usize>,
    pub(super) inner: Range<usize>,
}

/// Code spans as Markdown reads them: a run of N backticks up to the next
/// run of exactly N. An unmatched run is literal text.
pub(super) fn code_spans(text: &str) -> Vec<CodeSpan> {
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
pub(super) fn is_delimiter(c: char) -> bool {
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
pub(super) fn is_trailing_punctuation(c: char) -> bool {
    matches!(c, '.' | ',' | ':' | ';' | '!' | '?' | '*' | '…')
}

/// The words of `range` (split on whitespace), as byte ranges of `text`.
pub(super) fn words(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
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
