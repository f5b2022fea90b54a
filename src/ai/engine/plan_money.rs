//! What a run's plan counts its money in: dollars, as always, or tokens
//! when a token budget (`--token-budget`) is sure to run out before any
//! dollar ceiling can.
//!
//! The purse holds every ceiling, each request priced at its worst case
//! against each ([`crate::ai::engine::purse`]), so whatever the plan, the
//! first ceiling reached ends the run. The plan (which loops the decision
//! buys, what it keeps back for the synthesis, when the scheduler replans)
//! counts in one meter. A model that costs nothing (`--price 0,0`) is the
//! case that needs it: there every dollar figure is zero, so a plan in
//! dollars would buy every loop and keep nothing for the synthesis, and the
//! token budget would end the run halfway. So the plan counts in tokens when
//! the tokens, even at the dearest rate the model charges for one, cost no
//! more than the lowest dollar ceiling; its facts are then the model's
//! priced at a dollar a million tokens of every kind
//! ([`ModelFacts::counting_tokens`]), so a cost is the tokens in millions and
//! every rule of the plan reads them unchanged. Otherwise it counts in
//! dollars, and the token budget is the purse's alone.
//!
//! Units: a plan's amounts are in its meter, so they are bare `f64`, not
//! [`Usd`]; [`PlanMoney::of`] is where the run's dollar ceilings become
//! them (explicitly, [`Usd::as_f64`]), and nothing turns a plan's amount
//! back into dollars.
//!
//! Pure: options in, the plan's meter, facts and ceilings out.

use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::cost::Pricing;
use crate::ai::engine::purse::Meter;
use crate::config::InvestigationOptions;
use crate::money::Usd;

/// The plan's money: its meter, the model's facts priced in it, and the
/// ceilings in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PlanMoney {
    pub meter: Meter,
    /// The model's facts, priced in the meter.
    pub facts: ModelFacts,
    /// The budget in the meter (dollars, or millions of tokens); `None`:
    /// no ceiling.
    pub budget: Option<f64>,
    /// `--max-cost`, when the plan counts dollars (one that counts tokens
    /// runs out of them before it could reach the cap).
    pub max_cost: Option<f64>,
}

impl PlanMoney {
    /// The plan of a run with `options`.
    pub(crate) fn of(options: &InvestigationOptions) -> PlanMoney {
        match options.token_budget {
            Some(tokens) if tokens_bind_first(options, tokens) => PlanMoney {
                meter: Meter::Tokens,
                facts: options.model_facts.counting_tokens(),
                budget: Some(tokens as f64 / 1_000_000.0),
                max_cost: None,
            },
            Some(_) | None => PlanMoney {
                meter: Meter::Dollars,
                facts: options.model_facts,
                budget: options.budget.map(Usd::as_f64),
                max_cost: options.max_cost.map(Usd::as_f64),
            },
        }
    }
}

/// Whether `tokens` cost no more than the lowest dollar ceiling of
/// `options`, every one of them at the dearest rate the model charges for
/// a token (its batch prices under `--batch`, its long-prompt tier).
fn tokens_bind_first(options: &InvestigationOptions, tokens: u64) -> bool {
    let mut pricing = Pricing::of(options.model_facts.model);
    if options.batch {
        pricing = pricing.batch();
    }
    let p = pricing.prices;
    let tier = pricing.tier.map_or(1.0, |tier| tier.multiplier.max(1.0));
    let dearest = [
        p.input,
        p.output,
        p.cache_write_5m,
        p.cache_write_1h,
        p.cache_read,
    ]
    .into_iter()
    .fold(0.0, f64::max)
        * tier;
    let ceiling = options
        .budget
        .unwrap_or(Usd::UNLIMITED)
        .min(options.max_cost.unwrap_or(Usd::UNLIMITED));
    // The dearest rate is the model's, in dollars: these tokens' price.
    Usd::new(tokens as f64 * dearest / 1_000_000.0) <= ceiling
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Mode;

    fn options(
        model: ModelFacts,
        budget: Option<f64>,
        tokens: Option<u64>,
    ) -> InvestigationOptions {
        let budget = budget.map(Usd::new);
        InvestigationOptions {
            fresh: false,
            model: "m".into(),
            model_facts: model,
            jobs: 4,
            mode: Mode::Investigate,
            max_cost: None,
            budget,
            token_budget: tokens,
            tokens_per_second: None,
            redact: true,
            batch: false,
            batch_size: 1,
            language: None,
            refine: None,
        }
    }

    #[test]
    fn a_free_model_plans_in_tokens_and_a_dear_budget_in_dollars() {
        let free = ModelFacts::of("qwen3-coder").with_price(0.0, 0.0);
        let plan = PlanMoney::of(&options(free, Some(5.0), Some(300_000)));
        assert_eq!(plan.meter, Meter::Tokens);
        assert_eq!(plan.budget, Some(0.3));
        assert!(plan.facts.counts_tokens);
        assert_eq!(plan.facts.model.prices.cache_read, 1.0);
        assert_eq!(plan.facts.model.context_window, free.model.context_window);
        assert_eq!(plan.max_cost, None);
        // Without a token budget: dollars, as ever.
        let plan = PlanMoney::of(&options(free, Some(5.0), None));
        assert_eq!((plan.meter, plan.budget), (Meter::Dollars, Some(5.0)));
        // Sonnet 5.5's dearest token is $10 a million: 300,000 cost at most
        // $3, so under $5 the tokens run out first; under $1 maybe not.
        let sonnet = ModelFacts::of("claude-sonnet-5-5");
        let tokens = |budget| PlanMoney::of(&options(sonnet, budget, Some(300_000))).meter;
        assert_eq!(tokens(Some(5.0)), Meter::Tokens);
        assert_eq!(tokens(None), Meter::Tokens);
        assert_eq!(tokens(Some(1.0)), Meter::Dollars);
        // A token's cost does not halve under --batch in the plan's facts.
        let mut batch = options(free, None, Some(1_000));
        batch.batch = true;
        let terms =
            crate::ai::rules::projection::ModelTerms::for_run(PlanMoney::of(&batch).facts, true);
        assert_eq!(terms.pricing.prices.input, 1.0);
    }
}
