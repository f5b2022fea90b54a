//! The synthesis a decision expects: which directories' entries it will
//! read ([`in_synthesis`]), how its calls are laid out over them
//! ([`project_synthesis`], from allowances for summaries not written yet),
//! and what those calls cost ([`synthesis_cost`]).
//!
//! Its edges: a projection only; the layout rules are
//! [`crate::ai::rules::levels`], and the synthesis pass itself
//! ([`crate::ai::passes::synthesis`]) uses [`in_synthesis`] and
//! [`synthesis_cost`] on the real entries.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{DecisionInputs, MECHANICAL_SECTION_BYTES, PlannedLoop, SECTION_BYTES, SynthesisPlan};
use crate::ai::rules::fingerprint::Freshness;
use crate::ai::rules::levels::{self, Capacity, Layout, Section};
use crate::ai::rules::projection::{
    GROUP_OUTPUT_TOKENS, ModelTerms, SYNTHESIS_OUTPUT_TOKENS, Tally, reference_tokens,
};

/// Whether a directory's entry goes into the synthesis: every entry a
/// model wrote, and a mechanical one only where no mechanical parent
/// already describes its subtree (`parent_mechanical`: whether the parent's
/// entry is mechanical, `None` without a parent entry).
pub(crate) fn in_synthesis(mechanical: bool, parent_mechanical: Option<bool>) -> bool {
    !mechanical || parent_mechanical != Some(true)
}

/// The synthesis a run with these loops and mechanical entries is expected
/// to make, from allowances for the summaries not written yet.
pub(super) fn project_synthesis(
    inputs: &DecisionInputs<'_>,
    freshness: &Freshness,
    loops: &[PlannedLoop],
    mechanical: &[PathBuf],
    capacity: Capacity,
    terms: &ModelTerms,
) -> SynthesisPlan {
    let nothing_to_do = freshness.stale.is_empty() && loops.is_empty();
    if nothing_to_do && inputs.synthesis_current {
        return SynthesisPlan {
            reused: true,
            layout: Layout::default(),
            cost: 0.0,
        };
    }
    // Which directories will have an entry, and of which kind.
    let mut kind: HashMap<&Path, bool> = HashMap::new();
    for dir in &freshness.fresh {
        kind.insert(dir, inputs.mechanical.contains(dir));
    }
    for planned in loops {
        for dir in planned.unit.dirs() {
            kind.insert(dir, false);
        }
    }
    for dir in mechanical {
        kind.insert(dir, true);
    }
    let mut sections: Vec<Section> = inputs
        .dirs
        .iter()
        .filter_map(|dir| {
            let mechanical = *kind.get(dir.as_path())?;
            let parent = dir
                .parent()
                .filter(|_| dir != inputs.target)
                .and_then(|p| kind.get(p).copied());
            in_synthesis(mechanical, parent).then(|| Section {
                rel: crate::ai::rules::discover::relative(inputs.target, dir),
                tokens: terms.scale(reference_tokens(if mechanical {
                    MECHANICAL_SECTION_BYTES
                } else {
                    SECTION_BYTES
                })),
            })
        })
        .collect();
    levels::tree_order(&mut sections);
    let layout = levels::layout(&sections, capacity, GROUP_OUTPUT_TOKENS);
    let cost = synthesis_cost(&sections, &layout, terms);
    SynthesisPlan {
        reused: false,
        layout,
        cost,
    }
}

/// What the calls of `layout` over `sections` (in the model's tokens) cost:
/// each reads its inputs (plus the prompt's own text) once, as plain input,
/// thinks (a group as routine work, the verdict as a judgment call), and
/// writes its summary or the verdict.
pub(crate) fn synthesis_cost(sections: &[Section], layout: &Layout, terms: &ModelTerms) -> f64 {
    let calls = levels::call_inputs(sections, layout, GROUP_OUTPUT_TOKENS);
    let verdict = calls.len() - 1;
    calls
        .into_iter()
        .enumerate()
        .map(|(n, input)| {
            let (output, thinking) = if n == verdict {
                (SYNTHESIS_OUTPUT_TOKENS, terms.judgment_thinking)
            } else {
                (GROUP_OUTPUT_TOKENS, terms.routine_thinking)
            };
            Tally::single(
                input + levels::PROMPT_OVERHEAD_TOKENS,
                terms.scale(output) + thinking,
                &terms.pricing,
            )
            .cost
        })
        .sum()
}
