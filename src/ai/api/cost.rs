//! Token accounting and prices: the original's token tracker, extended for
//! prompt caching and concurrent loops.
//!
//! - [`TokenTracker`]: run-wide totals for billing (input, output, cache
//!   writes, cache reads, requests), shared by every loop of a run.
//! - [`LoopUsage`]: one agent loop's counters, its turn count, and the size of
//!   its latest context, which decides when the loop must stop early.
//! - [`Prices`]: list prices per model family, with the cache multipliers.
//!
//! Under prompt caching `input_tokens` only counts what follows the last
//! cache breakpoint, so neither the bill nor the context size can be read
//! from it alone: both use all three input counts.

use std::sync::Mutex;

use super::types::Usage;
use crate::text::format_thousands;

/// The context window of the models luminos targets.
pub const MAX_CONTEXT: u64 = 200_000;

/// A loop stops once one call's context passes this: 70% of the window,
/// leaving room for the reply and the next tool result (as the original).
pub const CONTEXT_BUDGET: u64 = MAX_CONTEXT * 70 / 100;

/// Writing a prefix to the cache costs this times the input price (5-minute
/// cache).
pub const CACHE_WRITE_MULTIPLIER: f64 = 1.25;

/// Reading a cached prefix costs this times the input price.
pub const CACHE_READ_MULTIPLIER: f64 = 0.1;

/// List prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

/// One row of [`PRICE_TABLE`]: models whose id contains `pattern`.
#[derive(Debug, Clone, Copy)]
pub struct PriceRule {
    pub pattern: &'static str,
    pub family: &'static str,
    pub prices: Prices,
}

const fn rule(pattern: &'static str, family: &'static str, input: f64, output: f64) -> PriceRule {
    PriceRule {
        pattern,
        family,
        prices: Prices {
            input_per_mtok: input,
            output_per_mtok: output,
        },
    }
}

/// Sonnet prices, the original's (and Sonnet 4.5's): $3 in, $15 out.
pub const SONNET_PRICES: Prices = Prices {
    input_per_mtok: 3.0,
    output_per_mtok: 15.0,
};

/// List prices by model family; the first rule whose pattern the model id
/// contains wins. Older generations that were priced differently come
/// before their family's general rule. A model matching nothing is priced
/// as Sonnet.
pub const PRICE_TABLE: &[PriceRule] = &[
    rule("opus-4-5", "Opus 4.5", 5.0, 25.0),
    rule("opus-4.5", "Opus 4.5", 5.0, 25.0),
    // Opus 4, 4.1 and Claude 3 Opus; an unlisted Opus is assumed to cost as
    // much, which errs on the safe side for --max-cost.
    rule("opus", "Opus", 15.0, 75.0),
    rule("3-5-haiku", "Haiku 3.5", 0.8, 4.0),
    rule("3-haiku", "Haiku 3", 0.25, 1.25),
    rule("haiku", "Haiku", 1.0, 5.0),
    rule("sonnet", "Sonnet", 3.0, 15.0),
];

impl Prices {
    /// The prices for a model id (see [`PRICE_TABLE`]).
    pub fn for_model(model: &str) -> Prices {
        let model = model.to_ascii_lowercase();
        PRICE_TABLE
            .iter()
            .find(|rule| model.contains(rule.pattern))
            .map_or(SONNET_PRICES, |rule| rule.prices)
    }

    /// What `usage` costs, in dollars: plain input, cache writes at 1.25×,
    /// cache reads at 0.1×, and output.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let input = usage.input_tokens as f64
            + usage.cache_creation_input_tokens as f64 * CACHE_WRITE_MULTIPLIER
            + usage.cache_read_input_tokens as f64 * CACHE_READ_MULTIPLIER;
        per_million(input, self.input_per_mtok)
            + per_million(usage.output_tokens as f64, self.output_per_mtok)
    }

    /// What `usage` would have cost with no caching: every input token at the
    /// plain input price.
    pub fn cost_without_cache(&self, usage: &Usage) -> f64 {
        per_million(usage.context_tokens() as f64, self.input_per_mtok)
            + per_million(usage.output_tokens as f64, self.output_per_mtok)
    }

    /// The money caching saved on `usage`. Negative while writes (1.25×)
    /// outweigh reads (0.1×), as after a single call.
    pub fn cache_savings(&self, usage: &Usage) -> f64 {
        self.cost_without_cache(usage) - self.cost(usage)
    }
}

fn per_million(tokens: f64, price: f64) -> f64 {
    tokens * price / 1_000_000.0
}

/// The cost in dollars of a hypothetical `usage` on `model` (for projections
/// and spend caps).
pub fn estimate_cost(model: &str, usage: &Usage) -> f64 {
    Prices::for_model(model).cost(usage)
}

/// Run-wide token totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenTotals {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    /// Successful calls recorded.
    pub requests: u64,
}

impl TokenTotals {
    /// The totals as one [`Usage`], for pricing.
    pub fn as_usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_creation_input_tokens: self.cache_creation_input_tokens,
            cache_read_input_tokens: self.cache_read_input_tokens,
        }
    }

    /// Every input token the model processed, cached or not.
    pub fn all_input_tokens(&self) -> u64 {
        self.as_usage().context_tokens()
    }
}

/// Run-wide totals, safe to share between concurrent loops (wrap it in an
/// `Arc`).
#[derive(Debug)]
pub struct TokenTracker {
    prices: Prices,
    totals: Mutex<TokenTotals>,
}

impl TokenTracker {
    /// A tracker pricing tokens for `model`.
    pub fn new(model: &str) -> TokenTracker {
        TokenTracker::with_prices(Prices::for_model(model))
    }

    pub fn with_prices(prices: Prices) -> TokenTracker {
        TokenTracker {
            prices,
            totals: Mutex::new(TokenTotals::default()),
        }
    }

    pub fn prices(&self) -> Prices {
        self.prices
    }

    /// Add one call's usage.
    pub fn record(&self, usage: &Usage) {
        let mut totals = self.lock();
        totals.input_tokens = totals.input_tokens.saturating_add(usage.input_tokens);
        totals.output_tokens = totals.output_tokens.saturating_add(usage.output_tokens);
        totals.cache_creation_input_tokens = totals
            .cache_creation_input_tokens
            .saturating_add(usage.cache_creation_input_tokens);
        totals.cache_read_input_tokens = totals
            .cache_read_input_tokens
            .saturating_add(usage.cache_read_input_tokens);
        totals.requests += 1;
    }

    /// A snapshot of the totals.
    pub fn totals(&self) -> TokenTotals {
        *self.lock()
    }

    /// Dollars spent so far.
    pub fn cost(&self) -> f64 {
        self.prices.cost(&self.totals().as_usage())
    }

    /// Dollars caching saved so far (negative while writes dominate).
    pub fn cache_savings(&self) -> f64 {
        self.prices.cache_savings(&self.totals().as_usage())
    }

    /// `N input / M output (approx $X.XX)`; see [`format_summary`].
    pub fn summary(&self) -> String {
        format_summary(&self.totals(), self.prices)
    }

    /// The caching breakdown; see [`format_cache_summary`].
    pub fn cache_summary(&self) -> String {
        format_cache_summary(&self.totals(), self.prices)
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
pub fn format_summary(totals: &TokenTotals, prices: Prices) -> String {
    format!(
        "{} input / {} output (approx ${:.2})",
        format_thousands(totals.all_input_tokens()),
        format_thousands(totals.output_tokens),
        prices.cost(&totals.as_usage())
    )
}

/// `cache: R read / W written, saved approx $S.SS` (or `cost approx $S.SS
/// extra` while writes outweigh reads).
pub fn format_cache_summary(totals: &TokenTotals, prices: Prices) -> String {
    let savings = prices.cache_savings(&totals.as_usage());
    let verdict = if savings >= 0.0 {
        format!("saved approx ${savings:.2}")
    } else {
        format!("cost approx ${:.2} extra", -savings)
    };
    format!(
        "cache: {} read / {} written, {verdict}",
        format_thousands(totals.cache_read_input_tokens),
        format_thousands(totals.cache_creation_input_tokens),
    )
}

/// One agent loop's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopUsage {
    /// This loop's tokens, summed over its calls.
    pub tokens: Usage,
    /// Calls made by this loop.
    pub turns: u32,
    /// The latest call's context: input + cache writes + cache reads.
    pub last_context: u64,
}

impl LoopUsage {
    pub fn new() -> LoopUsage {
        LoopUsage::default()
    }

    /// Add one call's usage.
    pub fn record(&mut self, usage: &Usage) {
        self.tokens.accumulate(usage);
        self.turns += 1;
        self.last_context = usage.context_tokens();
    }

    /// This loop's tokens as one [`Usage`], for pricing.
    pub fn as_usage(&self) -> Usage {
        self.tokens
    }

    /// True once the latest call's context passed [`CONTEXT_BUDGET`].
    pub fn budget_exceeded(&self) -> bool {
        self.last_context > CONTEXT_BUDGET
    }

    /// Tokens this loop spent: every input token processed plus output.
    pub fn total(&self) -> u64 {
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
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn price_table() {
        assert_eq!(Prices::for_model("claude-sonnet-4-5"), SONNET_PRICES);
        assert_eq!(Prices::for_model("claude-sonnet-4-20250514"), SONNET_PRICES);
        assert_eq!(Prices::for_model("claude-3-7-sonnet-latest"), SONNET_PRICES);
        let p = |m| {
            let p = Prices::for_model(m);
            (p.input_per_mtok, p.output_per_mtok)
        };
        assert_eq!(p("claude-opus-4-5-20251101"), (5.0, 25.0));
        assert_eq!(p("claude-opus-4-1"), (15.0, 75.0));
        assert_eq!(p("claude-3-opus-20240229"), (15.0, 75.0));
        assert_eq!(p("claude-haiku-4-5"), (1.0, 5.0));
        assert_eq!(p("claude-3-5-haiku-latest"), (0.8, 4.0));
        assert_eq!(p("claude-3-haiku-20240307"), (0.25, 1.25));
        assert_eq!(p("Claude-Opus-4-5"), (5.0, 25.0));
        assert_eq!(p("some-local-model"), (3.0, 15.0));
    }

    #[test]
    fn original_prices_without_cache() {
        // One million in, one million out on Sonnet: $3 + $15.
        let cost = SONNET_PRICES.cost(&usage(1_000_000, 1_000_000, 0, 0));
        assert!(close(cost, 18.0), "{cost}");
        assert!(close(
            estimate_cost("claude-sonnet-4-5", &usage(1_000_000, 0, 0, 0)),
            3.0
        ));
    }

    #[test]
    fn cache_multipliers() {
        let writes = SONNET_PRICES.cost(&usage(0, 0, 1_000_000, 0));
        assert!(close(writes, 3.75), "{writes}");
        let reads = SONNET_PRICES.cost(&usage(0, 0, 0, 1_000_000));
        assert!(close(reads, 0.30), "{reads}");
    }

    #[test]
    fn savings() {
        // 1M read from cache instead of paid in full: $3.00 - $0.30.
        let saved = SONNET_PRICES.cache_savings(&usage(0, 0, 0, 1_000_000));
        assert!(close(saved, 2.70), "{saved}");
        // A write alone costs a quarter more than no caching.
        let saved = SONNET_PRICES.cache_savings(&usage(0, 0, 1_000_000, 0));
        assert!(close(saved, -0.75), "{saved}");
        // Output never changes with caching.
        assert!(close(
            SONNET_PRICES.cache_savings(&usage(10, 5_000, 0, 0)),
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
        assert!(close(tracker.cost(), expected));
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
        assert_eq!(CONTEXT_BUDGET, 140_000);
        let mut lp = LoopUsage::new();
        // Caching hides almost all of the context from input_tokens.
        lp.record(&usage(2_000, 300, 0, 130_000));
        assert_eq!(lp.last_context, 132_000);
        assert!(!lp.budget_exceeded());
        lp.record(&usage(1_000, 300, 9_000, 130_001));
        assert_eq!(lp.last_context, 140_001);
        assert!(lp.budget_exceeded());
        assert_eq!(lp.turns, 2);
        assert_eq!(lp.total(), 3_000 + 600 + 9_000 + 260_001);
        // Only the latest call counts for the budget.
        lp.record(&usage(10, 1, 0, 0));
        assert!(!lp.budget_exceeded());
    }

    #[test]
    fn absurd_counts_saturate_instead_of_panicking() {
        let huge = Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
            cache_creation_input_tokens: u64::MAX,
            cache_read_input_tokens: u64::MAX,
        };
        let tracker = TokenTracker::new("claude-sonnet-4-5");
        tracker.record(&huge);
        tracker.record(&huge);
        let mut looped = LoopUsage::default();
        looped.record(&huge);
        looped.record(&huge);
        assert_eq!(huge.context_tokens(), u64::MAX);
        assert!(looped.budget_exceeded());
    }
}
