//! The result of `--estimate` ([`Estimate`]): what was counted
//! ([`Counts`]) joined with the projection's low and high figures, as the
//! JSON report serializes it and as [`Estimate::render_text`] prints it.
//!
//! Its edges: the figures come from [`project`] and the
//! counts from [`estimate`] (in `gather.rs`); this file only assembles,
//! rounds and renders them. Its JSON keys are an interface (see the README).

use serde::Serialize;

use super::calibrate::{Probe, TokenCalibration};
use crate::ai::api::catalog::ModelFacts;
use crate::ai::engine::purse::Meter;
use crate::ai::rules::projection::{Inputs, LOW_TURNS, ModelTerms, Range, Tally, project};
use crate::text::format_thousands;

#[cfg(doc)]
use super::estimate;
use crate::money::Usd;

/// `95 s`, `12 min`, `3 h 05 min`: a duration as a person reads it.
fn duration(seconds: u64) -> String {
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7_200 => format!("{} min", seconds.div_ceil(60)),
        _ => {
            let minutes = seconds.div_ceil(60);
            format!("{} h {:02} min", minutes / 60, minutes % 60)
        }
    }
}

/// `40`, `12.5`: a throughput as given.
fn trim_rate(per_second: f64) -> String {
    if per_second.fract() == 0.0 {
        format!("{per_second:.0}")
    } else {
        format!("{per_second}")
    }
}

/// A projected cost (the estimate's terms are the model's dollar prices),
/// rounded to a hundredth of a cent so the JSON stays readable.
fn dollars(cost: f64) -> Usd {
    Usd::new(cost).to_hundredth_cent()
}

/// The result of `--estimate`, as printed (text) or serialized (`--json`):
/// what was counted, then what the projection makes of it. The JSON keys
/// are stable; see the README.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Estimate {
    /// What was counted before the projection (its keys come first).
    #[serde(flatten)]
    pub counts: Counts,
    /// Directories a dir loop would investigate (folded ones included).
    pub directories_to_investigate: usize,
    /// Whether a survey call would be made.
    pub survey: bool,
    /// Whether a planning call would be made.
    pub planning: bool,
    /// Whether a synthesis call would be made.
    pub synthesis: bool,
    /// Dir loops the run would make.
    pub loops: usize,
    pub api_calls: Range<u64>,
    /// Every input token, cached or not.
    pub input_tokens: Range<u64>,
    pub output_tokens: Range<u64>,
    /// Every token sent and received, input of every kind and output: what
    /// `--token-budget` holds, and what a local model works through.
    pub tokens: Range<u64>,
    /// How long the tokens would take at `--tokens-per-second`; `null`
    /// without it (the estimate cannot tell).
    pub duration_seconds: Option<Range<u64>>,
    pub cost_usd: Range<Usd>,
    /// The high cost is lower than every allotted turn of every loop would
    /// be: the budget (or `--max-cost`) holds it.
    pub cost_held_by_budget: bool,
    /// What the projection was made from, to make it again calibrated.
    #[serde(skip)]
    inputs: Inputs,
    /// The prompt to calibrate the token counts with, where there is one.
    #[serde(skip)]
    pub(crate) probe: Option<Probe>,
}

/// What [`estimate`] counted before the projection; serialized as the
/// first keys of [`Estimate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Counts {
    /// The target as the report names it.
    pub target: String,
    pub model: String,
    /// What the catalog (and `--price`) says of it: what it is priced at.
    #[serde(skip)]
    pub model_facts: ModelFacts,
    /// The catalog's warning about the model (unknown, so its price is
    /// assumed; deprecated; retired); `null` when there is none. Always
    /// present, so the keys of the JSON do not depend on the model; the
    /// same line goes to stderr (see `run`), where a `jq` pipeline's user
    /// sees it.
    pub model_warning: Option<String>,
    /// The investigation that would be resumed, if any.
    pub investigation_id: Option<String>,
    /// Priced for the Message Batches API (`--batch`).
    pub batch: bool,
    /// Every directory discovery found.
    pub directories_total: usize,
    /// Directories whose cached summary is kept as it is (not one a loop
    /// reads again, nor one summarised from the scan again).
    pub directories_cached: usize,
    /// Directories a saved plan skips (left out).
    pub directories_skipped: usize,
    /// `--budget` in dollars; `null` for no ceiling.
    pub budget_usd: Option<Usd>,
    /// `--max-cost` in dollars; `null` without one.
    pub max_cost_usd: Option<Usd>,
    /// `--token-budget`; `null` without one.
    pub token_budget: Option<u64>,
    /// `--tokens-per-second`; `null` without it.
    pub tokens_per_second: Option<f64>,
    /// What the plan counts in: the budget that binds is the token budget
    /// when it is tokens.
    #[serde(skip)]
    pub plan_meter: Meter,
    /// The budget shapes the run: directories are folded into units or
    /// summarised from the scan.
    pub budget_binding: bool,
    /// Units the directories to investigate make (one per directory when
    /// the budget does not bind).
    pub units: usize,
    /// Loops the budget buys at the units' average expected cost.
    pub loops_affordable: usize,
    /// Directories folded into another directory's loop (counted in
    /// `directories_to_investigate`).
    pub directories_folded: usize,
    /// Directories summarised from the scan, without the model.
    pub directories_mechanical: usize,
    /// Synthesis levels below the verdict (0: one call, or none).
    pub synthesis_levels: usize,
    /// How the token counts were calibrated with the API's count, when
    /// they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_calibration: Option<TokenCalibration>,
    /// Why the token counts could not be calibrated, when it was tried.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_calibration_error: Option<String>,
}

impl Estimate {
    /// Project `inputs` and price the result for `counts.model`.
    pub(crate) fn new(counts: Counts, inputs: &Inputs) -> Estimate {
        Estimate::projected(counts, inputs, 1.0)
    }

    /// This estimate with every token figure scaled as `calibration` says.
    pub(crate) fn calibrated(self, calibration: TokenCalibration) -> Estimate {
        let counts = Counts {
            token_calibration: Some(calibration),
            token_calibration_error: None,
            ..self.counts
        };
        Estimate::projected(counts, &self.inputs, calibration.factor)
    }

    /// Project `inputs` with the model's tokens per byte times `factor`.
    fn projected(counts: Counts, inputs: &Inputs, factor: f64) -> Estimate {
        let terms = |batch: bool| {
            let terms = ModelTerms::for_run(counts.model_facts, batch);
            ModelTerms {
                text_scale: terms.text_scale * factor,
                ..terms
            }
        };
        let tally = project(inputs, &terms(counts.batch));
        let range = |f: &dyn Fn(&Tally) -> u64| Range {
            low: f(&tally.low),
            high: f(&tally.high),
        };
        let tokens = range(&Tally::tokens);
        Estimate {
            api_calls: range(&|t| t.calls),
            input_tokens: range(&|t| t.usage.context_tokens()),
            output_tokens: range(&|t| t.usage.output_tokens),
            duration_seconds: counts.tokens_per_second.map(|per_second| Range {
                low: (tokens.low as f64 / per_second).ceil() as u64,
                high: (tokens.high as f64 / per_second).ceil() as u64,
            }),
            tokens,
            cost_usd: Range {
                low: dollars(tally.low.cost),
                high: dollars(tally.high.cost),
            },
            cost_held_by_budget: inputs.ceiling.is_some_and(|_| {
                let unbounded = project(
                    &Inputs {
                        ceiling: None,
                        ..inputs.clone()
                    },
                    &terms(counts.batch),
                );
                unbounded.high.cost > tally.high.cost
            }),
            directories_to_investigate: inputs.dirs.len() + counts.directories_folded,
            survey: inputs.survey.is_some(),
            planning: inputs.planning.is_some(),
            synthesis: !inputs.synthesis.is_empty(),
            loops: inputs.dirs.len(),
            counts,
            inputs: inputs.clone(),
            probe: None,
        }
    }

    /// Every token, and the token budget that holds them.
    fn tokens_line(&self) -> String {
        let mut line = format!(
            "Tokens in all: {} to {} (input and output together)",
            format_thousands(self.tokens.low),
            format_thousands(self.tokens.high)
        );
        if let Some(most) = self.counts.token_budget {
            line.push_str(&format!(
                ", held to the token budget ({})",
                format_thousands(most)
            ));
        }
        line
    }

    /// How long the tokens would take, or why the estimate cannot tell.
    fn time_line(&self) -> String {
        match (&self.duration_seconds, self.counts.tokens_per_second) {
            (Some(seconds), Some(per_second)) => format!(
                "Time: about {} to {} at {} tokens a second",
                duration(seconds.low),
                duration(seconds.high),
                trim_rate(per_second)
            ),
            _ => "Time: the estimate cannot tell without --tokens-per-second (how many tokens a \
                  second the model works through, prompt and reply together)"
                .to_string(),
        }
    }

    /// The text form, one fact per line.
    pub(crate) fn render_text(&self) -> String {
        let counts = &self.counts;
        let mut lines = vec![format!(
            "Estimate for {} with {} (no API call was made)",
            crate::text::escape_line(&counts.target),
            crate::text::escape_line(&counts.model)
        )];
        if let Some(warning) = &counts.model_warning {
            lines.push(format!("Warning: {}", crate::text::escape_line(warning)));
        }
        lines.push(self.directories_line());
        lines.extend(self.budget_line());
        lines.push(format!(
            "API calls: {} to {} ({})",
            self.api_calls.low,
            self.api_calls.high,
            self.passes().join(", ")
        ));
        let tokens = |r: &Range<u64>| {
            format!(
                "{} to {}",
                format_thousands(r.low),
                format_thousands(r.high)
            )
        };
        lines.push(format!("Input tokens: {}", tokens(&self.input_tokens)));
        lines.push(format!("Output tokens: {}", tokens(&self.output_tokens)));
        lines.push(self.tokens_line());
        lines.push(self.time_line());
        let prices = if counts.batch {
            " at Message Batches API prices (half the interactive ones)"
        } else {
            ""
        };
        lines.push(format!(
            "Estimated cost: {} to {}{prices}",
            self.cost_usd.low, self.cost_usd.high
        ));
        lines.extend(self.calibration_line());
        lines.push(self.assumptions_line());
        lines.join("\n")
    }

    /// What becomes of the directories found, in the same counts and the
    /// same words as the run's line.
    fn directories_line(&self) -> String {
        let counts = &self.counts;
        let mut dirs = format!(
            "Directories: {} found; {} to investigate",
            counts.directories_total, self.directories_to_investigate
        );
        for (n, what) in [
            (counts.directories_mechanical, "summarised from the scan"),
            (counts.directories_cached, "cached"),
            (counts.directories_skipped, "skipped by the saved plan"),
        ] {
            if n > 0 {
                dirs.push_str(&format!(", {n} {what}"));
            }
        }
        dirs
    }

    /// What the budget buys, when it shapes the run.
    fn budget_line(&self) -> Option<String> {
        let counts = &self.counts;
        counts.budget_binding.then(|| {
            let budget = match counts.plan_meter {
                Meter::Dollars => {
                    format!("Budget: {} buys", counts.budget_usd.unwrap_or_default())
                }
                Meter::Tokens => format!(
                    "Token budget: {} tokens buy",
                    format_thousands(counts.token_budget.unwrap_or_default())
                ),
            };
            format!(
                "{budget} {} loop{} ({} directories folded into them); {} directories \
                 summarised from the scan",
                self.loops,
                if self.loops == 1 { "" } else { "s" },
                counts.directories_folded,
                counts.directories_mechanical
            )
        })
    }

    /// The passes the API calls go to, in the order they run.
    fn passes(&self) -> Vec<String> {
        let mut passes = Vec::new();
        if self.survey {
            passes.push("survey".to_string());
        }
        if self.planning {
            passes.push("planning".to_string());
        }
        if self.loops > 0 {
            passes.push(format!("{} directory loops", self.loops));
        }
        if self.synthesis {
            passes.push(self.synthesis_pass());
        }
        if passes.is_empty() {
            passes.push("everything is cached".to_string());
        }
        passes
    }

    /// The synthesis as a pass: its levels, and when it is sent at all.
    fn synthesis_pass(&self) -> String {
        let counts = &self.counts;
        // The levels counted as the JSON's `synthesis_levels` and the
        // run's "Synthesis level N" lines count them: below the verdict.
        let mut synthesis = match counts.synthesis_levels {
            0 => "synthesis".to_string(),
            1 => "synthesis: 1 level of parts, then the verdict".to_string(),
            n => format!("synthesis: {n} levels of parts, then the verdict"),
        };
        // Summaries rebuilt from the scan alone change the synthesis's
        // input only when their text changes, which the run sees once
        // it has rebuilt them: it reuses the saved synthesis otherwise.
        if self.loops == 0 && counts.directories_mechanical > 0 {
            synthesis.push_str(", sent only if a summary rebuilt from the scan changes");
        }
        synthesis
    }

    /// How the token counts were calibrated, or why they were not, when
    /// calibration was tried.
    fn calibration_line(&self) -> Option<String> {
        let counts = &self.counts;
        if let Some(c) = &counts.token_calibration {
            Some(format!(
                "Token counts calibrated with the API's token counting (free): it counted {} \
                 tokens in the first loop's prompt where the estimate's rule made {}, so every \
                 token figure is scaled by {:.2}.",
                format_thousands(c.counted),
                format_thousands(c.estimated),
                c.factor
            ))
        } else {
            counts.token_calibration_error.as_ref().map(|error| {
                format!(
                    "Token counts not calibrated (the API's token counting did not answer: {}).",
                    crate::text::escape_line(error)
                )
            })
        }
    }

    /// What the low and high figures assume, and what holds the high one.
    fn assumptions_line(&self) -> String {
        let counts = &self.counts;
        let held = match (counts.budget_usd, counts.max_cost_usd) {
            (Some(budget), Some(cap)) if cap < budget => {
                format!(", held to --max-cost ({cap})")
            }
            (Some(budget), _) => format!(", held to the budget ({budget})"),
            (None, Some(cap)) => format!(", held to --max-cost ({cap})"),
            (None, None) => String::new(),
        };
        format!(
            "Low: {LOW_TURNS} turns per directory with prompt caching; high: every allotted \
             turn with no cache hits{}.",
            if self.cost_held_by_budget {
                held.as_str()
            } else {
                ""
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(95), "95 s");
        assert_eq!(duration(600), "10 min");
        assert_eq!(duration(3 * 3600 + 5 * 60), "3 h 05 min");
        assert_eq!(
            (trim_rate(40.0), trim_rate(12.5)),
            ("40".into(), "12.5".into())
        );
    }
}
