//! Synthesis in levels: how the directory summaries are grouped so that no
//! synthesis request is larger than one call may be.
//!
//! One call may carry at most [`Capacity::tokens`] of summaries: a quarter of
//! the model's context window (the rest is room for the prompt's own text,
//! the reply, and the turns a synthesis may take), and no more than a
//! twentieth of the budget's worth of input (a quarter of the synthesis's
//! share of a binding budget), so that no single request can spend the
//! synthesis's money. When every summary fits, synthesis is one
//! call, as it always was. When they do not:
//!
//! 1. level 1 groups the directory sections by subtree: a subtree whose
//!    sections fit one call becomes a group, small sibling subtrees share a
//!    group, and a directory whose subtree is too large passes its own
//!    section up and is split below;
//! 2. each group is summarized by one call; the next level reads the group
//!    summaries with the sections passed up, in tree order, chunked again
//!    if they still do not fit;
//! 3. the level that fits writes the verdict.
//!
//! Grouping follows the tree, and where a group of siblings ends is chosen
//! by their paths, not their sizes (content-defined chunking), so a change
//! to one directory touches only the groups on its path; every group's
//! output is cached by the digest of its input. Pure: section sizes in, layout out. The same
//! rule lays out the run's synthesis (from the real summaries) and the
//! estimate's (from allowances).

/// What one synthesis call may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Capacity {
    /// Tokens of sections one call may carry.
    pub tokens: u64,
}

/// The share of the context window one synthesis call's sections may fill.
pub(crate) const WINDOW_SHARE: u64 = 4;
/// One call may spend at most this share of the budget on its input: a
/// quarter of what a binding budget keeps for the synthesis
/// ([`crate::ai::rules::decide::SYNTHESIS_SHARE`]), so no one request can
/// take the synthesis's money and the verdict always has its share.
pub(crate) const BUDGET_SHARE_PER_CALL: f64 = 0.05;
/// Tokens of a synthesis prompt besides its sections (instructions, tools,
/// kickoff: about 1,000), set aside from the capacity.
pub(crate) const PROMPT_OVERHEAD_TOKENS: u64 = 1_200;
/// The least a call may carry, however small the budget: a handful of
/// sections, or levels would never end.
pub(crate) const MIN_CAPACITY_TOKENS: u64 = 1_000;

impl Capacity {
    /// The capacity of a call on a model with `window` tokens of context,
    /// under `budget` dollars (none: no limit) at `input_price` dollars per
    /// million input tokens.
    pub(crate) fn new(window: u64, budget: Option<f64>, input_price: f64) -> Capacity {
        let by_window = window / WINDOW_SHARE;
        let by_budget = match budget {
            Some(budget) if input_price > 0.0 => {
                let tokens = budget * BUDGET_SHARE_PER_CALL / input_price * 1_000_000.0;
                tokens.max(0.0) as u64
            }
            Some(_) | None => u64::MAX,
        };
        Capacity {
            tokens: by_window
                .min(by_budget)
                .saturating_sub(PROMPT_OVERHEAD_TOKENS)
                .max(MIN_CAPACITY_TOKENS),
        }
    }
}

/// One directory's section: its path relative to the target (`.` for the
/// target) and its size in tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    pub rel: String,
    pub tokens: u64,
}

/// What a call of a level reads: sections of the level below (directory
/// sections at level 1, the outputs and passed-up sections of the level
/// below after), by index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub inputs: Vec<usize>,
}

/// One level below the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Level {
    pub groups: Vec<Group>,
    /// Inputs read by no group: they go up to the next level as they are.
    pub passed_up: Vec<usize>,
}

impl Level {
    /// The next level's inputs in order: for each group its output, and
    /// each passed-up input, ordered by their first input.
    pub(crate) fn outputs(&self) -> Vec<Output> {
        let mut out: Vec<(usize, Output)> = self
            .groups
            .iter()
            .enumerate()
            .map(|(g, group)| (group.inputs[0], Output::Group(g)))
            .chain(self.passed_up.iter().map(|&i| (i, Output::Passed(i))))
            .collect();
        out.sort_by_key(|(first, _)| *first);
        out.into_iter().map(|(_, o)| o).collect()
    }
}

/// An input of the level above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// The summary written by group `n` of the level.
    Group(usize),
    /// Input `n` of the level, passed up unchanged.
    Passed(usize),
}

/// The layout of one synthesis: the levels below the verdict (none when
/// everything fits one call). Sections are in depth-first tree order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Layout {
    pub levels: Vec<Level>,
}

impl Layout {
    /// Calls the synthesis makes: every group, and the verdict.
    #[cfg(test)]
    pub(crate) fn calls(&self) -> usize {
        self.levels.iter().map(|l| l.groups.len()).sum::<usize>() + 1
    }
}

/// The tokens of sections each call of `layout` reads: every group, level
/// by level, then the verdict; a group's output is taken to be
/// `output_tokens`.
pub(crate) fn call_inputs(sections: &[Section], layout: &Layout, output_tokens: u64) -> Vec<u64> {
    let mut sizes: Vec<u64> = sections.iter().map(|s| s.tokens).collect();
    let mut calls = Vec::new();
    for level in &layout.levels {
        for group in &level.groups {
            calls.push(group.inputs.iter().map(|&i| sizes[i]).sum());
        }
        sizes = next_sizes(level, sizes, output_tokens);
    }
    calls.push(sizes.iter().sum());
    calls
}

/// Sort `sections` depth-first (each directory before its subtree, siblings
/// by name), the order [`layout`] expects.
pub(crate) fn tree_order(sections: &mut [Section]) {
    sections.sort_by(|a, b| tree_key(&a.rel).cmp(&tree_key(&b.rel)));
}

/// The sort key of [`tree_order`]: a relative path's components.
pub(crate) fn tree_key(rel: &str) -> Vec<&str> {
    if rel == "." || rel.is_empty() {
        Vec::new()
    } else {
        rel.split('/').collect()
    }
}

/// Lay out `sections` (in [`tree_order`]) for calls of `capacity`, with a
/// group's output assumed to take `output_tokens` at the next level.
pub(crate) fn layout(sections: &[Section], capacity: Capacity, output_tokens: u64) -> Layout {
    let mut levels = Vec::new();
    let total: u64 = sections.iter().map(|s| s.tokens).sum();
    if total <= capacity.tokens {
        return Layout { levels };
    }
    let first = level_one(sections, capacity);
    let mut sizes: Vec<u64> = sections.iter().map(|s| s.tokens).collect();
    if !first.groups.is_empty() {
        sizes = next_sizes(&first, sizes, output_tokens);
        levels.push(first);
    }
    while let Some(level) = next_level(&sizes, capacity) {
        sizes = next_sizes(&level, sizes, output_tokens);
        levels.push(level);
    }
    Layout { levels }
}

/// The level above inputs of `sizes` (in order): none when they fit one
/// call, or when chunking cannot shrink them (the caller then cuts them).
/// A run lays out each level above the first from its real outputs with
/// this, as they are known.
pub(crate) fn next_level(sizes: &[u64], capacity: Capacity) -> Option<Level> {
    if sizes.iter().sum::<u64>() <= capacity.tokens {
        return None;
    }
    let level = chunk(sizes, capacity);
    (!level.groups.is_empty()).then_some(level)
}

/// The sizes of the next level's inputs.
fn next_sizes(level: &Level, sizes: Vec<u64>, output_tokens: u64) -> Vec<u64> {
    level
        .outputs()
        .into_iter()
        .map(|output| match output {
            Output::Group(_) => output_tokens,
            Output::Passed(i) => sizes[i],
        })
        .collect()
}

/// Level 1: subtrees that fit become groups (siblings packed together);
/// the top of a subtree that does not fit passes its section up.
fn level_one(sections: &[Section], capacity: Capacity) -> Level {
    let mut level = Level {
        groups: Vec::new(),
        passed_up: Vec::new(),
    };
    split(sections, 0..sections.len(), capacity, &mut level);
    level.passed_up.sort_unstable();
    level
}

/// The end of the subtree starting at `start` (exclusive), within `range`.
fn subtree_end(sections: &[Section], start: usize, end: usize) -> usize {
    let rel = &sections[start].rel;
    let root = rel == "." || rel.is_empty();
    let prefix = format!("{rel}/");
    (start + 1..end)
        .find(|&i| !root && !sections[i].rel.starts_with(&prefix))
        .unwrap_or(end)
}

/// A section's size as grouping assumes it when it places boundaries.
pub(crate) const NOMINAL_SECTION_TOKENS: u64 = 300;

/// Whether a group starts at the subtree `rel` whatever the sizes: one
/// sibling in `capacity / (2 x nominal)` on average, chosen by a hash of
/// its path, so packs average half a call and a summary that grows or
/// shrinks moves no boundary but its own group's (content-defined
/// chunking, as backup tools cut files).
fn starts_group(rel: &str, capacity: Capacity) -> bool {
    let every = (capacity.tokens / (2 * NOMINAL_SECTION_TOKENS)).max(1);
    // FNV-1a: stable across runs and Rust versions.
    let hash = rel.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    hash % every == 0
}

/// Lay out the sibling subtrees in `range`: each that fits joins the open
/// pack unless the pack would overflow or the subtree starts a group.
fn split(
    sections: &[Section],
    range: std::ops::Range<usize>,
    capacity: Capacity,
    level: &mut Level,
) {
    let size = |r: std::ops::Range<usize>| sections[r].iter().map(|s| s.tokens).sum::<u64>();
    let mut pack: Vec<usize> = Vec::new();
    let mut pack_size = 0;
    let mut at = range.start;
    while at < range.end {
        let end = subtree_end(sections, at, range.end);
        let subtree = size(at..end);
        if subtree <= capacity.tokens {
            if pack_size + subtree > capacity.tokens || starts_group(&sections[at].rel, capacity) {
                close(std::mem::take(&mut pack), level);
                pack_size = 0;
            }
            pack.extend(at..end);
            pack_size += subtree;
        } else {
            close(std::mem::take(&mut pack), level);
            pack_size = 0;
            level.passed_up.push(at);
            split(sections, at + 1..end, capacity, level);
        }
        at = end;
    }
    close(pack, level);
}

/// Close a pack: a group, or, for a single input, a pass up (a summary of
/// one summary would shrink nothing).
fn close(pack: Vec<usize>, level: &mut Level) {
    match pack.len() {
        0 => {}
        1 => level.passed_up.extend(pack),
        _ => level.groups.push(Group { inputs: pack }),
    }
}

/// A later level: inputs in order, chunked to fit; an input too large for
/// any chunk, and a chunk of one, pass up alone (a summary of a single
/// summary would shrink nothing).
fn chunk(sizes: &[u64], capacity: Capacity) -> Level {
    let mut level = Level {
        groups: Vec::new(),
        passed_up: Vec::new(),
    };
    let mut pack: Vec<usize> = Vec::new();
    let mut pack_size = 0;
    for (i, &size) in sizes.iter().enumerate() {
        if size > capacity.tokens {
            close(std::mem::take(&mut pack), &mut level);
            pack_size = 0;
            level.passed_up.push(i);
            continue;
        }
        if pack_size + size > capacity.tokens {
            close(std::mem::take(&mut pack), &mut level);
            pack_size = 0;
        }
        pack.push(i);
        pack_size += size;
    }
    close(pack, &mut level);
    level.passed_up.sort_unstable();
    level
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(spec: &[(&str, u64)]) -> Vec<Section> {
        let mut list: Vec<Section> = spec
            .iter()
            .map(|(rel, tokens)| Section {
                rel: rel.to_string(),
                tokens: *tokens,
            })
            .collect();
        tree_order(&mut list);
        list
    }

    fn cap(tokens: u64) -> Capacity {
        Capacity { tokens }
    }

    #[test]
    fn capacity_is_a_quarter_window_or_a_twentieth_of_the_budget() {
        // $5 at $2 per million: $0.25 buys 125,000 tokens.
        let c = Capacity::new(1_000_000, Some(5.0), 2.0);
        assert_eq!(c.tokens, 125_000 - PROMPT_OVERHEAD_TOKENS);
        // $20: a quarter of the window is the lesser.
        let c = Capacity::new(1_000_000, Some(20.0), 2.0);
        assert_eq!(c.tokens, 250_000 - PROMPT_OVERHEAD_TOKENS);
        assert_eq!(
            Capacity::new(200_000, None, 3.0).tokens,
            50_000 - PROMPT_OVERHEAD_TOKENS
        );
        // Four cents: 1,000 tokens of input per call at $2, all overhead.
        assert_eq!(
            Capacity::new(1_000_000, Some(0.04), 2.0).tokens,
            MIN_CAPACITY_TOKENS
        );
        assert_eq!(
            Capacity::new(1_000_000, Some(0.2), 2.0).tokens,
            5_000 - PROMPT_OVERHEAD_TOKENS
        );
    }

    #[test]
    fn tree_order_is_depth_first() {
        let list = sections(&[("a/b", 1), ("a-b", 1), (".", 1), ("a", 1), ("b", 1)]);
        let rels: Vec<&str> = list.iter().map(|s| s.rel.as_str()).collect();
        assert_eq!(rels, [".", "a", "a/b", "a-b", "b"]);
    }

    #[test]
    fn everything_that_fits_is_one_call() {
        let list = sections(&[(".", 10), ("a", 10), ("b", 10)]);
        let layout = layout(&list, cap(30), 5);
        assert!(layout.levels.is_empty());
        assert_eq!(layout.calls(), 1);
    }

    #[test]
    fn subtrees_that_fit_become_groups_and_big_ones_split() {
        let list = sections(&[
            (".", 500),
            ("a", 500),
            ("a/x", 4_000),
            ("a/y", 4_000),
            ("b", 1_000),
            ("b/z", 1_000),
            ("c", 1_000),
        ]);
        // Total 12,000 > 5,000.
        let layout = layout(&list, cap(5_000), 500);
        assert_eq!(layout.levels.len(), 2);
        let level = &layout.levels[0];
        let rel = |i: usize| list[i].rel.as_str();
        let groups: Vec<Vec<&str>> = level
            .groups
            .iter()
            .map(|g| g.inputs.iter().map(|&i| rel(i)).collect())
            .collect();
        // a (8,500) is too big: its own section passes up, and so do x and
        // y (8,000 together is too much, and a part of one would shrink
        // nothing); b and c share a group.
        assert_eq!(groups, [vec!["b", "b/z", "c"]]);
        let passed: Vec<&str> = level.passed_up.iter().map(|&i| rel(i)).collect();
        assert_eq!(passed, [".", "a", "a/x", "a/y"]);
        // The next level reads ., a, a/x, a/y, then the group's output.
        assert_eq!(
            level.outputs(),
            [
                Output::Passed(0),
                Output::Passed(1),
                Output::Passed(2),
                Output::Passed(3),
                Output::Group(0),
            ]
        );
        // Those 9,500 tokens need one more level: (., a, a/x) and (a/y,
        // the group's output).
        assert_eq!(layout.levels[1].groups.len(), 2);
        assert_eq!(layout.calls(), 4);
        assert_eq!(
            call_inputs(&list, &layout, 500),
            [3_000, 5_000, 4_500, 1_000]
        );
        // Every section is read exactly once.
        let mut seen: Vec<usize> = level
            .groups
            .iter()
            .flat_map(|g| g.inputs.clone())
            .chain(level.passed_up.clone())
            .collect();
        seen.sort();
        assert_eq!(seen, (0..list.len()).collect::<Vec<_>>());
    }

    #[test]
    fn a_grown_summary_moves_only_its_own_group() {
        let spec: Vec<(String, u64)> = std::iter::once((".".to_string(), 10))
            .chain((0..60).map(|i| (format!("d{i:02}"), 100)))
            .collect();
        let groups = |grown: u64| {
            let spec: Vec<(&str, u64)> = spec
                .iter()
                .map(|(r, t)| (r.as_str(), if r == "d30" { grown } else { *t }))
                .collect();
            let list = sections(&spec);
            let layout = layout(&list, cap(2_400), 50);
            layout.levels[0]
                .groups
                .iter()
                .map(|g| {
                    g.inputs
                        .iter()
                        .map(|&i| list[i].rel.clone())
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        let before = groups(100);
        assert!(before.len() > 3, "{before:?}");
        // Boundaries follow the paths: a longer summary changes only its
        // own group's input.
        assert_eq!(groups(400), before);
        // One that overflows its group splits that group alone.
        let after = groups(2_350);
        let changed = after.iter().filter(|g| !before.contains(g)).count();
        let lost: Vec<_> = before.iter().filter(|g| !after.contains(g)).collect();
        assert!(changed <= 1 && lost.len() == 1, "{before:?}\n{after:?}");
        assert!(lost[0].contains(&"d30".to_string()));
    }

    #[test]
    fn many_groups_take_more_levels_and_always_end() {
        let spec: Vec<(String, u64)> = std::iter::once((".".to_string(), 100))
            .chain((0..400).map(|i| (format!("d{i:03}"), 1_000)))
            .collect();
        let spec: Vec<(&str, u64)> = spec.iter().map(|(r, t)| (r.as_str(), *t)).collect();
        let list = sections(&spec);
        // 400,100 tokens at 12,000 a call, group outputs of 3,000.
        let layout = layout(&list, cap(12_000), 3_000);
        assert!(layout.levels.len() >= 2, "{layout:?}");
        for level in &layout.levels {
            for group in &level.groups {
                assert!(group.inputs.len() >= 2);
            }
        }
        let first = &layout.levels[0];
        assert!(
            first.groups.len() > 30 && layout.calls() < 100,
            "{}",
            layout.calls()
        );
        let read: usize =
            first.groups.iter().map(|g| g.inputs.len()).sum::<usize>() + first.passed_up.len();
        assert_eq!(read, list.len());
        // The verdict fits.
        let inputs = call_inputs(&list, &layout, 3_000);
        assert!(inputs.iter().all(|&t| t <= 12_000), "{inputs:?}");
        // Inputs that never fit end the levels instead of looping.
        let huge = sections(&[(".", 500), ("a", 500)]);
        assert!(super::layout(&huge, cap(100), 20).levels.is_empty());
    }
}
