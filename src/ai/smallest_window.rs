//! The smallest context window a run works in: luminos's fixed prompts
//! (each pass's instructions, its tools and its first message, with
//! nothing of the tree in them) must fit the share of a window that
//! [`crate::ai::rules::room`] keeps for them. A window given with
//! `--context-window` below it is refused before any work, naming it.
//!
//! Its edges: it renders the passes' own prompts with empty inputs and
//! measures them as the window guard does
//! ([`TokenEstimate::at_most`]); the arithmetic of the
//! shares is the room's.

use std::path::Path;

use crate::ai::api::catalog::Model;
use crate::ai::api::settings::Workload;
use crate::ai::api::tokens::TokenEstimate;
use crate::ai::engine::window::json_len;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::dir_loop::{TaskRoom, compose_dir_task, dir_system_prompt};
use crate::ai::passes::planning::{PlanningInputs, planning_prompt};
use crate::ai::passes::survey::{NO_SURVEY, SurveyInputs, survey_prompt};
use crate::ai::passes::synthesis::synthesis_prompt;
use crate::ai::prompts::{AskPrompt, AskQuestionPrompt, kickoff};
use crate::ai::rules::room::{self, Room};
use crate::ai::tools::{self, Toolbox};
use crate::scan::SurveySignals;

/// Bytes of a request besides its system prompt, first message and tools:
/// the JSON around them (model, `max_tokens`, roles, settings).
const ENVELOPE_BYTES: usize = 256;

/// The smallest window, in tokens, in which every fixed prompt luminos
/// sends to `model` fits (its tokens per byte and reply rule are the
/// model's), `language` being `--language`.
pub(crate) fn smallest_window(model: &Model, language: Option<&str>) -> u64 {
    let largest = fixed_prompt_bytes(model, language)
        .into_iter()
        .map(|bytes| TokenEstimate::of(model).at_most(bytes))
        .max()
        .unwrap_or(0);
    room::smallest_window(largest)
}

/// Each pass's fixed request, in bytes: its prompt with every part that
/// grows with the tree empty, its first message and its tools. A prompt
/// that does not render counts as its tools alone (the prompts' own tests
/// catch that).
fn fixed_prompt_bytes(model: &Model, language: Option<&str>) -> Vec<usize> {
    let target = Path::new("/");
    let request = |system: Result<String, InvestigationError>, first: &str, toolbox| {
        system.map_or(0, |s| s.len())
            + first.len()
            + json_len(&tools::definitions(toolbox))
            + ENVELOPE_BYTES
    };
    // The inputs are empty: nothing is cut, whatever the room.
    let room = Room::of(model, Workload::Judgment);
    let survey = survey_prompt(&SurveyInputs {
        target: "/",
        signals: &SurveySignals::default(),
        tree_preview: "",
        room,
    });
    let planning = planning_prompt(&PlanningInputs {
        target: "/",
        survey_block: NO_SURVEY,
        tree_text: "",
        file_signals: "",
        dir_count: 1,
        cached_dirs: &[],
        spending: None,
    });
    let dir = dir_system_prompt(NO_SURVEY, language);
    let task = compose_dir_task(
        target,
        target,
        &[],
        1,
        &["(empty)".to_string()],
        &[],
        TaskRoom::of(model),
    )
    .unwrap_or_default();
    let synthesis = synthesis_prompt("/", &[], language);
    let ask = AskPrompt {
        target: "/",
        knowledge: "",
        max_turns: 1,
        context: "",
    }
    .render()
    .map_err(InvestigationError::from);
    let question = AskQuestionPrompt { question: "" }
        .render()
        .unwrap_or_default();
    vec![
        request(survey, kickoff::SURVEY, Toolbox::Survey),
        request(planning, kickoff::PLANNING, Toolbox::Planning),
        request(dir, &task, Toolbox::Dir),
        request(synthesis, kickoff::SYNTHESIS, Toolbox::Synthesis),
        request(ask, &question, Toolbox::Ask),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::api::catalog::ModelFacts;
    use crate::ai::api::settings::CallSettings;

    #[test]
    fn every_fixed_prompt_renders_and_the_largest_sets_the_floor() {
        let model = ModelFacts::of("qwen3-coder").model;
        let sizes = fixed_prompt_bytes(model, None);
        assert_eq!(sizes.len(), 5);
        // Each is more than its envelope and tools: its prompt rendered.
        assert!(
            sizes.iter().all(|bytes| *bytes > 2 * ENVELOPE_BYTES),
            "{sizes:?}"
        );
        let smallest = smallest_window(model, None);
        assert!((4 * 1024..64 * 1024).contains(&smallest), "{smallest}");
        // A language adds its rule to the prompts that write for people.
        assert!(smallest_window(model, Some("Brazilian Portuguese")) >= smallest);
        // At the smallest window, the largest fixed request fits with its
        // reply, and half the room is left.
        let small = ModelFacts::of("qwen3-coder").with_window(smallest, "test");
        let largest = sizes.iter().copied().max().unwrap();
        let reply = CallSettings::new(small.model, Workload::Judgment).max_tokens;
        let tokens = TokenEstimate::of(model).at_most(largest);
        assert!(
            2 * tokens + u64::from(reply) <= smallest,
            "{tokens} {reply} {smallest}"
        );
    }
}
