use super::*;
use crate::ai::rules::projection::*;
use crate::ai::tools::fs::DEFAULT_MAX_BYTES;
use crate::money::Usd;
use crate::testing::json_keys;

/// Sonnet 4.5's terms: the reference tokenizer, a 140K budget, no thinking.
fn terms() -> ModelTerms {
    ModelTerms::of("claude-sonnet-4-5")
}

#[test]
fn tokens_are_bytes_over_four_rounded_up() {
    assert_eq!(reference_tokens(0), 0);
    assert_eq!(reference_tokens(1), 1);
    assert_eq!(reference_tokens(4), 1);
    assert_eq!(reference_tokens(9), 3);
}

#[test]
fn reads_are_cut_at_read_files_default() {
    assert_eq!(read_tokens([]), 0);
    assert_eq!(read_tokens([400, 4]), 101);
    // A 1 MB file costs what its first 4 KiB cost.
    assert_eq!(read_tokens([1_000_000]), DEFAULT_MAX_BYTES / 4);
}

#[test]
fn a_loop_without_caching_resends_everything() {
    // 3 turns, 1000 tokens of files over the 2 later turns: growth 500 + 350.
    let tally = project_loop(0, 2_000, 1_000, 3, false, &terms());
    assert_eq!(tally.calls, 3);
    assert_eq!(tally.usage.input_tokens, 2_000 + 2_850 + 3_700);
    assert_eq!(tally.usage.output_tokens, 3 * DIR_OUTPUT_TOKENS_PER_TURN);
    assert_eq!(tally.usage.cache_read_input_tokens, 0);
    assert_eq!(tally.usage.cache_creation_input_tokens, 0);
}

#[test]
fn a_cached_loop_reads_back_the_previous_context() {
    let plain = project_loop(0, 2_000, 1_000, 3, false, &terms());
    let cached = project_loop(0, 2_000, 1_000, 3, true, &terms());
    assert_eq!(cached.calls, 3);
    assert_eq!(cached.usage.input_tokens, 0);
    assert_eq!(cached.usage.cache_read_input_tokens, 2_000 + 2_850);
    // Written: the first context, then each turn's growth.
    assert_eq!(cached.usage.cache_creation_input_tokens, 3_700);
    // Same tokens processed, far cheaper.
    assert_eq!(cached.usage.context_tokens(), plain.usage.context_tokens());
    assert!(cached.cost < plain.cost);
}

#[test]
fn a_shared_prefix_is_read_not_written() {
    let alone = project_loop(0, 3_000, 1_000, 3, true, &terms());
    let sharing = project_loop(2_000, 3_000, 1_000, 3, true, &terms());
    assert_eq!(sharing.usage.context_tokens(), alone.usage.context_tokens());
    assert_eq!(
        sharing.usage.cache_read_input_tokens,
        alone.usage.cache_read_input_tokens + 2_000
    );
    assert!(sharing.cost < alone.cost);
    // Without caching nothing is read, shared or not.
    assert_eq!(
        project_loop(2_000, 3_000, 1_000, 3, false, &terms()),
        project_loop(0, 3_000, 1_000, 3, false, &terms())
    );
}

#[test]
fn a_binding_budget_says_what_it_bought() {
    let mut counts = counts();
    counts.budget_binding = true;
    counts.units = 30;
    counts.loops_affordable = 12;
    counts.directories_folded = 7;
    counts.directories_mechanical = 20;
    counts.synthesis_levels = 1;
    let estimate = Estimate::new(counts, &inputs(true, true, 10));
    assert_eq!(estimate.directories_to_investigate, 17);
    let text = estimate.render_text();
    assert!(
        text.contains(
            "Budget: $5.00 buys 10 loops (7 directories folded into them); 20 directories \
             summarised from the scan"
        ),
        "{text}"
    );
}

#[test]
fn one_turn_reads_nothing_and_zero_turns_cost_nothing() {
    let one = project_loop(0, 1_000, 50_000, 1, false, &terms());
    assert_eq!((one.calls, one.usage.input_tokens), (1, 1_000));
    assert_eq!(
        project_loop(0, 1_000, 50_000, 0, true, &terms()),
        Tally::default()
    );
}

#[test]
fn the_context_budget_ends_a_loop_early() {
    // Files worth far more than the budget: the loop stops once a context
    // passed it, not after all 10 turns.
    let tally = project_loop(0, 10_000, 2_000_000, 10, false, &terms());
    assert!(tally.calls < 10, "{tally:?}");
    assert!(tally.calls >= 2, "{tally:?}");
    let full = project_loop(0, 10_000, 2_000, 10, false, &terms());
    assert_eq!(full.calls, 10);
}

fn inputs(survey: bool, planning: bool, dirs: usize) -> Inputs {
    Inputs {
        survey: survey.then_some(3_000),
        planning: planning.then_some(4_000),
        synthesis: vec![2_000],
        dirs: vec![
            DirInput {
                prompt_tokens: 3_000,
                read_tokens: 5_000,
                read_tokens_low: 2_000,
                turns: 10,
                prefix_tokens: 0,
            };
            dirs
        ],
        ceiling: None,
    }
}

#[test]
fn calls_count_passes_and_turns() {
    let tally = project(&inputs(true, true, 4), &terms());
    assert_eq!(tally.low.calls, 2 + 4 * u64::from(LOW_TURNS) + 1);
    assert_eq!(tally.high.calls, 2 + 4 * 10 + 1);
    let tiny = project(&inputs(false, false, 1), &terms());
    assert_eq!(tiny.low.calls, u64::from(LOW_TURNS) + 1);
    assert_eq!(tiny.high.calls, 10 + 1);
    // Nothing to investigate: the fixed passes still run.
    let cached = project(&inputs(true, true, 0), &terms());
    assert_eq!((cached.low.calls, cached.high.calls), (3, 3));
}

#[test]
fn low_turns_never_exceed_the_allotment() {
    let mut shallow = inputs(false, false, 1);
    shallow.dirs[0].turns = 2;
    assert_eq!(project(&shallow, &terms()).low.calls, 2 + 1);
}

fn counts() -> Counts {
    Counts {
        target: "/w/app".into(),
        model: "claude-sonnet-4-5".into(),
        model_facts: crate::ai::api::catalog::ModelFacts::of("claude-sonnet-4-5"),
        model_warning: None,
        investigation_id: None,
        batch: false,
        directories_total: 6,
        directories_cached: 2,
        directories_skipped: 0,
        budget_usd: Some(Usd::new(5.0)),
        max_cost_usd: None,
        token_budget: None,
        tokens_per_second: None,
        plan_meter: crate::ai::engine::purse::Meter::Dollars,
        budget_binding: false,
        units: 4,
        loops_affordable: 4,
        directories_folded: 0,
        directories_mechanical: 0,
        synthesis_levels: 0,
        token_calibration: None,
        token_calibration_error: None,
    }
}

#[test]
fn the_estimate_is_a_priced_range() {
    let estimate = Estimate::new(counts(), &inputs(true, true, 4));
    assert_eq!(estimate.directories_to_investigate, 4);
    assert!(estimate.api_calls.low < estimate.api_calls.high);
    assert!(estimate.input_tokens.low < estimate.input_tokens.high);
    assert!(estimate.output_tokens.low < estimate.output_tokens.high);
    assert!(Usd::ZERO < estimate.cost_usd.low && estimate.cost_usd.low < estimate.cost_usd.high);
    // Opus lists at 5x Sonnet: the same tokens cost 5x.
    let opus = Estimate::new(
        Counts {
            model: "claude-opus-4-1".into(),
            model_facts: crate::ai::api::catalog::ModelFacts::of("claude-opus-4-1"),
            ..counts()
        },
        &inputs(true, true, 4),
    );
    let ratio = opus.cost_usd.high / estimate.cost_usd.high;
    assert!((ratio - 5.0).abs() < 0.01, "{ratio}");
}

#[test]
fn batch_prices_halve_every_figure_in_dollars_and_no_other() {
    let interactive = Estimate::new(counts(), &inputs(true, true, 4));
    let batch = Estimate::new(
        Counts {
            batch: true,
            ..counts()
        },
        &inputs(true, true, 4),
    );
    assert!(batch.counts.batch && !interactive.counts.batch);
    // High: no cache hit, so nothing written either: exactly half.
    let (b, i) = (
        batch.cost_usd.high.as_f64(),
        interactive.cost_usd.high.as_f64(),
    );
    assert!((b * 2.0 - i).abs() < 0.0002, "{b} vs {i}");
    // Low: what caching writes lasts an hour in a batch, at 2x the input
    // price rather than 1.25x, so a little more than half.
    let (b, i) = (
        batch.cost_usd.low.as_f64(),
        interactive.cost_usd.low.as_f64(),
    );
    assert!(b * 2.0 > i && b * 2.0 < i * 1.6, "{b} vs {i}");
    assert_eq!(batch.api_calls, interactive.api_calls);
    assert_eq!(batch.input_tokens, interactive.input_tokens);
    assert_eq!(batch.output_tokens, interactive.output_tokens);
    assert!(
        batch
            .render_text()
            .contains("at Message Batches API prices")
    );
    assert!(!interactive.render_text().contains("Batches"));
}

#[test]
fn json_keys_are_stable() {
    let estimate = Estimate::new(counts(), &inputs(true, false, 1));
    let value = serde_json::to_value(&estimate).unwrap();
    let keys = json_keys(&value);
    assert_eq!(
        keys,
        [
            "target",
            "model",
            "model_warning",
            "investigation_id",
            "batch",
            "directories_total",
            "directories_cached",
            "directories_skipped",
            "budget_usd",
            "max_cost_usd",
            "token_budget",
            "tokens_per_second",
            "budget_binding",
            "units",
            "loops_affordable",
            "directories_folded",
            "directories_mechanical",
            "synthesis_levels",
            "directories_to_investigate",
            "survey",
            "planning",
            "synthesis",
            "loops",
            "api_calls",
            "input_tokens",
            "output_tokens",
            "tokens",
            "duration_seconds",
            "cost_usd",
            "cost_held_by_budget"
        ]
    );
    assert_eq!(value["planning"], false);
    assert!(value["api_calls"]["low"].is_u64() && value["cost_usd"]["high"].is_f64());
}

#[test]
fn text_names_every_figure() {
    let mut estimate = Estimate::new(counts(), &inputs(true, true, 4));
    estimate.counts.directories_skipped = 1;
    let text = estimate.render_text();
    assert!(
        text.contains(
            "Directories: 6 found; 4 to investigate, 2 cached, 1 skipped by the saved plan"
        ),
        "{text}"
    );
    assert!(text.contains("(survey, planning, 4 directory loops, synthesis)"));
    assert!(text.contains("Input tokens: "));
    assert!(text.contains(&format!("${:.2}", estimate.cost_usd.high.as_f64())));
}

#[test]
fn a_fully_cached_target_costs_nothing() {
    let mut nothing = inputs(false, false, 0);
    nothing.synthesis = Vec::new();
    let estimate = Estimate::new(counts(), &nothing);
    assert_eq!((estimate.api_calls.low, estimate.api_calls.high), (0, 0));
    assert_eq!(estimate.cost_usd.high, Usd::ZERO);
    assert!(
        estimate
            .render_text()
            .contains("API calls: 0 to 0 (everything is cached)")
    );
}

#[test]
fn thinking_adds_output_where_the_model_thinks() {
    let inputs = inputs(true, true, 2);
    let plain = project(&inputs, &ModelTerms::of("claude-sonnet-5"));
    let thinking = project(&inputs, &ModelTerms::of("claude-sonnet-5-5"));
    // Same tokenizer; Sonnet 5 turns thinking off in loops but thinks in
    // the three judgment calls; Sonnet 5.5 also thinks between tools.
    let turns = thinking.high.calls - 3;
    assert_eq!(
        thinking.high.usage.output_tokens - plain.high.usage.output_tokens,
        turns * crate::ai::api::settings::BETWEEN_TOOLS_THINKING_TOKENS
    );
    let none = project(&inputs, &terms());
    let scaled = project(
        &inputs,
        &ModelTerms {
            judgment_thinking: 0,
            routine_thinking: 0,
            ..ModelTerms::of("claude-sonnet-5")
        },
    );
    assert_eq!(
        plain.high.usage.output_tokens - scaled.high.usage.output_tokens,
        3 * crate::ai::api::settings::JUDGMENT_THINKING_TOKENS
    );
    assert!(scaled.high.usage.output_tokens > none.high.usage.output_tokens);
}

#[test]
fn each_call_is_priced_on_its_own() {
    // Haiku 5.5's tier is per request: many calls under 100K never pay it,
    // though their sum is far past it.
    let terms = ModelTerms::of("claude-haiku-5-5");
    let tally = project_loop(0, 20_000, 40_000, 10, false, &terms);
    assert!(tally.usage.context_tokens() > 100_000);
    let summed = terms.pricing.cost(&tally.usage);
    assert!(tally.cost < summed / 2.0, "{} vs {summed}", tally.cost);
    // The budget for Haiku 5.5 keeps a loop's calls under the tier.
    assert_eq!(terms.context_budget, 70_000);
}

#[test]
fn a_warning_is_said_first() {
    let estimate = Estimate::new(
        Counts {
            model_warning: Some("model 'x' is not in luminos's catalog".into()),
            ..counts()
        },
        &inputs(true, true, 1),
    );
    let text = estimate.render_text();
    assert_eq!(
        text.lines().nth(1),
        Some("Warning: model 'x' is not in luminos's catalog")
    );
    let value = serde_json::to_value(&estimate).unwrap();
    assert_eq!(
        value["model_warning"],
        "model 'x' is not in luminos's catalog"
    );
}

#[test]
fn the_budget_or_the_cap_holds_the_high_cost() {
    let many = inputs(true, true, 400);
    let unbounded = project(&many, &terms());
    let held_by = |budget: Option<f64>, max_cost: Option<f64>| {
        project(
            &Inputs {
                ceiling: Ceiling::of(budget.map(Usd::new), max_cost.map(Usd::new)),
                ..many.clone()
            },
            &terms(),
        )
    };
    assert!(unbounded.high.cost > 5.0, "{unbounded:?}");
    let held = held_by(Some(5.0), None);
    assert_eq!(held.high.cost, 5.0);
    // The lower of the budget and --max-cost holds it.
    assert_eq!(held_by(Some(5.0), Some(2.5)).high.cost, 2.5);
    assert_eq!(held_by(None, Some(2.5)).high.cost, 2.5);
    assert_eq!(held_by(Some(1.0), Some(2.5)).high.cost, 1.0);
    assert_eq!(Ceiling::of(None, None), None);
    // Calls and tokens are what the tree would take; the low figure is
    // held the same way.
    assert_eq!(held.high.calls, unbounded.high.calls);
    assert!(held.low.cost <= unbounded.low.cost && held.low.cost <= held.high.cost);
    // A tree the budget covers is not held.
    let few = Inputs {
        ceiling: Ceiling::of(Some(Usd::new(5.0)), None),
        ..inputs(true, true, 2)
    };
    assert_eq!(
        project(&few, &terms()),
        project(&inputs(true, true, 2), &terms())
    );
}

#[test]
fn the_text_counts_the_synthesis_levels_as_the_json_does() {
    let mut counts = counts();
    counts.synthesis_levels = 1;
    let estimate = Estimate::new(counts, &inputs(true, true, 4));
    let text = estimate.render_text();
    assert!(
        text.contains("synthesis: 1 level of parts, then the verdict"),
        "{text}"
    );
    let value = serde_json::to_value(&estimate).unwrap();
    assert_eq!(value["synthesis_levels"], 1);
    let mut counts = self::counts();
    counts.synthesis_levels = 2;
    let text = Estimate::new(counts, &inputs(true, true, 4)).render_text();
    assert!(
        text.contains("synthesis: 2 levels of parts, then the verdict"),
        "{text}"
    );
}

#[test]
fn a_calibration_scales_every_token_figure_and_no_decision() {
    let plain = Estimate::new(counts(), &inputs(true, true, 4));
    let calibration = super::calibrate::TokenCalibration {
        counted: 1_100,
        estimated: 1_000,
        factor: 1.1,
    };
    let calibrated = plain.clone().calibrated(calibration);
    assert_eq!(calibrated.api_calls, plain.api_calls);
    assert_eq!(calibrated.loops, plain.loops);
    let scaled = |n: u64| n as f64 * 1.1;
    let (got, want) = (
        calibrated.input_tokens.high as f64,
        scaled(plain.input_tokens.high),
    );
    assert!((got - want).abs() <= want * 0.01, "{got} vs {want}");
    assert!(calibrated.cost_usd.high > plain.cost_usd.high);
    let value = serde_json::to_value(&calibrated).unwrap();
    assert_eq!(value["token_calibration"]["factor"], 1.1);
    assert!(calibrated.render_text().contains(
        "it counted 1,100 tokens in the first loop's prompt where the estimate's rule made 1,000"
    ));
}

/// The tokens in all, held to a token budget, and the time they take at
/// the throughput given (or a line saying the estimate cannot tell).
#[test]
fn tokens_in_all_and_the_time_they_take() {
    let plain = Estimate::new(counts(), &inputs(true, true, 4));
    assert_eq!(
        plain.tokens.high,
        plain.input_tokens.high + plain.output_tokens.high
    );
    assert_eq!(plain.duration_seconds, None);
    let text = plain.render_text();
    assert!(text.contains("Tokens in all: "), "{text}");
    assert!(
        text.contains("cannot tell without --tokens-per-second"),
        "{text}"
    );
    let mut timed = counts();
    timed.tokens_per_second = Some(40.0);
    let timed = Estimate::new(timed, &inputs(true, true, 4));
    let seconds = timed.duration_seconds.unwrap();
    assert_eq!(
        seconds.high,
        (timed.tokens.high as f64 / 40.0).ceil() as u64
    );
    assert!(timed.render_text().contains(" at 40 tokens a second"));
    // A token budget holds the tokens, the bill with them.
    let mut held = inputs(true, true, 4);
    let most = plain.tokens.low / 2;
    held.ceiling = Ceiling::with_tokens(None, None, Some(most));
    let mut counts = counts();
    counts.token_budget = Some(most);
    let held = Estimate::new(counts, &held);
    assert!(
        held.tokens.high <= most && held.tokens.low <= most,
        "{:?}",
        held.tokens
    );
    assert!(held.cost_usd.high < plain.cost_usd.high);
    assert!(held.render_text().contains("held to the token budget"));
}
