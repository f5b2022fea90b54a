//! Summaries at odds with a finding: what the refinement is shown as
//! contradictions.
//!
//! Two summaries that name the same file and disagree about it are hard to
//! tell apart from two that describe it in different words. What can be
//! told for sure, by plain code, is silence where a finding calls for
//! words; so the detector looks for two kinds:
//! - **a verdict silent about a critical finding**: a critical flag whose
//!   path is in the tree, and a brief and detailed analysis that name
//!   neither that path, nor its file name, nor its directory;
//! - **a parent silent about a child's finding**: a critical or concern
//!   flag whose path is in the tree, in a directory whose parent's summary
//!   (written by a model) names neither that directory nor the flagged
//!   file.
//!
//! The round is then asked to check the finding against the files and say
//! what the report should. Pure, deterministic (by severity, then path),
//! bounded to [`MAX_AT_ODDS`].

use std::collections::{HashMap, HashSet};

use super::inputs::{QUOTE_BYTES, quote};
use crate::cache::DirEntry;
use crate::report::{Flag, severity_rank};
use crate::text::escape_line;

/// At most this many are listed.
pub(crate) const MAX_AT_ODDS: usize = 12;

/// The last component of a target-relative path.
fn last(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The directory holding `path` (`.` for the target).
fn parent(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some((dir, _)) => dir,
        None => ".",
    }
}

/// Whether `text` (lowercase) names any of `names` (not empty, not `.`).
fn names_any(text: &str, names: &[&str]) -> bool {
    names
        .iter()
        .filter(|name| !name.is_empty() && **name != ".")
        .any(|name| text.contains(&name.to_lowercase()))
}

/// The contradictions between `flags` (grounded: `verified` set, paths
/// written relative to the target) and the summaries: the verdict
/// (`brief`, `detailed`) and `dirs` (dir entries of the directories that
/// exist). One line each.
pub(crate) fn at_odds(
    brief: &str,
    detailed: &str,
    dirs: &[DirEntry],
    flags: &[Flag],
) -> Vec<String> {
    let mut odds = AtOdds {
        summaries: summaries_by_path(dirs),
        verdict: format!("{brief}\n{detailed}").to_lowercase(),
        seen: HashSet::new(),
        found: Vec::new(),
    };
    for flag in weighty_findings(flags) {
        let path = flag.path.trim().trim_end_matches('/');
        let finding = quote(&flag.finding, QUOTE_BYTES);
        let is_dir = odds.summaries.contains_key(path);
        let dir = if is_dir { path } else { parent(path) };
        odds.verdict_silent(flag, path, dir, &finding);
        if dir != "." {
            odds.parent_silent(flag, path, dir, &finding);
        }
    }
    odds.found.truncate(MAX_AT_ODDS);
    odds.found
}

/// Each dir entry of `dirs` by its target-relative path (`.` for the
/// target).
fn summaries_by_path(dirs: &[DirEntry]) -> HashMap<String, &DirEntry> {
    dirs.iter()
        .map(|entry| {
            let rel = match entry.relative_path.as_str() {
                "" => ".",
                rel => rel,
            };
            (rel.trim_end_matches('/').to_string(), entry)
        })
        .collect()
}

/// The verified critical and concern findings about a path in the tree
/// (not the target as a whole), the most severe first, then by path.
fn weighty_findings(flags: &[Flag]) -> Vec<&Flag> {
    let mut ordered: Vec<&Flag> = flags
        .iter()
        .filter(|flag| flag.verified == Some(true))
        .filter(|flag| {
            let path = flag.path.trim();
            !path.is_empty() && path != "." && !path.eq_ignore_ascii_case("general")
        })
        .filter(|flag| severity_rank(&flag.severity) <= 1)
        .collect();
    ordered.sort_by(|a, b| {
        severity_rank(&a.severity)
            .cmp(&severity_rank(&b.severity))
            .then_with(|| a.path.cmp(&b.path))
    });
    ordered
}

/// The detector's state: the summaries it reads, and the lines found so
/// far, each silence listed once.
struct AtOdds<'a> {
    summaries: HashMap<String, &'a DirEntry>,
    /// The brief and detailed analysis, lowercase.
    verdict: String,
    /// (whose summary is silent, about what), so each is listed once.
    seen: HashSet<(String, String)>,
    found: Vec<String>,
}

impl AtOdds<'_> {
    /// A critical `flag` about `path` (in `dir`) that the verdict names
    /// neither by path, file name nor directory.
    fn verdict_silent(&mut self, flag: &Flag, path: &str, dir: &str, finding: &str) {
        if flag.severity == "critical"
            && !names_any(&self.verdict, &[path, last(path), dir, last(dir)])
            && self.seen.insert(("verdict".to_string(), path.to_string()))
        {
            self.found.push(format!(
                "- The report does not mention {}, where a critical finding was raised: {finding}",
                escape_line(path)
            ));
        }
    }

    /// A `flag` about `path` in `dir` (not the target) that the model-written
    /// summary of `dir`'s parent names neither by directory nor file name.
    fn parent_silent(&mut self, flag: &Flag, path: &str, dir: &str, finding: &str) {
        let above = parent(dir);
        let Some(entry) = self.summaries.get(above).filter(|entry| !entry.mechanical) else {
            return;
        };
        let summary = entry.summary.to_lowercase();
        if !names_any(&summary, &[last(dir), last(path)])
            && self.seen.insert((above.to_string(), dir.to_string()))
        {
            let parent_shown = if above == "." {
                "the target's summary (.)".to_string()
            } else {
                format!("the summary of {}/", escape_line(above))
            };
            self.found.push(format!(
                "- {} does not mention {}/, where a {} finding was raised ({}: {finding})",
                capitalised(&parent_shown),
                escape_line(dir),
                escape_line(&flag.severity),
                escape_line(path)
            ));
        }
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn verified(path: &str, severity: &str, finding: &str) -> Flag {
        Flag {
            verified: Some(true),
            ..Flag::new(path, finding, severity)
        }
    }

    fn dirs() -> Vec<DirEntry> {
        [
            json!({"relative_path": ".", "summary": "A web service with src/ and docs/."}),
            json!({"relative_path": "src", "summary": "The server code and its helpers."}),
            json!({"relative_path": "src/auth", "summary": "Login and sessions."}),
            json!({"relative_path": "src/store", "summary": "The database layer."}),
            json!({"relative_path": "vendor", "summary": "1 file.", "mechanical": true}),
        ]
        .into_iter()
        .map(|value| DirEntry::from_value(value).unwrap())
        .collect()
    }

    #[test]
    fn silence_about_a_finding_is_found_in_the_verdict_and_in_a_parent() {
        let flags = [
            verified(
                "src/auth/keys.py",
                "critical",
                "A private key is committed.",
            ),
            verified("src/store/db.py", "concern", "SQL is built from strings."),
            verified(
                "vendor/lib/x.js",
                "critical",
                "An old copy with a known hole.",
            ),
        ];
        let found = at_odds(
            "A web service.",
            "The store in src/store keeps sessions; vendor/lib is third-party.",
            &dirs(),
            &flags,
        );
        assert_eq!(
            found,
            [
                "- The report does not mention src/auth/keys.py, where a critical finding was \
                 raised: A private key is committed.",
                "- The summary of src/ does not mention src/auth/, where a critical finding was \
                 raised (src/auth/keys.py: A private key is committed.)",
                "- The summary of src/ does not mention src/store/, where a concern finding was \
                 raised (src/store/db.py: SQL is built from strings.)",
            ]
        );
    }

    #[test]
    fn words_for_the_finding_unverified_flags_and_info_are_not_contradictions() {
        let flags = [
            // The verdict names the file and the parent names the directory.
            verified("src/auth/keys.py", "critical", "A private key."),
            // Not found in the tree: the round sees it among the unverified.
            Flag {
                verified: Some(false),
                ..Flag::new("src/ghost.py", "x", "critical")
            },
            verified("src/auth/login.py", "info", "Uses bcrypt."),
            verified("general", "critical", "No tests."),
        ];
        let mut dirs = dirs();
        dirs[1].summary = "The server: auth (login) and store.".into();
        assert!(at_odds("Mind keys.py.", "", &dirs, &flags).is_empty());
    }

    #[test]
    fn a_flag_on_a_directory_is_about_that_directory() {
        let flags = [verified("src/store", "concern", "No migrations.")];
        let found = at_odds("store matters", "", &dirs(), &flags);
        assert_eq!(
            found,
            [
                "- The summary of src/ does not mention src/store/, where a concern finding was \
              raised (src/store: No migrations.)"
            ]
        );
        // A top-level directory's parent is the target.
        let flags = [verified(
            "docs/secrets.txt",
            "concern",
            "Passwords in docs.",
        )];
        let mut dirs = dirs();
        dirs[0].summary = "A web service.".into();
        let found = at_odds("secrets.txt", "", &dirs, &flags);
        assert_eq!(
            found,
            [
                "- The target's summary (.) does not mention docs/, where a concern finding was \
              raised (docs/secrets.txt: Passwords in docs.)"
            ]
        );
    }
}
