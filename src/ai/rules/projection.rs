//! The pure projection behind `--estimate` and the budget: from measured
//! prompt and file sizes (reference tokens) and a model's [`ModelTerms`] to
//! calls, usage and cost in the low and high scenarios ([`project`]), one
//! dir loop at a time ([`project_loop`]).
//!
//! The model of a run it implements is described on [`crate::ai::estimate`].
//! Its edges: it measures nothing (the sizes come from the estimate's
//! gathering), renders nothing (the estimate's report does), and knows no
//! decision beyond the [`Inputs`] it is given; [`crate::ai::rules::decide`]
//! prices loops with it too, which is why it sits with the rules, below
//! both.

use serde::Serialize;

use crate::ai::api::Usage;
use crate::ai::api::catalog::ModelFacts;
use crate::ai::api::cost::Pricing;
use crate::ai::api::settings::{CallSettings, Workload, context_budget};
use crate::money::Usd;

use crate::ai::api::tokens::TokenEstimate;
/// Measured in reference tokens ([`reference_tokens`]), which
/// [`ModelTerms::text_scale`] turns into the model's tokens.
pub(crate) use crate::ai::api::tokens::reference_tokens;
/// Turns per directory in the low projection.
pub(crate) const LOW_TURNS: u32 = 3;
/// Output per dir-loop turn: a step line, tool calls and cache summaries.
pub(crate) const DIR_OUTPUT_TOKENS_PER_TURN: u64 = 350;
/// Output of the survey call.
pub(crate) const SURVEY_OUTPUT_TOKENS: u64 = 400;
/// Output of the planning call.
pub(crate) const PLANNING_OUTPUT_TOKENS: u64 = 800;
/// Output of the synthesis call (brief and detailed analysis).
pub(crate) const SYNTHESIS_OUTPUT_TOKENS: u64 = 1_500;
/// A group summary (about 300 words, asked for) as its call writes it and
/// the next synthesis level reads it.
pub(crate) const GROUP_OUTPUT_TOKENS: u64 = 800;
/// A directory summary (1-3 sentences) as a parent's or synthesis's prompt
/// will carry it, for directories not summarized yet.
pub(crate) const SUMMARY_BYTES: usize = 320;
/// The survey block in dir and planning prompts (description, approach,
/// tool advice), which only exists once the survey ran.
pub(crate) const SURVEY_BLOCK_BYTES: u64 = 600;

/// One directory loop to project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirInput {
    /// System prompt + kickoff + tool definitions, in tokens.
    pub prompt_tokens: u64,
    /// Tokens of the directory's files, as `read_tokens` counts them: the
    /// high projection reads them all.
    pub read_tokens: u64,
    /// What the low projection reads: the files an agent is expected to
    /// read ([`crate::ai::rules::decide::expected_read_bytes`]).
    pub read_tokens_low: u64,
    /// The turns the run would allot (10, or the saved plan's).
    pub turns: u32,
    /// Tokens of the start read back from the cache instead of written:
    /// the tools and system prompt another loop of the run wrote first.
    pub prefix_tokens: u64,
}

/// Everything the projection needs, measured by `--estimate`'s gathering.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Inputs {
    /// Prompt tokens of the survey call, when one would be made.
    pub survey: Option<u64>,
    /// Prompt tokens of the planning call, when one would be made.
    pub planning: Option<u64>,
    /// Prompt tokens of each synthesis call (none when a saved synthesis
    /// built from the same entries is reused).
    pub synthesis: Vec<u64>,
    /// One entry per directory to investigate.
    pub dirs: Vec<DirInput>,
    /// What holds the run's spending, when a budget does.
    pub ceiling: Option<Ceiling>,
}

/// What holds a run's spending: `--budget` and `--max-cost`, the lower of
/// the two, and `--token-budget`. The run starts no work the money left
/// cannot pay for and sends no request the tokens left cannot, so the
/// projection bills at most this, and counts at most those tokens, whatever
/// the tree would take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ceiling {
    /// `--budget`, if any.
    pub budget: Option<Usd>,
    /// `--max-cost`, if any.
    pub max_cost: Option<Usd>,
    /// `--token-budget`, if any.
    pub tokens: Option<u64>,
}

impl Ceiling {
    /// The ceiling of a run with `budget` and `max_cost`, if either is set.
    pub(crate) fn of(budget: Option<Usd>, max_cost: Option<Usd>) -> Option<Ceiling> {
        (budget.is_some() || max_cost.is_some()).then_some(Ceiling {
            budget,
            max_cost,
            tokens: None,
        })
    }

    /// The ceiling of a run with `budget`, `max_cost` and a token budget of
    /// `tokens`, if any is set.
    pub(crate) fn with_tokens(
        budget: Option<Usd>,
        max_cost: Option<Usd>,
        tokens: Option<u64>,
    ) -> Option<Ceiling> {
        match Ceiling::of(budget, max_cost) {
            Some(ceiling) => Some(Ceiling { tokens, ..ceiling }),
            None => tokens.map(|tokens| Ceiling {
                budget: None,
                max_cost: None,
                tokens: Some(tokens),
            }),
        }
    }

    /// The most the run can spend.
    pub(crate) fn limit(&self) -> Usd {
        self.budget
            .unwrap_or(Usd::UNLIMITED)
            .min(self.max_cost.unwrap_or(Usd::UNLIMITED))
    }
}

/// What the projection takes from the catalog for one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ModelTerms {
    /// The model's tokens per reference token (bytes / 4): the catalog's
    /// tokens per byte times 4, so 1.0 on the older tokenizer and 1.3 on
    /// the newer one.
    pub text_scale: f64,
    /// A dir loop stops once a context passes this many tokens.
    pub context_budget: u64,
    /// Thinking output of one survey, planning or synthesis call.
    pub judgment_thinking: u64,
    /// Thinking output of one dir-loop turn.
    pub routine_thinking: u64,
    pub pricing: Pricing,
}

impl ModelTerms {
    /// The terms of `model` (the catalog's stand-in when it is unknown).
    #[cfg(test)]
    pub(crate) fn of(model: &str) -> ModelTerms {
        ModelTerms::new(ModelFacts::of(model))
    }

    /// The terms of the model the catalog describes as `facts`.
    pub(crate) fn new(facts: ModelFacts) -> ModelTerms {
        let m = facts.model;
        ModelTerms {
            text_scale: TokenEstimate::of(m).per_reference_token(),
            context_budget: context_budget(m),
            judgment_thinking: CallSettings::new(m, Workload::Judgment).expected_thinking_tokens(),
            routine_thinking: CallSettings::new(m, Workload::Routine).expected_thinking_tokens(),
            pricing: Pricing::of(m),
        }
    }

    /// The terms of a run on the model of `facts`: at the catalog's batch
    /// prices when it goes through the Message Batches API (`--batch`),
    /// which answers the same requests for less, so the same budget buys
    /// more work.
    pub(crate) fn for_run(facts: ModelFacts, batch: bool) -> ModelTerms {
        let terms = ModelTerms::new(facts);
        // A token is a token, however it is sent.
        if batch && !facts.counts_tokens {
            ModelTerms {
                pricing: terms.pricing.batch(),
                ..terms
            }
        } else {
            terms
        }
    }

    /// Reference tokens in this model's tokens, rounded up.
    pub(crate) fn scale(&self, reference_tokens: u64) -> u64 {
        (reference_tokens as f64 * self.text_scale).ceil() as u64
    }

    /// Reference tokens in the most tokens this model is taken to make of
    /// them, as a request is held to (the margin of
    /// [`crate::ai::api::tokens::TokenEstimate::at_most`]).
    pub(crate) fn at_most(&self, reference_tokens: u64) -> u64 {
        (self.scale(reference_tokens) as f64 * crate::ai::api::settings::COUNT_MARGIN).ceil() as u64
    }
}

/// Calls, token usage and cost of one scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Tally {
    pub calls: u64,
    pub usage: Usage,
    /// Dollars, each call priced on its own.
    pub cost: f64,
}

impl Tally {
    /// Every token this tally counts, input of every kind and output.
    pub(crate) fn tokens(&self) -> u64 {
        self.usage
            .context_tokens()
            .saturating_add(self.usage.output_tokens)
    }

    /// These tokens cut to `most` in all, each kind in proportion, and the
    /// cost with them.
    fn hold_tokens_to(&mut self, most: u64) {
        let all = self.tokens();
        if all <= most {
            return;
        }
        let share = most as f64 / all as f64;
        let cut = |n: u64| (n as f64 * share).floor() as u64;
        let u = &mut self.usage;
        u.input_tokens = cut(u.input_tokens);
        u.output_tokens = cut(u.output_tokens);
        u.cache_creation_input_tokens = cut(u.cache_creation_input_tokens);
        u.cache_read_input_tokens = cut(u.cache_read_input_tokens);
        self.cost *= share;
    }

    fn add(&mut self, other: Tally) {
        self.calls += other.calls;
        self.usage.accumulate(&other.usage);
        self.cost += other.cost;
    }

    /// One more call with `usage`.
    fn call(&mut self, usage: Usage, pricing: &Pricing) {
        self.calls += 1;
        self.cost += pricing.cost(&usage);
        self.usage.accumulate(&usage);
    }

    /// One call with `input` tokens of prompt (priced as plain input: a
    /// single call's prefix is never read back) and `output` tokens of reply.
    pub(crate) fn single(input: u64, output: u64, pricing: &Pricing) -> Tally {
        let mut tally = Tally::default();
        tally.call(
            Usage {
                input_tokens: input,
                output_tokens: output,
                ..Usage::default()
            },
            pricing,
        );
        tally
    }
}

/// A low and a high figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Range<T> {
    pub low: T,
    pub high: T,
}

/// One dir loop of `turns` turns starting from `prompt_tokens`, reading
/// `read_tokens` of files spread evenly over the turns after the first
/// (both in reference tokens; `terms` scales them to the model's).
/// With `caching`, each turn reads the previous context back from the cache
/// and writes only the new part; without, all of it is plain input. The
/// first `prefix_tokens` of the prompt (the tools and the system prompt
/// every loop of a run shares) another loop already wrote to the cache:
/// with caching, the first turn reads them back instead of writing them
/// (0 for the run's first loop). The loop stops before a turn once the
/// previous context passed the model's budget, as the real loop does.
/// Thinking is output, not resent.
pub(crate) fn project_loop(
    prefix_tokens: u64,
    prompt_tokens: u64,
    read_tokens: u64,
    turns: u32,
    caching: bool,
    terms: &ModelTerms,
) -> Tally {
    let turns = u64::from(turns);
    let prefix_tokens = terms.scale(prefix_tokens.min(prompt_tokens));
    let prompt_tokens = terms.scale(prompt_tokens);
    let read_tokens = terms.scale(read_tokens);
    let text_output = terms.scale(DIR_OUTPUT_TOKENS_PER_TURN);
    let growth = if turns > 1 {
        read_tokens.div_ceil(turns - 1) + text_output
    } else {
        0
    };
    let mut tally = Tally::default();
    let mut last_context = 0;
    for turn in 0..turns {
        if turn > 0 && last_context > terms.context_budget {
            break;
        }
        let context = prompt_tokens + turn * growth;
        let mut usage = Usage {
            output_tokens: text_output + terms.routine_thinking,
            ..Usage::default()
        };
        if !caching {
            usage.input_tokens = context;
        } else if turn == 0 {
            usage.cache_read_input_tokens = prefix_tokens;
            usage.cache_creation_input_tokens = context - prefix_tokens;
        } else {
            usage.cache_read_input_tokens = last_context;
            usage.cache_creation_input_tokens = context - last_context;
        }
        tally.call(usage, &terms.pricing);
        last_context = context;
    }
    tally
}

/// Calls, usage and cost of the whole run in the low and high scenarios.
pub(crate) fn project(inputs: &Inputs, terms: &ModelTerms) -> Range<Tally> {
    Range {
        low: scenario(inputs, terms, true),
        high: scenario(inputs, terms, false),
    }
}

/// Calls, usage and cost of the whole run in one scenario, the `low` one or
/// the high one: each call is added in the run's order.
fn scenario(inputs: &Inputs, terms: &ModelTerms, low: bool) -> Tally {
    let mut tally = Tally::default();
    if let Some(tokens) = inputs.survey {
        tally.add(judgment_call(tokens, SURVEY_OUTPUT_TOKENS, terms));
    }
    if let Some(tokens) = inputs.planning {
        tally.add(judgment_call(tokens, PLANNING_OUTPUT_TOKENS, terms));
    }
    for dir in &inputs.dirs {
        tally.add(dir_loop(dir, low, terms));
    }
    // In levels, every call before the verdict summarises a group and
    // thinks as routine work.
    let verdict = inputs.synthesis.len().saturating_sub(1);
    for (n, tokens) in inputs.synthesis.iter().enumerate() {
        tally.add(if n == verdict {
            judgment_call(*tokens, SYNTHESIS_OUTPUT_TOKENS, terms)
        } else {
            Tally::single(
                terms.scale(*tokens),
                terms.scale(GROUP_OUTPUT_TOKENS) + terms.routine_thinking,
                &terms.pricing,
            )
        });
    }
    // Calls stay what the tree would take; the bill cannot pass the
    // ceiling, nor the tokens the token budget (each kind cut in
    // proportion, and the bill with them).
    if let Some(ceiling) = inputs.ceiling {
        // A projection with a ceiling is the estimate's, priced at the
        // model's dollar rates.
        tally.cost = tally.cost.min(ceiling.limit().as_f64());
        if let Some(most) = ceiling.tokens {
            tally.hold_tokens_to(most);
        }
    }
    tally
}

/// One call of `prompt` tokens that writes a judgment of `output` tokens
/// (the survey, the plan, the verdict), thinking as judgment work.
fn judgment_call(prompt: u64, output: u64, terms: &ModelTerms) -> Tally {
    Tally::single(
        terms.scale(prompt),
        terms.scale(output) + terms.judgment_thinking,
        &terms.pricing,
    )
}

/// One directory's loop in a scenario: the `low` one runs at most
/// [`LOW_TURNS`] turns, reads what an agent is expected to read and
/// caches; the high one runs every allotted turn and reads every file.
fn dir_loop(dir: &DirInput, low: bool, terms: &ModelTerms) -> Tally {
    let turns = if low {
        dir.turns.min(LOW_TURNS)
    } else {
        dir.turns
    };
    let read = if low {
        dir.read_tokens_low
    } else {
        dir.read_tokens
    };
    project_loop(
        dir.prefix_tokens,
        dir.prompt_tokens,
        read,
        turns,
        low,
        terms,
    )
}
