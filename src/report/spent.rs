//! The last money line of a run that investigated, on stderr: what it
//! spent, of what budget, on how many requests, and at what prices when not
//! the catalog's list prices ([`spent_line`]). Dollars are written by
//! [`Usd`].

use super::{Investigation, InvestigationStatus};
use crate::money::Usd;
use crate::text::format_thousands;

/// What the dollars of a run are priced at, when not the catalog's list
/// prices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PriceBasis {
    /// The model is not in the catalog: a stand-in's prices.
    pub assumed: bool,
    /// `--batch`: the Message Batches API's prices.
    pub batch: bool,
}

impl PriceBasis {
    /// ` (at assumed batch prices)`, or nothing at list prices.
    fn words(self) -> &'static str {
        match (self.assumed, self.batch) {
            (false, false) => "",
            (false, true) => " (at batch prices)",
            (true, false) => " (at assumed prices)",
            (true, true) => " (at assumed batch prices)",
        }
    }
}

/// The last line of a run that investigated: what it spent, of what
/// budget, on how many requests, and at what prices when not the
/// catalog's list prices.
pub(crate) fn spent_line(investigation: &Investigation, prices: PriceBasis) -> String {
    let (cost, requests, budget) = match (&investigation.summary, &investigation.spent) {
        (Some(summary), _) => (summary.cost_usd, summary.api_requests, summary.budget_usd),
        (None, Some(spent)) => (spent.cost_usd, spent.api_requests, None),
        (None, None) => (Usd::ZERO, 0, None),
    };
    if requests == 0 {
        return match investigation.summary {
            Some(_) => format!("Spent: {}; everything came from the cache.", Usd::ZERO),
            None => format!("Spent: {}; no request was sent.", Usd::ZERO),
        };
    }
    let of = budget.map(|b| format!(" of {b}")).unwrap_or_default();
    let failed = if investigation.status == InvestigationStatus::Failed {
        " before the investigation failed"
    } else {
        ""
    };
    format!(
        "Spent: {}{of} on {} API request{}{}{failed}.",
        cost,
        format_thousands(requests),
        if requests == 1 { "" } else { "s" },
        prices.words(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{InvestigationSummary, Spent};

    #[test]
    fn the_spent_line_says_what_was_spent_of_what() {
        let ran = |cost_usd, api_requests, budget_usd: Option<f64>| Investigation {
            status: InvestigationStatus::Complete,
            summary: Some(InvestigationSummary {
                cost_usd: Usd::new(cost_usd),
                api_requests,
                budget_usd: budget_usd.map(Usd::new),
                ..InvestigationSummary::default()
            }),
            ..Investigation::default()
        };
        assert_eq!(
            spent_line(&ran(0.4123, 37, Some(5.0)), PriceBasis::default()),
            "Spent: $0.41 of $5.00 on 37 API requests."
        );
        assert_eq!(
            spent_line(&ran(0.01, 1, None), PriceBasis::default()),
            "Spent: $0.01 on 1 API request."
        );
        assert_eq!(
            spent_line(&ran(0.0, 0, Some(5.0)), PriceBasis::default()),
            "Spent: $0.00; everything came from the cache."
        );
        let failed = Investigation {
            spent: Some(Spent {
                api_requests: 3,
                cost_usd: Usd::new(0.02),
                ..Spent::default()
            }),
            ..Investigation::failed("the API is overloaded")
        };
        assert_eq!(
            spent_line(&failed, PriceBasis::default()),
            "Spent: $0.02 on 3 API requests before the investigation failed."
        );
        let at =
            |assumed, batch| spent_line(&ran(0.5, 2, Some(1.0)), PriceBasis { assumed, batch });
        assert_eq!(
            at(true, true),
            "Spent: $0.50 of $1.00 on 2 API requests (at assumed batch prices)."
        );
        assert!(at(false, true).ends_with("requests (at batch prices)."));
        assert!(at(true, false).ends_with("requests (at assumed prices)."));
        assert_eq!(
            spent_line(&Investigation::failed("no key"), PriceBasis::default()),
            "Spent: $0.00; no request was sent."
        );
    }
}
