//! The money line a run prints on stderr before its investigation: the
//! budget before anything is spent ([`budget_line`]). What was spent is the
//! report's to say (its `spent_line`); the live line's `$0.41 of $5.00` is
//! the board's. Dollars are written by [`Usd`].

use crate::money::Usd;

/// The first line of a run that may spend: its ceiling, and how to preview
/// or change it.
pub(crate) fn budget_line(budget: Option<Usd>) -> String {
    let how = match budget {
        Some(_) => "preview with --estimate; change with --budget",
        None => "--budget none; preview the cost with --estimate",
    };
    format!("Budget: {} ({how})", Usd::limit(budget))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_line_says_the_ceiling_and_the_way_to_change_it() {
        assert_eq!(
            budget_line(Some(Usd::new(5.0))),
            "Budget: up to $5.00 (preview with --estimate; change with --budget)"
        );
        assert!(budget_line(None).starts_with("Budget: no ceiling"));
        assert_eq!(
            budget_line(None),
            "Budget: no ceiling (--budget none; preview the cost with --estimate)"
        );
    }
}
