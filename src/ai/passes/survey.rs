//! The survey: a short reconnaissance pass that tells every dir loop what
//! kind of target it is looking at, and may take tools out of their toolbox.
//!
//! The pass itself is its prompt ([`survey_prompt`]), its conversation
//! ([`SURVEY_CALL`], which asks the model for `submit_survey`) and the
//! normalized proposal read from its end ([`read_survey`]). Everything that decides
//! what the survey *means* is a pure helper here: the synthetic survey used
//! when it is skipped ([`Survey::skipped`]; when that is, is the decision's
//! [`crate::ai::rules::decide::should_skip_survey`]), how it is shown to the
//! dir loops ([`format_survey_block`]) and which dir tools it removes
//! ([`filter_dir_tools`]).

use crate::ai::rules::room::{Part, Room};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::ai::api::ToolDefinition;
use crate::ai::engine::context::RunContext;
use crate::ai::engine::conversation::CallEnd;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::one_call::{OneCall, Without};
use crate::ai::prompts::{self, SurveyPrompt};
use crate::ai::rules::tree_view::cut_lines;
use crate::ai::tools::{self, Toolbox, frame_untrusted};
use crate::lenient;
use crate::scan::SurveySignals;
use crate::text::escape_line;

/// Below this confidence, `skip_tools` is advice only: nothing is removed.
pub(crate) const SURVEY_CONFIDENCE_THRESHOLD: f64 = 0.5;
/// Dir tools the survey can never remove: without `submit_report` a loop
/// could not end.
pub(crate) const PROTECTED_DIR_TOOLS: &[&str] = &["submit_report"];
/// Turns the survey pass may take.
pub(crate) const SURVEY_MAX_TURNS: u32 = 3;
/// The survey's conversation: one tool, `submit_survey`.
pub(crate) const SURVEY_CALL: OneCall = OneCall {
    toolbox: Toolbox::Survey,
    kickoff: prompts::kickoff::SURVEY,
    nudge: prompts::nudge::SURVEY,
    log_name: "(survey)",
    max_turns: SURVEY_MAX_TURNS,
};

/// What is said when the survey pass has no answer.
const WITHOUT: Without = Without {
    name: "survey",
    missing: "The survey was not made",
    instead: "The directories were investigated without it.",
};

/// The signals block of a target with no classified files.
pub(crate) const NO_SIGNALS: &str = "(no files classified)";
/// The survey block when there is no survey.
pub(crate) const NO_SURVEY: &str = "(no survey available)";

/// What the survey concluded. Field names are the `submit_survey` schema's;
/// a `submit_survey` input reads leniently: missing or mistyped fields
/// become empty, non-string list items are dropped, and confidence becomes
/// a number in [0, 1] (anything unreadable is 0).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Survey {
    #[serde(default, deserialize_with = "lenient::text")]
    pub description: String,
    #[serde(default, deserialize_with = "lenient::text")]
    pub approach: String,
    #[serde(default, deserialize_with = "lenient::texts")]
    pub relevant_tools: Vec<String>,
    #[serde(default, deserialize_with = "lenient::texts")]
    pub skip_tools: Vec<String>,
    #[serde(default, deserialize_with = "lenient::text")]
    pub domain_notes: String,
    #[serde(default, deserialize_with = "lenient::rating")]
    pub confidence: f64,
}

impl Survey {
    /// The synthetic survey of a target too small to be worth the call. Its
    /// zero confidence guarantees it never removes a tool.
    pub(crate) fn skipped() -> Survey {
        Survey {
            description: "Small target — survey skipped.".to_string(),
            approach: "The target is small enough to examine completely. Read every file \
                       directly."
                .to_string(),
            ..Survey::default()
        }
    }

    /// A `submit_survey` input, read leniently.
    #[cfg(test)]
    pub(crate) fn from_input(input: &serde_json::Value) -> Survey {
        Survey::deserialize(input).unwrap_or_default()
    }
}

/// The survey as a labeled block for the dir and planning prompts.
pub(crate) fn format_survey_block(survey: Option<&Survey>) -> String {
    let Some(survey) = survey else {
        return NO_SURVEY.to_string();
    };
    let mut lines = vec![
        format!("Description: {}", survey.description),
        format!("Approach: {}", survey.approach),
    ];
    // Below the confidence gate nothing was removed, so say so rather than
    // tell the agent a tool it still has is gone.
    let status = if survey.confidence >= SURVEY_CONFIDENCE_THRESHOLD {
        "already removed from your toolbox"
    } else {
        "suggested only; still in your toolbox"
    };
    lines.extend(note_line("Domain notes", &survey.domain_notes));
    let relevant = list_line("Relevant tools (lean on these)", &survey.relevant_tools);
    lines.extend(relevant);
    lines.extend(list_line(
        &format!("Skip tools ({status})"),
        &survey.skip_tools,
    ));
    lines.join("\n")
}

/// `label: text`, or nothing when the model left the field empty.
fn note_line(label: &str, text: &str) -> Option<String> {
    (!text.is_empty()).then(|| format!("{label}: {text}"))
}

/// `label: a, b`, or nothing when the list is empty.
fn list_line(label: &str, items: &[String]) -> Option<String> {
    (!items.is_empty()).then(|| format!("{label}: {}", items.join(", ")))
}

pub(crate) use crate::ai::rules::room::MAX_SIGNALS_BYTES;

/// The base scan's survey signals as a labeled block, one item per line
/// (names and extensions come from the target, so they are escaped), cut
/// on a line at `max_bytes` ([`MAX_SIGNALS_BYTES`] at most: less on a
/// small window, see [`crate::ai::rules::room`]).
pub(crate) fn format_survey_signals(signals: &SurveySignals, max_bytes: usize) -> String {
    if signals.total_files == 0 {
        return NO_SIGNALS.to_string();
    }
    let mut lines = vec![
        format!("Total files: {}", signals.total_files),
        String::new(),
    ];
    let counted = |counts: &IndexMap<String, u64>| -> Vec<String> {
        counts
            .iter()
            .map(|(name, n)| format!("  {}: {n}", escape_line(name)))
            .collect()
    };
    let blocks = [
        (
            "Extensions (top, by count):",
            counted(&signals.extension_histogram),
        ),
        (
            "file --brief output (top, by count):",
            counted(&signals.file_descriptions),
        ),
        (
            "Filename samples (evenly drawn):",
            (signals.filename_samples.iter())
                .map(|name| format!("  {}", escape_line(name)))
                .collect(),
        ),
    ];
    // Each non-empty block is titled and followed by a blank line (the
    // last one's is trimmed below).
    for (title, block) in blocks {
        if !block.is_empty() {
            lines.push(title.to_string());
            lines.extend(block);
            lines.push(String::new());
        }
    }
    cut_lines(
        lines.join("\n").trim_end().to_string(),
        max_bytes.min(MAX_SIGNALS_BYTES),
    )
}

/// File names and descriptions come from the target: the signals go to the
/// model framed as untrusted data (the empty placeholder is ours).
pub(crate) fn frame_signals(formatted: &str) -> String {
    if formatted == NO_SIGNALS {
        formatted.to_string()
    } else {
        frame_untrusted("file signals", formatted)
    }
}

/// The survey block as the dir and planning prompts embed it: framed as
/// untrusted data, since it is a model's reading of the target's names and
/// may quote them (the survey is told to mention injected instructions in
/// `domain_notes`). The no-survey placeholder is ours and stays bare.
pub(crate) fn frame_survey_block(block: &str) -> String {
    if block == NO_SURVEY {
        block.to_string()
    } else {
        frame_untrusted("survey of the target", block)
    }
}

/// The dir toolbox after the survey: `skip_tools` removed, but only when the
/// survey's confidence is at least [`SURVEY_CONFIDENCE_THRESHOLD`], and never
/// a [`PROTECTED_DIR_TOOLS`] entry. Unknown names are ignored.
pub(crate) fn filter_dir_tools(
    all: &[ToolDefinition],
    survey: Option<&Survey>,
) -> Vec<ToolDefinition> {
    let Some(survey) = survey else {
        return all.to_vec();
    };
    if survey.confidence < SURVEY_CONFIDENCE_THRESHOLD {
        return all.to_vec();
    }
    all.iter()
        .filter(|tool| {
            PROTECTED_DIR_TOOLS.contains(&tool.name.as_str())
                || !survey.skip_tools.contains(&tool.name)
        })
        .cloned()
        .collect()
}

/// The stderr lines describing a survey (or its absence).
pub(crate) fn survey_report_lines(survey: Option<&Survey>) -> Vec<String> {
    let Some(survey) = survey else {
        return vec!["Survey unavailable — proceeding without it.".to_string()];
    };
    let mut lines = vec![format!(
        "Survey: {} (confidence {:.2})",
        survey.description, survey.confidence
    )];
    lines.extend(note_line("Survey notes", &survey.domain_notes));
    lines.extend(list_line("Survey relevant_tools", &survey.relevant_tools));
    lines.extend(list_line("Survey skip_tools", &survey.skip_tools));
    lines
}

/// Everything the survey pass reads.
pub(crate) struct SurveyInputs<'a> {
    /// The canonical target, as shown to the model.
    pub target: &'a str,
    pub signals: &'a SurveySignals,
    /// The two-level tree, rendered (within `room`'s share for it).
    pub tree_preview: &'a str,
    /// The room in the model's window, which the signals are cut to.
    pub room: Room,
}

/// The comma-separated dir tools the survey may triage (all but
/// `submit_report`).
pub(crate) fn triage_tool_names() -> String {
    tools::names(Toolbox::Dir)
        .into_iter()
        .filter(|name| *name != "submit_report")
        .collect::<Vec<_>>()
        .join(", ")
}

/// The survey prompt; the signals and the tree are framed as untrusted data.
pub(crate) fn survey_prompt(inputs: &SurveyInputs<'_>) -> Result<String, InvestigationError> {
    let signals = format_survey_signals(inputs.signals, inputs.room.bytes(Part::Signals));
    let survey_signals = frame_signals(&signals);
    let tree_preview = frame_untrusted("directory tree", inputs.tree_preview);
    let available_tools = triage_tool_names();
    let target = escape_line(inputs.target);
    Ok(SurveyPrompt {
        target: &target,
        survey_signals: &survey_signals,
        tree_preview: &tree_preview,
        available_tools: &available_tools,
    }
    .render()?)
}

/// The survey [`SURVEY_CALL`]'s conversation submitted, when it ended on
/// `end`; `None` when it failed, was declined or ran out of turns (said
/// once, in [`WITHOUT`]'s words).
pub(crate) fn read_survey(ctx: &RunContext, end: CallEnd) -> Option<Survey> {
    // Without a survey the run goes on as it would after a failed one.
    let input = WITHOUT.settle(ctx, end).submitted()?;
    Some(serde_json::from_value(input).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.to_string(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            cache_control: None,
        }
    }

    fn dir_tools() -> Vec<ToolDefinition> {
        [
            "read_file",
            "list_directory",
            "run_command",
            "parse_structure",
            "submit_report",
        ]
        .into_iter()
        .map(tool)
        .collect()
    }

    fn names(tools: &[ToolDefinition]) -> Vec<&str> {
        tools.iter().map(|t| t.name.as_str()).collect()
    }

    fn survey(confidence: f64, skip: &[&str]) -> Survey {
        Survey {
            skip_tools: skip.iter().map(|s| s.to_string()).collect(),
            confidence,
            ..Survey::skipped()
        }
    }

    #[test]
    fn skipped_survey_never_filters() {
        let s = Survey::skipped();
        assert_eq!(s.confidence, 0.0);
        assert!(s.skip_tools.is_empty() && s.relevant_tools.is_empty());
        assert_eq!(filter_dir_tools(&dir_tools(), Some(&s)).len(), 5);
    }

    #[test]
    fn filter_is_gated_on_confidence_inclusive() {
        let all = dir_tools();
        assert_eq!(filter_dir_tools(&all, None).len(), 5);
        let low = survey(SURVEY_CONFIDENCE_THRESHOLD - 0.01, &["run_command"]);
        assert_eq!(filter_dir_tools(&all, Some(&low)).len(), 5);
        let at = survey(SURVEY_CONFIDENCE_THRESHOLD, &["run_command"]);
        assert_eq!(
            names(&filter_dir_tools(&all, Some(&at))),
            [
                "read_file",
                "list_directory",
                "parse_structure",
                "submit_report"
            ]
        );
    }

    #[test]
    fn protected_and_unknown_names() {
        let all = dir_tools();
        let s = survey(1.0, &["submit_report", "run_command", "nonexistent"]);
        let kept = filter_dir_tools(&all, Some(&s));
        assert!(names(&kept).contains(&"submit_report"));
        assert!(!names(&kept).contains(&"run_command"));
        assert_eq!(kept.len(), 4);
        let empty = survey(0.9, &[]);
        assert_eq!(filter_dir_tools(&all, Some(&empty)).len(), 5);
        let several = survey(0.9, &["run_command", "parse_structure"]);
        assert_eq!(
            names(&filter_dir_tools(&all, Some(&several))),
            ["read_file", "list_directory", "submit_report"]
        );
    }

    #[test]
    fn survey_input_is_normalized() {
        let s = Survey::from_input(&json!({
            "description": "A Rust CLI",
            "approach": "read src first",
            "relevant_tools": ["parse_structure", 7, null],
            "skip_tools": "run_command",
            "confidence": "0.8"
        }));
        assert_eq!(s.description, "A Rust CLI");
        assert_eq!(s.relevant_tools, ["parse_structure"]);
        assert!(s.skip_tools.is_empty());
        assert_eq!(s.domain_notes, "");
        assert_eq!(s.confidence, 0.8);
        for (raw, want) in [
            (json!("not a number"), 0.0),
            (json!(null), 0.0),
            (json!(7), 1.0),
            (json!(-1), 0.0),
            (json!([1]), 0.0),
        ] {
            let s = Survey::from_input(&json!({ "confidence": raw }));
            assert_eq!(s.confidence, want, "{raw}");
        }
    }

    #[test]
    fn survey_block_rendering() {
        assert_eq!(format_survey_block(None), "(no survey available)");
        let minimal = Survey {
            description: "X".into(),
            approach: "Y".into(),
            ..survey(0.9, &[])
        };
        assert_eq!(
            format_survey_block(Some(&minimal)),
            "Description: X\nApproach: Y"
        );
        let unsure = survey(0.3, &["run_command"]);
        assert!(
            format_survey_block(Some(&unsure))
                .ends_with("Skip tools (suggested only; still in your toolbox): run_command")
        );
        let full = Survey {
            description: "D".into(),
            approach: "A".into(),
            relevant_tools: vec!["read_file".into(), "parse_structure".into()],
            domain_notes: "this is special".into(),
            ..survey(0.9, &["run_command"])
        };
        assert_eq!(
            format_survey_block(Some(&full)),
            "Description: D\nApproach: A\nDomain notes: this is special\n\
             Relevant tools (lean on these): read_file, parse_structure\n\
             Skip tools (already removed from your toolbox): run_command"
        );
    }

    #[test]
    fn signals_rendering() {
        assert_eq!(
            format_survey_signals(&SurveySignals::default(), MAX_SIGNALS_BYTES),
            "(no files classified)"
        );
        let mut signals = SurveySignals {
            total_files: 42,
            ..SurveySignals::default()
        };
        signals.extension_histogram.insert(".py".into(), 30);
        signals.extension_histogram.insert(".md".into(), 5);
        signals
            .file_descriptions
            .insert("Python script, ASCII text executable".into(), 30);
        signals.filename_samples = vec!["main.py".into(), "README.md".into()];
        assert_eq!(
            format_survey_signals(&signals, MAX_SIGNALS_BYTES),
            "Total files: 42\n\nExtensions (top, by count):\n  .py: 30\n  .md: 5\n\n\
             file --brief output (top, by count):\n  Python script, ASCII text executable: 30\n\n\
             Filename samples (evenly drawn):\n  main.py\n  README.md"
        );
        let only_ext = SurveySignals {
            total_files: 5,
            extension_histogram: [(".py".to_string(), 5)].into_iter().collect(),
            ..SurveySignals::default()
        };
        assert_eq!(
            format_survey_signals(&only_ext, MAX_SIGNALS_BYTES),
            "Total files: 5\n\nExtensions (top, by count):\n  .py: 5"
        );
        // Long names cannot make it grow past its cap.
        let long = SurveySignals {
            total_files: 40_000,
            filename_samples: (0..100)
                .map(|i| format!("{i}{}", "n".repeat(250)))
                .collect(),
            ..SurveySignals::default()
        };
        let shown = format_survey_signals(&long, MAX_SIGNALS_BYTES);
        assert!(shown.len() <= MAX_SIGNALS_BYTES, "{}", shown.len());
        assert!(shown.ends_with(crate::ai::rules::tree_view::TREE_CUT_LINE));
    }

    #[test]
    fn report_lines() {
        assert_eq!(
            survey_report_lines(None),
            ["Survey unavailable — proceeding without it."]
        );
        let s = Survey {
            description: "A web app".into(),
            domain_notes: "Django".into(),
            skip_tools: vec!["run_command".into()],
            confidence: 0.854,
            ..Survey::skipped()
        };
        assert_eq!(
            survey_report_lines(Some(&s)),
            [
                "Survey: A web app (confidence 0.85)",
                "Survey notes: Django",
                "Survey skip_tools: run_command"
            ]
        );
    }
}
