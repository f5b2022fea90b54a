//! The tools that end a loop: `submit_report` (one schema for the dir loop,
//! one for synthesis), `submit_survey` and `submit_plan`.
//!
//! They have a schema and no handler: [`super::dispatch`] answers
//! [`super::Dispatch::EndsLoop`] and the loop that offered the tool reads the
//! call's input itself. The field names, types, required lists and enums are
//! the original's, because the passes and the cache read them by name.

use serde_json::{Value, json};

use super::{FatalToolError, Tool, ToolContext, ToolOutput, Toolbox};

/// What `run` says if a caller ignores `ends_loop` (a bug, not a model error).
fn no_handler(name: &str) -> Result<ToolOutput, FatalToolError> {
    Err(FatalToolError(format!(
        "{name} ends its loop and has no handler; the loop reads its input"
    )))
}

fn text(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn list_of_text(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

/// A `{path, reason}` item of the plan's directory lists.
fn planned_dir(reason: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": text("Directory path relative to the target."),
            "reason": text(reason),
        },
        "required": ["path", "reason"],
    })
}

/// `submit_report` in the dir loop: the directory's summary.
pub(crate) struct SubmitDirReport;

impl Tool for SubmitDirReport {
    fn name(&self) -> &'static str {
        "submit_report"
    }

    fn description(&self) -> &'static str {
        "Hand in the summary of this directory. Calling it ends the investigation of the directory."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "summary": text("One to three sentences on what this directory is and does."),
                "completeness": {
                    "type": "number",
                    "description": "How thoroughly you investigated, from 0.0 to 1.0: 1.0 means \
                        every relevant file was examined closely, 0.5 about half (or most only \
                        skimmed), below 0.3 barely started.",
                },
            },
            "required": ["summary", "completeness"],
        })
    }

    fn toolboxes(&self) -> &'static [Toolbox] {
        &[Toolbox::Dir]
    }

    fn ends_loop(&self) -> bool {
        true
    }

    fn run(&self, _ctx: &ToolContext<'_>, _input: &Value) -> Result<ToolOutput, FatalToolError> {
        no_handler(self.name())
    }
}

/// `submit_report` in synthesis: the verdict on the whole target.
pub(crate) struct SubmitSynthesisReport;

impl Tool for SubmitSynthesisReport {
    fn name(&self) -> &'static str {
        "submit_report"
    }

    fn description(&self) -> &'static str {
        "Hand in the final analysis of the whole target. Calling it ends the synthesis."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "brief": text("Two to four sentences: what the target is and what deserves attention."),
                "detailed": text("The full analysis, part by part."),
            },
            "required": ["brief", "detailed"],
        })
    }

    fn toolboxes(&self) -> &'static [Toolbox] {
        &[Toolbox::Synthesis]
    }

    fn ends_loop(&self) -> bool {
        true
    }

    fn run(&self, _ctx: &ToolContext<'_>, _input: &Value) -> Result<ToolOutput, FatalToolError> {
        no_handler(self.name())
    }
}

/// `submit_survey`: the survey pass's reconnaissance.
pub(crate) struct SubmitSurvey;

impl Tool for SubmitSurvey {
    fn name(&self) -> &'static str {
        "submit_survey"
    }

    fn description(&self) -> &'static str {
        "Hand in the survey of the target. Call it once."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "description": text("What the target is, in plain words."),
                "approach": text("How the per-directory investigation should go about it."),
                "relevant_tools": list_of_text("Names of the tools the directory loops should rely on."),
                "skip_tools": list_of_text("Names of the tools that would be wasted or misleading here."),
                "domain_notes": text("One short, practical hint, or an empty string."),
                "confidence": {
                    "type": "number",
                    "description": "Your confidence in this survey, from 0.0 to 1.0.",
                },
            },
            "required": [
                "description", "approach", "relevant_tools",
                "skip_tools", "domain_notes", "confidence",
            ],
        })
    }

    fn toolboxes(&self) -> &'static [Toolbox] {
        &[Toolbox::Survey]
    }

    fn ends_loop(&self) -> bool {
        true
    }

    fn run(&self, _ctx: &ToolContext<'_>, _input: &Value) -> Result<ToolOutput, FatalToolError> {
        no_handler(self.name())
    }
}

/// `submit_plan`: the planning pass's allocation of turns.
pub(crate) struct SubmitPlan;

impl Tool for SubmitPlan {
    fn name(&self) -> &'static str {
        "submit_plan"
    }

    fn description(&self) -> &'static str {
        "Hand in the investigation plan. Call it once."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "priority_dirs": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": text("Directory path relative to the target."),
                            "reason": text("Why it deserves a deep investigation."),
                            "suggested_turns": {
                                "type": "integer",
                                "description": "Turns to give it (15-20).",
                            },
                        },
                        "required": ["path", "reason", "suggested_turns"],
                    },
                    "description": "Directories to investigate in depth.",
                },
                "shallow_dirs": {
                    "type": "array",
                    "items": planned_dir("Why a quick look is enough."),
                    "description": "Directories that need only a quick look.",
                },
                "skip_dirs": {
                    "type": "array",
                    "items": planned_dir("Why it is not worth investigating."),
                    "description": "Directories to leave out entirely.",
                },
                "investigation_order": {
                    "type": "string",
                    "enum": ["leaf-first", "priority-first"],
                    "description": "leaf-first, or priority-first (still leaf-first within each band).",
                },
                "notes": text("Notes that apply across directories, for the per-directory agents; or an empty string."),
            },
            "required": [
                "priority_dirs", "shallow_dirs", "skip_dirs",
                "investigation_order", "notes",
            ],
        })
    }

    fn toolboxes(&self) -> &'static [Toolbox] {
        &[Toolbox::Planning]
    }

    fn ends_loop(&self) -> bool {
        true
    }

    fn run(&self, _ctx: &ToolContext<'_>, _input: &Value) -> Result<ToolOutput, FatalToolError> {
        no_handler(self.name())
    }
}
