//! Synthesis in levels: how the directory summaries are grouped so that no
//! synthesis request is larger than one call may be.
//!
//! One call may carry at most [`Capacity::tokens`] of summaries: a quarter of
//! the model's context window (the rest is room for the prompt's own text,
//! the reply, and the turns a synthesis may take), and no more than a tenth
//! of the budget's worth of input, so that no single request can spend a
//! large share of a run's money. When every summary fits, synthesis is one
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
//! Grouping follows the tree, not the text, so a change to one directory
//! touches only the groups on its path; every group's output is cached by
//! the digest of its input. Pure: section sizes in, layout out. The same
//! rule lays out the run's synthesis (from the real summaries) and the
//! estimate's (from allowances).

/// What one synthesis call may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// Tokens of sections one call may carry.
    pub tokens: u64,
}

/// The share of the context window one synthesis call's sections may fill.
pub const WINDOW_SHARE: u64 = 4;
/// One call may spend at most this share of the budget on its input.
pub const BUDGET_SHARE_PER_CALL: f64 = 0.1;
/// Tokens of a synthesis prompt besides its sections (instructions, tools,
/// kickoff), set aside from the capacity.
pub const PROMPT_OVERHEAD_TOKENS: u64 = 2_000;
/// The least a call may carry, however small the budget: a handful of
/// sections, or levels would never end.
pub const MIN_CAPACITY_TOKENS: u64 = 1_000;

impl Capacity {
    /// The capacity of a call on a model with `window` tokens of context,
    /// under `budget` dollars (none: no limit) at `input_price` dollars per
    /// million input tokens.
    pub fn new(window: u64, budget: Option<f64>, input_price: f64) -> Capacity {
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
pub struct Section {
    pub rel: String,
    pub tokens: u64,
}

/// What a call of a level reads: sections of the level below (directory
/// sections at level 1, the outputs and passed-up sections of the level
/// below after), by index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub inputs: Vec<usize>,
}

/// One level below the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    pub groups: Vec<Group>,
    /// Inputs read by no group: they go up to the next level as they are.
    pub passed_up: Vec<usize>,
}

impl Level {
    /// The next level's inputs in order: for each group its output, and
    /// each passed-up input, ordered by their first input.
    pub fn outputs(&self) -> Vec<Output> {
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
pub enum Output {
    /// The summary written by group `n` of the level.
    Group(usize),
    /// Input `n` of the level, passed up unchanged.
    Passed(usize),
}

/// The layout of one synthesis: the levels below the verdict (none when
/// everything fits one call). Sections are in depth-first tree order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout {
    pub levels: Vec<Level>,
}

impl Layout {
    /// Calls the synthesis makes: every group, and the verdict.
    pub fn calls(&self) -> usize {
        self.levels.iter().map(|l| l.groups.len()).sum::<usize>() + 1
    }
}

/// The tokens of sections each call of `layout` reads: every group, level
/// by level, then the verdict; a group's output is taken to be
/// `output_tokens`.
pub fn call_inputs(sections: &[Section], layout: &Layout, output_tokens: u64) -> Vec<u64> {
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
pub fn tree_order(sections: &mut [Section]) {
    sections.sort_by(|a, b| tree_key(&a.rel).cmp(&tree_key(&b.rel)));
}

/// The sort key of [`tree_order`]: a relative path's components.
pub fn tree_key(rel: &str) -> Vec<&str> {
    if rel == "." || rel.is_empty() {
        Vec::new()
    } else {
        rel.split('/').collect()
    }
}

/// Lay out `sections` (in [`tree_order`]) for calls of `capacity`, with a
/// group's output assumed to take `output_tokens` at the next level.
pub fn layout(sections: &[Section], capacity: Capacity, output_tokens: u64) -> Layout {
    let mut levels = Vec::new();
    let total: u64 = sections.iter().map(|s| s.tokens).sum();
    if total <= capacity.tokens {
        return Layout { levels };
    }
    let first = level_one(sections, capacity);
    let mut sizes = next_sizes(
        &first,
        sections.iter().map(|s| s.tokens).collect(),
        output_tokens,
    );
    levels.push(first);
    // Each later level chunks its inputs in order until they fit; a level
    // that cannot shrink (every chunk a single input) is the last.
    while sizes.iter().sum::<u64>() > capacity.tokens {
        let level = chunk(&sizes, capacity);
        if level.groups.len() == sizes.len() || level.groups.is_empty() {
            break;
        }
        sizes = next_sizes(&level, sizes, output_tokens);
        levels.push(level);
    }
    Layout { levels }
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

/// Lay out the sibling subtrees in `range`.
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
            if pack_size + subtree > capacity.tokens && !pack.is_empty() {
                level.groups.push(Group {
                    inputs: std::mem::take(&mut pack),
                });
                pack_size = 0;
            }
            pack.extend(at..end);
            pack_size += subtree;
        } else {
            if !pack.is_empty() {
                level.groups.push(Group {
                    inputs: std::mem::take(&mut pack),
                });
                pack_size = 0;
            }
            level.passed_up.push(at);
            split(sections, at + 1..end, capacity, level);
        }
        at = end;
    }
    if !pack.is_empty() {
        level.groups.push(Group { inputs: pack });
    }
}

/// A later level: inputs in order, chunked to fit; an input too large for
/// any chunk passes up alone.
fn chunk(sizes: &[u64], capacity: Capacity) -> Level {
    let mut level = Level {
        groups: Vec::new(),
        passed_up: Vec::new(),
    };
    let mut pack: Vec<usize> = Vec::new();
    let mut pack_size = 0;
    for (i, &size) in sizes.iter().enumerate() {
        if size > capacity.tokens {
            if !pack.is_empty() {
                level.groups.push(Group {
                    inputs: std::mem::take(&mut pack),
                });
                pack_size = 0;
            }
            level.passed_up.push(i);
            continue;
        }
        if pack_size + size > capacity.tokens && !pack.is_empty() {
            level.groups.push(Group {
                inputs: std::mem::take(&mut pack),
            });
            pack_size = 0;
        }
        pack.push(i);
        pack_size += size;
    }
    if !pack.is_empty() {
        level.groups.push(Group { inputs: pack });
    }
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
    fn capacity_is_a_quarter_window_or_a_tenth_of_the_budget() {
        // $5 at $2 per million: $0.50 buys 250,000 tokens, a quarter of 1M.
        let c = Capacity::new(1_000_000, Some(5.0), 2.0);
        assert_eq!(c.tokens, 250_000 - PROMPT_OVERHEAD_TOKENS);
        assert_eq!(
            Capacity::new(200_000, None, 3.0).tokens,
            50_000 - PROMPT_OVERHEAD_TOKENS
        );
        // Four cents: 2,000 tokens of input per call at $2.
        assert_eq!(
            Capacity::new(1_000_000, Some(0.04), 2.0).tokens,
            MIN_CAPACITY_TOKENS
        );
        assert_eq!(Capacity::new(1_000_000, Some(0.1), 2.0).tokens, 3_000);
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
            (".", 5),
            ("a", 5),
            ("a/x", 40),
            ("a/y", 40),
            ("b", 10),
            ("b/z", 10),
            ("c", 10),
        ]);
        // Total 120 > 50.
        let layout = layout(&list, cap(50), 5);
        assert_eq!(layout.levels.len(), 1);
        let level = &layout.levels[0];
        let rel = |i: usize| list[i].rel.as_str();
        let groups: Vec<Vec<&str>> = level
            .groups
            .iter()
            .map(|g| g.inputs.iter().map(|&i| rel(i)).collect())
            .collect();
        // a (85) is too big: its own section passes up and x, y are groups
        // of their own (80 together is too much); b and c share one.
        assert_eq!(groups, [vec!["a/x"], vec!["a/y"], vec!["b", "b/z", "c"]]);
        let passed: Vec<&str> = level.passed_up.iter().map(|&i| rel(i)).collect();
        assert_eq!(passed, [".", "a"]);
        // The verdict reads ., a, then the three group outputs in tree order.
        assert_eq!(
            level.outputs(),
            [
                Output::Passed(0),
                Output::Passed(1),
                Output::Group(0),
                Output::Group(1),
                Output::Group(2)
            ]
        );
        assert_eq!(layout.calls(), 4);
        assert_eq!(call_inputs(&list, &layout, 5), [40, 40, 30, 5 + 5 + 3 * 5]);
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
    fn many_groups_take_more_levels_and_always_end() {
        let spec: Vec<(String, u64)> = std::iter::once((".".to_string(), 1))
            .chain((0..400).map(|i| (format!("d{i:03}"), 10)))
            .collect();
        let spec: Vec<(&str, u64)> = spec.iter().map(|(r, t)| (r.as_str(), *t)).collect();
        let list = sections(&spec);
        // 4,001 tokens at 100 a call: 40 groups of 10 directories, whose 40
        // outputs of 20 tokens (and the root's section) need another level
        // of 9 groups of up to 5, whose outputs (180) need a third of 2.
        let layout = layout(&list, cap(100), 20);
        assert_eq!(layout.levels.len(), 3, "{layout:?}");
        assert_eq!(layout.levels[0].groups.len(), 40);
        assert_eq!(layout.levels[1].groups.len(), 9);
        assert_eq!(layout.levels[2].groups.len(), 2);
        assert_eq!(layout.calls(), 40 + 9 + 2 + 1);
        // An input that never fits ends the levels instead of looping.
        let huge = sections(&[(".", 500), ("a", 500)]);
        let layout = super::layout(&huge, cap(100), 20);
        assert_eq!(layout.levels.len(), 1);
        assert!(layout.levels[0].groups.is_empty());
    }
}
