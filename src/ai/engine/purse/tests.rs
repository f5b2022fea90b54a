//! The tests of [`super`]: the purse.

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
