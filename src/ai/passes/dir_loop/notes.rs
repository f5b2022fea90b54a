//! The messages a loop adds to its conversation on its own: the note that
//! few turns remain, and the reply that refuses a unit's `submit_report`
//! while some of its directories have no dir entry.
//!
//! Its edges: wording only; when each is sent is the loop's decision
//! (`mod.rs`), and which directories lack an entry is `entries.rs`.

use crate::text::escape_line;

/// From this many turns before its limit, a loop is told how many remain.
pub(crate) const NEAR_END_TURNS: u32 = 2;

/// The note appended to the next request when few turns remain.
pub(crate) fn turns_left_note(remaining: u32) -> String {
    let turns = if remaining == 1 { "turn" } else { "turns" };
    format!(
        "[luminos] {remaining} {turns} left for this directory, this one included. \
         Cache what you have learned and call submit_report before they run out."
    )
}

/// The reply to a unit's `submit_report` while some of its directories
/// have no dir entry.
pub(crate) fn missing_entries_message(missing: &[String]) -> String {
    format!(
        "Not accepted yet: these directories of your unit have no dir entry: {}. Write one \
         for each with write_cache (cache_type \"dir\"), then call submit_report again.",
        missing
            .iter()
            .map(|rel| escape_line(rel).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    )
}
