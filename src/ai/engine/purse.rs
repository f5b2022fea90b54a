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
//! answer is counted. How much of what is left one request may take is its
//! conversation's [`Pace`]: a request of the run's work takes at most a
//! share (`ways`: the requests that may be in flight together), so one
//! request near the end does not starve the others of their smallest reply;
//! a conversation that runs alone on what is left (`luminos ask`, the
//! refinement) takes at most half for each request, keeping money for its
//! next one, and the whole rest for a last one ([`Allowance::last`]: the
//! conversation is told to finish). A lowered `max_tokens` is a power of
//! two: a little more or less money left does not change the request (a
//! `--batch` rerun finds its kept answer under the same request).
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

/// How a conversation's requests share what is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pace {
    /// One of the run's requests that may be in flight together: each
    /// takes at most its share of what is left, and no more than the
    /// smallest reply when that share does not pay for one.
    Shared,
    /// A conversation that runs alone on what is left: each request takes
    /// at most half of it, and the whole rest only for a last request.
    Alone,
}

/// What one request may ask for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Allowance {
    /// The `max_tokens` it may ask for.
    pub max_tokens: u32,
    /// Its worst case at that `max_tokens`: what it holds while in flight.
    pub worst_case: f64,
    /// Only the whole of what is left pays for it: a conversation that runs
    /// alone should finish with this request.
    pub last: bool,
}

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

/// What one request of `input_tokens` (written to the cache when
/// `writes_cache`) that wants `wanted` tokens of reply may ask for, and what
/// it holds, when `left` is the money left for it, `ways` the requests that
/// share it and `pace` how its conversation shares; or why it cannot go.
pub(crate) fn allowance(
    pricing: &Pricing,
    input_tokens: u64,
    writes_cache: bool,
    wanted: u32,
    left: f64,
    ways: usize,
    pace: Pace,
) -> Result<Allowance, OverBudget> {
    let smallest = wanted.min(MIN_REPLY_TOKENS);
    let needed = pricing.worst_case(input_tokens, smallest, writes_cache);
    if left.is_nan() || needed > left {
        return Err(OverBudget {
            needed,
            left: left.max(0.0),
        });
    }
    let (share, last) = match pace {
        Pace::Shared => ((left / ways.max(1) as f64).max(needed), false),
        Pace::Alone if left / 2.0 >= needed => (left / 2.0, false),
        Pace::Alone => (left, true),
    };
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
    Ok(Allowance {
        max_tokens,
        worst_case: pricing.worst_case(input_tokens, max_tokens, writes_cache),
        last,
    })
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

    /// What a request of `input_tokens` (written to the cache when
    /// `writes_cache`) that wants `wanted` tokens of reply, paced as
    /// `pace`, may ask for after `spent`, without holding anything; see
    /// [`allowance`].
    pub(crate) fn quote(
        &self,
        spent: f64,
        pricing: &Pricing,
        input_tokens: u64,
        writes_cache: bool,
        wanted: u32,
        pace: Pace,
    ) -> Result<Allowance, OverBudget> {
        let Some(limit) = self.limit else {
            return Ok(Allowance {
                max_tokens: wanted,
                worst_case: 0.0,
                last: false,
            });
        };
        let state = *self.lock();
        let left = limit - spent - state.reserved - state.held;
        allowance(
            pricing,
            input_tokens,
            writes_cache,
            wanted,
            left,
            self.ways,
            pace,
        )
    }

    /// Make room for the request [`Purse::quote`] describes: it holds its
    /// worst case until the reservation is dropped.
    pub(crate) fn reserve(
        &self,
        spent: f64,
        pricing: &Pricing,
        input_tokens: u64,
        writes_cache: bool,
        wanted: u32,
        pace: Pace,
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
        let allowed = allowance(
            pricing,
            input_tokens,
            writes_cache,
            wanted,
            left,
            self.ways,
            pace,
        )?;
        state.reserved += allowed.worst_case;
        Ok(Reservation {
            purse: self,
            amount: allowed.worst_case,
            max_tokens: allowed.max_tokens,
        })
    }

    /// The budget; `None`: no ceiling.
    pub(crate) fn limit(&self) -> Option<f64> {
        self.limit
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

    /// A shared request's `max_tokens` and what it holds.
    fn allowance(
        p: &Pricing,
        input_tokens: u64,
        writes_cache: bool,
        wanted: u32,
        left: f64,
        ways: usize,
    ) -> Result<(u32, f64), OverBudget> {
        super::allowance(
            p,
            input_tokens,
            writes_cache,
            wanted,
            left,
            ways,
            Pace::Shared,
        )
        .map(|a| (a.max_tokens, a.worst_case))
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
    fn alone_a_request_takes_half_of_what_is_left_then_all_of_it_then_nothing() {
        let p = Pricing::for_model("claude-sonnet-5-5");
        let alone = |wanted, left| super::allowance(&p, 10_000, true, wanted, left, 4, Pace::Alone);
        let full = p.worst_case(10_000, 32_768, true);
        // Plenty: the reply it wants, and not the last.
        let plenty = alone(32_768, full * 2.0).unwrap();
        assert_eq!((plenty.max_tokens, plenty.last), (32_768, false));
        // Less: a smaller reply, within half of what is left (not a
        // quarter: it runs alone).
        let half = alone(32_768, full).unwrap();
        assert!(!half.last && half.max_tokens < 32_768);
        assert!(half.worst_case <= full / 2.0 + 1e-12);
        assert!(half.max_tokens > allowance(&p, 10_000, true, 32_768, full, 4).unwrap().0);
        // Half no longer pays for the smallest reply: the rest pays for a
        // last one.
        let smallest = p.worst_case(10_000, MIN_REPLY_TOKENS, true);
        let last = alone(32_768, smallest * 1.5).unwrap();
        assert!(last.last && last.max_tokens >= MIN_REPLY_TOKENS);
        assert!(last.worst_case <= smallest * 1.5 + 1e-12);
        // Not even that.
        let over = alone(32_768, smallest * 0.9).unwrap_err();
        assert!((over.needed - smallest).abs() < 1e-12);
        // A reply that wants little asks for no more.
        assert_eq!(alone(512, 10.0).unwrap().max_tokens, 512);
    }

    #[test]
    fn a_quote_holds_nothing() {
        let p = sonnet();
        let one = p.worst_case(10_000, 4_096, true);
        let purse = Purse::new(Some(one), 1);
        for _ in 0..3 {
            let quote = purse
                .quote(0.0, &p, 10_000, true, 4_096, Pace::Alone)
                .unwrap();
            assert!(quote.last, "only the whole of what is left pays for it");
        }
        assert!((purse.left(0.0).unwrap() - one).abs() < 1e-12);
        assert_eq!(purse.limit(), Some(one));
    }

    #[test]
    fn reservations_hold_their_worst_case_until_dropped() {
        let p = sonnet();
        let one = p.worst_case(10_000, 4_096, true);
        let purse = Purse::new(Some(one * 2.75), 1);
        let a = purse
            .reserve(0.0, &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap();
        let b = purse
            .reserve(0.0, &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap();
        assert_eq!((a.max_tokens, b.max_tokens), (4_096, 4_096));
        // Three quarters of one are left: a smaller reply.
        let c = purse
            .reserve(0.0, &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap();
        assert!(c.max_tokens < 4_096);
        assert!(
            purse
                .reserve(0.0, &p, 10_000, true, 4_096, Pace::Shared)
                .is_err()
        );
        drop((a, b, c));
        assert!((purse.left(0.0).unwrap() - one * 2.75).abs() < 1e-12);
        // What was spent and what is held are not there to reserve.
        purse.hold(one * 1.75);
        assert!(
            purse
                .reserve(one, &p, 10_000, true, 4_096, Pace::Shared)
                .is_err()
        );
        purse.hold(0.0);
        assert!(
            purse
                .reserve(one, &p, 10_000, true, 4_096, Pace::Shared)
                .is_ok()
        );
    }

    #[test]
    fn without_a_budget_everything_goes_as_asked() {
        let purse = Purse::new(None, 4);
        let r = purse
            .reserve(1e9, &sonnet(), 1_000_000, true, 32_768, Pace::Shared)
            .unwrap();
        assert_eq!(r.max_tokens, 32_768);
        assert_eq!(purse.left(5.0), None);
    }
}
