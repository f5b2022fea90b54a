//! Whether an investigation that ran to its end is whole, and if not, what
//! is missing: the report's `complete` or `partial` and its note.

use crate::report::InvestigationStatus;

/// Whether an investigation that ran to its end is whole: `complete` when
/// every planned directory has a summary, the model investigated each one
/// it was asked to, and the model wrote the synthesis; otherwise `partial`,
/// with a note saying what is missing. (A loop that ran out of turns or
/// context leaves a partial summary by design, as in the original; that
/// alone does not make the investigation partial.)
pub fn investigation_status(
    remaining: usize,
    declined: usize,
    synthesis_submitted: bool,
) -> (InvestigationStatus, Option<String>) {
    let dirs = |n: usize| {
        if n == 1 {
            "1 directory".to_string()
        } else {
            format!("{n} directories")
        }
    };
    let mut missing = Vec::new();
    if remaining > 0 {
        missing.push(format!(
            "{} left without a summary (run again to resume)",
            dirs(remaining)
        ));
    }
    if declined > 0 {
        missing.push(format!("the model declined {}", dirs(declined)));
    }
    if !synthesis_submitted {
        missing.push("the summary was put together without the model".to_string());
    }
    if missing.is_empty() {
        (InvestigationStatus::Complete, None)
    } else {
        (InvestigationStatus::Partial, Some(missing.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_only_when_nothing_is_missing() {
        assert_eq!(
            investigation_status(0, 0, true),
            (InvestigationStatus::Complete, None)
        );
        assert_eq!(
            investigation_status(2, 1, false),
            (
                InvestigationStatus::Partial,
                Some(
                    "2 directories left without a summary (run again to resume); the model \
                     declined 1 directory; the summary was put together without the model"
                        .to_string()
                )
            )
        );
        assert_eq!(
            investigation_status(0, 0, false).0,
            InvestigationStatus::Partial
        );
        assert_eq!(
            investigation_status(1, 0, true).0,
            InvestigationStatus::Partial
        );
    }
}
