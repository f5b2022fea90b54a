//! Symbol extraction: whether the text of one code span is written like a
//! symbol (a declaration, a call or a `::`-qualified name) and, if so, its
//! segments. Only code spans are read here ([`super::extract`] finds them);
//! whether the symbol exists is decided elsewhere.

use super::SymbolRef;
use super::words::{DECLARATION_KEYWORDS, MODIFIERS, RELATIVE_ROOTS};

/// The symbol a code span names, if it is written like one (see the module
/// doc): a declaration, a call or a `::`-qualified name.
pub(super) fn symbol_in_code(content: &str) -> Option<SymbolRef> {
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
