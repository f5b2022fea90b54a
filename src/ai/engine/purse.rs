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
mod tests;
