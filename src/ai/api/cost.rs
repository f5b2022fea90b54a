//! Token accounting and pricing: the original's token tracker, extended
//! for prompt caching, concurrent loops and the catalog's prices.
//!
//! - [`Pricing`]: what one request costs on a model, from the catalog
//!   ([`super::catalog`]): each kind of token at its own rate, a long-prompt
//!   tier where the model has one, and the batch discount.
//! - [`TokenTracker`]: run-wide totals for billing (input, output, cache
//!   writes, cache reads, requests, dollars), shared by every loop of a run.
//! - [`LoopUsage`]: one agent loop's counters, its turn count, its cost
//!   (request by request), and the size of its latest context, which
//!   decides when the loop must stop early (against
//!   [`super::settings::context_budget`]).
//!
//! Units: [`Pricing`] is a rate card, and what it computes is in the
//! card's unit: dollars at a model's prices, millions of tokens at
//! [`Pricing::per_token`] (what a token budget and a plan in tokens count
//! with, see [`crate::ai::engine::plan_money`]), so its figures stay bare
//! `f64`. The tracker always prices at the model's dollar rates: what it
//! adds up is [`Usd`].
//!
//! Under prompt caching `input_tokens` only counts what follows the last
//! cache breakpoint, so neither the bill nor the context size can be read
//! from it alone: both use all three input counts. A price tier depends on
//! one request's prompt, so the tracker prices each request as it records
//! it rather than pricing the totals.

use std::sync::Mutex;

use super::catalog::{BATCH_DISCOUNT, CacheTtl, LongPromptTier, Model, ModelFacts, Prices};
use super::types::Usage;
use crate::money::Usd;
use crate::text::format_thousands;

/// What requests cost on one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pricing {
    pub prices: Prices,
    pub tier: Option<LongPromptTier>,
    /// The lifetime cache writes are priced at when a reply does not say
    /// which lifetime they were written at (see [`Usage::cache_writes_said`]): 5
    /// minutes interactively, an hour in a batch, the dearest its marks ask
    /// for (see [`super::caching`]).
    pub write_ttl: CacheTtl,
}

impl Pricing {
    /// The catalog's prices for `model` (the stand-in's when the model is
    /// unknown; see [`ModelFacts`]).
    pub fn for_model(model: &str) -> Pricing {
        Pricing::of(ModelFacts::of(model).model)
    }

    /// The prices of the catalog row `model`.
    pub(crate) fn of(model: &Model) -> Pricing {
        Pricing {
            prices: model.prices,
            tier: model.long_prompt_tier,
            write_ttl: CacheTtl::FiveMinutes,
        }
    }

    /// Prices that count tokens: every kind of token (input, cache writes,
    /// cache reads, output) at one dollar per million, so a "cost" is the
    /// tokens in millions. What a token ceiling (`--token-budget`) is held
    /// with, by the same worst-case arithmetic as a dollar one.
    pub(crate) const fn per_token() -> Pricing {
        Pricing {
            prices: Prices::PER_TOKEN,
            tier: None,
            write_ttl: CacheTtl::FiveMinutes,
        }
    }

    /// These prices through the Message Batches API: every rate halved, and
    /// cache writes at the 1-hour lifetime batch requests ask for.
    pub(crate) fn batch(self) -> Pricing {
        Pricing {
            prices: self.prices.scaled(BATCH_DISCOUNT),
            write_ttl: CacheTtl::OneHour,
            ..self
        }
    }

    /// The rates one request pays: the tier's when its prompt is long.
    fn rates_for(&self, usage: &Usage) -> Prices {
        match self.tier {
            Some(tier) if usage.context_tokens() > tier.above_tokens => {
                self.prices.scaled(tier.multiplier)
            }
            Some(_) | None => self.prices,
        }
    }

    /// What one request with `usage` costs in the card's unit (dollars at a
    /// model's prices): plain input, cache writes, cache reads and output,
    /// each at its rate.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let rates = self.rates_for(usage);
        // What the API did not split was written at the marks' lifetime.
        let total = usage.cache_creation_input_tokens;
        let (five_minutes, hour) = usage.cache_writes_said().unwrap_or(match self.write_ttl {
            CacheTtl::FiveMinutes => (total, 0),
            CacheTtl::OneHour => (0, total),
        });
        per_million(usage.input_tokens, rates.input)
            + per_million(five_minutes, rates.cache_write_5m)
            + per_million(hour, rates.cache_write_1h)
            + per_million(usage.cache_read_input_tokens, rates.cache_read)
            + per_million(usage.output_tokens, rates.output)
    }

    /// The most one request can cost before it is sent: `input_tokens` of
    /// prompt (as counted before sending, see
    /// [`crate::ai::engine::window::request_tokens`]) all written to the
    /// prompt cache when `writes_cache` (a write is the dearest way to pay
    /// for an input token; a read, or plain input, costs less), else all
    /// plain input, and `max_tokens` of output, thinking included, at the
    /// tier the prompt's length puts it in. The API never produces more
    /// output than `max_tokens` and bills thinking as output (extended
    /// thinking and pricing pages,
    /// <https://platform.claude.com/docs/en/build-with-claude/extended-thinking>,
    /// <https://platform.claude.com/docs/en/about-claude/pricing>, read
    /// 2026-11-27), so the bill of the request cannot pass this figure
    /// unless the prompt is counted short.
    ///
    /// The one function every caller that must stay within money prices a
    /// request with: the run's budget ([`crate::ai::engine::purse`]), and
    /// any pass sent outside an investigation.
    pub fn worst_case(&self, input_tokens: u64, max_tokens: u32, writes_cache: bool) -> f64 {
        let usage = Usage {
            input_tokens: if writes_cache { 0 } else { input_tokens },
            cache_creation_input_tokens: if writes_cache { input_tokens } else { 0 },
            cache_read_input_tokens: 0,
            cache_creation_1h_input_tokens: None,
            output_tokens: u64::from(max_tokens),
        };
        self.cost(&usage)
    }

    /// The most output tokens a request of `input_tokens` (written to the
    /// cache when `writes_cache`) can ask for within `money`: `None` when
    /// its prompt alone may cost more. The inverse of
    /// [`Pricing::worst_case`], rounded down.
    pub fn affordable_output(
        &self,
        input_tokens: u64,
        writes_cache: bool,
        money: f64,
    ) -> Option<u32> {
        let prompt = self.worst_case(input_tokens, 0, writes_cache);
        if money.is_nan() || money < prompt {
            return None;
        }
        let one = self.worst_case(input_tokens, 1, writes_cache) - prompt;
        if one <= 0.0 {
            return Some(u32::MAX);
        }
        let tokens = ((money - prompt) / one).floor();
        Some(if tokens >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            tokens as u32
        })
    }

    /// What the request would have cost with no caching: every input token
    /// at the plain input price.
    pub(crate) fn cost_without_cache(&self, usage: &Usage) -> f64 {
        let rates = self.rates_for(usage);
        per_million(usage.context_tokens(), rates.input)
            + per_million(usage.output_tokens, rates.output)
    }

    /// The money caching saved on the request. Negative while writes
    /// outweigh reads, as after a single call.
    pub fn cache_savings(&self, usage: &Usage) -> f64 {
        self.cost_without_cache(usage) - self.cost(usage)
    }
}

fn per_million(tokens: u64, price: f64) -> f64 {
    tokens as f64 * price / 1_000_000.0
}

/// The cost in dollars of one hypothetical request with `usage` on `model`
/// (for projections and spend caps).
#[cfg(test)]
pub(crate) fn estimate_cost(model: &str, usage: &Usage) -> f64 {
    Pricing::for_model(model).cost(usage)
}

/// What a run's requests added up to, updated together. The tokens are
/// one [`Usage`], the counters every token figure of luminos is kept in.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TokenTotals {
    /// Every request's tokens, summed.
    pub usage: Usage,
    /// Successful calls recorded.
    pub requests: u64,
    /// Dollars, each request priced on its own.
    pub cost: Usd,
    /// Dollars caching saved (negative while writes outweigh reads).
    pub savings: Usd,
}

impl TokenTotals {
    /// The tokens as one [`Usage`].
    #[cfg(test)]
    pub(crate) fn as_usage(&self) -> Usage {
        self.usage
    }

    /// Every input token the model processed, cached or not.
    pub(crate) fn all_input_tokens(&self) -> u64 {
        self.usage.context_tokens()
    }
}

/// Run-wide totals, safe to share between concurrent loops (wrap it in an
/// `Arc`). Its prices are a model's (never [`Pricing::per_token`]), so what
/// it adds up is dollars.
#[derive(Debug)]
pub struct TokenTracker {
    pricing: Pricing,
    totals: Mutex<TokenTotals>,
}

impl TokenTracker {
    /// A tracker pricing tokens for `model`.
    pub fn new(model: &str) -> TokenTracker {
        TokenTracker::with_pricing(Pricing::for_model(model))
    }

    pub(crate) fn with_pricing(pricing: Pricing) -> TokenTracker {
        TokenTracker {
            pricing,
            totals: Mutex::new(TokenTotals::default()),
        }
    }

    pub fn pricing(&self) -> Pricing {
        self.pricing
    }

    /// Add one call's usage.
    pub fn record(&self, usage: &Usage) {
        let mut totals = self.lock();
        totals.cost += Usd::new(self.pricing.cost(usage));
        totals.savings += Usd::new(self.pricing.cache_savings(usage));
        totals.usage.accumulate(usage);
        totals.requests += 1;
    }

    /// A snapshot of the totals.
    pub fn totals(&self) -> TokenTotals {
        *self.lock()
    }

    /// Dollars spent so far.
    pub fn cost(&self) -> Usd {
        self.lock().cost
    }

    /// Dollars caching saved so far (negative while writes dominate).
    pub fn cache_savings(&self) -> Usd {
        self.lock().savings
    }

    /// `N input / M output (approx $X.XX)`; see [`format_summary`].
    pub fn summary(&self) -> String {
        format_summary(&self.totals())
    }

    /// The caching breakdown; see [`format_cache_summary`].
    pub fn cache_summary(&self) -> String {
        format_cache_summary(&self.totals())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TokenTotals> {
        // Totals stay meaningful even if a thread panicked mid-update.
        self.totals.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The original's summary line, `N input / M output (approx $X.XX)`.
///
/// N counts every input token processed (plain input, cache writes and cache
/// reads), so it stays comparable with the original, which knew no caching;
/// the dollar figure prices each kind at its own rate.
pub(crate) fn format_summary(totals: &TokenTotals) -> String {
    format!(
        "{} input / {} output (approx {})",
        format_thousands(totals.all_input_tokens()),
        format_thousands(totals.usage.output_tokens),
        totals.cost,
    )
}

/// `cache: R read / W written, saved approx $S.SS` (or `cost approx $S.SS
/// extra` while writes outweigh reads).
pub(crate) fn format_cache_summary(totals: &TokenTotals) -> String {
    let savings = totals.savings;
    let verdict = if savings >= Usd::ZERO {
        format!("saved approx {savings}")
    } else {
        format!("cost approx {} extra", -savings)
    };
    format!(
        "cache: {} read / {} written, {verdict}",
        format_thousands(totals.usage.cache_read_input_tokens),
        format_thousands(totals.usage.cache_creation_input_tokens),
    )
}

/// One agent loop's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LoopUsage {
    /// This loop's tokens, summed over its calls.
    pub tokens: Usage,
    /// Calls made by this loop.
    pub turns: u32,
    /// The latest call's context: input + cache writes + cache reads.
    pub last_context: u64,
    /// What the calls cost, each priced on its own (a price tier depends on
    /// one request's prompt, so the summed tokens cannot be priced as one),
    /// in the unit of the prices it was given: the run's plan's (dollars,
    /// or millions of tokens under a token budget), so not [`Usd`].
    pub cost: f64,
}

impl LoopUsage {
    #[cfg(test)]
    pub(crate) fn new() -> LoopUsage {
        LoopUsage::default()
    }

    /// Add one call's usage, priced with `pricing`.
    pub(crate) fn record(&mut self, usage: &Usage, pricing: &Pricing) {
        self.tokens.accumulate(usage);
        self.turns += 1;
        self.last_context = usage.context_tokens();
        self.cost += pricing.cost(usage);
    }

    /// This loop's tokens as one [`Usage`].
    #[cfg(test)]
    pub(crate) fn as_usage(&self) -> Usage {
        self.tokens
    }

    /// True once the latest call's context passed `budget` tokens.
    pub(crate) fn budget_exceeded(&self, budget: u64) -> bool {
        self.last_context > budget
    }

    /// Tokens this loop spent: every input token processed plus output.
    pub(crate) fn total(&self) -> u64 {
        self.tokens
            .context_tokens()
            .saturating_add(self.tokens.output_tokens)
    }
}

#[cfg(test)]
mod tests;
