//! What a rule's check is handed and what it answers: the match's groups
//! ([`Found`]) and its [`Verdict`]. The rule table (`kinds.rs`) and the
//! checks that live apart from it (`assign.rs`) both build on these.

use regex::Captures;

/// What a rule's check makes of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not this kind of secret (code, a reference, a marker line alone):
    /// left as it is.
    Pass,
    /// A secret: redacted, flagged at the rule's severity.
    Secret,
    /// The secret's shape, but an example or placeholder value: redacted
    /// all the same, flagged `info`.
    Example,
}

impl Verdict {
    /// `Secret` when `real`, else `Example`: for checks that have already
    /// decided the match is redacted.
    pub(crate) fn real_if(real: bool) -> Verdict {
        if real {
            Verdict::Secret
        } else {
            Verdict::Example
        }
    }
}

/// A match's groups, read from the original text whichever copy was searched.
pub(crate) struct Found<'t> {
    pub(crate) text: &'t str,
    pub(crate) caps: &'t Captures<'t>,
    /// The name of the file the text was read from, when the caller knows
    /// it (its last path component): some values are credentials only in
    /// a file named like one (`credentials.txt`).
    pub(crate) source: Option<&'t str>,
}

impl<'t> Found<'t> {
    /// Group `name` in the original text, or `""` if it did not take part.
    pub(crate) fn group(&self, name: &str) -> &'t str {
        self.caps.name(name).map_or("", |m| &self.text[m.range()])
    }

    /// Where group `name` starts and ends in the text (the whole match's
    /// start when the group did not take part).
    pub(crate) fn range(&self, name: &str) -> std::ops::Range<usize> {
        self.caps.name(name).map_or_else(
            || {
                let start = self.caps.get(0).map_or(0, |m| m.start());
                start..start
            },
            |m| m.range(),
        )
    }
}
