//! What a loop is shown of the tree and the cache before its first turn:
//! each directory's listing as `list_directory` would show it
//! ([`dir_context_in`]) and the summaries of the subdirectories outside the
//! assignment ([`render_child_summaries`], framed as untrusted data, or a
//! placeholder), gathered by [`dir_task`] at run time.
//!
//! Its edges: it reads the filesystem and the cache but writes nothing;
//! the wording of the prompts and of the assignment itself is `task.rs`
//! ([`compose_dir_task`]), which this feeds. `--estimate` uses the same
//! helpers to measure the prompts.

use std::path::{Path, PathBuf};

use super::{DirJob, DirShared, TaskRoom, compose_dir_task, outside_children};
use crate::ai::failure::InvestigationError;
use crate::ai::rules::discover::{display_name, relative};
use crate::ai::tools::{ToolContext, frame_untrusted, fs::scoped_listing};
use crate::cache::DirEntry;
use crate::scan::ScanFilter;
use crate::text::escape_line;

/// Child-summary placeholder for a directory with no subdirectories.
pub(crate) const LEAF_PLACEHOLDER: &str = "(none: this is a leaf directory)";
/// Child-summary placeholder when subdirectories exist but none has a summary.
pub(crate) const UNINVESTIGATED_PLACEHOLDER: &str =
    "(child directories exist but have not been investigated yet)";

/// The first message of `job`'s loop: reads each directory's listing
/// (redacted like `list_directory`'s, so a secret in a name is flagged) and
/// the cached summaries of the subdirectories outside the assignment, then
/// [`compose_dir_task`].
pub(crate) fn dir_task(shared: &DirShared, job: &DirJob) -> Result<String, InvestigationError> {
    let directory = display_name(shared.run.target(), &job.dir);
    let tools = ToolContext {
        home: Some(&job.dir),
        unit: &job.members,
        ..shared.run.tools(&directory)
    };
    let listings: Vec<String> = job
        .dirs()
        .map(|dir| {
            tools.redact_listing(
                &relative(shared.run.target(), dir),
                &dir_context_in(shared.run.target(), dir, Some(&shared.run.scope)),
            )
        })
        .collect();
    let outside = outside_children(&shared.children, &job.dir, &job.members);
    let child_entries = named_child_entries(&outside, |child| {
        shared.run.cache.entry::<DirEntry>(&child.to_string_lossy())
    });
    compose_dir_task(
        shared.run.target(),
        &job.dir,
        &job.members,
        job.max_turns,
        &listings,
        &child_entries,
        TaskRoom::of(shared.run.session.model_facts().model),
    )
}

/// Each child directory's name with its dir entry (from `entry_of`), as
/// [`compose_dir_task`] takes them.
pub(crate) fn named_child_entries(
    children: &[PathBuf],
    entry_of: impl Fn(&PathBuf) -> Option<DirEntry>,
) -> Vec<(String, Option<DirEntry>)> {
    children
        .iter()
        .map(|child| {
            let name = child
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, entry_of(child))
        })
        .collect()
}

/// The child-summaries block: `- <relative_path>/: <summary>` for each child
/// with a cached entry; otherwise one of the two placeholders, so a parent is
/// never told it is a leaf when its children simply have no summary yet.
/// `children` are (name, cached entry) pairs of the discovered subdirectories.
pub(crate) fn render_child_summaries(children: &[(String, Option<DirEntry>)]) -> String {
    let lines: Vec<String> = children
        .iter()
        .filter_map(|(name, entry)| {
            let entry = entry.as_ref()?;
            let rel = match entry.relative_path.as_str() {
                "" => name.as_str(),
                rel => rel,
            };
            let summary = match entry.summary.as_str() {
                "" => "(no summary)",
                summary => summary,
            };
            Some(format!("- {}/: {summary}", escape_line(rel)))
        })
        .collect();
    if !lines.is_empty() {
        lines.join("\n")
    } else if children.is_empty() {
        LEAF_PLACEHOLDER.to_string()
    } else {
        UNINVESTIGATED_PLACEHOLDER.to_string()
    }
}

/// The directory's listing for its prompt (hidden names left out), as the
/// `list_directory` tool shows it, so the agent need not spend a turn on it.
/// What the scan left out (ignored names, `-x` directories) is left out here
/// too, and counted.
pub(crate) fn dir_context_in(target: &Path, dir: &Path, scope: Option<&ScanFilter>) -> String {
    match scoped_listing(target, dir, false, scope) {
        Ok(listing) if listing.lines.is_empty() && listing.left_out == 0 => "(empty)".to_string(),
        // The frame names it a listing: no header repeats that.
        Ok(listing) => listing.text(),
        Err(_) => "  (could not list directory)".to_string(),
    }
}

/// Summaries are the agent's words about the target's files, so they go to
/// the next agent framed as untrusted data; the placeholders are ours.
pub(crate) fn frame_child_summaries(rendered: String) -> String {
    if rendered == LEAF_PLACEHOLDER || rendered == UNINVESTIGATED_PLACEHOLDER {
        rendered
    } else {
        frame_untrusted("summaries of child directories", &rendered)
    }
}
