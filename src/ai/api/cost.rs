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
    /// which lifetime they were written at (see [`Usage::cache_writes`]): 5
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
        let (five_minutes, hour) = usage.cache_writes(self.write_ttl);
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
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, write: u64, read: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_input_tokens: write,
            cache_read_input_tokens: read,
            cache_creation_1h_input_tokens: None,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Sonnet 4.5's rates: $3 in, $15 out, the original's figures.
    fn sonnet_4_5() -> Pricing {
        Pricing::for_model("claude-sonnet-4-5")
    }

    #[test]
    fn pricing_comes_from_the_catalog() {
        let p = |m| {
            let p = Pricing::for_model(m).prices;
            (p.input, p.output)
        };
        assert_eq!(p("claude-sonnet-4-5-20250929"), (3.0, 15.0));
        assert_eq!(p("claude-sonnet-5-5"), (2.0, 10.0));
        assert_eq!(p("claude-opus-4-8"), (5.0, 25.0));
        assert_eq!(p("claude-opus-5-5"), (4.0, 20.0));
        assert_eq!(p("claude-haiku-4-5"), (1.0, 5.0));
        // Unknown: the family's current model, else the default.
        assert_eq!(p("claude-opus-9"), (4.0, 20.0));
        assert_eq!(p("some-local-model"), (2.0, 10.0));
    }

    #[test]
    fn original_prices_without_cache() {
        // One million in, one million out on Sonnet 4.5: $3 + $15.
        let cost = sonnet_4_5().cost(&usage(1_000_000, 1_000_000, 0, 0));
        assert!(close(cost, 18.0), "{cost}");
        assert!(close(
            estimate_cost("claude-sonnet-4-5", &usage(1_000_000, 0, 0, 0)),
            3.0
        ));
    }

    #[test]
    fn cache_rates() {
        let writes = sonnet_4_5().cost(&usage(0, 0, 1_000_000, 0));
        assert!(close(writes, 3.75), "{writes}");
        let reads = sonnet_4_5().cost(&usage(0, 0, 0, 1_000_000));
        assert!(close(reads, 0.30), "{reads}");
        // Sonnet 5.5 reads its cache at $0.10, a twentieth of its input.
        let reads = Pricing::for_model("claude-sonnet-5-5").cost(&usage(0, 0, 0, 1_000_000));
        assert!(close(reads, 0.10), "{reads}");
    }

    #[test]
    fn batch_halves_every_rate_and_writes_for_an_hour() {
        // Without cache writes, exactly half.
        let u = usage(1_000_000, 1_000_000, 0, 1_000_000);
        let full = sonnet_4_5().cost(&u);
        assert!(close(sonnet_4_5().batch().cost(&u), full / 2.0));
        // A batch's cache writes last an hour: 2x the input price, halved.
        let writes = sonnet_4_5().batch().cost(&usage(0, 0, 1_000_000, 0));
        assert!(close(writes, 3.0 * 2.0 / 2.0), "{writes}");
    }

    #[test]
    fn a_long_prompt_pays_its_tier_on_every_token() {
        let haiku = Pricing::for_model("claude-haiku-5-5");
        let short = haiku.cost(&usage(100_000, 1_000_000, 0, 0));
        assert!(close(short, 0.01 + 0.50), "{short}");
        let long = haiku.cost(&usage(100_001, 1_000_000, 0, 0));
        assert!(close(long, (100_001.0 * 0.5) / 1e6 + 2.50), "{long}");
    }

    #[test]
    fn the_worst_case_is_every_input_token_written_and_every_output_token_used() {
        let p = sonnet_4_5();
        // 10,000 written at $3.75/M and 4,096 out at $15/M.
        let worst = p.worst_case(10_000, 4_096, true);
        assert!(
            close(worst, (10_000.0 * 3.75 + 4_096.0 * 15.0) / 1e6),
            "{worst}"
        );
        // Sent without cache marks: plain input.
        let plain = p.worst_case(10_000, 4_096, false);
        assert!(
            close(plain, (10_000.0 * 3.0 + 4_096.0 * 15.0) / 1e6),
            "{plain}"
        );
        // Whatever the answer reports within those bounds costs no more.
        for usage in [
            usage(10_000, 4_096, 0, 0),
            usage(0, 4_096, 10_000, 0),
            usage(2_000, 100, 3_000, 5_000),
        ] {
            assert!(p.cost(&usage) <= worst + 1e-12, "{usage:?}");
        }
        // A long prompt is priced at its tier, output included.
        let haiku = Pricing::for_model("claude-haiku-5-5");
        let long = haiku.worst_case(100_001, 1_000, false);
        assert!(close(long, haiku.cost(&usage(100_001, 1_000, 0, 0))));
    }

    #[test]
    fn the_output_a_sum_affords_is_the_worst_cases_inverse() {
        let p = sonnet_4_5();
        let money = p.worst_case(10_000, 4_096, true);
        assert_eq!(
            p.affordable_output(10_000, true, money + 1e-12),
            Some(4_096)
        );
        assert_eq!(p.affordable_output(10_000, true, money - 1e-6), Some(4_095));
        // Not even the prompt.
        assert_eq!(p.affordable_output(10_000, true, 0.01), None);
        assert_eq!(p.affordable_output(10_000, true, f64::NAN), None);
        // A free model affords anything.
        let free = Pricing {
            prices: Prices {
                input: 0.0,
                output: 0.0,
                cache_write_5m: 0.0,
                cache_write_1h: 0.0,
                cache_read: 0.0,
            },
            tier: None,
            write_ttl: CacheTtl::FiveMinutes,
        };
        assert_eq!(free.affordable_output(10_000, true, 0.0), Some(u32::MAX));
    }

    #[test]
    fn savings() {
        // 1M read from cache instead of paid in full: $3.00 - $0.30.
        let saved = sonnet_4_5().cache_savings(&usage(0, 0, 0, 1_000_000));
        assert!(close(saved, 2.70), "{saved}");
        // A write alone costs a quarter more than no caching.
        let saved = sonnet_4_5().cache_savings(&usage(0, 0, 1_000_000, 0));
        assert!(close(saved, -0.75), "{saved}");
        // Output never changes with caching.
        assert!(close(
            sonnet_4_5().cache_savings(&usage(10, 5_000, 0, 0)),
            0.0
        ));
    }

    #[test]
    fn summary_lines() {
        let tracker = TokenTracker::new("claude-sonnet-4-5");
        tracker.record(&usage(1_200, 800, 20_000, 0));
        tracker.record(&usage(300, 1_500, 500, 20_000));
        let totals = tracker.totals();
        assert_eq!(totals.requests, 2);
        assert_eq!(totals.all_input_tokens(), 42_000);
        // 1,500 × 3 + 20,500 × 3.75 + 20,000 × 0.3 + 2,300 × 15, per million.
        let expected = (1_500.0 * 3.0 + 20_500.0 * 3.75 + 20_000.0 * 0.3 + 2_300.0 * 15.0) / 1e6;
        assert!(close(tracker.cost().as_f64(), expected));
        assert_eq!(
            tracker.summary(),
            "42,000 input / 2,300 output (approx $0.12)"
        );
        // Without caching: 42,000 × 3 + 2,300 × 15 = $0.1605; with: $0.121875.
        assert_eq!(
            tracker.cache_summary(),
            "cache: 20,000 read / 20,500 written, saved approx $0.04"
        );
        let fresh = TokenTracker::new("claude-sonnet-4-5");
        fresh.record(&usage(0, 0, 1_000_000, 0));
        assert_eq!(
            fresh.cache_summary(),
            "cache: 0 read / 1,000,000 written, cost approx $0.75 extra"
        );
        assert_eq!(
            TokenTracker::new("x").summary(),
            "0 input / 0 output (approx $0.00)"
        );
    }

    #[test]
    fn tracker_is_shared_between_threads() {
        let tracker = std::sync::Arc::new(TokenTracker::new("claude-sonnet-4-5"));
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let tracker = tracker.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        tracker.record(&usage(1, 2, 3, 4));
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
        let totals = tracker.totals();
        assert_eq!(totals.requests, 8000);
        assert_eq!(totals.as_usage(), usage(8000, 16000, 24000, 32000));
    }

    #[test]
    fn loop_budget_uses_the_whole_context() {
        let pricing = sonnet_4_5();
        let budget = 140_000;
        let mut lp = LoopUsage::new();
        // Caching hides almost all of the context from input_tokens.
        lp.record(&usage(2_000, 300, 0, 130_000), &pricing);
        assert_eq!(lp.last_context, 132_000);
        assert!(!lp.budget_exceeded(budget));
        lp.record(&usage(1_000, 300, 9_000, 130_001), &pricing);
        assert_eq!(lp.last_context, 140_001);
        assert!(lp.budget_exceeded(budget));
        assert_eq!(lp.turns, 2);
        assert_eq!(lp.total(), 3_000 + 600 + 9_000 + 260_001);
        // Only the latest call counts for the budget.
        lp.record(&usage(10, 1, 0, 0), &pricing);
        assert!(!lp.budget_exceeded(budget));
    }

    #[test]
    fn a_loop_is_priced_request_by_request() {
        // Two Haiku 5.5 calls of 60K each: neither passes the 100K tier,
        // though their sum would.
        let haiku = Pricing::for_model("claude-haiku-5-5");
        let mut lp = LoopUsage::new();
        lp.record(&usage(60_000, 1_000, 0, 0), &haiku);
        lp.record(&usage(60_000, 1_000, 0, 0), &haiku);
        let each = haiku.cost(&usage(60_000, 1_000, 0, 0));
        assert!(close(lp.cost, 2.0 * each), "{}", lp.cost);
        assert!(lp.cost < haiku.cost(&lp.as_usage()));
        // The run-wide tracker agrees with the loop.
        let tracker = TokenTracker::with_pricing(haiku);
        tracker.record(&usage(60_000, 1_000, 0, 0));
        tracker.record(&usage(60_000, 1_000, 0, 0));
        assert!(close(tracker.cost().as_f64(), lp.cost));
    }

    #[test]
    fn absurd_counts_saturate_instead_of_panicking() {
        let huge = Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
            cache_creation_input_tokens: u64::MAX,
            cache_read_input_tokens: u64::MAX,
            cache_creation_1h_input_tokens: None,
        };
        let tracker = TokenTracker::new("claude-sonnet-4-5");
        tracker.record(&huge);
        tracker.record(&huge);
        let mut looped = LoopUsage::default();
        looped.record(&huge, &tracker.pricing());
        looped.record(&huge, &tracker.pricing());
        assert_eq!(huge.context_tokens(), u64::MAX);
        assert!(looped.budget_exceeded(140_000));
    }
}
