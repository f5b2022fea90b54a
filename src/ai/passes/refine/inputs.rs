//! What a round of the refinement is given to settle, chosen and written
//! by pure functions: the summaries their authors were unsure of
//! ([`uncertain_entries`]), the flags whose path grounding did not find,
//! numbered so the round can withdraw them ([`numbered_unverified`]), and
//! the verdict itself ([`render_verdict`]). Summaries at odds with a
//! finding are `contradictions.rs`'s.
//!
//! Every list is bounded (the tree may be large, the round's prompt may
//! not) and ordered deterministically, so the same investigation gives the
//! same prompt. Everything quoted here was written from the target's
//! files, and is framed as untrusted data by the caller.

use crate::cache::{DirEntry, FileEntry};
use crate::report::Flag;
use crate::text::{cut_marked, escape_line};

/// Confidence or completeness below this is low (the original's threshold
/// for low-confidence entries).
pub(crate) const LOW: f64 = 0.7;
/// At most this many uncertain summaries are listed.
pub(crate) const MAX_UNCERTAIN: usize = 24;
/// At most this many unverified flags are listed.
pub(crate) const MAX_UNVERIFIED: usize = 30;
/// A quoted summary or finding is cut to this many bytes.
pub(crate) const QUOTE_BYTES: usize = 400;

/// Why a summary is listed as uncertain, most telling first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Doubt {
    /// Its author rated its confidence or completeness low.
    Rated,
    /// A loop stopped before it was done (`partial_reason`).
    Partial,
    /// No model read the directory: it was summarised from the scan (only
    /// the top of such a subtree is listed).
    Unread,
}

/// One uncertain summary: its path, why, and the line the round sees.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Uncertain {
    pub path: String,
    pub doubt: Doubt,
    pub line: String,
}

/// What a round reads of a summary, a directory's or a file's (empty
/// texts read as none).
struct Summary<'a> {
    /// Target-relative, `.` for the target.
    rel: String,
    dir: bool,
    summary: Option<&'a str>,
    confidence: Option<f64>,
    confidence_reason: Option<&'a str>,
    completeness: Option<f64>,
    partial_reason: Option<&'a str>,
    mechanical: bool,
}

fn some(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// A target-relative path as the round names it (`.` for the target).
fn rel_of(rel: &str) -> String {
    match rel {
        "" => ".".to_string(),
        rel => rel.trim_end_matches('/').to_string(),
    }
}

impl<'a> From<&'a DirEntry> for Summary<'a> {
    fn from(entry: &'a DirEntry) -> Summary<'a> {
        Summary {
            rel: rel_of(&entry.relative_path),
            dir: true,
            summary: some(&entry.summary),
            confidence: entry.confidence,
            confidence_reason: entry.confidence_reason.as_deref().and_then(some),
            completeness: entry.completeness,
            partial_reason: entry.partial_reason.as_deref().and_then(some),
            mechanical: entry.mechanical,
        }
    }
}

impl<'a> From<&'a FileEntry> for Summary<'a> {
    fn from(entry: &'a FileEntry) -> Summary<'a> {
        Summary {
            rel: rel_of(&entry.relative_path),
            dir: false,
            summary: some(&entry.summary),
            confidence: entry.confidence,
            confidence_reason: entry.confidence_reason.as_deref().and_then(some),
            completeness: None,
            partial_reason: None,
            mechanical: false,
        }
    }
}

/// `text` cut to at most `max` bytes on a character boundary, marked.
pub(crate) fn quote(text: &str, max: usize) -> String {
    cut_marked(&escape_line(text), max, " [...]")
}

/// The summaries to settle among `dirs` (dir entries of the directories
/// that exist, each with its parent's entry when it has one) and `files`
/// (file entries): those rated below [`LOW`] in confidence or completeness,
/// those a stopped loop left partial, and the top of each subtree no model
/// read; most telling first (rated, partial, unread), the least sure first
/// within each, then by path; at most [`MAX_UNCERTAIN`].
pub(crate) fn uncertain_entries(
    dirs: &[(&DirEntry, Option<&DirEntry>)],
    files: &[&FileEntry],
) -> Vec<Uncertain> {
    let mut found: Vec<(Doubt, f64, Uncertain)> = dirs
        .iter()
        .filter_map(|(entry, parent)| {
            uncertain(&Summary::from(*entry), parent.is_some_and(|p| p.mechanical))
        })
        .chain(
            files
                .iter()
                .filter_map(|entry| uncertain(&Summary::from(*entry), false)),
        )
        .collect();
    found.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then_with(|| a.2.path.cmp(&b.2.path))
    });
    found
        .into_iter()
        .take(MAX_UNCERTAIN)
        .map(|(_, _, uncertain)| uncertain)
        .collect()
}

/// `entry` (a directory's when `dir`) as an uncertain summary, with its
/// doubt and how sure it is (the lower of its confidence and completeness)
/// to order by; `None` when nothing casts doubt on it, or when it was
/// summarised from the scan below a directory that was too
/// (`parent_unread`), since the top of such a subtree stands for it.
fn uncertain(entry: &Summary<'_>, parent_unread: bool) -> Option<(Doubt, f64, Uncertain)> {
    let rel = entry.rel.clone();
    let shown = if entry.dir && rel != "." {
        format!("{rel}/")
    } else {
        rel.clone()
    };
    let (confidence, completeness) = (entry.confidence, entry.completeness);
    let doubt = if entry.mechanical {
        if parent_unread {
            return None;
        }
        Doubt::Unread
    } else if confidence.is_some_and(|c| c < LOW) || completeness.is_some_and(|c| c < LOW) {
        Doubt::Rated
    } else if entry.partial_reason.is_some() {
        Doubt::Partial
    } else {
        return None;
    };
    let summary = quote(entry.summary.unwrap_or("(no summary)"), QUOTE_BYTES);
    let line = format!(
        "- {} ({}): {summary}",
        escape_line(&shown),
        doubt_facts(entry, doubt).join("; ")
    );
    let sureness = confidence.unwrap_or(1.0).min(completeness.unwrap_or(1.0));
    Some((
        doubt,
        sureness,
        Uncertain {
            path: rel,
            doubt,
            line,
        },
    ))
}

/// What the round is told of why `entry` is in `doubt`: its ratings (with
/// the reason for its confidence), why its loop stopped, and whether no
/// model read it.
fn doubt_facts(entry: &Summary<'_>, doubt: Doubt) -> Vec<String> {
    let mut facts = Vec::new();
    if let Some(confidence) = entry.confidence {
        let reason = entry
            .confidence_reason
            .map(|r| format!(": {}", quote(r, QUOTE_BYTES / 2)))
            .unwrap_or_default();
        facts.push(format!("confidence {confidence:.2}{reason}"));
    }
    if let Some(completeness) = entry.completeness {
        facts.push(format!("completeness {completeness:.2}"));
    }
    if let Some(reason) = entry.partial_reason {
        facts.push(format!("partial: {}", quote(reason, QUOTE_BYTES / 2)));
    }
    if doubt == Doubt::Unread {
        facts.push("summarised from the scan: no model read it".to_string());
    }
    facts
}

/// The flags grounding did not verify, numbered `F1`, `F2`, ... in report
/// order: `raw` as recorded and `grounded` the same flags after grounding
/// (same order). Each item is the recorded flag (what a withdrawal removes)
/// and the line the round sees; at most [`MAX_UNVERIFIED`].
pub(crate) fn numbered_unverified(raw: &[Flag], grounded: &[Flag]) -> Vec<(String, Flag, String)> {
    raw.iter()
        .zip(grounded)
        .filter(|(_, grounded)| grounded.verified == Some(false))
        .take(MAX_UNVERIFIED)
        .enumerate()
        .map(|(i, (raw, _))| {
            let id = format!("F{}", i + 1);
            let line = format!(
                "{id} [{}] {}: {}",
                escape_line(&raw.severity),
                escape_line(&raw.path),
                quote(&raw.finding, QUOTE_BYTES)
            );
            (id, raw.clone(), line)
        })
        .collect()
}

/// The report as the round reads it: the brief, the detailed analysis and
/// the sections the synthesis filled (one `Title: ...` line each).
pub(crate) fn render_verdict(brief: &str, detailed: &str, sections: &str) -> String {
    let mut text = format!("Brief:\n{brief}\n\nDetailed analysis:\n{detailed}");
    if !sections.is_empty() {
        text.push_str(&format!("\n\nSections:\n{}", sections.trim_end()));
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dir(value: serde_json::Value) -> DirEntry {
        DirEntry::from_value(value).unwrap()
    }

    fn file(value: serde_json::Value) -> FileEntry {
        FileEntry::from_value(value).unwrap()
    }

    fn lines(found: &[Uncertain]) -> Vec<&str> {
        found.iter().map(|u| u.line.as_str()).collect()
    }

    #[test]
    fn the_least_sure_summaries_come_first_and_only_the_top_of_what_no_model_read() {
        let root = dir(json!({"relative_path": ".", "summary": "A service.", "completeness": 0.9}));
        let net = dir(json!({"relative_path": "src/net", "summary": "Networking.",
                         "confidence": 0.4, "confidence_reason": "minified"}));
        let db =
            dir(json!({"relative_path": "src/db", "summary": "Storage.", "completeness": 0.6}));
        let cut = dir(json!({"relative_path": "src/cut", "summary": "Half read.",
                         "partial_reason": "turn limit reached"}));
        let vendor =
            dir(json!({"relative_path": "vendor", "summary": "3 files.", "mechanical": true}));
        let deep =
            dir(json!({"relative_path": "vendor/x", "summary": "1 file.", "mechanical": true}));
        let tls =
            file(json!({"relative_path": "src/net/tls.rs", "summary": "TLS.", "confidence": 0.5}));
        let sure =
            file(json!({"relative_path": "src/main.rs", "summary": "Main.", "confidence": 0.95}));
        let found = uncertain_entries(
            &[
                (&root, None),
                (&net, Some(&root)),
                (&db, Some(&root)),
                (&cut, Some(&root)),
                (&vendor, Some(&root)),
                (&deep, Some(&vendor)),
            ],
            &[&tls, &sure],
        );
        assert_eq!(
            lines(&found),
            [
                "- src/net/ (confidence 0.40: minified): Networking.",
                "- src/net/tls.rs (confidence 0.50): TLS.",
                "- src/db/ (completeness 0.60): Storage.",
                "- src/cut/ (partial: turn limit reached): Half read.",
                "- vendor/ (summarised from the scan: no model read it): 3 files.",
            ]
        );
    }

    #[test]
    fn the_lists_are_bounded_and_quotes_stay_on_one_line() {
        let many: Vec<DirEntry> = (0..100)
            .map(|i| {
                dir(
                    json!({"relative_path": format!("d{i:03}"), "summary": "x\ny".repeat(500),
                            "confidence": 0.1}),
                )
            })
            .collect();
        let dirs: Vec<(&DirEntry, Option<&DirEntry>)> = many.iter().map(|e| (e, None)).collect();
        let found = uncertain_entries(&dirs, &[]);
        assert_eq!(found.len(), MAX_UNCERTAIN);
        assert!(
            found
                .iter()
                .all(|u| !u.line.contains('\n') && u.line.len() < 600)
        );
        let raw: Vec<Flag> = (0..50)
            .map(|i| Flag::new(format!("ghost{i}.rs"), "x", "concern"))
            .collect();
        let grounded: Vec<Flag> = raw
            .iter()
            .map(|f| Flag {
                verified: Some(false),
                ..f.clone()
            })
            .collect();
        assert_eq!(numbered_unverified(&raw, &grounded).len(), MAX_UNVERIFIED);
    }

    #[test]
    fn unverified_flags_are_numbered_as_they_were_recorded() {
        let raw = [
            Flag::new("src/ghost.rs", "Leaks a key.", "critical"),
            Flag::new("src/main.rs", "Fine.", "info"),
            Flag::new("old/x.py", "Dead code.", "concern"),
        ];
        let mut grounded = raw.to_vec();
        grounded[0].verified = Some(false);
        grounded[0].severity = "info".into();
        grounded[1].verified = Some(true);
        grounded[2].verified = Some(false);
        let listed = numbered_unverified(&raw, &grounded);
        let shown: Vec<(&str, &str, &str)> = listed
            .iter()
            .map(|(id, flag, line)| (id.as_str(), flag.path.as_str(), line.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "F1",
                    "src/ghost.rs",
                    "F1 [critical] src/ghost.rs: Leaks a key."
                ),
                ("F2", "old/x.py", "F2 [concern] old/x.py: Dead code."),
            ]
        );
    }
}
