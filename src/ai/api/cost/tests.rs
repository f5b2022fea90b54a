//! The tests of [`super`]: pricing and token accounting.

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
