//! The tools that end a loop: `submit_report` (one schema for the dir loop,
//! one for synthesis, one for the refinement), `submit_survey`,
//! `submit_plan` and `submit_answer` (`luminos ask`).
//!
//! They have a schema and no handler: [`super::dispatch`] answers
//! [`super::Dispatch::EndsLoop`] and the loop that offered the tool reads the
//! call's input itself. The field names, types, required lists and enums are
//! the original's, because the passes and the cache read them by name;
//! `submit_answer` and the refinement's fields after the synthesis's are
//! ours.

use serde_json::{Value, json};

use super::schema::{list_of, list_of_text, object, text, typed};
use super::{FatalToolError, Tool, ToolContext, ToolOutput, ToolSpec, Toolbox};

/// A tool that ends its loop. They differ only in their spec: what they
/// are called, say and ask for, and the loop that offers them.
pub(crate) struct Submit(ToolSpec);

/// `submit_report` in the dir loop: the directory's summary.
pub(crate) static DIR_REPORT: Submit = Submit(ToolSpec {
    name: "submit_report",
    description: "Hand in the summary of this directory. Calling it ends the investigation of \
                  the directory.",
    toolboxes: &[Toolbox::Dir],
    schema: dir_report_schema,
});

/// `submit_report` in synthesis: the verdict on the whole target.
pub(crate) static SYNTHESIS_REPORT: Submit = Submit(ToolSpec {
    name: "submit_report",
    description: "Hand in the final analysis of the whole target. Calling it ends the synthesis.",
    toolboxes: &[Toolbox::Synthesis],
    schema: synthesis_report_schema,
});

/// `submit_report` in the refinement: the improved verdict, with the flags
/// it adds and withdraws.
pub(crate) static REFINED_REPORT: Submit = Submit(ToolSpec {
    name: "submit_report",
    description: "Hand in the improved analysis of the whole target, with the flags you add \
                  and withdraw. Calling it ends this round of the refinement.",
    toolboxes: &[Toolbox::Refine],
    schema: refined_report_schema,
});

/// `submit_answer`: the answer to the question `luminos ask` was given.
pub(crate) static ANSWER: Submit = Submit(ToolSpec {
    name: "submit_answer",
    description: "Hand in your answer to the question. Calling it ends the conversation.",
    toolboxes: &[Toolbox::Ask],
    schema: answer_schema,
});

/// `submit_survey`: the survey pass's reconnaissance.
pub(crate) static SURVEY: Submit = Submit(ToolSpec {
    name: "submit_survey",
    description: "Hand in the survey of the target. Call it once.",
    toolboxes: &[Toolbox::Survey],
    schema: survey_schema,
});

/// `submit_plan`: the planning pass's allocation of turns.
pub(crate) static PLAN: Submit = Submit(ToolSpec {
    name: "submit_plan",
    description: "Hand in the investigation plan. Call it once.",
    toolboxes: &[Toolbox::Planning],
    schema: plan_schema,
});

impl Tool for Submit {
    fn spec(&self) -> ToolSpec {
        self.0
    }

    fn ends_loop(&self) -> bool {
        true
    }

    /// Only reached if a caller ignores `ends_loop`: a bug, not a model error.
    fn run(&self, _ctx: &ToolContext<'_>, _input: &Value) -> Result<ToolOutput, FatalToolError> {
        Err(FatalToolError(format!(
            "{} ends its loop and has no handler; the loop reads its input",
            self.0.name
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

/// The verdict, and the optional domain sections (see
/// [`crate::report::Sections`], which normalises what comes back): only
/// `brief` and `detailed` are required, so the model fills the sections
/// that fit the tree and leaves the others out. Their shapes are pinned
/// here: components are objects a diagram can be drawn from. (An
/// `input_schema` is a JSON Schema object, nested objects and arrays
/// included: platform.claude.com/docs/en/agents-and-tools/tool-use/
/// implement-tool-use, read 2026-11-27.)
fn synthesis_report_schema() -> Value {
    let mut schema = object(verdict_properties(), &["brief", "detailed"]);
    if let Some(properties) = schema["properties"].as_object_mut() {
        let sections = software_sections().into_iter().chain(content_sections());
        properties.extend(sections.map(|(name, section)| (name.to_string(), section)));
    }
    schema
}

/// The verdict itself: the two required fields, then the two optional ones
/// that say what the whole is and how it hangs together.
fn verdict_properties() -> [(&'static str, Value); 4] {
    [
        (
            "brief",
            text(
                "Two to four sentences: your conclusion about what the target is, and what \
                 deserves attention.",
            ),
        ),
        (
            "detailed",
            text(
                "The reasoning: the hypothesis, the evidence for it (named directories and \
                 files), the alternatives you weighed and why they fit less well, then \
                 what else matters.",
            ),
        ),
        (
            "overall_purpose",
            text("Optional. What the whole is for, when it mixes kinds of content."),
        ),
        (
            "architecture",
            text("Optional, for software. How the parts fit together."),
        ),
    ]
}

/// The optional sections for software: its components, entry points,
/// stack, and the commands its own files give to build, test and run it.
fn software_sections() -> [(&'static str, Value); 4] {
    [
        (
            "components",
            list_of(
                component_schema(),
                "Optional, for software or large collections. The main parts (at most \
                 about a dozen) and which of them uses which.",
            ),
        ),
        (
            "entry_points",
            list_of(
                entry_point_schema(),
                "Optional, for software. Where execution starts: binaries, commands, \
                 servers.",
            ),
        ),
        (
            "commands",
            list_of(
                command_schema(),
                "Optional, for software. How to build, test, run or check it: the commands \
                 the directory summaries list, each with the file it came from. Only those.",
            ),
        ),
        (
            "tech_stack",
            list_of_text("Optional, for software. Languages, frameworks, key tools."),
        ),
    ]
}

/// One item of `commands`: a command line and the file that gives it.
fn command_schema() -> Value {
    object(
        [
            ("command", text("The command line, as the file gives it.")),
            (
                "purpose",
                text("What it does: build, test, run, lint, format, ..."),
            ),
            (
                "source",
                text("The file it came from, relative to the target."),
            ),
        ],
        &["command", "source"],
    )
}

/// The optional sections for data, dated content and documents, then the
/// concerns any tree may have (last, as the report lists them).
fn content_sections() -> [(&'static str, Value); 6] {
    [
        (
            "datasets",
            list_of(dataset_schema(), "Optional, for data. The data sets held."),
        ),
        (
            "schema_summary",
            text("Optional, for data or databases. The shape of the records."),
        ),
        (
            "period_covered",
            text(
                "Optional, for dated content (finances, journals, series). The span of \
                 time, such as 2019-03 to 2024-11.",
            ),
        ),
        (
            "themes",
            list_of_text("Optional, for documents or journals. Recurring subjects."),
        ),
        (
            "data_quality",
            text("Optional, for data. Gaps, duplicates, inconsistencies."),
        ),
        (
            "concerns",
            list_of_text("Optional, for any tree. What deserves attention, one per item."),
        ),
    ]
}

/// One item of `components`: a named part and the parts it uses, enough to
/// draw a diagram from.
fn component_schema() -> Value {
    object(
        [
            ("name", text("A short name, unique among the components.")),
            (
                "path",
                text("Where it lives, relative to the target (a directory or file)."),
            ),
            ("role", text("What it does, in one sentence.")),
            (
                "depends_on",
                list_of_text("The names of the other components it uses."),
            ),
        ],
        &["name", "role"],
    )
}

/// One item of `entry_points`: a file where execution starts.
fn entry_point_schema() -> Value {
    object(
        [
            ("path", text("The file, relative to the target.")),
            ("role", text("What starts there.")),
        ],
        &["path", "role"],
    )
}

/// One item of `datasets`: a data set and what it holds.
fn dataset_schema() -> Value {
    object(
        [
            ("name", text("A short name.")),
            ("path", text("Where it lives, relative to the target.")),
            (
                "description",
                text("What it holds: records, fields, size, source."),
            ),
        ],
        &["name", "description"],
    )
}

/// The synthesis's fields (whatever they are), then the flags the
/// refinement adds and the ids of those it withdraws (both optional).
fn refined_report_schema() -> Value {
    let mut schema = synthesis_report_schema();
    let flag = object(
        [
            (
                "path",
                text("The file or directory, relative to the target, or 'general'."),
            ),
            ("finding", text("What you found, in one or two sentences.")),
            (
                "severity",
                json!({"type": "string", "enum": ["info", "concern", "critical"],
                       "description": "How much it matters."}),
            ),
        ],
        &["path", "finding", "severity"],
    );
    if let Some(properties) = schema["properties"].as_object_mut() {
        properties.insert(
            "flags_added".into(),
            list_of(
                flag,
                "New findings your checks support; an empty list for none.",
            ),
        );
        properties.insert(
            "flags_withdrawn".into(),
            list_of_text(
                "Ids (F1, F2, ...) of the listed flags your checks showed to be wrong or \
                 replaced by one you add; an empty list for none.",
            ),
        );
    }
    schema
}

fn answer_schema() -> Value {
    object(
        [(
            "answer",
            text(
                "Your answer, in plain text or Markdown. Name the files (relative to the \
                 target) and symbols it rests on.",
            ),
        )],
        &["answer"],
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
