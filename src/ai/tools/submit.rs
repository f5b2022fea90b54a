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

use serde::de::IgnoredAny;

use super::schema::{JsonType, Schema, bare, list_of, list_of_text, object, one_of, text, typed};
use super::{FatalToolError, Tool, ToolContext, ToolOutput, ToolSpec, Toolbox};

/// A tool that ends its loop. They differ only in their spec: what they
/// are called, say and ask for, and the loop that offers them.
pub(crate) struct Submit(ToolSpec);

/// `submit_report` in the dir loop: the directory's summary.
pub(crate) static DIR_REPORT: Submit = Submit(ToolSpec {
    name: "submit_report",
    description: "Hand in this directory's summary; this ends its investigation.",
    toolboxes: &[Toolbox::Dir],
    schema: dir_report_schema,
});

/// `submit_report` in synthesis: the verdict on the whole target.
pub(crate) static SYNTHESIS_REPORT: Submit = Submit(ToolSpec {
    name: "submit_report",
    description: "Hand in the analysis of the whole target; this ends the synthesis.",
    toolboxes: &[Toolbox::Synthesis],
    schema: synthesis_report_schema,
});

/// `submit_report` in the refinement: the improved verdict, with the flags
/// it adds and withdraws.
pub(crate) static REFINED_REPORT: Submit = Submit(ToolSpec {
    name: "submit_report",
    description: "Hand in the improved analysis, with the flags you add and withdraw; this \
                  ends the round.",
    toolboxes: &[Toolbox::Refine],
    schema: refined_report_schema,
});

/// `submit_answer`: the answer to the question `luminos ask` was given.
pub(crate) static ANSWER: Submit = Submit(ToolSpec {
    name: "submit_answer",
    description: "Hand in your answer; this ends the conversation.",
    toolboxes: &[Toolbox::Ask],
    schema: answer_schema,
});

/// `submit_survey`: the survey pass's reconnaissance.
pub(crate) static SURVEY: Submit = Submit(ToolSpec {
    name: "submit_survey",
    description: "Hand in the survey of the target, once.",
    toolboxes: &[Toolbox::Survey],
    schema: survey_schema,
});

/// `submit_plan`: the planning pass's allocation of turns.
pub(crate) static PLAN: Submit = Submit(ToolSpec {
    name: "submit_plan",
    description: "Hand in the investigation plan, once.",
    toolboxes: &[Toolbox::Planning],
    schema: plan_schema,
});

impl Tool for Submit {
    /// The loop that offered it reads the input, not a handler.
    type Input = IgnoredAny;

    fn spec(&self) -> ToolSpec {
        self.0
    }

    fn ends_loop(&self) -> bool {
        true
    }

    /// Only reached if a caller ignores `ends_loop`: a bug, not a model error.
    fn run(
        &self,
        _ctx: &ToolContext<'_>,
        _input: IgnoredAny,
    ) -> Result<ToolOutput, FatalToolError> {
        Err(FatalToolError(format!(
            "{} ends its loop and has no handler; the loop reads its input",
            self.0.name
        )))
    }
}

fn dir_report_schema() -> Schema {
    object(
        [
            (
                "summary",
                text("1-3 sentences: what the directory is and does."),
            ),
            (
                "completeness",
                typed(
                    JsonType::Number,
                    "0.0-1.0: 1.0 every relevant file read closely, 0.5 half or skimmed, \
                     below 0.3 barely started.",
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
fn synthesis_report_schema() -> Schema {
    object(synthesis_properties(), SYNTHESIS_REQUIRED)
}

/// The synthesis's required fields.
const SYNTHESIS_REQUIRED: &[&str] = &["brief", "detailed"];

/// The verdict, then the sections for software, then the others.
fn synthesis_properties() -> impl Iterator<Item = (&'static str, Schema)> {
    verdict_properties()
        .into_iter()
        .chain(software_sections())
        .chain(content_sections())
}

/// The verdict itself: the two required fields, then the two optional ones
/// that say what the whole is and how it hangs together.
fn verdict_properties() -> [(&'static str, Schema); 4] {
    [
        (
            "brief",
            text("2-4 sentences: what the target is, and what deserves attention."),
        ),
        (
            "detailed",
            text("The reasoning behind it, then what else matters."),
        ),
        (
            "overall_purpose",
            text("What a whole of mixed kinds is for."),
        ),
        ("architecture", text("How the parts fit together.")),
    ]
}

/// The optional sections for software: its components, entry points,
/// stack, and the commands its own files give to build, test and run it.
fn software_sections() -> [(&'static str, Schema); 4] {
    [
        (
            "components",
            list_of(component_schema(), "The main parts, a dozen at most."),
        ),
        (
            "entry_points",
            list_of(entry_point_schema(), "Where execution starts."),
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
            list_of_text("Languages, frameworks, key tools."),
        ),
    ]
}

/// One item of `commands`: a command line and the file that gives it.
fn command_schema() -> Schema {
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
fn content_sections() -> [(&'static str, Schema); 6] {
    [
        ("datasets", list_of(dataset_schema(), "The data sets held.")),
        ("schema_summary", text("The shape of the records.")),
        (
            "period_covered",
            text("The span of time, such as 2019-03 to 2024-11."),
        ),
        ("themes", list_of_text("Recurring subjects.")),
        ("data_quality", text("Gaps, duplicates, inconsistencies.")),
        (
            "concerns",
            list_of_text("What deserves attention, one an item."),
        ),
    ]
}

/// One item of `components`: a named part and the parts it uses, enough to
/// draw a diagram from.
fn component_schema() -> Schema {
    object(
        [
            ("name", bare(JsonType::String)),
            ("path", bare(JsonType::String)),
            ("role", bare(JsonType::String)),
            (
                "depends_on",
                list_of_text("Names of the components it uses."),
            ),
        ],
        &["name", "role"],
    )
}

/// One item of `entry_points`: a file where execution starts.
fn entry_point_schema() -> Schema {
    object(
        [
            ("path", bare(JsonType::String)),
            ("role", text("What starts there.")),
        ],
        &["path", "role"],
    )
}

/// One item of `datasets`: a data set and what it holds.
fn dataset_schema() -> Schema {
    object(
        [
            ("name", bare(JsonType::String)),
            ("path", bare(JsonType::String)),
            ("description", text("Records, fields, size, source.")),
        ],
        &["name", "description"],
    )
}

/// The synthesis's fields (whatever they are), then the flags the
/// refinement adds and the ids of those it withdraws (both optional).
fn refined_report_schema() -> Schema {
    let flag = object(
        [
            ("path", text("Relative to the target, or 'general'.")),
            ("finding", text("What you found, in a sentence or two.")),
            (
                "severity",
                one_of(
                    &["info", "concern", "critical"],
                    Some("How much it matters."),
                ),
            ),
        ],
        &["path", "finding", "severity"],
    );
    let flags = [
        (
            "flags_added",
            list_of(flag, "New findings your checks support."),
        ),
        (
            "flags_withdrawn",
            list_of_text("Ids (F1, ...) of listed flags shown wrong or replaced."),
        ),
    ];
    object(synthesis_properties().chain(flags), SYNTHESIS_REQUIRED)
}

fn answer_schema() -> Schema {
    object(
        [(
            "answer",
            text("Plain text or Markdown, naming the files and symbols it rests on."),
        )],
        &["answer"],
    )
}

fn survey_schema() -> Schema {
    object(
        [
            ("description", text("Question 1's answer.")),
            ("approach", text("Question 2's answer.")),
            ("relevant_tools", list_of_text("Tools to lean on.")),
            (
                "skip_tools",
                list_of_text("Tools that would be wrong here."),
            ),
            ("domain_notes", text("The hint, or an empty string.")),
            ("confidence", typed(JsonType::Number, "0.0-1.0.")),
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
fn planned_dir(reason: &'static str) -> Schema {
    object(
        [
            ("path", text("Relative to the target.")),
            ("reason", text(reason)),
        ],
        &["path", "reason"],
    )
}

fn plan_schema() -> Schema {
    let priority_dir = object(
        [
            ("path", text("Relative to the target.")),
            ("reason", text("Why it deserves depth.")),
            ("suggested_turns", typed(JsonType::Integer, "15-20.")),
        ],
        &["path", "reason", "suggested_turns"],
    );
    let order = one_of(&["leaf-first", "priority-first"], Some("See Order."));
    object(
        [
            (
                "priority_dirs",
                list_of(priority_dir, "Directories worth a deep look."),
            ),
            (
                "shallow_dirs",
                list_of(
                    planned_dir("Why a quick look is enough."),
                    "Directories worth a quick look.",
                ),
            ),
            (
                "skip_dirs",
                list_of(
                    planned_dir("Why it is not worth a look."),
                    "Directories to leave out.",
                ),
            ),
            ("investigation_order", order),
            (
                "notes",
                text("For the directory agents, or an empty string."),
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
