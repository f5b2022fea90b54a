//! One text's citations, each checked: what `luminos ask` says about its
//! answer. The same extraction, path resolution and symbol lookup as the
//! report's grounding (the parent module), on a text about the whole
//! target (like the brief): paths resolve against the target, symbols are
//! looked up in every source file in scope.
//!
//! Unlike the report's grounding, every distinct citation is returned with
//! its status, found or not; paths outside the target and library symbols
//! are left out, as the report leaves them out of its counts.

use serde::Serialize;

use super::super::outlines::{Outlines, Source, language_of};
use super::super::resolve::Resolution;
use super::super::symbols::SymbolResolution;
use super::{CitedIn, Status, Target, Text, check_paths, settle_symbols};
use crate::grounding::extract::Cited;
use crate::grounding::{CitationKind, Scope};

/// One distinct citation of a text, and what the tree says about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CheckedCitation {
    /// As written (a path without its line suffix).
    pub citation: String,
    /// `path` or `symbol`.
    pub kind: CitationKind,
    /// Found in the tree: a path that names a file or directory of the
    /// target, a symbol that one of its source files defines.
    pub found: bool,
    /// Where a path found at one place is, relative to the target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Whether the symbol could not be checked (the outline limit); such a
    /// citation is not counted as found.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unchecked: bool,
}

/// The citations of `text` (about the whole target), in order of first
/// appearance, each checked against `scope` (source files read from
/// `source`).
pub(crate) fn cite(scope: &Scope, source: Source, text: &str) -> Vec<CheckedCitation> {
    let body = Text {
        // Only the kind of text matters here: one about the whole target.
        cited_in: CitedIn::AiDetailed,
        entry: None,
        dir: ".".to_string(),
        covered: Vec::new(),
        symbols: scope.files().iter().any(|f| language_of(f).is_some()),
        body: text.to_string(),
        field: false,
        target: Target::Nowhere,
    };
    let mut checked = [check_paths(scope, &body)];
    settle_symbols(
        scope,
        &mut Outlines::new(scope, source),
        std::slice::from_ref(&body),
        &mut checked,
    );
    let [checked] = checked;
    checked
        .distinct
        .into_iter()
        .filter_map(|(cited, status)| {
            let (kind, found, path, unchecked) = match &status {
                Status::Path(Resolution::Outside) => return None,
                Status::Symbol(SymbolResolution::External) => return None,
                Status::Path(Resolution::Found { path, .. }) => {
                    (CitationKind::Path, true, Some(path.clone()), false)
                }
                Status::Path(resolution) => (CitationKind::Path, resolution.exists(), None, false),
                Status::Symbol(SymbolResolution::Found) => {
                    (CitationKind::Symbol, true, None, false)
                }
                Status::Symbol(SymbolResolution::Unchecked) | Status::Pending => {
                    (CitationKind::Symbol, false, None, true)
                }
                Status::Symbol(SymbolResolution::Missing) => {
                    (CitationKind::Symbol, false, None, false)
                }
            };
            let citation = match &cited {
                Cited::Path(path) => path.shown(),
                Cited::Symbol(symbol) => symbol.text.clone(),
            };
            Some(CheckedCitation {
                citation,
                kind,
                found,
                path,
                unchecked,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{scope, source};
    use super::*;

    fn found(citations: &[CheckedCitation]) -> Vec<(&str, bool, Option<&str>)> {
        citations
            .iter()
            .map(|c| (c.citation.as_str(), c.found, c.path.as_deref()))
            .collect()
    }

    #[test]
    fn every_citation_of_an_answer_is_checked_found_or_not() {
        let answer = "It starts in `main.rs`, which calls `Engine::start` (src/core/engine.rs:2). \
                      `Engine::explode` and turbo.rs do not exist; `HashMap` is the standard \
                      library's, and /etc/passwd is outside. main.rs again.";
        let cited = cite(&scope(), source(), answer);
        assert_eq!(
            found(&cited),
            [
                ("main.rs", true, Some("src/main.rs")),
                ("Engine::start", true, None),
                ("src/core/engine.rs", true, Some("src/core/engine.rs")),
                ("Engine::explode", false, None),
                ("turbo.rs", false, None),
            ]
        );
        let kinds: Vec<CitationKind> = cited.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            [
                CitationKind::Path,
                CitationKind::Symbol,
                CitationKind::Path,
                CitationKind::Symbol,
                CitationKind::Path
            ]
        );
        assert!(cite(&scope(), source(), "Nothing cited here.").is_empty());
    }
}
