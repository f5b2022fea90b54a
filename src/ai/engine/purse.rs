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
//! Units: the purse's dollar side is [`Usd`] (the budget, what was spent);
//! inside, every ceiling is held by the same arithmetic in its own meter
//! (dollars, or millions of tokens at [`Pricing::per_token`]), so the
//! amounts of one meter ([`OverBudget`], [`Purse::hold`], what
//! [`Purse::limit_of`] gives) are bare `f64` beside the [`Meter`] that says
//! what they count; [`Meter::show`] writes them.
//!
//! Pure arithmetic over a mutex: the spend comes from the caller (the
//! session's tracker), the prices from the catalog. Without a budget it
//! lets everything through unchanged.

use std::sync::Mutex;

use crate::ai::api::cost::Pricing;
use crate::money::Usd;

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

/// What a ceiling counts: dollars (`--budget`) or tokens
/// (`--token-budget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meter {
    Dollars,
    Tokens,
}

impl Meter {
    /// `amount` as this meter's user reads it: `$1.23`, or `123,456 tokens`
    /// for an amount of [`Pricing::per_token`] (millions of tokens).
    pub(crate) fn show(self, amount: f64) -> String {
        match self {
            Meter::Dollars => Usd::new(amount).to_string(),
            Meter::Tokens => format!(
                "{} tokens",
                crate::text::format_thousands(to_tokens(amount))
            ),
        }
    }
}

impl Meter {
    /// What its ceiling is called: `budget`, `token budget`.
    pub(crate) fn ceiling_name(self) -> &'static str {
        match self {
            Meter::Dollars => "budget",
            Meter::Tokens => "token budget",
        }
    }

    /// The flag that sets its ceiling to `amount`: `--budget 0.09`,
    /// `--token-budget 90000`.
    pub(crate) fn flag_for(self, amount: f64) -> String {
        match self {
            Meter::Dollars => format!("--budget {}", Usd::new(amount).flag_value()),
            Meter::Tokens => format!(
                "--token-budget {}",
                (amount.max(0.0) * 1_000_000.0).ceil() as u64
            ),
        }
    }
}

/// An amount at [`Pricing::per_token`] (millions of tokens) in tokens.
fn to_tokens(amount: f64) -> u64 {
    (amount.max(0.0) * 1_000_000.0).round() as u64
}

/// A request the money left cannot pay for at its worst case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OverBudget {
    /// The request's worst case with the smallest reply.
    pub needed: f64,
    /// What was left for it.
    pub left: f64,
    /// The ceiling that holds it back: `needed` and `left` are dollars, or
    /// millions of tokens.
    pub meter: Meter,
}

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.meter {
            Meter::Dollars => write!(
                f,
                "the budget cannot pay for the next request: it may cost up to {}, and {} is \
                 left",
                Usd::new(self.needed).precise(),
                Usd::new(self.left).precise()
            ),
            Meter::Tokens => write!(
                f,
                "the token budget cannot pay for the next request: it may take up to {}, and \
                 {} are left",
                self.meter.show(self.needed),
                self.meter.show(self.left)
            ),
        }
    }
}

impl std::error::Error for OverBudget {}

impl OverBudget {
    /// The flag that raises the ceiling that held it back.
    pub(crate) fn flag(&self) -> &'static str {
        match self.meter {
            Meter::Dollars => "--budget",
            Meter::Tokens => "--token-budget",
        }
    }
}

/// What a run has used so far, by each meter.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Used {
    /// Dollars spent (see the session's `spent`).
    pub dollars: Usd,
    /// Tokens sent and received, every kind together.
    pub tokens: u64,
}

/// The money of one run: a dollar ceiling, a token ceiling, or both; a
/// request goes only if it fits every one of them.
#[derive(Debug)]
pub(crate) struct Purse {
    /// The budget; `None`: no ceiling.
    limit: Option<Usd>,
    /// The token budget, in millions of tokens ([`Pricing::per_token`]);
    /// `None`: no ceiling.
    token_limit: Option<f64>,
    /// The meter the run plans in: what [`Purse::hold`] holds back.
    plan: Meter,
    /// Requests that may be in flight together (at least 1).
    ways: usize,
    state: Mutex<[State; 2]>,
}

#[derive(Debug, Default, Clone, Copy)]
struct State {
    /// Worst cases of the requests in flight.
    reserved: f64,
    /// Held back for later work.
    held: f64,
}

/// A request's place in the purse while it is in flight: its worst case by
/// each meter, given back when dropped (after its answer has been counted
/// as spent).
#[derive(Debug)]
pub(crate) struct Reservation<'a> {
    purse: &'a Purse,
    amounts: [f64; 2],
    /// The `max_tokens` the request may ask for.
    pub max_tokens: u32,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut state = self.purse.lock();
        for (meter, amount) in state.iter_mut().zip(self.amounts) {
            meter.reserved = (meter.reserved - amount).max(0.0);
        }
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
            meter: Meter::Dollars,
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
    pub(crate) fn new(limit: Option<Usd>, ways: usize) -> Purse {
        Purse {
            limit,
            token_limit: None,
            plan: Meter::Dollars,
            ways: ways.max(1),
            state: Mutex::new([State::default(); 2]),
        }
    }

    /// This purse with a ceiling of `tokens` too (none: no ceiling), and
    /// the run planned in `plan`'s meter.
    pub(crate) fn with_tokens(mut self, tokens: Option<u64>, plan: Meter) -> Purse {
        self.token_limit = tokens.map(|n| n as f64 / 1_000_000.0);
        self.plan = plan;
        self
    }

    /// Keep `amount` (in the meter the run plans in) back from the
    /// requests that come next (the synthesis's money while the loops
    /// run), replacing what was held.
    pub(crate) fn hold(&self, amount: f64) {
        self.lock()[self.plan as usize].held = amount.max(0.0);
    }

    /// What is held back, in the meter the run plans in.
    pub(crate) fn held(&self) -> f64 {
        self.lock()[self.plan as usize].held
    }

    /// What the next request may use by the dollar meter, after `spent`:
    /// `None` without a budget.
    #[cfg(test)]
    pub(crate) fn left(&self, spent: Usd) -> Option<Usd> {
        let state = self.lock()[Meter::Dollars as usize];
        self.limit
            .map(|limit| Usd::new(limit.as_f64() - spent.as_f64() - state.reserved - state.held))
    }

    /// The ceilings there are, each with its limit, its prices and what
    /// was used of it.
    fn ceilings(&self, used: Used, pricing: &Pricing) -> Vec<(Meter, f64, Pricing, f64)> {
        let mut ceilings = Vec::with_capacity(2);
        if let Some(limit) = self.limit {
            let (limit, spent) = (limit.as_f64(), used.dollars.as_f64());
            ceilings.push((Meter::Dollars, limit, *pricing, spent));
        }
        if let Some(limit) = self.token_limit {
            let spent = used.tokens as f64 / 1_000_000.0;
            ceilings.push((Meter::Tokens, limit, Pricing::per_token(), spent));
        }
        ceilings
    }

    /// What a request may ask for by every ceiling, the state as it is:
    /// the smallest `max_tokens` any allows, its worst case by each meter,
    /// whether any takes the whole of what is left; or the first ceiling
    /// it does not fit.
    fn allow(
        &self,
        state: &[State; 2],
        used: Used,
        pricing: &Pricing,
        request: (u64, bool, u32),
        pace: Pace,
    ) -> Result<(Allowance, [f64; 2]), OverBudget> {
        let (input_tokens, writes_cache, wanted) = request;
        let ceilings = self.ceilings(used, pricing);
        let mut max_tokens = wanted;
        let mut last = false;
        for (meter, limit, prices, spent) in &ceilings {
            let held = state[*meter as usize];
            let left = limit - spent - held.reserved - held.held;
            let allowed = allowance(
                prices,
                input_tokens,
                writes_cache,
                wanted,
                left,
                self.ways,
                pace,
            )
            .map_err(|over| OverBudget {
                meter: *meter,
                ..over
            })?;
            max_tokens = max_tokens.min(allowed.max_tokens);
            last |= allowed.last;
        }
        let mut worst = [0.0; 2];
        for (meter, _, prices, _) in &ceilings {
            worst[*meter as usize] = prices.worst_case(input_tokens, max_tokens, writes_cache);
        }
        let allowed = Allowance {
            max_tokens,
            worst_case: worst[Meter::Dollars as usize],
            last,
        };
        Ok((allowed, worst))
    }

    /// What a request of `input_tokens` (written to the cache when
    /// `writes_cache`) that wants `wanted` tokens of reply, paced as
    /// `pace`, may ask for after `used`, without holding anything; see
    /// [`allowance`].
    pub(crate) fn quote(
        &self,
        used: Used,
        pricing: &Pricing,
        input_tokens: u64,
        writes_cache: bool,
        wanted: u32,
        pace: Pace,
    ) -> Result<Allowance, OverBudget> {
        let state = *self.lock();
        self.allow(
            &state,
            used,
            pricing,
            (input_tokens, writes_cache, wanted),
            pace,
        )
        .map(|(allowed, _)| allowed)
    }

    /// Make room for the request [`Purse::quote`] describes: it holds its
    /// worst case by each meter until the reservation is dropped.
    pub(crate) fn reserve(
        &self,
        used: Used,
        pricing: &Pricing,
        input_tokens: u64,
        writes_cache: bool,
        wanted: u32,
        pace: Pace,
    ) -> Result<Reservation<'_>, OverBudget> {
        let mut state = self.lock();
        let (allowed, worst) = self.allow(
            &state,
            used,
            pricing,
            (input_tokens, writes_cache, wanted),
            pace,
        )?;
        for (meter, amount) in state.iter_mut().zip(worst) {
            meter.reserved += amount;
        }
        Ok(Reservation {
            purse: self,
            amounts: worst,
            max_tokens: allowed.max_tokens,
        })
    }

    /// The ceiling of `meter` (dollars, or millions of tokens); `None`:
    /// no ceiling.
    pub(crate) fn limit_of(&self, meter: Meter) -> Option<f64> {
        match meter {
            Meter::Dollars => self.limit.map(Usd::as_f64),
            Meter::Tokens => self.token_limit,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, [State; 2]> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dollars(spent: f64) -> Used {
        Used {
            dollars: Usd::new(spent),
            tokens: 0,
        }
    }

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
                left: needed - 1e-6,
                meter: Meter::Dollars,
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
        let purse = Purse::new(Some(Usd::new(one)), 1);
        for _ in 0..3 {
            let quote = purse
                .quote(dollars(0.0), &p, 10_000, true, 4_096, Pace::Alone)
                .unwrap();
            assert!(quote.last, "only the whole of what is left pays for it");
        }
        assert!((purse.left(Usd::ZERO).unwrap().as_f64() - one).abs() < 1e-12);
        assert_eq!(purse.limit_of(Meter::Dollars), Some(one));
    }

    #[test]
    fn reservations_hold_their_worst_case_until_dropped() {
        let p = sonnet();
        let one = p.worst_case(10_000, 4_096, true);
        let purse = Purse::new(Some(Usd::new(one * 2.75)), 1);
        let a = purse
            .reserve(dollars(0.0), &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap();
        let b = purse
            .reserve(dollars(0.0), &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap();
        assert_eq!((a.max_tokens, b.max_tokens), (4_096, 4_096));
        // Three quarters of one are left: a smaller reply.
        let c = purse
            .reserve(dollars(0.0), &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap();
        assert!(c.max_tokens < 4_096);
        assert!(
            purse
                .reserve(dollars(0.0), &p, 10_000, true, 4_096, Pace::Shared)
                .is_err()
        );
        drop((a, b, c));
        assert!((purse.left(Usd::ZERO).unwrap().as_f64() - one * 2.75).abs() < 1e-12);
        // What was spent and what is held are not there to reserve.
        purse.hold(one * 1.75);
        assert!(
            purse
                .reserve(dollars(one), &p, 10_000, true, 4_096, Pace::Shared)
                .is_err()
        );
        purse.hold(0.0);
        assert!(
            purse
                .reserve(dollars(one), &p, 10_000, true, 4_096, Pace::Shared)
                .is_ok()
        );
    }

    #[test]
    fn without_a_budget_everything_goes_as_asked() {
        let purse = Purse::new(None, 4);
        let r = purse
            .reserve(
                dollars(1e9),
                &sonnet(),
                1_000_000,
                true,
                32_768,
                Pace::Shared,
            )
            .unwrap();
        assert_eq!(r.max_tokens, 32_768);
        assert_eq!(purse.left(Usd::new(5.0)), None);
    }

    /// A token ceiling is held by the same worst case: a request's prompt
    /// and its whole `max_tokens`, whatever they cost in dollars.
    #[test]
    fn a_token_ceiling_holds_prompt_and_reply_alone_or_beside_dollars() {
        let free = Pricing::of(
            crate::ai::api::catalog::ModelFacts::of("qwen3-coder")
                .with_price(0.0, 0.0)
                .model,
        );
        let used = |tokens| Used {
            dollars: Usd::ZERO,
            tokens,
        };
        let purse = Purse::new(None, 1).with_tokens(Some(100_000), Meter::Tokens);
        // Plenty: the reply it wants, holding prompt and reply.
        let a = purse
            .reserve(used(0), &free, 10_000, true, 32_768, Pace::Shared)
            .unwrap();
        assert_eq!(a.max_tokens, 32_768);
        // What is left after what was used and what is reserved: a smaller
        // reply, a power of two.
        let b = purse
            .reserve(used(40_000), &free, 10_000, true, 32_768, Pace::Shared)
            .unwrap();
        assert!(b.max_tokens < 32_768 && b.max_tokens.is_power_of_two());
        assert!(40_000 + 42_768 + 10_000 + u64::from(b.max_tokens) <= 100_000);
        // Not even the smallest reply: refused, and said in tokens.
        let over = purse
            .reserve(used(40_000), &free, 10_000, true, 32_768, Pace::Shared)
            .unwrap_err();
        assert_eq!(over.meter, Meter::Tokens);
        assert_eq!(over.flag(), "--token-budget");
        assert!(over.to_string().contains("tokens are left"), "{over}");
        drop((a, b));
        // Held back for the synthesis, in tokens when the run plans in them.
        purse.hold(0.095);
        assert!(
            purse
                .quote(used(0), &free, 4_000, true, 4_096, Pace::Shared)
                .is_err()
        );
        purse.hold(0.0);
        // Beside a dollar budget, the first ceiling reached holds: here the
        // dollars, at Sonnet's prices, for a purse of plenty of tokens.
        let p = sonnet();
        let one = p.worst_case(10_000, 4_096, true);
        let both = Purse::new(Some(Usd::new(one)), 1).with_tokens(Some(1_000_000), Meter::Dollars);
        let first = both
            .reserve(used(0), &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap();
        let over = both
            .reserve(used(0), &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap_err();
        assert_eq!(over.meter, Meter::Dollars);
        drop(first);
        // ...and here the tokens, for a dollar budget of plenty.
        let both = Purse::new(Some(Usd::new(100.0)), 1).with_tokens(Some(20_000), Meter::Dollars);
        let over = both
            .reserve(used(12_000), &p, 10_000, true, 4_096, Pace::Shared)
            .unwrap_err();
        assert_eq!(over.meter, Meter::Tokens);
    }

    #[test]
    fn amounts_are_shown_in_their_meter() {
        assert_eq!(Meter::Dollars.show(1.234), "$1.23");
        assert_eq!(Meter::Tokens.show(0.3), "300,000 tokens");
    }
}
