//! Room in the context window for the prompt parts that grow with the tree:
//! how many bytes each may take on the run's model, so that every request
//! fits the window whatever the tree, and the smallest window a run works
//! in at all.
//!
//! A request's input may fill the window less its reply
//! ([`crate::ai::api::settings::reply_cap`] keeps the reply to a share of a
//! small window). Each part that grows with the tree ([`Part`]) may take a
//! share of that room, and never more than its own limit, which is what it
//! was held to before windows were small: on every window of the catalog
//! the limit is the smaller, so a catalog model's prompts are what they
//! were, and only a window given with `--context-window` makes a part
//! smaller. The parts of one request together take at most
//! [`GROWING_SHARE`] percent of the room; the rest is for the fixed text
//! (instructions, tools, kickoff) and, in a loop, the conversation, which
//! the loop's context limit and the window's own guard
//! ([`crate::ai::engine::window`]) keep within the window.
//!
//! Bytes become tokens as the window counts them
//! ([`TokenEstimate::at_most`]).
//!
//! Pure arithmetic over the catalog's facts; the parts themselves are cut by
//! their builders.

use crate::ai::api::catalog::Model;
use crate::ai::api::settings::{CallSettings, MIN_REPLY_TOKENS, Workload};
use crate::ai::api::tokens::TokenEstimate;

/// A prompt part that grows with the tree or the investigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The tree the survey and the planner see (or the planner's condensed
    /// map), and the tree a question about a tree never investigated sees.
    Tree,
    /// The scan's file signals (survey and planning).
    Signals,
    /// A loop's listings of the directories of its assignment.
    Listing,
    /// A loop's summaries of the subdirectories outside its assignment.
    ChildSummaries,
    /// What a question is told of the investigation (verdict, flags,
    /// summaries) or of the scan.
    AskContext,
}

/// Every part, in one list (a test pins it).
#[cfg(test)]
pub(crate) const PARTS: [Part; 5] = [
    Part::Tree,
    Part::Signals,
    Part::Listing,
    Part::ChildSummaries,
    Part::AskContext,
];

/// The most the parts of one request take together, in percent of the
/// room its reply leaves: the survey's tree and signals, a loop's listing
/// and child summaries, a question's context.
pub(crate) const GROWING_SHARE: u64 = 50;

/// A request's fixed text (instructions, tools, kickoff) must fit in this
/// share of the room, in percent, for a window to be usable at all: the
/// rest is for the parts that grow and, in a loop, for its turns.
pub(crate) const FIXED_SHARE: u64 = 100 - GROWING_SHARE;

/// The longest signals block of the survey's prompt, in bytes: the scan
/// keeps the top twenty of each kind and a fixed sample of names, but a
/// name can be long.
pub(crate) const MAX_SIGNALS_BYTES: usize = 16 * 1024;
/// The whole context of a question about an investigated tree at most, in
/// bytes: the shares `ask`'s context divides it into add up to it.
pub(crate) const ASK_CONTEXT_BYTES: usize = 62 * 1024;

impl Part {
    /// The most bytes the part takes on any window (the limit it had before
    /// windows were small; `usize::MAX` for a part that had none), and
    /// the share of the room, in percent, it may take.
    pub(crate) const fn limits(self) -> (usize, u64) {
        match self {
            Part::Tree => (crate::ai::rules::tree_view::MAX_TREE_BYTES, 35),
            Part::Signals => (MAX_SIGNALS_BYTES, 10),
            Part::Listing => (usize::MAX, 25),
            Part::ChildSummaries => (usize::MAX, 25),
            Part::AskContext => (ASK_CONTEXT_BYTES, 50),
        }
    }
}

/// The room in one request of a conversation on a model: tokens of input
/// its window leaves once the reply has its share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Room {
    /// Tokens of input a request may carry.
    pub input_tokens: u64,
    /// How many tokens the model makes of text.
    estimate: TokenEstimate,
}

impl Room {
    /// The room of a request of `workload` to `model`.
    pub(crate) fn of(model: &Model, workload: Workload) -> Room {
        let reply = u64::from(CallSettings::new(model, workload).max_tokens);
        Room {
            input_tokens: model.context_window.saturating_sub(reply),
            estimate: TokenEstimate::of(model),
        }
    }

    /// The room of a judgment call on the default model: every part at its
    /// own limit.
    #[cfg(test)]
    pub(crate) fn of_default_model() -> Room {
        let model = crate::ai::api::catalog::ModelFacts::of(crate::ai::api::catalog::DEFAULT_MODEL);
        Room::of(model.model, Workload::Judgment)
    }

    /// The most bytes `part` may take in this room.
    pub(crate) fn bytes(&self, part: Part) -> usize {
        let (limit, share) = part.limits();
        let tokens = self.input_tokens * share / 100;
        self.estimate.bytes_within(tokens).min(limit)
    }
}

/// The smallest window, in whole thousands of tokens (1,024 each), in
/// which a request whose fixed text is `fixed_tokens` leaves that text
/// its share of the room ([`FIXED_SHARE`]) once the largest reply a
/// window of that size asks for has its own.
pub(crate) fn smallest_window(fixed_tokens: u64) -> u64 {
    const STEP: u64 = 1024;
    let fits = |window: u64| {
        let reply = (window / crate::ai::api::settings::REPLY_WINDOW_SHARE)
            .max(u64::from(MIN_REPLY_TOKENS));
        window.saturating_sub(reply) * FIXED_SHARE / 100 >= fixed_tokens
    };
    // The room grows with the window: the answer is at most twice the
    // fixed text plus the reply, in steps.
    let mut window = STEP;
    while !fits(window) {
        window += STEP;
    }
    window
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::api::catalog::{MODELS, ModelFacts};

    #[test]
    fn the_parts_are_pinned_and_share_at_most_half_a_request() {
        assert_eq!(PARTS.len(), 5);
        let share = |part: Part| part.limits().1;
        // The parts that go into one request.
        for together in [
            &[Part::Tree, Part::Signals][..],
            &[Part::Listing, Part::ChildSummaries],
            &[Part::AskContext],
        ] {
            let sum: u64 = together.iter().map(|p| share(*p)).sum();
            assert!(sum <= GROWING_SHARE, "{together:?}: {sum}");
        }
    }

    /// On every model of the catalog each part keeps the limit it had:
    /// only a window given for a local model makes one smaller.
    #[test]
    fn catalog_windows_leave_every_part_as_it_was() {
        for model in MODELS {
            for workload in [Workload::Routine, Workload::Judgment] {
                let room = Room::of(model, workload);
                for part in PARTS {
                    let (limit, _) = part.limits();
                    if limit != usize::MAX {
                        assert_eq!(room.bytes(part), limit, "{} {part:?}", model.id);
                    }
                }
            }
        }
    }

    #[test]
    fn a_small_window_shrinks_the_parts_to_their_share() {
        let facts = ModelFacts::of("qwen3-coder").with_window(32_768, "--context-window");
        let room = Room::of(facts.model, Workload::Judgment);
        assert_eq!(room.input_tokens, 32_768 - 4_096);
        let tree = room.bytes(Part::Tree);
        let per_byte = facts.model.tokens_per_byte * crate::ai::api::settings::COUNT_MARGIN;
        assert!(tree < crate::ai::rules::tree_view::MAX_TREE_BYTES);
        // The tree's tokens are its share of the room, no more.
        assert!((tree as f64 * per_byte) as u64 <= room.input_tokens * 35 / 100);
        assert!(room.bytes(Part::Listing) > 0);
    }

    #[test]
    fn the_smallest_window_leaves_the_fixed_text_its_share() {
        let smallest = smallest_window(5_000);
        assert_eq!(smallest % 1024, 0);
        let room = |window: u64| {
            let reply = (window / 8).max(u64::from(MIN_REPLY_TOKENS));
            (window - reply) * FIXED_SHARE / 100
        };
        assert!(room(smallest) >= 5_000);
        assert!(room(smallest - 1024) < 5_000);
        assert_eq!(smallest_window(0), 1024);
    }
}
