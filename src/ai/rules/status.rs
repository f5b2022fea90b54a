//! Whether an investigation that ran to its end is whole, and if not, what
//! is missing: the report's `complete` or `partial` and its note.
//!
//! Every figure comes from what the cache holds once the run is over (the
//! entries, whether a model wrote them), not from what this run did: an
//! unchanged rerun reuses the same entries, so it says the same thing.

use crate::report::InvestigationStatus;

/// What an investigation that ran to its end is missing.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Gaps {
    /// Directories a model read (on a loop of their own or in a unit).
    pub read_by_model: usize,
    /// Of those, the ones whose loop stopped before it was done (its turns,
    /// its context or the money ran out; not those the model declined,
    /// counted in `declined`), relative to the target in tree order, each
    /// with why.
    pub not_fully_read: Vec<(String, String)>,
    /// Directories to investigate still without a summary (the API failed,
    /// the cap stopped the run).
    pub remaining: usize,
    /// Directories whose summary is partial because the model declined.
    pub declined: usize,
    /// Directories summarised from the scan: no model read them.
    pub from_scan: usize,
    /// What to rerun with so that a model reads every directory, when some
    /// were summarised from the scan (see [`Deepen`]).
    pub deepen: Option<Deepen>,
    /// A model wrote the synthesis (not put together without it).
    pub synthesis_by_model: bool,
}

/// The rerun that has a model read the directories left to the scan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Deepen {
    /// The budget, in dollars, that buys a loop for every directory.
    pub budget: f64,
    /// At batch prices: the rerun needs `--batch` too.
    pub batch: bool,
    /// `budget` is millions of tokens: the run planned in a token budget,
    /// and the rerun needs a larger one.
    pub tokens: bool,
}

impl Deepen {
    /// The flags to rerun with. No `--fresh`: a later run with more money
    /// gives loops to the directories left to the scan and keeps what was
    /// paid for (starting over would pay for it again). The budget named
    /// is what a run giving every directory its own loop is projected to
    /// need, so it covers what is left.
    fn flags(&self) -> String {
        if self.tokens {
            // Rounded up to the thousand: it must cover the projection.
            let thousands = (self.budget * 1_000.0 - 1e-9).ceil().max(1.0) as u64;
            return format!("--token-budget {}", thousands * 1_000);
        }
        // Rounded up to the cent: the budget must cover the projection.
        let cents = (self.budget * 100.0 - 1e-9).ceil().max(1.0) / 100.0;
        format!(
            "{}--budget {cents:.2}",
            if self.batch { "--batch " } else { "" }
        )
    }
}

/// How many directories the note names when some were not fully read; the
/// rest are counted.
const NAMED_NOT_FULLY_READ: usize = 5;

/// `complete` when a model read every directory the run was asked to
/// investigate fully (each has a summary, none came from the scan, none was
/// declined, no loop stopped before it was done) and wrote the synthesis;
/// otherwise `partial`, with a note saying what is missing and, for
/// directories left to the scan, how to have a model read them. A loop
/// that ran out of turns or context leaves a partial summary (as in the
/// original), and the note says how many were fully read and names those
/// that were not: the report never calls complete what a loop left
/// unfinished.
pub(crate) fn investigation_status(gaps: &Gaps) -> (InvestigationStatus, Option<String>) {
    let dirs = |n: usize| {
        if n == 1 {
            "1 directory".to_string()
        } else {
            format!("{n} directories")
        }
    };
    let mut missing = Vec::new();
    if !gaps.not_fully_read.is_empty() {
        missing.push(not_fully_read(gaps));
    }
    if gaps.remaining > 0 {
        missing.push(format!(
            "{} left without a summary (run again to resume)",
            dirs(gaps.remaining)
        ));
    }
    if gaps.from_scan > 0 {
        let how = match gaps.deepen {
            Some(deepen) => format!(
                "; rerun with {} to have a model read every directory",
                deepen.flags()
            ),
            None => String::new(),
        };
        missing.push(format!(
            "{} summarised from the scan, not read by a model{how}",
            dirs(gaps.from_scan)
        ));
    }
    if gaps.declined > 0 {
        missing.push(format!("the model declined {}", dirs(gaps.declined)));
    }
    if !gaps.synthesis_by_model {
        missing.push("the summary was put together without the model".to_string());
    }
    if missing.is_empty() {
        (InvestigationStatus::Complete, None)
    } else {
        (InvestigationStatus::Partial, Some(missing.join("; ")))
    }
}

/// `12 of 13 directories fully read; not fully read: stubborn (turn limit
/// reached)`.
fn not_fully_read(gaps: &Gaps) -> String {
    let fully = gaps.read_by_model.saturating_sub(gaps.not_fully_read.len());
    let mut named: Vec<String> = gaps
        .not_fully_read
        .iter()
        .take(NAMED_NOT_FULLY_READ)
        .map(|(dir, why)| format!("{dir} ({why})"))
        .collect();
    let more = gaps
        .not_fully_read
        .len()
        .saturating_sub(NAMED_NOT_FULLY_READ);
    if more > 0 {
        named.push(format!("{more} more"));
    }
    format!(
        "{fully} of {} directories fully read; not fully read: {}",
        gaps.read_by_model,
        named.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole() -> Gaps {
        Gaps {
            synthesis_by_model: true,
            ..Gaps::default()
        }
    }

    #[test]
    fn complete_only_when_a_model_read_everything() {
        assert_eq!(
            investigation_status(&whole()),
            (InvestigationStatus::Complete, None)
        );
        assert_eq!(
            investigation_status(&Gaps {
                remaining: 2,
                declined: 1,
                from_scan: 12,
                deepen: Some(Deepen {
                    budget: 0.8412,
                    batch: false,
                    tokens: false,
                }),
                synthesis_by_model: false,
                ..Gaps::default()
            }),
            (
                InvestigationStatus::Partial,
                Some(
                    "2 directories left without a summary (run again to resume); 12 \
                     directories summarised from the scan, not read by a model; rerun with \
                     --budget 0.85 to have a model read every directory; the model \
                     declined 1 directory; the summary was put together without the model"
                        .to_string()
                )
            )
        );
        for gaps in [
            Gaps {
                synthesis_by_model: false,
                ..whole()
            },
            Gaps {
                remaining: 1,
                ..whole()
            },
            Gaps {
                declined: 1,
                ..whole()
            },
            Gaps {
                from_scan: 1,
                ..whole()
            },
            Gaps {
                read_by_model: 3,
                not_fully_read: vec![("a".into(), "turn limit reached".into())],
                ..whole()
            },
        ] {
            assert_eq!(
                investigation_status(&gaps).0,
                InvestigationStatus::Partial,
                "{gaps:?}"
            );
        }
    }

    /// The note counts the directories fully read and names the others,
    /// five at most.
    #[test]
    fn directories_not_fully_read_are_counted_and_named() {
        let gaps = |n: usize| Gaps {
            read_by_model: 13,
            not_fully_read: (0..n)
                .map(|i| (format!("d{i}"), "turn limit reached".to_string()))
                .collect(),
            ..whole()
        };
        assert_eq!(
            investigation_status(&gaps(1)),
            (
                InvestigationStatus::Partial,
                Some(
                    "12 of 13 directories fully read; not fully read: d0 (turn limit reached)"
                        .to_string()
                )
            )
        );
        let note = investigation_status(&gaps(7)).1.unwrap();
        assert!(note.starts_with("6 of 13 directories fully read; not fully read: d0"));
        assert!(note.ends_with("d4 (turn limit reached), 2 more"), "{note}");
    }

    #[test]
    fn the_rerun_named_covers_the_projection() {
        let flags = |budget, batch| {
            Deepen {
                budget,
                batch,
                tokens: false,
            }
            .flags()
        };
        assert_eq!(flags(3.0, false), "--budget 3.00");
        let tokens = Deepen {
            budget: 1.2341,
            batch: true,
            tokens: true,
        };
        assert_eq!(tokens.flags(), "--token-budget 1235000");
        assert_eq!(flags(3.001, true), "--batch --budget 3.01");
        assert_eq!(flags(0.0001, false), "--budget 0.01");
    }
}
