//! The tools that end a loop: `submit_report` (one schema for the dir loop,
//! one for synthesis), `submit_survey` and `submit_plan`.
//!
//! They have a schema and no handler: [`super::dispatch`] answers
//! [`super::Dispatch::EndsLoop`] and the loop that offered the tool reads the
//! call's input itself. The field names, types, required lists and enums are
//! the original's, because the passes and the cache read them by name.

use serde_json::{Value, json};

use super::schema::{list_of, list_of_text, object, text, typed};
use super::{FatalToolError, Tool, ToolContext, ToolOutput, Toolbox};

/// A tool that ends its loop. The four differ only in what they are
/// called, say and ask for, and in the loop that offers them.
pub(crate) struct Submit {
    name: &'static str,
    description: &'static str,
    toolboxes: &'static [Toolbox],
    schema: fn() -> Value,
}

/// `submit_report` in the dir loop: the directory's summary.
pub(crate) static DIR_REPORT: Submit = Submit {
    name: "submit_report",
    description: "Hand in the summary of this directory. Calling it ends the investigation of \
                  the directory.",
    toolboxes: &[Toolbox::Dir],
    schema: dir_report_schema,
};

/// `submit_report` in synthesis: the verdict on the whole target.
pub(crate) static SYNTHESIS_REPORT: Submit = Submit {
    name: "submit_report",
    description: "Hand in the final analysis of the whole target. Calling it ends the synthesis.",
    toolboxes: &[Toolbox::Synthesis],
    schema: synthesis_report_schema,
};

/// `submit_survey`: the survey pass's reconnaissance.
pub(crate) static SURVEY: Submit = Submit {
    name: "submit_survey",
    description: "Hand in the survey of the target. Call it once.",
    toolboxes: &[Toolbox::Survey],
    schema: survey_schema,
};

/// `submit_plan`: the planning pass's allocation of turns.
pub(crate) static PLAN: Submit = Submit {
    name: "submit_plan",
    description: "Hand in the investigation plan. Call it once.",
    toolboxes: &[Toolbox::Planning],
    schema: plan_schema,
};

impl Tool for Submit {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn input_schema(&self) -> Value {
        (self.schema)()
    }

    fn toolboxes(&self) -> &'static [Toolbox] {
        self.toolboxes
    }

    fn ends_loop(&self) -> bool {
        true
    }

    /// Only reached if a caller ignores `ends_loop`: a bug, not a model error.
    fn run(&self, _ctx: &ToolContext<'_>, _input: &Value) -> Result<ToolOutput, FatalToolError> {
        Err(FatalToolError(format!(
            "{} ends its loop and has no handler; the loop reads its input",
            self.name
        )))
    }
}

fn dir_report_schema() -> Value {
    object(
        [
            (
                "summary",
                text("One to three sentences on what this directory is and does."),
            ),
            (
                "completeness",
                typed(
                    "number",
                    "How thoroughly you investigated, from 0.0 to 1.0: 1.0 means every \
                     relevant file was examined closely, 0.5 about half (or most only \
                     skimmed), below 0.3 barely started.",
                ),
            ),
        ],
        &["summary", "completeness"],
    )
}

fn synthesis_report_schema() -> Value {
    object(
        [
            (
                "brief",
                text("Two to four sentences: what the target is and what deserves attention."),
            ),
            ("detailed", text("The full analysis, part by part.")),
        ],
        &["brief", "detailed"],
    )
}

fn survey_schema() -> Value {
    object(
        [
            ("description", text("What the target is, in plain words.")),
            (
                "approach",
                text("How the per-directory investigation should go about it."),
            ),
            (
                "relevant_tools",
                list_of_text("Names of the tools the directory loops should rely on."),
            ),
            (
                "skip_tools",
                list_of_text("Names of the tools that would be wasted or misleading here."),
            ),
            (
                "domain_notes",
                text("One short, practical hint, or an empty string."),
            ),
            (
                "confidence",
                typed("number", "Your confidence in this survey, from 0.0 to 1.0."),
            ),
        ],
        &[
            "description",
            "approach",
            "relevant_tools",
            "skip_tools",
            "domain_notes",
            "confidence",
        ],
    )
}

/// A `{path, reason}` item of the plan's directory lists.
fn planned_dir(reason: &str) -> Value {
    object(
        [
            ("path", text("Directory path relative to the target.")),
            ("reason", text(reason)),
        ],
        &["path", "reason"],
    )
}

fn plan_schema() -> Value {
    let priority_dir = object(
        [
            ("path", text("Directory path relative to the target.")),
            ("reason", text("Why it deserves a deep investigation.")),
            (
                "suggested_turns",
                typed("integer", "Turns to give it (15-20)."),
            ),
        ],
        &["path", "reason", "suggested_turns"],
    );
    let order = json!({
        "type": "string",
        "enum": ["leaf-first", "priority-first"],
        "description": "leaf-first, or priority-first (still leaf-first within each band).",
    });
    object(
        [
            (
                "priority_dirs",
                list_of(priority_dir, "Directories to investigate in depth."),
            ),
            (
                "shallow_dirs",
                list_of(
                    planned_dir("Why a quick look is enough."),
                    "Directories that need only a quick look.",
                ),
            ),
            (
                "skip_dirs",
                list_of(
                    planned_dir("Why it is not worth investigating."),
                    "Directories to leave out entirely.",
                ),
            ),
            ("investigation_order", order),
            (
                "notes",
                text(
                    "Notes that apply across directories, for the per-directory agents; or \
                     an empty string.",
                ),
            ),
        ],
        &[
            "priority_dirs",
            "shallow_dirs",
            "skip_dirs",
            "investigation_order",
            "notes",
        ],
    )
}
