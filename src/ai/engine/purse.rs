//! The run's money as a hard ceiling: no request is sent unless its worst
//! case fits what is left.
//!
//! Before the session sends a request it asks the purse: the request's
//! prompt, counted as the window counts it (bytes at the catalog's tokens
//! per byte, with its margin), is priced as if every token of it were
//! written to the prompt cache (the dearest way to pay for it), and its
//! `max_tokens` as if every one of them were produced
//! ([`Pricing::worst_case`]). What is left is the budget less what the run
//! has spent, less the worst cases of the requests in flight, less what is
//! held back for later (the synthesis's money while the loops run). A
//! request that does not fit even with the smallest reply
//! ([`MIN_REPLY_TOKENS`]) is not sent ([`OverBudget`]); one that fits with
//! a smaller reply goes with a lower `max_tokens` (a cap, not a target: the
//! model rarely comes near it). So whatever the answers report, the bill
//! stays within the budget, however many loops run at once.
//!
//! Each request in flight holds its worst case ([`Reservation`]) until its
//! answer is counted; it takes at most a share of what is left
//! (`ways`: the requests that may be in flight together), so one request
//! near the end does not starve the others of their smallest reply. A
//! lowered `max_tokens` is a power of two: a little more or less money
//! left does not change the request (a `--batch` rerun finds its kept
//! answer under the same request).
//!
//! Pure arithmetic over a mutex: the spend comes from the caller (the
//! session's tracker), the prices from the catalog. Without a budget it
//! lets everything through unchanged.

use std::sync::Mutex;

use crate::ai::api::cost::Pricing;

pub(crate) use crate::ai::api::settings::MIN_REPLY_TOKENS;

/// Requests a `--batch` run's purse shares what is left between: a round
/// sends the next request of every ready loop at once, however many.
pub(crate) const BATCH_WAYS: usize = 64;

/// A request the money left cannot pay for at its worst case.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error(
    "the budget cannot pay for the next request: it may cost up to ${needed:.4}, and ${left:.4} is left"
)]
pub(crate) struct OverBudget {
    /// The request's worst case with the smallest reply.
    pub needed: f64,
    /// What was left for it.
    pub left: f64,
}

/// The money of one run.
#[derive(Debug)]
pub(crate) struct Purse {
    /// The budget; `None`: no ceiling.
    limit: Option<f64>,
    /// Requests that may be in flight together (at least 1).
    ways: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default, Clone, Copy)]
struct State {
    /// Worst cases of the requests in flight.
    reserved: f64,
    /// Held back for later work.
    held: f64,
}

/// A request's place in the purse while it is in flight: its worst case,
/// given back when dropped (after its answer has been counted as spent).
#[derive(Debug)]
pub(crate) struct Reservation<'a> {
    purse: &'a Purse,
    amount: f64,
    /// The `max_tokens` the request may ask for.
    pub max_tokens: u32,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut state = self.purse.lock();
        state.reserved = (state.reserved - self.amount).max(0.0);
    }
}

/// What one request may ask for, and what it holds: `max_tokens` and its
/// worst case; or why it cannot go. `left` is the money left for it,
/// `ways` the requests that share it.
pub(crate) fn allowance(
    pricing: &Pricing,
    input_tokens: u64,
    writes_cache: bool,
    wanted: u32,
    left: f64,
    ways: usize,
) -> Result<(u32, f64), OverBudget> {
    let smallest = wanted.min(MIN_REPLY_TOKENS);
    let needed = pricing.worst_case(input_tokens, smallest, writes_cache);
    if left.is_nan() || needed > left {
        return Err(OverBudget {
            needed,
            left: left.max(0.0),
        });
    }
    let share = (left / ways.max(1) as f64).max(needed);
    let affordable = pricing
        .affordable_output(input_tokens, writes_cache, share)
        .unwrap_or(smallest);
    let max_tokens = if affordable >= wanted {
        wanted
    } else {
        // The largest power of two it affords, never below the smallest.
        let power = 1u32 << (31 - affordable.max(1).leading_zeros());
        power.clamp(smallest, wanted)
    };
    Ok((
        max_tokens,
        pricing.worst_case(input_tokens, max_tokens, writes_cache),
    ))
}

impl Purse {
    /// A purse of `limit` dollars (none: no ceiling) for requests of which
    /// up to `ways` may be in flight together.
    pub(crate) fn new(limit: Option<f64>, ways: usize) -> Purse {
        Purse {
            limit,
            ways: ways.max(1),
            state: Mutex::new(State::default()),
        }
    }

    /// Keep `amount` back from the requests that come next (the synthesis's
    /// money while the loops run), replacing what was held.
    pub(crate) fn hold(&self, amount: f64) {
        self.lock().held = amount.max(0.0);
    }

    /// What is held back.
    pub(crate) fn held(&self) -> f64 {
        self.lock().held
    }

    /// What the next request may use, after `spent`: `None` without a
    /// budget.
    #[cfg(test)]
    pub(crate) fn left(&self, spent: f64) -> Option<f64> {
        let state = *self.lock();
        self.limit
            .map(|limit| limit - spent - state.reserved - state.held)
    }

    /// Make room for a request of `input_tokens` (written to the cache
    /// when `writes_cache`) that wants `wanted` tokens of reply, after
    /// `spent`; see [`allowance`].
    pub(crate) fn reserve(
        &self,
        spent: f64,
        pricing: &Pricing,
        input_tokens: u64,
        writes_cache: bool,
        wanted: u32,
    ) -> Result<Reservation<'_>, OverBudget> {
        let Some(limit) = self.limit else {
            return Ok(Reservation {
                purse: self,
                amount: 0.0,
                max_tokens: wanted,
            });
        };
        let mut state = self.lock();
        let left = limit - spent - state.reserved - state.held;
        let (max_tokens, amount) =
            allowance(pricing, input_tokens, writes_cache, wanted, left, self.ways)?;
        state.reserved += amount;
        Ok(Reservation {
            purse: self,
            amount,
            max_tokens,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sonnet() -> Pricing {
        Pricing::for_model("claude-sonnet-4-5")
    }

    #[test]
    fn a_request_goes_whole_while_money_lasts_then_smaller_then_not_at_all() {
        let p = sonnet();
        let full = p.worst_case(10_000, 32_768, true);
        // Plenty: the reply it wants.
        assert_eq!(
            allowance(&p, 10_000, true, 32_768, 10.0, 1),
            Ok((32_768, full))
        );
        // Less: a smaller reply, within what is left.
        let (max, held) = allowance(&p, 10_000, true, 32_768, 0.1, 1).unwrap();
        assert!((MIN_REPLY_TOKENS..32_768).contains(&max), "{max}");
        assert!(max.is_power_of_two(), "{max}");
        assert!(held <= 0.1, "{held}");
        // A little more or less money: the same request.
        let (again, _) = allowance(&p, 10_000, true, 32_768, 0.1003, 1).unwrap();
        assert_eq!(again, max);
        // Not even the smallest reply.
        let needed = p.worst_case(10_000, MIN_REPLY_TOKENS, true);
        assert_eq!(
            allowance(&p, 10_000, true, 32_768, needed - 1e-6, 1),
            Err(OverBudget {
                needed,
                left: needed - 1e-6
            })
        );
        // Exactly the smallest reply.
        assert_eq!(
            allowance(&p, 10_000, true, 32_768, needed, 1).map(|(m, _)| m),
            Ok(MIN_REPLY_TOKENS)
        );
    }

    #[test]
    fn a_request_takes_its_share_so_others_keep_theirs() {
        let p = sonnet();
        let left = p.worst_case(10_000, 8_000, true) * 4.0;
        let (alone, _) = allowance(&p, 10_000, true, 32_768, left, 1).unwrap();
        let (shared, held) = allowance(&p, 10_000, true, 32_768, left, 4).unwrap();
        assert!(shared < alone, "{shared} {alone}");
        assert!(held <= left / 4.0 + 1e-12);
    }

    #[test]
    fn reservations_hold_their_worst_case_until_dropped() {
        let p = sonnet();
        let one = p.worst_case(10_000, 4_096, true);
        let purse = Purse::new(Some(one * 2.75), 1);
        let a = purse.reserve(0.0, &p, 10_000, true, 4_096).unwrap();
        let b = purse.reserve(0.0, &p, 10_000, true, 4_096).unwrap();
        assert_eq!((a.max_tokens, b.max_tokens), (4_096, 4_096));
        // Three quarters of one are left: a smaller reply.
        let c = purse.reserve(0.0, &p, 10_000, true, 4_096).unwrap();
        assert!(c.max_tokens < 4_096);
        assert!(purse.reserve(0.0, &p, 10_000, true, 4_096).is_err());
        drop((a, b, c));
        assert!((purse.left(0.0).unwrap() - one * 2.75).abs() < 1e-12);
        // What was spent and what is held are not there to reserve.
        purse.hold(one * 1.75);
        assert!(purse.reserve(one, &p, 10_000, true, 4_096).is_err());
        purse.hold(0.0);
        assert!(purse.reserve(one, &p, 10_000, true, 4_096).is_ok());
    }

    #[test]
    fn without_a_budget_everything_goes_as_asked() {
        let purse = Purse::new(None, 4);
        let r = purse
            .reserve(1e9, &sonnet(), 1_000_000, true, 32_768)
            .unwrap();
        assert_eq!(r.max_tokens, 32_768);
        assert_eq!(purse.left(5.0), None);
    }
}
