//! The planning pass: one short call that proposes where the dir loops should
//! spend their turns.
//!
//! It sees the survey block, a six-level tree (or, for a tree too large to
//! show, a condensed map: [`crate::ai::rules::map`]), the raw file signals,
//! how many directories there are, which are cached already, the default
//! allocation and the global budget (10 turns per directory), and when the
//! money does not buy a loop per directory, how many loops it does buy and
//! how they are given out ([`budget_text`]). It may only call
//! `submit_plan`, within 3 turns ([`PLANNING_CALL`]). It returns the
//! proposal as it came ([`read_plan`], what `plan.json` keeps); [`Plan::from_value`]
//! normalizes it and the pure [`crate::ai::rules::plan::apply_plan`] applies it.
//!
//! [`Plan::from_value`]: crate::ai::rules::plan::Plan::from_value

use serde_json::Value;

use crate::ai::engine::context::RunContext;
use crate::ai::engine::conversation::CallEnd;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::one_call::{OneCall, Without};
use crate::ai::passes::survey::{frame_signals, frame_survey_block};
use crate::ai::prompts::{self, PlanningPrompt};
use crate::ai::rules::plan::{BASE_TURNS_PER_DIR, DEFAULT_TURNS, proposal_document};
use crate::ai::tools::{Toolbox, frame_untrusted};
use crate::text::escape_line;

/// Turns the planning pass may take.
pub(crate) const PLANNING_MAX_TURNS: u32 = 3;
/// The planning conversation: one tool, `submit_plan`.
pub(crate) const PLANNING_CALL: OneCall = OneCall {
    toolbox: Toolbox::Planning,
    kickoff: prompts::kickoff::PLANNING,
    nudge: prompts::nudge::PLANNING,
    log_name: "(planning)",
    max_turns: PLANNING_MAX_TURNS,
};

/// What is said when the planning pass has no answer.
const WITHOUT: Without = Without {
    name: "planning",
    missing: "The plan was not made",
    instead: "Every directory got the default turns.",
};

/// Everything the planning pass reads.
pub(crate) struct PlanningInputs<'a> {
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
    /// What the budget buys, when it does not buy a loop per directory.
    pub spending: Option<Spending>,
}

/// What a binding budget buys, as the planner is told.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spending {
    /// The budget, in the plan's meter: dollars, or millions of tokens
    /// under a token budget (the prompt writes it as dollars either way).
    pub budget: f64,
    /// Loops the budget buys at the units' average expected cost.
    pub loops: usize,
    /// Units the directories to investigate make.
    pub units: usize,
}

/// Cached directories named in the prompt; the rest are counted.
pub(crate) const CACHED_NAMED: usize = 50;

/// The global turn budget the planner is told about.
pub(crate) fn global_budget(dir_count: usize) -> u32 {
    BASE_TURNS_PER_DIR.saturating_mul(u32::try_from(dir_count).unwrap_or(u32::MAX))
}

/// `a, b/c` or `(none)`; names are escaped to one line. Past
/// [`CACHED_NAMED`] the rest are counted, so a resumed large tree does not
/// fill the prompt with names.
pub(crate) fn cached_dirs_text(cached: &[String]) -> String {
    if cached.is_empty() {
        return "(none)".to_string();
    }
    let mut text = cached
        .iter()
        .take(CACHED_NAMED)
        .map(|dir| escape_line(dir))
        .collect::<Vec<_>>()
        .join(", ");
    if cached.len() > CACHED_NAMED {
        text.push_str(&format!(" and {} more", cached.len() - CACHED_NAMED));
    }
    text
}

/// The planner's budget section: the turns all directories share, and
/// when the money does not buy a loop per directory, what it does buy and
/// in which order the units get their loops.
pub(crate) fn budget_text(dir_count: usize, spending: Option<Spending>) -> String {
    let mut text = format!(
        "All directories together have {} turns. Stay roughly within\n\
         that; going slightly over is fine. Allocations far beyond it get capped per\n\
         directory by the orchestrator.",
        global_budget(dir_count)
    );
    if let Some(spending) = spending {
        text.push_str(&format!(
            "\n\nMoney is tighter than turns. The run's ${:.2} buys about {} loops (one\n\
             agent investigating its share of the tree), not one per directory: the\n\
             directories make {} units (a directory with the small directories below\n\
             it folded in), and the units get their loops in this order: the\n\
             target itself, then everything at and below the directories you list\n\
             in priority_dirs, then the rest by how much source they hold, and\n\
             everything under shallow_dirs last. A directory left without a loop\n\
             is summarised from the scan alone (counts, types, names; no file\n\
             read). So list in priority_dirs the few subtrees most worth a reading,\n\
             and in shallow_dirs those that need none.",
            spending.budget, spending.loops, spending.units
        ));
    }
    text
}

/// The planning prompt.
pub(crate) fn planning_prompt(inputs: &PlanningInputs<'_>) -> Result<String, InvestigationError> {
    let cached_dirs = cached_dirs_text(inputs.cached_dirs);
    let tree_text = frame_untrusted("directory tree", inputs.tree_text);
    let file_signals = frame_signals(inputs.file_signals);
    let survey_context = frame_survey_block(inputs.survey_block);
    let target = escape_line(inputs.target);
    let budget_text = budget_text(inputs.dir_count, inputs.spending);
    Ok(PlanningPrompt {
        target: &target,
        survey_context: &survey_context,
        tree_text: &tree_text,
        file_signals: &file_signals,
        dir_count: inputs.dir_count,
        cached_dirs: &cached_dirs,
        default_turns: DEFAULT_TURNS,
        budget_text: &budget_text,
    }
    .render()?)
}

/// The proposal document ([`proposal_document`]) [`PLANNING_CALL`]'s
/// conversation submitted, when it ended on `end`; `None` when it failed,
/// was declined or ran out of turns (said once, in [`WITHOUT`]'s words).
pub(crate) fn read_plan(ctx: &RunContext, end: CallEnd) -> Option<Value> {
    // Without a proposal the default plan applies.
    let input = WITHOUT.settle(ctx, end).submitted()?;
    Some(proposal_document(&input))
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
            spending: None,
        })
        .unwrap();
        assert!(prompt.contains("\nDirectories in the investigation: 7\n"));
        assert!(prompt.contains("not investigated again: docs\n"));
        assert!(prompt.contains("you do not place gets 10 turns"));
        assert!(prompt.contains("together have 70 turns"));
        assert!(!prompt.contains("Money is tighter"));
    }

    #[test]
    fn a_binding_budget_tells_the_planner_what_it_buys() {
        let text = budget_text(
            900,
            Some(Spending {
                budget: 5.0,
                loops: 120,
                units: 410,
            }),
        );
        assert!(text.starts_with("All directories together have 9000 turns."));
        assert!(
            text.contains("The run's $5.00 buys about 120 loops"),
            "{text}"
        );
        assert!(text.contains("the\ndirectories make 410 units"), "{text}");
        let many: Vec<String> = (0..60).map(|i| format!("d{i}")).collect();
        assert!(cached_dirs_text(&many).ends_with(", d49 and 10 more"));
    }
}
