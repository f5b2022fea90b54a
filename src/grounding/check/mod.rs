//! The report's grounding: check every citation of the cached summaries,
//! the flags and the synthesis, count them, list those not found, rewrite
//! the ones found to their target-relative path, and mark the flags.
//!
//! Texts checked, and what each is about (the directory its relative paths
//! resolve against, the source files its symbols are looked up in first):
//!
//! | text | `cited_in` | directory | files |
//! |---|---|---|---|
//! | a dir entry's `summary` and `notable_files` | `dir_summary` | the directory | its source files |
//! | a file entry's `summary` and `notable_reason` | `file_summary` | the file's directory | the file |
//! | a flag's `path` and `finding` | `flag` | the flagged path's directory | the flagged file, or the flagged directory's files |
//! | `ai_brief`, `ai_detailed` | `ai_brief`, `ai_detailed` | the target | none |
//! | a component's, entry point's or data set's `path`, a command's `source` | `ai_sections` | the target | none |
//!
//! Symbols count only in texts about code `parse_structure` can read: a
//! file of a supported language, a directory with one at or below it, or
//! (for the flags without a path and the synthesis) a tree that has one.
//!
//! Each distinct citation counts once per text. What the report shows:
//! - in `ai_brief`, `ai_detailed` and each flag's `finding`, a path found
//!   at one place is rewritten to its target-relative spelling
//!   (`engine.rs` → `src/core/engine.rs`, `.\src\a.rs` → `src/a.rs`);
//! - each flag gets `verified`: its `path` names something in the tree
//!   (`general`, the target itself and paths the redactor altered count as
//!   verified). A verified path is rewritten the same way, its `:line`
//!   moved to `line`. An unverified flag is never shown above `info`: its
//!   severity drops to `info`, `original_severity` keeps the agent's, and
//!   `note` says why.
//! - each path of the domain sections gets `verified` the same way, and a
//!   found one its target-relative spelling, so only found paths are
//!   linked.

use std::collections::{HashMap, HashSet};

use super::extract::{Citation, Cited, PathRef, extract, path_field};
use super::outlines::{Outlines, Source, language_of};
use super::resolve::{Resolution, resolve};
use super::scope::{Scope, split_last};
use super::symbols::{NameIndex, SymbolResolution};
use super::{CitationKind, CitedIn, Grounding, Unresolved};
use crate::cache::{DirEntry, FileEntry};
use crate::redact::REDACTION_MARK;
use crate::report::Flag;
use crate::report::sections::Sections;
use sections::{SectionItem, section_paths};

/// The cached entries to check.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sources<'a> {
    /// Dir entries of the directories the report covers.
    pub dir_entries: &'a [DirEntry],
    /// File entries; those whose file is gone are skipped.
    pub file_entries: &'a [FileEntry],
}

/// Where a text's rewritten form goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Counted only (summaries are not part of the report).
    Nowhere,
    Brief,
    Detailed,
    Finding(usize),
    FlagPath(usize),
    /// The path of a domain-section item.
    SectionPath(SectionItem),
}

/// One text to check, with what it is about.
struct Text {
    cited_in: CitedIn,
    entry: Option<String>,
    /// The directory its relative paths resolve against.
    dir: String,
    /// Source files its symbols are looked up in before the whole scope.
    covered: Vec<String>,
    /// Whether its symbols are checked at all.
    symbols: bool,
    body: String,
    /// A field holding a path (a flag's `path`, a `notable_files` item).
    field: bool,
    target: Target,
}

/// What became of one distinct citation.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Status {
    Path(Resolution),
    Symbol(SymbolResolution),
    /// A symbol not found among its entry's files: for the whole scope.
    Pending,
}

/// A text's citations, and the status of each distinct one.
struct Checked {
    citations: Vec<Citation>,
    /// Distinct citations in order of appearance, with their status.
    distinct: Vec<(Cited, Status)>,
}

/// Check `sources`, `brief`, `detailed` and `flags` against `scope`,
/// reading source files from `source`. Rewrites the brief, the detailed
/// analysis and the flags in place (see the module doc) and returns the
/// counts.
pub(crate) fn ground(
    scope: &Scope,
    source: Source,
    sources: Sources<'_>,
    brief: &mut String,
    detailed: &mut String,
    flags: &mut [Flag],
    sections: &mut Sections,
) -> Grounding {
    let texts = gather(scope, sources, brief, detailed, flags, sections);
    let mut checked: Vec<Checked> = texts.iter().map(|text| check_paths(scope, text)).collect();
    settle_symbols(
        scope,
        &mut Outlines::new(scope, source),
        &texts,
        &mut checked,
    );
    let grounding = tally(&texts, &checked);
    for (text, checked) in texts.iter().zip(&checked) {
        apply(text, checked, brief, detailed, flags, sections);
    }
    // A flag whose path needs no check (`general`) had no path text.
    for flag in flags.iter_mut().filter(|flag| flag.verified.is_none()) {
        flag.verified = Some(true);
    }
    grounding
}

/// Every text to check, in report order: summaries, then flags, then the
/// synthesis and its sections' paths.
fn gather(
    scope: &Scope,
    sources: Sources<'_>,
    brief: &str,
    detailed: &str,
    flags: &[Flag],
    sections: &Sections,
) -> Vec<Text> {
    let any_code = scope.files().iter().any(|f| language_of(f).is_some());
    let mut texts = Vec::new();
    dir_texts(scope, sources.dir_entries, &mut texts);
    file_texts(scope, sources.file_entries, &mut texts);
    flag_texts(scope, flags, any_code, &mut texts);
    for (cited_in, body, target) in [
        (CitedIn::AiBrief, brief, Target::Brief),
        (CitedIn::AiDetailed, detailed, Target::Detailed),
    ] {
        texts.push(Text {
            cited_in,
            entry: None,
            dir: ".".to_string(),
            covered: Vec::new(),
            symbols: any_code,
            body: body.to_string(),
            field: false,
            target,
        });
    }
    for (item, path) in section_paths(sections) {
        texts.push(Text {
            cited_in: CitedIn::AiSections,
            entry: Some(path.to_string()),
            dir: ".".to_string(),
            covered: Vec::new(),
            symbols: false,
            body: path.to_string(),
            field: true,
            target: Target::SectionPath(item),
        });
    }
    texts
}

/// Each directory summary and notable file name, about its directory.
fn dir_texts(scope: &Scope, entries: &[DirEntry], texts: &mut Vec<Text>) {
    for entry in entries {
        let Some(dir) = entry_path(scope, &entry.path, &entry.relative_path) else {
            continue;
        };
        let (covered, symbols) = code_in(scope, &dir);
        let about = |body: String, field: bool| Text {
            cited_in: CitedIn::DirSummary,
            entry: Some(dir.clone()),
            dir: dir.clone(),
            covered: covered.clone(),
            symbols,
            body,
            field,
            target: Target::Nowhere,
        };
        texts.push(about(entry.summary.clone(), false));
        for notable in &entry.notable_files {
            texts.push(about(notable.clone(), true));
        }
    }
}

/// Each file summary (and why it is notable) of a file still in the tree,
/// about its file.
fn file_texts(scope: &Scope, entries: &[FileEntry], texts: &mut Vec<Text>) {
    for entry in entries {
        let Some(file) = entry_path(scope, &entry.path, &entry.relative_path) else {
            continue;
        };
        if !scope.has_file(&file) && scope.probe(&file) != Some(false) {
            continue;
        }
        let supported = language_of(&file).is_some();
        for body in std::iter::once(&entry.summary).chain(&entry.notable_reason) {
            texts.push(Text {
                cited_in: CitedIn::FileSummary,
                entry: Some(file.clone()),
                dir: split_last(&file).0.unwrap_or(".").to_string(),
                covered: if supported {
                    vec![file.clone()]
                } else {
                    Vec::new()
                },
                symbols: supported,
                body: body.to_string(),
                field: false,
                target: Target::Nowhere,
            });
        }
    }
}

/// Each flag's path (unless it needs no check) and finding.
fn flag_texts(scope: &Scope, flags: &[Flag], any_code: bool, texts: &mut Vec<Text>) {
    for (index, flag) in flags.iter().enumerate() {
        let (dir, covered, symbols) = flag_context(scope, &flag.path, any_code);
        let about = |body: &str, field: bool, target: Target| Text {
            cited_in: CitedIn::Flag,
            entry: Some(flag.path.clone()),
            dir: dir.clone(),
            covered: covered.clone(),
            symbols,
            body: body.to_string(),
            field,
            target,
        };
        if !self_evident(scope, &flag.path) {
            texts.push(about(&flag.path, true, Target::FlagPath(index)));
        }
        texts.push(about(&flag.finding, false, Target::Finding(index)));
    }
}

/// The target-relative path an entry describes: its `path` (absolute or
/// relative), else its `relative_path`.
fn entry_path(scope: &Scope, path: &str, relative_path: &str) -> Option<String> {
    let raw = [path, relative_path].into_iter().find(|s| !s.is_empty())?;
    let rel = if raw.starts_with('/') {
        scope.relative_to_target(raw)?
    } else {
        raw.trim_start_matches("./")
            .trim_end_matches('/')
            .to_string()
    };
    Some(if rel.is_empty() { ".".to_string() } else { rel })
}

/// A flag path that needs no check: none at all (`general`), the target
/// itself, or one the redactor rewrote (a secret in a file name), which is
/// luminos's own and cannot be looked up.
fn self_evident(scope: &Scope, path: &str) -> bool {
    let path = path.trim();
    path.is_empty()
        || path.eq_ignore_ascii_case("general")
        || matches!(path, "." | "./")
        || scope.is_target_name(path)
        || path.contains(REDACTION_MARK)
}

/// What a text about directory `dir` covers: its own source files (a
/// language we outline), and whether any file below it has symbols to
/// check names against.
fn code_in(scope: &Scope, dir: &str) -> (Vec<String>, bool) {
    let covered = scope
        .files_in(dir)
        .into_iter()
        .filter(|f| language_of(f).is_some())
        .map(str::to_string)
        .collect();
    (
        covered,
        scope.any_file_below(dir, |f| language_of(f).is_some()),
    )
}

/// The directory, covered files and symbol rule of a flag's texts, from
/// where its path resolves.
fn flag_context(scope: &Scope, path: &str, any_code: bool) -> (String, Vec<String>, bool) {
    let found =
        path_field(path, scope.vocabulary())
            .into_iter()
            .find_map(|citation| match citation.cited {
                Cited::Path(cited) => match resolve(scope, &cited, ".") {
                    Resolution::Found { path, dir } => Some((path, dir)),
                    _ => None,
                },
                Cited::Symbol(_) => None,
            });
    match found {
        Some((dir, true)) => {
            let (covered, symbols) = code_in(scope, &dir);
            (dir, covered, symbols)
        }
        Some((file, false)) => {
            let supported = language_of(&file).is_some();
            let dir = split_last(&file).0.unwrap_or(".").to_string();
            (
                dir,
                if supported { vec![file] } else { Vec::new() },
                supported,
            )
        }
        None => (".".to_string(), Vec::new(), any_code),
    }
}

/// What makes two citations of one text the same citation: a path cited
/// at two lines is one path.
fn key_of(cited: &Cited) -> Cited {
    match cited {
        Cited::Path(path) => Cited::Path(PathRef {
            line: None,
            ..path.clone()
        }),
        symbol => symbol.clone(),
    }
}

/// Resolve a text's paths; its symbols wait for [`settle_symbols`].
fn check_paths(scope: &Scope, text: &Text) -> Checked {
    let vocabulary = scope.vocabulary();
    let citations = if text.field {
        path_field(&text.body, vocabulary)
    } else {
        extract(&text.body, vocabulary)
    };
    let mut seen: HashSet<Cited> = HashSet::new();
    let mut distinct = Vec::new();
    for citation in &citations {
        let key = key_of(&citation.cited);
        if !seen.insert(key.clone()) {
            continue;
        }
        let status = match &citation.cited {
            Cited::Path(path) => Status::Path(resolve(scope, path, &text.dir)),
            Cited::Symbol(_) if !text.symbols => continue,
            Cited::Symbol(_) => Status::Pending,
        };
        distinct.push((key, status));
    }
    Checked {
        citations,
        distinct,
    }
}

/// Resolve every symbol, after one search of the scope for all their names:
/// first among the files its text covers (owners must fit), then in every
/// file outlined (an unknown owner may be a variable), else external,
/// unchecked or missing.
fn settle_symbols(
    scope: &Scope,
    outlines: &mut Outlines<'_>,
    texts: &[Text],
    checked: &mut [Checked],
) {
    let names: HashSet<String> = checked
        .iter()
        .flat_map(|c| &c.distinct)
        .filter_map(|(cited, _)| match cited {
            Cited::Symbol(symbol) => Some(symbol.segments.iter().cloned()),
            Cited::Path(_) => None,
        })
        .flatten()
        .collect();
    if names.is_empty() {
        return;
    }
    outlines.search(&names);
    let mut everything = NameIndex::default();
    for (rel, defs) in outlines.read_files() {
        everything.add(rel, defs);
    }
    let is_dir_name = |name: &str| scope.is_dir_name(name);
    for (text, checked) in texts.iter().zip(checked.iter_mut()) {
        let mut covered: Option<NameIndex> = None;
        for (cited, status) in &mut checked.distinct {
            let Cited::Symbol(symbol) = cited else {
                continue;
            };
            let covered = covered.get_or_insert_with(|| {
                let mut index = NameIndex::default();
                for file in &text.covered {
                    if let Some(defs) = outlines.defs_of(file) {
                        index.add(file, defs);
                    }
                }
                index
            });
            *status = Status::Symbol(
                if covered.finds(symbol, false, is_dir_name)
                    || everything.finds(symbol, true, is_dir_name)
                {
                    SymbolResolution::Found
                } else if everything.is_external(symbol) {
                    SymbolResolution::External
                } else if symbol.segments.iter().any(|s| outlines.incomplete_for(s)) {
                    SymbolResolution::Unchecked
                } else {
                    SymbolResolution::Missing
                },
            );
        }
    }
}

/// The counts and the unresolved list.
fn tally(texts: &[Text], checked: &[Checked]) -> Grounding {
    let mut grounding = Grounding::default();
    for (text, checked) in texts.iter().zip(checked) {
        for (cited, status) in &checked.distinct {
            let (kind, resolved) = match status {
                Status::Path(Resolution::Outside) => continue,
                Status::Symbol(SymbolResolution::External) => continue,
                Status::Symbol(SymbolResolution::Unchecked) | Status::Pending => {
                    grounding.unchecked += 1;
                    continue;
                }
                Status::Path(resolution) => (CitationKind::Path, resolution.exists()),
                Status::Symbol(resolution) => {
                    (CitationKind::Symbol, *resolution == SymbolResolution::Found)
                }
            };
            let tally = match kind {
                CitationKind::Path => &mut grounding.paths,
                CitationKind::Symbol => &mut grounding.symbols,
            };
            tally.citations += 1;
            tally.resolved += usize::from(resolved);
            if !resolved {
                grounding.unresolved.push(Unresolved {
                    citation: match cited {
                        Cited::Path(path) => path.shown(),
                        Cited::Symbol(symbol) => symbol.text.clone(),
                    },
                    kind,
                    cited_in: text.cited_in,
                    entry: text.entry.clone(),
                });
            }
        }
    }
    grounding.citations = grounding.paths.citations + grounding.symbols.citations;
    grounding.resolved = grounding.paths.resolved + grounding.symbols.resolved;
    grounding
}

/// Write a checked text's results where they belong.
fn apply(
    text: &Text,
    checked: &Checked,
    brief: &mut String,
    detailed: &mut String,
    flags: &mut [Flag],
    sections: &mut Sections,
) {
    let statuses: HashMap<&Cited, &Status> = checked.distinct.iter().map(|(c, s)| (c, s)).collect();
    let status_of = |citation: &Citation| -> Option<&Status> {
        statuses.get(&key_of(&citation.cited)).copied()
    };
    match text.target {
        Target::Nowhere => {}
        Target::Brief => *brief = rewrite(&text.body, &checked.citations, status_of),
        Target::Detailed => *detailed = rewrite(&text.body, &checked.citations, status_of),
        Target::Finding(index) => {
            flags[index].finding = rewrite(&text.body, &checked.citations, status_of);
        }
        Target::SectionPath(item) => {
            let verified = all_paths_found(checked, status_of);
            let rewritten = rewrite(&text.body, &checked.citations, status_of);
            item.mark(sections, rewritten, verified);
        }
        Target::FlagPath(index) => {
            let paths: Vec<(&Citation, Option<&Status>)> = checked
                .citations
                .iter()
                .filter(|c| matches!(c.cited, Cited::Path(_)))
                .map(|c| (c, status_of(c)))
                .collect();
            // A name several files have (a bare `serde.rs` in a tree with
            // three) exists, but does not say which file the flag is about.
            let verified = !paths.is_empty()
                && paths.iter().all(|(_, status)| {
                    matches!(status, Some(Status::Path(Resolution::Found { .. })))
                });
            let ambiguous = paths.iter().find_map(|(_, status)| match status {
                Some(Status::Path(Resolution::Ambiguous(n))) => Some(*n),
                _ => None,
            });
            let flag = &mut flags[index];
            let single_word = !text.body.trim().contains(char::is_whitespace);
            match paths.as_slice() {
                [(citation, Some(Status::Path(Resolution::Found { path, .. })))] if single_word => {
                    if let Cited::Path(cited) = &citation.cited {
                        flag.line = cited.line;
                    }
                    flag.path = path.clone();
                }
                _ => flag.path = rewrite(&text.body, &checked.citations, status_of),
            }
            mark(flag, verified, ambiguous);
        }
    }
}

/// Whether a path field names one place in the tree: it holds a path, and
/// every path in it was found at one place (a name several files have
/// exists, but cannot be linked).
fn all_paths_found<'s>(
    checked: &Checked,
    status_of: impl Fn(&Citation) -> Option<&'s Status>,
) -> bool {
    let mut paths = checked
        .citations
        .iter()
        .filter(|c| matches!(c.cited, Cited::Path(_)))
        .peekable();
    paths.peek().is_some()
        && paths.all(|c| matches!(status_of(c), Some(Status::Path(Resolution::Found { .. }))))
}

/// Set `verified`, and lower an unverified flag to `info` with a note: its
/// path was not found, or names `ambiguous` paths of the tree.
fn mark(flag: &mut Flag, verified: bool, ambiguous: Option<usize>) {
    flag.verified = Some(verified);
    if verified {
        return;
    }
    let why = match ambiguous {
        Some(n) => format!("Its path names {n} places in the tree, not one"),
        None => "Its path was not found in the tree".to_string(),
    };
    if flag.severity == "info" {
        flag.note = Some(format!("{why}."));
    } else {
        flag.note = Some(format!(
            "{why}, so it is shown as info; the agent rated it {}.",
            flag.severity
        ));
        flag.original_severity = Some(std::mem::replace(&mut flag.severity, "info".to_string()));
    }
}

/// `body` with every path found at exactly one place spelled as that
/// place's target-relative path.
fn rewrite<'s>(
    body: &str,
    citations: &[Citation],
    status_of: impl Fn(&Citation) -> Option<&'s Status>,
) -> String {
    let mut out = String::with_capacity(body.len());
    let mut copied = 0;
    for citation in citations {
        let Cited::Path(cited) = &citation.cited else {
            continue;
        };
        let Some(Status::Path(Resolution::Found { path, .. })) = status_of(citation) else {
            continue;
        };
        if path == "." || citation.span.start < copied {
            continue;
        }
        let written = &body[citation.span.clone()];
        let spelled = if cited.dir {
            format!("{path}/")
        } else {
            path.clone()
        };
        if written != spelled {
            out.push_str(&body[copied..citation.span.start]);
            out.push_str(&spelled);
            copied = citation.span.end;
        }
    }
    out.push_str(&body[copied..]);
    out
}

mod cite;
mod sections;

pub(crate) use cite::{CheckedCitation, cite};

#[cfg(test)]
mod tests;
