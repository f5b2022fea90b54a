//! The verdict's one-line facts, which every format shows under the brief:
//! what became of the investigation, its coverage, its cost, what the
//! refinement changed (`--refine`), whether the spending cap cut it short
//! and what the Message Batches API did.
//!
//! Each line is plain text with control characters escaped
//! ([`crate::text`]); a format that gives characters a meaning of its own
//! (Markdown, HTML) escapes the line again as it writes it.

use super::{InvestigationSummary, Report, coverage_line};
use crate::money::Usd;
use crate::text::{escape_line, format_duration, format_thousands};

/// The verdict's lines, in the order every format shows them.
pub(crate) fn verdict_lines(report: &Report) -> Vec<String> {
    let mut lines = vec![report.investigation.line()];
    if let Some(summary) = &report.investigation.summary {
        lines.push(coverage_line(&summary.coverage));
        lines.push(cost_line(summary));
        lines.extend(report.investigation.refinement.as_ref().map(|r| r.line()));
        lines.extend(batch_note(summary));
        lines.extend(cap_note(summary));
    }
    lines
}

/// `Cost: about $0.42 for 37 API requests with claude-x; prompt caching
/// saved $0.10.`, then what the investigation cost in all when that is
/// more. A run that sent nothing says so and what the investigation it
/// read from the cache cost, when, and by which luminos.
pub(crate) fn cost_line(summary: &InvestigationSummary) -> String {
    let all_runs = summary.all_runs.as_ref();
    if summary.api_requests == 0 {
        return match all_runs {
            Some(all) => format!(
                "Cost: this run: {}, from the cache; the investigation cost {} in all \
                 ({} API requests), last paid for on {} by luminos {}.",
                Usd::ZERO,
                all.cost_usd,
                format_thousands(all.api_requests),
                escape_line(all.last_paid_at.get(..10).unwrap_or(&all.last_paid_at)),
                escape_line(&all.luminos_version),
            ),
            None => format!("Cost: this run: {}, from the cache.", Usd::ZERO),
        };
    }
    let mut line = run_cost_line(summary);
    if let Some(all) = all_runs.filter(|all| all.api_requests > summary.api_requests) {
        line.push_str(&format!(
            " The investigation has cost {} in all.",
            all.cost_usd
        ));
    }
    line
}

/// This run's cost, as every run that sent requests says it.
fn run_cost_line(summary: &InvestigationSummary) -> String {
    let saved = if summary.cache_savings_usd >= Usd::new(0.005) {
        format!("; prompt caching saved {}", summary.cache_savings_usd)
    } else {
        String::new()
    };
    let model = if summary.model.is_empty() {
        String::new()
    } else {
        format!(" with {}", escape_line(&summary.model))
    };
    format!(
        "Cost: about {} for {} API request{}{model}{saved}.",
        summary.cost_usd,
        format_thousands(summary.api_requests),
        if summary.api_requests == 1 { "" } else { "s" },
    )
}

/// The line that says `--max-cost` cut the investigation short, so nobody
/// mistakes a partial verdict for a whole one.
pub(crate) fn cap_note(summary: &InvestigationSummary) -> Option<String> {
    summary.cost_cap_hit.then(|| {
        format!(
            "Note: the --max-cost cap was hit; {} director{} left uninvestigated. Run again to resume.",
            summary.directories_remaining,
            if summary.directories_remaining == 1 { "y was" } else { "ies were" }
        )
    })
}

/// The line that says the run went through the Message Batches API.
pub(crate) fn batch_note(summary: &InvestigationSummary) -> Option<String> {
    let batch = summary.batch.as_ref()?;
    let mut failed = Vec::new();
    for (n, what) in [
        (batch.errored, "errored"),
        (batch.canceled, "canceled"),
        (batch.expired, "expired"),
    ] {
        if n > 0 {
            failed.push(format!("{n} {what}"));
        }
    }
    let failed = if failed.is_empty() {
        String::new()
    } else {
        format!(", {}", failed.join(", "))
    };
    let replayed = if batch.replayed > 0 {
        format!(
            "; {} answers reused from an earlier run",
            format_thousands(batch.replayed)
        )
    } else {
        String::new()
    };
    Some(format!(
        "Batch: {} round{}, {} requests ({} answered{failed}), waited {}{replayed}; costs at batch prices.",
        batch.rounds,
        if batch.rounds == 1 { "" } else { "s" },
        format_thousands(batch.requests),
        format_thousands(batch.succeeded),
        format_duration(
            std::time::Duration::try_from_secs_f64(batch.waited_secs.max(0.0)).unwrap_or_default()
        ),
    ))
}
