//! What a run that does not reach its end returns and says: an
//! investigation that failed (before or after spending), or one Ctrl-C
//! interrupted, with what it had spent.
//! It decides nothing about when a run stops: [`super::investigate`] does.

use crate::ai::Outcome;
use crate::ai::api::cost::TokenTracker;
use crate::ai::batch_mode;
use crate::cache::{Cache, EntryKind};
use crate::config::Config;
use crate::progress::Progress;
use crate::report::{Investigation, InvestigationStatus, Spent};

/// The outcome of an investigation that stopped on `error` after the
/// requests `tracker` counted, not yet said.
pub(super) fn failure(error: &str, tracker: Option<&TokenTracker>) -> Outcome {
    let mut outcome = Outcome {
        status: Investigation::failed(&crate::ai::api::error::one_line_excerpt(error, 500)),
        ..Outcome::default()
    };
    if let Some(tracker) = tracker {
        outcome = with_spent(outcome, tracker);
    }
    outcome
}

/// `outcome`, saying what `tracker` counted when the run made any request.
fn with_spent(mut outcome: Outcome, tracker: &TokenTracker) -> Outcome {
    let totals = tracker.totals();
    if totals.requests > 0 {
        outcome.status.spent = Some(Spent {
            api_requests: totals.requests,
            tokens: totals.usage,
            cost_usd: tracker.cost(),
        });
    }
    outcome
}

/// The outcome of an investigation the budget is too small for: nothing
/// was sent, the scan report stands, and `note` says what budget would do.
pub(super) fn too_small(note: String) -> Outcome {
    Outcome {
        status: Investigation {
            status: InvestigationStatus::Partial,
            note: Some(note),
            ..Investigation::default()
        },
        ..Outcome::default()
    }
}

/// The outcome of an investigation that stopped on `error` before any
/// request, said once on stderr.
pub(super) fn failed(progress: &Progress, error: &str) -> Outcome {
    let outcome = failure(error, None);
    progress.println(&outcome.status.line());
    outcome
}

/// Resolves on Ctrl-C. Should the handler fail to install, it never resolves,
/// leaving the default behaviour (the process ends; the cache resumes).
pub(super) async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// What an interrupted run says and returns: what it had spent too, since
/// no report follows.
pub(super) fn interrupted_outcome(
    config: &Config,
    cache: &Cache,
    progress: &Progress,
    tracker: &TokenTracker,
) -> Outcome {
    let done = cache.list_entries(EntryKind::Dir).len();
    progress.println(&format!(
        "Interrupted{}. {done} directory summaries are saved in {}/; run the same command again \
         (without --fresh) to resume where this run stopped.",
        spent_words(tracker),
        cache.dir().display()
    ));
    if let Some(line) = batch_mode::in_flight_line(config, cache) {
        progress.println(&line);
    }
    let outcome = Outcome {
        interrupted: true,
        status: Investigation {
            status: InvestigationStatus::Partial,
            note: Some("interrupted".to_string()),
            ..Investigation::default()
        },
        ..Outcome::default()
    };
    with_spent(outcome, tracker)
}

/// ` after N API requests (about $X)`, or nothing before the first.
fn spent_words(tracker: &TokenTracker) -> String {
    let requests = tracker.totals().requests;
    match requests {
        0 => String::new(),
        1 => format!(" after 1 API request (about {})", tracker.cost()),
        n => format!(" after {n} API requests (about {})", tracker.cost()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::api::Usage;

    #[test]
    fn what_was_spent_is_said_in_dollars_once() {
        let tracker = TokenTracker::new("claude-sonnet-4-5");
        assert_eq!(spent_words(&tracker), "");
        // 10,000 in at $3 and 1,000 out at $15 a million: $0.045.
        let usage = Usage {
            input_tokens: 10_000,
            output_tokens: 1_000,
            ..Usage::default()
        };
        tracker.record(&usage);
        assert_eq!(spent_words(&tracker), " after 1 API request (about $0.04)");
        tracker.record(&usage);
        assert_eq!(spent_words(&tracker), " after 2 API requests (about $0.09)");
    }
}
