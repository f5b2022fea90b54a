//! The planning pass: one short call that proposes where the dir loops should
//! spend their turns.
//!
//! It sees the survey block, a six-level tree, the raw file signals, how many
//! directories there are, which are cached already, the default allocation
//! and the global budget (10 turns per directory). It may only call
//! `submit_plan`, within 3 turns. It returns the proposal as it came
//! ([`proposal_document`], what `plan.json` keeps); [`Plan::from_value`]
//! normalizes it and the pure [`crate::ai::rules::plan::apply_plan`] applies it.
//!
//! [`Plan::from_value`]: crate::ai::rules::plan::Plan::from_value

use serde_json::Value;

use crate::ai::engine::agent::{Agent, AgentError, Printer, TurnOutcome};
use crate::ai::engine::session::Session;
use crate::ai::passes::survey::{frame_signals, frame_survey_block};
use crate::ai::prompts::{self, PlanningPrompt};
use crate::ai::rules::plan::{BASE_TURNS_PER_DIR, DEFAULT_TURNS, proposal_document};
use crate::ai::tools::{self, Toolbox, frame_untrusted};
use crate::ai::{PassError, record_refusal, stop_for_api_error};
use crate::cache::Cache;
use crate::progress::Progress;
use crate::text::escape_line;

/// Turns the planning pass may take.
pub const PLANNING_MAX_TURNS: u32 = 3;

/// Everything the planning pass reads.
pub struct PlanningInputs<'a> {
    /// The canonical target.
    pub target: &'a str,
    /// The survey block (or its placeholder).
    pub survey_block: &'a str,
    /// The six-level tree, rendered.
    pub tree_text: &'a str,
    /// The formatted survey signals.
    pub file_signals: &'a str,
    /// Every discovered directory.
    pub dir_count: usize,
    /// Relative paths of the directories already cached.
    pub cached_dirs: &'a [String],
}

/// The global turn budget the planner is told about.
pub fn global_budget(dir_count: usize) -> u32 {
    BASE_TURNS_PER_DIR.saturating_mul(u32::try_from(dir_count).unwrap_or(u32::MAX))
}

/// `a, b/c` or `(none)`; names are escaped to one line.
pub fn cached_dirs_text(cached: &[String]) -> String {
    if cached.is_empty() {
        "(none)".to_string()
    } else {
        cached
            .iter()
            .map(|dir| escape_line(dir))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The planning prompt.
pub fn planning_prompt(inputs: &PlanningInputs<'_>) -> Result<String, PassError> {
    let cached_dirs = cached_dirs_text(inputs.cached_dirs);
    let tree_text = frame_untrusted("directory tree", inputs.tree_text);
    let file_signals = frame_signals(inputs.file_signals);
    let survey_context = frame_survey_block(inputs.survey_block);
    let target = escape_line(inputs.target);
    Ok(PlanningPrompt {
        target: &target,
        survey_context: &survey_context,
        tree_text: &tree_text,
        file_signals: &file_signals,
        dir_count: inputs.dir_count,
        cached_dirs: &cached_dirs,
        default_turns: DEFAULT_TURNS,
        global_budget: global_budget(inputs.dir_count),
    }
    .render()?)
}

/// Run the planning pass: the proposal document ([`proposal_document`]), or
/// `Ok(None)` when it failed or ran out of turns.
pub async fn run_planning(
    session: &Session,
    cache: &Cache,
    progress: &Progress,
    inputs: &PlanningInputs<'_>,
) -> Result<Option<Value>, PassError> {
    let mut agent = Agent::new(
        Toolbox::Planning,
        planning_prompt(inputs)?,
        prompts::kickoff::PLANNING,
        tools::definitions(Toolbox::Planning),
        prompts::nudge::PLANNING,
        Printer::Pass(progress.clone()),
    );
    for turn in 1..=PLANNING_MAX_TURNS {
        match agent.turn(session, cache, "(planning)", turn).await {
            Ok(step) => match step.outcome {
                TurnOutcome::Ended(input) => return Ok(Some(proposal_document(&input))),
                TurnOutcome::Continue => {}
                // The default plan then, as after a failed planning call.
                TurnOutcome::Refused(refusal) => {
                    record_refusal(
                        cache,
                        progress,
                        "general",
                        format!(
                            "The plan was not made: {}. Every directory got the default turns.",
                            refusal.describe()
                        ),
                    );
                    return Ok(None);
                }
                TurnOutcome::ContextFull => return Ok(None),
            },
            Err(AgentError::Api(err)) => {
                stop_for_api_error(session, &err)?;
                progress.ai(&format!("  API error: {err}"));
                return Ok(None);
            }
            Err(other) => return Err(other.into()),
        }
    }
    progress.ai("Warning: planning ran out of turns.");
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_and_cached_text() {
        assert_eq!(global_budget(0), 0);
        assert_eq!(global_budget(12), 120);
        assert_eq!(cached_dirs_text(&[]), "(none)");
        assert_eq!(cached_dirs_text(&["a".into(), "b/c".into()]), "a, b/c");
        assert_eq!(cached_dirs_text(&["x\ny".into()]), "x\\ny");
    }

    #[test]
    fn prompt_carries_counts_and_budget() {
        let cached = vec!["docs".to_string()];
        let prompt = planning_prompt(&PlanningInputs {
            target: "/w/proj",
            survey_block: "Description: X",
            tree_text: "proj/",
            file_signals: "(no files classified)",
            dir_count: 7,
            cached_dirs: &cached,
        })
        .unwrap();
        assert!(prompt.contains("\nDirectories in the investigation: 7\n"));
        assert!(prompt.contains("not investigated again: docs\n"));
        assert!(prompt.contains("the default of 10 turns"));
        assert!(prompt.contains("together have 70 turns"));
    }
}
