//! Phase 3 as the user sees it: which summaries still hold and which are
//! investigated again, and why (said on stderr: in counts, or directory by
//! directory with `-v`). The directories and what
//! the cache knows of them are gathered by [`crate::ai::situation`] (phase 2,
//! shared with `--estimate`); the rule itself is pure and lives in
//! [`crate::ai::rules::fingerprint`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::ai::rules::discover::relative;
use crate::ai::rules::fingerprint::{DirState, Freshness, Reason, classify};
use crate::progress::Progress;

/// Phase 3: split into directories whose summaries still hold and those to
/// investigate (both leaf-first), and say which and why.
pub(crate) fn partition(
    all_dirs: &[PathBuf],
    states: &HashMap<PathBuf, DirState>,
    target: &Path,
    progress: &Progress,
) -> Freshness {
    let freshness = classify(all_dirs, states);
    // Each directory by name is the full trace (`-v`); by default the
    // counts say it in a line or two.
    for dir in &freshness.fresh {
        progress.ai_detail(&format!("Skipping (cached): {}/", relative(target, dir)));
    }
    for (dir, reason) in &freshness.stale {
        if let Some(why) = why_again(*reason) {
            progress.ai_detail(&format!(
                "Investigating again ({why}): {}/",
                relative(target, dir)
            ));
        }
    }
    // How many are investigated, summarised from the scan or kept is the
    // decision's to say (`report_decision`), as `--estimate` says it.
    if !progress.is_verbose()
        && let Some(line) = again_line(&freshness)
    {
        progress.ai(&line);
    }
    freshness
}

/// Why a directory with a summary is investigated again; `None` for one
/// that never had a summary.
fn why_again(reason: Reason) -> Option<&'static str> {
    match reason {
        Reason::New => None,
        Reason::Changed => Some("its contents changed"),
        Reason::Language => Some("its summary is in another language"),
        Reason::ChildChanged => Some("a directory below it is investigated again"),
    }
}

/// `Investigating again: 3 directories whose contents changed, 2 above
/// them.`, or nothing when no summary is investigated again.
fn again_line(freshness: &Freshness) -> Option<String> {
    let count = |wanted: Reason| {
        freshness
            .stale
            .iter()
            .filter(|(_, reason)| *reason == wanted)
            .count()
    };
    let (changed, above) = (count(Reason::Changed), count(Reason::ChildChanged));
    let language = count(Reason::Language);
    let mut parts = Vec::new();
    if changed > 0 {
        parts.push(format!("{changed} whose contents changed",));
    }
    if language > 0 {
        parts.push(format!("{language} whose summary is in another language"));
    }
    if above > 0 {
        parts.push(format!("{above} above a directory investigated again"));
    }
    (!parts.is_empty()).then(|| format!("Investigating again: {}.", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directories_investigated_again_are_counted_in_one_line() {
        let stale = |reasons: &[Reason]| Freshness {
            fresh: Vec::new(),
            stale: reasons
                .iter()
                .enumerate()
                .map(|(n, reason)| (PathBuf::from(format!("/t/{n}")), *reason))
                .collect(),
        };
        assert_eq!(again_line(&stale(&[Reason::New])), None);
        assert_eq!(
            again_line(&stale(&[
                Reason::Changed,
                Reason::ChildChanged,
                Reason::ChildChanged
            ])),
            Some(
                "Investigating again: 1 whose contents changed, 2 above a directory \
                 investigated again."
                    .to_string()
            )
        );
        assert_eq!(
            again_line(&stale(&[Reason::ChildChanged])),
            Some("Investigating again: 1 above a directory investigated again.".to_string())
        );
    }
}
