//! US dollars: the one type every amount of real money is carried in
//! ([`Usd`]), and the one place that writes dollars for people.
//!
//! Why a type: a budget, what a run spent, what a question cost and what
//! the report records are all dollars, while other numbers of the same
//! shape are not (a price per million tokens is a rate; under a token
//! budget the plan counts millions of tokens, see
//! [`crate::ai::engine::plan_money`]). As a bare `f64` any of them could be
//! passed for another; as [`Usd`] the compiler stops a dollar amount from
//! being mixed with a plan's amount or a rate by accident, and the few
//! places that need the raw number say so ([`Usd::as_f64`]).
//!
//! How dollars are written, in one place:
//! - [`Usd`]'s `Display`: cents, `$0.41`, `$5.00` (every money line: the
//!   budget, the live spend, what was spent, what an investigation cost);
//! - [`Usd::precise`]: a hundredth of a cent, `$0.0123`, where a figure is
//!   small enough that cents would hide it (a request's worst case, a
//!   refinement's cost);
//! - [`Usd::flag_value`]: the number a `--budget` flag takes, `0.09`;
//! - [`Usd::limit`]: a budget as a ceiling, `up to $5.00` (never more
//!   than cents), or `no ceiling`.
//!
//! JSON: [`Usd`] serializes as the bare number it holds (transparent), so
//! every report, cache file and `--json` output reads as it did when money
//! was an `f64`; [`Usd::to_hundredth_cent`] is the rounding `--estimate`'s
//! JSON applies.
//!
//! Edges: the bottom of the crate; it imports nothing of luminos, so
//! config, the engine, the rules, the report and the cache can all use it.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Neg, Sub};

use serde::{Deserialize, Serialize};

/// An amount of US dollars (a cost, a budget, what is left of one).
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Usd(f64);

impl Usd {
    /// Nothing.
    pub const ZERO: Usd = Usd(0.0);
    /// More than any budget: what "no ceiling" compares as.
    pub const UNLIMITED: Usd = Usd(f64::INFINITY);

    /// `dollars` US dollars.
    pub const fn new(dollars: f64) -> Usd {
        Usd(dollars)
    }

    /// The number of dollars, for the few places that need the raw figure
    /// (a ratio, a comparison with a rate, a JSON edge).
    pub const fn as_f64(self) -> f64 {
        self.0
    }

    /// The smaller of the two.
    pub fn min(self, other: Usd) -> Usd {
        Usd(self.0.min(other.0))
    }

    /// Rounded to a hundredth of a cent, as `--estimate`'s JSON keeps
    /// dollars readable.
    pub fn to_hundredth_cent(self) -> Usd {
        Usd((self.0 * 10_000.0).round() / 10_000.0)
    }

    /// To a hundredth of a cent: `$0.0123`.
    pub fn precise(self) -> Precise {
        Precise(self)
    }

    /// The number a dollar flag takes: `0.09`, to the cent.
    pub fn flag_value(self) -> String {
        format!("{:.2}", self.0)
    }

    /// A budget as a person reads it: `up to $5.00` (to the cent), or `no
    /// ceiling`.
    pub fn limit(budget: Option<Usd>) -> String {
        match budget {
            Some(budget) => format!("up to {budget}"),
            None => "no ceiling".to_string(),
        }
    }
}

/// Cents: `$0.41`.
impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${:.2}", self.0)
    }
}

/// An amount written to a hundredth of a cent ([`Usd::precise`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precise(Usd);

impl fmt::Display for Precise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${:.4}", self.0.0)
    }
}

impl Add for Usd {
    type Output = Usd;
    fn add(self, other: Usd) -> Usd {
        Usd(self.0 + other.0)
    }
}

impl AddAssign for Usd {
    fn add_assign(&mut self, other: Usd) {
        self.0 += other.0;
    }
}

impl Sub for Usd {
    type Output = Usd;
    fn sub(self, other: Usd) -> Usd {
        Usd(self.0 - other.0)
    }
}

/// How many times one amount goes into another: a ratio, not money.
impl Div for Usd {
    type Output = f64;
    fn div(self, other: Usd) -> f64 {
        self.0 / other.0
    }
}

impl Neg for Usd {
    type Output = Usd;
    fn neg(self) -> Usd {
        Usd(-self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_are_written_to_the_cent_or_to_a_hundredth_of_one() {
        assert_eq!(Usd::new(0.4123).to_string(), "$0.41");
        assert_eq!(Usd::new(5.0).to_string(), "$5.00");
        assert_eq!(Usd::new(0.005).to_string(), format!("${:.2}", 0.005));
        assert_eq!(Usd::ZERO.to_string(), "$0.00");
        assert_eq!(Usd::new(0.01234).precise().to_string(), "$0.0123");
        assert_eq!(Usd::new(1.5).precise().to_string(), "$1.5000");
        assert_eq!(Usd::new(0.094).flag_value(), "0.09");
        // Width and padding are the caller's: the text is the same.
        assert_eq!(format!("{}", Usd::new(12.345)), "$12.35");
    }

    #[test]
    fn a_budget_is_money_to_the_cent_or_no_ceiling() {
        assert_eq!(Usd::limit(Some(Usd::new(0.5))), "up to $0.50");
        assert_eq!(Usd::limit(Some(Usd::new(0.123456))), "up to $0.12");
        assert_eq!(Usd::limit(None), "no ceiling");
    }

    #[test]
    fn rounding_keeps_the_json_readable() {
        // --estimate's JSON: to a hundredth of a cent, as it always was.
        assert_eq!(Usd::new(0.123456).to_hundredth_cent(), Usd::new(0.1235));
        assert_eq!(Usd::new(0.12344).to_hundredth_cent(), Usd::new(0.1234));
        assert_eq!(Usd::new(2.0).to_hundredth_cent(), Usd::new(2.0));
        let cost = 0.014_059_4_f64;
        assert_eq!(
            Usd::new(cost).to_hundredth_cent().as_f64(),
            (cost * 10_000.0).round() / 10_000.0
        );
        // The report's and the cache's figures are not rounded at all.
        let text = serde_json::to_string(&Usd::new(cost)).unwrap();
        assert_eq!(text, "0.0140594");
    }

    #[test]
    fn json_holds_the_bare_number_both_ways() {
        let amount = Usd::new(0.123_456_789_012_345_6);
        let text = serde_json::to_string(&amount).unwrap();
        assert_eq!(
            text,
            serde_json::to_string(&0.123_456_789_012_345_6).unwrap()
        );
        assert_eq!(serde_json::from_str::<Usd>(&text).unwrap(), amount);
        assert_eq!(serde_json::to_string(&Usd::new(5.0)).unwrap(), "5.0");
        assert_eq!(serde_json::to_string(&Some(Usd::new(0.6))).unwrap(), "0.6");
        assert_eq!(serde_json::from_str::<Usd>("5").unwrap(), Usd::new(5.0));
        assert_eq!(
            serde_json::to_string(&None::<Usd>).unwrap(),
            serde_json::to_string(&None::<f64>).unwrap()
        );
        assert!(serde_json::from_str::<Usd>("\"5\"").is_err());
    }

    #[test]
    fn arithmetic_reads_as_dollars() {
        let a = Usd::new(1.5);
        let b = Usd::new(0.25);
        assert_eq!(a + b, Usd::new(1.75));
        assert_eq!(a - b, Usd::new(1.25));
        assert_eq!(-b, Usd::new(-0.25));
        assert_eq!(a / b, 6.0);
        let mut c = a;
        c += b;
        assert_eq!(c, Usd::new(1.75));
        assert!(b < a && a.min(b) == b);
        assert!(Usd::new(1e9) < Usd::UNLIMITED);
        assert_eq!(Usd::new(2.0).min(Usd::UNLIMITED), Usd::new(2.0));
    }
}
