//! What a dir loop is told: the system prompt every loop of a run shares,
//! and the first user message that hands one loop its assignment.
//!
//! Everything specific to one assignment (the directory's path, its turns,
//! the unit's other directories, their listings and the summaries of the
//! subdirectories outside the assignment) is in the first user message, so
//! the system prompt and the tools are byte-identical across a run's loops
//! and every loop after the first reads them from the prompt cache instead
//! of writing its own copy at 1.25x the input price.

use std::path::{Path, PathBuf};

use crate::cache::DirEntry;

use crate::ai::api::catalog::Model;
use crate::ai::api::settings::Workload;
use crate::ai::failure::InvestigationError;
use crate::ai::passes::survey::frame_survey_block;
use crate::ai::prompts::{DirPrompt, DirTaskPrompt, language_rule};
use crate::ai::rules::discover::{ChildIndex, display_name, relative};
use crate::ai::rules::room::{Part, Room};
use crate::ai::rules::tree_view::cut_lines_saying;
use crate::ai::tools::frame_untrusted;
use crate::text::escape_line;

use super::{frame_child_summaries, render_child_summaries};

/// The `source` of the frame listing a unit's other directories; the
/// scripted test agent reads the unit from it.
pub const UNIT_FRAME: &str = "directories of this unit";

/// The line that ends a listing or a block of child summaries cut to fit
/// the model's window.
pub(crate) const ROOM_CUT_LINE: &str = "[... the rest is left out to fit the model's context window; list_directory and \
     read_cache show it]";

/// How many bytes an assignment's listings (all of them together) and its
/// child summaries may take: their share of a loop's room in the model's
/// window ([`crate::ai::rules::room`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskRoom {
    pub listings: usize,
    pub summaries: usize,
}

impl TaskRoom {
    /// The room of a loop's assignment on `model`.
    pub(crate) fn of(model: &Model) -> TaskRoom {
        let room = Room::of(model, Workload::Routine);
        TaskRoom {
            listings: room.bytes(Part::Listing),
            summaries: room.bytes(Part::ChildSummaries),
        }
    }

    /// No limit: a test's assignment, shown whole.
    #[cfg(test)]
    pub(crate) const WHOLE: TaskRoom = TaskRoom {
        listings: usize::MAX,
        summaries: usize::MAX,
    };
}

/// The dir system prompt of a run: the instructions and the survey block
/// (framed as untrusted data: a model's reading of the target's names).
pub(crate) fn dir_system_prompt(
    survey_block: &str,
    language: Option<&str>,
) -> Result<String, InvestigationError> {
    Ok(DirPrompt {
        survey_context: &frame_survey_block(survey_block),
        language_rule: &language_rule(language),
    }
    .render()?)
}

/// The discovered subdirectories of the assignment's directories that are
/// not part of it, sorted: the loops whose summaries it reads.
pub(crate) fn outside_children(
    children: &ChildIndex,
    root: &Path,
    members: &[PathBuf],
) -> Vec<PathBuf> {
    let inside = |dir: &Path| dir == root || members.iter().any(|m| m == dir);
    let mut outside: Vec<PathBuf> = std::iter::once(root)
        .chain(members.iter().map(PathBuf::as_path))
        .flat_map(|dir| children.of(dir).iter())
        .filter(|child| !inside(child))
        .cloned()
        .collect();
    outside.sort();
    outside
}

/// The first user message of a loop over `root` and the folded `members`
/// below it (none for a single directory). `listings` are the directories'
/// listings, `root` first, then `members` in order; `child_entries` are the
/// outside children with their cached entries. Names, listings and
/// summaries come from the target: each listing and the summaries are
/// framed as untrusted data, the unit's directory names too, and the
/// directory's names are escaped to one line. The root's absolute path is
/// the only absolute path in the result. The listings share `room`'s bytes
/// for them evenly, and the summaries are cut to theirs.
pub(crate) fn compose_dir_task(
    target: &Path,
    root: &Path,
    members: &[PathBuf],
    max_turns: u32,
    listings: &[String],
    child_entries: &[(String, Option<DirEntry>)],
    room: TaskRoom,
) -> Result<String, InvestigationError> {
    let each = room.listings / listings.len().max(1);
    let dir_rel = escape_line(&display_name(target, root)).into_owned();
    let dirs: Vec<&Path> = std::iter::once(root)
        .chain(members.iter().map(PathBuf::as_path))
        .collect();
    let context = dirs
        .iter()
        .zip(listings)
        .map(|(dir, listing)| {
            let shown = escape_line(&display_name(target, dir)).into_owned();
            let listing = cut_lines_saying(listing.clone(), each, ROOM_CUT_LINE);
            frame_untrusted(&format!("listing of {shown}"), &listing)
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    let unit = unit_block(target, members);
    let child_summaries = frame_child_summaries(cut_lines_saying(
        render_child_summaries(child_entries),
        room.summaries,
        ROOM_CUT_LINE,
    ));
    let dir_path = escape_line(&root.to_string_lossy()).into_owned();
    Ok(DirTaskPrompt {
        dir_path: &dir_path,
        dir_rel: &dir_rel,
        max_turns,
        unit: &unit,
        context: &context,
        child_summaries: &child_summaries,
    }
    .render()?)
}

/// The paragraph naming a unit's other directories (empty for a single
/// directory), with a blank line before and after.
fn unit_block(target: &Path, members: &[PathBuf]) -> String {
    if members.is_empty() {
        return String::new();
    }
    let names: Vec<String> = members
        .iter()
        .map(|dir| escape_line(&relative(target, dir)).into_owned())
        .collect();
    format!(
        "\nThis assignment is an investigation unit: it also covers these {} small \
         directories below the one above. Their files are yours too, and each needs its \
         own dir entry (write_cache) before submit_report, whose summary is about the \
         directory above.\n{}\n",
        names.len(),
        frame_untrusted(UNIT_FRAME, &names.join("\n"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outside_children_leave_out_the_unit() {
        let t = Path::new("/t");
        let mut all = ["a/x/deep", "a/x", "a/y", "a", "b"]
            .map(|rel| t.join(rel))
            .to_vec();
        all.push(t.to_path_buf());
        let index = ChildIndex::new(&all);
        assert_eq!(
            outside_children(&index, &t.join("a"), &[t.join("a/x")]),
            [t.join("a/x/deep"), t.join("a/y")]
        );
        assert_eq!(
            outside_children(&index, &t.join("b"), &[]),
            Vec::<PathBuf>::new()
        );
    }

    #[test]
    fn a_unit_names_its_directories_inside_a_frame() {
        let t = Path::new("/home/user/proj");
        let task = compose_dir_task(
            t,
            &t.join("src"),
            &[t.join("src/util")],
            14,
            &["(empty)".into(), "  x.rs  (3 bytes)".into()],
            &[(
                "cli".into(),
                DirEntry::from_value(
                    json!({"relative_path": "src/cli", "summary": "Argument parsing."}),
                ),
            )],
            TaskRoom::WHOLE,
        )
        .unwrap();
        assert!(
            task.contains("\nTurns available: 14\n\nThis assignment is an investigation unit:")
        );
        assert!(task.contains(&format!("<untrusted-data source=\"{UNIT_FRAME}\"")));
        assert!(task.contains("\nsrc/util\n</untrusted-data>\n\n## Directory listing\n"));
        assert!(task.contains("<untrusted-data source=\"listing of src/util\""));
        assert!(task.contains("- src/cli/: Argument parsing."));
        assert_eq!(task.matches("/home/user").count(), 1);
        let single =
            compose_dir_task(t, t, &[], 10, &["(empty)".into()], &[], TaskRoom::WHOLE).unwrap();
        assert!(single.contains("\nTurns available: 10\n\n## Directory listing\n"));
        assert!(!single.contains(UNIT_FRAME));
    }
}
